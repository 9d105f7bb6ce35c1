// nccl-env: a shell file of NCCL and PyTorch settings for this cluster.
#include <fmt/format.h>

#include "emit/emit.h"

namespace gpufleet::emit {

Result<std::vector<GeneratedFile>> EmitNcclEnv(const model::Spec& spec, const EmitOptions& o) {
  std::string out = fmt::format(
      "# NCCL environment for {} (gpufleet emit nccl-env). Source it: . ./nccl-env.sh\n",
      CommentSafe(spec.cluster.name));
  if (o.topology == nullptr && spec.cluster.nodes.count > 1) {
    out +=
        "# NCCL_IB_HCA is not set: give --topology (a capture folder or hwloc XML) to order the\n"
        "# RDMA ports by GPU affinity; without it NCCL uses every active port.\n";
  }
  for (const auto& e : NcclEnvironment(spec, o)) {
    out += fmt::format("# {}\nexport {}={}\n", e.why, e.name, ShellQuote(e.value));
  }
  return std::vector<GeneratedFile>{{"nccl-env.sh", out}};
}

}  // namespace gpufleet::emit
