#!/usr/bin/env bash
# Makes sure PostgreSQL and RabbitMQ answer on 127.0.0.1 and Prometheus's tools and Chromium are
# installed, the way a newcomer's machine needs them: use them where they already run, start the
# installed ones where stopped, install them from Debian packages where missing (as root). Then
# creates the project's database role and database.
#
# Environment: DATABASE_URL (default postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable)
#              AMQP_URL     (default amqp://guest:guest@127.0.0.1:5672/)
set -euo pipefail

DATABASE_URL=${DATABASE_URL:-postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable}
AMQP_URL=${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}

log() { printf 'deps: %s\n' "$*" >&2; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Parse host/port/user/password/dbname out of the URLs (simple postgres:// and amqp:// forms).
pg_rest=${DATABASE_URL#*://}; pg_cred=${pg_rest%%@*}; pg_hostpart=${pg_rest#*@}
PG_USER=${pg_cred%%:*}; PG_PASS=${pg_cred#*:}
pg_hostport=${pg_hostpart%%/*}; PG_HOST=${pg_hostport%%:*}; PG_PORT=${pg_hostport##*:}
[ "$PG_PORT" = "$pg_hostport" ] && PG_PORT=5432
pg_db=${pg_hostpart#*/}; PG_DB=${pg_db%%\?*}
mq_rest=${AMQP_URL#*://}; mq_hostpart=${mq_rest#*@}; mq_hostport=${mq_hostpart%%/*}
MQ_HOST=${mq_hostport%%:*}; MQ_PORT=${mq_hostport##*:}
[ "$MQ_PORT" = "$mq_hostport" ] && MQ_PORT=5672

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
is_root() { [ "$(id -u)" = 0 ]; }
apt_updated=0
apt_install() {
  is_root || { log "$* is missing and installing it needs root: install it, or set the URL to a running one"; exit 1; }
  command -v apt-get >/dev/null || { log "$* is missing and this is not a Debian-like system: install it by hand"; exit 1; }
  if [ $apt_updated = 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}
wait_port() { # host port seconds name
  for _ in $(seq 1 "$3"); do port_open "$1" "$2" && return 0; sleep 1; done
  log "$4 did not come up on $1:$2 within $3 s"; return 1
}
as_postgres() { if is_root; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }

ensure_postgres() {
  if port_open "$PG_HOST" "$PG_PORT"; then log "PostgreSQL answers on $PG_HOST:$PG_PORT"; else
    if ! command -v pg_lsclusters >/dev/null && ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
      log "installing PostgreSQL"; apt_install postgresql
    fi
    if command -v pg_lsclusters >/dev/null; then
      if [ -z "$(pg_lsclusters -h 2>/dev/null)" ]; then
        ver=$(ls /usr/lib/postgresql | sort -n | tail -1); log "creating cluster $ver/main"; pg_createcluster "$ver" main >&2
      fi
      pg_lsclusters -h | while read -r ver name port status _; do
        if [ "$status" != online ]; then log "starting PostgreSQL cluster $ver/$name (port $port)"; pg_ctlcluster "$ver" "$name" start >&2 || true; fi
      done
    else
      log "PostgreSQL is installed but no pg_ctlcluster: start it by hand"; exit 1
    fi
    wait_port "$PG_HOST" "$PG_PORT" 30 PostgreSQL
  fi
  # Role and database: only possible as the postgres superuser on this machine.
  if is_root && id postgres >/dev/null 2>&1; then
    as_postgres "psql -p $PG_PORT -qtAX -v ON_ERROR_STOP=1" >/dev/null <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
    CREATE ROLE "$PG_USER" LOGIN CREATEDB PASSWORD '$PG_PASS';
  ELSE
    ALTER ROLE "$PG_USER" LOGIN CREATEDB PASSWORD '$PG_PASS';
  END IF;
END \$\$;
SELECT 'CREATE DATABASE "$PG_DB" OWNER "$PG_USER"' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$PG_DB')\gexec
SQL
    # Benchmarks and tests open many connections at once (eleven processes of the stack, each with
    # its pool, beside the test packages' own databases). Lead events leave through logical decoding
    # (docs/operations.md, "Lead events"): wal_level=logical, a role that may replicate, and a cap on
    # the WAL a stalled slot may hold back, so a relay left down cannot fill the disk.
    as_postgres "psql -p $PG_PORT -qtAX -c 'ALTER ROLE \"$PG_USER\" REPLICATION'" >/dev/null
    max=$(as_postgres "psql -p $PG_PORT -qtAX -c 'SHOW max_connections'")
    wal=$(as_postgres "psql -p $PG_PORT -qtAX -c 'SHOW wal_level'")
    if [ "${max:-0}" -lt 400 ] || [ "$wal" != logical ]; then
      log "setting max_connections = 400 and wal_level = logical (restart)"
      as_postgres "psql -p $PG_PORT -qtAX" >/dev/null <<'SQL'
ALTER SYSTEM SET max_connections = 400;
ALTER SYSTEM SET wal_level = logical;
ALTER SYSTEM SET max_slot_wal_keep_size = '2GB';
SQL
      if command -v pg_lsclusters >/dev/null; then
        pg_lsclusters -h | awk -v p="$PG_PORT" '$3==p {print $1, $2}' | while read -r ver name; do pg_ctlcluster "$ver" "$name" restart >&2; done
      fi
      wait_port "$PG_HOST" "$PG_PORT" 30 PostgreSQL
    fi
  fi
  log "PostgreSQL ready: role $PG_USER, database $PG_DB"
}

ensure_rabbitmq() {
  if port_open "$MQ_HOST" "$MQ_PORT"; then log "RabbitMQ answers on $MQ_HOST:$MQ_PORT"; else
    if ! command -v rabbitmq-server >/dev/null; then
      log "installing RabbitMQ"
      # The package's post-install tries to start the node; policy-rc.d keeps that to us.
      if is_root && [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; trap 'rm -f /usr/sbin/policy-rc.d' EXIT; fi
      apt_install rabbitmq-server
      rm -f /usr/sbin/policy-rc.d; trap - EXIT
    fi
    is_root || { log "RabbitMQ is stopped and starting it needs root"; exit 1; }
    log "starting RabbitMQ (listening on 127.0.0.1 only)"
    # The management plugin gives tests their own vhosts over HTTP.
    rabbitmq-plugins --offline enable rabbitmq_management >/dev/null 2>&1 || true
    # A development broker with the default guest account is for this machine only: AMQP (5672),
    # management (15672), Erlang distribution (25672) and epmd (4369) all listen on 127.0.0.1.
    # This is the project's own configuration; /etc/rabbitmq is left as the package made it.
    # The node runs as the rabbitmq user, who may not read a checkout under /root: it gets a copy.
    local conf
    conf=$(mktemp --suffix=.conf /tmp/cc-rabbitmq.XXXXXX)
    cp "$ROOT/scripts/rabbitmq/rabbitmq.conf" "$conf"; chmod 644 "$conf"
    # exec: no shell stays behind holding the caller's output (a `deps.sh | tail` would never end).
    (cd / && RABBITMQ_CONFIG_FILE="$conf" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$MQ_PORT" \
      ERL_EPMD_ADDRESS=127.0.0.1 RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
      exec setsid rabbitmq-server >/var/log/rabbitmq/cc-foreground.log 2>&1 </dev/null) &
    wait_port "$MQ_HOST" "$MQ_PORT" 120 RabbitMQ
    rabbitmqctl await_startup >/dev/null 2>&1 || true
  fi
  if command -v ss >/dev/null && ss -ltnH "( sport = :$MQ_PORT )" 2>/dev/null | grep -qvE '127\.0\.0\.1:|\[::1\]:'; then
    log "warning: the running broker listens on more than 127.0.0.1:$MQ_PORT (started by something else); using it as it is"
  fi
  log "RabbitMQ ready"
}

# Debian's prometheus package: promtool lints every process's metrics and the alerting rules in
# the tests, and the server scrapes a running stack (scripts/monitoring-check.sh). Nothing of it is
# started here; the package's own service stays off (policy-rc.d, as for RabbitMQ).
ensure_prometheus() {
  if command -v promtool >/dev/null && command -v prometheus >/dev/null; then log "Prometheus tools present"; return; fi
  is_root || { log "promtool is missing and installing it needs root (apt-get install prometheus)"; exit 1; }
  log "installing Prometheus (promtool and the server)"
  if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; trap 'rm -f /usr/sbin/policy-rc.d' EXIT; fi
  apt_install --no-install-recommends prometheus
  rm -f /usr/sbin/policy-rc.d; trap - EXIT
  # Without systemd the package may still have started its daemon: it would hold :9090.
  pkill -x prometheus 2>/dev/null || true
  log "Prometheus tools ready ($(promtool --version 2>&1 | head -1))"
}

# Debian's chromium: the gateway's API docs page (/docs/) is tested in a real headless browser,
# driven over the DevTools protocol (gateway/internal/docs). Nothing of it is started here.
ensure_chromium() {
  if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then log "Chromium present"; return; fi
  is_root || { log "chromium is missing and installing it needs root (apt-get install --no-install-recommends chromium)"; exit 1; }
  log "installing Chromium (headless browser of the docs page's test)"
  apt_install --no-install-recommends chromium
  log "Chromium ready ($(chromium --version 2>/dev/null | head -1))"
}

# Debian's nodejs and npm: scripts/spec-lint.sh runs Redocly CLI with npx (bookworm's nodejs 18.20
# meets the engines of the pinned @redocly/cli 1.34). Only on request (`deps.sh node`), not in all.
ensure_node() {
  if command -v node >/dev/null && command -v npx >/dev/null; then log "Node.js present ($(node --version))"; return; fi
  log "installing Node.js and npm (Debian's nodejs, npm)"
  apt_install --no-install-recommends nodejs npm
  log "Node.js ready ($(node --version))"
}

what=${1:-all}
case "$what" in
  postgres) ensure_postgres ;;
  rabbitmq) ensure_rabbitmq ;;
  prometheus) ensure_prometheus ;;
  chromium) ensure_chromium ;;
  all) ensure_postgres; ensure_rabbitmq; ensure_prometheus; ensure_chromium ;;
  node) ensure_node ;;
  *) echo "usage: $0 [all|postgres|rabbitmq|prometheus|chromium|node]" >&2; exit 2 ;;
esac
