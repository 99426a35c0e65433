#!/usr/bin/env bash
# Runs every Go fuzz target of the workspace for FUZZTIME each (default 10s). Their seeds, and any
# input a run found failing (testdata/fuzz), also run with every `make test` as ordinary tests.
#
#   scripts/fuzz.sh        every target for FUZZTIME (make fuzz; make fuzz FUZZTIME=5m)
#   scripts/fuzz.sh --ci   the same, bounded for continuous integration (.ci/run): each target at
#                          most FUZZTIME plus its build, the whole run at most FUZZ_BUDGET (default
#                          270 s, .ci/run sets 840; targets past it are skipped and named)
#
# A failing input is written by `go test -fuzz` under the target package's testdata/fuzz/<Target>/,
# where it becomes a seed that every `make test` runs; the run ends by listing (and, in --ci,
# printing) those new files: commit them with the fix.
#
# Environment: FUZZTIME (go test -fuzztime, e.g. 5m), FUZZ_MATCH (regexp of target names, default
# all), FUZZ_BUDGET (seconds, --ci only).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export PATH=/usr/local/go/bin:$PATH
ci=0
case "${1:-}" in
  --ci) ci=1 ;;
  "") ;;
  *) echo "usage: scripts/fuzz.sh [--ci]" >&2; exit 2 ;;
esac
FUZZTIME=${FUZZTIME:-10s}
budget=${FUZZ_BUDGET:-270}
# The seconds of FUZZTIME when it is a duration in s or m (a count like 1000x is not bounded here).
case $FUZZTIME in
  *s) per=${FUZZTIME%s} ;;
  *m) per=$((${FUZZTIME%m} * 60)) ;;
  *) per=600 ;;
esac
# Crash inputs already there before the run are not this run's findings.
corpus() { git ls-files --others --exclude-standard -- '*testdata/fuzz/*' 2>/dev/null | sort; }
before=$(corpus)
# toolchain_race OUTPUT DIR TARGET: whether a failed run is only the coordinator's race: its last
# word is "context deadline exceeded", and it wrote no failing input, panicked or failed no check.
toolchain_race() {
  local out=$1 dir=$2 target=$3
  grep -q 'context deadline exceeded' <<<"$out" || return 1
  ! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:|fuzz: minimizing' <<<"$out" || return 1
  ! comm -13 <(echo "$before") <(corpus) | grep -q "^$dir/testdata/fuzz/$target/"
}
start=$SECONDS
failed=0 ran=0 skipped=()
while IFS= read -r file; do
  dir=$(dirname "$file")
  mod=$dir
  while [ ! -f "$mod/go.mod" ]; do mod=$(dirname "$mod"); done
  for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' "$file"); do
    [[ $target =~ ${FUZZ_MATCH:-.} ]] || continue
    if [ $ci = 1 ] && [ $((SECONDS - start + per + 30)) -gt "$budget" ]; then
      skipped+=("$target")
      continue
    fi
    echo "== fuzz $target ($dir, $FUZZTIME)"
    ran=$((ran + 1))
    run=(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "./${dir#"$mod"/}")
    # In CI a hung build or target ends as a failure: FUZZTIME plus ten minutes for the build (an
    # instrumented build on an empty cache took 355 s on a loaded 2-core machine).
    [ $ci = 1 ] && run=(timeout -k 10s "$((per + 600))" "${run[@]}")
    # The last lines say enough of a pass; a failure prints its whole story (a hung worker or a
    # crashed build writes no failing input to show).
    out=$(cd "$mod" && "${run[@]}" 2>&1) && rc=0 || rc=$?
    # Go 1.26's fuzzing coordinator can fail a target whose -fuzztime ends while a worker is still
    # mid-input (fixed in Go 1.27): the run ends in a bare "context deadline exceeded", with no
    # failing input written and nothing else wrong. That, and only that, is run once more; a
    # finding always writes its input and fails as it is.
    if [ $rc != 0 ] && toolchain_race "$out" "$dir" "$target"; then
      echo "fuzz: $target ended in Go 1.26's end-of-fuzztime race (no failing input): once more"
      out=$(cd "$mod" && "${run[@]}" 2>&1) && rc=0 || rc=$?
    fi
    if [ $rc = 0 ]; then
      tail -3 <<<"$out"
    else
      tail -60 <<<"$out"
      failed=$((failed + 1))
    fi
  done
done < <(git ls-files '*_test.go' | xargs grep -l '^func Fuzz')

found=$(comm -13 <(echo "$before") <(corpus) | sed '/^$/d')
if [ -n "$found" ]; then
  echo "fuzz: new failing inputs (seeds once committed; each runs with make test):"
  while IFS= read -r f; do
    echo "  $f"
    if [ $ci = 1 ]; then sed 's/^/    /' "$f"; fi
  done <<<"$found"
fi
[ ${#skipped[@]} = 0 ] || echo "fuzz: skipped for the ${budget}s budget: ${skipped[*]}"
echo "fuzz: $ran targets, $failed failed, $((SECONDS - start))s"
[ "$failed" = 0 ]
