#pragma once
// Affinity advice: for each GPU, the NICs nearest to it (the NCCL_IB_HCA order
// NCCL's rail-local choice follows), its NUMA node and cores (for per-rank
// binding with numactl or srun --cpu-bind). Consumed by `emit`. Pure.

#include <string>
#include <vector>

#include "topo/node_topology.h"

namespace gpufleet::topo {

struct GpuAffinity {
  int gpu = 0;
  std::string busid;
  int numa = -1;
  std::string cpulist;            // the NUMA node's CPUs ("" if unknown)
  std::vector<std::string> nics;  // nearest first (PIX, PXB, PHB, SYS; then name)
  std::string nearest_path;       // NCCL path to the first NIC ("PIX")
  std::string numactl;            // "numactl --cpunodebind=0 --membind=0"
};

std::vector<GpuAffinity> AffinityOf(const NodeTopology& t);
// NCCL_IB_HCA listing each GPU's nearest NIC once, in GPU order: "=mlx5_0,mlx5_3,...".
std::string NcclIbHca(const std::vector<GpuAffinity>& a);

}  // namespace gpufleet::topo
