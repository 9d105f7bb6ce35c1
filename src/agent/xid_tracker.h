#pragma once
// XIDs from NVML events and the kernel log, de-duplicated: the same XID on the
// same GPU from both sources within kSameEventSeconds is one event. A
// background thread waits on NVML events and polls the kernel log; Events()
// returns everything seen since the agent started, including the kernel log's
// record of this boot. Thread-safe.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sys/kmsg.h"
#include "sys/nvml.h"

namespace gpufleet::agent {

inline constexpr double kSameEventSeconds = 10;

// Adds `e` to `events` unless it repeats one there (same GPU bus id, or same index
// when no bus id, same XID, within kSameEventSeconds). True if added.
bool AddDeduplicated(std::vector<sys::XidEvent>* events, sys::XidEvent e);

class XidTracker {
 public:
  // Either source may be null. `nvml` must outlive the tracker.
  XidTracker(sys::Nvml* nvml, std::unique_ptr<sys::KmsgReader> kmsg);
  ~XidTracker();
  XidTracker(const XidTracker&) = delete;
  XidTracker& operator=(const XidTracker&) = delete;

  // Tells the tracker which bus id is which NVML index (kernel lines carry only bus ids).
  void SetGpus(const std::vector<std::string>& busids);
  std::vector<sys::XidEvent> Events() const;
  // Why a source is not read ("" when both are); for the agent's self metrics.
  std::string Problems() const;
  // Reads the sources once, without the thread (for `gpufleet check`).
  void PollOnce(unsigned nvml_wait_ms);
  void Start();

 private:
  void Loop();

  sys::Nvml* nvml_;
  std::unique_ptr<sys::KmsgReader> kmsg_;
  mutable std::mutex mu_;
  std::vector<sys::XidEvent> events_;
  std::vector<std::string> busids_;
  std::string problems_;
  bool nvml_failed_ = false;  // only the polling thread touches it
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace gpufleet::agent
