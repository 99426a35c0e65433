#!/usr/bin/env bash
# Static checks over every module listed in go.work (with the "fault" build tag, so the fault test
# is checked too): gofmt (no file may need formatting), go vet and staticcheck; the same over the
# two modules outside go.work; the Go client generated from the current spec (scripts/client-gen.sh
# --check); the spec's own lint (scripts/spec-lint.sh). Installs staticcheck into
# $(go env GOPATH)/bin when it is missing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
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
echo "lint: PASS ($(wc -w <<<"$mods" | tr -d ' ') modules and 2 outside go.work: gofmt, go vet, staticcheck; client up to date; spec lint)"
