#include "base/units.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <string>

#include "base/strings.h"

namespace gpufleet::units {
namespace {

struct Unit {
  std::string_view name;
  double factor;  // multiply the number by this to get SI base units
};

constexpr double kKi = 1024.0;
constexpr double kMi = kKi * kKi;
constexpr double kGi = kMi * kKi;
constexpr double kTi = kGi * kKi;
constexpr double kPi = kTi * kKi;

constexpr Unit kBytesUnits[] = {
    {"B", 1},     {"KB", 1e3},  {"MB", 1e6},  {"GB", 1e9},  {"TB", 1e12}, {"PB", 1e15},
    {"KiB", kKi}, {"MiB", kMi}, {"GiB", kGi}, {"TiB", kTi}, {"PiB", kPi}, {"bytes", 1},
};

// Bits per second are divided by 8: inside, every rate is bytes per second.
constexpr Unit kBandwidthUnits[] = {
    {"b/s", 1.0 / 8}, {"Kb/s", 1e3 / 8}, {"Mb/s", 1e6 / 8}, {"Gb/s", 1e9 / 8}, {"Tb/s", 1e12 / 8},
    {"bps", 1.0 / 8}, {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"Tbps", 1e12 / 8},
    {"B/s", 1},       {"KB/s", 1e3},     {"MB/s", 1e6},     {"GB/s", 1e9},     {"TB/s", 1e12},
    {"KiB/s", kKi},   {"MiB/s", kMi},    {"GiB/s", kGi},    {"TiB/s", kTi},
};

constexpr Unit kTimeUnits[] = {
    {"ns", 1e-9},       {"us", 1e-6},        {"µs", 1e-6},    {"ms", 1e-3},     {"s", 1},
    {"sec", 1},         {"min", 60},         {"h", 3600},     {"hour", 3600},   {"hours", 3600},
    {"d", 86400},       {"day", 86400},      {"days", 86400}, {"week", 604800}, {"weeks", 604800},
    {"year", 31536000}, {"years", 31536000},
};

constexpr Unit kPowerUnits[] = {{"W", 1}, {"kW", 1e3}, {"MW", 1e6}};
constexpr Unit kVoltageUnits[] = {{"V", 1}, {"kV", 1e3}};
constexpr Unit kCurrentUnits[] = {{"A", 1}};
constexpr Unit kTemperatureUnits[] = {{"C", 1}, {"°C", 1}, {"degC", 1}};
constexpr Unit kFlopsUnits[] = {
    {"FLOP/s", 1},     {"FLOPS", 1},     {"GFLOP/s", 1e9},  {"GFLOPS", 1e9},
    {"TFLOP/s", 1e12}, {"TFLOPS", 1e12}, {"PFLOP/s", 1e15}, {"PFLOPS", 1e15},
};
constexpr Unit kCountUnits[] = {{"", 1}, {"K", 1e3}, {"M", 1e6}, {"B", 1e9}, {"T", 1e12}};
constexpr Unit kFractionUnits[] = {{"%", 0.01}};

struct DimensionInfo {
  Dimension dim;
  std::string_view name;
  std::string_view example;
  const Unit* units;
  size_t unit_count;
};

template <size_t N>
constexpr DimensionInfo Info(Dimension dim, std::string_view name, std::string_view example,
                             const Unit (&units)[N]) {
  return {dim, name, example, units, N};
}

constexpr std::array<DimensionInfo, 10> kDimensions = {
    Info(Dimension::kBytes, "a size", "80 GiB", kBytesUnits),
    Info(Dimension::kBandwidth, "a bandwidth", "400 Gb/s", kBandwidthUnits),
    Info(Dimension::kTime, "a duration", "2 min", kTimeUnits),
    Info(Dimension::kPower, "a power", "700 W", kPowerUnits),
    Info(Dimension::kVoltage, "a voltage", "208 V", kVoltageUnits),
    Info(Dimension::kCurrent, "a current", "30 A", kCurrentUnits),
    Info(Dimension::kTemperature, "a temperature", "25 C", kTemperatureUnits),
    Info(Dimension::kFlops, "a compute rate", "312 TFLOPS", kFlopsUnits),
    Info(Dimension::kCount, "a count", "13B", kCountUnits),
    Info(Dimension::kFraction, "a fraction", "80 %", kFractionUnits),
};

const DimensionInfo& InfoOf(Dimension dim) {
  for (const auto& info : kDimensions) {
    if (info.dim == dim) return info;
  }
  GPUFLEET_CHECK(false);
  return kDimensions[0];
}

const Unit* FindUnit(const DimensionInfo& info, std::string_view name) {
  for (size_t i = 0; i < info.unit_count; ++i) {
    if (info.units[i].name == name) return &info.units[i];
  }
  return nullptr;
}

}  // namespace

std::string_view DimensionName(Dimension dim) { return InfoOf(dim).name; }
std::string_view DimensionExample(Dimension dim) { return InfoOf(dim).example; }

Result<double> Parse(std::string_view text, Dimension dim) {
  const DimensionInfo& info = InfoOf(dim);
  std::string_view s = strings::Trim(text);
  auto expected = [&] { return fmt::format("expected {} such as '{}'", info.name, info.example); };
  if (s.empty()) return InvalidArgument(fmt::format("empty value; {}", expected()));

  double number = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec != std::errc() || !std::isfinite(number)) {
    return InvalidArgument(fmt::format("'{}' is not a number; {}", s, expected()));
  }
  std::string_view unit = strings::Trim(s.substr(static_cast<size_t>(end - s.data())));

  if (const Unit* u = FindUnit(info, unit)) return number * u->factor;

  if (unit.empty()) {
    if (dim == Dimension::kFraction) {
      if (number < 0 || number > 1) {
        return InvalidArgument(
            fmt::format("'{}' is not a ratio between 0 and 1; write a percentage such as '{}'", s,
                        info.example));
      }
      return number;
    }
    return InvalidArgument(fmt::format("'{}' has no unit; {}", s, expected()));
  }
  // A unit of another dimension is the classic mistake (GB vs Gb/s): name it.
  for (const auto& other : kDimensions) {
    if (other.dim == dim || other.dim == Dimension::kCount) continue;
    if (FindUnit(other, unit) != nullptr) {
      std::string hint;
      if (dim == Dimension::kBandwidth) hint = " or '50 GB/s'";
      return InvalidArgument(fmt::format("'{}' is {}, expected {} such as '{}'{}", s, other.name,
                                         info.name, info.example, hint));
    }
  }
  return InvalidArgument(fmt::format("unknown unit '{}' in '{}'; {}", unit, s, expected()));
}

namespace {
std::string Scaled(double value, const std::array<std::pair<double, std::string_view>, 6>& steps,
                   int digits) {
  for (const auto& [factor, name] : steps) {
    if (std::fabs(value) >= factor) return fmt::format("{:.{}f} {}", value / factor, digits, name);
  }
  return fmt::format("{:.{}f} {}", value / steps.back().first, digits, steps.back().second);
}
}  // namespace

std::string FormatBytes(double bytes) {
  return Scaled(
      bytes, {{{kPi, "PiB"}, {kTi, "TiB"}, {kGi, "GiB"}, {kMi, "MiB"}, {kKi, "KiB"}, {1, "B"}}}, 1);
}
std::string FormatBytesDecimal(double bytes) {
  return Scaled(bytes,
                {{{1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}, {1, "B"}}}, 2);
}
std::string FormatByteRate(double bytes_per_s) {
  return Scaled(
      bytes_per_s,
      {{{1e15, "PB/s"}, {1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}, {1, "B/s"}}},
      1);
}
std::string FormatBitRate(double bits_scaled_bytes_per_s) {
  // Three significant digits: "400 Gb/s", "1.6 Tb/s", "12.8 Tb/s".
  const double bits = bits_scaled_bytes_per_s * 8;
  for (const auto& [factor, name] :
       {std::pair{1e15, "Pb/s"}, std::pair{1e12, "Tb/s"}, std::pair{1e9, "Gb/s"},
        std::pair{1e6, "Mb/s"}, std::pair{1e3, "Kb/s"}}) {
    if (std::fabs(bits) >= factor) return fmt::format("{:.3g} {}", bits / factor, name);
  }
  return fmt::format("{:.3g} b/s", bits);
}
std::string FormatTime(double seconds) {
  double a = std::fabs(seconds);
  if (a == 0) return "0 s";  // not "0.0 µs": nothing, not a very short time
  if (a >= 2 * 86400) return fmt::format("{:.1f} d", seconds / 86400);
  if (a >= 2 * 3600) return fmt::format("{:.1f} h", seconds / 3600);
  if (a >= 120) return fmt::format("{:.1f} min", seconds / 60);
  if (a >= 1) return fmt::format("{:.2f} s", seconds);
  if (a >= 1e-3) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.1f} µs", seconds * 1e6);
}
std::string FormatPower(double watts) {
  if (std::fabs(watts) >= 1e6) return fmt::format("{:.2f} MW", watts / 1e6);
  if (std::fabs(watts) >= 1e3) return fmt::format("{:.2f} kW", watts / 1e3);
  return fmt::format("{:.0f} W", watts);
}
std::string FormatFlops(double flop_per_s) {
  return Scaled(flop_per_s,
                {{{1e18, "EFLOP/s"},
                  {1e15, "PFLOP/s"},
                  {1e12, "TFLOP/s"},
                  {1e9, "GFLOP/s"},
                  {1e6, "MFLOP/s"},
                  {1, "FLOP/s"}}},
                1);
}
std::string FormatCount(double count) {
  if (std::fabs(count) < 1e3) return fmt::format("{:.0f}", count);
  return Scaled(count, {{{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}, {1, ""}, {1, ""}}}, 1);
}
std::string FormatUsd(double usd) {
  auto whole = static_cast<long long>(std::llround(usd));
  std::string digits = std::to_string(whole < 0 ? -whole : whole);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (whole < 0 ? "-$" : "$") + out;
}
std::string FormatPercent(double fraction) { return fmt::format("{:.1f} %", fraction * 100); }

std::string Plural(double n, std::string_view one, std::string_view many) {
  return fmt::format("{:g} {}", n, n == 1 ? one : many);
}

}  // namespace gpufleet::units
