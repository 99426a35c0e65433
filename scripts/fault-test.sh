#!/usr/bin/env bash
# Fault tests: load through the gateway while a fault is injected mid-stream, each scenario
# printing its accounting line
#   <scenario>: accepted=N created=N lost=0 duplicated=0
# (calls: published=N stored=N lost=0 duplicated=0), and failing unless every line says lost=0
# duplicated=0 and every scenario printed one. The scenarios (gateway/e2e/fault_*_test.go):
#   - broker restart (a RabbitMQ node of the test's own): async lead creates, call events
#   - lead-worker SIGKILL: async lead creates
#   - postgres restart (a PostgreSQL cluster of the test's own, initdb'd on its own port): sync
#     creates 503 while it is down, async creates, call events, the order outbox
#   - lead-api SIGKILL, gateway SIGKILL (idempotent retries), notification-worker SIGKILL
#   - consumer partition: lead-worker's broker connection closed with rabbitmqctl
#   - bulk import under lead-worker and lead-api SIGKILL
#   - webhook-dispatcher SIGKILL under sync creates: every lead.created reaches the endpoint (created
#     = events delivered; repeats of an event id, allowed at least once, are printed apart)
#   - poison call events (a year 0000, a 9999-12-31) among good ones: every good event stored, each
#     poison one dead-lettered with its reason, call-ingest not left stalled
#   - lead events (through the database's logical slot) under sync creates, counted by event id at a
#     consumer of the events exchange: the relay holding the slot SIGKILLed, PostgreSQL restarted,
#     RabbitMQ restarted while the slot holds the WAL back (repeats of an event id, allowed at least
#     once, are printed apart)
# Called by scripts/test.sh (make test), so it runs in CI.
#
# Environment: DATABASE_URL, AMQP_URL (see scripts/deps.sh), FAULT_TIMEOUT (default 10m).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT/gateway"
export PATH=/usr/local/go/bin:$PATH
export DATABASE_URL=${DATABASE_URL:-postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable}
export AMQP_URL=${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}

# Every accounting line the run must print, one each.
expected=(
  "broker restart: accepted"
  "broker restart calls: published"
  "broker restart events: accepted"
  "lead-worker SIGKILL: accepted"
  "postgres restart sync: accepted"
  "postgres restart async: accepted"
  "postgres restart calls: published"
  "postgres restart events: accepted"
  "lead-api SIGKILL: accepted"
  "gateway SIGKILL: accepted"
  "notification-worker SIGKILL: accepted"
  "consumer partition: accepted"
  "lead-worker SIGKILL mid-import: accepted"
  "lead-api SIGKILL mid-upload: accepted"
  "webhook-dispatcher SIGKILL: accepted"
  "relay SIGKILL: accepted"
  "poison event calls: published"
)

out=$(mktemp); trap 'rm -f "$out"' EXIT
echo "== fault test: broker restart, lead-worker SIGKILL, PostgreSQL restart, lead-api, gateway and notification-worker SIGKILL, consumer partition, bulk import under lead-worker and lead-api SIGKILL, webhook-dispatcher SIGKILL, poison call events"
rc=0
go test -tags fault -count=1 -v -timeout "${FAULT_TIMEOUT:-10m}" \
  -run '^(TestAsyncLeadsSurviveFaults|TestPostgresRestart|TestProcessKills|TestPoisonCallEvents)$' ./e2e/ >"$out" 2>&1 || rc=$?
lines=$(grep -E '^[A-Za-z -]+: (accepted=[0-9]+ created|published=[0-9]+ stored)=[0-9]+ lost=[0-9]+ duplicated=[0-9]+$' "$out" || true)
bad=0
for e in "${expected[@]}"; do
  [ "$(grep -c "^$e=" <<<"$lines")" = 1 ] || { echo "fault test: expected one line \"$e=...\""; bad=1; }
done
if grep -qvE 'lost=0 duplicated=0$' <<<"$lines"; then bad=1; fi
if [ $rc != 0 ] || [ $bad != 0 ]; then
  cat "$out"
  echo "fault test: FAIL (go test exit $rc)"
  exit 1
fi
grep -E '^(=== RUN|--- |    --- |ok |PASS)|fault_' "$out" || true
grep -E '^(postgres restart|gateway SIGKILL|notification-worker SIGKILL|consumer partition|webhook-dispatcher SIGKILL|poison event calls|relay SIGKILL|broker restart events)[^=]*: [a-z]' "$out" | grep -vE 'accepted=|published=' || true
echo "$lines"
echo "fault test: PASS"
