#!/bin/bash
# Starts a one-node Slurm (munged + slurmctld + slurmd, this host, no systemd) for tests, using
# the gres.conf and topology.conf already in DIR (as `gpufleet emit slurm-conf -o DIR` writes
# them), with NGPUS fake GPU devices DIR/dev/nvidia0.. (mknod copies of /dev/null, which Slurm
# accepts as GPUs). Writes DIR/slurm.conf; use SLURM_CONF=DIR/slurm.conf afterwards.
# usage: scripts/start-slurm.sh DIR GRES_TYPE NGPUS      stop: scripts/stop-slurm.sh DIR
# Recipe and pitfalls: ../shared/reference/real-components.md §1.
set -euo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
D=$1 TYPE=$2 NGPUS=$3
H=$(hostname -s)
mkdir -p "$D"/{state,spool,log,dev}

[ -s /etc/munge/munge.key ] || { mungekey --create --keyfile=/etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key; chmod 0400 /etc/munge/munge.key; }
install -d -o munge -g munge -m 0755 /run/munge
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged
  for i in $(seq 50); do munge -n </dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi
for ((g = 0; g < NGPUS; g++)); do [ -e "$D/dev/nvidia$g" ] || mknod -m 666 "$D/dev/nvidia$g" c 1 3; done

cat > "$D/slurm.conf" <<CONF
ClusterName=gpufleet-test
SlurmctldHost=${H}(127.0.0.1)
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
GresTypes=gpu
TopologyPlugin=topology/tree
NodeName=${H} NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 Gres=gpu:${TYPE}:${NGPUS} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$D/slurm.conf
slurmctld
slurmd
for i in $(seq 100); do
  [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break; sleep 0.1
done
if [ "$(sinfo -h -o %T 2>/dev/null)" != idle ]; then
  echo "slurm not ready: node is '$(sinfo -h -o %T 2>/dev/null)'" >&2
  tail -n 20 "$D"/log/*.log >&2
  exit 1
fi
echo "$D"
