#pragma once
// A `gpufleet bench … --format json` result (schema gpufleet.bench/v1) as the agent's bench
// collector reads it from --bench-dir. The folder is written by job users, so every field is
// type-checked here: a file of the wrong shape is an error naming the field, never an exception
// in a serving agent (a string "time" used to abort it). Pure; thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace gpufleet::agent {

struct BenchRow {
  std::string op;
  double bytes = 0;
  // (field of the result row, value): busbw_bytes_per_s, algbw_bytes_per_s, time_s,
  // expected_busbw_bytes_per_s, throughput_bytes_per_s, where present.
  std::vector<std::pair<std::string, double>> values;
};

struct BenchFile {
  std::string kind;  // collective, pairs, storage, gpu
  double time = 0;   // unix seconds
  std::optional<bool> passed;
  std::vector<BenchRow> rows;
};

// The result-row fields the collector exports, in order.
const std::vector<std::string>& BenchRowFields();

// Parses one result document; kInvalidArgument names the field that is missing or of the
// wrong type ("results[3].bytes: want a number"). Bounded: at most 100,000 rows.
Result<BenchFile> ParseBenchFile(std::string_view text);

}  // namespace gpufleet::agent
