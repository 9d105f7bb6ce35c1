#pragma once
// `gpufleet sim step|goodput [SPEC]`: step time at any scale (breakdown, sweep,
// layout search) and goodput over weeks under failures and checkpoints. docs/sim.md.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gpufleet::cli {

struct SimOptions {
  std::string spec;
  std::vector<std::string> set;
  std::string format = "text";
  std::string output;
  // step
  std::string sweep;  // "gpus=8..100000"
  bool strong = false;
  int points = 0;
  bool search = false;
  int gpus = 0;
  std::string flops;  // "megatron" or "causal"; empty: the spec's workload.attention_flops
  // goodput
  double days = 30;
  int trials = 1000;
  uint64_t seed = 1;
  double interval_min = 0;  // 0: the spec's
  // Negative: take the spec's reliability section (or its defaults). (They were 300, 120, ...:
  // the spec's reliability times and stragglers were never used.)
  int spares = -1;
  std::vector<std::string> rates;  // CLASS=PER_NODE_PER_DAY
  bool no_failures = false;
  double detect_s = -1, reschedule_s = -1, reschedule_no_spare_s = -1, init_s = -1, warmup_s = -1;
  double stragglers = -1;          // per node per day
  double straggler_slowdown = -1;  // percent
  // Measured checkpoint costs in seconds, instead of the plan's from bandwidths.
  double block_s = -1, write_s = -1, load_s = -1;
  int scan = 13;
  bool step_cmd = false, goodput_cmd = false;
};

CLI::App* AddSimCommand(CLI::App& app, SimOptions* options);
int RunSim(const SimOptions& options);

}  // namespace gpufleet::cli
