#!/bin/bash
# Slurm batch script for h100-1024gpu (gpufleet emit sbatch): 128 nodes x 8 GPUs, one torchrun per node.
#SBATCH --job-name=h100-1024gpu
#SBATCH --nodes=128
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
# CPUs per task: the spec's 14 cores per GPU x 8 GPUs (torchrun's ranks share them).
#SBATCH --cpus-per-task=112
#SBATCH --exclusive
# Requeue when a node fails; append so the log survives the requeue.
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=%x-%j.out
set -euo pipefail
# Since Slurm 22.05 srun no longer takes --cpus-per-task from sbatch: without this every
# step's task would get one CPU.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"

export NCCL_SOCKET_IFNAME='^lo,docker'  # bootstrap and socket traffic on the control network; comma list of prefixes, '^' excludes, '=' exact names
export NCCL_IB_TIMEOUT='20'  # per-try timeout 4.096 us x 2^value (20 = 4.3 s); range 0-31, NCCL's default since 2.23
export NCCL_IB_RETRY_CNT='7'  # retries before a transport error (0-7); timeout x retries = ~30 s to give up
export NCCL_DEBUG='WARN'  # VERSION, WARN, INFO, TRACE; INFO to debug topology
export TORCH_NCCL_ASYNC_ERROR_HANDLING='1'  # tear the process group down on NCCL errors and timeouts instead of hanging (0-3; 1 = abort communicators and the process)
export TORCH_NCCL_ENABLE_MONITORING='1'  # the watchdog's heartbeat monitor kills a rank whose watchdog stalls (0|1)
export TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC='600'  # seconds without a watchdog heartbeat before the monitor aborts the rank

# Prolog: every node checks its own health against the cluster spec before any rank runs.
# As the job user it cannot drain a node (Slurm's HealthCheckProgram, as root, does); a
# node that fails stops the job here, named in the output. --unknown-ok: a job user cannot
# read the kernel log (kernel.dmesg_restrict), which alone is no reason to stop. One task
# per node, whatever the job's own tasks per node.
if ! srun --nodes="$SLURM_JOB_NUM_NODES" --ntasks="$SLURM_JOB_NUM_NODES" --ntasks-per-node=1 \
    --cpus-per-task=1 --kill-on-bad-exit=1 \
    'gpufleet' check --slurm --unknown-ok; then
  echo "gpufleet: a node failed its health check (above): not starting the job" >&2
  exit 1
fi

MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_ADDR MASTER_PORT=29500
TRAIN_ARGS=(--strategy zero1 --tensor-parallel 8 --pipeline-parallel 2 --context-parallel 1 --virtual-stages 5 --sequence-parallel --micro-batch-size 1 --gradient-accumulation 16 --global-batch-size 1024 --seq-length 4096 --precision bf16 --activation-checkpointing selective)

srun --ntasks-per-node=1 --kill-on-bad-exit=1 \
  torchrun --nnodes="$SLURM_NNODES" --nproc-per-node=8 \
  --rdzv-backend=c10d --rdzv-endpoint="${MASTER_ADDR}:${MASTER_PORT}" \
  --rdzv-id="$SLURM_JOB_ID" --max-restarts=3 \
  'train.py' "${TRAIN_ARGS[@]}"
