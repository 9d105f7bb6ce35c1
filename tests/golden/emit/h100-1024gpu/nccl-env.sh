# NCCL environment for h100-1024gpu (gpufleet emit nccl-env). Source it: . ./nccl-env.sh
# NCCL_IB_HCA is not set: give --topology (a capture folder or hwloc XML) to order the
# RDMA ports by GPU affinity; without it NCCL uses every active port.
# bootstrap and socket traffic on the control network; comma list of prefixes, '^' excludes, '=' exact names
export NCCL_SOCKET_IFNAME='^lo,docker'
# per-try timeout 4.096 us x 2^value (20 = 4.3 s); range 0-31, NCCL's default since 2.23
export NCCL_IB_TIMEOUT='20'
# retries before a transport error (0-7); timeout x retries = ~30 s to give up
export NCCL_IB_RETRY_CNT='7'
# VERSION, WARN, INFO, TRACE; INFO to debug topology
export NCCL_DEBUG='WARN'
# tear the process group down on NCCL errors and timeouts instead of hanging (0-3; 1 = abort communicators and the process)
export TORCH_NCCL_ASYNC_ERROR_HANDLING='1'
# the watchdog's heartbeat monitor kills a rank whose watchdog stalls (0|1)
export TORCH_NCCL_ENABLE_MONITORING='1'
# seconds without a watchdog heartbeat before the monitor aborts the rank
export TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC='600'
