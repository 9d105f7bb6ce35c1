#pragma once
// `gpufleet bench collective|pairs|storage|gpu`: measure and judge against what
// the hardware should do. storage runs here; collective, pairs and gpu execute
// gpufleet-bench (MPI, CUDA) in place. docs/bench.md.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gpufleet::cli {

struct BenchOptions {
  // storage
  std::string path;
  std::string size = "1G", block = "1M", checkpoint_size;
  int fsyncs = 200, jobs = 4, metadata_files = 2000, shards = 8;
  double random_seconds = 5, budget_s = 120;
  std::string direct = "auto";
  std::string spec;
  std::vector<std::string> set;
  std::string format = "text";
  std::string output;
  bool storage_cmd = false;
  // collective, pairs, gpu: forwarded
  std::string forward;  // the subcommand
  std::vector<std::string> forward_args;
};

CLI::App* AddBenchCommand(CLI::App& app, BenchOptions* options);
int RunBench(const BenchOptions& options);

}  // namespace gpufleet::cli
