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
      {"gpu-count", "every GPU the spec expects is on the PCI bus", &CheckGpuCount},
      {"infiniband", "RDMA ports ACTIVE, LinkUp, at the spec's rate", &CheckInfinibandPorts},
      {"pcie-link", "GPU and NIC links trained at their maximum", &CheckPcieLinks},
      {"nvlink", "every GPU has the same number of NVSwitch links", &CheckNvLinks},
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
