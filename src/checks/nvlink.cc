// nvlink: no NVLink that NVML knows is down, and on an NVSwitch system every GPU
// has the same number of NVSwitch links (a link down on both ends is invisible to
// the first rule).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckNvLinks(const CheckContext& ctx) {
  std::vector<Finding> out;
  for (const auto& g : ctx.gpus) {
    std::string down;
    int n = 0;
    for (const auto& l : g.nvlinks) {
      if (l.active) continue;
      down += fmt::format("{}{}", n++ ? "," : "", l.link);
    }
    if (n == 0) continue;
    out.push_back({Status::kFail, "", GpuName(g),
                   fmt::format("{} of {} NVLinks down (link {}): NCCL falls back to slower paths",
                               n, g.nvlinks.size(), down),
                   Action::kDrain});
  }
  if (!out.empty()) return out;
  std::map<int, int> totals;  // links -> GPUs with that many
  std::vector<std::pair<int, int>> per_gpu;
  for (const auto& g : ctx.node->gpus) {
    const int sw = g.NvSwitchLinkCount();
    if (sw == 0) continue;
    totals[sw]++;
    per_gpu.emplace_back(g.index, sw);
  }
  if (totals.size() <= 1) return out;
  // The count most GPUs share is the healthy one; on a tie, the larger (links go down, not up).
  const int most = std::max_element(totals.begin(), totals.end(), [](const auto& a, const auto& b) {
                     return a.second < b.second || (a.second == b.second && a.first < b.first);
                   })->first;
  for (const auto& [gpu, links] : per_gpu) {
    if (links >= most) continue;
    out.push_back({Status::kFail, "", fmt::format("GPU{}", gpu),
                   fmt::format("{} NVSwitch links active, the other GPUs have {}", links, most),
                   Action::kDrain});
  }
  return out;
}

}  // namespace gpufleet::checks
