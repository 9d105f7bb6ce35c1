// bench collector: the newest `gpufleet bench ... --format json` result of each
// kind in the results folder (--bench-dir), so all-reduce busbw and storage
// throughput become time series. Files that are not gpufleet.bench/v1 JSON
// are skipped and counted.
#include <dirent.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "agent/bench_file.h"
#include "agent/collector.h"
#include "base/files.h"

namespace gpufleet::agent {

namespace {

// Result-row fields -> series (the bench JSON's names, schema gpufleet.bench/v1).
struct Field {
  const char* field;
  const char* metric;
  const char* help;
};
constexpr Field kFields[] = {
    {"busbw_bytes_per_s", "gpufleet_bench_busbw_bytes_per_second",
     "Bus bandwidth (nccl-tests definition) of the newest run"},
    {"algbw_bytes_per_s", "gpufleet_bench_algbw_bytes_per_second", "Algorithm bandwidth"},
    {"time_s", "gpufleet_bench_time_seconds", "Time of one operation of this size"},
    {"expected_busbw_bytes_per_s", "gpufleet_bench_expected_busbw_bytes_per_second",
     "What the plan says this hardware should reach"},
    {"throughput_bytes_per_s", "gpufleet_bench_throughput_bytes_per_second", "Storage throughput"},
};

// Job users write the folder: bounded, so a flood of files costs a bounded scan.
constexpr size_t kMaxFiles = 1000;
constexpr size_t kMaxFileBytes = 16 << 20;
constexpr size_t kMaxErrorSeries = 16;

}  // namespace

Status CollectBench(const CollectInput& in, MetricSet* out) {
  constexpr MetricType kG = MetricType::kGauge;
  if (in.bench_dir.empty()) return OkStatus();
  DIR* dir = opendir(in.bench_dir.c_str());
  if (dir == nullptr) return Unavailable(fmt::format("--bench-dir {}: cannot open", in.bench_dir));
  std::vector<std::string> files;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") files.push_back(name);
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  // The newest files by name (results are named by job id or time), at most kMaxFiles.
  if (files.size() > kMaxFiles) files.erase(files.begin(), files.end() - kMaxFiles);
  // The newest result of each kind ("collective", "storage", ...), by its own time. A file of
  // the wrong shape is skipped, counted, and named with its error (a bad file used to abort
  // the agent with an uncaught nlohmann::json::type_error).
  std::map<std::string, BenchFile> newest;
  std::vector<std::pair<std::string, std::string>> errors;
  for (const auto& f : files) {
    auto text = ReadWholeFile(in.bench_dir + "/" + f, "a bench result", kMaxFileBytes);
    Result<BenchFile> r = text ? ParseBenchFile(*text) : Result<BenchFile>(text.error());
    if (!r) {
      errors.emplace_back(f, r.error().message);
      continue;
    }
    auto it = newest.find(r->kind);
    if (it == newest.end() || it->second.time <= r->time) newest[r->kind] = std::move(*r);
  }
  out->Add("gpufleet_bench_unreadable_files", kG,
           "Files in the bench folder that are not gpufleet.bench/v1 JSON of the right shape", {},
           static_cast<double>(errors.size()));
  for (size_t i = 0; i < errors.size() && i < kMaxErrorSeries; ++i) {
    out->Add("gpufleet_bench_file_error_info", kG,
             "A bench file that was skipped, and why (the first 16)",
             {{"file", errors[i].first}, {"error", errors[i].second.substr(0, 200)}}, 1);
  }
  for (const auto& [kind, j] : newest) {
    out->Add("gpufleet_bench_last_run_timestamp_seconds", kG, "When the newest result was taken",
             {{"kind", kind}}, j.time);
    if (j.passed) {
      out->Add("gpufleet_bench_passed", kG, "1 if the newest run met its expected numbers",
               {{"kind", kind}}, *j.passed ? 1 : 0);
    }
    for (const auto& row : j.rows) {
      Labels l = {{"kind", kind}, {"op", row.op}, {"bytes", fmt::format("{}", row.bytes)}};
      for (const auto& [field, value] : row.values) {
        for (const auto& f : kFields) {
          if (field == f.field) out->Add(f.metric, kG, f.help, l, value);
        }
      }
    }
  }
  return OkStatus();
}

}  // namespace gpufleet::agent
