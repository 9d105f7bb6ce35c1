#include "cli/cmd_check.h"

#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "checks/check.h"
#include "checks/slurm.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "model/spec.h"
#include "topo/discover.h"

namespace gpufleet::cli {

CLI::App* AddCheckCommand(CLI::App& app, CheckOptions* o) {
  CLI::App* cmd =
      app.add_subcommand("check", "Node health now: exit 0/1, or drain/resume the Slurm node");
  cmd->add_option("SPEC", o->spec, "Cluster spec (YAML); default: the embedded reference cluster");
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
  cmd->add_option("--node", o->node,
                  "Slurm node name (default: SLURMD_NODENAME, else hostname -s)");
  cmd->add_option("--disk", o->disks, "Filesystems to check for space (default: / and /tmp)");
  cmd->add_option("--disk-full", o->disk_full, "Fail above this percent used")
      ->capture_default_str();
  return cmd;
}

int RunCheck(const CheckOptions& o) {
  Result<model::Spec> spec = model::LoadSpec(o.spec, o.set);
  if (!spec) return ReportError(spec.error());
  topo::DiscoverOptions d;
  d.hwloc_xml = o.hwloc_xml;
  d.root = o.root;
  d.nvml = !o.no_nvml;
  auto node = topo::Discover(d);
  if (!node) return ReportError(node.error());

  checks::CheckContext ctx;
  ctx.spec = &*spec;
  ctx.node = &*node;
  ctx.disk_full_fraction = o.disk_full / 100;
  std::vector<std::string> disks = o.disks;
  if (disks.empty() && o.hwloc_xml.empty() && o.root.empty()) disks = {"/", "/tmp"};
  for (const auto& path : disks) {
    struct statvfs st {};
    if (statvfs(path.c_str(), &st) != 0 || st.f_blocks == 0) {
      return ReportError(InvalidArgument(fmt::format("--disk {}: cannot stat it", path)));
    }
    ctx.disks.push_back(
        {path, 1.0 - static_cast<double>(st.f_bavail) / static_cast<double>(st.f_blocks)});
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
      char host[256] = {};
      gethostname(host, sizeof(host) - 1);
      name = host;
      name = name.substr(0, name.find('.'));
    }
    auto decision = checks::ApplyToSlurm(findings, name, [](const std::vector<std::string>& argv) {
      return sys::RunCommand(argv, 30);
    });
    if (!decision) return ReportError(decision.error());
    const char* what = decision->action == checks::SlurmAction::kDrain    ? "drained"
                       : decision->action == checks::SlurmAction::kResume ? "resumed"
                                                                          : "unchanged";
    slurm_line = fmt::format("slurm node {}: {} ({})", name, what, decision->why);
  }

  std::string text;
  if (o.format == "json") {
    nlohmann::ordered_json j;
    j["schema"] = "gpufleet.check/v1";
    j["status"] = checks::StatusName(worst);
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& f : findings) {
      arr.push_back({{"check", f.check},
                     {"status", checks::StatusName(f.status)},
                     {"component", f.component},
                     {"message", f.message},
                     {"action", checks::ActionName(f.action)}});
    }
    j["findings"] = arr;
    if (!slurm_line.empty()) j["slurm"] = slurm_line;
    text = j.dump(2) + "\n";
  } else {
    for (const auto& f : findings) {
      text += fmt::format(
          "{:<7} {:<11} {}: {}{}\n", checks::StatusName(f.status), f.check, f.component, f.message,
          f.action == checks::Action::kNone ? ""
                                            : fmt::format(" [{}]", checks::ActionName(f.action)));
    }
    text += fmt::format("node {}: {}\n", node->hostname.empty() ? "-" : node->hostname,
                        checks::StatusName(worst));
    if (!slurm_line.empty()) text += slurm_line + "\n";
  }
  if (Status s = WriteOutput("", text); !s) return ReportError(s.error());
  if (worst == checks::Status::kFail) return kExitFailed;
  if (worst == checks::Status::kUnknown) return kExitEnvironment;
  return kExitOk;
}

}  // namespace gpufleet::cli
