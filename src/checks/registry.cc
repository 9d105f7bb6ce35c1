#include <algorithm>

#include "checks/check.h"

namespace gpufleet::checks {

std::string_view StatusName(Status s) {
  switch (s) {
    case Status::kPass:
      return "pass";
    case Status::kWarn:
      return "warn";
    case Status::kFail:
      return "fail";
    case Status::kUnknown:
      return "unknown";
  }
  return "?";
}

std::string_view ActionName(Action a) {
  switch (a) {
    case Action::kNone:
      return "none";
    case Action::kDrain:
      return "drain";
    case Action::kDrainAndReboot:
      return "drain+reboot";
  }
  return "?";
}

const std::vector<CheckInfo>& Checks() {
  static const std::vector<CheckInfo> kChecks = {
      {"gpu-count", "every GPU the spec expects is there, answers, and is the spec's model",
       &CheckGpuCount},
      {"xid", "XIDs of this boot judged by the XID action table", &CheckXids},
      {"memory-errors", "no uncorrectable ECC, no pending or failed row remap", &CheckMemoryErrors},
      {"recovery-action", "the driver asks for no GPU reset, reboot or drain",
       &CheckRecoveryAction},
      {"throttle", "no hardware clock slowdown under load", &CheckThrottle},
      {"power", "under load, power near the GPU's rating", &CheckPower},
      {"utilization", "GPUs that a job holds are busy", &CheckUtilization},
      {"nvlink", "no NVLink down; every GPU has the same number of NVSwitch links", &CheckNvLinks},
      {"fabric",
       "a multi-node NVLink GPU registered with its fabric, healthy, in the node's domain and "
       "clique, every NVLink up",
       &CheckFabric},
      {"imex", "the NVLink domain's IMEX daemon runs, lists this node, and reaches its peers",
       &CheckImex},
      {"pcie-link", "GPU and NIC links trained at their maximum", &CheckPcieLinks},
      {"infiniband", "RDMA ports ACTIVE, LinkUp, at the spec's rate", &CheckInfinibandPorts},
      {"storage-latency", "block devices answer within 10 ms", &CheckStorageLatency},
      {"disk-space", "local filesystems not nearly full", &CheckDiskSpace},
  };
  return kChecks;
}

std::vector<Finding> RunAll(const CheckContext& ctx) {
  std::vector<Finding> all;
  for (const auto& c : Checks()) {
    std::vector<Finding> f = c.run(ctx);
    if (f.empty()) f.push_back({Status::kPass, c.name, "node", "ok", Action::kNone});
    for (auto& x : f) x.check = c.name;
    all.insert(all.end(), f.begin(), f.end());
  }
  return all;
}

Action StrongestAction(const std::vector<Finding>& findings) {
  Action a = Action::kNone;
  for (const auto& f : findings) {
    if (f.status != Status::kFail) continue;
    if (f.action == Action::kDrainAndReboot) return f.action;
    if (f.action == Action::kDrain) a = f.action;
  }
  return a;
}

std::string GpuName(const sys::GpuSample& g) { return "GPU" + std::to_string(g.index); }

Status Worst(const std::vector<Finding>& findings) {
  Status worst = Status::kPass;
  for (const auto& f : findings) {
    // Order of badness: pass < warn < unknown < fail.
    auto rank = [](Status s) {
      return s == Status::kPass ? 0 : s == Status::kWarn ? 1 : s == Status::kUnknown ? 2 : 3;
    };
    if (rank(f.status) > rank(worst)) worst = f.status;
  }
  return worst;
}

}  // namespace gpufleet::checks
