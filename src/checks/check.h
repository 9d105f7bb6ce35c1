#pragma once
// Node health checks: one file each, listed in one table (registry.cc), shared
// by `gpufleet check` (and, later, the agent). A check reads the discovered
// node and the spec and returns findings; a failing check is data, not an
// error (STYLE.md §4). Pure given their inputs; thread-safe.

#include <string>
#include <vector>

#include "model/spec.h"
#include "topo/node_topology.h"

namespace gpufleet::checks {

enum class Status { kPass, kWarn, kFail, kUnknown };
std::string_view StatusName(Status s);

enum class Action { kNone, kDrain, kDrainAndReboot };
std::string_view ActionName(Action a);

struct Finding {
  Status status = Status::kPass;
  std::string check;      // registry name
  std::string component;  // "GPU0", "mlx5_0 port 1", "/tmp"
  std::string message;    // with the numbers
  Action action = Action::kNone;
};

struct DiskUsage {
  std::string path;
  double used_fraction = 0;
};

struct CheckContext {
  const model::Spec* spec = nullptr;
  const topo::NodeTopology* node = nullptr;
  std::vector<DiskUsage> disks;      // filled by the caller (statvfs)
  double disk_full_fraction = 0.95;  // fail above this
};

struct CheckInfo {
  const char* name;
  const char* description;
  std::vector<Finding> (*run)(const CheckContext&);
};

const std::vector<CheckInfo>& Checks();

// Runs every check; a check with nothing to report yields one kPass finding.
std::vector<Finding> RunAll(const CheckContext& ctx);
// The worst status of `findings`.
Status Worst(const std::vector<Finding>& findings);

// The checks (one file each).
std::vector<Finding> CheckGpuCount(const CheckContext& ctx);
std::vector<Finding> CheckInfinibandPorts(const CheckContext& ctx);
std::vector<Finding> CheckPcieLinks(const CheckContext& ctx);
std::vector<Finding> CheckNvLinks(const CheckContext& ctx);
std::vector<Finding> CheckDiskSpace(const CheckContext& ctx);

}  // namespace gpufleet::checks
