#pragma once
// `gpufleet plan [SPEC]`: size a cluster (memory, step time, communication,
// storage, power, fabric, cost) and list findings. docs/plan.md.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gpufleet::cli {

struct PlanOptions {
  std::string spec;                  // empty = the embedded reference cluster
  std::string format = "text";       // text, json, markdown, html
  std::string fail_on = "critical";  // exit 1 at this severity or above: critical, warning, never
  std::string output;                // -o FILE; empty = stdout
  std::vector<std::string> set;      // --set PATH=VALUE, applied to the spec in order
};

CLI::App* AddPlanCommand(CLI::App& app, PlanOptions* options);
int RunPlan(const PlanOptions& options);

}  // namespace gpufleet::cli
