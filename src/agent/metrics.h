#pragma once
// Metric families and the Prometheus text exposition format 0.0.4
// (prometheus/docs exposition_formats.md): HELP and TYPE once per family, the
// family's samples contiguous, label values escaped, values in Go ParseFloat
// syntax (NaN, +Inf), no timestamps. A value type; thread-compatible.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpufleet::agent {

using Labels = std::vector<std::pair<std::string, std::string>>;

enum class MetricType { kGauge, kCounter };

struct MetricSample {
  Labels labels;
  double value = 0;
};

struct MetricFamily {
  std::string name;
  MetricType type = MetricType::kGauge;
  std::string help;
  std::vector<MetricSample> samples;
};

class MetricSet {
 public:
  // The family `name`, created on first use (type and help from that first use).
  MetricFamily& Family(std::string_view name, MetricType type, std::string_view help);
  void Add(std::string_view name, MetricType type, std::string_view help, Labels labels,
           double value) {
    Family(name, type, help).samples.push_back({std::move(labels), value});
  }
  void Append(MetricSet&& other);

  const std::vector<MetricFamily>& families() const { return families_; }
  size_t SampleCount() const;
  // Text format 0.0.4.
  std::string Render() const;

 private:
  std::vector<MetricFamily> families_;
};

inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

// Escapes for the exposition format: label values (\\, \", \n) and HELP (\\, \n).
std::string EscapeLabelValue(std::string_view s);
std::string EscapeHelp(std::string_view s);
// Go's ParseFloat syntax, shortest round-trip: "1", "0.25", "1e+21", "NaN", "+Inf".
std::string FormatValue(double v);

}  // namespace gpufleet::agent
