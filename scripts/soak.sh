#!/usr/bin/env bash
# Soak (scripts/soak, results in docs/performance.md): a steady mix of every public operation
# through the gateway at a fixed rate for a bounded time, printing per minute the throughput, p99
# per route, answers by status and each process's RSS, goroutines and database connections. Fails
# on any 5xx or when a process's RSS or goroutines grow more than 10% after minute 2. Runs the real
# binaries on a database and a vhost of its own. Not part of CI.
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
