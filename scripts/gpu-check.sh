#!/usr/bin/env bash
# One-shot verification of gpufleet on a machine with NVIDIA GPUs (docs/bench.md "On a GPU"),
# needing nothing but the relocatable bundle, bash and coreutils:
#
#   scripts/gpu-check.sh [BUNDLE] [-o OUT] [--spec SPEC] [--gpufleet BIN] [--budget SECONDS]
#
# BUNDLE is gpufleet-V-linux-x86_64.tar.gz or its unpacked folder (default: the newest under
# build/*/packages); --gpufleet runs a gpufleet binary instead (a build tree). It runs, each step
# under a time limit, recording what ran, what was skipped and why:
#   nvidia-smi -L and topo -m (when the driver's tool is there), topo show, topo nccl-xml (beside
#   NCCL's own NCCL_TOPO_DUMP_FILE when NCCL runs), agent --once, check, bench gpu, bench
#   collective --backend nccl on the GPUs present (under mpirun, when there is one), and nccl-tests'
#   all_reduce_perf when it is on PATH or in $NCCL_TESTS.
# Expectations: the catalog's for bench gpu; for busbw and check, --spec, else the bundled
# 8-GPU example with the detected GPU model and count (A100, H100, H200, B200).
# Writes OUT (default ./gpu-check-HOST-TIME): one file per step and summary.md, the table of
# steps and every number beside its expectation. Exit 0 when no step failed (skips are not
# failures), 1 when one did, 2 on bad usage.
set -uo pipefail

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
BUNDLE="" OUT="" SPEC="" BIN="" BUDGET=540
while (($#)); do
  case $1 in
    -o) OUT=$2; shift 2 ;;
    --spec) SPEC=$2; shift 2 ;;
    --gpufleet) BIN=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    -h | --help) usage ;;
    -*) echo "gpu-check: unknown flag $1" >&2; usage ;;
    *) BUNDLE=$1; shift ;;
  esac
done
START=$(date +%s)
HOST=$(hostname -s 2> /dev/null || echo host)
OUT=${OUT:-gpu-check-$HOST-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# ---- what to run
if [[ -z $BIN ]]; then
  if [[ -z $BUNDLE ]]; then
    here=$(cd "$(dirname "$0")/.." && pwd)
    BUNDLE=$(ls -t "$here"/build/*/packages/gpufleet-*-linux-x86_64.tar.gz 2> /dev/null | sed -n 1p)
  fi
  [[ -n $BUNDLE ]] || { echo "gpu-check: no bundle given or found (scripts/package.sh)" >&2; exit 2; }
  if [[ -f $BUNDLE ]]; then
    tar -xzf "$BUNDLE" -C "$TMP" || exit 2
    BUNDLE=$(echo "$TMP"/gpufleet-*-linux-x86_64)
  fi
  BIN=$BUNDLE/bin/gpufleet
  EXAMPLES=$BUNDLE/share/doc/gpufleet/examples
else
  EXAMPLES=$(cd "$(dirname "$0")/.." && pwd)/examples
fi
[[ -x $BIN ]] || { echo "gpu-check: $BIN is not an executable" >&2; exit 2; }

SUMMARY=$OUT/summary.md
ROWS=$TMP/rows
NUMBERS=$TMP/numbers
: > "$ROWS"
: > "$NUMBERS"
FAILED=0

# step NAME LIMIT CMD...: runs CMD with stdout+stderr in OUT/NAME.txt, at most LIMIT seconds (and
# never past the budget). Exit 0 is pass, 1 fail, 3 (the environment lacks something) or a
# missing tool is a skip with the command's own reason; a timeout is a failure.
step() {
  local name=$1 limit=$2 t0 rc left why status
  shift 2
  left=$((BUDGET - ($(date +%s) - START)))
  if ((left < 10)); then
    echo "| $name | skipped | 0 | the ${BUDGET} s budget is spent |" >> "$ROWS"
    return 3
  fi
  ((limit > left)) && limit=$left
  t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.txt" 2>&1
  rc=$?
  # The reason: a failed check's first verdict, else the first line that says what went wrong.
  why=$({ grep -E '^fail ' "$OUT/$name.txt"; grep -E 'gpufleet:|[Ee]rror|not found|cannot|[Nn]o ' "$OUT/$name.txt"; } |
    sed -n 1p | tr -s ' |' ' /' | cut -c1-160)
  case $rc in
    0) status=pass why=ok ;;
    3 | 127) status=skipped ;;
    124 | 137) status=fail why="no answer in $limit s" ;;
    *) status=fail ;;
  esac
  [[ $status == fail ]] && FAILED=1
  echo "| $name | $status | $(($(date +%s) - t0)) | ${why:-exit $rc} |" >> "$ROWS"
  return "$rc"
}
skip() { echo "| $1 | skipped | 0 | $2 |" >> "$ROWS"; }
number() { echo "| $1 | $2 | $3 |" >> "$NUMBERS"; }

# ---- the driver's own view
GPUS=0
GPU_NAME=""
if command -v nvidia-smi > /dev/null; then
  step nvidia-smi 60 nvidia-smi -L
  GPUS=$(grep -c '^GPU [0-9]' "$OUT/nvidia-smi.txt")
  GPU_NAME=$(sed -n 's/^GPU 0: \(.*\) (UUID.*/\1/p' "$OUT/nvidia-smi.txt")
  step nvidia-smi-topo 60 nvidia-smi topo -m
else
  skip nvidia-smi "nvidia-smi is not installed (no NVIDIA driver tools)"
fi

# ---- gpufleet's view of the node
step topo-show 60 "$BIN" topo show
step topo-json 60 "$BIN" topo show --format json
((GPUS == 0)) && GPUS=$(grep -c '"kind": "gpu"' "$OUT/topo-json.txt")
[[ -z $GPU_NAME ]] && GPU_NAME=$(sed -n 's/.*"name": "\(NVIDIA [^"]*\)".*/\1/p' "$OUT/topo-json.txt" | sed -n 1p)
step topo-nccl-xml 60 "$BIN" topo nccl-xml -o "$OUT/gpufleet-nccl-topo.xml"
# The agent's NVML view: GPUs, models, health.
step agent-once 120 "$BIN" agent --once --listen 127.0.0.1:0
NVML_GPUS=$(grep -c '^gpufleet_gpu_up{' "$OUT/agent-once.txt")
((GPUS == 0)) && GPUS=$NVML_GPUS
[[ -z $GPU_NAME ]] && GPU_NAME=$(sed -n 's/^gpufleet_gpu_up{.*model="\([^"]*\)".*/\1/p' "$OUT/agent-once.txt" | sed -n 1p)
number "GPUs (nvidia-smi, else topo, else NVML)" "$GPUS" "the machine's"
number "GPUs the agent reads through NVML" "$NVML_GPUS" "$GPUS"

# The spec the numbers are judged against.
if [[ -z $SPEC ]]; then
  model="" scale=""
  case $GPU_NAME in
    *A100*80GB*) model=A100-SXM4-80GB scale="fabrics.scale_up.type=nvlink3" ;;
    *A100*) model=A100-SXM4-40GB scale="fabrics.scale_up.type=nvlink3" ;;
    *H100*) model=H100-SXM5-80GB ;;
    *H200*) model=H200-SXM-141GB ;;
    *B200*) model=B200-SXM-180GB scale="fabrics.scale_up.type=nvlink5" ;;
  esac
  if [[ -n $model && $GPUS -gt 0 && -f $EXAMPLES/h100-8gpu-box.yaml ]]; then
    SPEC_ARGS=(--spec "$EXAMPLES/h100-8gpu-box.yaml" --set "nodes.gpu.model=$model"
      --set "nodes.gpu.count=$GPUS")
    [[ -n $scale ]] && SPEC_ARGS+=(--set "$scale")
    SPEC_NOTE="the 8-GPU example with $GPUS x $model"
  else
    SPEC_ARGS=()
    SPEC_NOTE="none (GPU '${GPU_NAME:-none}' not mapped; pass --spec)"
  fi
else
  SPEC_ARGS=(--spec "$SPEC")
  SPEC_NOTE=$SPEC
fi

step check 120 "$BIN" check "${SPEC_ARGS[@]}"
grep -E '^(pass|fail|unknown) ' "$OUT/check.txt" | while read -r verdict name rest; do
  number "check $name" "$verdict" "pass"
done

# ---- GPU benchmarks (CUDA: skipped, with the reason, where the runtime is missing)
step bench-gpu 300 "$BIN" bench gpu
grep -E '^ *[0-9]+ ' "$OUT/bench-gpu.txt" | while read -r line; do
  number "bench gpu" "$line" "peak, ratio and floor in the line (catalog)"
done

NCCL_DUMP=$OUT/nccl-topo-dump.xml
if ((GPUS > 1)) && command -v mpirun > /dev/null; then
  NCCL_TOPO_DUMP_FILE=$NCCL_DUMP step bench-collective 300 mpirun --allow-run-as-root --oversubscribe -np "$GPUS" \
    "$BIN" bench collective --backend nccl -b 1M -e 1G -f 4 "${SPEC_ARGS[@]}"
  grep -E '^ +[0-9]+ ' "$OUT/bench-collective.txt" | while read -r line; do
    number "all_reduce busbw" "$line" "expected and ratio in the line ($SPEC_NOTE)"
  done
else
  skip bench-collective "$( ((GPUS > 1)) && echo "mpirun is not installed (gpufleet-bench runs under MPI)" || echo "fewer than 2 GPUs")"
fi
NCCL_TESTS_BIN=$(command -v all_reduce_perf || echo "${NCCL_TESTS:-}/all_reduce_perf")
if ((GPUS > 0)) && [[ -x $NCCL_TESTS_BIN ]]; then
  [[ -f $NCCL_DUMP ]] || export NCCL_TOPO_DUMP_FILE=$NCCL_DUMP
  step nccl-tests 300 "$NCCL_TESTS_BIN" -b 1M -e 1G -f 4 -g "$GPUS"
  unset NCCL_TOPO_DUMP_FILE
  grep -E '^ +[0-9]+ ' "$OUT/nccl-tests.txt" | while read -r line; do
    number "nccl-tests all_reduce_perf" "$line" "beside gpufleet's busbw above"
  done
else
  skip nccl-tests "all_reduce_perf not found (PATH, \$NCCL_TESTS)"
fi
if [[ -s $NCCL_DUMP ]]; then
  for what in gpu nic nvlink pci; do
    number "NCCL topology: <$what> elements" "$(grep -c "<$what[ >]" "$NCCL_DUMP")" \
      "$(grep -c "<$what[ >]" "$OUT/gpufleet-nccl-topo.xml" 2> /dev/null) in gpufleet's file"
  done
  step topo-lint-nccl-dump 60 "$BIN" topo lint "$NCCL_DUMP"
else
  skip nccl-topo-dump "NCCL did not run, so there is no NCCL_TOPO_DUMP_FILE to compare"
fi

# ---- the summary
{
  echo "# gpufleet GPU check: $HOST, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo
  echo "gpufleet $("$BIN" --version 2>&1); GPUs: $GPUS x ${GPU_NAME:-unknown};" \
    "driver: $(sed -n 's/.*Driver Version: *\([0-9.]*\).*/\1/p' "$OUT/nvidia-smi-topo.txt" 2> /dev/null | sed -n 1p)"
  echo "Expectations from: $SPEC_NOTE. Total $(($(date +%s) - START)) s of a ${BUDGET} s budget."
  echo
  echo "| step | status | seconds | detail |"
  echo "| --- | --- | ---: | --- |"
  cat "$ROWS"
  echo
  echo "| measured | value | expected |"
  echo "| --- | --- | --- |"
  cat "$NUMBERS"
  echo
  echo "Each step's full output: $OUT/STEP.txt."
} > "$SUMMARY"
cat "$SUMMARY"
exit "$FAILED"
