#!/bin/bash
# Real Slurm accepts what `gpufleet emit` writes: slurmctld and slurmd start with our gres.conf and
# topology.conf (the node reaches idle with its GPUs), `scontrol show topology` shows our switch,
# and `sbatch --test-only` accepts our batch script. One node = this host, 2 fake GPUs.
# usage: slurm_emit.sh GPUFLEET_BINARY REPO_ROOT.  Skips (77) without Slurm unless CI=true.
set -uo pipefail
BIN=$1 ROOT=$2
. "$(dirname "$0")/slurm_lib.sh"
"$BIN" emit sbatch "${SET[@]}" -o "$T/sbatch.sh" || exit 1
bash -n "$T/sbatch.sh" || { echo "FAIL: bash -n sbatch.sh"; exit 1; }
TYPE=$(sed -n 's/.* Type=\([a-z0-9_]*\) .*/\1/p' "$T/gres.conf" | head -n 1)
if ! "$ROOT/scripts/start-slurm.sh" "$T" "$TYPE" 2 >/dev/null; then
  echo "FAIL: Slurm did not start with the emitted gres.conf/topology.conf"; tail -n 30 "$T"/log/*.log; exit 1
fi
export SLURM_CONF=$T/slurm.conf
scontrol show topology | grep -q "SwitchName=leaf01" || { echo "FAIL: topology.conf not loaded"; scontrol show topology; exit 1; }
scontrol show node "$H" | grep -q "Gres=gpu:$TYPE:2" || { echo "FAIL: GPUs not registered"; scontrol show node "$H"; exit 1; }
out=$(timeout 30 sbatch --test-only "$T/sbatch.sh" 2>&1)
echo "$out"
echo "$out" | grep -q "to start at" || { echo "FAIL: sbatch --test-only refused the script"; exit 1; }
echo "ok: Slurm accepted gres.conf, topology.conf and sbatch.sh"
