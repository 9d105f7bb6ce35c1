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

struct NvmlGpu {
  int index = 0;
  std::string busid;  // canonical "dddd:bb:dd.f"
  std::string name;
  std::string uuid;
  int sm = 0;  // major x 10 + minor
  std::vector<NvmlNvLink> active_links;
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
  bool has_recovery = false;
  RecoveryAction recovery = RecoveryAction::kNone;
  std::vector<unsigned> pids;  // compute processes on this GPU

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

 private:
  struct Api;
  explicit Nvml(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
  bool leak_ = false;
};

}  // namespace gpufleet::sys
