#!/usr/bin/env bash
# gpufleet's MPI all_reduce busbw beside a bare MPI_Allreduce loop (perf/mpi_allreduce_loop.cc)
# with the same sizes, warm-up and iterations, in one run: ROUNDS alternating launches of each
# with 2 ranks (one per core, shared memory), 64 KiB to 16 MiB, then the median busbw per size
# and the ratio.
# Goal: gpufleet within 5 % of the bare loop. Usage: perf/bench_mpi.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
rounds=${2:-7}
[[ -x "$build/src/gpufleet-bench" && -x "$build/perf/mpi_allreduce_loop" ]] ||
  scripts/build.sh release >/dev/null
. tests/ompi_env.sh
export "${OMPI_TEST_ENV[@]}"
unset OMPI_MCA_rmaps_base_oversubscribe  # one rank per core: a timing run must not oversubscribe
lo=65536 hi=16777216 factor=4 warmup=5 iters=50
out=perf/results/bench_mpi
rm -rf "$out" && mkdir -p "$out"
for r in $(seq "$rounds"); do
  mpirun -np 2 "$build/src/gpufleet" bench collective all_reduce -b $lo -e $hi -f $factor \
    -w $warmup -n $iters -c 0 --format json -o "$out/gpufleet.$r.json"
  mpirun -np 2 "$build/perf/mpi_allreduce_loop" $lo $hi $factor $warmup $iters > "$out/bare.$r.txt"
done
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
g, b = {}, {}
for r in range(1, rounds + 1):
    for row in json.load(open(f"{out}/gpufleet.{r}.json"))["results"]:
        g.setdefault(row["bytes"], []).append(row["busbw_bytes_per_s"])
    for line in open(f"{out}/bare.{r}.txt"):
        size, _, bw = line.split()
        b.setdefault(int(size), []).append(float(bw))
print(f"{'size (B)':>10} {'gpufleet busbw':>15} {'bare loop busbw':>16} {'ratio':>6}   (medians of {rounds}, GB/s)")
ratios = []
for size in sorted(g):
    gm, bm = statistics.median(g[size]), statistics.median(b[size])
    ratios.append(gm / bm)
    print(f"{size:>10} {gm/1e9:>15.2f} {bm/1e9:>16.2f} {gm/bm:>6.3f}")
print(f"median ratio over sizes: {statistics.median(ratios):.3f}")
PY
