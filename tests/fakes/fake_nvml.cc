// A fake libnvidia-ml.so.1: the NVML entry points gpufleet uses, answering for
// GPUs described in a JSON file (path in GPUFLEET_FAKE_NVML; 8 healthy H100s
// when unset). The file is re-read whenever it changes, so a test injects and
// clears faults while the agent runs. Loaded through the same dlopen path as
// the real library (LD_LIBRARY_PATH points at this build folder).
//
// File format (every key optional; "gpu" overrides per index):
//   {"gpus": 8, "name": "NVIDIA H100 80GB HBM3", "util": 98, "power_w": 650,
//    "power_limit_w": 700, "temp": 55, "nvlinks": 18, "pids": [],
//    "gpu": {"3": {"lost": true}, "1": {"xid": [79, 48]},
//            "2": {"clock_event_reasons": 64}, "4": {"ecc_uncorrected": 2},
//            "5": {"row_remap_pending": true, "row_remap_failed": true},
//            "6": {"nvlink_down": [0, 1]}, "0": {"recovery_action": 2},
//            "7": {"hang": "nvmlDeviceGetPowerUsage", "hang_seconds": 30},
//            "2": {"fail": {"nvmlDeviceGetTemperature": 999}}}}
// "fail_init": N makes nvmlInit_v2 return N (9 = driver not loaded).
// "profile": "gb200" starts from one GB200 NVL72 compute tray instead (4 Blackwell GPUs, 18
// NVLink 5 links each into the rack's NVLink switch trays, fabric registration completed in
// one cluster and clique); the file's own keys apply on top. Fabric keys: "fabric_state"
// (0 not supported, 1 not started, 2 in progress, 3 completed), "fabric_status" (nvmlReturn_t),
// "fabric_cluster_uuid", "fabric_clique", "fabric_health_mask", "fabric_health_summary"; links:
// "nvlink_version" (nvmlNvlinkVersion_t), "nvlink_speed_mbps", "nvlinks" (how many exist);
// "c2c_links", "c2c_mbps" (NVLink-C2C to the CPU). GPM (percent over the interval between two
// samples, PCIe in MiB/s): "gpm" (false: not supported), "gpm_graphics", "gpm_sm",
// "gpm_occupancy", "gpm_tensor", "gpm_dram", "gpm_pcie_tx_mib", "gpm_pcie_rx_mib".
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "sys/nvml_abi.h"

namespace {

using gpufleet::sys::abi::EventData;
using gpufleet::sys::abi::FabricInfo;
using gpufleet::sys::abi::FieldValue;
using gpufleet::sys::abi::GpmMetric;
using gpufleet::sys::abi::GpmMetricsGet;
using gpufleet::sys::abi::GpmSupport;
using gpufleet::sys::abi::MemoryInfo;
using gpufleet::sys::abi::PciInfo;
using gpufleet::sys::abi::ProcessInfo;
using gpufleet::sys::abi::SampleValue;
using gpufleet::sys::abi::ull;
using gpufleet::sys::abi::Utilization;
constexpr int kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kTimeout = 10, kGpuIsLost = 15;
constexpr int kMaxGpus = 64;

// Handles point into this array; a device's index is its position.
struct Device {
  char unused;
};
Device g_devices[kMaxGpus];

// Never destroyed: a GPU worker that the agent let go while it hung in a call here (the
// "hang" fault) wakes and calls in again while the process exits, after the exit handlers would
// have destroyed them (ASan caught it: e2e.check_nvml_hung).
std::mutex& g_mu = *new std::mutex;
nlohmann::json& g_state = *new nlohmann::json(nlohmann::json::object());
std::string& g_version = *new std::string;  // mtime+size of the file read last
std::set<std::pair<int, size_t>>& g_delivered =
    *new std::set<std::pair<int, size_t>>;  // (gpu, position in its xid list)

// Re-reads the file when it changed. Caller holds g_mu.
void Reload() {
  const char* path = std::getenv("GPUFLEET_FAKE_NVML");
  if (path == nullptr || *path == 0) {  // back to 8 healthy GPUs
    if (!g_version.empty()) {
      g_state = nlohmann::json::object();
      g_version.clear();
      g_delivered.clear();
    }
    return;
  }
  struct stat st {};
  if (stat(path, &st) != 0) return;
  std::string version = std::string(path) + "@" + std::to_string(st.st_mtim.tv_sec) + "." +
                        std::to_string(st.st_mtim.tv_nsec) + "." + std::to_string(st.st_size);
  if (version == g_version) return;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return;  // a half-written file: keep the old state
  if (j.is_object() && j.value("profile", "") == "gb200") {
    // One GB200 NVL72 compute tray: two Grace CPUs, four GPUs, each with 18 NVLink 5 links
    // (50 GB/s per direction, 53,125 MB/s as NVML reports it) to the switch trays.
    nlohmann::json tray = {
        {"gpus", 4},
        {"name", "NVIDIA GB200"},
        {"pci_device_id", 0x294110de},
        {"cc", 100},
        {"memory_total_gib", 184.0},
        {"power_w", 1050},
        {"power_limit_w", 1200},
        {"nvlinks", 18},
        {"nvlink_version", 7},
        {"nvlink_speed_mbps", 53125},
        // NVLink-C2C to its Grace: 900 GB/s both ways (NVIDIA GB200 NVL72 page), as 10 links
        // of 45,000 MB/s per direction (the split is the fake's; NCCL multiplies them back).
        {"c2c_links", 10},
        {"c2c_mbps", 45000},
        {"fabric_state", 3},
        {"fabric_status", 0},
        {"fabric_cluster_uuid", "8c4f2a9e-51d7-4b3a-9e0c-6a1d2b3c4d5e"},
        {"fabric_clique", 32766},
        {"fabric_health_mask", 0x1aa},  // every field reported false: healthy
        {"fabric_health_summary", 1},
    };
    tray.merge_patch(j);
    j = std::move(tray);
  }
  g_state = std::move(j);
  g_version = version;
  g_delivered.clear();
}

// The value of `key` for GPU `gpu`: its override, else the global, else `def`.
template <typename T>
T Get(int gpu, const char* key, T def) {
  std::lock_guard<std::mutex> lock(g_mu);
  Reload();
  const auto& per = g_state.value("gpu", nlohmann::json::object());
  const std::string idx = std::to_string(gpu);
  if (per.contains(idx) && per[idx].contains(key)) return per[idx][key].get<T>();
  if (g_state.contains(key)) return g_state[key].get<T>();
  return def;
}

int Count() { return std::min(Get<int>(-1, "gpus", 8), kMaxGpus); }

// Every device call: the device must exist, a lost GPU answers GPU_IS_LOST, and
// a call named in "hang" sleeps first.
int Enter(void* dev, const char* fn, int* index) {
  auto* d = static_cast<Device*>(dev);
  if (d < g_devices || d >= g_devices + kMaxGpus) return kInvalidArgument;
  const int index_of = static_cast<int>(d - g_devices);  // handles are never written to
  *index = index_of;
  if (index_of >= Count()) return kInvalidArgument;
  if (Get<std::string>(index_of, "hang", "") == fn) {
    std::this_thread::sleep_for(std::chrono::milliseconds(
        static_cast<int>(Get<double>(index_of, "hang_seconds", 3600) * 1000)));
  }
  if (Get<bool>(index_of, "lost", false)) return kGpuIsLost;
  // "fail": {"nvmlDeviceGetTemperature": 999} makes that call return that code.
  const auto fail = Get<std::map<std::string, int>>(index_of, "fail", {});
  if (auto it = fail.find(fn); it != fail.end()) return it->second;
  return kSuccess;
}

#define ENTER(dev) \
  int gpu = 0;     \
  if (int r_ = Enter(dev, __func__, &gpu); r_ != kSuccess) return r_

void CopyString(const std::string& s, char* buf, unsigned len) {
  if (len == 0) return;
  std::snprintf(buf, len, "%s", s.c_str());
}

unsigned BusOf(int gpu) { return 0x10 + 0x10 * static_cast<unsigned>(gpu); }

void FillPci(int gpu, PciInfo* p) {
  std::memset(p, 0, sizeof(*p));
  p->bus = BusOf(gpu);
  p->pci_device_id = Get<unsigned>(gpu, "pci_device_id", 0x233010de);
  std::snprintf(p->bus_id, sizeof(p->bus_id), "00000000:%02X:00.0", p->bus);
  std::snprintf(p->bus_id_legacy, sizeof(p->bus_id_legacy), "0000:%02X:00.0", p->bus);
}

ull NowUs() {
  return static_cast<ull>(std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count());
}

}  // namespace

extern "C" {

int nvmlInit_v2() { return Get<int>(-1, "fail_init", kSuccess); }
int nvmlInitWithFlags(unsigned) { return nvmlInit_v2(); }
int nvmlShutdown() { return kSuccess; }

const char* nvmlErrorString(int r) {
  switch (r) {
    case kSuccess:
      return "Success";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case 9:
      return "Driver Not Loaded";
    case kTimeout:
      return "Timeout";
    case kGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

int nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  CopyString("580.95.05", buf, len);
  return kSuccess;
}

int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = static_cast<unsigned>(Count());
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** dev) {
  if (static_cast<int>(i) >= Count()) return kInvalidArgument;
  *dev = &g_devices[i];
  if (Get<bool>(static_cast<int>(i), "lost", false)) return kGpuIsLost;
  return kSuccess;
}

int nvmlDeviceGetPciInfo_v3(void* dev, PciInfo* p) {
  ENTER(dev);
  FillPci(gpu, p);
  return kSuccess;
}

int nvmlDeviceGetName(void* dev, char* buf, unsigned len) {
  ENTER(dev);
  CopyString(Get<std::string>(gpu, "name", "NVIDIA H100 80GB HBM3"), buf, len);
  return kSuccess;
}

int nvmlDeviceGetUUID(void* dev, char* buf, unsigned len) {
  ENTER(dev);
  char uuid[64];
  std::snprintf(uuid, sizeof(uuid), "GPU-fa4e0000-0000-4000-8000-%012x", gpu);
  CopyString(uuid, buf, len);
  return kSuccess;
}

int nvmlDeviceGetCudaComputeCapability(void* dev, int* major, int* minor) {
  ENTER(dev);
  const int cc = Get<int>(gpu, "cc", 90);
  *major = cc / 10;
  *minor = cc % 10;
  return kSuccess;
}

int nvmlDeviceGetNvLinkState(void* dev, unsigned link, int* active) {
  ENTER(dev);
  if (static_cast<int>(link) >= Get<int>(gpu, "nvlinks", 18)) return kInvalidArgument;
  const auto down = Get<std::vector<int>>(gpu, "nvlink_down", {});
  *active = std::find(down.begin(), down.end(), static_cast<int>(link)) == down.end() ? 1 : 0;
  return kSuccess;
}

int nvmlDeviceGetNvLinkVersion(void* dev, unsigned link, unsigned* version) {
  ENTER(dev);
  if (static_cast<int>(link) >= Get<int>(gpu, "nvlinks", 18)) return kInvalidArgument;
  *version = Get<unsigned>(gpu, "nvlink_version", 6);
  return kSuccess;
}

int nvmlDeviceGetGpuFabricInfoV(void* dev, FabricInfo* f) {
  ENTER(dev);
  const unsigned v = f->version >> 24;
  if (v != 2 && v != 3) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  const std::string uuid = Get<std::string>(gpu, "fabric_cluster_uuid", "");
  std::memset(f->cluster_uuid, 0, sizeof(f->cluster_uuid));
  for (size_t i = 0, b = 0; i + 1 < uuid.size() && b < 16; ++i) {
    if (uuid[i] == '-') continue;
    f->cluster_uuid[b++] = static_cast<unsigned char>(std::stoul(uuid.substr(i, 2), nullptr, 16));
    ++i;
  }
  f->status = Get<int>(gpu, "fabric_status", 0);
  f->clique_id = Get<unsigned>(gpu, "fabric_clique", 0);
  f->state = static_cast<unsigned char>(Get<unsigned>(gpu, "fabric_state", 0));
  f->health_mask = Get<unsigned>(gpu, "fabric_health_mask", 0);
  if (v == 3)
    f->health_summary = static_cast<unsigned char>(Get<unsigned>(gpu, "fabric_health_summary", 0));
  return kSuccess;
}

int nvmlDeviceGetNvLinkRemotePciInfo_v2(void* dev, unsigned link, PciInfo* p) {
  ENTER(dev);
  std::memset(p, 0, sizeof(*p));
  p->bus = 0xc0 + link / 5;  // four NVSwitches, as on a DGX H100
  return kSuccess;
}

int nvmlDeviceGetNvLinkRemoteDeviceType(void* dev, unsigned, int* type) {
  ENTER(dev);
  *type = 2;  // NVSwitch
  return kSuccess;
}

int nvmlDeviceGetNvLinkErrorCounter(void* dev, unsigned, int counter, ull* v) {
  ENTER(dev);
  *v = counter == 1 ? Get<ull>(gpu, "nvlink_recovery_errors", 0) : 0;
  return kSuccess;
}

int nvmlDeviceGetSamples(void* dev, int type, ull last_seen, int* value_type, unsigned* count,
                         SampleValue* samples) {
  ENTER(dev);
  *value_type = 1;  // unsigned int
  const ull now = NowUs();
  if (last_seen >= now) {
    *count = 0;
    return kSuccess;
  }
  if (samples == nullptr) {
    *count = 1;
    return kSuccess;
  }
  if (*count < 1) return 7;  // INSUFFICIENT_SIZE
  *count = 1;
  samples[0].timestamp = now;
  samples[0].value.ui =
      type == 1 ? Get<unsigned>(gpu, "util", 98) : Get<unsigned>(gpu, "mem_util", 40);
  return kSuccess;
}

int nvmlDeviceGetUtilizationRates(void* dev, Utilization* u) {
  ENTER(dev);
  u->gpu = Get<unsigned>(gpu, "util", 98);
  u->memory = Get<unsigned>(gpu, "mem_util", 40);
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(void* dev, MemoryInfo* m) {
  ENTER(dev);
  m->total = static_cast<ull>(Get<double>(gpu, "memory_total_gib", 80) * (1ull << 30));
  m->used = static_cast<ull>(Get<double>(gpu, "memory_used_gib", 61.5) * (1ull << 30));
  m->free = m->total - m->used;
  return kSuccess;
}

int nvmlDeviceGetPowerUsage(void* dev, unsigned* mw) {
  ENTER(dev);
  *mw = static_cast<unsigned>(Get<double>(gpu, "power_w", 650) * 1000);
  return kSuccess;
}

int nvmlDeviceGetEnforcedPowerLimit(void* dev, unsigned* mw) {
  ENTER(dev);
  *mw = static_cast<unsigned>(Get<double>(gpu, "power_limit_w", 700) * 1000);
  return kSuccess;
}

int nvmlDeviceGetTotalEnergyConsumption(void* dev, ull* mj) {
  ENTER(dev);
  *mj = NowUs() / 1000 % 1000000000ull * 650;  // grows at 650 W
  return kSuccess;
}

int nvmlDeviceGetTemperature(void* dev, int, unsigned* c) {
  ENTER(dev);
  *c = Get<unsigned>(gpu, "temp", 55);
  return kSuccess;
}

int nvmlDeviceGetClockInfo(void* dev, int type, unsigned* mhz) {
  ENTER(dev);
  *mhz = type == 2 ? 2619 : Get<unsigned>(gpu, "sm_clock_mhz", 1980);
  return kSuccess;
}

int nvmlDeviceGetMaxClockInfo(void* dev, int type, unsigned* mhz) {
  ENTER(dev);
  *mhz = type == 2 ? 2619 : 1980;
  return kSuccess;
}

int nvmlDeviceGetCurrentClocksEventReasons(void* dev, ull* reasons) {
  ENTER(dev);
  *reasons = Get<ull>(gpu, "clock_event_reasons", 0);
  return kSuccess;
}

int nvmlDeviceGetTotalEccErrors(void* dev, int error_type, int, ull* count) {
  ENTER(dev);
  *count =
      error_type == 1 ? Get<ull>(gpu, "ecc_uncorrected", 0) : Get<ull>(gpu, "ecc_corrected", 0);
  return kSuccess;
}

int nvmlDeviceGetRemappedRows(void* dev, unsigned* corr, unsigned* unc, unsigned* pending,
                              unsigned* failed) {
  ENTER(dev);
  *corr = Get<unsigned>(gpu, "remapped_rows_corrected", 0);
  *unc = Get<unsigned>(gpu, "remapped_rows_uncorrected", 0);
  *pending = Get<bool>(gpu, "row_remap_pending", false) ? 1 : 0;
  *failed = Get<bool>(gpu, "row_remap_failed", false) ? 1 : 0;
  return kSuccess;
}

int nvmlDeviceGetCurrPcieLinkGeneration(void* dev, unsigned* v) {
  ENTER(dev);
  *v = Get<unsigned>(gpu, "pcie_gen", 5);
  return kSuccess;
}
int nvmlDeviceGetCurrPcieLinkWidth(void* dev, unsigned* v) {
  ENTER(dev);
  *v = Get<unsigned>(gpu, "pcie_width", 16);
  return kSuccess;
}
int nvmlDeviceGetMaxPcieLinkGeneration(void* dev, unsigned* v) {
  ENTER(dev);
  *v = 5;
  return kSuccess;
}
int nvmlDeviceGetMaxPcieLinkWidth(void* dev, unsigned* v) {
  ENTER(dev);
  *v = 16;
  return kSuccess;
}
int nvmlDeviceGetPcieReplayCounter(void* dev, unsigned* v) {
  ENTER(dev);
  *v = Get<unsigned>(gpu, "pcie_replays", 0);
  return kSuccess;
}

int nvmlDeviceGetFieldValues(void* dev, int n, FieldValue* f) {
  ENTER(dev);
  for (int i = 0; i < n; ++i) {
    f[i].nvml_return = kSuccess;
    f[i].value_type = 1;
    if (f[i].field_id == 82) {
      f[i].value.ui = Get<unsigned>(gpu, "mem_temp", 62);
    } else if (f[i].field_id == 230) {
      f[i].value.ui = Get<unsigned>(gpu, "recovery_action", 0);
    } else if (f[i].field_id == 170) {  // C2C links to the CPU
      f[i].value.ui = Get<unsigned>(gpu, "c2c_links", 0);
    } else if (f[i].field_id == 171 || f[i].field_id == 172) {  // per link: status, MB/s
      if (static_cast<int>(f[i].scope_id) >= Get<int>(gpu, "c2c_links", 0)) {
        f[i].nvml_return = kInvalidArgument;
      } else {
        f[i].value.ui = f[i].field_id == 171 ? 1 : Get<unsigned>(gpu, "c2c_mbps", 0);
      }
    } else if (f[i].field_id == 164) {  // NVLink speed (MB/s) of link scope_id
      if (static_cast<int>(f[i].scope_id) >= Get<int>(gpu, "nvlinks", 18)) {
        f[i].nvml_return = kInvalidArgument;
      } else {
        f[i].value.ui = Get<unsigned>(gpu, "nvlink_speed_mbps", 26562);
      }
    } else {
      f[i].nvml_return = kNotSupported;
    }
  }
  return kSuccess;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void* dev, unsigned* count, ProcessInfo* p) {
  ENTER(dev);
  const auto pids = Get<std::vector<unsigned>>(gpu, "pids", {});
  if (*count < pids.size()) {
    *count = static_cast<unsigned>(pids.size());
    return 7;  // INSUFFICIENT_SIZE
  }
  *count = static_cast<unsigned>(pids.size());
  for (size_t i = 0; i < pids.size(); ++i) p[i] = {pids[i], 1ull << 30, 0xffffffffu, 0xffffffffu};
  return kSuccess;
}

// GPM: a sample remembers its GPU; the metrics between two samples are the file's values.
struct GpmSample {
  int gpu = -1;
};
int nvmlGpmQueryDeviceSupport(void* dev, GpmSupport* s) {
  ENTER(dev);
  if (s->version != 1) return 25;
  s->is_supported = Get<bool>(gpu, "gpm", true) ? 1 : 0;
  return kSuccess;
}
int nvmlGpmSampleAlloc(GpmSample** s) {
  *s = new GpmSample();
  return kSuccess;
}
int nvmlGpmSampleFree(GpmSample* s) {
  delete s;
  return kSuccess;
}
int nvmlGpmSampleGet(void* dev, GpmSample* s) {
  ENTER(dev);
  if (!Get<bool>(gpu, "gpm", true)) return kNotSupported;
  s->gpu = gpu;
  return kSuccess;
}
int nvmlGpmMetricsGet(GpmMetricsGet* m) {
  if (m->version != 1 || m->num_metrics > std::size(m->metrics)) return 25;
  const auto* a = static_cast<const GpmSample*>(m->sample1);
  const auto* b = static_cast<const GpmSample*>(m->sample2);
  if (!a || !b || a->gpu < 0 || a->gpu != b->gpu) return kInvalidArgument;
  const int gpu = a->gpu;
  for (unsigned i = 0; i < m->num_metrics; ++i) {
    GpmMetric& x = m->metrics[i];
    x.nvml_return = kSuccess;
    switch (x.metric_id) {
      case 1:
        x.value = Get<double>(gpu, "gpm_graphics", 97);
        break;
      case 2:
        x.value = Get<double>(gpu, "gpm_sm", 88);
        break;
      case 3:
        x.value = Get<double>(gpu, "gpm_occupancy", 31);
        break;
      case 5:
        x.value = Get<double>(gpu, "gpm_tensor", 46);
        break;
      case 10:
        x.value = Get<double>(gpu, "gpm_dram", 55);
        break;
      case 20:
        x.value = Get<double>(gpu, "gpm_pcie_tx_mib", 1200);
        break;
      case 21:
        x.value = Get<double>(gpu, "gpm_pcie_rx_mib", 800);
        break;
      default:
        x.nvml_return = kNotSupported;
    }
  }
  return kSuccess;
}

// Events: one set; XIDs listed in the file are delivered once per file version.
int g_event_set;
int nvmlEventSetCreate(void** set) {
  *set = &g_event_set;
  return kSuccess;
}
int nvmlDeviceRegisterEvents(void* dev, ull, void*) {
  ENTER(dev);
  return kSuccess;
}
int nvmlEventSetFree(void*) { return kSuccess; }

int nvmlEventSetWait_v2(void*, EventData* out, unsigned timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const int n = Count();
    for (int gpu = 0; gpu < n; ++gpu) {
      const auto xids = Get<std::vector<int>>(gpu, "xid", {});
      std::lock_guard<std::mutex> lock(g_mu);
      for (size_t k = 0; k < xids.size(); ++k) {
        if (!g_delivered.insert({gpu, k}).second) continue;
        *out = {&g_devices[gpu], 0x8, static_cast<ull>(xids[k]), 0xffffffffu, 0xffffffffu};
        return kSuccess;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) return kTimeout;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeout_ms, 20u)));
  }
}

}  // extern "C"
