// Fuzz target: the Prometheus text the agent writes, round-tripped. Label values (disk, GPU and
// file names come from the system and from users) and values come from the input; the rendered
// exposition is parsed back line by line, and every series must parse to the labels and value
// that went in (label values as valid UTF-8) and the whole text must be UTF-8.
#include <cmath>
#include <cstring>
#include <map>

#include "agent/metrics.h"
#include "base/strings.h"
#include "fuzz/fuzz_common.h"

namespace {

using gpufleet::agent::Labels;

// One sample line of the text format: name{l="v",...} value. False if it does not parse.
bool ParseSample(std::string_view line, std::string* name, Labels* labels, std::string* value) {
  size_t i = 0;
  while (i < line.size() &&
         (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == ':')) {
    ++i;
  }
  if (i == 0) return false;
  *name = std::string(line.substr(0, i));
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      size_t k = i;
      while (k < line.size() && line[k] != '=') ++k;
      if (k + 1 >= line.size() || line[k + 1] != '"') return false;
      std::string lname(line.substr(i, k - i)), lvalue;
      size_t v = k + 2;
      for (; v < line.size() && line[v] != '"'; ++v) {
        if (line[v] == '\\') {
          if (++v >= line.size()) return false;
          if (line[v] == 'n') {
            lvalue += '\n';
          } else if (line[v] == '\\' || line[v] == '"') {
            lvalue += line[v];
          } else {
            return false;  // no other escape is valid in a label value
          }
        } else {
          if (line[v] == '\n') return false;
          lvalue += line[v];
        }
      }
      if (v >= line.size()) return false;
      labels->emplace_back(lname, lvalue);
      i = v + 1;
      if (i < line.size() && line[i] == ',') ++i;
    }
    if (i >= line.size()) return false;
    ++i;
  }
  if (i >= line.size() || line[i] != ' ') return false;
  *value = std::string(line.substr(i + 1));
  return !value->empty() && value->find(' ') == std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpufleet;
  using agent::MetricType;
  const std::string_view text = fuzz::Text(data, size);
  // Input: '\x1f'-separated label values; every ninth byte also seeds a value.
  std::vector<std::string> parts = strings::Split(text, '\x1f');
  if (parts.size() > 64) parts.resize(64);
  agent::MetricSet set;
  std::vector<std::pair<Labels, double>> added;
  for (size_t i = 0; i < parts.size(); ++i) {
    double v = 0;
    if (parts[i].size() >= 8) std::memcpy(&v, parts[i].data(), sizeof(v));
    Labels l = {{"device", parts[i]}, {"gpu", std::to_string(i)}};
    set.Add(i % 2 ? "gpufleet_fuzz_a_total" : "gpufleet_fuzz_b",
            i % 2 ? MetricType::kCounter : MetricType::kGauge, parts[i], l, v);
    added.emplace_back(l, v);
  }
  const std::string out = set.Render();
  if (!strings::IsValidUtf8(out)) __builtin_trap();
  // Parse back: samples in family order, so match by the "gpu" label.
  std::map<std::string, std::pair<Labels, std::string>> seen;
  size_t start = 0;
  while (start < out.size()) {
    const size_t nl = out.find('\n', start);
    if (nl == std::string::npos) __builtin_trap();  // every line ends
    const std::string_view line(out.data() + start, nl - start);
    start = nl + 1;
    if (line.empty() || line[0] == '#') continue;
    std::string name, value;
    Labels labels;
    if (!ParseSample(line, &name, &labels, &value)) __builtin_trap();
    std::string gpu;
    for (const auto& [k, v] : labels) {
      if (k == "gpu") gpu = v;
    }
    seen[gpu] = {labels, value};
  }
  for (size_t i = 0; i < added.size(); ++i) {
    auto it = seen.find(std::to_string(i));
    if (it == seen.end()) __builtin_trap();  // a series lost
    if (it->second.first[0].second != strings::ValidUtf8(added[i].first[0].second))
      __builtin_trap();
    const double back = std::strtod(it->second.second.c_str(), nullptr);
    const double want = added[i].second;
    if (!(back == want || (std::isnan(back) && std::isnan(want)))) __builtin_trap();
  }
  return 0;
}
