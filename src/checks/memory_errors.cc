// memory-errors: uncorrectable ECC since the driver loaded, and row remapping
// pending (a reset applies it) or failed (the GPU is out of spare rows: RMA).
// NVIDIA, "GPU memory error management", error recovery and response flags.
#include <fmt/format.h>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckMemoryErrors(const CheckContext& ctx) {
  std::vector<Finding> out;
  for (const auto& g : ctx.gpus) {
    if (g.has_remap && g.remap_failed) {
      out.push_back({Status::kFail, "", GpuName(g),
                     fmt::format("row remapping failed ({} rows remapped for uncorrectable "
                                 "errors): the GPU needs replacing",
                                 g.remapped_rows_uncorrected),
                     Action::kDrainAndReboot});
    } else if (g.has_remap && g.remap_pending) {
      out.push_back({Status::kFail, "", GpuName(g),
                     "row remap pending: a GPU reset applies it; until then the bad row stays "
                     "in use",
                     Action::kDrain});
    }
    if (g.has_ecc && g.ecc_uncorrected > 0) {
      out.push_back(
          {Status::kFail, "", GpuName(g),
           fmt::format("{} uncorrectable ECC errors since the driver loaded", g.ecc_uncorrected),
           Action::kDrain});
    }
  }
  return out;
}

}  // namespace gpufleet::checks
