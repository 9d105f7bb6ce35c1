#include "sys/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

#include "sys/nvml_abi.h"

namespace gpufleet::sys {

namespace {

using nvmlReturn_t = abi::nvmlReturn_t;
using nvmlDevice_t = void*;
using nvmlEventSet_t = void*;
using abi::ull;
constexpr unsigned kMaxLinks = 36;  // NVML_NVLINK_MAX_LINKS (NVML 13)

using abi::EventData;
using abi::FabricInfo;
using abi::FieldValue;
using abi::kFabricInfoV2;
using abi::kFabricInfoV3;
using abi::MemoryInfo;
using abi::PciInfo;
using abi::ProcessInfo;
using abi::SampleValue;
using abi::Utilization;
constexpr nvmlReturn_t kNvmlArgumentVersionMismatch = abi::kArgumentVersionMismatch;

using nvmlGpmSample_t = abi::GpmSampleHandle;
using abi::GpmMetricsGet;
using abi::GpmSupport;
using abi::kGpmVersion;
// nvmlGpmMetricId_t: utilisations in percent, PCIe in MiB/s.
constexpr unsigned kGpmGraphics = 1, kGpmSm = 2, kGpmOccupancy = 3, kGpmAnyTensor = 5,
                   kGpmDram = 10, kGpmPcieTx = 20, kGpmPcieRx = 21;

constexpr unsigned kFieldC2cLinkCount = 170;    // NVML_FI_DEV_C2C_LINK_COUNT
constexpr unsigned kFieldC2cLinkStatus = 171;   // NVML_FI_DEV_C2C_LINK_GET_STATUS: 1 active
constexpr unsigned kFieldC2cLinkMaxBw = 172;    // NVML_FI_DEV_C2C_LINK_GET_MAX_BW, MB/s
constexpr unsigned kFieldNvLinkSpeed = 164;     // NVML_FI_DEV_NVLINK_GET_SPEED (MB/s, per link)
constexpr unsigned kFieldMemoryTemp = 82;       // NVML_FI_DEV_MEMORY_TEMP
constexpr unsigned kFieldRecoveryAction = 230;  // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
constexpr ull kEventXid = 0x8;                  // nvmlEventTypeXidCriticalError
constexpr int kSamplingGpuUtil = 1;             // NVML_GPU_UTILIZATION_SAMPLES
constexpr int kSamplingMemUtil = 2;             // NVML_MEMORY_UTILIZATION_SAMPLES

std::string CanonicalNvmlBusId(const PciInfo& p) {
  // NVML writes "00000000:3B:00.0"; NCCL and sysfs use "0000:3b:00.0".
  return fmt::format("{:04x}:{:02x}:{:02x}.0", p.domain & 0xffff, p.bus & 0xff, p.device & 0x1f);
}

double FieldAsDouble(const FieldValue& f) {
  switch (f.value_type) {  // nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ull, 4 sll, 5 sint
    case 0:
      return f.value.d;
    case 1:
      return f.value.ui;
    case 2:
      return static_cast<double>(f.value.ul);
    case 3:
      return static_cast<double>(f.value.ull_value);
    case 4:
      return static_cast<double>(f.value.sll);
    default:
      return f.value.si;
  }
}

std::string FormatFabricUuid(const unsigned char (&b)[16]) {
  bool zero = true;
  for (unsigned char c : b) zero = zero && c == 0;
  if (zero) return "";
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += fmt::format("{:02x}", b[i]);
  }
  return s;
}

}  // namespace

std::string_view FabricStateName(FabricState s) {
  switch (s) {
    case FabricState::kNotSupported:
      return "not_supported";
    case FabricState::kNotStarted:
      return "not_started";
    case FabricState::kInProgress:
      return "in_progress";
    case FabricState::kCompleted:
      return "completed";
  }
  return "unknown";
}

namespace {
// NVML_GPU_FABRIC_HEALTH_MASK_*: 2-bit fields (0 not supported, 1 true, 2 false) at
// shifts 0 (degraded bandwidth), 2 (route recovery), 4 (route unhealthy), 6 (access
// timeout recovery); a 4-bit incorrect-configuration code at shift 8 (1 none).
unsigned HealthField(uint32_t mask, int shift, unsigned width) { return (mask >> shift) & width; }
}  // namespace

std::vector<std::string> GpuFabric::Problems() const {
  std::vector<std::string> p;
  if (HealthField(health_mask, 0, 3) == 1) p.emplace_back("degraded bandwidth");
  if (HealthField(health_mask, 4, 3) == 1) p.emplace_back("route unhealthy");
  switch (HealthField(health_mask, 8, 15)) {
    case 2:
      p.emplace_back("incorrect configuration: system GUID");
      break;
    case 3:
      p.emplace_back("incorrect configuration: chassis serial number");
      break;
    case 4:
      p.emplace_back("incorrect configuration: no partition");
      break;
    case 5:
      p.emplace_back("incorrect configuration: insufficient NVLinks");
      break;
    case 0:
    case 1:
      break;  // not reported; none
    default:
      p.emplace_back(
          fmt::format("incorrect configuration: code {}", HealthField(health_mask, 8, 15)));
      break;
  }
  if (p.empty() && health_summary == 2) p.emplace_back("unhealthy");
  if (p.empty() && health_summary == 3) p.emplace_back("limited capacity");
  return p;
}

std::vector<std::string> GpuFabric::Recoveries() const {
  std::vector<std::string> r;
  if (HealthField(health_mask, 2, 3) == 1) r.emplace_back("route recovery in progress");
  if (HealthField(health_mask, 6, 3) == 1) r.emplace_back("access-timeout recovery in progress");
  return r;
}

const std::vector<ClockEventReason>& ClockEventReasons() {
  static const std::vector<ClockEventReason> kReasons = {
      {0x1, "gpu_idle", false},
      {0x2, "applications_clocks_setting", false},
      {0x4, "sw_power_cap", false},
      {0x8, "hw_slowdown", true},
      {0x10, "sync_boost", false},
      {0x20, "sw_thermal_slowdown", false},
      {0x40, "hw_thermal_slowdown", true},
      {0x80, "hw_power_brake_slowdown", true},
      {0x100, "display_clock_setting", false},
  };
  return kReasons;
}

std::string_view RecoveryActionName(RecoveryAction a) {
  switch (a) {
    case RecoveryAction::kNone:
      return "none";
    case RecoveryAction::kGpuReset:
      return "gpu_reset";
    case RecoveryAction::kNodeReboot:
      return "node_reboot";
    case RecoveryAction::kDrainP2p:
      return "drain_p2p";
    case RecoveryAction::kDrainAndReset:
      return "drain_and_reset";
    case RecoveryAction::kRecoverImexDomain:
      return "recover_imex_domain";
  }
  return "unknown";
}

struct Nvml::Api {
  void* lib = nullptr;
  // Required (discovery).
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
  // Optional: a missing one leaves its values absent.
  nvmlReturn_t (*link_type)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*samples)(nvmlDevice_t, int, ull, int*, unsigned*, SampleValue*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, Utilization*) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, MemoryInfo*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, ull*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*clock_events)(nvmlDevice_t, ull*) = nullptr;
  nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, ull*) = nullptr;
  nvmlReturn_t (*remapped)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_gen_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_width_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_replay)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*link_errors)(nvmlDevice_t, unsigned, int, ull*) = nullptr;
  nvmlReturn_t (*link_version)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*fabric_info)(nvmlDevice_t, FabricInfo*) = nullptr;
  nvmlReturn_t (*gpm_support)(nvmlDevice_t, GpmSupport*) = nullptr;
  nvmlReturn_t (*gpm_alloc)(nvmlGpmSample_t*) = nullptr;
  nvmlReturn_t (*gpm_free)(nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_get)(nvmlDevice_t, nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_metrics)(GpmMetricsGet*) = nullptr;

  // Per GPU index: its two GPM sample buffers, the older first. Each index is sampled by one
  // thread at a time; the map itself is guarded.
  struct GpmState {
    bool checked = false, supported = false, have_prev = false;
    nvmlGpmSample_t prev = nullptr, cur = nullptr;
  };
  std::mutex gpm_mu;
  std::map<int, GpmState> gpm;
  GpmState* GpmFor(int index) {
    std::lock_guard<std::mutex> lock(gpm_mu);
    return &gpm[index];  // std::map: the address stays valid as others are added
  }
  nvmlReturn_t (*fields)(nvmlDevice_t, int, FieldValue*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned*, ProcessInfo*) = nullptr;
  nvmlReturn_t (*event_create)(nvmlEventSet_t*) = nullptr;
  nvmlReturn_t (*event_register)(nvmlDevice_t, ull, nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*event_wait)(nvmlEventSet_t, EventData*, unsigned) = nullptr;
  nvmlReturn_t (*event_free)(nvmlEventSet_t) = nullptr;

  nvmlEventSet_t events = nullptr;
  bool events_registered = false;
  std::vector<std::pair<nvmlDevice_t, int>> event_devices;  // handle -> index

  std::string Error(nvmlReturn_t r) const {
    return error_string ? error_string(r) : fmt::format("NVML error {}", r);
  }

  // The fabric information, asking for v3 and falling back to v2 (drivers before R570).
  nvmlReturn_t Fabric(nvmlDevice_t dev, GpuFabric* out) const {
    if (!fabric_info) return kNvmlNotSupported;
    FabricInfo f{};
    f.version = kFabricInfoV3;
    nvmlReturn_t r = fabric_info(dev, &f);
    if (r == kNvmlArgumentVersionMismatch) {
      f = FabricInfo{};
      f.version = kFabricInfoV2;
      r = fabric_info(dev, &f);
      f.health_summary = 0;
    }
    if (r != kNvmlSuccess) return r;
    out->state = f.state <= 3 ? static_cast<FabricState>(f.state) : FabricState::kNotSupported;
    out->status = f.status;
    out->cluster_uuid = FormatFabricUuid(f.cluster_uuid);
    out->clique = f.clique_id;
    out->health_mask = f.health_mask;
    out->health_summary = f.health_summary <= 3 ? f.health_summary : 0;
    return kNvmlSuccess;
  }

  // NVLink-C2C to the CPU as NCCL reads it: the active links and one link's bandwidth.
  void C2c(nvmlDevice_t dev, int* links, double* mbps) const {
    if (!fields) return;
    FieldValue n_links{};
    n_links.field_id = kFieldC2cLinkCount;
    if (fields(dev, 1, &n_links) != kNvmlSuccess || n_links.nvml_return != kNvmlSuccess) return;
    const int n = static_cast<int>(std::min(FieldAsDouble(n_links), 64.0));
    for (int l = 0; l < n; ++l) {
      FieldValue f[2] = {};
      f[0].field_id = kFieldC2cLinkStatus;
      f[1].field_id = kFieldC2cLinkMaxBw;
      f[0].scope_id = f[1].scope_id = static_cast<unsigned>(l);
      if (fields(dev, 2, f) != kNvmlSuccess || f[0].nvml_return != kNvmlSuccess ||
          FieldAsDouble(f[0]) != 1 || f[1].nvml_return != kNvmlSuccess) {
        continue;
      }
      ++*links;
      *mbps = FieldAsDouble(f[1]);
    }
  }

  // One link's version and speed (0 when NVML does not say).
  void LinkFacts(nvmlDevice_t dev, unsigned link, int* version, double* mbps) const {
    unsigned v = 0;
    if (link_version && link_version(dev, link, &v) == kNvmlSuccess) *version = static_cast<int>(v);
    if (!fields) return;
    FieldValue f{};
    f.field_id = kFieldNvLinkSpeed;
    f.scope_id = link;
    if (fields(dev, 1, &f) == kNvmlSuccess && f.nvml_return == kNvmlSuccess) {
      *mbps = FieldAsDouble(f);
    }
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
  if (!ok) {
    dlclose(api->lib);
    return Unavailable("NVML too old: a versioned entry point is missing (driver >= 450 needed)");
  }
  sym("nvmlDeviceGetNvLinkRemoteDeviceType", &api->link_type);
  sym("nvmlDeviceGetSamples", &api->samples);
  sym("nvmlDeviceGetUtilizationRates", &api->utilization);
  sym("nvmlDeviceGetMemoryInfo", &api->memory);
  sym("nvmlDeviceGetPowerUsage", &api->power);
  sym("nvmlDeviceGetEnforcedPowerLimit", &api->power_limit);
  sym("nvmlDeviceGetTotalEnergyConsumption", &api->energy);
  sym("nvmlDeviceGetTemperature", &api->temperature);
  sym("nvmlDeviceGetClockInfo", &api->clock);
  sym("nvmlDeviceGetMaxClockInfo", &api->max_clock);
  // The new name first; drivers before 535 only have the deprecated one.
  if (!sym("nvmlDeviceGetCurrentClocksEventReasons", &api->clock_events)) {
    sym("nvmlDeviceGetCurrentClocksThrottleReasons", &api->clock_events);
  }
  sym("nvmlDeviceGetTotalEccErrors", &api->ecc);
  sym("nvmlDeviceGetRemappedRows", &api->remapped);
  sym("nvmlDeviceGetCurrPcieLinkGeneration", &api->pcie_gen);
  sym("nvmlDeviceGetCurrPcieLinkWidth", &api->pcie_width);
  sym("nvmlDeviceGetMaxPcieLinkGeneration", &api->pcie_gen_max);
  sym("nvmlDeviceGetMaxPcieLinkWidth", &api->pcie_width_max);
  sym("nvmlDeviceGetPcieReplayCounter", &api->pcie_replay);
  sym("nvmlDeviceGetNvLinkErrorCounter", &api->link_errors);
  sym("nvmlDeviceGetNvLinkVersion", &api->link_version);
  sym("nvmlDeviceGetGpuFabricInfoV", &api->fabric_info);
  sym("nvmlGpmQueryDeviceSupport", &api->gpm_support);
  sym("nvmlGpmSampleAlloc", &api->gpm_alloc);
  sym("nvmlGpmSampleFree", &api->gpm_free);
  sym("nvmlGpmSampleGet", &api->gpm_get);
  sym("nvmlGpmMetricsGet", &api->gpm_metrics);
  sym("nvmlDeviceGetFieldValues", &api->fields);
  sym("nvmlDeviceGetComputeRunningProcesses_v3", &api->processes);
  sym("nvmlEventSetCreate", &api->event_create);
  sym("nvmlDeviceRegisterEvents", &api->event_register);
  sym("nvmlEventSetWait_v2", &api->event_wait);
  sym("nvmlEventSetFree", &api->event_free);
  if (nvmlReturn_t r = api->init(); r != kNvmlSuccess) {
    std::string why = api->Error(r);
    dlclose(api->lib);
    return Unavailable(fmt::format("nvmlInit_v2: {}", why));
  }
  return std::unique_ptr<Nvml>(new Nvml(std::move(api)));
}

Nvml::Nvml(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Nvml::~Nvml() {
  if (leak_) {
    (void)api_.release();  // a hung worker thread still calls through it
    return;
  }
  if (!api_ || !api_->lib) return;
  if (api_->events && api_->event_free) api_->event_free(api_->events);
  if (api_->gpm_free) {
    for (auto& [index, g] : api_->gpm) {
      if (g.prev) api_->gpm_free(g.prev);
      if (g.cur) api_->gpm_free(g.cur);
    }
  }
  api_->shutdown();
  dlclose(api_->lib);
}

Result<int> Nvml::DeviceCount() {
  unsigned n = 0;
  if (nvmlReturn_t r = api_->count(&n); r != kNvmlSuccess) {
    return Unavailable(fmt::format("nvmlDeviceGetCount_v2: {}", api_->Error(r)));
  }
  return static_cast<int>(n);
}

Result<std::vector<NvmlGpu>> Nvml::Gpus() {
  GPUFLEET_ASSIGN_OR_RETURN(int n, DeviceCount());
  std::vector<NvmlGpu> gpus;
  for (int i = 0; i < n; ++i) {
    nvmlDevice_t dev = nullptr;
    if (nvmlReturn_t r = api_->handle(static_cast<unsigned>(i), &dev); r != kNvmlSuccess) {
      return Unavailable(fmt::format("nvmlDeviceGetHandleByIndex_v2({}): {}", i, api_->Error(r)));
    }
    NvmlGpu g;
    g.index = i;
    PciInfo pci{};
    if (api_->pci(dev, &pci) == kNvmlSuccess) g.busid = CanonicalNvmlBusId(pci);
    char buf[96] = {};
    if (api_->name(dev, buf, sizeof(buf)) == kNvmlSuccess) g.name = buf;
    std::memset(buf, 0, sizeof(buf));
    if (api_->uuid(dev, buf, sizeof(buf)) == kNvmlSuccess) g.uuid = buf;
    int major = 0, minor = 0;
    if (api_->cc(dev, &major, &minor) == kNvmlSuccess) g.sm = major * 10 + minor;
    for (unsigned link = 0; link < kMaxLinks; ++link) {
      int active = 0;
      if (api_->link_state(dev, link, &active) != kNvmlSuccess) break;  // no more links
      g.links++;
      if (!active) continue;
      if (g.nvlink_version == 0) api_->LinkFacts(dev, link, &g.nvlink_version, &g.link_mbps);
      NvmlNvLink l;
      l.link = static_cast<int>(link);
      PciInfo remote{};
      if (api_->link_pci(dev, link, &remote) == kNvmlSuccess)
        l.remote_busid = CanonicalNvmlBusId(remote);
      int type = -1;  // nvmlIntNvLinkDeviceType_t: 0 GPU, 1 IBM NPU, 2 switch
      if (api_->link_type && api_->link_type(dev, link, &type) == kNvmlSuccess) {
        l.remote = type == 0   ? NvmlNvLink::Remote::kGpu
                   : type == 2 ? NvmlNvLink::Remote::kNvSwitch
                   : type == 1 ? NvmlNvLink::Remote::kCpu
                               : NvmlNvLink::Remote::kUnknown;
      }
      g.active_links.push_back(l);
    }
    g.has_fabric = api_->Fabric(dev, &g.fabric) == kNvmlSuccess;
    if (g.sm >= 90) api_->C2c(dev, &g.c2c_links, &g.c2c_mbps);  // Hopper and later, as NCCL
    gpus.push_back(std::move(g));
  }
  return gpus;
}

// GPM over the interval since this GPU's previous sample: support is asked once, two sample
// buffers alternate. `call` runs an NVML function under its name (as in Sample).
template <typename Call>
void ReadGpm(Nvml::Api& a, nvmlDevice_t dev, int index, GpuSample* s, Call& call) {
  if (!a.gpm_get || !a.gpm_metrics || !a.gpm_alloc || !a.gpm_support || s->lost) return;
  Nvml::Api::GpmState* g = a.GpmFor(index);
  if (!g->checked) {
    g->checked = true;
    GpmSupport sup{kGpmVersion, 0};
    g->supported = a.gpm_support(dev, &sup) == kNvmlSuccess && sup.is_supported != 0 &&
                   a.gpm_alloc(&g->prev) == kNvmlSuccess && a.gpm_alloc(&g->cur) == kNvmlSuccess;
  }
  if (!g->supported) return;
  if (!call("nvmlGpmSampleGet", [&] { return a.gpm_get(dev, g->cur); })) return;
  if (g->have_prev) {
    auto m = std::make_unique<GpmMetricsGet>();
    m->version = kGpmVersion;
    m->sample1 = g->prev;
    m->sample2 = g->cur;
    const unsigned ids[] = {kGpmGraphics, kGpmSm,     kGpmOccupancy, kGpmAnyTensor,
                            kGpmDram,     kGpmPcieTx, kGpmPcieRx};
    m->num_metrics = std::size(ids);
    for (unsigned i = 0; i < m->num_metrics; ++i) m->metrics[i].metric_id = ids[i];
    if (call("nvmlGpmMetricsGet", [&] { return a.gpm_metrics(m.get()); })) {
      auto value = [&](unsigned i, double* out, double scale) {
        if (m->metrics[i].nvml_return != kNvmlSuccess) return false;
        *out = m->metrics[i].value * scale;
        return true;
      };
      constexpr double kPercent = 0.01, kMiB = 1024.0 * 1024.0;
      s->has_gpm =
          value(0, &s->gpm_graphics_active, kPercent) & value(1, &s->gpm_sm_active, kPercent) &
          value(2, &s->gpm_sm_occupancy, kPercent) & value(3, &s->gpm_tensor_active, kPercent) &
          value(4, &s->gpm_dram_active, kPercent) & value(5, &s->gpm_pcie_tx_bytes_per_s, kMiB) &
          value(6, &s->gpm_pcie_rx_bytes_per_s, kMiB);
    }
  }
  std::swap(g->prev, g->cur);
  g->have_prev = true;
}

GpuSample Nvml::Sample(int index, uint64_t* last_util_ts, std::atomic<const char*>* current_call) {
  GpuSample s;
  s.index = index;
  // Calls `fn` through NVML under `name`; true on success. GPU_IS_LOST marks the GPU
  // lost and every later call is skipped; NOT_SUPPORTED is not an error.
  auto call = [&](const char* name, auto&& fn) -> bool {
    if (s.lost) return false;
    if (current_call) current_call->store(name);
    const nvmlReturn_t r = fn();
    if (current_call) current_call->store(nullptr);
    if (r == kNvmlSuccess) return true;
    if (r == kNvmlGpuIsLost) s.lost = true;
    if (r != kNvmlNotSupported) s.errors[name] = r;
    return false;
  };
  nvmlDevice_t dev = nullptr;
  if (!call("nvmlDeviceGetHandleByIndex_v2",
            [&] { return api_->handle(static_cast<unsigned>(index), &dev); })) {
    return s;
  }
  // The entry points through a reference taken now: after a call that hung past the watchdog,
  // this Nvml may be gone while its (leaked) Api lives on.
  Api& api = *api_;
  const Api& a = api;
  char buf[96] = {};
  if (call("nvmlDeviceGetUUID", [&] { return a.uuid(dev, buf, sizeof(buf)); })) s.uuid = buf;
  std::memset(buf, 0, sizeof(buf));
  if (call("nvmlDeviceGetName", [&] { return a.name(dev, buf, sizeof(buf)); })) s.name = buf;
  PciInfo pci{};
  if (call("nvmlDeviceGetPciInfo_v3", [&] { return a.pci(dev, &pci); })) {
    s.busid = CanonicalNvmlBusId(pci);
  }

  // Utilisation: the mean of the driver's samples since the last read, so a
  // 15 s scrape does not alias a 1/6 s sample period; one instant otherwise.
  auto average = [&](int type, uint64_t since, double* out, uint64_t* newest) {
    if (!a.samples) return false;
    int value_type = 0;
    unsigned n = 0;
    if (!call("nvmlDeviceGetSamples",
              [&] { return a.samples(dev, type, since, &value_type, &n, nullptr); }) ||
        n == 0) {
      return false;
    }
    std::vector<SampleValue> values(n);
    if (!call("nvmlDeviceGetSamples",
              [&] { return a.samples(dev, type, since, &value_type, &n, values.data()); }) ||
        n == 0) {
      return false;
    }
    double sum = 0;
    for (unsigned i = 0; i < n; ++i) {
      sum += value_type == 0 ? values[i].value.d : static_cast<double>(values[i].value.ui);
      if (newest) *newest = std::max<uint64_t>(*newest, values[i].timestamp);
    }
    *out = sum / n / 100.0;
    return true;
  };
  uint64_t since = last_util_ts ? *last_util_ts : 0;
  uint64_t newest = since;
  double mem_util = 0;
  if (average(kSamplingGpuUtil, since, &s.util_ratio, &newest)) {
    s.has_util = true;
    if (average(kSamplingMemUtil, since, &mem_util, nullptr)) s.mem_util_ratio = mem_util;
    if (last_util_ts) *last_util_ts = newest;
  } else if (Utilization u{}; a.utilization && call("nvmlDeviceGetUtilizationRates",
                                                    [&] { return a.utilization(dev, &u); })) {
    s.has_util = true;
    s.util_ratio = u.gpu / 100.0;
    s.mem_util_ratio = u.memory / 100.0;
  }
  if (MemoryInfo m{};
      a.memory && call("nvmlDeviceGetMemoryInfo", [&] { return a.memory(dev, &m); })) {
    s.has_memory = true;
    s.memory_used_bytes = static_cast<double>(m.used);
    s.memory_total_bytes = static_cast<double>(m.total);
  }
  unsigned u = 0;
  if (a.power && call("nvmlDeviceGetPowerUsage", [&] { return a.power(dev, &u); })) {
    s.has_power = true;
    s.power_watts = u / 1000.0;
  }
  if (a.power_limit &&
      call("nvmlDeviceGetEnforcedPowerLimit", [&] { return a.power_limit(dev, &u); })) {
    s.has_power_limit = true;
    s.power_limit_watts = u / 1000.0;
  }
  ull big = 0;
  if (a.energy &&
      call("nvmlDeviceGetTotalEnergyConsumption", [&] { return a.energy(dev, &big); })) {
    s.has_energy = true;
    s.energy_joules = static_cast<double>(big) / 1000.0;
  }
  if (a.temperature &&
      call("nvmlDeviceGetTemperature", [&] { return a.temperature(dev, 0, &u); })) {
    s.has_temp = true;
    s.temp_celsius = u;
  }
  unsigned sm = 0, mem = 0, sm_max = 0;
  if (a.clock && call("nvmlDeviceGetClockInfo", [&] { return a.clock(dev, 1, &sm); }) &&
      call("nvmlDeviceGetClockInfo", [&] { return a.clock(dev, 2, &mem); })) {
    s.has_clocks = true;
    s.sm_clock_hz = sm * 1e6;
    s.mem_clock_hz = mem * 1e6;
    if (a.max_clock &&
        call("nvmlDeviceGetMaxClockInfo", [&] { return a.max_clock(dev, 1, &sm_max); })) {
      s.sm_clock_max_hz = sm_max * 1e6;
    }
  }
  if (a.clock_events &&
      call("nvmlDeviceGetCurrentClocksEventReasons", [&] { return a.clock_events(dev, &big); })) {
    s.has_clock_events = true;
    s.clock_event_reasons = big;
  }
  ull corrected = 0, uncorrected = 0;
  // nvmlMemoryErrorType_t 0 corrected / 1 uncorrected; nvmlEccCounterType_t 0 volatile.
  if (a.ecc && call("nvmlDeviceGetTotalEccErrors", [&] { return a.ecc(dev, 0, 0, &corrected); }) &&
      call("nvmlDeviceGetTotalEccErrors", [&] { return a.ecc(dev, 1, 0, &uncorrected); })) {
    s.has_ecc = true;
    s.ecc_corrected = corrected;
    s.ecc_uncorrected = uncorrected;
  }
  unsigned rc = 0, ru = 0, pending = 0, failed = 0;
  if (a.remapped && call("nvmlDeviceGetRemappedRows",
                         [&] { return a.remapped(dev, &rc, &ru, &pending, &failed); })) {
    s.has_remap = true;
    s.remapped_rows_corrected = rc;
    s.remapped_rows_uncorrected = ru;
    s.remap_pending = pending != 0;
    s.remap_failed = failed != 0;
  }
  unsigned gen = 0, width = 0, gen_max = 0, width_max = 0;
  if (a.pcie_gen && a.pcie_width && a.pcie_gen_max && a.pcie_width_max &&
      call("nvmlDeviceGetCurrPcieLinkGeneration", [&] { return a.pcie_gen(dev, &gen); }) &&
      call("nvmlDeviceGetCurrPcieLinkWidth", [&] { return a.pcie_width(dev, &width); }) &&
      call("nvmlDeviceGetMaxPcieLinkGeneration", [&] { return a.pcie_gen_max(dev, &gen_max); }) &&
      call("nvmlDeviceGetMaxPcieLinkWidth", [&] { return a.pcie_width_max(dev, &width_max); })) {
    s.has_pcie = true;
    s.pcie_gen = static_cast<int>(gen);
    s.pcie_width = static_cast<int>(width);
    s.pcie_gen_max = static_cast<int>(gen_max);
    s.pcie_width_max = static_cast<int>(width_max);
  }
  if (a.pcie_replay &&
      call("nvmlDeviceGetPcieReplayCounter", [&] { return a.pcie_replay(dev, &u); })) {
    s.has_pcie_replay = true;
    s.pcie_replays = u;
  }
  for (unsigned link = 0; link < kMaxLinks && !s.lost; ++link) {
    int active = 0;
    if (current_call) current_call->store("nvmlDeviceGetNvLinkState");
    const nvmlReturn_t r = a.link_state(dev, link, &active);
    if (current_call) current_call->store(nullptr);
    if (r == kNvmlGpuIsLost) s.lost = true;
    if (r != kNvmlSuccess) break;  // past the last link (NOT_SUPPORTED / INVALID_ARGUMENT)
    NvLinkSample l;
    l.link = static_cast<int>(link);
    l.active = active != 0;
    if (a.link_errors && l.active) {
      l.errors_known = true;
      for (int c = 0; c < 4; ++c) {
        ull v = 0;
        if (call("nvmlDeviceGetNvLinkErrorCounter",
                 [&] { return a.link_errors(dev, link, c, &v); }))
          l.errors[c] = v;
        else
          l.errors_known = false;
      }
    }
    if (l.active) a.LinkFacts(dev, link, &l.version, &l.speed_mbps);
    s.nvlinks.push_back(l);
  }
  if (a.fabric_info && !s.lost) {
    if (current_call) current_call->store("nvmlDeviceGetGpuFabricInfoV");
    const nvmlReturn_t r = a.Fabric(dev, &s.fabric);
    if (current_call) current_call->store(nullptr);
    if (r == kNvmlSuccess) {
      s.has_fabric = true;
    } else if (r == kNvmlGpuIsLost) {
      s.lost = true;
    } else if (r != kNvmlNotSupported) {
      s.errors["nvmlDeviceGetGpuFabricInfoV"] = r;
    }
  }
  if (a.fields) {
    FieldValue f[2] = {};
    f[0].field_id = kFieldMemoryTemp;
    f[1].field_id = kFieldRecoveryAction;
    if (call("nvmlDeviceGetFieldValues", [&] { return a.fields(dev, 2, f); })) {
      if (f[0].nvml_return == kNvmlSuccess) {
        s.has_mem_temp = true;
        s.mem_temp_celsius = FieldAsDouble(f[0]);
      }
      if (f[1].nvml_return == kNvmlSuccess) {
        s.has_recovery = true;
        s.recovery = static_cast<RecoveryAction>(static_cast<int>(FieldAsDouble(f[1])));
      }
    }
  }
  ReadGpm(api, dev, index, &s, call);
  if (a.processes) {
    unsigned n = 64;
    std::vector<ProcessInfo> procs(n);
    if (call("nvmlDeviceGetComputeRunningProcesses_v3",
             [&] { return a.processes(dev, &n, procs.data()); })) {
      for (unsigned i = 0; i < n && i < procs.size(); ++i) s.pids.push_back(procs[i].pid);
    }
  }
  return s;
}

Result<std::vector<XidEvent>> Nvml::WaitXids(unsigned timeout_ms) {
  Api& a = *api_;
  if (!a.event_create || !a.event_register || !a.event_wait) {
    return Unavailable("NVML has no event API");
  }
  if (!a.events_registered) {
    if (nvmlReturn_t r = a.event_create(&a.events); r != kNvmlSuccess) {
      return Unavailable(fmt::format("nvmlEventSetCreate: {}", a.Error(r)));
    }
    GPUFLEET_ASSIGN_OR_RETURN(int n, DeviceCount());
    for (int i = 0; i < n; ++i) {
      nvmlDevice_t dev = nullptr;
      if (a.handle(static_cast<unsigned>(i), &dev) != kNvmlSuccess) continue;
      // A GPU without XID events (NOT_SUPPORTED) still has the kernel log.
      if (a.event_register(dev, kEventXid, a.events) == kNvmlSuccess) {
        a.event_devices.emplace_back(dev, i);
      }
    }
    a.events_registered = true;
  }
  std::vector<XidEvent> out;
  unsigned wait = timeout_ms;
  for (;;) {
    EventData data{};
    const nvmlReturn_t r = a.event_wait(a.events, &data, wait);
    if (r == kNvmlTimeout) break;
    if (r != kNvmlSuccess) {
      if (!out.empty()) break;
      return Unavailable(fmt::format("nvmlEventSetWait_v2: {}", a.Error(r)));
    }
    if ((data.event_type & kEventXid) == 0) continue;
    XidEvent e;
    e.xid = static_cast<int>(data.event_data);
    e.time =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    e.source = "nvml";
    for (const auto& [dev, idx] : a.event_devices) {
      if (dev != data.device) continue;
      e.gpu = idx;
      PciInfo pci{};
      if (a.pci(dev, &pci) == kNvmlSuccess) e.busid = CanonicalNvmlBusId(pci);
    }
    out.push_back(std::move(e));
    wait = 0;  // drain what is queued, then return
  }
  return out;
}

}  // namespace gpufleet::sys
