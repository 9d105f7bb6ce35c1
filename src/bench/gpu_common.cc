// The parts of `bench gpu` that need no CUDA: floors and rendering.

#include <fmt/format.h>

#include "base/units.h"
#include "bench/gpu.h"
#include "bench/results.h"

namespace gpufleet::bench {

double GpuFloor(const std::string& test, const std::string& dtype) {
  // reference/validation.md (c): BF16/FP16 dense GEMM >= 75 % of the dense
  // peak (A100 measured 81-88 %, H100 FP8 65-70 % -> FP8 60 %); HBM: STREAM
  // measures 79-95 % of spec, DCGM fails under 0.75 x measured -> 60 %;
  // pinned PCIe: 82 % of the x16 peak typical, AzNHC fails under 76 %.
  if (test == "gemm")
    return dtype == "fp8" ? 0.60 : dtype == "tf32" || dtype == "fp32" ? 0.60 : 0.75;
  if (test == "hbm") return 0.60;
  return 0.75;
}

std::string GpuText(const std::vector<GpuMeasurement>& m) {
  std::string out = "# gpufleet bench gpu\n";
  out +=
      fmt::format("# {:>3} {:<22} {:<13} {:>4} {:<5} {:<6} {:>16} {:>16} {:>6} {:>6}\n", "gpu",
                  "name", "bus id", "numa", "test", "dtype", "measured", "peak", "ratio", "floor");
  bool ok = true;
  for (const auto& x : m) {
    const bool flops = x.unit == "FLOP/s";
    auto fmtv = [&](double v) {
      return v <= 0 ? std::string("-") : flops ? units::FormatFlops(v) : units::FormatByteRate(v);
    };
    out += fmt::format(
        "  {:>3} {:<22} {:<13} {:>4} {:<5} {:<6} {:>16} {:>16} {:>6} {:>6}\n", x.gpu, x.name,
        x.bus_id, x.numa_node, x.test, x.dtype.empty() ? "-" : x.dtype, fmtv(x.value), fmtv(x.peak),
        x.peak > 0 ? fmt::format("{:.2f}", x.value / x.peak) : "-", fmt::format("{:.2f}", x.floor));
    if (!x.passed()) {
      out += fmt::format("# fail: GPU {} ({}) {} {}: {} is under {:.0f} % of the peak {}\n", x.gpu,
                         x.bus_id, x.test, x.dtype, fmtv(x.value), x.floor * 100, fmtv(x.peak));
      ok = false;
    }
  }
  out += fmt::format("# verdict: {}\n", ok ? "pass" : "fail");
  return out;
}

nlohmann::json GpuJson(const std::vector<GpuMeasurement>& m) {
  nlohmann::json rows = nlohmann::json::array();
  bool ok = true;
  for (const auto& x : m) {
    ok = ok && x.passed();
    rows.push_back({{"op", x.test == "gemm" ? "gemm_" + x.dtype : x.test},
                    {"gpu", x.gpu},
                    {"name", x.name},
                    {"bus_id", x.bus_id},
                    {"numa_node", x.numa_node},
                    {x.unit == "FLOP/s" ? "flop_per_s" : "throughput_bytes_per_s", x.value},
                    {"peak", x.peak},
                    {"floor", x.floor},
                    {"pass", x.passed()}});
  }
  nlohmann::json doc = BenchDocument("gpu", ok);
  doc["results"] = rows;
  return doc;
}

}  // namespace gpufleet::bench
