#!/usr/bin/env bash
# gpufleet bench storage's sequential throughput beside fio with the same pattern, in one run:
# 1 MiB blocks, one synchronous writer (fio psync), O_DIRECT, SIZE bytes, fsync at the end of
# the write; then the same file read back. ROUNDS alternating runs, medians and ratios.
# Goal: within 10 % of fio. Usage: perf/bench_storage.sh [BUILD_DIR] [DIR] [SIZE] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
dir=${2:-/tmp}
size=${3:-1G}
rounds=${4:-5}
[[ -x "$build/src/gpufleet" ]] || scripts/build.sh release >/dev/null
command -v fio >/dev/null || { echo "fio missing (scripts/deps.sh installs it)"; exit 3; }
out=perf/results/bench_storage
rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d "$dir/gpufleet-perf.XXXXXX")
trap 'rm -rf "$work"' EXIT
for r in $(seq "$rounds"); do
  "$build/src/gpufleet" bench storage --path "$work" --size "$size" --block-size 1M --fsyncs 1 \
    --random-seconds 0.1 --metadata-files 1 --direct on --format json -o "$out/gpufleet.$r.json"
  fio --name=seqwrite --filename="$work/fio.dat" --rw=write --bs=1M --size="$size" --direct=1 \
    --ioengine=psync --end_fsync=1 --output-format=json > "$out/fio-write.$r.json"
  fio --name=seqread --filename="$work/fio.dat" --rw=read --bs=1M --size="$size" --direct=1 \
    --ioengine=psync --output-format=json > "$out/fio-read.$r.json"
  rm -f "$work/fio.dat"
done
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
gw, gr, fw, fr = [], [], [], []
for r in range(1, rounds + 1):
    ops = {x["op"]: x for x in json.load(open(f"{out}/gpufleet.{r}.json"))["results"]}
    gw.append(ops["sequential_write"]["throughput_bytes_per_s"])
    gr.append(ops["sequential_read"]["throughput_bytes_per_s"])
    fw.append(json.load(open(f"{out}/fio-write.{r}.json"))["jobs"][0]["write"]["bw_bytes"])
    fr.append(json.load(open(f"{out}/fio-read.{r}.json"))["jobs"][0]["read"]["bw_bytes"])
m = statistics.median
print(f"{'test':<18} {'gpufleet':>10} {'fio':>10} {'ratio':>6}   (medians of {rounds}, MB/s)")
print(f"{'sequential write':<18} {m(gw)/1e6:>10.0f} {m(fw)/1e6:>10.0f} {m(gw)/m(fw):>6.3f}")
print(f"{'sequential read':<18} {m(gr)/1e6:>10.0f} {m(fr)/1e6:>10.0f} {m(gr)/m(fr):>6.3f}")
print("runs (MB/s): gpufleet write", [round(x/1e6) for x in gw], "fio write", [round(x/1e6) for x in fw])
print("             gpufleet read ", [round(x/1e6) for x in gr], "fio read ", [round(x/1e6) for x in fr])
PY
