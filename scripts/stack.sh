#!/usr/bin/env bash
# Runs the whole platform on this machine with demo data: PostgreSQL and RabbitMQ (scripts/deps.sh),
# every service binary built from the workspace into .run/bin, the demo seed, an API key for the
# demo admin, and the gateway in front.
#
#   scripts/stack.sh run     start everything, print the base URL, an API key and a sample request,
#                            follow the logs; Ctrl-C stops every process
#   scripts/stack.sh up      the same in the background; returns once every service is healthy and
#                            prints BASE_URL=... and API_KEY=...
#   scripts/stack.sh down    stop what `up` started
#   scripts/stack.sh status  show each process, its pid and its health
#   scripts/stack.sh build   build the binaries only
#
# Environment: DATABASE_URL, AMQP_URL, INTERNAL_TOKEN, LOG_LEVEL (passed to every process),
#              STACK_WAIT_SECONDS (health wait per process, default 60).
# Files: .run/bin (binaries), .run/logs/NAME.log, .run/pids/NAME.pid, .run/api-key.
set -euo pipefail

# ---------------------------------------------------------------------------------------------
# The processes, started top to bottom and stopped bottom to top. One line per process:
#
#   name | package | port | env
#
# name     binary name; must equal the last element of the package path
# package  main package, relative to the repository root
# port     HTTP port on 127.0.0.1 (the process gets HTTP_ADDR=127.0.0.1:PORT); a queue consumer
#          serves only /livez, /readyz and /metrics there (docs/operations.md)
# env      extra KEY=VALUE pairs for this process only, separated by spaces (may be empty)
#
# Every process also gets DATABASE_URL, AMQP_URL, INTERNAL_TOKEN, LOG_LEVEL and, for every line
# with a port, its URL as <NAME>_URL: user -> USER_URL, lead-api -> LEAD_URL (an "-api" suffix is
# dropped), notification-api -> NOTIFICATION_URL. A gateway upstream without a line stays unset,
# and the gateway answers its routes with 501.
# Health: every process is up once its /readyz answers 200.
# The demo seed and the API key are made after every process above the gateway is healthy.
PROCESSES=(
  "user    | ./services/user/cmd/user   | 8081 | "
  "order   | ./services/order/cmd/order | 8082 | "
  "lead-api    | ./services/lead/cmd/lead-api    | 8083 | "
  "lead-worker | ./services/lead/cmd/lead-worker | 8093 | "
  "call        | ./services/call/cmd/call        | 8084 | "
  "call-ingest | ./services/call/cmd/call-ingest | 8094 | "
  "notification-api    | ./services/notification/cmd/notification-api    | 8085 | "
  "notification-worker | ./services/notification/cmd/notification-worker | 8095 | "
  "webhook-api        | ./services/webhook/cmd/webhook-api        | 8086 | "
  "webhook-dispatcher | ./services/webhook/cmd/webhook-dispatcher | 8096 | "
  "gateway | ./gateway/cmd/gateway      | 8080 | METRICS_ADDR=127.0.0.1:9080"
)
# Command-line tools built with the processes but not started: user-admin works on the user
# service's schema (its demo users and agent groups, API keys); ccadmin is a client of the other
# services' APIs and events (their demo data, simulated calls).
TOOLS=(
  "user-admin | ./services/user/cmd/user-admin"
  "ccadmin    | ./tools/cmd/ccadmin"
)
ENTRY=gateway                      # the public entry point, started last
CONSUMERS=" lead-worker call-ingest notification-worker webhook-dispatcher "  # queue consumers: their ports serve probes and metrics (the stacks of the Go tests read this list)
DEMO_ADMIN_EMAIL=admin@demo.callcenter.local
# ---------------------------------------------------------------------------------------------

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUN=$ROOT/.run
BIN=$RUN/bin
LOGS=$RUN/logs
PIDS=$RUN/pids
KEY_FILE=$RUN/api-key
# One ready key per other access group, as API_KEY_<GROUP>=... lines, to try the access rules with.
GROUP_KEYS_FILE=$RUN/api-keys-by-group
# The demo user whose key stands for each group (services/user/internal/demo/users.go).
GROUP_USERS="MODERATOR=moderator@demo.callcenter.local CLIENT=client@demo.callcenter.local CALL_CENTER_SENIOR=senior@demo.callcenter.local CALL_CENTER=agent.petrov@demo.callcenter.local ARBITRATION=arbitration@demo.callcenter.local"
WAIT_SECONDS=${STACK_WAIT_SECONDS:-60}

export PATH=/usr/local/go/bin:$PATH
export DATABASE_URL=${DATABASE_URL:-postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable}
export AMQP_URL=${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}
export INTERNAL_TOKEN=${INTERNAL_TOKEN:-dev-internal-token}
export LOG_LEVEL=${LOG_LEVEL:-info}

log() { printf 'stack: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; s=${s%"${s##*[![:space:]]}"}; printf '%s' "$s"; }

# Parsed table: parallel arrays.
NAMES=(); PKGS=(); PORTS=(); ENVS=()
for line in "${PROCESSES[@]}"; do
  IFS='|' read -r n p port e <<<"$line"
  NAMES+=("$(trim "$n")"); PKGS+=("$(trim "$p")"); PORTS+=("$(trim "$port")"); ENVS+=("$(trim "${e:-}")")
done
TOOL_NAMES=(); TOOL_PKGS=()
for line in "${TOOLS[@]}"; do
  IFS='|' read -r n p <<<"$line"
  TOOL_NAMES+=("$(trim "$n")"); TOOL_PKGS+=("$(trim "$p")")
done

base_url() { local i; for i in "${!NAMES[@]}"; do [ "${NAMES[$i]}" = "$ENTRY" ] && { echo "http://127.0.0.1:${PORTS[$i]}"; return; }; done; }
health_path() { echo /readyz; }

# <NAME>_URL for every process with a port but the entry point. A consumer's (CALL_INGEST_URL) is
# its probe listener, which the gateway's health check reads (docs/operations.md).
export_service_urls() {
  local i n var
  for i in "${!NAMES[@]}"; do
    [ "${PORTS[$i]}" = - ] || [ "${NAMES[$i]}" = "$ENTRY" ] && continue
    n=${NAMES[$i]%-api}; var=$(printf '%s' "$n" | tr 'a-z-' 'A-Z_')_URL
    export "$var=http://127.0.0.1:${PORTS[$i]}"
  done
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

http_ok() { # url -> 0 when the answer is 2xx
  if command -v curl >/dev/null; then
    curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null
  else
    local rest=${1#http://} hostport path
    hostport=${rest%%/*}; path=/${rest#*/}
    (
      exec 3<>"/dev/tcp/${hostport%%:*}/${hostport##*:}" || exit 1
      printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$path" "$hostport" >&3
      IFS=' ' read -r -t 2 _ status _ <&3 || exit 1
      [[ $status == 2* ]]
    ) 2>/dev/null
  fi
}

pid_of() { [ -f "$PIDS/$1.pid" ] && cat "$PIDS/$1.pid" || true; }
# A pid counts as ours only while it still runs a binary from .run/bin (pids get reused).
ours() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null && [[ $(readlink "/proc/$1/exe" 2>/dev/null || true) == "$BIN/"* ]]; }

build() {
  local i pkgs=()
  for i in "${!NAMES[@]}"; do
    [ "$(basename "${PKGS[$i]}")" = "${NAMES[$i]}" ] || die "table: name ${NAMES[$i]} must equal the last element of ${PKGS[$i]}"
    pkgs+=("${PKGS[$i]}")
  done
  for i in "${!TOOL_NAMES[@]}"; do pkgs+=("${TOOL_PKGS[$i]}"); done
  mkdir -p "$BIN"
  log "building ${NAMES[*]} ${TOOL_NAMES[*]} into .run/bin"
  # The version every binary logs at start and shows at /livez.
  local version
  version=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo dev)
  # Built as the image builds them: no cgo (nothing needs libc) and without gin's MessagePack codec
  # (every body is JSON); both keep every process smaller (docs/performance.md, figure (8)).
  (cd "$ROOT" && CGO_ENABLED=0 go build -tags nomsgpack -ldflags "-X ccplatform/pkg/buildinfo.Version=$version" -o "$BIN/" "${pkgs[@]}") || { log "build failed"; return 1; }
}

tail_log() { # name
  log "last lines of .run/logs/$1.log:"
  tail -n 40 "$LOGS/$1.log" >&2 2>/dev/null || true
}

# Refuse to start over a running stack or over a port that something else holds.
check_free() {
  local i pid running=() busy=()
  for i in "${!NAMES[@]}"; do
    pid=$(pid_of "${NAMES[$i]}")
    if ours "$pid"; then running+=("${NAMES[$i]}($pid)"); fi
  done
  if [ ${#running[@]} -gt 0 ]; then
    die "the stack is already running (${running[*]}): use 'make status', or 'make down' first"
  fi
  for i in "${!NAMES[@]}"; do
    [ "${PORTS[$i]}" = - ] && continue
    if port_open "${PORTS[$i]}"; then
      local who=""
      command -v ss >/dev/null && who=$(ss -Hltnp "sport = :${PORTS[$i]}" 2>/dev/null | grep -o 'users:.*' | head -1 || true)
      busy+=("${PORTS[$i]} (for ${NAMES[$i]}) is taken${who:+ by $who}")
    fi
  done
  if [ ${#busy[@]} -gt 0 ]; then
    for i in "${busy[@]}"; do log "port $i"; done
    die "free these ports (a stack started by hand? 'make down' stops one started by 'make up')"
  fi
}

STARTED=()   # names started by this invocation, in start order

start_one() { # index
  local i=$1 name=${NAMES[$1]} port=${PORTS[$1]} pid kv envs=()
  [ "$port" != - ] && envs+=("HTTP_ADDR=127.0.0.1:$port")
  for kv in ${ENVS[$i]}; do envs+=("$kv"); done
  : >"$LOGS/$name.log"
  # Own session: a Ctrl-C in the terminal reaches this script only, which then stops the
  # processes in reverse order.
  env "${envs[@]}" setsid "$BIN/$name" </dev/null >>"$LOGS/$name.log" 2>&1 &
  pid=$!
  echo "$pid" >"$PIDS/$name.pid"
  STARTED+=("$name")
  log "started $name (pid $pid${port:+, port $port})"
}

wait_healthy() { # index
  local name=${NAMES[$1]} port=${PORTS[$1]} pid url deadline
  pid=$(pid_of "$name")
  deadline=$((SECONDS + WAIT_SECONDS))
  if [ "$port" = - ]; then
    sleep 3
    kill -0 "$pid" 2>/dev/null || { log "$name exited right after start"; tail_log "$name"; return 1; }
    return 0
  fi
  url="http://127.0.0.1:$port$(health_path "$name")"
  while ! http_ok "$url"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "$name exited before it became healthy"; tail_log "$name"; return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      log "$name did not answer $url within $WAIT_SECONDS s"; tail_log "$name"; return 1
    fi
    sleep 0.3
  done
  log "$name healthy ($url)"
}

stop_pid() { # name pid
  local name=$1 pid=$2 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || { log "stopped $name (pid $pid)"; return 0; }; sleep 0.2; done
  log "$name (pid $pid) did not stop in 10 s: killing it"
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 1 25); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
}

stop_all() {
  local i name pid left
  for ((i = ${#NAMES[@]} - 1; i >= 0; i--)); do
    name=${NAMES[$i]}; pid=$(pid_of "$name")
    if ours "$pid"; then stop_pid "$name" "$pid"; fi
    rm -f "$PIDS/$name.pid"
  done
  rm -f "$PIDS"/*.pid 2>/dev/null || true
  # Anything else still running from this checkout's .run/bin (e.g. a stack whose pid files were
  # removed by hand) is stopped too, so that nothing is left behind.
  left=$(pgrep -f "^$BIN/" || true)
  for pid in $left; do
    ours "$pid" && stop_pid "$(basename "$(readlink "/proc/$pid/exe")")" "$pid"
  done
  left=$(pgrep -f "^$BIN/" || true)
  [ -z "$left" ] || { log "still running: $left"; return 1; }
}

seed_and_key() {
  local out
  # The user service's demo users and agent groups first: the other services' demo data names them.
  log "seeding demo data (user-admin seed, then ccadmin seed --demo)"
  if ! "$BIN/user-admin" seed >"$LOGS/seed.log" 2>&1; then
    log "user-admin seed failed"; tail_log seed; return 1
  fi
  if ! "$BIN/ccadmin" seed --demo >>"$LOGS/seed.log" 2>&1; then
    log "ccadmin seed --demo failed"; tail_log seed; return 1
  fi
  log "creating an API key for $DEMO_ADMIN_EMAIL"
  if ! out=$("$BIN/user-admin" apikey create --email "$DEMO_ADMIN_EMAIL" 2>>"$LOGS/seed.log"); then
    log "user-admin apikey create failed"; tail_log seed; return 1
  fi
  out=$(trim "$out")
  if [ -z "$out" ] || [[ $out == *[[:space:]]* ]]; then
    log "user-admin apikey create printed something other than one key: $out"; return 1
  fi
  (umask 077; printf '%s\n' "$out" >"$KEY_FILE")
  local pair group email lines=""
  for pair in $GROUP_USERS; do
    group=${pair%%=*}; email=${pair#*=}
    if ! out=$("$BIN/user-admin" apikey create --email "$email" --name "demo $group" 2>>"$LOGS/seed.log"); then
      log "user-admin apikey create --email $email failed"; tail_log seed; return 1
    fi
    lines+="API_KEY_$group=$(trim "$out")"$'\n'
  done
  (umask 077; printf '%s' "$lines" >"$GROUP_KEYS_FILE")
}

print_summary() {
  local url key
  url=$(base_url); key=$(cat "$KEY_FILE")
  cat <<EOF

The platform is up.
BASE_URL=$url
API_KEY=$key
$(cat "$GROUP_KEYS_FILE" 2>/dev/null)

The API_KEY is the demo admin's; each API_KEY_<GROUP> is a demo user of that access group, to try
who may do what (gateway/README.md, "Who may do what").

Create an order:
curl -sS -X POST '$url/v2/order/create/' -H 'X-Api-Key: $key' -H 'Content-Type: application/json' -d '{"serviceTitle":"Демо-сервис","title":"Заказ 1","status":"success","sipEndpointIds":[1]}'

EOF
}

# Called as `if ! start_stack`, where set -e does not apply: every step checks its own status.
start_stack() {
  local i entry_index=-1
  check_free
  "$ROOT/scripts/deps.sh" || { log "PostgreSQL/RabbitMQ are not ready (scripts/deps.sh)"; return 1; }
  build || return 1
  mkdir -p "$LOGS" "$PIDS" || return 1
  rm -f "$KEY_FILE" "$GROUP_KEYS_FILE"
  export_service_urls
  for i in "${!NAMES[@]}"; do
    if [ "${NAMES[$i]}" = "$ENTRY" ]; then entry_index=$i; continue; fi
    start_one "$i"
    wait_healthy "$i" || return 1
  done
  seed_and_key || return 1
  if [ $entry_index -ge 0 ]; then
    start_one "$entry_index"
    wait_healthy "$entry_index" || return 1
  fi
}

cmd_up() {
  trap 'trap - INT TERM; echo >&2; log "interrupted: stopping what was started"; stop_all || true; exit 130' INT TERM
  if ! start_stack; then
    log "start failed: stopping what was started"
    stop_all || true
    exit 1
  fi
  trap - INT TERM
  print_summary
  echo "Logs: .run/logs/<name>.log. Stop with: make down"
}

cmd_run() {
  local tail_pid="" name i pid
  on_signal() {
    trap - INT TERM
    echo >&2
    log "stopping"
    # A Ctrl-C at the terminal reaches tail too, so it may be gone already: under `set -e` a failed
    # kill here would end the script before stop_all.
    if [ -n "$tail_pid" ]; then kill "$tail_pid" 2>/dev/null || true; fi
    stop_all || true
    exit 0
  }
  trap on_signal INT TERM
  if ! start_stack; then
    log "start failed: stopping what was started"
    stop_all || true
    exit 1
  fi
  print_summary
  echo "Following the logs (.run/logs). Ctrl-C stops every process."
  local files=()
  for name in "${NAMES[@]}"; do files+=("$LOGS/$name.log"); done
  tail -n 0 -F "${files[@]}" &
  tail_pid=$!
  # Watch the processes: if one exits on its own, show why and stop the rest.
  while true; do
    for i in "${!NAMES[@]}"; do
      pid=$(pid_of "${NAMES[$i]}")
      if ! kill -0 "$pid" 2>/dev/null; then
        log "${NAMES[$i]} exited on its own"
        kill "$tail_pid" 2>/dev/null || true
        tail_log "${NAMES[$i]}"
        trap - INT TERM
        stop_all || true
        exit 1
      fi
    done
    sleep 1 &
    wait $! || true
  done
}

cmd_down() {
  if ! ls "$PIDS"/*.pid >/dev/null 2>&1 && [ -z "$(pgrep -f "^$BIN/" || true)" ]; then
    log "nothing is running"
    return 0
  fi
  stop_all
  rm -f "$KEY_FILE" "$GROUP_KEYS_FILE"
  log "stopped; no process of .run/bin is left"
}

cmd_status() {
  local i name port pid state health all=0
  printf '%-20s %-8s %-6s %s\n' PROCESS PID PORT STATE
  for i in "${!NAMES[@]}"; do
    name=${NAMES[$i]}; port=${PORTS[$i]}; pid=$(pid_of "$name")
    if ours "$pid"; then
      state=running
      if [ "$port" != - ]; then
        if http_ok "http://127.0.0.1:$port$(health_path "$name")"; then health=healthy; else health=unhealthy; all=1; fi
        state="$state, $health"
      fi
    else
      state=stopped; pid=-; all=1
    fi
    printf '%-20s %-8s %-6s %s\n' "$name" "$pid" "$port" "$state"
  done
  if [ $all = 0 ] && [ -f "$KEY_FILE" ]; then
    echo "BASE_URL=$(base_url)"
    echo "API_KEY=$(cat "$KEY_FILE")"
    cat "$GROUP_KEYS_FILE" 2>/dev/null || true
  fi
  return $all
}

case "${1:-}" in
  run) cmd_run ;;
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  build) build ;;
  *) echo "usage: $0 run|up|down|status|build" >&2; exit 2 ;;
esac
