#!/usr/bin/env bash
# A three-node RabbitMQ cluster of the project's own, from Debian's rabbitmq-server package, for the
# cluster tests (make test-cluster). It runs beside the development broker on 5672 and touches
# nothing of it: its own node names, ports, data, logs and cookie, all under .run/rabbitmq-cluster.
#
#   scripts/rabbitmq-cluster.sh up      start the three nodes (those not running) and cluster them
#   scripts/rabbitmq-cluster.sh down    stop the nodes and remove everything up made
#   scripts/rabbitmq-cluster.sh status  the cluster's members and running nodes
#   scripts/rabbitmq-cluster.sh url     the AMQP_URL that lists the three nodes
#   scripts/rabbitmq-cluster.sh ctl N ARGS...  rabbitmqctl against node N (1..3)
#
# Nodes rabbit-cN@localhost, AMQP on 127.0.0.1:570N, Erlang distribution on 127.0.0.1:2570N,
# no plugins (so no management listener); epmd is the machine's (127.0.0.1:4369), where each
# node registers under its own name. Quorum queues declared once the three have joined get a
# replica on each (3.10's default initial group size is every cluster member); `up` checks it.
# Idempotent: `up` on a running cluster only checks it.
#
# Environment: CLUSTER_DIR (default .run/rabbitmq-cluster in the checkout), CLUSTER_BASE_PORT (5700).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${CLUSTER_DIR:-$ROOT/.run/rabbitmq-cluster}
BASE=${CLUSTER_BASE_PORT:-5700}
BIN=/usr/lib/rabbitmq/bin
NODES=(1 2 3)

log() { printf 'rabbitmq-cluster: %s\n' "$*" >&2; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
name() { echo "rabbit-c$1@localhost"; }
amqp_port() { echo $((BASE + $1)); }
dist_port() { echo $((BASE + 20000 + $1)); }

# node_env N: the environment of node N and of rabbitmqctl talking to it. HOME holds the cluster's
# own Erlang cookie; the config files named here do not exist, so the nodes run on defaults.
node_env() {
  local d="$DIR/c$1"
  echo HOME="$DIR" RABBITMQ_NODENAME="$(name "$1")" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
    RABBITMQ_NODE_PORT="$(amqp_port "$1")" RABBITMQ_DIST_PORT="$(dist_port "$1")" \
    ERL_EPMD_ADDRESS=127.0.0.1 \
    RABBITMQ_MNESIA_BASE="$d/mnesia" RABBITMQ_LOG_BASE="$d/log" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$DIR/enabled_plugins" RABBITMQ_CONFIG_FILE="$d/rabbitmq" \
    RABBITMQ_ADVANCED_CONFIG_FILE="$d/advanced.config" RABBITMQ_CONF_ENV_FILE="$d/rabbitmq-env.conf"
}
ctl() { local n=$1; shift; env $(node_env "$n") "$BIN/rabbitmqctl" -n "$(name "$n")" "$@"; }

start_node() {
  local n=$1
  if port_open "$(amqp_port "$n")"; then log "node $(name "$n") already answers on $(amqp_port "$n")"; return; fi
  mkdir -p "$DIR/c$n/log"
  log "starting $(name "$n") on 127.0.0.1:$(amqp_port "$n")"
  # setsid + exec: the node outlives this script and holds none of its output.
  (cd "$DIR" && exec env $(node_env "$n") \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    setsid "$BIN/rabbitmq-server" >>"$DIR/c$n/node.log" 2>&1 </dev/null) &
  echo $! >"$DIR/c$n/pid"
}

await_node() {
  local n=$1
  for _ in $(seq 1 120); do port_open "$(amqp_port "$n")" && break; sleep 1; done
  port_open "$(amqp_port "$n")" || { log "$(name "$n") did not open its AMQP port (see $DIR/c$n/node.log)"; exit 1; }
  ctl "$n" await_startup --timeout 60 >/dev/null
}

running_nodes() { ctl "$1" eval 'length(rabbit_nodes:all_running()).' 2>/dev/null || echo 0; }

up() {
  [ -x "$BIN/rabbitmq-server" ] || { log "$BIN/rabbitmq-server is missing: scripts/deps.sh rabbitmq installs the package"; exit 1; }
  mkdir -p "$DIR"
  if [ ! -f "$DIR/.erlang.cookie" ]; then
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$DIR/.erlang.cookie"
    chmod 400 "$DIR/.erlang.cookie"
  fi
  : >"$DIR/enabled_plugins"
  for n in "${NODES[@]}"; do start_node "$n"; done
  for n in "${NODES[@]}"; do await_node "$n"; done
  # Nodes 2 and 3 join node 1 unless they are already members (a second `up`, or a restart).
  for n in 2 3; do
    if ctl "$n" cluster_status --formatter json 2>/dev/null | grep -q "\"$(name 1)\""; then continue; fi
    log "$(name "$n") joins $(name 1)"
    ctl "$n" stop_app >/dev/null
    ctl "$n" join_cluster "$(name 1)" >/dev/null
    ctl "$n" start_app >/dev/null
  done
  for _ in $(seq 1 60); do [ "$(running_nodes 1)" = 3 ] && break; sleep 1; done
  [ "$(running_nodes 1)" = 3 ] || { log "the cluster does not show three running nodes"; status; exit 1; }
  log "cluster up: $(url)"
}

down() {
  for n in "${NODES[@]}"; do
    if port_open "$(amqp_port "$n")"; then ctl "$n" stop >/dev/null 2>&1 || true; fi
    # What stop left behind (a beam that did not answer): the node's own process group only.
    if [ -f "$DIR/c$n/pid" ]; then kill -9 -- "-$(cat "$DIR/c$n/pid")" 2>/dev/null || true; fi
  done
  rm -rf "$DIR"
  log "cluster down, $DIR removed"
}

status() {
  for n in "${NODES[@]}"; do
    if port_open "$(amqp_port "$n")"; then
      echo "$(name "$n"): up on 127.0.0.1:$(amqp_port "$n"), running nodes seen: $(running_nodes "$n")"
    else
      echo "$(name "$n"): down"
    fi
  done
}

url() {
  local urls=()
  for n in "${NODES[@]}"; do urls+=("amqp://guest:guest@127.0.0.1:$(amqp_port "$n")/"); done
  (IFS=,; echo "${urls[*]}")
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  url) url ;;
  ctl) shift; ctl "$@" ;;
  *) echo "usage: $0 up|down|status|url|ctl N ARGS..." >&2; exit 2 ;;
esac
