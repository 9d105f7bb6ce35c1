#!/usr/bin/env bash
# Multi-node launch for h100-1024gpu: 128 nodes x 8 GPUs (gpufleet emit torchrun).
# Run on every node, e.g. from sbatch or pdsh, with MASTER_ADDR set to one node's address.
set -euo pipefail
: "${MASTER_ADDR:?set MASTER_ADDR to the rendezvous node}"
MASTER_PORT="${MASTER_PORT:-29500}"

export NCCL_SOCKET_IFNAME='^lo,docker'  # bootstrap and socket traffic on the control network; comma list of prefixes, '^' excludes, '=' exact names
export NCCL_IB_TIMEOUT='20'  # per-try timeout 4.096 us x 2^value (20 = 4.3 s); range 0-31, NCCL's default since 2.23
export NCCL_IB_RETRY_CNT='7'  # retries before a transport error (0-7); timeout x retries = ~30 s to give up
export NCCL_DEBUG='WARN'  # VERSION, WARN, INFO, TRACE; INFO to debug topology
export TORCH_NCCL_ASYNC_ERROR_HANDLING='1'  # tear the process group down on NCCL errors and timeouts instead of hanging (0-3; 1 = abort communicators and the process)
export TORCH_NCCL_ENABLE_MONITORING='1'  # the watchdog's heartbeat monitor kills a rank whose watchdog stalls (0|1)
export TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC='600'  # seconds without a watchdog heartbeat before the monitor aborts the rank

# Workload flags from the spec: a template to map onto your script's arguments.
TRAIN_ARGS=(--strategy zero1 --tensor-parallel 8 --pipeline-parallel 2 --context-parallel 1 --virtual-stages 5 --sequence-parallel --micro-batch-size 1 --gradient-accumulation 16 --global-batch-size 1024 --seq-length 4096 --precision bf16 --activation-checkpointing selective)

exec torchrun \
  --nnodes=128 --nproc-per-node=8 \
  --rdzv-backend=c10d --rdzv-endpoint="${MASTER_ADDR}:${MASTER_PORT}" \
  --rdzv-id='h100-1024gpu' --max-restarts=3 \
  'train.py' "${TRAIN_ARGS[@]}"
