// bench collector: the newest `gpufleet bench ... --format json` result of each
// kind in the results folder (--bench-dir), so all-reduce busbw and storage
// throughput become time series. Files that are not gpufleet.bench/v1 JSON
// are skipped and counted.
#include <dirent.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

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
  // The newest result of each kind ("collective", "storage", ...), by its own time.
  std::map<std::string, nlohmann::json> newest;
  int bad = 0;
  for (const auto& f : files) {
    auto text = ReadWholeFile(in.bench_dir + "/" + f, "a bench result");
    if (!text) {
      ++bad;
      continue;
    }
    auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || j.value("schema", "") != "gpufleet.bench/v1") {
      ++bad;
      continue;
    }
    const std::string kind = j.value("kind", "");
    const double time = j.value("time", 0.0);
    auto it = newest.find(kind);
    if (it == newest.end() || it->second.value("time", 0.0) <= time) newest[kind] = std::move(j);
  }
  out->Add("gpufleet_bench_unreadable_files", kG,
           "Files in the bench folder that are not gpufleet.bench/v1 JSON", {}, bad);
  for (const auto& [kind, j] : newest) {
    out->Add("gpufleet_bench_last_run_timestamp_seconds", kG, "When the newest result was taken",
             {{"kind", kind}}, j.value("time", 0.0));
    if (j.contains("verdict")) {
      out->Add("gpufleet_bench_passed", kG, "1 if the newest run met its expected numbers",
               {{"kind", kind}}, j.value("verdict", "") == "pass" ? 1 : 0);
    }
    for (const auto& r : j.value("results", nlohmann::json::array())) {
      if (!r.is_object()) continue;
      Labels l = {{"kind", kind},
                  {"op", r.value("op", "")},
                  {"bytes", fmt::format("{}", r.value("bytes", 0.0))}};
      for (const auto& f : kFields) {
        if (r.contains(f.field)) out->Add(f.metric, kG, f.help, l, r.value(f.field, 0.0));
      }
    }
  }
  return OkStatus();
}

}  // namespace gpufleet::agent
