#!/usr/bin/env bash
# Benchmarks of the lead scenario (scripts/bench, results in docs/performance.md): sync creates,
# async accepts, the worker's drain, a bulk import, the list page on a million leads and the
# dialing queue's leases, and the pacer in its simulator, each beside a baseline measured in the same run (bare net/http + INSERT, bare confirmed
# publishes, single-row INSERTs, the list's two queries alone, a bare SKIP LOCKED loop). Runs the
# real binaries on a database and a vhost of its own.
#
# Environment: DATABASE_URL, AMQP_URL (see scripts/deps.sh). Arguments go to the bench program
# (-c clients, -d phase length, -rows, -worker-concurrency, -list-requests, -phases, -import-rows, -dial-rows,
# -dial-due, -dial-big-rows, -report-calls, -ingest-calls, -report-keep, -report-reuse, -live-duration; -h lists
# them). The report phase loads calls straight into the tables and measures the orders report against
# a GROUP BY over them; the live phase holds 200 live streams open and measures the CPU they cost the
# gateway and the report API.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export PATH=/usr/local/go/bin:$PATH
export DATABASE_URL=${DATABASE_URL:-postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable}
export AMQP_URL=${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}

scripts/deps.sh
# Figure (9): the pacer in the simulator's standard model, predictive beside progressive (its
# baseline) on the same seeds in the same run (docs/performance.md, "Pacing").
echo "== (9) pacing: predictive against progressive, 8 simulated hours per seed (services/lead/internal/pacer/sim)"
(cd services/lead && PACER_FIGURES=1 go test -count=1 -v -run '^TestPacerFigures$' ./internal/pacer/sim/ | grep -v '^=== RUN') \
  || echo "(9) pacing: FAIL (a guarantee above is not met)"
cd scripts/bench
go build -o "${TMPDIR:-/tmp}/cc-bench" .
exec "${TMPDIR:-/tmp}/cc-bench" "$@"
