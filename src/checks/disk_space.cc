// disk-space: local filesystems (checkpoint hot tier, /tmp, the root) are not nearly full.
#include <fmt/format.h>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckDiskSpace(const CheckContext& ctx) {
  std::vector<Finding> out;
  for (const auto& d : ctx.disks) {
    if (d.used_fraction > ctx.limits.disk_full_fraction) {
      out.push_back({Status::kFail, "", d.path,
                     fmt::format("{:.1f} % used (limit {:.0f} %)", d.used_fraction * 100,
                                 ctx.limits.disk_full_fraction * 100),
                     Action::kDrain});
    } else if (d.used_fraction > ctx.limits.disk_full_fraction - 0.10) {
      out.push_back({Status::kWarn, "", d.path, fmt::format("{:.1f} % used", d.used_fraction * 100),
                     Action::kNone});
    }
  }
  return out;
}

}  // namespace gpufleet::checks
