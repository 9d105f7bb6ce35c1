// infiniband: every RDMA port is ACTIVE and LinkUp, and runs at the spec's compute rate.
#include <fmt/format.h>

#include "base/units.h"
#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckInfinibandPorts(const CheckContext& ctx) {
  std::vector<Finding> out;
  double want = 0;
  for (const auto& n : ctx.spec->cluster.nodes.nics) {
    if (n.role == model::NicRole::kCompute) want = std::max(want, n.port_speed_bytes_per_s);
  }
  for (const auto& nic : ctx.node->nics) {
    for (const auto& p : nic.ports) {
      const std::string who = fmt::format("{} port {}", nic.name, p.number);
      if (p.state != "ACTIVE" || (!p.phys_state.empty() && p.phys_state != "LinkUp")) {
        out.push_back({Status::kFail, "", who,
                       fmt::format("state {} / {}: NCCL uses ACTIVE ports only", p.state,
                                   p.phys_state.empty() ? "-" : p.phys_state),
                       Action::kDrain});
      } else if (want > 0 && p.rate_bytes_per_s > 0 && p.link_layer == "InfiniBand" &&
                 p.rate_bytes_per_s < want * 0.99) {
        out.push_back(
            {Status::kFail, "", who,
             fmt::format("runs at {}, the spec says {}", units::FormatBitRate(p.rate_bytes_per_s),
                         units::FormatBitRate(want)),
             Action::kDrain});
      }
    }
  }
  return out;
}

}  // namespace gpufleet::checks
