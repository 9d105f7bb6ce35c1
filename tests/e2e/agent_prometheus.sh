#!/bin/bash
# The agent under a real Prometheus (Debian's package): the agent serves 8 fake GPUs (the fake
# libnvidia-ml.so.1, an XID 79 injected on GPU 1); promtool accepts its /metrics; a second agent
# serves TLS with basic auth from a web-config file; Prometheus scrapes both with the emitted
# alerting rules loaded, and the series, the XID count and the XID alert are read back through
# its HTTP API; the DCGM recording rules answer every series NVIDIA's DCGM dashboard queries; then
# a GPU is made lost while everything runs and Prometheus sees it.
# usage: agent_prometheus.sh GPUFLEET_BINARY REPO_ROOT.  Skips (77) without Prometheus unless CI=true.
set -uo pipefail
BIN=$1 ROOT=$2
for tool in prometheus promtool curl openssl; do
  if ! command -v "$tool" >/dev/null; then
    if [ "${CI:-}" = true ]; then echo "FAIL: $tool is not installed (scripts/deps.sh installs it)"; exit 1; fi
    echo "SKIP: $tool is not installed (run scripts/deps.sh)"; exit 77
  fi
done
T=$(mktemp -d /tmp/gpufleet-prom.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; done
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$T"/*.log; do echo "--- $f"; tail -20 "$f"; done; exit 1; }
A=19401 S=19402 P=19490

cat > "$T/faults.json" <<'J'
{"gpus": 8, "name": "NVIDIA H100 80GB HBM3", "util": 97, "power_w": 660, "gpu": {"1": {"xid": [79]}}}
J
export GPUFLEET_FAKE_NVML=$T/faults.json
SPEC=$ROOT/tests/e2e/specs/h100-8gpu-no-rdma.yaml
"$BIN" agent "$SPEC" --listen 127.0.0.1:$A --interval 1 --check-interval 1 --kmsg none > "$T/agent.log" 2>&1 &
PIDS+=($!)
for i in $(seq 100); do curl -sf "http://127.0.0.1:$A/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$A/healthz" >/dev/null || fail "agent not healthy after 10 s"

# /metrics: the exposition Content-Type, and promtool's linter has nothing to say.
curl -sf -D "$T/headers" "http://127.0.0.1:$A/metrics" > "$T/metrics" || fail "GET /metrics"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$T/headers" || fail "Content-Type: $(grep -i content-type "$T/headers")"
promtool check metrics < "$T/metrics" > "$T/promtool.log" 2>&1 || fail "promtool check metrics"
curl -sf "http://127.0.0.1:$A/checks" > "$T/checks.json" || fail "GET /checks"
grep -q '"status": "fail"' "$T/checks.json" || fail "/checks does not report the XID"

# TLS and basic auth (exporter-toolkit web-config): a self-signed certificate, bcrypt("s3cret").
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 || fail "openssl req"
cat > "$T/web.yml" <<Y
tls_server_config:
  cert_file: $T/cert.pem
  key_file: $T/key.pem
basic_auth_users:
  prom: \$2b\$04\$9m61N.EeAx.kaFl84XDhJOPa0GeP3RvMlH8kcC41GytfGlGR0fbbm
Y
"$BIN" agent "$SPEC" --listen 127.0.0.1:$S --web.config.file "$T/web.yml" --interval 1 --kmsg none \
  > "$T/agent-tls.log" 2>&1 &
PIDS+=($!)
for i in $(seq 100); do
  curl -sf --cacert "$T/cert.pem" -u prom:s3cret -o /dev/null "https://127.0.0.1:$S/healthz" && break
  sleep 0.1
done
code=$(curl -s --cacert "$T/cert.pem" -o /dev/null -w '%{http_code}' "https://127.0.0.1:$S/metrics")
[ "$code" = 401 ] || fail "TLS without credentials: HTTP $code, want 401"
code=$(curl -s --cacert "$T/cert.pem" -u prom:wrong -o /dev/null -w '%{http_code}' "https://127.0.0.1:$S/metrics")
[ "$code" = 401 ] || fail "TLS with a wrong password: HTTP $code, want 401"
curl -sf --cacert "$T/cert.pem" -u prom:s3cret "https://127.0.0.1:$S/metrics" > "$T/tls-metrics" \
  || fail "TLS with credentials"
grep -q '^gpufleet_gpus 8$' "$T/tls-metrics" || fail "TLS metrics without the 8 GPUs"
curl -sf "http://127.0.0.1:$S/metrics" >/dev/null 2>&1 && fail "plain HTTP answered on the TLS port"

# Prometheus with the emitted rules, scraping both agents.
"$BIN" emit prometheus-rules "$SPEC" -o "$T/rules.yml" || fail "emit prometheus-rules"
"$BIN" emit dcgm-rules "$SPEC" -o "$T/dcgm-rules.yml" || fail "emit dcgm-rules"
promtool check rules "$T/dcgm-rules.yml" > "$T/promtool-dcgm.log" 2>&1 || fail "promtool check rules (dcgm)"
cat > "$T/prometheus.yml" <<Y
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$T/rules.yml", "$T/dcgm-rules.yml"]
scrape_configs:
  - job_name: gpufleet
    static_configs: [{targets: ["127.0.0.1:$A"]}]
  - job_name: gpufleet-tls
    scheme: https
    tls_config: {ca_file: "$T/cert.pem"}
    basic_auth: {username: prom, password: s3cret}
    static_configs: [{targets: ["127.0.0.1:$S"]}]
Y
promtool check config "$T/prometheus.yml" > "$T/promtool-config.log" 2>&1 || fail "promtool check config"
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
  --web.listen-address="127.0.0.1:$P" > "$T/prometheus.log" 2>&1 &
PIDS+=($!)
q() { curl -s "http://127.0.0.1:$P/api/v1/query" --data-urlencode "query=$1"; }
value() { q "$1" | sed -n 's/.*"value":\[[0-9.]*,"\([^"]*\)"\].*/\1/p'; }
wait_for() {  # wait_for WHAT EXPR WANT: up to 40 s for the first sample (Prometheus applies targets every 5 s)
  for i in $(seq 200); do [ "$(value "$2")" = "$3" ] && return 0; sleep 0.2; done
  fail "$1: $2 = '$(value "$2")', want $3"
}
wait_for "8 GPUs scraped" 'count(gpufleet_gpu_up{job="gpufleet"} == 1)' 8
wait_for "XID 79 on GPU 1" 'gpufleet_gpu_xid_errors_total{job="gpufleet",gpu="1",xid="79"}' 1
wait_for "TLS agent scraped" 'up{job="gpufleet-tls"}' 1
wait_for "XID alert firing" 'count(ALERTS{alertname="GpufleetXidDrain",alertstate="firing",job="gpufleet",gpu="1"})' 1

# NVIDIA's DCGM dashboard works unchanged: every series it queries (read from the dashboard's
# JSON) answers for the 8 GPUs under the DCGM exporter's name and labels, through the recording
# rules; the profiling ones come from NVML GPM (the agent's second collection on).
DASH=$ROOT/../shared/fixtures/dcgm/dcgm-exporter-dashboard.json
if [ -f "$DASH" ]; then
  names=$(python3 -c '
import json, re, sys
text = json.dumps(json.load(open(sys.argv[1])))
print(" ".join(sorted(set(re.findall(r"DCGM_FI_[A-Z0-9_]+", text)))))' "$DASH")
  [ -n "$names" ] || fail "no DCGM series in $DASH"
  for n in $names; do
    wait_for "DCGM dashboard series $n" "count($n{job=\"gpufleet\",gpu=~\"[0-7]\",instance=\"127.0.0.1:$A\"})" 8
  done
  wait_for "DCGM labels" "count(DCGM_FI_DEV_GPU_TEMP{job=\"gpufleet\",gpu=\"1\",device=\"nvidia1\",UUID=\"GPU-fa4e0000-0000-4000-8000-000000000001\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"127.0.0.1\"})" 1
  wait_for "DCGM XID" "DCGM_FI_DEV_XID_ERRORS{job=\"gpufleet\",gpu=\"1\"}" 79
  wait_for "DCGM tensor activity" "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{job=\"gpufleet\",gpu=\"0\"}" 0.46
  wait_for "DCGM memory used (MiB)" "DCGM_FI_DEV_FB_USED{job=\"gpufleet\",gpu=\"0\"}" 62976
  echo "DCGM dashboard series answered: $names"
elif [ "${CI:-}" = true ]; then
  fail "$DASH is missing (../shared/fixtures)"
else
  echo "SKIP (part): $DASH is missing"
fi

# A GPU falls off the bus while everything runs.
sed -i 's/"1": {"xid": \[79\]}/"1": {"xid": [79]}, "3": {"lost": true}/' "$T/faults.json"
wait_for "GPU 3 lost" 'gpufleet_gpu_lost{job="gpufleet",gpu="3"}' 1
wait_for "gpu-count check failing" 'gpufleet_check_status{job="gpufleet",check="gpu-count"}' 2
echo "ok: promtool accepts /metrics; TLS + basic auth; Prometheus reads GPUs, the XID and its alert, and a GPU lost at run time"
