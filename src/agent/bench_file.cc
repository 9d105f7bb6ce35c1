#include "agent/bench_file.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace gpufleet::agent {

namespace {

using Json = nlohmann::json;

Result<double> Number(const Json& j, const std::string& where) {
  if (!j.is_number()) return InvalidArgument(fmt::format("{}: want a number", where));
  const double v = j.get<double>();
  if (!std::isfinite(v)) return InvalidArgument(fmt::format("{}: not a finite number", where));
  return v;
}

Result<std::string> String(const Json& j, const std::string& where) {
  if (!j.is_string()) return InvalidArgument(fmt::format("{}: want a string", where));
  return j.get<std::string>();
}

}  // namespace

const std::vector<std::string>& BenchRowFields() {
  static const std::vector<std::string> kFields = {"busbw_bytes_per_s", "algbw_bytes_per_s",
                                                   "time_s", "expected_busbw_bytes_per_s",
                                                   "throughput_bytes_per_s"};
  return kFields;
}

Result<BenchFile> ParseBenchFile(std::string_view text) {
  // nlohmann-json's exceptions stop here: parse without them, read with checks.
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("not JSON");
  if (!j.is_object()) return InvalidArgument("not a JSON object");
  if (!j.contains("schema") || j["schema"] != "gpufleet.bench/v1") {
    return InvalidArgument("schema: want \"gpufleet.bench/v1\"");
  }
  BenchFile f;
  if (!j.contains("kind")) return InvalidArgument("kind: missing");
  GPUFLEET_ASSIGN_OR_RETURN(f.kind, String(j["kind"], "kind"));
  if (!j.contains("time")) return InvalidArgument("time: missing");
  GPUFLEET_ASSIGN_OR_RETURN(f.time, Number(j["time"], "time"));
  if (j.contains("verdict")) {
    GPUFLEET_ASSIGN_OR_RETURN(std::string v, String(j["verdict"], "verdict"));
    f.passed = v == "pass";
  }
  if (!j.contains("results")) return f;
  const Json& results = j["results"];
  if (!results.is_array()) return InvalidArgument("results: want a list");
  if (results.size() > 100000) return InvalidArgument("results: more than 100,000 rows");
  for (size_t i = 0; i < results.size(); ++i) {
    const Json& r = results[i];
    const std::string where = fmt::format("results[{}]", i);
    if (!r.is_object()) return InvalidArgument(where + ": want an object");
    BenchRow row;
    if (r.contains("op")) {
      GPUFLEET_ASSIGN_OR_RETURN(row.op, String(r["op"], where + ".op"));
    }
    if (r.contains("bytes")) {
      GPUFLEET_ASSIGN_OR_RETURN(row.bytes, Number(r["bytes"], where + ".bytes"));
    }
    for (const auto& field : BenchRowFields()) {
      if (!r.contains(field)) continue;
      GPUFLEET_ASSIGN_OR_RETURN(double v, Number(r[field], where + "." + field));
      row.values.emplace_back(field, v);
    }
    f.rows.push_back(std::move(row));
  }
  return f;
}

}  // namespace gpufleet::agent
