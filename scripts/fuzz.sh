#!/usr/bin/env bash
# Runs every Go fuzz target of the workspace for FUZZTIME each (default 10s). Their seeds, and any
# input a run found failing (testdata/fuzz), also run with every `make test` as ordinary tests.
#
# Environment: FUZZTIME (go test -fuzztime, e.g. 5m), FUZZ_MATCH (regexp of target names, default all).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export PATH=/usr/local/go/bin:$PATH
FUZZTIME=${FUZZTIME:-10s}
failed=0 ran=0
while IFS= read -r file; do
  dir=$(dirname "$file")
  mod=$dir
  while [ ! -f "$mod/go.mod" ]; do mod=$(dirname "$mod"); done
  for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' "$file"); do
    [[ $target =~ ${FUZZ_MATCH:-.} ]] || continue
    echo "== fuzz $target ($dir, $FUZZTIME)"
    ran=$((ran + 1))
    if ! (cd "$mod" && go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "./${dir#"$mod"/}" 2>&1 | tail -3); then
      failed=$((failed + 1))
    fi
  done
done < <(git ls-files '*_test.go' | xargs grep -l '^func Fuzz')
echo "fuzz: $ran targets, $failed failed"
[ "$failed" = 0 ]
