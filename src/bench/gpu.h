#pragma once
// `bench gpu`: per GPU, dense GEMM throughput per data type through cuBLAS,
// HBM bandwidth (device-to-device copy), and host<->device bandwidth with
// pinned memory on the GPU's own NUMA node, each against the catalog's peak.
// Built when CMake finds the CUDA toolkit (gpu.cu); without it every call
// returns kUnavailable and says so. docs/bench.md.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/result.h"

namespace gpufleet::bench {

struct GpuBenchOptions {
  std::vector<std::string> dtypes = {"bf16", "fp16", "tf32", "fp32"};
  int gemm_size = 8192;  // M = N = K
  int iters = 20;
  double copy_bytes = 1ull << 30;  // HBM copy buffer
  double host_bytes = 256ull << 20;
  std::vector<int> devices;  // empty: every visible GPU
};

struct GpuMeasurement {
  int gpu = 0;
  std::string name;
  std::string bus_id;
  int numa_node = -1;
  std::string test;   // "gemm", "hbm", "h2d", "d2h"
  std::string dtype;  // gemm only
  double value = 0;   // FLOP/s or bytes/s
  double peak = 0;    // catalog peak; 0 when the catalog does not know the GPU
  double floor = 0;   // fraction of peak that passes
  std::string unit;   // "FLOP/s", "B/s"
  bool passed() const { return peak <= 0 || value >= floor * peak; }
};

// The fraction of the catalog peak each test must reach (docs/bench.md cites them).
double GpuFloor(const std::string& test, const std::string& dtype);

bool GpuBuiltIn();
Result<std::vector<GpuMeasurement>> RunGpuBench(const GpuBenchOptions& options);

std::string GpuText(const std::vector<GpuMeasurement>& m);
nlohmann::json GpuJson(const std::vector<GpuMeasurement>& m);  // kind "gpu"

}  // namespace gpufleet::bench
