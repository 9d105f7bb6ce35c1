#pragma once
// NVML, loaded with dlopen at run time (no build-time driver dependency), with
// the versioned entry points the header #defines (reference/monitoring.md §5).
// Two uses: discovery (identity, PCI bus id, NVLink peers) and health sampling
// (GpuSample, XID events). NVML itself is thread-safe and the entry-point table
// is read-only after Open, so one Nvml may be shared by many threads (the
// agent's per-GPU workers); WaitXids is for one thread at a time.

#include <atomic>
#include <cstdint>
#include <map>
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

// A GPU's place in a multi-node NVLink domain (GB200/GB300 NVL72): its registration
// with the fabric manager, the domain (cluster UUID) and partition (clique) it joined,
// and the health the fabric reports. nvmlDeviceGetGpuFabricInfoV (nvml.h, NVML 12.4+;
// reference: NVIDIA's NVML API reference, "GPU Fabric"). GPUs without such a fabric
// (PCIe, HGX H100 before R550) report kNotSupported.
enum class FabricState { kNotSupported = 0, kNotStarted = 1, kInProgress = 2, kCompleted = 3 };
std::string_view FabricStateName(FabricState s);

struct GpuFabric {
  FabricState state = FabricState::kNotSupported;
  int status = 0;            // nvmlReturn_t of the registration; meaningful once completed
  std::string cluster_uuid;  // the NVLink domain, "" when NVML gave zeros
  unsigned clique = 0;       // the partition inside the domain
  uint32_t health_mask = 0;  // NVML_GPU_FABRIC_HEALTH_MASK_* fields
  int health_summary = 0;    // 0 not reported, 1 healthy, 2 unhealthy, 3 limited capacity
  // What the health mask says is wrong now ("degraded bandwidth", "route unhealthy",
  // "incorrect configuration: insufficient NVLinks") and what is being recovered
  // ("route recovery in progress"); empty when healthy or not reported.
  std::vector<std::string> Problems() const;
  std::vector<std::string> Recoveries() const;
};

struct NvmlGpu {
  int index = 0;
  std::string busid;  // canonical "dddd:bb:dd.f"
  std::string name;
  std::string uuid;
  int sm = 0;  // major x 10 + minor
  std::vector<NvmlNvLink> active_links;
  int links = 0;           // NVLinks the GPU has (active or not)
  int nvlink_version = 0;  // nvmlNvlinkVersion_t of its first active link: 7 = NVLink 5.0
  double link_mbps = 0;    // per-link speed NVML reports (MB/s), 0 = not reported
  // NVLink-C2C to the CPU (Grace: GH200, GB200, GB300): active links and each one's maximum
  // bandwidth (NVML_FI_DEV_C2C_LINK_*; what NCCL reads into its <c2c count bw>).
  int c2c_links = 0;
  double c2c_mbps = 0;
  bool has_fabric = false;  // nvmlDeviceGetGpuFabricInfoV answered
  GpuFabric fabric;
};

// nvmlReturn_t values the callers act on.
inline constexpr int kNvmlSuccess = 0;
inline constexpr int kNvmlNotSupported = 3;
inline constexpr int kNvmlTimeout = 10;
inline constexpr int kNvmlGpuIsLost = 15;

// Clock-event (throttle) reason bits, nvmlClocksEventReason* (nvml.h).
struct ClockEventReason {
  uint64_t bit;
  const char* name;  // Prometheus label value
  bool hardware;     // a >= 2x clock cut by the hardware
};
const std::vector<ClockEventReason>& ClockEventReasons();

// NVML_FI_DEV_GET_GPU_RECOVERY_ACTION values.
enum class RecoveryAction {
  kNone = 0,
  kGpuReset = 1,
  kNodeReboot = 2,
  kDrainP2p = 3,
  kDrainAndReset = 4,
  kRecoverImexDomain = 5
};
std::string_view RecoveryActionName(RecoveryAction a);

struct NvLinkSample {
  int link = 0;
  bool active = false;
  // DL error counters (nvmlNvLinkErrorCounter_t order): replay, recovery, crc_flit, crc_data.
  uint64_t errors[4] = {0, 0, 0, 0};
  bool errors_known = false;
  int version = 0;        // nvmlNvlinkVersion_t (4 = 3.0, 6 = 4.0, 7 = 5.0); 0 = not reported
  double speed_mbps = 0;  // NVML_FI_DEV_NVLINK_GET_SPEED, MB/s; 0 = not reported
};
inline constexpr const char* kNvLinkErrorNames[4] = {"replay", "recovery", "crc_flit", "crc_data"};

// One GPU's health and load at one moment. A value that NVML could not give is
// absent (std::nullopt-like: `has_*` false), never a sentinel.
struct GpuSample {
  int index = 0;
  std::string uuid, name, busid;
  bool lost = false;      // NVML_ERROR_GPU_IS_LOST: fell off the bus
  std::string hung_call;  // set by a watchdog: the NVML call that did not return in time

  bool has_util = false;
  double util_ratio = 0;      // 0..1, averaged over the samples since the last read
  double mem_util_ratio = 0;  // memory controller busy, 0..1
  bool has_memory = false;
  double memory_used_bytes = 0, memory_total_bytes = 0;
  bool has_power = false;
  double power_watts = 0;
  bool has_power_limit = false;
  double power_limit_watts = 0;
  bool has_energy = false;
  double energy_joules = 0;  // since the driver loaded
  bool has_temp = false;
  double temp_celsius = 0;
  bool has_mem_temp = false;
  double mem_temp_celsius = 0;
  bool has_clocks = false;
  double sm_clock_hz = 0, mem_clock_hz = 0, sm_clock_max_hz = 0;
  bool has_clock_events = false;
  uint64_t clock_event_reasons = 0;
  bool has_ecc = false;
  uint64_t ecc_corrected = 0, ecc_uncorrected = 0;  // volatile: since the driver loaded
  bool has_remap = false;
  uint64_t remapped_rows_corrected = 0, remapped_rows_uncorrected = 0;
  bool remap_pending = false, remap_failed = false;
  bool has_pcie = false;
  int pcie_gen = 0, pcie_width = 0, pcie_gen_max = 0, pcie_width_max = 0;
  bool has_pcie_replay = false;
  uint64_t pcie_replays = 0;
  std::vector<NvLinkSample> nvlinks;  // links NVML reports (supported ones)
  bool has_fabric = false;
  GpuFabric fabric;
  bool has_recovery = false;
  RecoveryAction recovery = RecoveryAction::kNone;
  std::vector<unsigned> pids;  // compute processes on this GPU

  // GPU performance monitoring (GPM, Hopper and later): activity over the interval since the
  // previous Sample of this GPU, as fractions (what DCGM's DCGM_FI_PROF_* report), and PCIe
  // traffic in bytes/s. Absent on the first Sample and on GPUs without GPM.
  bool has_gpm = false;
  double gpm_graphics_active = 0, gpm_sm_active = 0, gpm_sm_occupancy = 0;
  double gpm_tensor_active = 0, gpm_dram_active = 0;
  double gpm_pcie_tx_bytes_per_s = 0, gpm_pcie_rx_bytes_per_s = 0;

  // Failed NVML calls other than NOT_SUPPORTED: function -> nvmlReturn_t.
  std::map<std::string, int> errors;
};

struct XidEvent {
  std::string busid;  // canonical, "" if unknown
  int gpu = -1;       // NVML index, -1 if unknown
  int xid = 0;
  double time = 0;     // unix seconds
  std::string source;  // "nvml" or "kmsg"
  std::string text;    // the kernel's message (kmsg only)
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
  Result<int> DeviceCount();

  // Reads one GPU. `last_util_ts` (NVML microseconds, 0 at first) makes the
  // utilisation the mean of the samples since the previous call, not one
  // instant. `current_call`, when given, names the NVML function in progress,
  // so a watchdog can say which call hung.
  GpuSample Sample(int index, uint64_t* last_util_ts,
                   std::atomic<const char*>* current_call = nullptr);

  // XID events (nvmlEventTypeXidCriticalError) from every GPU. Registers on the
  // first call; waits up to `timeout_ms` and returns what arrived (maybe none).
  Result<std::vector<XidEvent>> WaitXids(unsigned timeout_ms);

  // Leave the library loaded at destruction (a worker thread may still be
  // inside a hung call).
  void Leak() { leak_ = true; }

  struct Api;  // the loaded entry points and per-GPU state (nvml.cc)

 private:
  explicit Nvml(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
  bool leak_ = false;
};

}  // namespace gpufleet::sys
