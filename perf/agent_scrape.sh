#!/usr/bin/env bash
# `gpufleet agent` side by side with prometheus-node-exporter (the peer every node already runs),
# in one run on this machine: resident memory, and median and p99 /metrics latency over
# sequential scrapes sent the way Prometheus sends them (keep-alive, Accept-Encoding: gzip,
# the OpenMetrics-first Accept header), the two targets interleaved so both see the same noise.
# The agent serves 8 fake GPUs (the fake libnvidia-ml.so.1) and this node's /proc and /sys.
# Then a load test: wrk, 64 connections for 20 s against each, counting errors, and the agent's
# memory before and after. Usage: perf/agent_scrape.sh [BUILD_DIR] [SCRAPES]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
scrapes=${2:-1000}
[[ -x "$build/src/gpufleet" && -e "$build/tests/fakes/libnvidia-ml.so.1" ]] || scripts/build.sh release >/dev/null
for tool in prometheus-node-exporter wrk; do
  command -v "$tool" >/dev/null || { echo "perf: $tool missing (scripts/deps.sh installs it)" >&2; exit 3; }
done
mkdir -p perf/results
T=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$T"' EXIT
A=19411 N=19111
echo '{"gpus": 8, "name": "NVIDIA H100 80GB HBM3", "util": 97, "power_w": 660, "pids": [1]}' > "$T/gpus.json"
GPUFLEET_FAKE_NVML=$T/gpus.json LD_LIBRARY_PATH=$build/tests/fakes \
  "$build/src/gpufleet" agent examples/h100-8gpu-box.yaml --listen 127.0.0.1:$A --kmsg none \
  --interval 10 > "$T/agent.log" 2>&1 &
pids+=($!)
prometheus-node-exporter --web.listen-address=127.0.0.1:$N > "$T/node_exporter.log" 2>&1 &
pids+=($!)
for i in $(seq 100); do
  curl -sf "http://127.0.0.1:$A/healthz" >/dev/null && curl -sf "http://127.0.0.1:$N/metrics" >/dev/null && break
  sleep 0.1
done
/usr/bin/python3 - "$A" "$N" "${pids[0]}" "${pids[1]}" "$scrapes" <<'PY' | tee perf/results/agent_scrape.txt
import http.client, json, statistics, sys, time
a_port, n_port, a_pid, n_pid, n = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
headers = {"Accept": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
           "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
           "Accept-Encoding": "gzip", "User-Agent": "Prometheus/2.42.0"}
def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"): return int(line.split()[1]) / 1024
def scrape(conn):
    t = time.perf_counter(); conn.request("GET", "/metrics", headers=headers)
    r = conn.getresponse(); body = r.read(); dt = time.perf_counter() - t
    assert r.status == 200, r.status
    return dt, len(body), r.getheader("Content-Encoding")
conns = {"gpufleet agent": http.client.HTTPConnection("127.0.0.1", a_port),
         "node_exporter": http.client.HTTPConnection("127.0.0.1", n_port)}
pid = {"gpufleet agent": a_pid, "node_exporter": n_pid}
lat = {k: [] for k in conns}; size = {}
for k, c in conns.items():
    for _ in range(10): scrape(c)   # warm-up
for _ in range(n):
    for k, c in conns.items():
        dt, nbytes, enc = scrape(c); lat[k].append(dt); size[k] = (nbytes, enc)
res = {}
for k in conns:
    xs = sorted(lat[k]); res[k] = {"median_ms": statistics.median(xs) * 1e3,
        "p99_ms": xs[int(0.99 * len(xs)) - 1] * 1e3, "rss_mib": rss(pid[k]),
        "body_bytes": size[k][0], "encoding": size[k][1]}
print(f"{n} interleaved sequential scrapes each, Prometheus-style requests (gzip)")
print(f"{'':16s} {'median':>9s} {'p99':>9s} {'RSS':>9s} {'body':>10s}")
for k, r in res.items():
    print(f"{k:16s} {r['median_ms']:7.3f}ms {r['p99_ms']:7.3f}ms {r['rss_mib']:6.1f}MiB {r['body_bytes']:8d} B ({r['encoding']})")
g, e = res["gpufleet agent"], res["node_exporter"]
print(f"ratio agent/node_exporter: median {g['median_ms']/e['median_ms']:.2f}, p99 {g['p99_ms']/e['p99_ms']:.2f}, RSS {g['rss_mib']/e['rss_mib']:.2f}")
json.dump(res, open("perf/results/agent_scrape.json", "w"), indent=2)
PY
rss() { awk '/^VmRSS:/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
before=$(rss "${pids[0]}")
echo
echo "wrk -t2 -c64 -d20s against each (gzip):" | tee -a perf/results/agent_scrape.txt
for target in "gpufleet agent:$A:${pids[0]}" "node_exporter:$N:${pids[1]}"; do
  IFS=: read -r name port pid <<<"$target"
  out=$(wrk -t2 -c64 -d20s --timeout 5s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port/metrics")
  req=$(sed -n 's/^Requests\/sec: *//p' <<<"$out")
  errors=$(grep -E 'Socket errors|Non-2xx' <<<"$out" || true)
  printf '%-16s %8s req/s  p50 %s  errors: %s  RSS after %s MiB\n' "$name" "$req" \
    "$(awk '/Latency/ {print $2; exit}' <<<"$out")" "${errors:-none}" "$(rss "$pid")" | tee -a perf/results/agent_scrape.txt
done
echo "agent RSS before the load test ${before} MiB, after $(rss "${pids[0]}") MiB" | tee -a perf/results/agent_scrape.txt
