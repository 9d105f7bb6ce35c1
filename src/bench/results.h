#pragma once
// Results of the benchmarks as plain data, the judgment against what the
// hardware should do, and the gpufleet.bench/v1 JSON that `gpufleet agent
// --bench-dir` turns into metrics. Pure; thread-safe.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/collective_def.h"

namespace gpufleet::bench {

struct CollectiveRow {
  Op op = Op::kAllReduce;
  DataType type = DataType::kFloat;
  RedOp redop = RedOp::kSum;
  int root = -1;  // -1: not a rooted op
  uint64_t bytes = 0;
  uint64_t count = 0;
  double time_s = 0;  // mean over iterations, averaged over ranks (nccl-tests -a 1)
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
  int64_t wrong = -1;  // -1: not checked (--check 0)
  // Per iteration, the slowest rank's time (when the collective was done everywhere).
  double p50_s = 0, p99_s = 0, max_s = 0;
  int slowest_rank = 0;                   // highest mean time
  double skew = 0;                        // slowest rank's mean / the median rank's mean - 1
  double expected_busbw_bytes_per_s = 0;  // 0: no expectation
  std::string expected_from;              // "plan", "--expect-busbw"
  double ratio = 0;                       // measured / expected
};

struct Finding {
  std::string severity;  // "fail", "warn"
  std::string message;
};

struct CollectiveReport {
  std::string backend;  // "mpi", "nccl"
  std::string device;
  int ranks = 0;
  int nodes = 0;
  std::vector<std::string> hosts;  // by rank
  int warmup = 0, iters = 0;
  double threshold = 0.8;
  uint64_t judge_from_bytes = 0;
  std::vector<CollectiveRow> rows;
  std::vector<Finding> findings;
  bool passed() const;
};

// True when no finding is a "fail" (warnings pass).
bool NoFailures(const std::vector<Finding>& findings);
// The host of `rank` for messages, "?" when unknown.
std::string HostOf(const std::vector<std::string>& hosts, int rank);
// bench pairs: the warning for a pair below the floor once and fine when measured again.
std::string TransientPairMessage(const std::vector<std::string>& hosts, int a, int b);

// Per-iteration percentiles of `v` (nearest-rank), 0 for an empty vector.
double Percentile(std::vector<double> v, double p);

// Fills findings: any #wrong; busbw under threshold x expected at sizes from
// `judge_from_bytes`; the 4 MiB all-reduce over 30 ms rule of thumb; a rank
// more than 20 % slower than the median (warn).
void Judge(CollectiveReport* report);

// nccl-tests' familiar table, plus percentiles, the slowest rank and the expectation.
std::string CollectiveText(const CollectiveReport& r);
nlohmann::json CollectiveJson(const CollectiveReport& r);  // schema gpufleet.bench/v1

// The frame every bench result shares: schema gpufleet.bench/v1, `kind`, `time`
// (Unix seconds, now), `verdict`; the caller adds the rest.
nlohmann::json BenchDocument(const std::string& kind, bool passed);

}  // namespace gpufleet::bench
