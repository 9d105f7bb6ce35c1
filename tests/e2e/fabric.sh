#!/bin/bash
# Rack-scale NVLink on one GB200 NVL72 compute tray, through the fake libnvidia-ml.so.1's gb200
# profile: `topo show` prints each GPU's fabric state and clique; `check` fails the GPU whose
# fabric reports degraded bandwidth and the one with 17 of 18 NVLinks, naming them, and judges
# the IMEX daemon (a stand-in process named nvidia-imex listening on loopback, its config and
# node list in a scratch folder); `agent --once` exports the fabric series and promtool accepts
# them. usage: fabric.sh GPUFLEET_BINARY FAKE_NVML_DIR.  Skips (77) without promtool unless CI=true.
set -uo pipefail
BIN=$1 FAKE=$2
for tool in promtool python3; do
  if ! command -v "$tool" >/dev/null; then
    if [ "${CI:-}" = true ]; then echo "FAIL: $tool is not installed (scripts/deps.sh installs it)"; exit 1; fi
    echo "SKIP: $tool is not installed (run scripts/deps.sh)"; exit 77
  fi
done
T=$(mktemp -d /tmp/gpufleet-fabric.XXXXXX)
DAEMON=
cleanup() {
  [ -n "$DAEMON" ] && kill "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "FAIL: $*"; exit 1; }
export LD_LIBRARY_PATH=$FAKE GPUFLEET_FAKE_NVML=$T/faults.json

# Healthy tray first.
echo '{"profile": "gb200"}' > "$T/faults.json"
"$BIN" topo show > "$T/show" 2>&1 || fail "topo show: $(cat "$T/show")"
grep -Eq '^  GPU3 .*18/18 active +5\.0 +53\.1 GB/s +10 x 45\.0 GB/s +completed +8c4f2a9e-51d7-4b3a-9e0c-6a1d2b3c4d5e +32766 +ok$' "$T/show" ||
  fail "topo show has no fabric row for GPU3: $(cat "$T/show")"
"$BIN" topo show --format json > "$T/show.json" || fail "topo show --format json"
python3 - "$T/show.json" <<'P' || fail "topo show JSON's fabric"
import json, sys
f = json.load(open(sys.argv[1]))["fabric"]
assert len(f) == 4 and all(g["clique"] == 32766 and g["state"] == "completed" for g in f), f
assert f[0]["links_active"] == 18 and f[0]["link_bytes_per_s"] == 53125e6, f[0]
P

# The IMEX daemon: a process named nvidia-imex on a loopback port, the node list naming it.
mkdir -p "$T/bin" "$T/imex"
cat > "$T/bin/nvidia-imex" <<'P'
#!/usr/bin/python3
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.3", 0))  # a peer: loopback, but not one of this host's interface addresses
s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(0.2)
end = time.time() + 120
while time.time() < end:
    try:
        s.accept()[0].close()
    except socket.timeout:
        pass
P
chmod +x "$T/bin/nvidia-imex"
"$T/bin/nvidia-imex" "$T/port" &
DAEMON=$!
for i in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
[ -s "$T/port" ] || fail "the stand-in IMEX daemon did not start"
printf 'SERVER_PORT=%s\nIMEX_NODE_CONFIG_FILE=%s\n' "$(cat "$T/port")" "$T/imex/nodes_config.cfg" > "$T/imex/config.cfg"
printf '127.0.0.1\n127.0.0.3\n' > "$T/imex/nodes_config.cfg"  # this node and the peer
CHECK=(check --disk-window 0 --kmsg none --imex-config "$T/imex/config.cfg")
"$BIN" "${CHECK[@]}" > "$T/check" 2>&1 || fail "a healthy tray fails: $(cat "$T/check")"
grep -q '^pass    imex            node: ok$' "$T/check" || fail "imex: $(cat "$T/check")"
grep -q '^pass    fabric          node: ok$' "$T/check" || fail "fabric: $(cat "$T/check")"

# Faults: GPU1's fabric reports degraded bandwidth, GPU2 has 17 NVLinks, GPU3 is in another
# clique; the IMEX node list lacks this node.
cat > "$T/faults.json" <<'J'
{"profile": "gb200", "gpu": {"1": {"fabric_health_mask": 425}, "2": {"nvlink_down": [11]},
 "3": {"fabric_clique": 9}}}
J
echo 127.0.0.2 > "$T/imex/nodes_config.cfg"
"$BIN" "${CHECK[@]}" > "$T/check" 2>&1
rc=$?
[ $rc = 1 ] || fail "exit $rc, want 1: $(cat "$T/check")"
for want in \
  '^fail    fabric          GPU1: fabric health: degraded bandwidth \(health mask 0x1a9, clique 32766\) \[drain\]$' \
  '^fail    fabric          GPU2: 17 of 18 NVLinks active \(link 11 down\)' \
  '^fail    fabric          GPU3: in NVLink domain 8c4f2a9e-51d7-4b3a-9e0c-6a1d2b3c4d5e clique 9, the node.s other GPUs in .* clique 32766' \
  '^fail    imex            /.*/nodes_config.cfg: none of this node.s addresses is among its 1 node' \
  '^fail    imex            nvidia-imex: 1 of 1 IMEX peer\(s\) do not answer on port [0-9]+: 127\.0\.0\.2:[0-9]+ \(Connection refused\) \[drain\]$' \
  '^node .*: fail$'; do
  grep -Eq "$want" "$T/check" || fail "no line /$want/ in: $(cat "$T/check")"
done

# The agent's series, and promtool's linter.
"$BIN" agent --once --kmsg none --imex-config "$T/imex/config.cfg" > "$T/metrics" 2> "$T/agent.err" ||
  fail "agent --once: $(cat "$T/agent.err")"
for want in \
  '^gpufleet_gpu_fabric_info\{gpu="3",.*cluster_uuid="8c4f2a9e-51d7-4b3a-9e0c-6a1d2b3c4d5e",clique_id="9"\} 1$' \
  '^gpufleet_gpu_fabric_state\{gpu="0",.*\} 3$' \
  '^gpufleet_gpu_fabric_healthy\{gpu="1",.*\} 0$' \
  '^gpufleet_gpu_nvlink_up\{gpu="2",.*link="11"\} 0$' \
  '^gpufleet_gpu_nvlink_speed_bytes_per_second\{gpu="0",[^}]*\} 53125000000$' \
  '^gpufleet_check_status\{check="fabric"\} 2$'; do
  grep -Eq "$want" "$T/metrics" || fail "no series /$want/"
done
promtool check metrics < "$T/metrics" > "$T/promtool" 2>&1 || fail "promtool: $(cat "$T/promtool")"
echo "ok: topo show, fabric and imex checks, agent series on a fake GB200 tray"
