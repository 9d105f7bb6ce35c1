#include "sys/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstring>

namespace gpufleet::sys {

namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr unsigned kMaxLinks = 36;  // NVML_NVLINK_MAX_LINKS (NVML 13)

// nvmlPciInfo_t as read by nvmlDeviceGetPciInfo_v3 (nvml.h, NVML API 13).
struct PciInfo {
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];
};

std::string CanonicalNvmlBusId(const PciInfo& p) {
  // NVML writes "00000000:3B:00.0"; NCCL and sysfs use "0000:3b:00.0".
  return fmt::format("{:04x}:{:02x}:{:02x}.0", p.domain & 0xffff, p.bus & 0xff, p.device & 0x1f);
}

}  // namespace

struct Nvml::Api {
  void* lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*pci)(nvmlDevice_t, PciInfo*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*cc)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*link_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*link_pci)(nvmlDevice_t, unsigned, PciInfo*) = nullptr;
  nvmlReturn_t (*link_type)(nvmlDevice_t, unsigned, int*) = nullptr;  // optional

  std::string Error(nvmlReturn_t r) const {
    return error_string ? error_string(r) : fmt::format("NVML error {}", r);
  }
};

Result<std::unique_ptr<Nvml>> Nvml::Open() {
  auto api = std::make_unique<Api>();
  api->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (api->lib == nullptr) {
    return Unavailable(fmt::format("NVML not available: {}", dlerror()));
  }
  auto sym = [&](const char* name, auto* fn) {
    *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(api->lib, name));
    return *fn != nullptr;
  };
  const bool ok =
      sym("nvmlInit_v2", &api->init) && sym("nvmlShutdown", &api->shutdown) &&
      sym("nvmlErrorString", &api->error_string) && sym("nvmlDeviceGetCount_v2", &api->count) &&
      sym("nvmlDeviceGetHandleByIndex_v2", &api->handle) &&
      sym("nvmlDeviceGetPciInfo_v3", &api->pci) && sym("nvmlDeviceGetName", &api->name) &&
      sym("nvmlDeviceGetUUID", &api->uuid) && sym("nvmlDeviceGetCudaComputeCapability", &api->cc) &&
      sym("nvmlDeviceGetNvLinkState", &api->link_state) &&
      sym("nvmlDeviceGetNvLinkRemotePciInfo_v2", &api->link_pci);
  sym("nvmlDeviceGetNvLinkRemoteDeviceType", &api->link_type);
  if (!ok) {
    dlclose(api->lib);
    return Unavailable("NVML too old: a versioned entry point is missing (driver >= 450 needed)");
  }
  if (nvmlReturn_t r = api->init(); r != kSuccess) {
    std::string why = api->Error(r);
    dlclose(api->lib);
    return Unavailable(fmt::format("nvmlInit_v2: {}", why));
  }
  return std::unique_ptr<Nvml>(new Nvml(std::move(api)));
}

Nvml::Nvml(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Nvml::~Nvml() {
  if (api_ && api_->lib) {
    api_->shutdown();
    dlclose(api_->lib);
  }
}

Result<std::vector<NvmlGpu>> Nvml::Gpus() {
  unsigned n = 0;
  if (nvmlReturn_t r = api_->count(&n); r != kSuccess) {
    return Unavailable(fmt::format("nvmlDeviceGetCount_v2: {}", api_->Error(r)));
  }
  std::vector<NvmlGpu> gpus;
  for (unsigned i = 0; i < n; ++i) {
    nvmlDevice_t dev = nullptr;
    if (nvmlReturn_t r = api_->handle(i, &dev); r != kSuccess) {
      return Unavailable(fmt::format("nvmlDeviceGetHandleByIndex_v2({}): {}", i, api_->Error(r)));
    }
    NvmlGpu g;
    g.index = static_cast<int>(i);
    PciInfo pci{};
    if (api_->pci(dev, &pci) == kSuccess) g.busid = CanonicalNvmlBusId(pci);
    char buf[96] = {};
    if (api_->name(dev, buf, sizeof(buf)) == kSuccess) g.name = buf;
    std::memset(buf, 0, sizeof(buf));
    if (api_->uuid(dev, buf, sizeof(buf)) == kSuccess) g.uuid = buf;
    int major = 0, minor = 0;
    if (api_->cc(dev, &major, &minor) == kSuccess) g.sm = major * 10 + minor;
    for (unsigned link = 0; link < kMaxLinks; ++link) {
      int active = 0;
      if (api_->link_state(dev, link, &active) != kSuccess) break;  // no more links
      if (!active) continue;
      NvmlNvLink l;
      l.link = static_cast<int>(link);
      PciInfo remote{};
      if (api_->link_pci(dev, link, &remote) == kSuccess)
        l.remote_busid = CanonicalNvmlBusId(remote);
      int type = -1;  // nvmlIntNvLinkDeviceType_t: 0 GPU, 1 IBM NPU, 2 switch
      if (api_->link_type && api_->link_type(dev, link, &type) == kSuccess) {
        l.remote = type == 0   ? NvmlNvLink::Remote::kGpu
                   : type == 2 ? NvmlNvLink::Remote::kNvSwitch
                   : type == 1 ? NvmlNvLink::Remote::kCpu
                               : NvmlNvLink::Remote::kUnknown;
      }
      g.active_links.push_back(l);
    }
    gpus.push_back(std::move(g));
  }
  return gpus;
}

}  // namespace gpufleet::sys
