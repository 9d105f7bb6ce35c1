// `bench gpu` when gpufleet-bench was built without the CUDA toolkit.

#include "bench/gpu.h"

namespace gpufleet::bench {

bool GpuBuiltIn() { return false; }

Result<std::vector<GpuMeasurement>> RunGpuBench(const GpuBenchOptions&) {
  return Unavailable(
      "bench gpu: gpufleet-bench was built without the CUDA toolkit (rebuild where nvcc, the "
      "CUDA runtime and cuBLAS are installed)");
}

}  // namespace gpufleet::bench
