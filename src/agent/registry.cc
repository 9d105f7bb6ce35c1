#include "agent/collector.h"

namespace gpufleet::agent {

const std::vector<CollectorInfo>& Collectors() {
  // `self` last: it reports on the others.
  static const std::vector<CollectorInfo> kCollectors = {
      {"gpu", "NVIDIA GPUs through NVML: load, memory, power, clocks, health, XIDs", true,
       &CollectGpu},
      // Off by default: node_exporter, which most sites run, exports the same /proc counters
      // (docs/metrics.md maps them), and storing them twice costs series for nothing.
      {"node",
       "CPU, memory, per-disk IO and latency, per-netdev counters from /proc (what node_exporter "
       "exports; for nodes without it)",
       false, &CollectNode},
      {"infiniband", "RDMA ports from sysfs: state, rate, error counters, link downs", true,
       &CollectInfiniband},
      {"bench", "the last gpufleet bench result of each kind on this node", true, &CollectBench},
      {"self", "the agent itself: collector durations and success, NVML errors, checks", true,
       &CollectSelf},
  };
  return kCollectors;
}

Labels GpuLabels(const sys::GpuSample& g) {
  return {{"gpu", std::to_string(g.index)},
          {"uuid", g.uuid},
          {"pci_bus_id", g.busid},
          {"model", g.name}};
}

}  // namespace gpufleet::agent
