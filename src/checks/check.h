#pragma once
// Node health checks: one file each, listed in one table (registry.cc), shared
// by `gpufleet check` and `gpufleet agent`. A check reads what the caller
// gathered (the discovered node, NVML samples, XIDs, disk statistics) and the
// spec, and returns findings; a failing check is data, not an error (STYLE.md
// §4). Pure given their inputs; thread-safe.

#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/spec.h"
#include "sys/nvml.h"
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

// What to do about an XID (reference/monitoring.md §7): ignore it (application
// errors), warn (record, no drain), drain the node, or drain and reboot it.
enum class XidPolicy { kIgnore, kWarn, kDrain, kDrainAndReboot };
std::string_view XidPolicyName(XidPolicy p);
struct XidRule {
  int xid;
  XidPolicy policy;
  const char* meaning;
  bool common = false;  // the agent exports a zero counter for it before it happens
};
// The default table; XIDs not in it are kWarn.
const std::vector<XidRule>& DefaultXidRules();
struct XidTable {
  std::map<int, XidPolicy> overrides;  // --xid-action CODE=POLICY
  XidPolicy For(int xid) const;
  std::string_view Meaning(int xid) const;  // "" if not in the table
};
// "79=drain+reboot" -> (79, kDrainAndReboot); kInvalidArgument names what is wrong.
Result<std::pair<int, XidPolicy>> ParseXidAction(std::string_view text);

struct DiskUsage {
  std::string path;
  double used_fraction = 0;
};

// One block device over a window: completed IOs and their mean latency.
struct DiskLatency {
  std::string device;
  double ios = 0;
  double mean_latency_s = 0;
};

// Limits; the defaults are the rules of thumb each check cites, and every one
// can be overridden on the command line.
struct Thresholds {
  double disk_full_fraction = 0.95;  // fail above this
  double load_util = 0.8;            // a GPU at or above this is "under load"
  double busy_util = 0.9;            // warn below this while a job holds the GPU
  double power_fraction = 0.875;     // under load, draw below this x TDP (350 W of 400 W)
  double storage_latency_s = 0.010;  // mean IO latency above this fails
  double storage_min_ios = 20;       // fewer IOs in the window say nothing about latency
  double xid_window_s = 3600;        // XIDs older than this are history
};

// The IMEX daemon of a multi-node NVLink domain (GB200/GB300 NVL72), which shares GPU memory
// between the domain's nodes: gathered by the caller only when a GPU reports such a fabric.
struct ImexState {
  bool checked = false;            // a GPU is in a multi-node NVLink fabric, and the rest was read
  std::string config;              // the daemon's config file (/etc/nvidia-imex/config.cfg)
  std::string config_error;        // why it or its node list could not be read; "" when read
  std::string nodes_file;          // IMEX_NODE_CONFIG_FILE
  std::vector<std::string> nodes;  // the domain's node addresses, one per line in nodes_file
  int port = 50000;                // SERVER_PORT
  bool daemon_running = false;     // a process named nvidia-imex
  bool self_listed = false;        // one of this node's addresses is in `nodes`
  int peers = 0;                   // listed nodes other than this one (the ones probed)
  std::vector<std::string> unreachable;  // "10.0.0.3:50000 (connection refused)"
};

struct CheckContext {
  const model::Spec* spec = nullptr;
  const topo::NodeTopology* node = nullptr;
  // NVML samples, one per GPU; empty when NVML was not read (`nvml_note` says why).
  std::vector<sys::GpuSample> gpus;
  bool nvml = false;
  bool nvml_expected = false;  // a live node whose spec has NVIDIA GPUs, NVML not switched off
  std::string nvml_note;
  std::vector<sys::XidEvent> xids;  // this boot, de-duplicated
  // Why the kernel log was asked for but could not be read ("" when it was read or not asked
  // for): XIDs that only the kernel log shows (79, 119, 120) are then "cannot evaluate".
  std::string kmsg_note;
  XidTable xid_table;
  std::vector<DiskUsage> disks;           // filled by the caller (statvfs)
  std::vector<DiskLatency> disk_latency;  // filled by the caller (/proc/diskstats deltas)
  ImexState imex;                         // filled by the caller for fabric GPUs
  Thresholds limits;
  double now = 0;  // unix seconds
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
// The strongest action of the failing findings.
Action StrongestAction(const std::vector<Finding>& findings);

// "GPU3" for a sample, the name every GPU check uses as its component.
std::string GpuName(const sys::GpuSample& g);

// The checks (one file each).
std::vector<Finding> CheckGpuCount(const CheckContext& ctx);
std::vector<Finding> CheckXids(const CheckContext& ctx);
std::vector<Finding> CheckMemoryErrors(const CheckContext& ctx);
std::vector<Finding> CheckRecoveryAction(const CheckContext& ctx);
std::vector<Finding> CheckThrottle(const CheckContext& ctx);
std::vector<Finding> CheckPower(const CheckContext& ctx);
std::vector<Finding> CheckUtilization(const CheckContext& ctx);
std::vector<Finding> CheckInfinibandPorts(const CheckContext& ctx);
std::vector<Finding> CheckPcieLinks(const CheckContext& ctx);
std::vector<Finding> CheckNvLinks(const CheckContext& ctx);
std::vector<Finding> CheckFabric(const CheckContext& ctx);
std::vector<Finding> CheckImex(const CheckContext& ctx);
std::vector<Finding> CheckStorageLatency(const CheckContext& ctx);
std::vector<Finding> CheckDiskSpace(const CheckContext& ctx);

}  // namespace gpufleet::checks
