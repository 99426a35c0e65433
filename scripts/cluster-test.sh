#!/usr/bin/env bash
# Cluster tests: the three-node RabbitMQ cluster of scripts/rabbitmq-cluster.sh and the PostgreSQL
# primary, standby and HAProxy of scripts/postgres-ha.sh are brought up, the tests built with the
# "cluster" tag run against them verbosely, and both are brought down again (always, also on
# failure). Every scenario prints its accounting line
#   <scenario>: accepted=N created=N lost=0 duplicated=0
# (call events: published=N stored=N; the broker's own test: confirmed=N consumed=N), and the run
# fails unless every expected line is there once and says lost=0 (duplicated=0 where counted).
# The scenarios (gateway/e2e/fault_cluster_test.go, pkg/mq/cluster_test.go):
#   - the node leading lead.jobs (then telephony.calls) SIGKILLed mid-stream
#   - the node the services are connected to SIGKILLed mid-stream (webhook-dispatcher's too, under
#     sync creates: every lead.created reaches the endpoint)
#   - every node stopped and started again in turn (a rolling upgrade)
#   - pkg/mq: the node a publisher is connected to SIGKILLed mid-stream
#   - the PostgreSQL primary stopped at once and its standby promoted under sync creates, the
#     services reaching it through HAProxy (gateway/e2e/fault_failover_test.go)
# Not part of make test: run it with make test-cluster.
#
# Environment: DATABASE_URL, AMQP_URL (the development broker, for the e2e package's own stack),
# CLUSTER_TIMEOUT (default 15m), CLUSTER_KEEP=1 leaves the cluster and the pair running afterwards.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH=/usr/local/go/bin:$PATH
export DATABASE_URL=${DATABASE_URL:-postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable}
export AMQP_URL=${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}
cluster="$ROOT/scripts/rabbitmq-cluster.sh"
pgha="$ROOT/scripts/postgres-ha.sh"

expected=(
  "mq node SIGKILL: confirmed"
  "cluster leader SIGKILL: accepted"
  "cluster leader SIGKILL calls: published"
  "cluster client node SIGKILL: accepted"
  "cluster client node SIGKILL calls: published"
  "cluster client node SIGKILL webhooks: accepted"
  "cluster rolling restart: accepted"
  "cluster rolling restart calls: published"
  "postgres failover: accepted"
)

out=$(mktemp)
finish() {
  rm -f "$out"
  [ "${CLUSTER_KEEP:-}" = 1 ] || { "$cluster" down || true; "$pgha" down || true; }
}
trap finish EXIT
start=$(date +%s)
echo "== cluster test: RabbitMQ cluster up"
"$cluster" up
export CLUSTER_AMQP_URL=$("$cluster" url)
echo "== cluster test: PostgreSQL primary, standby and HAProxy up"
# A pair left by an earlier run may have failed over already: the test needs a fresh one.
"$pgha" down
"$pgha" up
export PGHA_DATABASE_URL=$("$pgha" url)
echo "== cluster test: leader SIGKILL, client node SIGKILL, rolling restart; pkg/mq node SIGKILL; PostgreSQL failover"
rc=0
(cd "$ROOT/pkg" && go test -tags cluster -count=1 -p 1 -v -timeout 5m -run '^TestClusterNodeKilledMidStream$' ./mq/) >>"$out" 2>&1 || rc=$?
(cd "$ROOT/gateway" && go test -tags cluster -count=1 -p 1 -v -timeout "${CLUSTER_TIMEOUT:-15m}" -run '^(TestRabbitMQCluster|TestPostgresFailover)$' ./e2e/) >>"$out" 2>&1 || rc=$?
lines=$(grep -E '^[A-Za-z -]+: (accepted=[0-9]+ created|published=[0-9]+ stored|confirmed=[0-9]+ consumed)=[0-9]+ lost=[0-9]+ (duplicated|redelivered)=[0-9]+$' "$out" || true)
bad=0
for e in "${expected[@]}"; do
  [ "$(grep -c "^$e=" <<<"$lines")" = 1 ] || { echo "cluster test: expected one line \"$e=...\""; bad=1; }
done
# Lost is never allowed; duplicated neither (redelivered, the broker test's at-least-once re-sends, is).
if grep -qvE 'lost=0 (duplicated=0|redelivered=[0-9]+)$' <<<"$lines"; then bad=1; fi
if [ $rc != 0 ] || [ $bad != 0 ]; then
  cat "$out"
  echo "cluster test: FAIL (go test exit $rc) after $(( $(date +%s) - start )) s"
  exit 1
fi
grep -E '^(=== RUN|--- |    --- |ok |PASS)|fault_(cluster|failover)_test|^postgres failover: sync answers' "$out" || true
echo "$lines"
echo "cluster test: PASS in $(( $(date +%s) - start )) s"
