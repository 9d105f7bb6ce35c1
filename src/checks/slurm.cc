#include "checks/slurm.h"

#include <fmt/format.h>

namespace gpufleet::checks {

bool SlurmNode::Drained() const { return state.find("DRAIN") != std::string::npos; }

Result<SlurmNode> ParseScontrolNode(const std::string& line) {
  SlurmNode n;
  const size_t s = line.find(" State=");
  if (line.rfind("NodeName=", 0) != 0 || s == std::string::npos) {
    return InvalidArgument(
        fmt::format("not `scontrol show node -o` output: {}", line.substr(0, 80)));
  }
  const size_t e = line.find(' ', s + 7);
  n.state = line.substr(s + 7, e == std::string::npos ? std::string::npos : e - s - 7);
  const size_t r = line.find(" Reason=");
  if (r != std::string::npos) {
    std::string reason = line.substr(r + 8);
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
    // Slurm appends " [user@2026-11-29T12:00:00]".
    const size_t b = reason.rfind(" [");
    if (b != std::string::npos && reason.back() == ']') reason.resize(b);
    n.reason = reason;
  }
  return n;
}

SlurmDecision Decide(const std::vector<Finding>& findings, const SlurmNode& node) {
  SlurmDecision d;
  const Status worst = Worst(findings);
  const bool ours = node.reason.rfind(kDrainPrefix, 0) == 0;
  if (worst == Status::kFail) {
    if (node.Drained()) {
      d.why = ours ? "already drained by gpufleet" : "already drained by someone else: left alone";
      return d;
    }
    for (const auto& f : findings) {
      if (f.status != Status::kFail) continue;
      std::string reason =
          fmt::format("{} {}: {}: {}", kDrainPrefix, f.check, f.component, f.message);
      for (char& c : reason) {
        if (c == '"' || c == '\n' || c == '\r') c = '\'';
      }
      if (reason.size() > 200) reason.resize(200);
      d.action = SlurmAction::kDrain;
      d.reason = reason;
      d.why = "a check failed";
      return d;
    }
  }
  if (worst == Status::kUnknown) {
    d.why = "could not evaluate: node state left as it is";
    return d;
  }
  if (node.Drained() && ours) {
    d.action = SlurmAction::kResume;
    d.why = "checks pass again: resuming a node gpufleet drained";
  } else if (node.Drained()) {
    d.why = "drained by someone else: left alone";
  }
  return d;
}

Result<SlurmDecision> ApplyToSlurm(const std::vector<Finding>& findings, const std::string& node,
                                   const Runner& run) {
  GPUFLEET_ASSIGN_OR_RETURN(sys::CommandOutput show, run({"scontrol", "show", "node", "-o", node}));
  if (show.exit_code != 0) {
    return Unavailable(fmt::format("scontrol show node {}: {}", node, show.err));
  }
  GPUFLEET_ASSIGN_OR_RETURN(SlurmNode state, ParseScontrolNode(show.out));
  SlurmDecision d = Decide(findings, state);
  std::vector<std::string> cmd;
  if (d.action == SlurmAction::kDrain) {
    cmd = {"scontrol", "update", "nodename=" + node, "state=drain", "reason=" + d.reason};
  } else if (d.action == SlurmAction::kResume) {
    cmd = {"scontrol", "update", "nodename=" + node, "state=resume"};
  }
  if (!cmd.empty()) {
    GPUFLEET_ASSIGN_OR_RETURN(sys::CommandOutput r, run(cmd));
    if (r.exit_code != 0) return Unavailable(fmt::format("{} {}: {}", cmd[0], cmd[1], r.err));
  }
  return d;
}

}  // namespace gpufleet::checks
