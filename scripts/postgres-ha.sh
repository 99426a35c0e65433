#!/usr/bin/env bash
# A PostgreSQL primary and a streaming standby of the project's own, from Debian's PostgreSQL 15
# binaries, behind HAProxy (Debian's haproxy package), for the failover test (make test-cluster).
# The services reach the database through HAProxy's one address, which follows the writable node,
# as they reach CloudNativePG's -rw Service in Kubernetes. It runs beside the development database
# on 5432 and touches nothing of it: its own ports, data, sockets and logs under .run/postgres-ha.
#
#   scripts/postgres-ha.sh up          start what is not running: node a (primary), node b (its
#                                      standby, made with pg_basebackup -R), HAProxy
#   scripts/postgres-ha.sh down        stop all three and remove everything up made
#   scripts/postgres-ha.sh status      each node's state (primary, standby, down) and where HAProxy routes
#   scripts/postgres-ha.sh url         the DATABASE_URL through HAProxy
#   scripts/postgres-ha.sh stop NODE   stop node a or b at once (pg_ctl -m immediate: a crash)
#   scripts/postgres-ha.sh promote     promote the standby b (pg_ctl promote), which HAProxy's check
#                                      then finds writable
#
# Nodes a and b on 127.0.0.1:5801 and 5802 (and their unix sockets in their folders), HAProxy on
# 127.0.0.1:5800. Role cc (password cc, REPLICATION, CREATEDB, like scripts/deps.sh makes), database
# cc, wal_level=logical and max_slot_wal_keep_size=2GB as on the development cluster. Replication is
# synchronous (a's synchronous_standby_names names b, set once b streams): a commit returns only once b has flushed it,
# so a commit a client was told of survives the loss of a. b carries no such setting, so once
# promoted it commits alone.
# HAProxy routes to the one node whose `SELECT pg_is_in_recovery()` says false, found by an external
# check (check-writable.sh, run by HAProxy every 500 ms); a node marked down has its sessions cut.
# As root (CI), initdb, pg_ctl and pg_basebackup run as the postgres user, which PostgreSQL needs.
# Idempotent: `up` on a running pair only checks it.
#
# Environment: PGHA_DIR (default .run/postgres-ha in the checkout), PGHA_BASE_PORT (5800).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${PGHA_DIR:-$ROOT/.run/postgres-ha}
BASE=${PGHA_BASE_PORT:-5800}
BIN=/usr/lib/postgresql/15/bin
USER_NAME=cc
PASSWORD=cc
DB=cc

log() { printf 'postgres-ha: %s\n' "$*" >&2; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
is_root() { [ "$(id -u)" = 0 ]; }
node_port() { case $1 in a) echo $((BASE + 1)) ;; b) echo $((BASE + 2)) ;; *) log "no node $1 (a or b)"; exit 2 ;; esac; }
proxy_port() { echo "$BASE"; }
# The data folders live under $DIR, unless the postgres user (as root) cannot reach it (a
# checkout under /root): then in a folder of the postgres user's own under /tmp, which $DIR/data
# points at, so down finds and removes it all the same.
data_root() { if [ -L "$DIR/data" ] || [ -d "$DIR/data" ]; then readlink -f "$DIR/data"; fi; }
node_dir() { echo "$(data_root)/$1"; }

# as_pg CMD ARGS...: a PostgreSQL tool as the user that owns the data (postgres under root).
as_pg() { if is_root; then runuser -u postgres -- "$@"; else "$@"; fi; }
pgctl() { as_pg "$BIN/pg_ctl" -D "$(node_dir "$1")/data" "${@:2}"; }
# sql NODE SQL: one statement on node NODE as cc, over TCP (what the services and HAProxy see).
sql() { PGPASSWORD=$PASSWORD PGCONNECT_TIMEOUT=3 psql -h 127.0.0.1 -p "$(node_port "$1")" -U "$USER_NAME" -d "$DB" -qtAX -c "$2"; }
role_of() {
  if ! port_open "$(node_port "$1")"; then echo down; return; fi
  case "$(sql "$1" 'SELECT pg_is_in_recovery()' 2>/dev/null)" in
    f) echo primary ;; t) echo standby ;; *) echo starting ;;
  esac
}

ensure_packages() {
  [ -x "$BIN/postgres" ] || { log "$BIN/postgres is missing: scripts/deps.sh postgres installs PostgreSQL"; exit 1; }
  command -v psql >/dev/null || { log "psql is missing: scripts/deps.sh postgres installs PostgreSQL"; exit 1; }
  if ! command -v haproxy >/dev/null; then
    is_root || { log "haproxy is missing and installing it needs root (apt-get install haproxy)"; exit 1; }
    log "installing HAProxy"
    # The package's post-install would start its own haproxy on its own config: policy-rc.d keeps
    # that to us, as deps.sh does for rabbitmq-server.
    local policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; policy=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >&2 || { [ $policy = 0 ] || rm -f /usr/sbin/policy-rc.d; exit 1; }
    [ $policy = 0 ] || rm -f /usr/sbin/policy-rc.d
  fi
}

make_dirs() {
  mkdir -p "$DIR"
  [ -z "$(data_root)" ] || return 0
  if ! is_root; then mkdir -p "$DIR/data"; return; fi
  if runuser -u postgres -- test -x "$DIR" 2>/dev/null; then
    mkdir -p "$DIR/data"
    chown postgres:postgres "$DIR/data"
  else
    local d
    d=$(mktemp -d /tmp/cc-postgres-ha.XXXXXX)
    chown postgres:postgres "$d"; chmod 755 "$d"
    ln -s "$d" "$DIR/data"
  fi
}

# node_opts N: the server's settings, on its command line so that the standby's copy of a's
# configuration (pg_basebackup copies it) carries none of a's own.
node_opts() {
  local opts="-p $(node_port "$1") -k $(node_dir "$1") -c listen_addresses=127.0.0.1 -c unix_socket_permissions=0700"
  opts+=" -c max_connections=400"
  opts+=" -c wal_level=logical -c max_slot_wal_keep_size=2GB -c hot_standby=on -c wal_log_hints=on"
  echo "$opts"
}

start_node() {
  local n=$1 d
  d=$(node_dir "$n")
  if port_open "$(node_port "$n")"; then log "node $n already answers on $(node_port "$n")"; return; fi
  log "starting node $n on 127.0.0.1:$(node_port "$n")"
  pgctl "$n" start -w -t 60 -l "$d/server.log" -o "$(node_opts "$n")" >/dev/null
}

init_primary() {
  local d
  d=$(node_dir a)
  [ -f "$d/data/PG_VERSION" ] && return
  log "initdb node a"
  as_pg mkdir -p "$d"
  # The superuser (postgres) only over the node's own socket, in its folder and for its owner
  # alone; every TCP connection, the standby's too, logs in with a password (scram-sha-256).
  as_pg "$BIN/initdb" -D "$d/data" -U postgres --auth-host=scram-sha-256 --auth-local=trust \
    -E UTF8 --no-sync >/dev/null
  # Replication connections from loopback, for the standby's walreceiver and pg_basebackup.
  echo "host replication $USER_NAME 127.0.0.1/32 scram-sha-256" | as_pg tee -a "$d/data/pg_hba.conf" >/dev/null
}

# su_sql SQL: a statement on node a as its superuser, over the node's socket.
su_sql() { as_pg psql -h "$(node_dir a)" -p "$(node_port a)" -U postgres -d postgres -qtAX -v ON_ERROR_STOP=1 -c "$1"; }

init_database() {
  # The role as scripts/deps.sh makes it (LOGIN CREATEDB REPLICATION, no superuser) and its
  # database, once a is up: a no-op on a pair already made.
  su_sql "DO \$\$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$USER_NAME') THEN
      CREATE ROLE $USER_NAME LOGIN CREATEDB REPLICATION PASSWORD '$PASSWORD';
    END IF; END \$\$" >/dev/null
  if [ "$(su_sql "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]; then
    su_sql "CREATE DATABASE $DB OWNER $USER_NAME" >/dev/null
  fi
}

init_standby() {
  local d
  d=$(node_dir b)
  [ -f "$d/data/PG_VERSION" ] && return
  log "pg_basebackup node b from node a"
  as_pg mkdir -p "$d"
  # -R writes standby.signal and primary_conninfo; the application name is what a's
  # synchronous_standby_names waits for. The password goes in as PGPASSWORD and -R writes it down.
  as_pg env PGPASSWORD="$PASSWORD" "$BIN/pg_basebackup" -D "$d/data" -R -X stream -c fast --no-sync \
    -d "host=127.0.0.1 port=$(node_port a) user=$USER_NAME application_name=pgha_b" >/dev/null
}

# The check HAProxy runs for each server (external-check: the server's address and port are its
# third and fourth arguments). Success only for a node that answers and is not in recovery.
write_check() {
  cat >"$DIR/check-writable.sh" <<SH
#!/bin/sh
# HAProxy's external check: exit 0 only if the server at \$3:\$4 is writable (not in recovery).
r=\$(PGPASSWORD=$PASSWORD PGCONNECT_TIMEOUT=1 psql -h "\$3" -p "\$4" -U $USER_NAME -d $DB -qtAX -c 'SELECT pg_is_in_recovery()' 2>/dev/null)
[ "\$r" = f ]
SH
  chmod 755 "$DIR/check-writable.sh"
}

write_haproxy_cfg() {
  cat >"$DIR/haproxy.cfg" <<CFG
global
    # The external check forks a shell per check: allowed explicitly since HAProxy 2.2.
    external-check
    insecure-fork-wanted
    pidfile $DIR/haproxy.pid
    log stderr local0 notice

defaults
    mode tcp
    log global
    timeout connect 2s
    # Pooled connections and the relays' replication connections sit idle for long: only a dead
    # server (its sessions cut when marked down) or the client ends them.
    timeout client 24h
    timeout server 24h
    timeout check 2s

listen postgres
    bind 127.0.0.1:$(proxy_port)
    option external-check
    external-check path "/usr/bin:/bin"
    external-check command $DIR/check-writable.sh
    # Down after two failed checks (1 s), up after one: a promoted standby takes the traffic within
    # half a second; a node that stops being writable has its sessions cut at once.
    default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
    server a 127.0.0.1:$(node_port a) check
    server b 127.0.0.1:$(node_port b) check
CFG
}

start_haproxy() {
  if port_open "$(proxy_port)"; then log "HAProxy already answers on $(proxy_port)"; return; fi
  write_check
  write_haproxy_cfg
  haproxy -c -q -f "$DIR/haproxy.cfg" >&2
  log "starting HAProxy on 127.0.0.1:$(proxy_port)"
  # -D: it daemonizes and writes its pid; its own log (stderr) goes to haproxy.log.
  (cd "$DIR" && exec setsid haproxy -D -f "$DIR/haproxy.cfg" >>"$DIR/haproxy.log" 2>&1 </dev/null)
}

# await_routed: HAProxy's address reaches the primary (the check found it).
await_routed() {
  for _ in $(seq 1 60); do
    if [ "$(routed_to)" = "$(node_port a)" ] || [ "$(routed_to)" = "$(node_port b)" ]; then return 0; fi
    sleep 0.5
  done
  log "HAProxy does not reach a writable node (see $DIR/haproxy.log)"; return 1
}
routed_to() {
  PGPASSWORD=$PASSWORD PGCONNECT_TIMEOUT=2 psql -h 127.0.0.1 -p "$(proxy_port)" -U "$USER_NAME" -d "$DB" -qtAX \
    -c 'SELECT CASE WHEN pg_is_in_recovery() THEN 0 ELSE inet_server_port() END' 2>/dev/null || true
}

# await_streaming: b streams from a, then a waits for b on every commit. Set on a alone, once b
# streams (a commit on a would wait for b before), and after b's copy was taken (b, once
# promoted, has nobody to wait for).
await_streaming() {
  for _ in $(seq 1 60); do
    if [ -n "$(su_sql "SELECT 1 FROM pg_stat_replication WHERE application_name = 'pgha_b' AND state = 'streaming'" 2>/dev/null)" ]; then
      su_sql "ALTER SYSTEM SET synchronous_standby_names = 'pgha_b'" >/dev/null
      su_sql "SELECT pg_reload_conf()" >/dev/null
      for _ in $(seq 1 20); do
        [ "$(su_sql "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'pgha_b'" 2>/dev/null)" = sync ] && return 0
        sleep 0.5
      done
    fi
    sleep 0.5
  done
  log "node b does not stream from node a synchronously (see $(node_dir b)/server.log)"; return 1
}

up() {
  ensure_packages
  make_dirs
  if [ -f "$(node_dir a)/data/PG_VERSION" ] && [ "$(role_of b)" = primary ]; then
    log "node b was promoted: this pair has failed over; 'down' then 'up' makes a new one"
    status; exit 1
  fi
  init_primary
  start_node a
  init_database
  init_standby
  start_node b
  await_streaming
  start_haproxy
  await_routed
  log "up: $(url) (primary a on $(node_port a), standby b on $(node_port b), synchronous)"
}

down() {
  if [ -f "$DIR/haproxy.pid" ]; then
    kill "$(cat "$DIR/haproxy.pid")" 2>/dev/null || true
  fi
  for n in a b; do
    if [ -n "$(data_root)" ] && [ -f "$(node_dir "$n")/data/postmaster.pid" ]; then
      pgctl "$n" stop -m immediate -w -t 30 >/dev/null 2>&1 || true
    fi
  done
  local real
  real=$(data_root)
  rm -rf "$DIR"
  if [ -n "$real" ] && [ "$real" != "$DIR/data" ]; then rm -rf "$real"; fi
  log "down, $DIR removed"
}

status() {
  for n in a b; do
    echo "node $n: $(role_of "$n") on 127.0.0.1:$(node_port "$n")"
  done
  if port_open "$(proxy_port)"; then
    local to
    to=$(routed_to)
    case "$to" in
      "$(node_port a)") echo "haproxy: up on 127.0.0.1:$(proxy_port), routes to node a" ;;
      "$(node_port b)") echo "haproxy: up on 127.0.0.1:$(proxy_port), routes to node b" ;;
      *) echo "haproxy: up on 127.0.0.1:$(proxy_port), no writable node" ;;
    esac
  else
    echo "haproxy: down"
  fi
}

url() { echo "postgres://$USER_NAME:$PASSWORD@127.0.0.1:$(proxy_port)/$DB?sslmode=disable"; }

stop_node() {
  local n=${1:?stop a|b}
  node_port "$n" >/dev/null
  log "stopping node $n (immediate)"
  pgctl "$n" stop -m immediate -w -t 30 >/dev/null
}

promote() {
  [ "$(role_of b)" = standby ] || { log "node b is not a standby ($(role_of b))"; exit 1; }
  log "promoting node b"
  pgctl b promote -w -t 60 >/dev/null
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  url) url ;;
  stop) stop_node "${2:-}" ;;
  promote) promote ;;
  *) echo "usage: $0 up|down|status|url|stop a|b|promote" >&2; exit 2 ;;
esac
