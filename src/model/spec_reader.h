#pragma once
// SpecReader: the one adapter between yaml-cpp (which throws) and gpufleet's
// error values. It reads typed fields out of YAML maps, remembers where each
// field was (file:line:column) for later validation messages, rejects unknown
// keys with a "did you mean" hint, and keeps the FIRST error only: after a
// failure every read is a no-op returning the fallback, so loaders read
// straight through and check failed() once. Not thread-safe.

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/units.h"

namespace gpufleet::model {

struct SourceLocation {
  int line = 0;     // 1-based; 0 = unknown
  int column = 0;   // 1-based
  std::string set;  // the --set path that gave this value, when it came from the command line
};

class SpecReader {
 public:
  // `file` names the document in messages ("examples/x.yaml", "<reference>").
  explicit SpecReader(std::string file) : file_(std::move(file)) {}

  // Parses `text` into a YAML document. On a syntax error, fails and returns a null node.
  YAML::Node Load(std::string_view text);

  bool failed() const { return error_.has_value(); }
  const Error& error() const { return *error_; }
  const std::string& file() const { return file_; }

  // Records a failure at `node` (or at the map holding a missing key).
  void Fail(const YAML::Node& node, std::string_view path, std::string_view message);
  // "file:line:column: path: message" for a known location.
  std::string Format(const SourceLocation& loc, std::string_view path,
                     std::string_view message) const;
  // The --set path that covers `path`, or "" (for messages about overridden values).
  std::string OverrideOf(std::string_view path) const;

  // Fails unless `node` is a map whose keys are all in `allowed`.
  void Keys(const YAML::Node& node, std::string_view path,
            std::span<const std::string_view> allowed);
  void Keys(const YAML::Node& node, std::string_view path,
            std::initializer_list<std::string_view> allowed) {
    Keys(node, path, std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  // True if `map` has `key` (and no failure happened yet).
  bool Has(const YAML::Node& map, std::string_view key) const;
  YAML::Node Child(const YAML::Node& map, std::string_view key) const;

  // Typed reads of map[key]. With no fallback the key is required.
  double Quantity(const YAML::Node& map, std::string_view path, std::string_view key,
                  units::Dimension dim, std::optional<double> fallback = std::nullopt);
  // A whole number in [min_value, max_value]: every count a later formula multiplies has a
  // bound, so no spec that passes validation overflows later.
  int Integer(const YAML::Node& map, std::string_view path, std::string_view key,
              std::optional<int> fallback = std::nullopt, int min_value = 0,
              int max_value = 100'000'000);
  double Number(const YAML::Node& map, std::string_view path, std::string_view key,
                std::optional<double> fallback = std::nullopt);
  std::string String(const YAML::Node& map, std::string_view path, std::string_view key,
                     const std::optional<std::string>& fallback = std::nullopt);
  bool Bool(const YAML::Node& map, std::string_view path, std::string_view key,
            std::optional<bool> fallback = std::nullopt);
  // A string that must be one of `allowed` (compared case-insensitively); returns it lower-case.
  std::string Enum(const YAML::Node& map, std::string_view path, std::string_view key,
                   std::span<const std::string_view> allowed,
                   const std::optional<std::string>& fallback = std::nullopt);
  std::string Enum(const YAML::Node& map, std::string_view path, std::string_view key,
                   std::initializer_list<std::string_view> allowed,
                   const std::optional<std::string>& fallback = std::nullopt) {
    return Enum(map, path, key, std::span(allowed.begin(), allowed.size()), fallback);
  }
  std::vector<std::string> StringList(const YAML::Node& map, std::string_view path,
                                      std::string_view key);
  // A number or a [low, high] pair, both in `dim` (kCount for plain numbers).
  std::pair<double, double> Range(const YAML::Node& map, std::string_view path,
                                  std::string_view key, units::Dimension dim,
                                  std::optional<double> fallback = std::nullopt);

  // Applies `path` = `yaml_value` to `doc` (creating maps on the way) and
  // remembers it, so errors in that value name the --set.
  void Override(const YAML::Node& doc, std::string_view path, std::string_view yaml_value);

  // Where each field read so far was, by dotted path ("workload.parallel.tensor").
  const std::map<std::string, SourceLocation>& locations() const { return locations_; }

 private:
  static std::string Join(std::string_view path, std::string_view key);
  // Finds map[key] for a scalar read; fails on missing-required or non-scalar.
  std::optional<YAML::Node> Scalar(const YAML::Node& map, std::string_view path,
                                   std::string_view key, bool required);
  void Remember(const YAML::Node& node, const std::string& path);
  SourceLocation LocationFor(const YAML::Node& node, std::string_view path) const;

  std::string file_;
  std::optional<Error> error_;
  std::map<std::string, SourceLocation> locations_;
  std::vector<std::string> overridden_;  // paths set with Override()
};

}  // namespace gpufleet::model
