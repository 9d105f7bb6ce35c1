#pragma once
// `gpufleet check [SPEC]`: node health now (exit 0 ok, 1 a check failed, 2 bad
// input, 3 cannot evaluate); `--slurm` drains or resumes this Slurm node. docs/check.md.
// The check limits and the node's sources are shared with `gpufleet agent`.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/imex.h"
#include "base/result.h"
#include "checks/check.h"
#include "model/spec.h"

namespace gpufleet::cli {

// Check limits and XID actions as flags, for `check` and `agent` alike.
struct CheckLimitFlags {
  double disk_full = 95;         // percent
  double load_util = 80;         // percent
  double busy_util = 90;         // percent
  double power_fraction = 87.5;  // percent of TDP
  double storage_latency_ms = 10;
  double xid_window_s = 3600;
  std::vector<std::string> xid_actions;  // CODE=ACTION
  std::vector<std::string> disks;
  std::string kmsg = "/dev/kmsg";
  double gpu_timeout_s = 5;
  std::string imex_config = agent::kDefaultImexConfig;
};
void AddCheckLimitFlags(CLI::App* cmd, CheckLimitFlags* f);
// Validates the flags into limits and an XID table (kInvalidArgument names the flag).
Status ApplyCheckLimitFlags(const CheckLimitFlags& f, checks::Thresholds* limits,
                            checks::XidTable* xids);

// Where node-side commands (check, agent, the emitted prolog and Slurm health check) find the
// cluster spec when no --spec is given: $GPUFLEET_SPEC, else this file.
inline constexpr const char* kDefaultSpecPath = "/etc/gpufleet/cluster.yaml";

// The spec a node is judged against: `path` (--spec or SPEC), else $GPUFLEET_SPEC, else
// kDefaultSpecPath when it exists. With none of them there is no spec, never the embedded demo
// cluster: the checks then judge only what needs no spec, and `note` says so. A named spec that
// cannot be read or parsed is an error (kNotFound / kInvalidArgument), as is --set without a spec.
struct NodeSpec {
  std::optional<model::Spec> spec;
  std::string note;  // "" when a spec was found
};
Result<NodeSpec> LoadNodeSpec(const std::string& path, const std::vector<std::string>& set);

struct CheckOptions {
  std::string spec;
  std::vector<std::string> set;
  std::string hwloc_xml;
  std::string root;
  bool no_nvml = false;
  std::string format = "text";
  bool slurm = false;
  bool unknown_ok = false;   // exit 0 instead of 3 when the worst is "cannot evaluate"
  std::string node;          // Slurm node name; default: SLURMD_NODENAME or the short hostname
  double disk_window_s = 1;  // diskstats window for storage latency; 0 = skip
  CheckLimitFlags limits;
};

CLI::App* AddCheckCommand(CLI::App& app, CheckOptions* options);
int RunCheck(const CheckOptions& options);

}  // namespace gpufleet::cli
