#pragma once
// CUDA runtime errors as Status, for the NCCL plane and the GPU benchmarks.

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "base/result.h"

namespace gpufleet::bench {

inline Status CudaStatus(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return OkStatus();
  return Unavailable(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}

}  // namespace gpufleet::bench
