#!/bin/bash
# `gpufleet bench collective|pairs` under a real OpenMPI mpirun, 4-5 ranks on this machine
# (oversubscribed): every collective verified with zero wrong elements, a planted corruption
# counted, a stalled rank and a killed rank named by the survivors inside the timeout, an
# unreachable expectation failing with exit 1, the pairs second pass telling a slow node from a
# slow link, and a rank that never reaches MPI_Init stopping the others after
# --startup-timeout. usage: bench_mpi.sh GPUFLEET_BINARY. Skips (77) without mpirun unless CI=true.
set -uo pipefail
BIN=$1
if ! command -v mpirun >/dev/null; then
  [ "${CI:-}" = true ] && { echo "FAIL: mpirun missing (scripts/deps.sh installs openmpi-bin)"; exit 1; }
  echo "SKIP: mpirun not installed"; exit 77
fi
T=$(mktemp -d /tmp/gpufleet-bench-mpi.XXXXXX)
trap 'rm -rf "$T"' EXIT
# 4 ranks on 2 cores, shared memory between them, loopback only.
. "$(dirname "$0")/../ompi_env.sh"
export "${OMPI_TEST_ENV[@]}"
# Open MPI's session folders in this test's own folder, which the trap removes: a launcher that
# times out (the retry in 6 and 7) leaves its pid.N folder behind in /tmp otherwise.
export OMPI_MCA_orte_tmpdir_base=$T
# Oversubscribed ranks must yield while they wait, or the busy-polling ones starve the others and
# pair bandwidths swing 10x from scheduling alone (seen: the injected slow link was missed in 1 of
# 6 runs, and a noisy pair turned it into a "slow node"; with yielding 30 of 30 runs were right).
export OMPI_MCA_mpi_yield_when_idle=1
# Under AddressSanitizer (the asan preset runs this too): OpenMPI's runtime leaks ~120 KB at
# MPI_Finalize in components it has dlopen'ed and closed (frames "<unknown module>", so no
# suppression by library name matches). Leak checking stays on for our code in bench_test.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
# The ranks of the collective and pairs passes run at a raised priority (nice -15; root with
# CAP_SYS_NICE may, others keep their own with nice's warning; the stall and start-up checks,
# timed by a watchdog, run as launched):
# a rank spinning for a partner that another process holds off its core waits a whole scheduler
# slice (~4 ms) per exchange, so a busy host turned healthy pairs into 0.07 GB/s beside 3 GB/s
# and the planted faults were lost in it (CI: 0.01-9 GB/s, the slow node missed in 3 runs of 3;
# here, with one CPU hog beside the 5 ranks, missed in 6 of 10 runs, raised 10 of 10; with three
# or four hogs, raised, 10 of 10 and the slow link 19 of 20; a whole CI run passed beside two).
RUN=(timeout 120 nice -n -15 mpirun)
MPI=("${RUN[@]}" -np 4)
fail() { echo "FAIL: $*"; exit 1; }
jqx() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }

# 1. Every collective, sizes 8 B .. 1 MiB, verified: zero wrong everywhere.
"${MPI[@]}" "$BIN" bench collective all -b 8 -e 1M -f 4 -w 1 -n 3 --format json -o "$T/all.json" \
  > "$T/out" 2>&1 || { cat "$T/out"; fail "all collectives exited non-zero"; }
jqx "$T/all.json" '
ops = {r["op"] for r in d["results"]}
want = {"all_reduce","all_gather","reduce_scatter","broadcast","reduce","alltoall","sendrecv"}
assert ops == want, ops
bad = [r for r in d["results"] if r["wrong"] != 0]
assert not bad, bad
assert d["schema"] == "gpufleet.bench/v1" and d["kind"] == "collective" and d["ranks"] == 4
assert all(r["busbw_bytes_per_s"] > 0 and r["p99_s"] >= r["p50_s"] > 0 for r in d["results"])
assert d["verdict"] == "pass"' || fail "collective results"
# ... and the agent turns the result into metrics (`gpufleet agent --bench-dir`).
mkdir "$T/results" && cp "$T/all.json" "$T/results/"
"$BIN" agent --once --no-nvml --bench-dir "$T/results" > "$T/metrics" 2> /dev/null
grep -q '^gpufleet_bench_passed{kind="collective"} 1$' "$T/metrics" &&
  grep -q '^gpufleet_bench_busbw_bytes_per_second{kind="collective",op="alltoall",bytes="524288"} ' "$T/metrics" ||
  fail "agent metrics from the bench result"

# 2. Types and reductions: exact results for integers and floats, every type and every reduction
# op through MPI's own datatypes and operations. Each pair costs an mpirun (about 5 s of start-up
# here, 2-3x that under AddressSanitizer), so the five types take the four ops in turn and the
# wiring of each is seen; every type x op is checked against a simulated reference in
# tests/bench/collective_def_test.cc.
for pair in int8:sum uint8:prod int32:min uint64:max double:prod; do
  t=${pair%%:*} op=${pair##*:}
  "${MPI[@]}" "$BIN" bench collective all_reduce reduce_scatter reduce -b 64 -e 64K -f 32 -w 0 \
    -n 1 -d $t --redop $op --root 3 --format json -o "$T/t.json" > "$T/out" 2>&1 ||
    { cat "$T/out"; fail "dtype $t redop $op"; }
  jqx "$T/t.json" 'assert all(r["wrong"] == 0 for r in d["results"])' || fail "wrong for $t $op"
done

# 3. A planted corruption (test-only flag): one bad element per size on rank 1, counted; exit 1.
"${MPI[@]}" "$BIN" bench collective all_reduce alltoall -b 1K -e 64K -f 8 -w 0 -n 2 \
  --inject-corruption-rank 1 --format json -o "$T/bad.json" > "$T/out" 2>&1; rc=$?
[ $rc = 1 ] || { cat "$T/out"; fail "corruption: exit $rc, want 1"; }
jqx "$T/bad.json" '
assert all(r["wrong"] == 1 for r in d["results"]), d["results"]
assert d["verdict"] == "fail"
assert any("wrong elements" in f["message"] for f in d["findings"])' || fail "corruption not counted"

# 4. An expectation the machine cannot meet: exit 1 naming op, size, expected and measured.
"${MPI[@]}" "$BIN" bench collective -b 1M -e 1M -w 0 -n 2 --expect-busbw "10 TB/s" > "$T/out" 2>&1; rc=$?
[ $rc = 1 ] || { cat "$T/out"; fail "expect-busbw: exit $rc, want 1"; }
grep -q '^# fail: all_reduce 1048576 B: busbw .* GB/s is 0 % of the expected 10000.00 GB/s' "$T/out" ||
  { cat "$T/out"; fail "threshold message"; }

# 5. Bad input: one line, exit 2, from rank 0 only.
"${MPI[@]}" "$BIN" bench collective -d half > "$T/out" 2>&1; rc=$?
[ $rc = 2 ] || fail "--dtype half on mpi: exit $rc, want 2"
[ "$(grep -c '^gpufleet: --dtype half' "$T/out")" = 1 ] || { cat "$T/out"; fail "one error line"; }
"${MPI[@]}" "$BIN" bench collective -b 8M -e 1K > "$T/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q 'is below -b/--minbytes' "$T/out" || { cat "$T/out"; fail "-e < -b"; }

# 6. A stalled rank (SIGSTOP): the others name it and the job ends with exit 3 within the timeout.
start_and_hit() {  # $1 seconds between the ranks' start and the signal, $2 signal, $3.. mpirun flags
  local wait=$1 sig=$2; shift 2
  rm -f "$T/hit.out"
  ( timeout 60 mpirun -np 4 "$@" "$BIN" bench collective -b 256K -e 256K -w 0 -n 1000000 \
      --timeout 4 > "$T/hit.out" 2>&1; echo "rc=$?" >> "$T/hit.out" ) &
  local runner=$! victim=""
  for i in $(seq 100); do
    victim=$(pgrep -f 'gpufleet-bench collective' | sort -n | sed -n 3p)
    [ -n "$victim" ] && [ "$(pgrep -f 'gpufleet-bench collective' | wc -l)" -ge 4 ] && break
    sleep 0.1
  done
  [ -n "$victim" ] || fail "ranks did not start"
  sleep "$wait"  # past MPI_Init and into the timed loop
  kill -"$sig" "$victim"
  local t0=$SECONDS
  wait $runner
  ELAPSED=$((SECONDS - t0)) VICTIM=$victim
}
# The signal must land in the timed loop. A rank stopped or killed inside MPI_Init leaves the
# others in Open MPI's start-up, where only the start-up watchdog runs (10. below; its default
# 300 s is past this launcher's 60 s): they wait there until a timeout (with --enable-recovery
# mpirun does not end the job; reproduced by killing a rank 0.1 s after start: a PMIx BAD-PARAM
# line, then exit 124), or Open MPI fails their MPI_Init ("unable to reach each other", the dead
# rank's shared memory gone; seen under AddressSanitizer).
# Under AddressSanitizer on CI's two cores start-up has taken longer than 3 s. A run without a line
# from the ranks shows its output and runs once more, signalled later; a watchdog that does not
# answer fails both.
hit() {  # as start_and_hit, less the wait
  start_and_hit 5 "$@"
  grep -q '^gpufleet-bench:' "$T/hit.out" && return
  echo "note: no line from the ranks; the $1 may have come before they were up. Once more:"
  cat "$T/hit.out"
  start_and_hit 15 "$@"
}
hit STOP
grep -q "^gpufleet-bench: all_reduce 262144 B: no progress for 4 s; rank [0-9] (host .*, pid $VICTIM) did not answer within 1 s: dead or stalled" "$T/hit.out" ||
  { cat "$T/hit.out"; fail "stalled rank not named"; }
grep -q '^rc=3$' "$T/hit.out" || { cat "$T/hit.out"; fail "stalled rank: exit not 3"; }
[ $ELAPSED -le 15 ] || fail "stalled rank: took ${ELAPSED}s (timeout 4 s)"

# 7. A killed rank: with --enable-recovery mpirun lets the others run on; they name it.
hit KILL --enable-recovery
grep -q "^gpufleet-bench: all_reduce 262144 B: no progress for 4 s; rank [0-9] (host .*, pid $VICTIM) did not answer within 1 s: dead or stalled" "$T/hit.out" ||
  { cat "$T/hit.out"; fail "killed rank not named"; }
[ $ELAPSED -le 15 ] || fail "killed rank: took ${ELAPSED}s (timeout 4 s)"

# 8. Pairs: all pairs in n-1 rounds; a slow link and a slow node told apart by the second pass.
# (--fraction: 4 ranks share 2 cores here, so a pair can be noisy; injected faults are 6x slower.)
# A healthy pass can still meet a slow host: 4 ranks share 2 cores, and CI's other jobs share them
# too (seen once under AddressSanitizer with a build beside it: a rank starved for a round is a
# slow node, truly measured). So a failing healthy pass shows its verdicts and runs once more.
healthy_pairs() {
  "${MPI[@]}" "$BIN" bench pairs --size 256K -n 10 --fraction 0.3 --format json -o "$T/p.json" \
    > "$T/out" 2>&1
}
if ! healthy_pairs; then
  echo "note: the healthy pairs pass failed; its verdicts, then once more:"
  jqx "$T/p.json" 'print("\n".join(v["message"] for v in d["verdicts"]))' || cat "$T/out"
  healthy_pairs || { cat "$T/out"; jqx "$T/p.json" 'print(d["verdicts"])'; fail "pairs exited non-zero"; }
fi
jqx "$T/p.json" '
first = {(r["a"], r["b"]) for r in d["results"] if r["pass"] == "first"}
assert first == {(a, b) for a in range(4) for b in range(a + 1, 4)}, first
assert d["rounds_run"] == 3 and d["verdict"] == "pass"' || fail "pairs coverage"
# The injected faults are 6x slower (about 17 % of the reference), so --fraction 0.3 leaves room
# for scheduling noise on healthy pairs; 5 ranks on 2 cores under AddressSanitizer still met a
# healthy pair at 22-38 % once (CI, a false "slow together" beside the right slow node). A fault
# run whose verdicts are not exactly the planted one shows them and runs again, up to three runs
# (CI under AddressSanitizer on a busy host held a whole first pass down to 0.03-0.13 GB/s twice
# in a row; two hogs beside the ranks here do it to most runs).
fault_pairs() {  # $1 ranks, $2 the one expected "# fail" line's pattern, $3.. fault flags
  local np=$1 want=$2; shift 2
  "${RUN[@]}" -np "$np" "$BIN" bench pairs --size 256K -n 5 --fraction 0.3 "$@" > "$T/out" 2>&1
  local rc=$?
  [ $rc = 1 ] && grep -q "$want" "$T/out" && [ "$(grep -c '^# fail' "$T/out")" = 1 ]
}
expect_fault() {  # $1 what, then as fault_pairs
  local what=$1 run; shift
  for run in 1 2 3; do
    fault_pairs "$@" && return
    echo "note: the $what pass (run $run of 3) was not exactly right; its output:"; cat "$T/out"
  done
  fail "$what not found in 3 runs"
}
expect_fault "slow link" 4 '^# fail: rank 0 (.*) and rank 2 (.*) are fine with other partners but slow together' \
  --inject-slow-link 0:2
expect_fault "slow node" 5 '^# fail: rank 3 (.*) is slow with most of its partners' --inject-slow-rank 3

# 9. The HTML report: one file, SVG charts, no scripts.
"${MPI[@]}" "$BIN" bench collective -b 1K -e 1M -f 4 -w 0 -n 2 --expect-busbw "1 GB/s" \
  --format html -o "$T/r.html" > "$T/out" 2>&1
grep -q '<svg' "$T/r.html" && grep -q 'expected (--expect-busbw)' "$T/r.html" &&
  ! grep -q '<script' "$T/r.html" || fail "html report"

# 10. A rank that never reaches MPI_Init (here a second program of the job that only sleeps; one
# hung or dead inside Open MPI's start-up looks the same to the others): the rank waiting in
# MPI_Init stops after --startup-timeout with one line and exit 3, and mpirun ends the job long
# before the sleeper would have.
t0=$SECONDS
timeout 120 mpirun -np 1 "$BIN" bench collective all_reduce -b 8 -e 8 -w 0 -n 1 \
  --startup-timeout 3 : -np 1 sleep 100 > "$T/out" 2>&1
rc=$?
[ $rc = 3 ] && grep -q '^gpufleet-bench: MPI start-up: no progress for 3 s on .* (rank 0): a rank did not start, or hung or died inside MPI_Init$' "$T/out" ||
  { cat "$T/out"; fail "start-up hang: rc $rc, no line"; }
[ $((SECONDS - t0)) -le 60 ] || fail "start-up hang: took $((SECONDS - t0)) s (--startup-timeout 3)"
echo PASS
