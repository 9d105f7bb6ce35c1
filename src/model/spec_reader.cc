#include "model/spec_reader.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <system_error>

#include "base/strings.h"

namespace gpufleet::model {

namespace {
// No quantity in a spec comes near this (a zettabyte, a zettawatt, 10^21 dollars); past it
// the arithmetic that follows loses meaning, and 1e308 overflowed it.
constexpr double kMaxMagnitude = 1e21;
}  // namespace
namespace {

SourceLocation LocationOf(const YAML::Node& node) {
  if (!node.IsDefined()) return {};
  YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1, ""};
}

}  // namespace

YAML::Node SpecReader::Load(std::string_view text) {
  try {
    YAML::Node doc = YAML::Load(std::string(text));
    if (!doc.IsMap()) {
      error_ = InvalidArgument(
          Format(LocationOf(doc), "", "expected a YAML map at the top of the document"));
      return YAML::Node();
    }
    return doc;
  } catch (const YAML::Exception& e) {
    error_ = InvalidArgument(Format({e.mark.line + 1, e.mark.column + 1, ""}, "",
                                    fmt::format("YAML syntax error: {}", e.msg)));
    return YAML::Node();
  }
}

std::string SpecReader::OverrideOf(std::string_view path) const {
  for (const auto& o : overridden_) {
    if (path == o || (path.size() > o.size() && path.substr(0, o.size()) == o &&
                      (path[o.size()] == '.' || path[o.size()] == '['))) {
      return o;
    }
  }
  return "";
}

std::string SpecReader::Format(const SourceLocation& loc, std::string_view path,
                               std::string_view message) const {
  std::string where = file_;
  if (!loc.set.empty()) {
    where += fmt::format(" (--set {})", loc.set);
  } else if (loc.line > 0) {
    where += fmt::format(":{}:{}", loc.line, loc.column);
  }
  if (path.empty()) return fmt::format("{}: {}", where, message);
  return fmt::format("{}: {}: {}", where, path, message);
}

void SpecReader::Override(const YAML::Node& doc, std::string_view path,
                          std::string_view yaml_value) {
  if (error_) return;
  auto fail = [&](const std::string& why) {
    error_ = InvalidArgument(fmt::format("--set {}={}: {}", path, yaml_value, why));
  };
  YAML::Node value;
  try {
    value = YAML::Load(std::string(yaml_value));
  } catch (const YAML::Exception& e) {
    fail(fmt::format("the value is not valid YAML: {}", e.msg));
    return;
  }
  // Walk "a.b[2].c": keys descend into maps, [i] into lists.
  YAML::Node cur = doc;
  std::vector<std::string> steps;
  for (const std::string& part : strings::Split(path, '.')) {
    std::string key = part;
    std::vector<std::string> indices;
    while (!key.empty() && key.back() == ']') {
      size_t open = key.rfind('[');
      if (open == std::string::npos) break;
      indices.insert(indices.begin(), key.substr(open + 1, key.size() - open - 2));
      key.resize(open);
    }
    if (key.empty()) {
      fail("empty key in the path");
      return;
    }
    steps.push_back(key);
    for (auto& i : indices) steps.push_back("[" + i);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const bool last = i + 1 == steps.size();
    const std::string& step = steps[i];
    if (step[0] == '[') {
      size_t index = 0;
      auto [end, ec] = std::from_chars(step.data() + 1, step.data() + step.size(), index);
      if (ec != std::errc() || end != step.data() + step.size() || !cur.IsSequence() ||
          index >= cur.size()) {
        fail(fmt::format("no list item {}", step + "]"));
        return;
      }
      if (last) {
        cur[index] = value;
      } else {
        YAML::Node next = cur[index];
        cur.reset(next);
      }
      continue;
    }
    if (cur.IsDefined() && !cur.IsNull() && !cur.IsMap()) {
      fail(fmt::format("cannot set '{}' inside a value that is not a map", step));
      return;
    }
    if (last) {
      cur[step] = value;
    } else {
      if (!cur[step].IsDefined() || cur[step].IsNull()) cur[step] = YAML::Node(YAML::NodeType::Map);
      YAML::Node next = cur[step];
      cur.reset(next);
    }
  }
  overridden_.emplace_back(path);
}

void SpecReader::Fail(const YAML::Node& node, std::string_view path, std::string_view message) {
  if (error_) return;
  error_ = InvalidArgument(Format(LocationFor(node, path), path, message));
}

SourceLocation SpecReader::LocationFor(const YAML::Node& node, std::string_view path) const {
  // Values from --set carry marks of their own one-line document; name the --set instead.
  if (std::string o = OverrideOf(path); !o.empty()) return {0, 0, o};
  return LocationOf(node);
}

std::string SpecReader::Join(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return fmt::format("{}.{}", path, key);
}

void SpecReader::Remember(const YAML::Node& node, const std::string& path) {
  locations_[path] = LocationFor(node, path);
}

void SpecReader::Keys(const YAML::Node& node, std::string_view path,
                      std::span<const std::string_view> allowed) {
  if (error_) return;
  if (!node.IsMap()) {
    Fail(node, path, "expected a map of keys");
    return;
  }
  Remember(node, std::string(path));
  std::vector<std::string> names(allowed.begin(), allowed.end());
  for (const auto& kv : node) {
    std::string key = kv.first.Scalar();
    bool known = false;
    for (auto a : allowed) known = known || a == key;
    if (known) continue;
    std::string hint = strings::ClosestMatch(key, names);
    std::string fix = hint.empty() ? fmt::format("allowed keys: {}", fmt::join(names, ", "))
                                   : fmt::format("did you mean '{}'?", hint);
    Fail(kv.first, Join(path, key), fmt::format("unknown key '{}'; {}", key, fix));
    return;
  }
}

bool SpecReader::Has(const YAML::Node& map, std::string_view key) const {
  if (error_ || !map.IsMap()) return false;
  return map[std::string(key)].IsDefined();
}

YAML::Node SpecReader::Child(const YAML::Node& map, std::string_view key) const {
  if (!map.IsDefined() || !map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  return map[std::string(key)];
}

std::optional<YAML::Node> SpecReader::Scalar(const YAML::Node& map, std::string_view path,
                                             std::string_view key, bool required) {
  if (error_) return std::nullopt;
  std::string full = Join(path, key);
  YAML::Node node = Child(map, key);
  if (!node.IsDefined() || node.IsNull()) {
    if (required) Fail(map, full, fmt::format("missing required key '{}'", key));
    return std::nullopt;
  }
  if (!node.IsScalar()) {
    Fail(node, full, "expected a single value, not a list or map");
    return std::nullopt;
  }
  Remember(node, full);
  return node;
}

double SpecReader::Quantity(const YAML::Node& map, std::string_view path, std::string_view key,
                            units::Dimension dim, std::optional<double> fallback) {
  auto node = Scalar(map, path, key, !fallback.has_value());
  if (!node) return fallback.value_or(0);
  Result<double> value = units::Parse(node->Scalar(), dim);
  if (!value) {
    Fail(*node, Join(path, key), value.error().message);
    return fallback.value_or(0);
  }
  if (*value < 0 && dim != units::Dimension::kTemperature) {
    Fail(*node, Join(path, key), fmt::format("'{}' is negative", node->Scalar()));
    return fallback.value_or(0);
  }
  if (!std::isfinite(*value) || std::fabs(*value) > kMaxMagnitude) {
    Fail(*node, Join(path, key), fmt::format("'{}' is out of range", node->Scalar()));
    return fallback.value_or(0);
  }
  return *value;
}

double SpecReader::Number(const YAML::Node& map, std::string_view path, std::string_view key,
                          std::optional<double> fallback) {
  auto node = Scalar(map, path, key, !fallback.has_value());
  if (!node) return fallback.value_or(0);
  const std::string& s = node->Scalar();
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(value)) {
    Fail(*node, Join(path, key), fmt::format("'{}' is not a number", s));
    return fallback.value_or(0);
  }
  if (std::fabs(value) > kMaxMagnitude) {
    Fail(*node, Join(path, key), fmt::format("'{}' is out of range", s));
    return fallback.value_or(0);
  }
  return value;
}

int SpecReader::Integer(const YAML::Node& map, std::string_view path, std::string_view key,
                        std::optional<int> fallback, int min_value, int max_value) {
  auto node = Scalar(map, path, key, !fallback.has_value());
  if (!node) return fallback.value_or(0);
  const std::string& s = node->Scalar();
  long long value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) {
    Fail(*node, Join(path, key), fmt::format("'{}' is not a whole number", s));
    return fallback.value_or(0);
  }
  if (value < min_value || value > max_value) {
    Fail(*node, Join(path, key),
         value < min_value ? fmt::format("{} is out of range; use a whole number of at least {}",
                                         value, min_value)
                           : fmt::format("{} is out of range; use a whole number from {} to {}",
                                         value, min_value, max_value));
    return fallback.value_or(0);
  }
  return static_cast<int>(value);
}

std::string SpecReader::String(const YAML::Node& map, std::string_view path, std::string_view key,
                               const std::optional<std::string>& fallback) {
  auto node = Scalar(map, path, key, !fallback.has_value());
  if (!node) return fallback.value_or("");
  return node->Scalar();
}

bool SpecReader::Bool(const YAML::Node& map, std::string_view path, std::string_view key,
                      std::optional<bool> fallback) {
  auto node = Scalar(map, path, key, !fallback.has_value());
  if (!node) return fallback.value_or(false);
  std::string s = strings::ToLower(node->Scalar());
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  Fail(*node, Join(path, key), fmt::format("'{}' is not true or false", node->Scalar()));
  return fallback.value_or(false);
}

std::string SpecReader::Enum(const YAML::Node& map, std::string_view path, std::string_view key,
                             std::span<const std::string_view> allowed,
                             const std::optional<std::string>& fallback) {
  auto node = Scalar(map, path, key, !fallback.has_value());
  if (!node) return fallback.value_or("");
  std::string s = strings::ToLower(node->Scalar());
  for (auto a : allowed) {
    if (a == s) return s;
  }
  std::vector<std::string> names(allowed.begin(), allowed.end());
  std::string hint = strings::ClosestMatch(s, names);
  Fail(*node, Join(path, key),
       fmt::format("'{}' is not one of {}{}", node->Scalar(), fmt::join(names, ", "),
                   hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
  return fallback.value_or("");
}

std::vector<std::string> SpecReader::StringList(const YAML::Node& map, std::string_view path,
                                                std::string_view key) {
  std::vector<std::string> out;
  if (error_) return out;
  YAML::Node node = Child(map, key);
  if (!node.IsDefined() || node.IsNull()) return out;
  std::string full = Join(path, key);
  if (node.IsScalar()) return {node.Scalar()};
  if (!node.IsSequence()) {
    Fail(node, full, "expected a list of strings");
    return out;
  }
  Remember(node, full);
  for (const auto& item : node) {
    if (!item.IsScalar()) {
      Fail(item, full, "expected a list of strings");
      return {};
    }
    out.push_back(item.Scalar());
  }
  return out;
}

std::pair<double, double> SpecReader::Range(const YAML::Node& map, std::string_view path,
                                            std::string_view key, units::Dimension dim,
                                            std::optional<double> fallback) {
  if (error_) return {fallback.value_or(0), fallback.value_or(0)};
  YAML::Node node = Child(map, key);
  std::string full = Join(path, key);
  if (node.IsDefined() && node.IsSequence()) {
    Remember(node, full);
    if (node.size() != 2) {
      Fail(node, full, "expected one value or a [low, high] pair");
      return {0, 0};
    }
    YAML::Node pair(YAML::NodeType::Map);
    pair["low"] = node[0];
    pair["high"] = node[1];
    double low = Quantity(pair, full, "low", dim);
    double high = Quantity(pair, full, "high", dim);
    if (!error_ && low > high) {
      Fail(node, full, fmt::format("low {} is above high {}; write [low, high]", low, high));
    }
    return {low, high};
  }
  double v = Quantity(map, path, key, dim, fallback);
  return {v, v};
}

}  // namespace gpufleet::model
