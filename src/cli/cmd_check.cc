#include "cli/cmd_check.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent/agent.h"
#include "agent/sources.h"
#include "base/files.h"
#include "base/json.h"
#include "checks/slurm.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "model/spec.h"
#include "topo/discover.h"

namespace gpufleet::cli {

void AddCheckLimitFlags(CLI::App* cmd, CheckLimitFlags* f) {
  cmd->add_option("--disk", f->disks, "Filesystems to check for space (default: / and /tmp)");
  cmd->add_option("--disk-full", f->disk_full, "Fail above this percent used")
      ->capture_default_str();
  cmd->add_option("--load-util", f->load_util,
                  "A GPU at or above this percent busy is under load (throttle, power checks)")
      ->capture_default_str();
  cmd->add_option("--busy-util", f->busy_util,
                  "Warn when a GPU that a job holds is less busy than this percent")
      ->capture_default_str();
  cmd->add_option("--power-fraction", f->power_fraction,
                  "Under load, warn below this percent of the GPU's rated power")
      ->capture_default_str();
  cmd->add_option("--storage-latency-ms", f->storage_latency_ms,
                  "Fail when a disk's mean IO latency is above this")
      ->capture_default_str();
  cmd->add_option("--xid-window", f->xid_window_s, "Seconds an XID counts against the node")
      ->capture_default_str();
  cmd->add_option("--xid-action", f->xid_actions,
                  "Override the XID table, CODE=ignore|warn|drain|drain+reboot (repeatable)");
  cmd->add_option("--kmsg", f->kmsg, "Kernel log to read XIDs from (none: do not read one)")
      ->capture_default_str();
  cmd->add_option("--gpu-timeout", f->gpu_timeout_s,
                  "Seconds an NVML read of one GPU may take before the GPU counts as hung")
      ->capture_default_str();
  cmd->add_option("--imex-config", f->imex_config,
                  "The IMEX daemon's config, read when a GPU is in a multi-node NVLink domain")
      ->capture_default_str();
}

Status ApplyCheckLimitFlags(const CheckLimitFlags& f, checks::Thresholds* limits,
                            checks::XidTable* xids) {
  auto percent = [](const char* flag, double v) -> Status {
    if (!(v >= 0 && v <= 100)) {
      return InvalidArgument(fmt::format("{} {}: want a percent, 0 to 100", flag, v));
    }
    return OkStatus();
  };
  GPUFLEET_RETURN_IF_ERROR(percent("--disk-full", f.disk_full));
  GPUFLEET_RETURN_IF_ERROR(percent("--load-util", f.load_util));
  GPUFLEET_RETURN_IF_ERROR(percent("--busy-util", f.busy_util));
  GPUFLEET_RETURN_IF_ERROR(percent("--power-fraction", f.power_fraction));
  if (!(f.storage_latency_ms > 0)) {
    return InvalidArgument(
        fmt::format("--storage-latency-ms {}: want a positive number", f.storage_latency_ms));
  }
  // Written so NaN fails too (every comparison with NaN is false).
  if (!(f.storage_latency_ms <= 1e6)) {
    return InvalidArgument(
        fmt::format("--storage-latency-ms {}: want at most 1000000", f.storage_latency_ms));
  }
  if (!(f.xid_window_s > 0 && f.xid_window_s <= 30 * 86400)) {
    return InvalidArgument(
        fmt::format("--xid-window {}: want 1 second to 30 days, in seconds", f.xid_window_s));
  }
  // In milliseconds it must fit an int: 3,000,000 s overflowed into "every GPU hung".
  if (!(f.gpu_timeout_s >= 0.001 && f.gpu_timeout_s <= 3600)) {
    return InvalidArgument(
        fmt::format("--gpu-timeout {}: want 0.001 to 3600 seconds", f.gpu_timeout_s));
  }
  if (!f.kmsg.empty() && f.kmsg != "none") {
    // The kernel log device or a file of log lines; /dev/zero or a FIFO would be read forever.
    struct stat st {};
    if (::stat(f.kmsg.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
        !(S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 11)) {
      return InvalidArgument(
          fmt::format("--kmsg {}: not the kernel log (/dev/kmsg) nor a file of log lines", f.kmsg));
    }
  }
  limits->disk_full_fraction = f.disk_full / 100;
  limits->load_util = f.load_util / 100;
  limits->busy_util = f.busy_util / 100;
  limits->power_fraction = f.power_fraction / 100;
  limits->storage_latency_s = f.storage_latency_ms / 1e3;
  limits->xid_window_s = f.xid_window_s;
  for (const auto& a : f.xid_actions) {
    GPUFLEET_ASSIGN_OR_RETURN(auto rule, checks::ParseXidAction(a));
    xids->overrides[rule.first] = rule.second;
  }
  return OkStatus();
}

Result<NodeSpec> LoadNodeSpec(const std::string& path, const std::vector<std::string>& set) {
  std::string chosen = path;
  if (chosen.empty()) {
    if (const char* env = std::getenv("GPUFLEET_SPEC"); env != nullptr && *env != 0) {
      chosen = env;
      if (Status s = CheckPath(chosen, false, "a cluster spec"); !s) {
        return InvalidArgument(fmt::format("GPUFLEET_SPEC={}: {}", chosen, s.error().message));
      }
    } else if (::access(kDefaultSpecPath, F_OK) == 0) {
      chosen = kDefaultSpecPath;
    }
  }
  NodeSpec out;
  if (chosen.empty()) {
    if (!set.empty()) {
      return InvalidArgument(
          fmt::format("--set {}: there is no spec to change (give --spec, GPUFLEET_SPEC or {})",
                      set.front(), kDefaultSpecPath));
    }
    out.note = fmt::format(
        "no cluster spec (--spec, GPUFLEET_SPEC, {}): the GPU count and model and the RDMA "
        "port count and rate are not judged",
        kDefaultSpecPath);
    return out;
  }
  GPUFLEET_ASSIGN_OR_RETURN(model::Spec spec, model::LoadSpec(chosen, set));
  out.spec = std::move(spec);
  return out;
}

CLI::App* AddCheckCommand(CLI::App& app, CheckOptions* o) {
  CLI::App* cmd =
      app.add_subcommand("check", "Node health now: exit 0/1, or drain/resume the Slurm node");
  cmd->add_option("SPEC,--spec", o->spec,
                  fmt::format("Cluster spec (YAML); default: $GPUFLEET_SPEC, else {} if it exists, "
                              "else none (only what needs no spec is judged)",
                              kDefaultSpecPath));
  cmd->add_option("--set", o->set, "Change a spec value, PATH=VALUE");
  cmd->add_option("--hwloc-xml", o->hwloc_xml, "Check this hwloc XML instead of the live node");
  cmd->add_option("--root", o->root, "Check this captured tree instead of the live node");
  cmd->add_flag("--no-nvml", o->no_nvml, "Do not load NVML");
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_flag(
      "--slurm", o->slurm,
      "Act as Slurm's HealthCheckProgram: drain on failure, resume what gpufleet drained");
  cmd->add_flag("--unknown-ok", o->unknown_ok,
                "Exit 0, not 3, when the worst is 'cannot evaluate' (a job prolog run as the job "
                "user, who cannot read the kernel log); failures still exit 1");
  cmd->add_option("--node", o->node,
                  "Slurm node name (default: SLURMD_NODENAME, else hostname -s)");
  cmd->add_option("--disk-window", o->disk_window_s,
                  "Seconds between two /proc/diskstats reads for IO latency (0 = skip)")
      ->capture_default_str();
  AddCheckLimitFlags(cmd, &o->limits);
  return cmd;
}

int RunCheck(const CheckOptions& o) {
  Result<NodeSpec> spec = LoadNodeSpec(o.spec, o.set);
  if (!spec) return ReportError(spec.error());
  checks::CheckContext ctx;
  if (Status s = ApplyCheckLimitFlags(o.limits, &ctx.limits, &ctx.xid_table); !s) {
    return ReportError(s.error());
  }
  if (!(o.disk_window_s >= 0 && o.disk_window_s <= 60)) {
    return ReportError(
        InvalidArgument(fmt::format("--disk-window {}: want 0 to 60 seconds", o.disk_window_s)));
  }
  const bool live = o.hwloc_xml.empty() && o.root.empty();
  // GPUs, XIDs and disk latency: only from a live node (a capture has none of them).
  // NVML is loaded and initialised once, here, and discovery asks the same instance.
  agent::SourceOptions so;
  so.nvml = !o.no_nvml && live;
  so.kmsg = live ? o.limits.kmsg : "";
  so.root = o.root.empty() ? "/" : o.root;
  so.gpu_deadline = std::chrono::milliseconds(static_cast<int>(o.limits.gpu_timeout_s * 1000));
  so.imex_config = o.limits.imex_config;
  auto src = agent::NodeSources::Open(so);
  topo::DiscoverOptions d;
  d.hwloc_xml = o.hwloc_xml;
  d.root = o.root;
  d.nvml = src->nvml();
  d.nvml_handle = src->nvml_handle();
  auto node = topo::Discover(d);
  if (!node) return ReportError(node.error());

  ctx.spec = spec->spec ? &*spec->spec : nullptr;
  ctx.node = &*node;
  ctx.now = agent::UnixNow();
  std::vector<std::string> disks = o.limits.disks;
  if (disks.empty() && live) disks = {"/", "/tmp"};
  auto usage = agent::DiskUsageOf(disks);
  if (!usage) return ReportError(usage.error());
  ctx.disks = std::move(*usage);

  const auto disks_before = agent::ReadDiskStats(src->root());
  std::vector<agent::GpuReading> gpus = src->ReadGpus();
  src->xids().PollOnce(0);
  agent::NodeSources::FillChecks(gpus, *src, src->xids().Events(), &ctx);
  if (live && o.disk_window_s > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.disk_window_s));
    ctx.disk_latency = agent::DiskLatencies(disks_before, agent::ReadDiskStats(src->root()));
  }
  std::vector<checks::Finding> findings = checks::RunAll(ctx);
  const checks::Status worst = checks::Worst(findings);

  std::string slurm_line;
  if (o.slurm) {
    std::string name = o.node;
    if (name.empty()) {
      if (const char* s = std::getenv("SLURMD_NODENAME")) name = s;
    }
    if (name.empty()) {
      name = HostName();
      name = name.substr(0, name.find('.'));
    }
    const checks::SlurmDecision slurm = checks::ApplyToSlurm(
        findings, name, checks::BootIdOf(src->root()),
        [](const std::vector<std::string>& argv) { return sys::RunCommand(argv, 30); });
    const char* what = slurm.action == checks::SlurmAction::kDrain    ? "drained"
                       : slurm.action == checks::SlurmAction::kResume ? "resumed"
                                                                      : "unchanged";
    if (slurm.error.empty()) {
      slurm_line = fmt::format("slurm node {}: {} ({})", name, what, slurm.why);
    } else {
      // A job user may not change a node's state: say so, and let the findings' verdict stand.
      slurm_line = fmt::format(
          "slurm node {}: {}: {}{}", name,
          slurm.action == checks::SlurmAction::kNone ? "state unknown" : "not changed", slurm.error,
          ::geteuid() != 0 ? " (only root or SlurmUser may drain or resume a node: Slurm's "
                             "HealthCheckProgram, which runs as root, does; docs/check.md)"
                           : "");
    }
  }

  std::string text;
  if (o.format == "json") {
    nlohmann::ordered_json j = agent::CheckReportJson(findings, ctx.now);
    nlohmann::ordered_json notes = nlohmann::ordered_json::array();
    if (!spec->note.empty()) notes.push_back(spec->note);
    if (!src->nvml_note().empty() && so.nvml) notes.push_back(src->nvml_note());
    j["notes"] = notes;
    if (!slurm_line.empty()) j["slurm"] = slurm_line;
    text = DumpJson(j);
  } else {
    for (const auto& f : findings) {
      text += fmt::format(
          "{:<7} {:<15} {}: {}{}\n", checks::StatusName(f.status), f.check, f.component, f.message,
          f.action == checks::Action::kNone ? ""
                                            : fmt::format(" [{}]", checks::ActionName(f.action)));
    }
    if (!spec->note.empty()) text += fmt::format("note: {}\n", spec->note);
    if (!src->nvml_note().empty() && so.nvml) text += fmt::format("note: {}\n", src->nvml_note());
    text += fmt::format("node {}: {}\n", node->hostname.empty() ? "-" : node->hostname,
                        checks::StatusName(worst));
    if (!slurm_line.empty()) text += slurm_line + "\n";
  }
  if (Status s = WriteOutput("", text); !s) return ReportError(s.error());
  if (worst == checks::Status::kFail) return kExitFailed;
  if (worst == checks::Status::kUnknown && !o.unknown_ok) return kExitEnvironment;
  return kExitOk;
}

}  // namespace gpufleet::cli
