#!/usr/bin/env bash
# Whole-process speed of `gpufleet topo` side by side with hwloc's own lstopo (the peer tool) in one
# hyperfine run: reading the DGX-2 hwloc XML, and the live node; plus `topo lint` on the largest
# vendor NCCL file. Needs ../shared/fixtures. Usage: perf/topo_process.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
[[ -x "$build/src/gpufleet" ]] || scripts/build.sh release >/dev/null
bin="$build/src/gpufleet"
fx=../shared/fixtures
mkdir -p perf/results
hyperfine --shell=none --warmup 10 --runs 100 --export-json perf/results/topo_process.json \
  -n "lstopo DGX-2 XML (console)" "lstopo-no-graphics --input $fx/hwloc/nvidiaDGX2.xml --of console" \
  -n "gpufleet topo show DGX-2 XML" "$bin topo show --no-nvml --hwloc-xml $fx/hwloc/nvidiaDGX2.xml" \
  -n "gpufleet topo nccl-xml DGX-2 XML" "$bin topo nccl-xml --hwloc-xml $fx/hwloc/nvidiaDGX2.xml" \
  -n "lstopo live (console)" "lstopo-no-graphics --of console" \
  -n "gpufleet topo show live" "$bin topo show --no-nvml" \
  -n "gpufleet topo lint OCI H100 file" "$bin topo lint $fx/nccl-topo/oracle-oci-bm.gpu.h100.8-broadcom-pex-topo.xml"
/usr/bin/python3 - <<'PY'
import json
r = {x["command"]: x["median"] for x in json.load(open("perf/results/topo_process.json"))["results"]}
print()
for k, v in r.items():
    print(f"{k:40s} {v*1e3:8.2f} ms")
print(f"\ntopo show / lstopo on the DGX-2 XML: {r['gpufleet topo show DGX-2 XML']/r['lstopo DGX-2 XML (console)']:.2f}x")
print(f"topo show / lstopo on the live node: {r['gpufleet topo show live']/r['lstopo live (console)']:.2f}x")
PY
