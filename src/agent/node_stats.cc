#include "agent/node_stats.h"

#include <sstream>

#include "base/strings.h"

namespace gpufleet::agent {

std::vector<DiskStat> ReadDiskStats(const SysRoot& root) {
  std::vector<DiskStat> out;
  auto text = root.Read("/proc/diskstats");
  if (!text) return out;
  const bool have_sys_block = root.Exists("/sys/block");
  for (const auto& line : strings::Split(*text, '\n')) {
    std::istringstream ss(line);
    unsigned major = 0, minor = 0;
    DiskStat d;
    double f[11] = {};
    if (!(ss >> major >> minor >> d.device)) continue;
    int n = 0;
    while (n < 11 && ss >> f[n]) ++n;
    if (n < 11) continue;
    if (d.device.rfind("loop", 0) == 0 || d.device.rfind("ram", 0) == 0) continue;
    if (have_sys_block && !root.Exists("/sys/block/" + d.device)) continue;  // a partition
    // Fields (Documentation/admin-guide/iostats.rst): reads, merged, sectors, ms reading,
    // writes, merged, sectors, ms writing, in flight, ms doing IO, weighted ms. Sectors
    // are 512 bytes whatever the device's block size.
    d.reads = f[0];
    d.read_bytes = f[2] * 512;
    d.read_seconds = f[3] / 1e3;
    d.writes = f[4];
    d.written_bytes = f[6] * 512;
    d.write_seconds = f[7] / 1e3;
    d.in_flight = f[8];
    d.io_seconds = f[9] / 1e3;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<checks::DiskLatency> DiskLatencies(const std::vector<DiskStat>& before,
                                               const std::vector<DiskStat>& after) {
  std::vector<checks::DiskLatency> out;
  for (const auto& a : after) {
    for (const auto& b : before) {
      if (b.device != a.device) continue;
      const double ios = (a.reads - b.reads) + (a.writes - b.writes);
      const double secs = (a.read_seconds - b.read_seconds) + (a.write_seconds - b.write_seconds);
      if (ios <= 0) break;
      out.push_back({a.device, ios, secs / ios});
      break;
    }
  }
  return out;
}

}  // namespace gpufleet::agent
