#pragma once
// `gpufleet topo show|matrix|nccl-xml|lint|capture|affinity`: a node's real
// topology and its NCCL topology file. docs/topo.md.

#include <CLI/CLI.hpp>
#include <string>

namespace gpufleet::cli {

struct TopoOptions {
  std::string command;    // the subcommand that ran
  std::string hwloc_xml;  // --hwloc-xml FILE
  std::string root;       // --root DIR
  bool no_nvml = false;
  std::string format = "text";
  std::string output;       // -o FILE
  bool pcie_only = false;   // matrix --pcie-only
  std::string parse;        // matrix --parse FILE
  std::string compare;      // matrix --compare FILE
  std::string file;         // lint FILE, nccl-xml --normalize FILE
  std::string against;      // lint --against DIR|XML
  bool no_nics = false;     // nccl-xml
  bool no_nvlinks = false;  // nccl-xml
};

CLI::App* AddTopoCommand(CLI::App& app, TopoOptions* options);
int RunTopo(const TopoOptions& options);

}  // namespace gpufleet::cli
