// imex: on a node whose GPUs are in a multi-node NVLink domain, the IMEX daemon
// (nvidia-imex) that exports and imports GPU memory between the domain's nodes runs, its
// node list names this node, and the peers' daemons answer on its port. Without it,
// CUDA's fabric memory handles (what NCCL's multi-node NVLink transport and NVSHMEM use
// across trays) fail, and a job spanning trays falls back to the network or stops.
// NVIDIA IMEX guide: config /etc/nvidia-imex/config.cfg, IMEX_NODE_CONFIG_FILE one
// address per line, SERVER_PORT 50000 by default.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/check.h"

namespace gpufleet::checks {

std::vector<Finding> CheckImex(const CheckContext& ctx) {
  const ImexState& s = ctx.imex;
  if (!s.checked) return {};
  const std::string daemon = "nvidia-imex";
  if (!s.config_error.empty()) {
    return {{Status::kFail, "", daemon,
             fmt::format("{}: multi-node NVLink memory sharing is not configured", s.config_error),
             Action::kDrain}};
  }
  std::vector<Finding> out;
  if (!s.daemon_running) {
    out.push_back({Status::kFail, "", daemon,
                   fmt::format("not running (config {}): CUDA fabric memory across the NVLink "
                               "domain's trays fails",
                               s.config),
                   Action::kDrain});
  }
  if (s.nodes.empty()) {
    out.push_back({Status::kFail, "", s.nodes_file, "lists no node: the IMEX domain is empty",
                   Action::kDrain});
    return out;
  }
  if (!s.self_listed) {
    out.push_back({Status::kFail, "", s.nodes_file,
                   fmt::format("none of this node's addresses is among its {} node(s): the "
                               "daemon cannot join the domain",
                               s.nodes.size()),
                   Action::kDrain});
  }
  if (!s.unreachable.empty()) {
    // Every peer silent is this node's problem (its network or its own daemon); some peers
    // silent are theirs, and their own checks drain them.
    const bool all = static_cast<int>(s.unreachable.size()) >= s.peers;
    out.push_back(
        {all ? Status::kFail : Status::kWarn, "", daemon,
         fmt::format("{} of {} IMEX peer(s) do not answer on port {}: {}", s.unreachable.size(),
                     s.peers, s.port, fmt::join(s.unreachable, ", ")),
         all ? Action::kDrain : Action::kNone});
  }
  return out;
}

}  // namespace gpufleet::checks
