#!/usr/bin/env bash
# The monitoring, checked for real: the alerting rules' own tests (promtool), then `make up`, a
# Prometheus server (Debian's package) on its own port scraping every process of the stack with
# deployments/monitoring/prometheus.yml, some traffic through the gateway, and then, through
# Prometheus's HTTP API: every target up, every rule group evaluated without error, and every
# metric the rules and the Grafana dashboards read exported. Stops what it started. Needs the ports
# of `make up` (8080-8096, 9080) and PROMETHEUS_PORT (default 9099) free.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
MON=deployments/monitoring
# go runs the dashboard check (deployments/monitoring/check) when this script runs by itself too.
export PATH=/usr/local/go/bin:$PATH
PORT=${PROMETHEUS_PORT:-9099}
log() { printf 'monitoring: %s\n' "$*"; }

scripts/deps.sh >/dev/null
promtool check config "$MON/prometheus.yml"
promtool check config "$MON/prometheus.compose.yml"
promtool check rules "$MON"/rules/*.yml
(cd "$MON" && promtool test rules tests/*.yml)
# The dashboard check's own tests (every panel's expression parses, reads only documented
# metrics). Its module is outside go.work, so `go test` of the workspace does not run them.
(cd "$MON/check" && GOWORK=off go test ./...)

work=$(mktemp -d)
prom_pid=
cleanup() {
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null || true
  make -s down >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

up=$(make -s up)
base=$(sed -n 's/^BASE_URL=//p' <<<"$up")
key=$(sed -n 's/^API_KEY=//p' <<<"$up")
[ -n "$base" ] && [ -n "$key" ] || { echo "$up"; log "make up printed no BASE_URL/API_KEY"; exit 1; }

prometheus --config.file="$ROOT/$MON/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$PORT" --log.level=warn >"$work/prometheus.log" 2>&1 &
prom_pid=$!

# Traffic: order creates, lead creates (sync and async), lists, and refused requests.
for i in $(seq 1 20); do
  curl -fsS -o /dev/null -X POST "$base/v2/order/create/" -H "X-Api-Key: $key" -H 'Content-Type: application/json' \
    -d "{\"serviceTitle\":\"Мониторинг\",\"title\":\"Заказ $i\",\"status\":\"success\",\"sipEndpointIds\":[1]}"
  curl -fsS -o /dev/null "$base/v2/lead/?limit=5" -H "X-Api-Key: $key"
done
# A few refused requests: not more, as an address that keeps failing authentication is refused
# everything for a while (AUTH_FAILURE_BURST).
for i in $(seq 1 5); do curl -sS -o /dev/null "$base/v2/order/detail/1/"; done
# Leads, sync and async (the async ones publish: mq_publish* series, the lead worker's deliveries).
order=$(curl -fsS -X POST "$base/v2/order/create/" -H "X-Api-Key: $key" -H 'Content-Type: application/json' \
  -d '{"serviceTitle":"Мониторинг","title":"Заказ для лидов","status":"success","sipEndpointIds":[1]}')
order_id=$(sed -n 's/.*"id":\([0-9]*\).*/\1/p' <<<"$order")
code=$(curl -fsS "$base/v2/order/detail/$order_id/" -H "X-Api-Key: $key" | sed -n 's/.*"code":"\([^"]*\)".*/\1/p')
[ -n "$order_id" ] && [ -n "$code" ] || { log "no order for the lead traffic: $order"; exit 1; }
for i in $(seq 1 10); do
  for path in create create-async; do
    curl -fsS -o /dev/null -X POST "$base/v2/lead/$path/" -H "X-Api-Key: $key" -H 'Content-Type: application/json' \
      -d "{\"leadType\":\"straight\",\"phone\":\"7916$(printf '%07d' $((RANDOM * 100 + i)))\",\"orderId\":$order_id,\"orderCode\":\"$code\"}"
  done
done

api() { curl -fsS "http://127.0.0.1:$PORT/api/v1/$1"; }
# Wait for two scrapes and two rule evaluations of everything.
deadline=$((SECONDS + 60))
while :; do
  targets=$(api targets 2>/dev/null || true)
  total=$(grep -o '"health":"[a-z]*"' <<<"$targets" | wc -l || true)
  ups=$(grep -o '"health":"up"' <<<"$targets" | wc -l || true)
  rules=$(api rules 2>/dev/null || true)
  if [ "$total" -ge 11 ] && [ "$ups" = "$total" ] && grep -q '"lastEvaluation":"2' <<<"$rules"; then break; fi
  if [ $SECONDS -ge $deadline ]; then
    log "targets: $ups of $total up"; echo "$targets"; cat "$work/prometheus.log"; exit 1
  fi
  sleep 2
done
sleep 12
rules=$(api rules)
if grep -q '"health":"err' <<<"$rules" || grep -q '"lastError":"[^"]' <<<"$rules"; then
  log "a rule failed to evaluate:"; echo "$rules"; exit 1
fi
n_rules=$(grep -o '"type":"alerting"' <<<"$rules" | wc -l || true)
# Every metric the rules read must exist in the scrapes (a renamed metric would leave its alert
# silently empty). RULE_METRICS names them; each must also still appear in the rules. Not
# webhook_delivery_attempts_total: its series appear with the first attempt, and this traffic
# subscribes no webhook (the alert's own test is in tests/platform_test.yml).
RULE_METRICS="queue_messages queue_consumers queue_consumers_required http_requests_total
  http_request_duration_seconds_bucket outbox_oldest_event_age_seconds app_ready"
names=$(api 'label/__name__/values' | tr ',' '\n' | tr -d '[]"{}' | sed 's/^data://')
missing=()
for m in $RULE_METRICS; do
  grep -q "$m" "$MON"/rules/*.yml || { log "RULE_METRICS lists $m, which no rule reads"; exit 1; }
  grep -qx "$m" <<<"$names" || missing+=("$m")
done
if [ ${#missing[@]} -gt 0 ]; then log "the rules read metrics no process exports: ${missing[*]}"; exit 1; fi
# Likewise every metric the Grafana dashboards read: the check parses each panel's expression and
# compares the names with Prometheus's answer (it names each missing one and its panel).
api 'label/__name__/values' >"$work/names.json"
(cd "$MON/check" && GOWORK=off go run . -dashboards ../grafana/dashboards -exported "$work/names.json" >/dev/null) \
  || { log "the dashboards read metrics no process exports"; exit 1; }
log "PASS: $ups of $total targets up, $n_rules alerting rules evaluated without error, every metric the rules and dashboards read is exported"
