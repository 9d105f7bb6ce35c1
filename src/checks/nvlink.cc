// nvlink: on an NVSwitch system every GPU has the same number of NVSwitch links.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckNvLinks(const CheckContext& ctx) {
  std::map<int, int> totals;  // links -> GPUs with that many
  std::vector<std::pair<int, int>> per_gpu;
  for (const auto& g : ctx.node->gpus) {
    const int sw = g.NvSwitchLinkCount();
    if (sw == 0) continue;
    totals[sw]++;
    per_gpu.emplace_back(g.index, sw);
  }
  if (totals.size() <= 1) return {};
  // The count most GPUs share is the healthy one; on a tie, the larger (links go down, not up).
  const int most = std::max_element(totals.begin(), totals.end(), [](const auto& a, const auto& b) {
                     return a.second < b.second || (a.second == b.second && a.first < b.first);
                   })->first;
  std::vector<Finding> out;
  for (const auto& [gpu, links] : per_gpu) {
    if (links >= most) continue;
    out.push_back({Status::kFail, "", fmt::format("GPU{}", gpu),
                   fmt::format("{} NVSwitch links active, the other GPUs have {}", links, most),
                   Action::kDrain});
  }
  return out;
}

}  // namespace gpufleet::checks
