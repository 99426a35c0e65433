#!/usr/bin/env bash
# Fault test of the asynchronous lead create: N async creates through the gateway while (a) the
# broker is restarted (a RabbitMQ node of the test's own) and (b) lead-worker is killed with
# SIGKILL and started again. Prints one line per scenario:
#   accepted=N created=N lost=0 duplicated=0
# and fails unless every accepted job made exactly one lead. Called by scripts/test.sh (make test).
#
# Environment: DATABASE_URL, AMQP_URL (see scripts/deps.sh), FAULT_TIMEOUT (default 10m).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT/gateway"
export PATH=/usr/local/go/bin:$PATH
export DATABASE_URL=${DATABASE_URL:-postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable}
export AMQP_URL=${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}

out=$(mktemp); trap 'rm -f "$out"' EXIT
echo "== fault test: async lead creates and call events across a broker restart, lead creates across a lead-worker SIGKILL"
rc=0
go test -tags fault -count=1 -v -timeout "${FAULT_TIMEOUT:-10m}" -run '^TestAsyncLeadsSurviveFaults$' ./e2e/ >"$out" 2>&1 || rc=$?
summary=$(grep -E '^accepted=[0-9]+ created=[0-9]+ lost=[0-9]+ duplicated=[0-9]+$' "$out" || true)
calls=$(grep -E '^calls: published=[0-9]+ stored=[0-9]+ lost=[0-9]+ duplicated=[0-9]+$' "$out" || true)
if [ $rc != 0 ] || [ "$(grep -c . <<<"$summary")" != 2 ] || grep -qvE 'lost=0 duplicated=0$' <<<"$summary" \
  || [ "$(grep -c . <<<"$calls")" != 1 ] || grep -qvE 'lost=0 duplicated=0$' <<<"$calls"; then
  cat "$out"
  echo "fault test: FAIL (go test exit $rc)"
  exit 1
fi
grep -E '^(=== RUN|--- |    --- |ok |PASS)|fault_test' "$out" || true
echo "$summary"
echo "$calls"
echo "fault test: PASS"
