// utilization: a GPU that a job holds should be busy; under 90 % while a
// process runs on it usually means an input pipeline, a straggler or a
// communication stall (a warning, never a drain).
#include <fmt/format.h>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckUtilization(const CheckContext& ctx) {
  std::vector<Finding> out;
  for (const auto& g : ctx.gpus) {
    if (g.pids.empty() || !g.has_util || g.util_ratio >= ctx.limits.busy_util) continue;
    out.push_back({Status::kWarn, "", GpuName(g),
                   fmt::format("{:.0f} % busy while {} process{} on it (want >= {:.0f} %)",
                               g.util_ratio * 100, g.pids.size(),
                               g.pids.size() == 1 ? " runs" : "es run", ctx.limits.busy_util * 100),
                   Action::kNone});
  }
  return out;
}

}  // namespace gpufleet::checks
