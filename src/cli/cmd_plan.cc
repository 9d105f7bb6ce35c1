#include "cli/cmd_plan.h"

#include "base/json.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "model/spec.h"
#include "plan/plan.h"
#include "report/plan_report.h"

namespace gpufleet::cli {

CLI::App* AddPlanCommand(CLI::App& app, PlanOptions* o) {
  CLI::App* cmd = app.add_subcommand(
      "plan", "Size a cluster: memory fit, step time, communication, storage, power, fabric, cost");
  cmd->add_option("SPEC", o->spec, "Cluster spec (YAML); default: the embedded reference cluster");
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "markdown", "html"}))
      ->capture_default_str();
  cmd->add_option("--fail-on", o->fail_on, "Exit 1 when a finding has this severity or worse")
      ->check(CLI::IsMember({"critical", "warning", "never"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Write the report to this file instead of stdout");
  cmd->add_option("--set", o->set,
                  "Change a spec value before planning, PATH=VALUE (YAML), e.g. "
                  "--set nodes.count=64 --set workload.batch.micro=2; repeatable")
      ->take_all()
      ->allow_extra_args(false);
  return cmd;
}

int RunPlan(const PlanOptions& o) {
  Result<model::Spec> spec = model::LoadSpec(o.spec, o.set);
  if (!spec) return ReportError(spec.error());
  Result<plan::Plan> plan = plan::MakePlan(*spec);
  if (!plan) return ReportError(plan.error());

  std::string text;
  if (o.format == "json") {
    text = DumpJson(report::PlanJson(*spec, *plan));
  } else if (o.format == "markdown") {
    text = report::PlanMarkdown(*spec, *plan);
  } else if (o.format == "html") {
    text = report::PlanHtml(*spec, *plan);
  } else {
    text = report::PlanText(*spec, *plan);
  }
  if (Status s = WriteOutput(o.output, text); !s) return ReportError(s.error());

  int worst = -1;
  for (const auto& f : plan->findings) worst = std::max(worst, static_cast<int>(f.severity));
  const int limit = o.fail_on == "never"     ? 99
                    : o.fail_on == "warning" ? static_cast<int>(plan::Severity::kWarning)
                                             : static_cast<int>(plan::Severity::kCritical);
  return worst >= limit ? kExitFailed : kExitOk;
}

}  // namespace gpufleet::cli
