#pragma once
// What the agent and `gpufleet check` read a node through: NVML (one worker
// per GPU, with a deadline), the XID tracker (NVML events + kernel log), the
// SysRoot for /proc and /sys, and the check inputs gathered from them. One
// place, so `check` and the agent judge the same data the same way.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "agent/gpu_monitor.h"
#include "agent/imex.h"
#include "agent/node_stats.h"
#include "agent/xid_tracker.h"
#include "base/sysroot.h"
#include "checks/check.h"

namespace gpufleet::agent {

struct SourceOptions {
  bool nvml = true;
  std::string kmsg = "/dev/kmsg";  // "" or "none" = do not read the kernel log
  std::string root = "/";
  std::chrono::milliseconds gpu_deadline{5000};
  // The IMEX daemon's config, read when a GPU reports a multi-node NVLink fabric.
  std::string imex_config = kDefaultImexConfig;
};

class NodeSources {
 public:
  // Never fails for a missing source: NVML or the kernel log that cannot be
  // opened is noted (nvml_note, kmsg_note) and left out.
  static std::unique_ptr<NodeSources> Open(const SourceOptions& o);
  ~NodeSources();

  const SysRoot& root() const { return root_; }
  bool nvml() const { return nvml_ != nullptr; }
  // The open NVML (null without one), for discovery to ask instead of opening its own.
  sys::Nvml* nvml_handle() const { return nvml_.get(); }
  const std::string& nvml_note() const { return nvml_note_; }
  const std::string& kmsg_note() const { return kmsg_note_; }
  XidTracker& xids() { return *xids_; }

  // Reads every GPU (empty without NVML) and tells the XID tracker the bus ids.
  std::vector<GpuReading> ReadGpus();

  // Fills the GPU, XID and NVML parts of a check context (whose spec is set).
  static void FillChecks(const std::vector<GpuReading>& gpus, const NodeSources& src,
                         std::vector<sys::XidEvent> xids, checks::CheckContext* ctx);

 private:
  NodeSources() = default;
  SysRoot root_;
  std::unique_ptr<sys::Nvml> nvml_;
  std::string nvml_note_, kmsg_note_;
  bool nvml_wanted_ = false;
  std::string imex_config_;
  std::unique_ptr<GpuMonitor> monitor_;
  std::unique_ptr<XidTracker> xids_;
};

// statvfs of each path; kInvalidArgument names a path that cannot be read.
Result<std::vector<checks::DiskUsage>> DiskUsageOf(const std::vector<std::string>& paths);

}  // namespace gpufleet::agent
