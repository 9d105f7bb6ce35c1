// storage-latency: the mean latency of a block device's IOs over the window
// stays under 10 ms; above that a checkpoint or the data loader stalls the job.
// A warning, not a drain: one window of a second or two cannot tell a failing
// device from a healthy one under a checkpoint burst (in the cluster in a box,
// four nodes starting at once on one disk read 10.8 ms and all four drained).
// Sustained latency is the agent's alert (GpufleetStorageLatencyHigh: a 5 m
// rate, for 10 m).
#include <fmt/format.h>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckStorageLatency(const CheckContext& ctx) {
  std::vector<Finding> out;
  for (const auto& d : ctx.disk_latency) {
    if (d.ios < ctx.limits.storage_min_ios || d.mean_latency_s <= ctx.limits.storage_latency_s) {
      continue;
    }
    out.push_back({Status::kWarn, "", d.device,
                   fmt::format("mean IO latency {:.1f} ms over {:.0f} IOs (limit {:.0f} ms)",
                               d.mean_latency_s * 1e3, d.ios, ctx.limits.storage_latency_s * 1e3),
                   Action::kNone});
  }
  return out;
}

}  // namespace gpufleet::checks
