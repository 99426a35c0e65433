#!/usr/bin/env bash
# Runs every test of every module listed in go.work: unit, component (real PostgreSQL and RabbitMQ,
# a fresh database per test package) and end-to-end (gateway/e2e builds and starts the binaries).
# Makes sure PostgreSQL and RabbitMQ run first (scripts/deps.sh; installs them as root on Debian).
#
# Environment: DATABASE_URL, AMQP_URL (see scripts/deps.sh), TEST_PARALLEL (packages at once,
# default 2), TEST_TIMEOUT (per package, default 30m), TEST_FLAGS (extra go test flags, e.g. -race).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export PATH=/usr/local/go/bin:$PATH
export DATABASE_URL=${DATABASE_URL:-postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable}
export AMQP_URL=${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}

# The modules of the workspace, as the `use` lines of go.work name them.
modules() { go work edit -json go.work | sed -n 's/^[[:space:]]*"DiskPath": "\(.*\)".*$/\1/p'; }

scripts/deps.sh

start=$SECONDS
out=$(mktemp); trap 'rm -f "$out"' EXIT
failed=()
mods=$(modules)
[ -n "$mods" ] || { echo "test: go.work lists no module" >&2; exit 1; }
for m in $mods; do
  echo "== go test $m/..."
  # shellcheck disable=SC2086
  if ! (cd "$m" && go test -count=1 -p "${TEST_PARALLEL:-2}" -timeout "${TEST_TIMEOUT:-30m}" ${TEST_FLAGS:-} ./... 2>&1) | tee -a "$out"; then
    failed+=("$m")
  fi
done
(cd deployments/k8s/test && GOWORK=off go test -count=1 ./... 2>&1) | tee -a "$out" || failed+=("deployments/k8s/test")

# The fault test (async lead creates across a broker restart and a lead-worker SIGKILL) runs on
# its own, verbosely, so that its accepted/created/lost/duplicated lines show in the log.
echo "== scripts/fault-test.sh"
if ! scripts/fault-test.sh; then
  failed+=("fault-test")
fi

# The alerting rules' tests, and a real Prometheus scraping a `make up` stack.
echo "== scripts/monitoring-check.sh"
if ! scripts/monitoring-check.sh; then
  failed+=("monitoring-check")
fi

n_ok=$(grep -c '^ok[[:space:]]' "$out" || true)
n_fail=$(grep -c '^FAIL[[:space:]]' "$out" || true)
n_none=$(grep -c '\[no test files\]' "$out" || true)
elapsed=$((SECONDS - start))
summary="$(wc -w <<<"$mods" | tr -d ' ') modules, $n_ok packages passed, $n_fail failed, $n_none without tests, $((elapsed / 60))m$((elapsed % 60))s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "test: FAIL ($summary); failing modules: ${failed[*]}"
  echo "packages: $n_ok passed, $n_fail failed"
  exit 1
fi
echo "test: PASS ($summary)"
echo "packages: $n_ok passed, $n_fail failed"
