#!/usr/bin/env bash
# Fuzzing gpufleet's parsers with libFuzzer (fuzz/, docs/reliability.md).
#
#   scripts/fuzz.sh smoke [SECONDS]           every target for SECONDS (default 15) from its
#                                             corpus; exit 1 on any crash, leak, UB report or
#                                             timeout; and proof that a crash is caught: the
#                                             planted target must fail. CI runs this.
#   scripts/fuzz.sh campaign TARGET... [--seconds S] [--runs N] [--jobs J]
#                                             a long run with -fork=J, stopping at N executions
#                                             or S seconds (default 10,000,000 / 3600), then
#                                             minimises the corpus into fuzz/corpus/TARGET and
#                                             prints executions, coverage and findings
#   scripts/fuzz.sh list                      the targets
#
# Seeds: fuzz/corpus/TARGET (committed, small), plus at run time the project's examples and test
# inputs and ../shared/fixtures (read in place, never copied into the project). Dictionaries:
# fuzz/dict/. Crash inputs are written to build/fuzz/findings/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=$ROOT/build/fuzz
SHARED=$ROOT/../shared/fixtures
TARGETS=(spec nccl_xml smi_matrix hwloc_xml capture_json kmsg web_config bench_file http_request
  http_server metrics)
# The current run's scratch folder, removed however the script ends (an interrupted CI left one).
LAST_WORK=""
trap 'rm -rf "$LAST_WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

dict_of() {
  case $1 in
    spec | web_config) echo "$ROOT/fuzz/dict/yaml.dict" ;;
    nccl_xml | hwloc_xml) echo "$ROOT/fuzz/dict/xml.dict" ;;
    capture_json | bench_file) echo "$ROOT/fuzz/dict/json.dict" ;;
    http_request | http_server) echo "$ROOT/fuzz/dict/http.dict" ;;
    *) echo "" ;;
  esac
}

# Seed files for TARGET beyond fuzz/corpus, linked into folder $2 (libFuzzer reads folders).
seeds() {
  local t=$1 dir=$2 f
  mkdir -p "$dir"
  local files=()
  case $t in
    spec) files=("$ROOT"/examples/*.yaml "$ROOT"/tests/e2e/specs/*.yaml "$ROOT"/tests/cluster/box.yaml) ;;
    nccl_xml) files=("$SHARED"/nccl-topo/*.xml "$SHARED"/nccl-topo/known-bad/*.xml "$ROOT"/tests/e2e/specs/*.xml) ;;
    smi_matrix) files=("$SHARED"/nvidia-smi-topo/*.txt) ;;
    hwloc_xml) files=("$SHARED"/hwloc/*.xml) ;;
    capture_json) files=("$ROOT"/tests/e2e/check/*/gpufleet-topology.json) ;;
    web_config) files=("$ROOT"/tests/e2e/prometheus/*.yml) ;;
  esac
  for f in "${files[@]}"; do
    [ -f "$f" ] && ln -sf "$f" "$dir/$(echo "$f" | tr '/' '_')"
  done
  return 0
}

build() {
  command -v clang++ > /dev/null || { echo "fuzz: clang++ is not installed (scripts/deps.sh)" >&2; exit 3; }
  cmake --preset fuzz > /dev/null
  cmake --build --preset fuzz -j "$(nproc)" > "$B.build.log" 2>&1 ||
    { tail -30 "$B.build.log" >&2; echo "fuzz: the build failed" >&2; exit 1; }
}

# run TARGET SECONDS RUNS JOBS: one libFuzzer run; prints its summary line; returns its status.
run() {
  local t=$1 secs=$2 runs=$3 jobs=$4
  local work; work=$(mktemp -d /tmp/gpufleet-fuzz-$t.XXXXXX)
  LAST_WORK=$work
  mkdir -p "$work/new" "$B/findings/$t"
  seeds "$t" "$work/seeds"
  local args=(-max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 -max_len=65536
    -print_final_stats=1 -artifact_prefix="$B/findings/$t/")
  [ "$runs" -gt 0 ] && args+=(-runs="$runs")
  [ "$jobs" -gt 1 ] && args+=(-fork="$jobs" -ignore_crashes=0 -ignore_timeouts=0 -ignore_ooms=0)
  local d; d=$(dict_of "$t")
  [ -n "$d" ] && args+=(-dict="$d")
  local rc=0 t0=$SECONDS
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$B/fuzz/fuzz_$t" "${args[@]}" "$work/new" "$ROOT/fuzz/corpus/$t" "$work/seeds" \
    > "$work/log" 2>&1 || rc=$?
  local execs cov
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  [ -n "$execs" ] || execs=$(grep -o '#[0-9]*' "$work/log" | tail -1 | tr -d '#')
  cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1 | cut -d' ' -f2)
  printf '%-14s %s  executions %s  coverage %s edges  seconds %s\n' "$t" \
    "$([ $rc = 0 ] && echo ok || echo FAIL)" "${execs:-?}" "${cov:-?}" "$((SECONDS - t0))"
  if [ $rc != 0 ]; then
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written|deadly signal|timeout' "$work/log" | head -20
    cp "$work/log" "$B/findings/$t/last.log"
  fi
  LAST_WORK=$work
  return $rc
}

case "${1:-}" in
  list) printf '%s\n' "${TARGETS[@]}" ;;
  smoke)
    secs=${2:-15}
    build
    failed=0
    for t in "${TARGETS[@]}"; do
      run "$t" "$secs" 0 1 || failed=1
      rm -rf "$LAST_WORK"
    done
    # Proof that the smoke fails on a crash: the planted target crashes on its seed "crash".
    if run planted 5 0 1 > /dev/null 2>&1; then
      echo "fuzz: the planted crash was not caught: the smoke cannot fail" >&2
      failed=1
    else
      echo "planted        caught: a crashing input fails the smoke, as it must"
    fi
    rm -rf "$LAST_WORK" "$B/findings/planted"
    exit $failed
    ;;
  campaign)
    shift
    secs=3600 runs=10000000 jobs=1 targets=()
    while [ $# -gt 0 ]; do
      case $1 in
        --seconds) secs=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        all) targets+=("${TARGETS[@]}"); shift ;;
        *) targets+=("$1"); shift ;;
      esac
    done
    build
    failed=0
    for t in "${targets[@]}"; do
      run "$t" "$secs" "$runs" "$jobs" || failed=1
      # Minimise: what the run found, merged into the committed corpus.
      mkdir -p "$LAST_WORK/min"
      "$B/fuzz/fuzz_$t" -merge=1 -max_len=65536 "$LAST_WORK/min" "$ROOT/fuzz/corpus/$t" \
        "$LAST_WORK/new" > /dev/null 2>&1 || true
      if [ -n "$(ls -A "$LAST_WORK/min")" ]; then
        rm -rf "$ROOT/fuzz/corpus/$t.old"
        mv "$ROOT/fuzz/corpus/$t" "$ROOT/fuzz/corpus/$t.old"
        mv "$LAST_WORK/min" "$ROOT/fuzz/corpus/$t"
        # Hand-written seeds (named, not libFuzzer's 40-hex-digit hashes) stay as they are:
        # the merge keeps only what adds coverage, under a hash, and they document the format.
        find "$ROOT/fuzz/corpus/$t.old" -maxdepth 1 -type f ! -regex '.*/[0-9a-f]\{40\}' \
          -exec cp -p {} "$ROOT/fuzz/corpus/$t/" \;
        rm -rf "$ROOT/fuzz/corpus/$t.old"
      fi
      echo "               corpus: $(ls "$ROOT/fuzz/corpus/$t" | wc -l) inputs, $(du -sh "$ROOT/fuzz/corpus/$t" | cut -f1)"
      rm -rf "$LAST_WORK"
    done
    exit $failed
    ;;
  *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
