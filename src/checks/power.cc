// power: under load a healthy GPU draws near its rating. "Under 350 W on a
// 400 W part" is the field rule (an A100 at full load that cannot reach its
// power is clock- or power-delivery-limited); here made relative to the
// catalog's TDP (or the enforced limit when an operator capped it lower).
#include <fmt/format.h>

#include <algorithm>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckPower(const CheckContext& ctx) {
  std::vector<Finding> out;
  // Without a spec the enforced limit NVML reports is the rating.
  const double tdp = ctx.spec != nullptr ? ctx.spec->cluster.nodes.gpu.tdp_w : 0;
  for (const auto& g : ctx.gpus) {
    if (!g.has_power || !g.has_util || g.util_ratio < ctx.limits.load_util) continue;
    double rated = tdp;
    if (g.has_power_limit && g.power_limit_watts > 0) {
      rated = rated > 0 ? std::min(rated, g.power_limit_watts) : g.power_limit_watts;
    }
    if (rated <= 0) continue;
    const double floor = rated * ctx.limits.power_fraction;
    if (g.power_watts >= floor) continue;
    out.push_back({Status::kWarn, "", GpuName(g),
                   fmt::format("draws {:.0f} W at {:.0f} % busy, below {:.0f} W ({:.0f} % of "
                               "{:.0f} W): clock- or power-delivery-limited",
                               g.power_watts, g.util_ratio * 100, floor,
                               ctx.limits.power_fraction * 100, rated),
                   Action::kNone});
  }
  return out;
}

}  // namespace gpufleet::checks
