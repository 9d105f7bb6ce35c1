#!/usr/bin/env bash
# Two builds of `gpufleet sim step` side by side on one core (taskset -c 0), their runs
# alternated (A B, B A, ...) so that the machine's drift falls on both alike, which two
# back-to-back hyperfine series do not give on a shared machine: the layout search on 1,024
# GPUs (dense and mixture of experts), on the 16,384-GPU example, and the 8-to-100,000-GPU sweep.
# Prints each case's median per build and their ratio.
# Usage: perf/sim_ab.sh BEFORE_BIN AFTER_BIN [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 && -x "$1" && -x "$2" ]] || { echo "usage: perf/sim_ab.sh BEFORE_BIN AFTER_BIN [RUNS]" >&2; exit 2; }
/usr/bin/python3 - "$1" "$2" "${3:-41}" <<'PY'
import statistics, subprocess, sys, time
before, after, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
cases = [
    ["sim", "step", "examples/h100-1024gpu.yaml", "--search"],
    ["sim", "step", "examples/h100-16gpu-moe.yaml", "--search", "--gpus", "1024"],
    ["sim", "step", "examples/h100-16384gpu.yaml", "--search"],
    ["sim", "step", "examples/h100-1024gpu.yaml", "--sweep", "gpus=8..100000"],
]
for case in cases:
    times = {before: [], after: []}
    for i in range(runs):
        for binary in (before, after) if i % 2 == 0 else (after, before):
            start = time.perf_counter()
            subprocess.run(["taskset", "-c", "0", binary] + case, stdout=subprocess.DEVNULL,
                           check=True)
            times[binary].append(time.perf_counter() - start)
    b, a = (statistics.median(times[x]) * 1e3 for x in (before, after))
    print(f"{' '.join(case):62s} before {b:7.1f} ms  after {a:7.1f} ms  ratio {a / b:.2f}")
PY
