#pragma once
// `gpufleet check --slurm`: turns check results into Slurm node state. On a
// failure it drains the node with a reason starting "gpufleet:"; once the
// checks pass it resumes only a node whose drain reason it wrote itself, never
// one drained by a person or another tool. A failure that needs a reboot (an
// XID 79, a GPU that fell off the bus) writes the node's boot id into the
// reason, and the node is resumed only once that boot id has changed: the
// checks passing again (an XID aged out of its window) is not a reboot. The
// command runner is injected so the decision logic is tested without Slurm.
// Thread-compatible.

#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/sysroot.h"
#include "checks/check.h"
#include "sys/command.h"

namespace gpufleet::checks {

inline constexpr const char* kDrainPrefix = "gpufleet:";
// Reboot-class drains start "gpufleet: reboot required (boot BOOTID): ..."; the boot id comes
// first so the 200-character cut never drops it.
inline constexpr const char* kRebootTag = "gpufleet: reboot required (boot ";

// The kernel's boot id (/proc/sys/kernel/random/boot_id under `root`, a new random UUID at every
// boot), shortened to its first 8 hex digits; "" when it cannot be read.
std::string BootIdOf(const SysRoot& root);
// The boot id a reboot-class drain reason names, or "" for any other reason.
std::string RebootBootId(const std::string& reason);

struct SlurmNode {
  std::string state;   // "IDLE+DRAIN", "MIXED", ...
  std::string reason;  // without the trailing "[user@time]"
  bool Drained() const;
};

// Parses one line of `scontrol show node -o NAME`.
Result<SlurmNode> ParseScontrolNode(const std::string& line);

enum class SlurmAction { kNone, kDrain, kResume };
struct SlurmDecision {
  SlurmAction action = SlurmAction::kNone;
  std::string reason;  // for kDrain
  std::string why;     // for people
  // Set by ApplyToSlurm when Slurm refused or could not be asked (a job user may not drain a
  // node; slurmctld down): what failed. The findings still stand.
  std::string error;
};

// `boot_id` is this node's now (BootIdOf; "" when unknown).
SlurmDecision Decide(const std::vector<Finding>& findings, const SlurmNode& node,
                     const std::string& boot_id);

using Runner = std::function<Result<sys::CommandOutput>(const std::vector<std::string>&)>;

// Queries `node`, decides, and applies the decision with scontrol. When scontrol fails (the
// caller is not root or SlurmUser, or slurmctld does not answer) the decision comes back with
// `error` set: reported, never silent, and never in the way of the findings' own verdict.
SlurmDecision ApplyToSlurm(const std::vector<Finding>& findings, const std::string& node,
                           const std::string& boot_id, const Runner& run);

}  // namespace gpufleet::checks
