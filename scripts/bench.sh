#!/usr/bin/env bash
# Benchmarks: throughput and latency percentiles of the gateway, the lead API and the lead worker,
# each beside a baseline measured in the same run. They arrive with the lead service.
set -euo pipefail
echo "bench: no benchmarks yet; they arrive with the lead service (lead create through the gateway, async lead jobs)."
