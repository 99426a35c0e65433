#!/usr/bin/env bash
# Soak (scripts/soak, results in docs/performance.md): a steady mix of every operation of the
# public API (checked against gateway/api/openapi.yaml), with a few percent of bad input among it,
# through the gateway at a fixed rate for a bounded time, printing per window the throughput, p99
# per route, answers by status and each process's RSS, goroutines and database connections. Fails
# on any 5xx, a bad input not refused with a 4xx, an operation never answered, or growth of a
# process's RSS or goroutines. Runs every binary `make up` starts on a database and a vhost of its
# own. CI runs a short one (.ci/run); a run up to 2 minutes is short (a bounded growth check).
#
# Environment: DATABASE_URL, AMQP_URL (see scripts/deps.sh), SOAK_DURATION (default 10m).
# Arguments go to the soak program (-d duration, -rate req/s; -h lists them).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export PATH=/usr/local/go/bin:$PATH
export DATABASE_URL=${DATABASE_URL:-postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable}
export AMQP_URL=${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}

scripts/deps.sh
cd scripts/soak
go build -o "${TMPDIR:-/tmp}/cc-soak" .
exec "${TMPDIR:-/tmp}/cc-soak" "$@"
