#!/usr/bin/env bash
# scripts/gpu-check.sh on this machine, which has no GPU: given the bundle and the fake NVML
# (8 healthy H100s), it reads the GPUs through NVML, judges them against the 8-GPU example, and
# skips every CUDA part cleanly, each with its reason; nothing hangs, nothing is left behind.
# Usage: gpu_check.sh BUILD_DIR FAKE_NVML_DIR NVML_FAULTS_JSON
set -euo pipefail
B=$(realpath "$1")
FAKE=$2
FAULTS=$3
SRC=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
shopt -s nullglob
tars=("$B"/packages/gpufleet-*-linux-x86_64.tar.gz)
((${#tars[@]} == 1)) || fail "no bundle in $B/packages (run scripts/package.sh $B)"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
set +e
LD_LIBRARY_PATH=$FAKE GPUFLEET_FAKE_NVML=$FAULTS "$SRC/scripts/gpu-check.sh" "${tars[0]}" \
  -o "$WORK/out" --budget 240 > "$WORK/stdout" 2>&1
rc=$?
set -e
cat "$WORK/stdout"
# 0, or 1 when a check fails on this VM's own hardware (no RDMA ports): never a usage error.
[[ $rc == 0 || $rc == 1 ]] || fail "gpu-check exited $rc"
S=$WORK/out/summary.md
[[ -s $S ]] || fail "no summary.md"
row() { grep -E "^\| $1 \|" "$S" || fail "no row for $1"; }
for s in topo-show topo-nccl-xml agent-once; do
  row "$s" | grep -q '| pass |' || fail "$s did not pass"
done
row check | grep -Eq '\| (pass|fail) \|' || fail "check gave no verdict"
grep -q '^| GPUs the agent reads through NVML | 8 | 8 |' "$S" || fail "the agent did not read 8 GPUs"
grep -q 'Expectations from: the 8-GPU example with 8 x H100-SXM5-80GB' "$S" ||
  fail "the spec was not derived from the detected GPUs"
# The CUDA parts: skipped with a reason (no device, no runtime, no MPI), never failed.
for s in bench-gpu bench-collective nccl-tests; do
  r=$(row "$s")
  grep -q '| skipped |' <<< "$r" || fail "$s was not skipped cleanly: $r"
  [[ $(awk -F'|' '{ print $5 }' <<< "$r" | tr -d ' ') != "" ]] || fail "$s skipped without a reason"
done
[[ -f $WORK/out/bench-gpu.txt && -f $WORK/out/agent-once.txt ]] || fail "a step's output is missing"
echo "PASS: gpu-check ran the bundle, read NVML and skipped the CUDA parts with reasons"
