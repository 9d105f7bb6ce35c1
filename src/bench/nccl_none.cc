// Stand-in when gpufleet-bench was built without the CUDA toolkit and nccl.h.

#include "bench/data_plane.h"

namespace gpufleet::bench {

bool NcclBuiltIn() { return false; }

Result<std::unique_ptr<DataPlane>> MakeNcclPlane(MpiWorld*) {
  return Unavailable(
      "--backend nccl: gpufleet-bench was built without CUDA and NCCL (rebuild where the CUDA "
      "toolkit and nccl.h are installed)");
}

}  // namespace gpufleet::bench
