#include "checks/slurm.h"

#include <fmt/format.h>

#include <cctype>

#include "base/strings.h"

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

std::string BootIdOf(const SysRoot& root) {
  auto text = root.Read("/proc/sys/kernel/random/boot_id");
  if (!text) return "";
  std::string id;
  for (char c : *text) {
    if (std::isxdigit(static_cast<unsigned char>(c))) {
      id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (id.size() == 8) break;
  }
  return id.size() == 8 ? id : "";
}

std::string RebootBootId(const std::string& reason) {
  const std::string_view tag = kRebootTag;
  if (reason.compare(0, tag.size(), tag) != 0) return "";
  const size_t close = reason.find(')', tag.size());
  return close == std::string::npos ? "" : reason.substr(tag.size(), close - tag.size());
}

namespace {

std::string DrainReason(const Finding& f, const std::string& boot_id) {
  std::string reason =
      f.action == Action::kDrainAndReboot
          ? fmt::format("{}{}): {}: {}: {}", kRebootTag, boot_id.empty() ? "unknown" : boot_id,
                        f.check, f.component, f.message)
          : fmt::format("{} {}: {}: {}", kDrainPrefix, f.check, f.component, f.message);
  for (char& c : reason) {
    if (c == '"' || c == '\n' || c == '\r') c = '\'';
  }
  if (reason.size() > 200) reason.resize(200);
  return reason;
}

}  // namespace

SlurmDecision Decide(const std::vector<Finding>& findings, const SlurmNode& node,
                     const std::string& boot_id) {
  SlurmDecision d;
  const Status worst = Worst(findings);
  const bool ours = node.reason.rfind(kDrainPrefix, 0) == 0;
  const std::string drained_at_boot = RebootBootId(node.reason);
  if (worst == Status::kFail) {
    // The reason names the finding that asks most: a reboot before a drain.
    const Action strongest = StrongestAction(findings);
    const Finding* why = nullptr;
    for (const auto& f : findings) {
      if (f.status != Status::kFail) continue;
      if (why == nullptr || (f.action == strongest && why->action != strongest)) why = &f;
    }
    const bool reboot = why->action == Action::kDrainAndReboot;
    if (node.Drained() && !ours) {
      d.why = "already drained by someone else: left alone";
      return d;
    }
    if (node.Drained() && !(reboot && (drained_at_boot.empty() || drained_at_boot != boot_id))) {
      d.why = "already drained by gpufleet";
      return d;
    }
    d.action = SlurmAction::kDrain;
    d.reason = DrainReason(*why, boot_id);
    d.why = node.Drained() ? "a reboot-class failure on a node gpufleet had drained: reason updated"
            : reboot       ? "a check failed that needs a reboot"
                           : "a check failed";
    return d;
  }
  if (worst == Status::kUnknown) {
    d.why = "could not evaluate: node state left as it is";
    return d;
  }
  if (node.Drained() && ours) {
    if (!drained_at_boot.empty() && boot_id.empty()) {
      d.why = "drained for a reboot, and this node's boot id cannot be read: left drained";
      return d;
    }
    if (!drained_at_boot.empty() && drained_at_boot == boot_id) {
      d.why = fmt::format(
          "drained for a reboot at boot {}, and the node has not rebooted since: left drained",
          drained_at_boot);
      return d;
    }
    d.action = SlurmAction::kResume;
    d.why = drained_at_boot.empty()
                ? "checks pass again: resuming a node gpufleet drained"
                : fmt::format("rebooted since the drain (boot {} -> {}) and checks pass: resuming",
                              drained_at_boot, boot_id);
  } else if (node.Drained()) {
    d.why = "drained by someone else: left alone";
  } else {
    d.why = "checks pass";
  }
  return d;
}

SlurmDecision ApplyToSlurm(const std::vector<Finding>& findings, const std::string& node,
                           const std::string& boot_id, const Runner& run) {
  SlurmDecision d;
  auto show = run({"scontrol", "show", "node", "-o", node});
  if (!show || show->exit_code != 0) {
    d.error = fmt::format("scontrol show node {}: {}", node,
                          !show ? show.error().message : std::string(strings::Trim(show->err)));
    return d;
  }
  auto state = ParseScontrolNode(show->out);
  if (!state) {
    d.error = state.error().message;
    return d;
  }
  d = Decide(findings, *state, boot_id);
  std::vector<std::string> cmd;
  if (d.action == SlurmAction::kDrain) {
    cmd = {"scontrol", "update", "nodename=" + node, "state=drain", "reason=" + d.reason};
  } else if (d.action == SlurmAction::kResume) {
    cmd = {"scontrol", "update", "nodename=" + node, "state=resume"};
  }
  if (!cmd.empty()) {
    auto r = run(cmd);
    if (!r || r->exit_code != 0) {
      d.error = fmt::format("scontrol update nodename={} state={}: {}", node,
                            d.action == SlurmAction::kDrain ? "drain" : "resume",
                            !r ? r.error().message : std::string(strings::Trim(r->err)));
    }
  }
  return d;
}

}  // namespace gpufleet::checks
