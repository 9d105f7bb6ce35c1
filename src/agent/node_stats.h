#pragma once
// /proc/diskstats, read through a SysRoot: shared by the node collector (the
// counters) and the storage-latency check (the mean latency between two reads).

#include <string>
#include <vector>

#include "base/sysroot.h"
#include "checks/check.h"

namespace gpufleet::agent {

struct DiskStat {
  std::string device;
  double reads = 0, writes = 0;
  double read_bytes = 0, written_bytes = 0;
  double read_seconds = 0, write_seconds = 0, io_seconds = 0;
  double in_flight = 0;
};

// Whole block devices (those in /sys/block), not partitions, loop or ram devices.
std::vector<DiskStat> ReadDiskStats(const SysRoot& root);

// Per device: the IOs completed between `before` and `after` and their mean latency.
std::vector<checks::DiskLatency> DiskLatencies(const std::vector<DiskStat>& before,
                                               const std::vector<DiskStat>& after);

}  // namespace gpufleet::agent
