#!/usr/bin/env bash
# Whole-process speed of `gpufleet sim` on one core (taskset -c 0), hyperfine, one run:
# goodput of a 16,384-GPU job over 30 days with 1,000 trials (goal: under 2 s), with and
# without the 13-point checkpoint-interval scan; the step-time sweep from 8 to 100,000 GPUs
# (goal: under 1 s); the layout search on 1,024 GPUs, dense and mixture of experts (with expert
# parallelism in the search); and the process floor.
# Usage: perf/sim_process.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
[[ -x "$build/src/gpufleet" ]] || scripts/build.sh release >/dev/null
bin="taskset -c 0 $build/src/gpufleet"
mkdir -p perf/results
hyperfine --shell=none --warmup 3 --runs 20 --export-json perf/results/sim_process.json \
  -n "gpufleet --version (floor)" "$bin --version" \
  -n "sim goodput 16384 GPUs 30 d 1000 trials, no scan" \
     "$bin sim goodput examples/h100-16384gpu.yaml --days 30 --trials 1000 --scan 0" \
  -n "sim goodput 16384 GPUs 30 d 1000 trials + 13-point scan" \
     "$bin sim goodput examples/h100-16384gpu.yaml --days 30 --trials 1000" \
  -n "sim step --sweep gpus=8..100000 (1024-GPU example)" \
     "$bin sim step examples/h100-1024gpu.yaml --sweep gpus=8..100000" \
  -n "sim step --search on 1024 GPUs" "$bin sim step examples/h100-1024gpu.yaml --search" \
  -n "sim step --search, mixture of experts, 1024 GPUs" \
     "$bin sim step examples/h100-16gpu-moe.yaml --search --gpus 1024"
/usr/bin/python3 - <<'PY'
import json
for r in json.load(open("perf/results/sim_process.json"))["results"]:
    print(f"{r['command']:60s} median {r['median']*1e3:8.1f} ms")
PY
