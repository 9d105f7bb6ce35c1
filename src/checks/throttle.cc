// throttle: clocks cut by the hardware (thermal, power brake, slowdown) while
// the GPU works. A software power cap at the power limit is normal and only
// reported by the agent; software thermal slowdown warns.
#include <fmt/format.h>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckThrottle(const CheckContext& ctx) {
  std::vector<Finding> out;
  for (const auto& g : ctx.gpus) {
    if (!g.has_clock_events || g.clock_event_reasons == 0) continue;
    const bool loaded = g.has_util && g.util_ratio >= ctx.limits.load_util;
    std::string hard, soft;
    for (const auto& r : sys::ClockEventReasons()) {
      if ((g.clock_event_reasons & r.bit) == 0) continue;
      if (r.hardware) hard += (hard.empty() ? "" : ", ") + std::string(r.name);
      if (std::string_view(r.name) == "sw_thermal_slowdown") soft = r.name;
    }
    const std::string load = g.has_util ? fmt::format("{:.0f} % busy", g.util_ratio * 100) : "";
    const std::string clocks = g.has_clocks && g.sm_clock_max_hz > 0
                                   ? fmt::format(", SM clock {:.0f} of {:.0f} MHz",
                                                 g.sm_clock_hz / 1e6, g.sm_clock_max_hz / 1e6)
                                   : "";
    if (!hard.empty()) {
      // A hardware slowdown is a >= 2x clock cut: fail under load, warn when idle.
      out.push_back({loaded ? Status::kFail : Status::kWarn, "", GpuName(g),
                     fmt::format("hardware clock slowdown ({}) at {}{}", hard, load, clocks),
                     loaded ? Action::kDrain : Action::kNone});
    } else if (!soft.empty() && loaded) {
      out.push_back({Status::kWarn, "", GpuName(g),
                     fmt::format("software thermal slowdown at {}{}{}", load, clocks,
                                 g.has_temp ? fmt::format(", {:.0f} °C", g.temp_celsius) : ""),
                     Action::kNone});
    }
  }
  return out;
}

}  // namespace gpufleet::checks
