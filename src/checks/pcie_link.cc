// pcie-link: GPU and NIC links trained at their maximum speed and width.
#include <fmt/format.h>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckPcieLinks(const CheckContext& ctx) {
  std::vector<Finding> out;
  for (const auto& d : ctx.node->pci) {
    if (d.kind != topo::DeviceKind::kGpu && d.kind != topo::DeviceKind::kNic) continue;
    if (d.max.speed_gt_per_s <= 0 || d.current.speed_gt_per_s <= 0) continue;
    if (d.current.speed_gt_per_s < d.max.speed_gt_per_s || d.current.width < d.max.width) {
      // An idle GPU may step its link down to save power; a narrower link is never idle power.
      const bool narrower = d.current.width < d.max.width;
      out.push_back({narrower ? Status::kFail : Status::kWarn, "",
                     fmt::format("{} {}", topo::DeviceKindName(d.kind), d.busid),
                     fmt::format("link {:g} GT/s x{} of {:g} GT/s x{}", d.current.speed_gt_per_s,
                                 d.current.width, d.max.speed_gt_per_s, d.max.width),
                     narrower ? Action::kDrain : Action::kNone});
    }
  }
  // NVML's view, for a live node whose sysfs link files are not readable.
  if (!out.empty()) return out;
  for (const auto& g : ctx.gpus) {
    if (!g.has_pcie || g.pcie_width_max <= 0 || g.pcie_width >= g.pcie_width_max) continue;
    out.push_back({Status::kFail, "", GpuName(g),
                   fmt::format("PCIe link x{} of x{} (gen {} of {})", g.pcie_width,
                               g.pcie_width_max, g.pcie_gen, g.pcie_gen_max),
                   Action::kDrain});
  }
  return out;
}

}  // namespace gpufleet::checks
