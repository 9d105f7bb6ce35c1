#pragma once
// gpufleet-bench's command line: its flags and subcommands, defined once for the helper that
// parses them and for gpufleet's completion and man pages (cli/docgen.h), which describe
// `gpufleet bench collective|pairs|gpu` although gpufleet forwards them unparsed.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gpufleet::cli {

struct BenchCommon {
  std::string backend = "auto";
  double timeout_s = 300;
  double startup_timeout_s = 300;  // MPI start-up: every rank through MPI_Init
  std::string format = "text";
  std::string output;
};

struct CollectiveFlags {
  std::vector<std::string> ops;
  std::string minbytes = "32M", maxbytes = "32M", stepbytes = "1M";
  double stepfactor = 0;
  int warmup = 5, iters = 20, check = 1, root = 0;
  std::string dtype = "float", redop = "sum";
  std::string spec;
  std::vector<std::string> set;
  double threshold = 0.8;
  std::string expect_busbw;
  std::string judge_from = "1M";
  int corrupt_rank = -1;
};

struct PairsFlags {
  std::string size = "64M";
  int iters = 10, warmup = 2, budget = 0;
  double fraction = 0.8;
  int slow_rank = -1;
  std::string slow_link;
};

struct GpuFlags {
  std::vector<std::string> dtypes = {"bf16", "fp16", "tf32", "fp32"};
  int size = 8192, iters = 20;
  std::vector<int> devices;
};

struct BenchFlags {
  BenchCommon common;
  CollectiveFlags collective;
  PairsFlags pairs;
  GpuFlags gpu;
};

struct BenchCommands {
  CLI::App* collective = nullptr;
  CLI::App* pairs = nullptr;
  CLI::App* gpu = nullptr;
};

// Adds collective, pairs and gpu to `app`, their values stored in `f`.
BenchCommands AddBenchCommands(CLI::App* app, BenchFlags* f);

}  // namespace gpufleet::cli
