#pragma once
// `gpufleet check --slurm`: turns check results into Slurm node state. On a
// failure it drains the node with a reason starting "gpufleet:"; once the
// checks pass it resumes only a node whose drain reason it wrote itself, never
// one drained by a person or another tool. The command runner is injected so
// the decision logic is tested without Slurm. Thread-compatible.

#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "checks/check.h"
#include "sys/command.h"

namespace gpufleet::checks {

inline constexpr const char* kDrainPrefix = "gpufleet:";

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
};

SlurmDecision Decide(const std::vector<Finding>& findings, const SlurmNode& node);

using Runner = std::function<Result<sys::CommandOutput>(const std::vector<std::string>&)>;

// Queries `node`, decides, and applies the decision with scontrol.
Result<SlurmDecision> ApplyToSlurm(const std::vector<Finding>& findings, const std::string& node,
                                   const Runner& run);

}  // namespace gpufleet::checks
