#!/bin/bash
# Hostile local inputs (issue 17): every file, flag and value that used to abort, hang, read
# without bound or give a wrong verdict, each now a one-line error with exit 2, or handled and
# said. Every case is bounded in time (timeout) and every JSON output must parse as UTF-8.
# usage: hostile_inputs.sh GPUFLEET_BINARY REPO_ROOT
set -uo pipefail
BIN=$1 ROOT=$2
D=$(mktemp -d /tmp/gpufleet-hostile.XXXXXX)
trap 'rm -rf "$D"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect EXIT REGEX -- COMMAND...: exit code and one stderr line matching REGEX, within 20 s.
expect() {
  local want=$1 re=$2
  shift 3
  timeout 20 "$@" > "$D/out" 2> "$D/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "$* exited $got, want $want: $(head -c 300 "$D/err")"
  elif [ -n "$re" ] && ! grep -Eq "$re" "$D/err"; then
    fail "$*: stderr '$(head -c 300 "$D/err")' does not match '$re'"
  elif [ "$want" = 2 ] && [ "$(wc -l < "$D/err")" != 1 ]; then
    fail "$*: want one line on stderr, got $(wc -l < "$D/err")"
  fi
}
valid_json() {  # FILE WHAT
  python3 -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$1" \
    2> "$D/json-err" || fail "$2: not valid UTF-8 JSON: $(head -c 200 "$D/json-err")"
}

# --- Flags: NaN, infinities and overflows -----------------------------------------------------
expect 2 '^gpufleet: --gpu-timeout 3000000: want 0.001 to 3600 seconds$' -- "$BIN" check --gpu-timeout 3000000
expect 2 '^gpufleet: --disk-full: want a finite number' -- "$BIN" check --disk-full nan
expect 2 '^gpufleet: --xid-window: want a finite number' -- "$BIN" check --xid-window inf
expect 2 '^gpufleet: --interval: want a finite number' -- "$BIN" agent --interval nan --no-nvml
expect 2 '^gpufleet: --days: want a finite number' -- "$BIN" sim goodput --days nan
expect 2 '^gpufleet: --scan: .*not in range 0 to 200' -- "$BIN" sim goodput --scan 1000000000
expect 2 '^gpufleet: --gpus: .*not in range 1 to 10000000' -- "$BIN" sim step --search --gpus 2147483647
expect 2 '^gpufleet: --timeout: want a finite number' -- "$BIN" bench collective --timeout nan
# --- Spec values that passed validation and overflowed later ------------------------------------
expect 2 'nodes.count: 100000000 is out of range; use a whole number from 1 to 1000000' -- "$BIN" plan --set nodes.count=100000000
expect 2 "costs.capex_usd: '1e308' is out of range" -- "$BIN" plan --set costs.capex_usd=1e308
expect 2 'workload.parallel: tensor 1000000 x pipeline 1000000 x context 1 is more than the 32 GPUs' -- \
  "$BIN" plan --set workload.parallel.tensor=1000000 --set workload.parallel.pipeline=1000000

# --- Files that are not files -------------------------------------------------------------------
expect 2 '^gpufleet: /dev/zero: is a character device, expected a cluster spec' -- "$BIN" plan /dev/zero
mkfifo "$D/fifo"
expect 2 "^gpufleet: $D/fifo: is a FIFO, expected a cluster spec" -- "$BIN" plan "$D/fifo"
expect 2 "is a FIFO, expected an NCCL topology file" -- "$BIN" topo lint "$D/fifo"
expect 2 '^gpufleet: --kmsg /dev/zero: not the kernel log' -- "$BIN" check --kmsg /dev/zero
head -c $((65 << 20)) /dev/zero | tr '\0' 'a' > "$D/huge.yaml"
expect 2 "huge.yaml: 68157440 bytes, more than the 67108864 bytes an input may have" -- "$BIN" plan "$D/huge.yaml"
rm -f "$D/huge.yaml"

# --- The kernel log: an overflowing XID, an endless line ----------------------------------------
# (stamped with the uptime now, so the XID is inside the check's window)
up=$(cut -d' ' -f1 /proc/uptime)
printf '[%s] NVRM: Xid (PCI:0000:3b:00): 4294967375, pid=1, GPU has fallen off the bus.\n' "$up" > "$D/kmsg"
expect 0 '' -- "$BIN" check --no-nvml --kmsg "$D/kmsg" --disk-window 0 --format json
grep -q '"XID 79' "$D/out" && fail "XID 4294967375 read as XID 79"
python3 -c 'import sys; sys.stdout.write("x" * (200 << 20) + "\n[" + sys.argv[1] + "] NVRM: Xid (PCI:0000:3b:00): 48, pid=1\n")' "$up" > "$D/kmsg-long"
start=$(date +%s)
expect 1 '' -- "$BIN" check --no-nvml --kmsg "$D/kmsg-long" --disk-window 0
grep -Eq '^fail +xid +GPU 0000:3b:00.0: XID 48' "$D/out" || fail "the XID after a 200 MB line was not read: $(head -5 "$D/out")"
[ $(( $(date +%s) - start )) -lt 15 ] || fail "a 200 MB kernel-log line took $(( $(date +%s) - start )) s"
rm -f "$D/kmsg-long"

# --- Captures: symlinks that escape, FIFOs ------------------------------------------------------
C=$D/capture
cp -r "$ROOT/tests/e2e/check/ib-up" "$C"
mkdir -p "$C/sys/class/infiniband/mlx5_9/ports/1" "$C/proc/sys/kernel/random"
ln -s /etc/passwd "$C/sys/class/infiniband/mlx5_9/ports/1/state"
ln -s ../../../../../../../../../../../../etc/shadow "$C/sys/class/infiniband/mlx5_9/ports/1/rate"
mkfifo "$C/proc/sys/kernel/random/boot_id"
expect 0 '' -- "$BIN" agent --once --root "$C" --no-nvml --kmsg none --spec "$ROOT/examples/reference-32gpu.yaml"
grep -q 'root:' "$D/out" && fail "a capture's symlink read the host's /etc/passwd into /metrics"
grep -q 'hca="mlx5_9"' "$D/out" || fail "the capture's planted HCA was not read at all: $(grep -c infiniband "$D/out")"
expect 0 '' -- "$BIN" check --spec "$ROOT/examples/reference-32gpu.yaml" --set nodes.count=1 \
  --set nodes.gpu.count=2 --set "nodes.nics[0].count=1" --set "nodes.nics[0].ports=1" --root "$C" \
  --slurm --node none-such
# (no Slurm here: the Slurm line says so; the FIFO boot id is refused, not read forever)

# A capture whose topology JSON has a hex field that is not hex (std::stoul threw past the
# JSON reader's error handling and aborted; found by fuzz_capture_json).
mkdir -p "$D/badcap"
sed 's/"vendor": "0x[0-9a-f]*"/"vendor": "zz"/' "$ROOT/tests/e2e/check/ib-up/gpufleet-topology.json" > "$D/badcap/gpufleet-topology.json"
expect 2 'gpufleet-topology.json: .*not a hex number: zz' -- "$BIN" topo show --root "$D/badcap"

# --- Invalid UTF-8 in names: every JSON output stays valid --------------------------------------
printf 'name: "box\xff\xfe"\n' > "$D/name.yaml"
sed -n '/^nodes:/,$p' "$ROOT/examples/h100-8gpu-box.yaml" >> "$D/name.yaml"
expect 0 '' -- "$BIN" plan "$D/name.yaml" --format json
valid_json "$D/out" "plan --format json"
expect 0 '' -- "$BIN" sim step "$D/name.yaml" --format json
valid_json "$D/out" "sim step --format json"
expect 0 '' -- "$BIN" emit grafana "$D/name.yaml"
valid_json "$D/out" "emit grafana"
printf '<system version="1">\n  <cpu numaid="0" affinity="ff" arch="x86_64" vendor="Gen\xffuine">\n    <pci busid="0000:17:00.0" class="0x030000" vendor="0x10de" device="0x20b2" link_speed="16.0 GT/s PCIe" link_width="16">\n      <gpu dev="0" sm="80" rank="0" gdr="1" name="\xc3\x28"/>\n    </pci>\n  </cpu>\n</system>\n' > "$D/topo.xml"
timeout 20 "$BIN" topo lint "$D/topo.xml" --format json > "$D/out" 2> "$D/err"
[ $? -le 1 ] || fail "topo lint on invalid UTF-8: exit $?: $(cat "$D/err")"
valid_json "$D/out" "topo lint --format json"
printf '\tGPU0\tNIC0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tSYS\t0-7\t0\nNIC0\tSYS\t X \t\t\n\nNIC Legend:\n\n  NIC0: mlx5_\xff0\n' > "$D/smi.txt"
timeout 20 "$BIN" topo matrix --parse "$D/smi.txt" --format json > "$D/out" 2> "$D/err"
[ $? -le 1 ] || fail "topo matrix --parse on invalid UTF-8: $(cat "$D/err")"
valid_json "$D/out" "topo matrix --parse --format json"
mkdir -p "$D/disk-$(printf '\xff')"
expect 0 '' -- "$BIN" check --no-nvml --kmsg none --disk-window 0 --disk "$D/disk-$(printf '\xff')" --format json
valid_json "$D/out" "check --format json"

# --- A serving agent: bad bench files and a bad disk name do not abort it ------------------------
B=$D/bench
mkdir -p "$B"
printf '{"schema":"gpufleet.bench/v1","kind":"collective","time":"yesterday","results":[]}' > "$B/a.json"
printf '{"schema":"gpufleet.bench/v1","kind":5,"time":1}' > "$B/b.json"
printf '{"schema":"gpufleet.bench/v1","kind":"collective","time":1,"results":[{"op":"all_reduce","bytes":"1 MiB"}]}' > "$B/c.json"
printf '{"schema":"gpufleet.bench/v1","kind":"collective","time":2,"results":[{"op":"all_reduce","bytes":1048576,"busbw_bytes_per_s":1e10}]}' > "$B/d.json"
"$BIN" agent --spec "$ROOT/tests/e2e/specs/h100-8gpu-no-rdma.yaml" --no-nvml --kmsg none \
  --listen 127.0.0.1:0 --bench-dir "$B" --disk "$D/disk-$(printf '\xff')" --interval 0.2 \
  --check-interval 0.2 > "$D/agent.log" 2>&1 &
agent=$!
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$D/agent.log")
  [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/healthz" > /dev/null 2>&1 && break
  sleep 0.1
done
sleep 1
curl -sf "http://127.0.0.1:$port/metrics" > "$D/metrics" || fail "agent /metrics"
curl -sf "http://127.0.0.1:$port/checks" > "$D/checks" || fail "agent /checks"
valid_json "$D/checks" "agent /checks"
grep -q '^gpufleet_bench_unreadable_files 3$' "$D/metrics" || fail "bad bench files not counted: $(grep unreadable "$D/metrics")"
grep -q 'gpufleet_bench_file_error_info{file="a.json",error="time: want a number"} 1' "$D/metrics" ||
  fail "a.json's error not named"
grep -q '^gpufleet_bench_busbw_bytes_per_second{kind="collective",op="all_reduce",bytes="1048576"} 10000000000$' "$D/metrics" ||
  fail "the good bench file was not exported"
if command -v promtool > /dev/null; then
  promtool check metrics < "$D/metrics" > "$D/promtool" 2>&1 || fail "promtool: $(cat "$D/promtool")"
fi
kill -0 $agent 2>/dev/null || fail "the agent died: $(tail -3 "$D/agent.log")"
kill $agent
wait $agent 2>/dev/null

# --- libhwloc: a PCI-to-PCI bridge with no (or a non-PCI) downstream type above a device --------
# hwloc 2.9's XML import keeps any bridge_type (its own FIXME) and lstopo then aborts on an
# assertion (traversal.c:540); gpufleet reads the bridge and its NIC and does not crash.
cat > "$D/bridge.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" allowed_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001" gp_index="1">
    <object type="NUMANode" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2" local_memory="1000"/>
    <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3"/>
    <object type="Bridge" gp_index="4" bridge_type="0-1" depth="0" bridge_pci="0000:[00-0f]">
      <object type="Bridge" gp_index="5" depth="1" bridge_pci="0000:[04-04]" pci_busid="0000:00:01.0" pci_type="0604 [8086:3408] [0000:0000] 13">
        <object type="PCIDev" gp_index="6" pci_busid="0000:04:00.0" pci_type="0200 [8086:10c9] [003c:003f] 01"/>
      </object>
    </object>
  </object>
</topology>
XML
expect 0 '' -- "$BIN" topo show --hwloc-xml "$D/bridge.xml" --no-nvml --format json
valid_json "$D/out" "topo show of a bridge without bridge_type"
grep -q '"04:00.0"\|0000:04:00.0' "$D/out" || fail "the NIC under the typeless bridge is missing"
sed -i 's/depth="1" bridge_pci/bridge_type="1-9" depth="1" bridge_pci/' "$D/bridge.xml"
expect 0 '' -- "$BIN" topo matrix --hwloc-xml "$D/bridge.xml" --no-nvml

# --- web-config values of the wrong shape --------------------------------------------------------
printf 'basic_auth_users: 5\n' > "$D/web.yml"
expect 2 'basic_auth_users: want a mapping of user names to bcrypt hashes' -- "$BIN" agent --no-nvml --web.config.file "$D/web.yml"
printf 'tls_server_config:\n  cert_file: [a]\n  key_file: k\n' > "$D/web.yml"
expect 2 'tls_server_config.cert_file: want a string, got a list' -- "$BIN" agent --no-nvml --web.config.file "$D/web.yml"

if [ $failures != 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "ok: every hostile input is a one-line error or handled, and every JSON output is valid UTF-8"
