#include "agent/metrics.h"

#include <fmt/format.h>

#include <cmath>

#include "base/strings.h"

namespace gpufleet::agent {

MetricFamily& MetricSet::Family(std::string_view name, MetricType type, std::string_view help) {
  for (auto& f : families_) {
    if (f.name == name) return f;
  }
  families_.push_back({std::string(name), type, std::string(help), {}});
  return families_.back();
}

void MetricSet::Append(MetricSet&& other) {
  for (auto& f : other.families_) {
    MetricFamily& mine = Family(f.name, f.type, f.help);
    for (auto& s : f.samples) mine.samples.push_back(std::move(s));
  }
  other.families_.clear();
}

size_t MetricSet::SampleCount() const {
  size_t n = 0;
  for (const auto& f : families_) n += f.samples.size();
  return n;
}

std::string EscapeLabelValue(std::string_view raw) {
  // The text format is UTF-8: bytes that are not (a disk or GPU name from the system) become
  // "\xNN" text, so every series still parses.
  const std::string valid = strings::ValidUtf8(raw);
  const std::string_view s = valid;
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view raw) {
  const std::string valid = strings::ValidUtf8(raw);
  const std::string_view s = valid;
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

std::string MetricSet::Render() const {
  std::string out;
  out.reserve(SampleCount() * 96);
  auto it = std::back_inserter(out);
  for (const auto& f : families_) {
    if (f.samples.empty()) continue;
    fmt::format_to(it, "# HELP {} {}\n# TYPE {} {}\n", f.name, EscapeHelp(f.help), f.name,
                   f.type == MetricType::kCounter ? "counter" : "gauge");
    for (const auto& s : f.samples) {
      out += f.name;
      if (!s.labels.empty()) {
        out += '{';
        for (size_t i = 0; i < s.labels.size(); ++i) {
          if (i) out += ',';
          fmt::format_to(it, "{}=\"{}\"", s.labels[i].first, EscapeLabelValue(s.labels[i].second));
        }
        out += '}';
      }
      out += ' ';
      out += FormatValue(s.value);
      out += '\n';
    }
  }
  return out;
}

}  // namespace gpufleet::agent
