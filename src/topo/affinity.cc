#include "topo/affinity.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpufleet::topo {

std::vector<GpuAffinity> AffinityOf(const NodeTopology& t) {
  std::vector<GpuAffinity> out;
  for (const auto& g : t.gpus) {
    GpuAffinity a;
    a.gpu = g.index;
    a.busid = t.pci[static_cast<size_t>(g.pci)].busid;
    a.numa = t.NumaOf(g.pci);
    if (const NumaNode* n = t.FindNuma(a.numa)) a.cpulist = n->cpulist;
    if (a.numa >= 0) a.numactl = fmt::format("numactl --cpunodebind={0} --membind={0}", a.numa);
    std::vector<std::pair<int, std::string>> ranked;
    for (const auto& n : t.nics) {
      // Only RDMA-capable ports with a live link matter for NCCL_IB_HCA.
      bool active = n.ports.empty();
      for (const auto& p : n.ports) active = active || p.state == "ACTIVE";
      if (!active) continue;
      ranked.emplace_back(static_cast<int>(PathBetween(t, g.pci, n.pci).nccl), n.name);
    }
    std::stable_sort(ranked.begin(), ranked.end());
    for (const auto& [path, name] : ranked) a.nics.push_back(name);
    if (!ranked.empty())
      a.nearest_path = std::string(NcclPathName(static_cast<NcclPath>(ranked[0].first)));
    out.push_back(a);
  }
  return out;
}

std::string NcclIbHca(const std::vector<GpuAffinity>& a) {
  std::vector<std::string> order;
  for (const auto& g : a) {
    if (!g.nics.empty() && std::find(order.begin(), order.end(), g.nics[0]) == order.end()) {
      order.push_back(g.nics[0]);
    }
  }
  if (order.empty()) return "";
  std::string out = "=";
  for (size_t i = 0; i < order.size(); ++i) out += (i ? "," : "") + order[i];
  return out;
}

}  // namespace gpufleet::topo
