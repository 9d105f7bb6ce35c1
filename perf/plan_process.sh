#!/usr/bin/env bash
# Whole-process benchmark of `gpufleet plan` on the 16,384-GPU example (target: median under
# 50 ms), side by side in one hyperfine run with the process floor (`gpufleet --version`: exec,
# dynamic linking, CLI setup) and Debian's `/usr/bin/python3 -c pass` (the start-up cost of a Python planner,
# which is what the peer tools, e.g. DeepSpeed's estimators and llm-analysis, are).
# Usage: perf/plan_process.sh [BUILD_DIR]   (default build/release; builds it if missing)
# Prints hyperfine's table and writes perf/results/plan_process.json.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
if [[ ! -x "$build/src/gpufleet" ]]; then
  scripts/build.sh release >/dev/null
fi
bin="$build/src/gpufleet"
mkdir -p perf/results
hyperfine --shell=none --warmup 20 --runs 200 --export-json perf/results/plan_process.json \
  -n "gpufleet --version (process floor)" "$bin --version" \
  -n "python3 -c pass (Python start-up)" "/usr/bin/python3 -c pass" \
  -n "plan reference-32gpu" "$bin plan" \
  -n "plan h100-16384gpu text" "$bin plan examples/h100-16384gpu.yaml" \
  -n "plan h100-16384gpu json" "$bin plan --format json examples/h100-16384gpu.yaml"
/usr/bin/python3 - <<'PY'
import json
r = json.load(open("perf/results/plan_process.json"))["results"]
floor = r[0]["median"]
print()
print(f"{'command':40s} {'median':>10s} {'vs floor':>9s}")
for x in r:
    print(f"{x['command']:40s} {x['median']*1e3:8.2f} ms {x['median']/floor:8.2f}x")
target = [x for x in r if x["command"] == "plan h100-16384gpu text"][0]["median"]
print(f"\n16,384-GPU plan median {target*1e3:.2f} ms: {'meets' if target < 0.050 else 'MISSES'} the 50 ms target")
PY
