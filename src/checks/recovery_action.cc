// recovery-action: what the driver itself says to do
// (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, drivers 550+).
#include <fmt/format.h>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckRecoveryAction(const CheckContext& ctx) {
  std::vector<Finding> out;
  for (const auto& g : ctx.gpus) {
    if (!g.has_recovery || g.recovery == sys::RecoveryAction::kNone) continue;
    const Action action =
        g.recovery == sys::RecoveryAction::kNodeReboot ? Action::kDrainAndReboot : Action::kDrain;
    out.push_back(
        {Status::kFail, "", GpuName(g),
         fmt::format("the driver asks for recovery action {}", sys::RecoveryActionName(g.recovery)),
         action});
  }
  return out;
}

}  // namespace gpufleet::checks
