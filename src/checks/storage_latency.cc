// storage-latency: the mean latency of a block device's IOs over the window
// stays under 10 ms; above that a checkpoint or the data loader stalls the job.
#include <fmt/format.h>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckStorageLatency(const CheckContext& ctx) {
  std::vector<Finding> out;
  for (const auto& d : ctx.disk_latency) {
    if (d.ios < ctx.limits.storage_min_ios || d.mean_latency_s <= ctx.limits.storage_latency_s) {
      continue;
    }
    out.push_back({Status::kFail, "", d.device,
                   fmt::format("mean IO latency {:.1f} ms over {:.0f} IOs (limit {:.0f} ms)",
                               d.mean_latency_s * 1e3, d.ios, ctx.limits.storage_latency_s * 1e3),
                   Action::kDrain});
  }
  return out;
}

}  // namespace gpufleet::checks
