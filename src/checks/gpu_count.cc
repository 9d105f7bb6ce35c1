// gpu-count: the GPUs the spec expects are there and answer, and are the model
// the spec names (a GPU fell off the bus: XID 79 class; a wrong SKU in the rack).
#include <fmt/format.h>

#include <algorithm>

#include "checks/check.h"
#include "model/catalog.h"

namespace gpufleet::checks {

std::vector<Finding> CheckGpuCount(const CheckContext& ctx) {
  std::vector<Finding> out;
  if (ctx.nvml_expected && !ctx.nvml) {
    // Without NVML, XIDs from the kernel log still count, but ECC, row remaps, throttling,
    // NVLink and the recovery action cannot be read: say so instead of passing.
    out.push_back({Status::kUnknown, "", "node",
                   fmt::format("GPU health cannot be read: {}",
                               ctx.nvml_note.empty() ? "NVML not loaded" : ctx.nvml_note),
                   Action::kNone});
  }
  const int on_bus = static_cast<int>(ctx.node->gpus.size());
  const int in_nvml = static_cast<int>(ctx.gpus.size());
  if (ctx.spec != nullptr) {
    const int want = ctx.spec->cluster.nodes.gpus_per_node;
    // The better of the two views: NVML may miss a GPU the PCI bus still shows, and the
    // reverse on a captured tree with no NVML at all.
    const int have = ctx.nvml ? std::min(on_bus == 0 ? in_nvml : on_bus, in_nvml) : on_bus;
    if (have < want) {
      out.push_back({Status::kFail, "", "node",
                     fmt::format("{} of {} GPUs {}: a GPU has fallen off the bus or is not seated",
                                 have, want, ctx.nvml ? "seen by NVML" : "on the PCI bus"),
                     Action::kDrainAndReboot});
    }
  } else if (ctx.nvml && in_nvml < on_bus) {
    // Without a spec the PCI bus is the expectation: a GPU there that the driver lost.
    out.push_back({Status::kFail, "", "node",
                   fmt::format("{} of the {} GPUs on the PCI bus are seen by NVML: a GPU has "
                               "fallen off the bus",
                               in_nvml, on_bus),
                   Action::kDrainAndReboot});
  }
  const model::GpuSpec* expected = ctx.spec != nullptr ? &ctx.spec->cluster.nodes.gpu : nullptr;
  for (const auto& g : ctx.gpus) {
    if (g.lost) {
      out.push_back({Status::kFail, "", GpuName(g),
                     "NVML says the GPU is lost (NVML_ERROR_GPU_IS_LOST): it fell off the bus",
                     Action::kDrainAndReboot});
      continue;
    }
    if (!g.hung_call.empty()) {
      out.push_back(
          {Status::kFail, "", GpuName(g),
           fmt::format("{} did not return in time: the GPU or its driver is wedged", g.hung_call),
           Action::kDrainAndReboot});
      continue;
    }
    if (g.name.empty() || expected == nullptr) continue;
    std::string_view name = g.name;
    if (name.substr(0, 7) == "NVIDIA ") name.remove_prefix(7);
    const model::GpuSpec* found = model::Catalog::Builtin().FindGpu(name);
    if (found != nullptr && found->name != expected->name) {
      out.push_back(
          {Status::kFail, "", GpuName(g),
           fmt::format("is a {} ({}), the spec says {}", found->name, g.name, expected->name),
           Action::kDrain});
    }
  }
  return out;
}

}  // namespace gpufleet::checks
