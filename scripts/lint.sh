#!/usr/bin/env bash
# Static checks over every module listed in go.work (with the "fault" build tag, so the fault test
# is checked too): gofmt (no file may need formatting), go vet and staticcheck; the same over the
# two modules outside go.work; the Go client generated from the current spec (scripts/client-gen.sh
# --check); the spec's own lint (scripts/spec-lint.sh); no file citing what the repository does not
# hold (outside_refs below; `scripts/lint.sh refs` runs only that check). Installs staticcheck into
# $(go env GOPATH)/bin when it is missing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# outside_refs fails on a reference a reader of the repository cannot follow: a document kept
# outside it (a contract or design file, an absolute /work/shared or relative ../shared path, a
# "DESIGN §N" section) or an operation cited by a number ("operation 7", "op 20") instead of its
# operationId. The contract is docs/api.md with gateway/api/openapi.yaml: cite operations by
# operationId and decisions by the doc of the repository that records them. Every tracked or
# untracked file but the ignored ones is read (binary files are skipped).
outside_refs() {
  local pattern='api-contract|DESIGN §|DESIGN\.md|/work/shared|\.\./shared|\boperations? [0-9]|\bops? [0-9]'
  local hits
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    hits=$(git grep --untracked -nIiE "$pattern" -- . ':!scripts/lint.sh' || true)
  else
    hits=$(grep -rnIiE --exclude-dir=.git --exclude-dir=.run --exclude=lint.sh "$pattern" . || true)
  fi
  if [ -n "$hits" ]; then
    echo "$hits"
    echo "lint: these lines cite what the repository does not hold: name operations by operationId (docs/api.md) and point to the repository's own docs"
    return 1
  fi
}
if [ "${1:-}" = refs ]; then
  echo "== outside references"
  outside_refs && echo "lint: PASS (no outside references)"
  exit
fi

STATICCHECK_VERSION=v0.8.2
export PATH=/usr/local/go/bin:$PATH
PATH=$(go env GOPATH)/bin:$PATH

modules() { go work edit -json go.work | sed -n 's/^[[:space:]]*"DiskPath": "\(.*\)".*$/\1/p'; }
mods=$(modules)
[ -n "$mods" ] || { echo "lint: go.work lists no module" >&2; exit 1; }

if ! command -v staticcheck >/dev/null; then
  echo "lint: installing staticcheck $STATICCHECK_VERSION"
  go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi

failed=()
echo "== outside references"
outside_refs || failed+=(refs)
echo "== gofmt -l"
# shellcheck disable=SC2086
unformatted=$(gofmt -l $mods)
if [ -n "$unformatted" ]; then
  echo "$unformatted"
  echo "lint: these files need gofmt (make fmt)"
  failed+=(gofmt)
fi
for m in $mods; do
  echo "== go vet $m/..."
  (cd "$m" && go vet -tags fault ./...) || failed+=("vet:$m")
  echo "== staticcheck $m/..."
  (cd "$m" && staticcheck -tags fault ./...) || failed+=("staticcheck:$m")
done
# The modules outside go.work (checks of the deployment files, with dependencies the platform
# does not want in its own graph).
for m in deployments/k8s/test deployments/monitoring/check; do
  echo "== $m (outside go.work): gofmt -l, go vet, staticcheck"
  (cd "$m" && ! gofmt -l . | grep . && GOWORK=off go vet ./... && GOWORK=off staticcheck ./...) || failed+=("$m")
done
scripts/client-gen.sh --check || failed+=(client-gen)
scripts/spec-lint.sh || failed+=(spec-lint)

if [ ${#failed[@]} -gt 0 ]; then
  echo "lint: FAIL (${failed[*]})"
  exit 1
fi
echo "lint: PASS ($(wc -w <<<"$mods" | tr -d ' ') modules and 2 outside go.work: gofmt, go vet, staticcheck; client up to date; spec lint; no outside references)"
