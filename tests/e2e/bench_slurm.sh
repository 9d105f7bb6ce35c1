#!/bin/bash
# `gpufleet bench collective` launched by Slurm instead of mpirun: `srun --mpi=pmix` on a real
# one-node Slurm (4 tasks, overcommitted on its 2 CPUs), every collective verified, the ranks'
# host the Slurm node. usage: bench_slurm.sh GPUFLEET_BINARY REPO_ROOT. Skips (77) without Slurm
# unless CI=true.
set -uo pipefail
BIN=$1 ROOT=$2
. "$(dirname "$0")/slurm_lib.sh"
"$ROOT/scripts/start-slurm.sh" "$T" a100 2 >/dev/null || { echo "FAIL: Slurm did not start"; exit 1; }
export SLURM_CONF=$T/slurm.conf
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0  # OpenMPI's own (bench_mpi.sh)
fail() { echo "FAIL: $*"; exit 1; }
timeout 120 srun --mpi=pmix -n 4 --overcommit -t 2 "$BIN" bench collective all -b 1K -e 64K -f 8 \
  -w 0 -n 2 --format json -o "$T/s.json" > "$T/out" 2>&1 || { cat "$T/out"; fail "srun exited non-zero"; }
python3 - "$T/s.json" "$H" <<'PY' || fail "results"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 4 and d["nodes"] == 1, d
assert all(h.split(".")[0] == sys.argv[2] for h in d["hosts"]), d["hosts"]
assert len({r["op"] for r in d["results"]}) == 7
assert all(r["wrong"] == 0 for r in d["results"])
PY
echo PASS
