// gpu-count: the GPUs the spec expects are on the PCI bus (one fell off: XID 79 class).
#include <fmt/format.h>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckGpuCount(const CheckContext& ctx) {
  const int want = ctx.spec->cluster.nodes.gpus_per_node;
  const int have = static_cast<int>(ctx.node->gpus.size());
  if (have >= want) return {};
  return {{Status::kFail, "", "node",
           fmt::format("{} of {} GPUs on the PCI bus: a GPU has fallen off the bus or is not "
                       "seated",
                       have, want),
           Action::kDrainAndReboot}};
}

}  // namespace gpufleet::checks
