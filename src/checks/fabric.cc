// fabric: a GPU in a multi-node NVLink domain (GB200/GB300 NVL72) has finished its
// registration with the fabric manager without error, its fabric reports no degraded
// bandwidth, unhealthy route or wrong configuration, it sits in the same domain (cluster
// UUID) and partition (clique) as the node's other GPUs, and every one of its NVLinks is
// up: a Blackwell GPU has 18 (NVIDIA GB200 NVL72 and NVLink 5 pages: "18 NVLink
// connections per GPU", 1.8 TB/s), and one link short leaves the whole NVLink domain's
// collectives at the slowest GPU's bandwidth. GPUs without such a fabric (state "not
// supported": PCIe GPUs, HGX boards whose driver does not report it) are not judged here.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "checks/check.h"

namespace gpufleet::checks {

namespace {

constexpr int kNvLink5LinksPerGpu = 18;
constexpr int kNvmlNvLinkVersion5 = 7;  // NVML_NVLINK_VERSION_5_0

// A GPU this check judges: one registering with a fabric, or registered in a multi-node domain
// (a cluster UUID), or whose registration failed. An HGX board on driver R550 or later reports
// "completed" with an all-zero UUID: its NVSwitches are inside the node, and the nvlink check
// judges it.
bool InFabric(const sys::GpuSample& g) {
  if (!g.has_fabric) return false;
  switch (g.fabric.state) {
    case sys::FabricState::kNotSupported:
      return false;
    case sys::FabricState::kNotStarted:
    case sys::FabricState::kInProgress:
      return true;
    case sys::FabricState::kCompleted:
      return !g.fabric.cluster_uuid.empty() || g.fabric.status != 0;
  }
  return false;
}

// The value most GPUs share; on a tie, the smallest (deterministic).
template <typename T>
T Majority(const std::map<T, int>& counts) {
  return std::max_element(counts.begin(), counts.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

}  // namespace

std::vector<Finding> CheckFabric(const CheckContext& ctx) {
  std::vector<Finding> out;
  std::map<std::string, int> domains;  // "cluster/clique" -> GPUs
  int expected_links = 0;
  for (const auto& g : ctx.gpus) {
    if (!InFabric(g)) continue;
    expected_links = std::max(expected_links, static_cast<int>(g.nvlinks.size()));
    for (const auto& l : g.nvlinks) {
      if (l.version == kNvmlNvLinkVersion5) expected_links = kNvLink5LinksPerGpu;
    }
  }
  for (const auto& g : ctx.gpus) {
    if (!InFabric(g)) continue;
    const sys::GpuFabric& f = g.fabric;
    const std::string state(sys::FabricStateName(f.state));
    if (f.state != sys::FabricState::kCompleted) {
      out.push_back({Status::kFail, "", GpuName(g),
                     fmt::format("fabric registration {} (not completed): the GPU cannot reach "
                                 "the NVLink domain; check the fabric manager and IMEX",
                                 state),
                     Action::kDrain});
      continue;
    }
    if (f.status != 0) {
      out.push_back(
          {Status::kFail, "", GpuName(g),
           fmt::format("fabric registration completed with error {} (nvmlReturn_t)", f.status),
           Action::kDrain});
      continue;
    }
    if (auto problems = f.Problems(); !problems.empty()) {
      out.push_back({Status::kFail, "", GpuName(g),
                     fmt::format("fabric health: {} (health mask 0x{:x}, clique {})",
                                 fmt::join(problems, ", "), f.health_mask, f.clique),
                     Action::kDrain});
    } else if (auto rec = f.Recoveries(); !rec.empty()) {
      out.push_back({Status::kWarn, "", GpuName(g),
                     fmt::format("fabric health: {} (health mask 0x{:x})", fmt::join(rec, ", "),
                                 f.health_mask),
                     Action::kNone});
    }
    domains[f.cluster_uuid + "/" + std::to_string(f.clique)]++;
    // Links: the active ones against what the GPU should have.
    int active = 0;
    std::vector<int> down;
    for (const auto& l : g.nvlinks) {
      if (l.active) {
        ++active;
      } else {
        down.push_back(l.link);
      }
    }
    const int total = static_cast<int>(g.nvlinks.size());
    for (int l = total; l < expected_links; ++l) down.push_back(l);
    if (active < expected_links) {
      out.push_back(
          {Status::kFail, "", GpuName(g),
           fmt::format("{} of {} NVLinks active (link {} {}): the NVLink domain's collectives run "
                       "at this GPU's bandwidth",
                       active, expected_links, fmt::join(down, ","),
                       total < expected_links ? "missing or down" : "down"),
           Action::kDrain});
    }
  }
  // One node's GPUs belong to one domain and one partition.
  if (domains.size() > 1) {
    const std::string usual = Majority(domains);
    for (const auto& g : ctx.gpus) {
      if (!InFabric(g) || g.fabric.state != sys::FabricState::kCompleted) continue;
      const std::string mine = g.fabric.cluster_uuid + "/" + std::to_string(g.fabric.clique);
      if (mine == usual) continue;
      const size_t slash = usual.rfind('/');
      out.push_back({Status::kFail, "", GpuName(g),
                     fmt::format("in NVLink domain {} clique {}, the node's other GPUs in {} "
                                 "clique {}: it cannot reach them over NVLink",
                                 g.fabric.cluster_uuid.empty() ? "(none)" : g.fabric.cluster_uuid,
                                 g.fabric.clique, usual.substr(0, slash), usual.substr(slash + 1)),
                     Action::kDrain});
    }
  }
  return out;
}

}  // namespace gpufleet::checks
