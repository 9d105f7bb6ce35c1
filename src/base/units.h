#pragma once
// Quantities with units: parsed in one place (spec files, catalog, flags) and
// formatted for people. Inside gpufleet every quantity is a double in SI base
// units (bytes, bytes/s, seconds, watts, FLOP/s, volts, amperes, °C), with the
// unit in the variable's name. Pure functions; thread-safe.

#include <string>
#include <string_view>

#include "base/result.h"

namespace gpufleet::units {

enum class Dimension {
  kBytes,        // "80 GiB", "3.84 TB"
  kBandwidth,    // bytes per second: "400 Gb/s", "50 GB/s", "400 Gbps"
  kTime,         // seconds: "2 min", "1 h", "30 s", "250 ms"
  kPower,        // watts: "700 W", "6.5 kW"
  kVoltage,      // volts: "208 V"
  kCurrent,      // amperes: "30 A"
  kTemperature,  // degrees Celsius: "25 C"
  kFlops,        // FLOP/s: "312 TFLOPS", "989 TFLOP/s"
  kCount,        // plain count with an optional K/M/B/T suffix: "13B", "4096"
  kFraction,     // "80 %" or a bare ratio 0..1 ("0.8")
};

// Parses `text` as a quantity of `dim` and returns it in SI base units.
// Errors (kInvalidArgument) say what was expected with an example, e.g.
// "'400 GB' is a size, expected a bandwidth such as '400 Gb/s' or '50 GB/s'".
Result<double> Parse(std::string_view text, Dimension dim);

// "a size", "a bandwidth", ... for messages.
std::string_view DimensionName(Dimension dim);
// An example value of the dimension, e.g. "80 GiB".
std::string_view DimensionExample(Dimension dim);

// Formatting for people. Sizes in binary units (GiB, as nvidia-smi and the
// allocator report memory); storage and network rates in decimal units
// (GB/s = 1e9 B/s, as nccl-tests and vendors report them).
std::string FormatBytes(double bytes);           // "80.0 GiB"
std::string FormatBytesDecimal(double bytes);    // "3.84 TB"
std::string FormatByteRate(double bytes_per_s);  // "234.9 GB/s"
std::string FormatBitRate(double bytes_per_s);   // "400 Gb/s"
std::string FormatTime(double seconds);          // "37.2 s", "1.8 min", "12.3 µs"
std::string FormatPower(double watts);           // "6.50 kW"
std::string FormatFlops(double flop_per_s);      // "312 TFLOP/s"
// "1 node", "3 nodes": a count with its noun in the right number.
std::string Plural(double n, std::string_view one, std::string_view many);
std::string FormatCount(double count);       // "13.0 B"
std::string FormatUsd(double usd);           // "$1,120,000"
std::string FormatPercent(double fraction);  // "45.0 %"

}  // namespace gpufleet::units
