# Sourced by the Slurm e2e tests: skips (77) without Slurm unless CI=true, makes the state folder T
# (removed on exit, daemons stopped), and writes into it the gres.conf and topology.conf that
# `gpufleet emit slurm-conf` makes for a one-node, 2-GPU cluster named after this host (H), with the
# spec changes in SET. Expects BIN (gpufleet) and ROOT (the repository) to be set.
if ! command -v slurmctld >/dev/null && [ ! -x /usr/sbin/slurmctld ]; then
  if [ "${CI:-}" = true ]; then echo "FAIL: Slurm is not installed (scripts/deps.sh installs it)"; exit 1; fi
  echo "SKIP: Slurm is not installed (run scripts/deps.sh)"; exit 77
fi
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
T=$(mktemp -d /tmp/gpufleet-slurm.XXXXXX)
cleanup() { "$ROOT/scripts/stop-slurm.sh" "$T"; rm -rf "$T"; }
trap cleanup EXIT
H=$(hostname -s)
SET=(--set nodes.count=1 --set nodes.gpu.count=2 --set nodes.cpu.sockets=1 --set nodes.cpu.cores=2)
"$BIN" emit slurm-conf "${SET[@]}" --nodes "$H" --gpu-device-prefix "$T/dev/nvidia" -o "$T" || exit 1
