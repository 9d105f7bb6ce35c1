#pragma once
// NVML, loaded with dlopen at run time (no build-time driver dependency). Only
// what discovery needs for now: GPU identity, PCI bus id, compute capability
// and NVLink peers. Versioned entry points as the header #defines them
// (reference/monitoring.md §5). Not thread-safe; create one per thread of use.

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"

namespace gpufleet::sys {

struct NvmlNvLink {
  int link = 0;
  std::string remote_busid;  // canonical; "" when not visible
  enum class Remote { kGpu, kNvSwitch, kCpu, kUnknown } remote = Remote::kUnknown;
};

struct NvmlGpu {
  int index = 0;
  std::string busid;  // canonical "dddd:bb:dd.f"
  std::string name;
  std::string uuid;
  int sm = 0;  // major x 10 + minor
  std::vector<NvmlNvLink> active_links;
};

class Nvml {
 public:
  // Loads libnvidia-ml.so.1 and initialises it. kUnavailable, with the reason,
  // when the library or a driver is not there (the normal case without GPUs).
  static Result<std::unique_ptr<Nvml>> Open();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  Result<std::vector<NvmlGpu>> Gpus();

 private:
  struct Api;
  explicit Nvml(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

}  // namespace gpufleet::sys
