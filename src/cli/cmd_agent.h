#pragma once
// `gpufleet agent [SPEC]`: the Prometheus node agent (docs/agent.md, docs/metrics.md).

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/cmd_check.h"

namespace gpufleet::cli {

struct AgentCliOptions {
  std::string spec;
  std::vector<std::string> set;
  std::string listen = ":9401";  // every address, as node_exporter's :9100
  std::string web_config;
  std::string root;
  std::string topology;  // a captured tree or hwloc XML instead of discovering the live node
  bool no_nvml = false;
  std::string bench_dir;
  double interval_s = 10;
  double check_interval_s = 60;
  int max_connections = 256;
  int max_connections_per_client = 32;
  int timeout_s = 10;
  std::vector<std::string> collectors_on, collectors_off;  // filled from --collector.X flags
  std::vector<std::string> raw_collector_flags;
  bool once = false;
  CheckLimitFlags limits;
};

CLI::App* AddAgentCommand(CLI::App& app, AgentCliOptions* options);
int RunAgent(const AgentCliOptions& options);

}  // namespace gpufleet::cli
