#pragma once
// `gpufleet check [SPEC]`: node health now (exit 0 ok, 1 a check failed, 2 bad
// input, 3 cannot evaluate); `--slurm` drains or resumes this Slurm node. docs/check.md.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gpufleet::cli {

struct CheckOptions {
  std::string spec;
  std::vector<std::string> set;
  std::string hwloc_xml;
  std::string root;
  bool no_nvml = false;
  std::string format = "text";
  bool slurm = false;
  std::string node;  // Slurm node name; default: SLURMD_NODENAME or the short hostname
  std::vector<std::string> disks;
  double disk_full = 95;  // percent
};

CLI::App* AddCheckCommand(CLI::App& app, CheckOptions* options);
int RunCheck(const CheckOptions& options);

}  // namespace gpufleet::cli
