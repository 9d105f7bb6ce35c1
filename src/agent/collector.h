#pragma once
// Collectors: one file each, listed in one table (registry.cc), switched on
// and off with --collector.NAME / --no-collector.NAME. A collector turns what
// the agent gathered (GPU readings, XIDs) or what it reads itself through the
// SysRoot (/proc, /sys, the bench results folder) into metric families. A
// collector that cannot read its source returns an error; the agent then
// reports gpufleet_scrape_collector_success 0 and serves the rest.

#include <string>
#include <vector>

#include "agent/gpu_monitor.h"
#include "agent/metrics.h"
#include "base/result.h"
#include "base/sysroot.h"
#include "checks/check.h"

namespace gpufleet::agent {

struct CollectorStat {
  std::string name;
  double seconds = 0;
  bool ok = true;
  std::string error;
};

struct CollectInput {
  const SysRoot* root = nullptr;
  bool nvml = false;      // NVML loaded
  std::string nvml_note;  // why not
  std::vector<GpuReading> gpus;
  std::vector<sys::XidEvent> xids;
  const checks::XidTable* xid_table = nullptr;
  std::string bench_dir;  // "" = none
  // For the self collector: the other collectors' results, and NVML call errors so far.
  std::vector<CollectorStat> stats;
  std::map<std::pair<std::string, int>, double> nvml_errors;  // (function, code) -> count
  std::vector<checks::Finding> findings;                      // the last check run
  double last_check_time = 0;
};

struct CollectorInfo {
  const char* name;
  const char* description;
  bool enabled_by_default;
  Status (*collect)(const CollectInput& in, MetricSet* out);
};

const std::vector<CollectorInfo>& Collectors();

// The labels every GPU series carries.
Labels GpuLabels(const sys::GpuSample& g);

// Slurm job and Kubernetes pod of a process, from its /proc/PID/cgroup.
struct JobOfProcess {
  std::string slurm_job;  // "1234"
  std::string pod_uid;    // "6b1f...-..."
  std::string container;  // container id (64 hex) when the path has one
};
JobOfProcess ParseCgroup(std::string_view cgroup_file);

Status CollectGpu(const CollectInput& in, MetricSet* out);
Status CollectNode(const CollectInput& in, MetricSet* out);
Status CollectInfiniband(const CollectInput& in, MetricSet* out);
Status CollectBench(const CollectInput& in, MetricSet* out);
Status CollectSelf(const CollectInput& in, MetricSet* out);

}  // namespace gpufleet::agent
