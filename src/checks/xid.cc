// xid: XIDs of this boot, from NVML events and the kernel log, judged by a
// table of actions (reference/monitoring.md §7: NVIDIA's XID catalog, the k8s
// device plugin's application-error list, gpud). Overridable per code.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "checks/check.h"

namespace gpufleet::checks {

std::string_view XidPolicyName(XidPolicy p) {
  switch (p) {
    case XidPolicy::kIgnore:
      return "ignore";
    case XidPolicy::kWarn:
      return "warn";
    case XidPolicy::kDrain:
      return "drain";
    case XidPolicy::kDrainAndReboot:
      return "drain+reboot";
  }
  return "?";
}

const std::vector<XidRule>& DefaultXidRules() {
  using P = XidPolicy;
  static const std::vector<XidRule> kRules = {
      {8, P::kWarn, "GPU stopped processing (application)"},
      {13, P::kIgnore, "graphics engine exception (application error)", true},
      {31, P::kIgnore, "GPU memory page fault (application error)", true},
      {32, P::kWarn, "corrupted push buffer stream"},
      {38, P::kWarn, "driver firmware error"},
      {43, P::kIgnore, "GPU stopped processing (application error)", true},
      {45, P::kIgnore, "preemptive cleanup after an earlier error"},
      {46, P::kDrain, "GPU stopped processing (timeout): reset the GPU"},
      {48, P::kDrain, "double-bit ECC error: reset the GPU to remap the row", true},
      {61, P::kDrain, "internal micro-controller breakpoint"},
      {62, P::kDrain, "internal micro-controller halt: reset the GPU", true},
      {63, P::kWarn, "row-remap recording event: reset at a convenient time", true},
      {64, P::kDrain, "row-remap recording failure: reset the GPU, RMA if remap failed", true},
      {68, P::kIgnore, "NVDEC exception (application error)"},
      {69, P::kWarn, "graphics class error"},
      {74, P::kDrain, "NVLink error: check the NVLink error counters, reset or reboot", true},
      {79, P::kDrainAndReboot, "GPU has fallen off the bus", true},
      {92, P::kWarn, "high single-bit ECC error rate"},
      {94, P::kWarn, "contained ECC error: restart the application, reset when convenient", true},
      {95, P::kDrain, "uncontained ECC error: reset the GPU", true},
      {109, P::kWarn, "context-switch timeout"},
      {110, P::kDrain, "security fault"},
      {119, P::kDrainAndReboot, "GSP RPC timeout", true},
      {120, P::kDrainAndReboot, "GSP error", true},
      {121, P::kWarn, "C2C link error"},
      {136, P::kDrain, "link training failed"},
      {137, P::kIgnore, "NVLink FLA privilege error (application)"},
      {140, P::kDrain, "unrecovered ECC error"},
      {143, P::kDrain, "GPU initialisation failure"},
      {144, P::kDrain, "NVLink5 SAW error"},
      {145, P::kDrain, "NVLink5 RLW error"},
      {146, P::kDrain, "NVLink5 TLW error"},
      {147, P::kDrain, "NVLink5 TREX error"},
      {148, P::kDrain, "NVLink5 NVLPW error"},
      {149, P::kDrain, "NVLink5 NETIR error"},
      {150, P::kDrain, "NVLink5 MSE error"},
      {154, P::kWarn, "GPU recovery action changed: see the recovery-action check"},
      {155, P::kDrain, "NVLink software-defined error"},
      {156, P::kDrain, "resource retirement event"},
      {158, P::kDrain, "GPU fatal timeout"},
  };
  return kRules;
}

XidPolicy XidTable::For(int xid) const {
  if (auto it = overrides.find(xid); it != overrides.end()) return it->second;
  for (const auto& r : DefaultXidRules()) {
    if (r.xid == xid) return r.policy;
  }
  return XidPolicy::kWarn;
}

std::string_view XidTable::Meaning(int xid) const {
  for (const auto& r : DefaultXidRules()) {
    if (r.xid == xid) return r.meaning;
  }
  return "";
}

Result<std::pair<int, XidPolicy>> ParseXidAction(std::string_view text) {
  const size_t eq = text.find('=');
  int xid = 0;
  if (eq == std::string_view::npos ||
      std::from_chars(text.data(), text.data() + eq, xid).ptr != text.data() + eq || xid <= 0) {
    return InvalidArgument(fmt::format(
        "--xid-action {}: want XID=ACTION, e.g. 63=drain (actions: ignore, warn, drain, "
        "drain+reboot)",
        text));
  }
  const std::string_view what = text.substr(eq + 1);
  for (XidPolicy p :
       {XidPolicy::kIgnore, XidPolicy::kWarn, XidPolicy::kDrain, XidPolicy::kDrainAndReboot}) {
    if (what == XidPolicyName(p)) return std::make_pair(xid, p);
  }
  return InvalidArgument(
      fmt::format("--xid-action {}: unknown action '{}'; one of ignore, warn, drain, drain+reboot",
                  text, what));
}

std::vector<Finding> CheckXids(const CheckContext& ctx) {
  // One finding per (GPU, XID): how many, the last time, what to do.
  struct Seen {
    int count = 0;
    double last = 0;
    std::string text;
  };
  std::map<std::pair<std::string, int>, Seen> seen;
  for (const auto& e : ctx.xids) {
    if (e.time > 0 && ctx.now - e.time > ctx.limits.xid_window_s) continue;
    const XidPolicy p = ctx.xid_table.For(e.xid);
    if (p == XidPolicy::kIgnore) continue;
    std::string who = e.gpu >= 0 ? fmt::format("GPU{}", e.gpu) : std::string("GPU");
    if (e.gpu < 0) {
      for (const auto& g : ctx.gpus) {
        if (!e.busid.empty() && g.busid == e.busid) who = GpuName(g);
      }
      if (who == "GPU") who = fmt::format("GPU {}", e.busid.empty() ? "?" : e.busid);
    }
    Seen& s = seen[{who, e.xid}];
    ++s.count;
    s.last = std::max(s.last, e.time);
    if (!e.text.empty()) s.text = e.text;
  }
  std::vector<Finding> out;
  if (!ctx.kmsg_note.empty()) {
    // NVML's event API does not report every XID (79, 119, 120: NVIDIA/DCGM#162); without the
    // kernel log a node that fell off the bus would pass.
    out.push_back({Status::kUnknown, "", "node",
                   fmt::format("kernel log not readable ({}): XIDs only it records (79 fallen off "
                               "the bus, 119/120 GSP) cannot be seen; run as root or set "
                               "kernel.dmesg_restrict=0",
                               ctx.kmsg_note),
                   Action::kNone});
  }
  for (const auto& [key, s] : seen) {
    const XidPolicy p = ctx.xid_table.For(key.second);
    const std::string_view meaning = ctx.xid_table.Meaning(key.second);
    std::string msg = fmt::format("XID {} ({}) x{}, last {:.0f} s ago", key.second,
                                  meaning.empty() ? "not in the table" : meaning, s.count,
                                  s.last > 0 ? std::max(0.0, ctx.now - s.last) : 0.0);
    out.push_back({p == XidPolicy::kWarn ? Status::kWarn : Status::kFail, "", key.first, msg,
                   p == XidPolicy::kDrainAndReboot ? Action::kDrainAndReboot
                   : p == XidPolicy::kDrain        ? Action::kDrain
                                                   : Action::kNone});
  }
  return out;
}

}  // namespace gpufleet::checks
