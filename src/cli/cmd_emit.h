#pragma once
// `gpufleet emit TARGET [SPEC]`: launch and scheduler configs from the spec. docs/emit.md.

#include <CLI/CLI.hpp>
#include <string>

#include "emit/emit.h"

namespace gpufleet::cli {

struct EmitCliOptions {
  std::string target;
  std::string spec;
  std::string output;    // a file (one output) or a folder (several)
  std::string topology;  // capture folder or hwloc XML: NIC order and NUMA binding
  std::vector<std::string> set;
  emit::EmitOptions emit;
};

CLI::App* AddEmitCommand(CLI::App& app, EmitCliOptions* options);
int RunEmit(const EmitCliOptions& options);

}  // namespace gpufleet::cli
