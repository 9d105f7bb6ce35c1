#pragma once
// One worker thread per GPU, each reading its GPU through NVML when asked.
// Collect() waits for all of them up to a deadline: a GPU whose call hangs (a
// wedged driver ioctl, a GPU falling off the bus) is reported down with the
// name of the call it is stuck in, and never stalls the others or the HTTP
// server. Its worker is not asked again until that call returns.
// Thread-safe: Collect may be called from any one thread at a time.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sys/nvml.h"

namespace gpufleet::agent {

struct GpuReading {
  sys::GpuSample sample;
  bool up = false;        // answered within the deadline and not lost
  std::string hung_call;  // the NVML function still running at the deadline
  double seconds = 0;     // how long the read took (the deadline if it hung)
};

class GpuMonitor {
 public:
  // `nvml` must outlive the monitor. Starts one worker per GPU NVML counts.
  GpuMonitor(sys::Nvml* nvml, int gpus, std::chrono::milliseconds deadline);
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;

  std::vector<GpuReading> Collect();
  // True if a worker is still inside an NVML call (the library must then stay loaded).
  bool AnyHung() const;

 private:
  struct Worker;
  struct State;  // shared with the threads, so a detached hung one outlives the monitor
  static void Run(std::shared_ptr<State> st, Worker* w, sys::Nvml* nvml);

  sys::Nvml* nvml_;
  std::chrono::milliseconds deadline_;
  std::shared_ptr<State> st_;
};

}  // namespace gpufleet::agent
