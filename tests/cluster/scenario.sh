#!/bin/bash
# The scenario on the cluster in a box (cluster.sh up DIR first): gpufleet run as one system the
# way a site runs it. Each step leaves the cluster as it found it (also when it fails), so steps
# run alone or in any order; CI runs each as its own ctest.
#   prometheus  Prometheus scrapes every agent through the emitted config; a healthy cluster
#               fires no alert, not even a pending one
#   sbatch      the emitted sbatch, submitted by a job user with real sbatch: the prolog checks
#               every node against the spec, then gpufleet bench collective runs over MPI across
#               the nodes (srun --mpi=pmix, TCP between the namespaces) with zero wrong elements,
#               and the result is exported by the first node's agent; the training variant's
#               steps get the spec's CPUs; every --time form and a partition list reach Slurm
#   prolog      a fault the health check has not seen yet stops the job in its prolog, naming
#               the node, before any rank runs
#   fault       XID 48 with uncorrectable ECC and a pending row remap on one node: Slurm's
#               health check drains exactly that node with a gpufleet: reason, a job runs on the
#               others, the alert fires in Prometheus and reaches Alertmanager, healthy nodes
#               fire none; clearing the fault resumes the node; an admin's drain is never touched
#   reboot      XID 79 drains with the boot id; the fault clearing does not resume the node; a
#               reboot (a new boot id) does
#   pairs       one path rate-limited with tc is named a slow link, a node whose every link is
#               limited a slow node, and no pair below the floor is left out of the verdicts
#   tls         the agents switch to TLS with basic auth, Prometheus to the matching emitted
#               config: every target up over https; no credentials, no metrics
# usage: scenario.sh DIR [STEP...]    (all steps in the order above when none is given)
set -uo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
C=$HERE/cluster.sh
D=$(cd "${1:?usage: scenario.sh DIR [STEP...]}" && pwd) || exit 1
shift
[ -f "$D/cluster.env" ] || { echo "FAIL: no cluster in $D (cluster.sh up $D)"; exit 1; }
# shellcheck disable=SC1091
. "$D/cluster.env"
FIRST=${NODES%% *}
read -r -a NODE_LIST <<< "$NODES"

X() { "$C" exec "$D" "$@"; }                  # X NODE CMD...: run in a node, as root
H() { "$C" exec "$D" head "$@"; }             # in the head node
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
CLEANUP=()
cleanup() { for c in "${CLEANUP[@]}"; do eval "$c" >/dev/null 2>&1 || true; done; CLEANUP=(); }
fail() {
  echo "FAIL: $*"
  echo "--- sinfo"; H sinfo -N -p gpu -o "%N %T %E" 2>&1
  for f in "$D"/head/run/slurm/slurmctld.log "$D"/gpu*/run/slurm/slurmd.log \
      "$D"/gpu*/run/gpufleet/agent.log "$D"/head/run/prometheus/*.log; do
    [ -f "$f" ] && { echo "--- $f"; tail -n 8 "$f"; }
  done
  cleanup
  exit 1
}
ok() { echo "ok: $*"; }

state() { H sinfo -h -p gpu -n "$1" -o %T 2>/dev/null; }
reason() { H scontrol show node -o "$1" | sed -n 's/.* Reason=//p' | sed 's/ \[[^]]*\] *$//'; }
wait_state() {  # NODE REGEX SECONDS
  local end=$(($(date +%s) + $3))
  while [ "$(date +%s)" -le "$end" ]; do
    [[ "$(state "$1")" =~ ^($2)$ ]] && return 0
    sleep 0.2
  done
  return 1
}
# Prometheus' instant query: the single value of EXPR, or "" when empty.
pq() {
  H curl -s "http://localhost:9090/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
wait_pq() {  # WHAT EXPR WANT SECONDS
  local end=$(($(date +%s) + ${4:-40})) got=""
  while [ "$(date +%s)" -le "$end" ]; do
    got=$(pq "$2")
    [ "$got" = "$3" ] && return 0
    sleep 0.5
  done
  fail "$1: $2 = '$got', want '$3'"
}
# The job user's environment: the fake NVML's library and each node's fault file (the same path
# on every node, a different file), MPI's TCP on the namespaces' eth0, results where the agents
# read them.
JOB_ENV=(LD_LIBRARY_PATH="$FAKE_NVML_DIR" GPUFLEET_FAKE_NVML=/run/gpufleet/fake-nvml.json
  OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_mpi_yield_when_idle=1
  GPUFLEET_BENCH_DIR=/run/gpufleet/bench PATH="$(dirname "$BIN"):/usr/bin:/bin"
  ASAN_OPTIONS=detect_leaks=0)  # OpenMPI's own leaks, in the sanitizer build (bench_mpi.sh)
as_alice() { H runuser -u alice -- env -C "$D/shared" "${JOB_ENV[@]}" "$@"; }
submit() {  # submit SBATCH_ARGS... -> job id
  as_alice sbatch --parsable "$@" | cut -d';' -f1
}
wait_job() {  # JOB SECONDS -> prints the final state
  local end=$(($(date +%s) + $2)) s
  while [ "$(date +%s)" -le "$end" ]; do
    [ -z "$(H squeue -h -j "$1" 2>/dev/null)" ] && break
    sleep 0.3
  done
  s=$(H scontrol show job "$1" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
  echo "${s:-UNKNOWN}"
}
# Open MPI 4.1 launched by srun sometimes segfaults inside MPI_Init: a fragment for ob1's MATCH tag
# (0x41) arrives before ob1 registered its callback (core dump in the box: a call through a null
# pointer from mca_btl_tcp.so under ompi_mpi_init; upstream open-mpi/ompi#12495, open). About 1
# launch in 40 here. gpufleet-bench names any fatal signal after MPI_Init in a line of its own
# ("gpufleet-bench: rank R on HOST: fatal signal N"), so an Open MPI crash report without that
# line, and no result, is this crash: such a job is submitted again, up to OMPI_INIT_TRIES launches
# in all, and the output says so. The crashes are not independent: the first two launches of a
# fresh box crashed one after the other in one CI run (the later launches of that run did not), so
# one retry was not enough. Any other failure, a crash of ours, or a crash on the last try fails
# the step. Under AddressSanitizer
# (the asan preset runs this scenario too) ASan's handler reports the same crash instead of Open
# MPI's: "SEGV on unknown address 0x000000000000 (pc 0x000000000000" (the null call) with no
# frame to unwind (seen once in CI).
OMPI_INIT_TRIES=3
ompi_init_crash() {  # LOG RESULT_FILE
  [ ! -s "$2" ] && ! grep -q '^gpufleet-bench: rank .*: fatal signal' "$1" &&
    { grep -q '\*\*\* Process received signal \*\*\*' "$1" ||
      grep -q 'AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x000000000000' "$1"; }
}
submit_retry() {  # RESULT_FILE_PATTERN SECONDS SBATCH_ARGS... -> "JOB STATE"
  local pattern=$1 secs=$2 job st try
  shift 2
  for ((try = 1; try <= OMPI_INIT_TRIES; try++)); do
    job=$(submit "$@") || return 1
    st=$(wait_job "$job" "$secs")
    if [ "$st" != COMPLETED ] && [ $try -lt $OMPI_INIT_TRIES ] &&
        ompi_init_crash "$D/shared/box-$job.out" "${pattern//JOB/$job}"; then
      echo "note: job $job: Open MPI crashed in MPI_Init (open-mpi/ompi#12495); submitting again" >&2
      continue
    fi
    break
  done
  echo "$job $st"
}
job_nodes() { H scontrol show job "$1" | sed -n 's/^ *NodeList=\(.*\)/\1/p' | head -n 1; }
emit_sbatch() {  # OUTPUT EMIT_ARGS...
  local out=$1; shift
  "$BIN" emit sbatch "$D/etc/cluster.yaml" --set "nodes.count=$N" --node-spec /etc/gpufleet/cluster.yaml \
    --gpufleet "$BIN" "$@" -o "$out" || fail "emit sbatch $*"
  chmod 644 "$out"
}

step_prometheus() {
  local t; t=$(now)
  wait_pq "every agent up through the emitted scrape config" 'count(up{job="gpufleet"} == 1)' "$N" 60
  wait_pq "GPUs of every node scraped" 'count(gpufleet_gpu_up == 1)' "$((N * 2))" 30
  ok "Prometheus scrapes all $N agents (up == 1) through the emitted config after $(since "$t") s"
  X "$FIRST" curl -sf http://localhost:9401/metrics > "$D/shared/metrics.txt" || fail "GET /metrics"
  promtool check metrics < "$D/shared/metrics.txt" > "$D/shared/promtool.txt" 2>&1 ||
    { cat "$D/shared/promtool.txt"; fail "promtool check metrics on $FIRST's agent"; }
  # A healthy cluster: no alert at all, firing or pending, after several evaluations.
  sleep 5
  local alerts; alerts=$(H curl -s http://localhost:9090/api/v1/alerts)
  echo "$alerts" | python3 -c 'import json,sys; a=json.load(sys.stdin)["data"]["alerts"]; sys.exit(1 if a else 0)' ||
    fail "a healthy cluster has alerts: $alerts"
  ok "promtool accepts the agent's /metrics; a healthy cluster fires no alert (nor a pending one)"
}

step_sbatch() {
  # The acceptance job: emitted with --bench, submitted by a job user.
  emit_sbatch "$D/shared/bench.sbatch" --bench --time 10 --partition gpu,gpu-long
  grep -q '^#SBATCH --time=10$' "$D/shared/bench.sbatch" || fail "--time not in the script"
  local t job st; t=$(now)
  read -r job st < <(submit_retry "$D/$FIRST/run/gpufleet/bench/collective-JOB.json" 240 \
    --export=ALL,GPUFLEET_BENCH_ARGS="all -b 1K -e 256K -f 4 -w 1 -n 3" "$D/shared/bench.sbatch")
  [ -n "$job" ] || fail "sbatch refused the emitted script"
  local out="$D/shared/box-$job.out"
  [ "$st" = COMPLETED ] || { cat "$out"; fail "bench job $job: $st"; }
  for i in $NODES; do
    grep -Eq "^node $i: (pass|unknown)$" "$out" || { cat "$out"; fail "the prolog did not check $i"; }
  done
  # The job user cannot read the kernel log (kernel.dmesg_restrict): said, and not a failure.
  local r="$D/$FIRST/run/gpufleet/bench/collective-$job.json"
  [ -s "$r" ] || fail "no result at $FIRST:/run/gpufleet/bench/collective-$job.json"
  local rows
  rows=$(python3 - "$r" "$N" <<'PY'

import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert d["ranks"] == 2 * n and d["nodes"] == n, (d["ranks"], d["nodes"])
assert len({r["op"] for r in d["results"]}) == 7, {r["op"] for r in d["results"]}
bad = [r for r in d["results"] if r["wrong"] != 0]
assert not bad, bad
print(sum(1 for r in d["results"] if r["op"] == "all_reduce"))
PY
  ) || fail "bench result $r"
  ok "sbatch job $job (bench): prolog on $N nodes, bench collective over $((N * 2)) MPI ranks on $N nodes, 7 collectives, 0 wrong, in $(since "$t") s"
  wait_pq "the bench result exported by $FIRST's agent" \
    "count(gpufleet_bench_busbw_bytes_per_second{node=\"$FIRST\",op=\"all_reduce\"} > 0)" "$rows" 30
  ok "Prometheus has the bench result from $FIRST's agent"

  # The training job: its torchrun step (a stand-in that reports what it was given) must get the
  # spec's CPUs. Since Slurm 22.05 srun does not take --cpus-per-task from sbatch; where steps get
  # only what they ask for (SLURM_EXACT=1, as sites that run concurrent steps set), a step without
  # SRUN_CPUS_PER_TASK gets one CPU per task. (Without it, a step gets the job's CPUs on the node.)
  mkdir -p "$D/shared/bin"
  cat > "$D/shared/bin/torchrun" <<'SH'
#!/bin/bash
echo "torchrun on $(hostname): cpus=$(nproc) nnodes=${1#--nnodes=} args=$*"
SH
  chmod 755 "$D/shared/bin/torchrun"
  emit_sbatch "$D/shared/train.sbatch" --time 0-0:10 --partition gpu
  job=$(H runuser -u alice -- env -C "$D/shared" "${JOB_ENV[@]}" \
    PATH="$D/shared/bin:$(dirname "$BIN"):/usr/bin:/bin" SLURM_EXACT=1 sbatch --parsable "$D/shared/train.sbatch" |
    cut -d';' -f1) || fail "sbatch refused the training script"
  st=$(wait_job "$job" 120)
  out="$D/shared/box-$job.out"
  [ "$st" = COMPLETED ] || { cat "$out"; fail "training job $job: $st"; }
  [ "$(grep -c '^torchrun on gpu[0-9]*: cpus=2 nnodes=' "$out")" = "$N" ] ||
    { cat "$out"; fail "torchrun steps did not get the spec's 2 CPUs each"; }
  ok "training job $job: torchrun on each of $N nodes with its 2 CPUs (--cpus-per-task from the spec)"
  for t in 10 10:00 00:10:00 0-1 0-0:10 0-0:10:00 UNLIMITED; do
    emit_sbatch "$D/shared/t.sbatch" --time "$t" --partition gpu,gpu-long
    H runuser -u alice -- env -C "$D/shared" sbatch --test-only "$D/shared/t.sbatch" \
      > "$D/shared/t.out" 2>&1 || { cat "$D/shared/t.out"; fail "sbatch --test-only refused --time $t"; }
  done
  ok "every Slurm --time form and a partition list pass sbatch"
}

step_prolog() {
  # A fault the periodic health check has not seen: only the job's environment names it.
  cat > "$D/shared/prolog-fault.json" <<'J'
{"gpus": 2, "name": "NVIDIA H100 80GB HBM3", "util": 0, "power_w": 75,
 "gpu": {"0": {"ecc_uncorrected": 4}}}
J
  chmod 644 "$D/shared/prolog-fault.json"
  emit_sbatch "$D/shared/bench.sbatch" --bench
  local job st out
  job=$(as_alice sbatch --parsable --export=ALL,GPUFLEET_FAKE_NVML="$D/shared/prolog-fault.json" \
    "$D/shared/bench.sbatch" | cut -d';' -f1) || fail "sbatch"
  st=$(wait_job "$job" 120)
  out="$D/shared/box-$job.out"
  [ "$st" = FAILED ] || { cat "$out"; fail "job $job with a faulty GPU: $st, want FAILED"; }
  grep -q "^gpufleet: a node failed its health check (above): not starting the job$" "$out" ||
    { cat "$out"; fail "no prolog failure message"; }
  grep -Eq "^fail +memory-errors +GPU0: 4 uncorrectable ECC errors" "$out" ||
    { cat "$out"; fail "the prolog did not name the fault"; }
  grep -q "not changed: scontrol update .*only root or SlurmUser" "$out" ||
    { cat "$out"; fail "the job user's refused drain was not reported"; }
  [ ! -e "$D/$FIRST/run/gpufleet/bench/collective-$job.json" ] || fail "the bench ran after a failed prolog"
  ok "job $job stopped in its prolog naming the fault (the job user's drain refused and reported)"
}

step_fault() {
  local bad=${NODE_LIST[1]} t
  CLEANUP+=("'$C' clear '$D' $bad" "H scontrol update nodename=$bad state=resume")
  cat > "$D/shared/xid48.json" <<'J'
{"gpus": 2, "name": "NVIDIA H100 80GB HBM3", "util": 0, "power_w": 75,
 "gpu": {"1": {"xid": [48], "ecc_uncorrected": 2, "row_remap_pending": true}}}
J
  t=$(now)
  "$C" fault "$D" "$bad" "$D/shared/xid48.json"
  wait_state "$bad" "drained|draining" 30 || fail "$bad not drained after the XID 48 fault"
  local r; r=$(reason "$bad")
  [[ "$r" == "gpufleet: xid: GPU1: XID 48 "* ]] || fail "$bad drain reason: '$r'"
  ok "Slurm's health check drained $bad after $(since "$t") s: $r"
  for i in $NODES; do
    [ "$i" = "$bad" ] && continue
    [ "$(state "$i")" = idle ] || fail "$i is $(state "$i"), only $bad should be drained"
  done
  wait_pq "the XID alert firing" \
    "count(ALERTS{alertname=\"GpufleetXidDrain\",alertstate=\"firing\",node=\"$bad\",xid=\"48\"})" 1 40
  wait_pq "the ECC alert firing" \
    "count(ALERTS{alertname=\"GpufleetUncorrectableEcc\",alertstate=\"firing\",node=\"$bad\"})" 1 20
  local healthy_alerts; healthy_alerts=$(pq "count(ALERTS{node!=\"$bad\"})")
  [ -z "$healthy_alerts" ] || fail "healthy nodes have $healthy_alerts alerts: $(H curl -s localhost:9090/api/v1/alerts)"
  local end=$(($(date +%s) + 20))
  until H curl -s localhost:9093/api/v2/alerts | grep -q '"alertname":"GpufleetXidDrain"'; do
    [ "$(date +%s)" -le "$end" ] || fail "the XID alert did not reach Alertmanager"
    sleep 0.5
  done
  ok "GpufleetXidDrain and GpufleetUncorrectableEcc fire for $bad only, and reach Alertmanager"

  # A job for fewer nodes runs on the healthy ones.
  emit_sbatch "$D/shared/bench.sbatch" --bench
  local job st nodes
  read -r job st < <(submit_retry "$D/$FIRST/run/gpufleet/bench/collective-JOB.json" 180 \
    -N $((N - 1)) --export=ALL,GPUFLEET_BENCH_ARGS="all_reduce -b 1K -e 64K -f 8 -w 1 -n 2" \
    "$D/shared/bench.sbatch")
  [ -n "$job" ] || fail "sbatch"
  nodes=$(job_nodes "$job")
  [ "$st" = COMPLETED ] || { cat "$D/shared/box-$job.out"; fail "job $job on the healthy nodes: $st"; }
  [[ "$(H scontrol show hostnames "$nodes")" != *"$bad"* ]] || fail "job $job ran on the drained $bad"
  ok "job $job ran on $nodes, not on the drained $bad"

  t=$(now)
  "$C" clear "$D" "$bad"
  wait_state "$bad" idle 30 || fail "$bad not resumed after its fault cleared ($(state "$bad"): $(reason "$bad"))"
  ok "the fault cleared: $bad resumed by the health check after $(since "$t") s"
  CLEANUP=()

  # An admin's drain is never touched, however healthy the node.
  local admin=${NODE_LIST[N - 1]}
  CLEANUP+=("H scontrol update nodename=$admin state=resume")
  H scontrol update nodename="$admin" state=drain reason="maintenance: PSU swap"
  X "$admin" env -i SLURMD_NODENAME="$admin" "$ROOT/packaging/slurm/gpufleet-healthcheck" \
    > "$D/shared/hc.out" 2>&1
  grep -q "slurm node $admin: unchanged (drained by someone else: left alone)" "$D/shared/hc.out" ||
    { cat "$D/shared/hc.out"; fail "the health check did not leave the admin's drain alone"; }
  sleep 6  # one more of Slurm's own runs
  [[ "$(state "$admin")" =~ ^drain ]] && [ "$(reason "$admin")" = "maintenance: PSU swap" ] ||
    fail "the admin's drain of $admin was changed: $(state "$admin") '$(reason "$admin")'"
  H scontrol update nodename="$admin" state=resume
  wait_state "$admin" idle 15 || fail "$admin not idle after the admin's resume"
  CLEANUP=()
  ok "an admin's drain of $admin is left alone by gpufleet's health check"
}

step_reboot() {
  local bad=${NODE_LIST[2]} boot t r
  CLEANUP+=("'$C' reboot '$D' $bad")
  cat > "$D/shared/xid79.json" <<'J'
{"gpus": 2, "name": "NVIDIA H100 80GB HBM3", "util": 0, "power_w": 75, "gpu": {"0": {"xid": [79]}}}
J
  boot=$(cut -c1-8 "$D/$bad/boot_id")
  "$C" fault "$D" "$bad" "$D/shared/xid79.json"
  wait_state "$bad" "drained|draining" 30 || fail "$bad not drained after XID 79"
  r=$(reason "$bad")
  [[ "$r" == "gpufleet: reboot required (boot $boot): xid: GPU0: XID 79 (GPU has fallen off the bus)"* ]] ||
    fail "$bad reboot drain reason: '$r'"
  ok "XID 79 drained $bad with its boot id: $r"
  # The fault goes away (the XID ages out of its window, the GPU answers again): no reboot yet.
  "$C" clear "$D" "$bad"
  X "$bad" env -i SLURMD_NODENAME="$bad" "$ROOT/packaging/slurm/gpufleet-healthcheck" > "$D/shared/hc.out" 2>&1
  grep -q "has not rebooted since: left drained" "$D/shared/hc.out" || { cat "$D/shared/hc.out"; fail "no 'has not rebooted'"; }
  sleep 6
  [[ "$(state "$bad")" =~ ^drain ]] || fail "$bad was resumed without a reboot: $(state "$bad")"
  ok "checks pass again on $bad, but it stays drained until it reboots"
  t=$(now)
  "$C" reboot "$D" "$bad"
  wait_state "$bad" idle 40 || fail "$bad not resumed after the reboot: $(state "$bad") '$(reason "$bad")'"
  CLEANUP=()
  ok "$bad rebooted (boot $boot -> $(cut -c1-8 "$D/$bad/boot_id")) and was resumed after $(since "$t") s"
}

# pairs_run NAME: bench pairs over one rank per node, the JSON report in the shared folder. The
# box's 2 shared cores make healthy pairs vary twofold, so the floor is 25 % of the median (a
# real fabric uses the default 80 %); the limits below are 100 times slower than a healthy pair.
# --kill-on-bad-exit=1, as the emitted sbatch has it: without it (Slurm's default) the ranks of a
# launch whose one rank crashed in MPI_Init wait in PMIx's fence until the step's time limit, and
# the retry came after 3 minutes (CI under AddressSanitizer: the step timed out at 300 s).
pairs_run() {
  local try
  for ((try = 1; try <= OMPI_INIT_TRIES; try++)); do
    rm -f "$D/shared/$1.json"
    H env -C "$D/shared" "${JOB_ENV[@]}" srun -N "$N" --ntasks-per-node=1 -t 3 --kill-on-bad-exit=1 \
      "$BIN" bench pairs --size 1M -n 3 -w 1 --fraction 0.25 --format json -o "$D/shared/$1.json" \
      > "$D/shared/$1.out" 2>&1
    if [ $try -lt $OMPI_INIT_TRIES ] && ompi_init_crash "$D/shared/$1.out" "$D/shared/$1.json"; then
      echo "note: bench pairs ($1): Open MPI crashed in MPI_Init (open-mpi/ompi#12495); running again" >&2
      continue
    fi
    break
  done
  [ -s "$D/shared/$1.json" ] || { cat "$D/shared/$1.out"; fail "bench pairs ($1) wrote no report"; }
}
# Every pair below the floor must be in a verdict, or be a transient the report lists that reached
# the floor when measured again (a busy host's pair: shown, not judged); prints the verdicts as
# KIND:HOSTS lines.
pairs_verdicts() {
  python3 - "$D/shared/$1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
floor = d["fraction"] * d["reference_bandwidth_bytes_per_s"]
# A transient reached the second pass's floor (its own reference where the first pass was held
# down as a whole).
floor2 = d["fraction"] * d["retest_reference_bandwidth_bytes_per_s"]
hosts = d["hosts"]
covered = set()
for v in d["verdicts"]:
    if v["kind"] == "node":
        covered |= {(a, b) for a in range(d["ranks"]) for b in range(d["ranks"]) if v["ranks"][0] in (a, b)}
    else:
        covered.add(tuple(v["ranks"]))
pairs = [r for r in d["results"] if r["op"] == "pair"]
again = {(p["a"], p["b"]): p["bandwidth_bytes_per_s"] for p in pairs if p.get("pass") == "second"}
for t in d.get("transients", []):
    if again.get(tuple(t), 0) >= floor2:
        covered.add(tuple(t))
for p in pairs:
    if p["bandwidth_bytes_per_s"] < floor and (p["a"], p["b"]) not in covered:
        print("UNJUDGED:%s-%s" % (hosts[p["a"]], hosts[p["b"]]))
for v in d["verdicts"]:
    print("%s:%s" % (v["kind"], ",".join(hosts[r].split(".")[0] for r in v["ranks"])))
PY
}

step_pairs() {
  local a=${NODE_LIST[0]} b=${NODE_LIST[1]} slow=${NODE_LIST[2]} v
  CLEANUP+=("X $a tc qdisc del dev eth0 root" "X $slow tc qdisc del dev eth0 root")
  # One path: a's traffic to b through a 40 Mbit/s HTB class; everything else is unclassified and
  # leaves unshaped (HTB sends traffic of a missing default class directly). This kernel has
  # htb, tbf and the u32 classifier, no prio or netem.
  X "$a" tc qdisc add dev eth0 root handle 1: htb default 99 || fail "tc htb"
  X "$a" tc class add dev eth0 parent 1: classid 1:20 htb rate 40mbit ceil 40mbit quantum 1514 || fail "tc class"
  X "$a" tc filter add dev eth0 parent 1: protocol ip prio 1 u32 \
    match ip dst "$(X "$b" hostname -i | awk '{print $1}')/32" flowid 1:20 || fail "tc filter"
  pairs_run slow-link
  X "$a" tc qdisc del dev eth0 root
  v=$(pairs_verdicts slow-link)
  [[ "$v" != *UNJUDGED* ]] || fail "pairs below the floor left out of the verdicts: $v"
  [ "$v" = "link:$a,$b" ] || { cat "$D/shared/slow-link.out"; fail "slow link $a-$b: verdicts '$v'"; }
  ok "bench pairs names the tc-limited path $a <-> $b a slow link, and nothing else"
  # Every link of one node.
  X "$slow" tc qdisc add dev eth0 root tbf rate 40mbit burst 32kb latency 400ms || fail "tc tbf"
  pairs_run slow-node
  X "$slow" tc qdisc del dev eth0 root
  v=$(pairs_verdicts slow-node)
  [[ "$v" != *UNJUDGED* ]] || fail "pairs below the floor left out of the verdicts: $v"
  [ "$v" = "node:$slow" ] || { cat "$D/shared/slow-node.out"; fail "slow node $slow: verdicts '$v'"; }
  CLEANUP=()
  ok "bench pairs names $slow, whose every link is limited, a slow node"
}

step_tls() {
  CLEANUP+=("'$C' tls '$D' off")
  "$C" tls "$D" on || fail "cluster.sh tls on"
  local end=$(($(date +%s) + 40)) urls=""
  while [ "$(date +%s)" -le "$end" ]; do
    urls=$(H curl -s localhost:9090/api/v1/targets | python3 -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"]
print(" ".join(sorted(x["scrapeUrl"] for x in t if x["health"] == "up" and x["lastError"] == "")))')
    [ "$(echo "$urls" | grep -o 'https://gpu[0-9]*:9401/metrics' | wc -l)" = "$N" ] && break
    sleep 0.5
  done
  [ "$(echo "$urls" | grep -o 'https://gpu[0-9]*:9401/metrics' | wc -l)" = "$N" ] ||
    fail "targets not all up over https: '$urls' $(H curl -s localhost:9090/api/v1/targets)"
  local code
  code=$(X "$FIRST" curl -s -o /dev/null -w '%{http_code}' --cacert "$D/etc/ca.pem" "https://$FIRST:9401/metrics")
  [ "$code" = 401 ] || fail "an agent answered $code without credentials, want 401"
  ok "Prometheus scrapes all $N agents over https with basic auth (emitted --agent-scheme https); no credentials: 401"
  "$C" tls "$D" off || fail "cluster.sh tls off"
  wait_pq "every agent up over plain HTTP again" 'count(up{job="gpufleet"} == 1)' "$N" 40
  CLEANUP=()
}

STEPS=("$@")
[ ${#STEPS[@]} = 0 ] && STEPS=(prometheus sbatch prolog fault reboot pairs tls)
trap 'cleanup' EXIT
for s in "${STEPS[@]}"; do
  declare -F "step_$s" >/dev/null || { echo "FAIL: no step '$s'"; exit 2; }
  t0=$(now)
  "step_$s"
  echo "step $s: $(since "$t0") s"
done
echo PASS
