// node collector: CPU time, load, memory, per-disk IO (and from it latency),
// per-netdev counters, all from /proc through the SysRoot. Whole-node CPU
// time, not per CPU: per-core series on a 224-thread host are a third of
// node_exporter's output and nobody alerts on them.
#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

#include "agent/collector.h"
#include "agent/node_stats.h"
#include "base/strings.h"

namespace gpufleet::agent {

namespace {
constexpr MetricType kG = MetricType::kGauge;
constexpr MetricType kC = MetricType::kCounter;
}  // namespace

Status CollectNode(const CollectInput& in, MetricSet* out) {
  const SysRoot& root = *in.root;
  GPUFLEET_ASSIGN_OR_RETURN(std::string stat, root.Read("/proc/stat"));
  {
    std::istringstream ss(stat);
    std::string cpu;
    ss >> cpu;
    static constexpr const char* kModes[] = {"user",   "nice", "system",  "idle",
                                             "iowait", "irq",  "softirq", "steal"};
    const double hz = 100;  // USER_HZ, fixed at 100 on Linux for /proc
    for (const char* mode : kModes) {
      double ticks = 0;
      if (!(ss >> ticks)) break;
      out->Add("gpufleet_node_cpu_seconds_total", kC, "CPU time of all CPUs, by mode",
               {{"mode", mode}}, ticks / hz);
    }
  }
  if (auto load = root.Read("/proc/loadavg")) {
    double l1 = 0, l5 = 0, l15 = 0;
    std::istringstream ss(*load);
    if (ss >> l1 >> l5 >> l15) {
      out->Add("gpufleet_node_load1", kG, "1-minute load average", {}, l1);
      out->Add("gpufleet_node_load5", kG, "5-minute load average", {}, l5);
      out->Add("gpufleet_node_load15", kG, "15-minute load average", {}, l15);
    }
  }
  if (auto mem = root.Read("/proc/meminfo")) {
    static constexpr std::pair<const char*, const char*> kFields[] = {
        {"MemTotal", "gpufleet_node_memory_total_bytes"},
        {"MemAvailable", "gpufleet_node_memory_available_bytes"},
        {"MemFree", "gpufleet_node_memory_free_bytes"},
        {"Cached", "gpufleet_node_memory_cached_bytes"},
        {"SwapTotal", "gpufleet_node_swap_total_bytes"},
        {"SwapFree", "gpufleet_node_swap_free_bytes"},
        {"HugePages_Total", "gpufleet_node_hugepages"},
    };
    for (const auto& line : strings::Split(*mem, '\n')) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = line.substr(0, colon);
      for (const auto& [field, name] : kFields) {
        if (key != field) continue;
        double v = std::strtod(line.c_str() + colon + 1, nullptr);
        if (line.find(" kB") != std::string::npos) v *= 1024;
        out->Add(name, kG, fmt::format("/proc/meminfo {}", field), {}, v);
      }
    }
  }
  for (const DiskStat& d : ReadDiskStats(root)) {
    const Labels l = {{"device", d.device}};
    out->Add("gpufleet_node_disk_reads_completed_total", kC, "Reads completed", l, d.reads);
    out->Add("gpufleet_node_disk_writes_completed_total", kC, "Writes completed", l, d.writes);
    out->Add("gpufleet_node_disk_read_bytes_total", kC, "Bytes read", l, d.read_bytes);
    out->Add("gpufleet_node_disk_written_bytes_total", kC, "Bytes written", l, d.written_bytes);
    out->Add("gpufleet_node_disk_read_time_seconds_total", kC,
             "Time reads took; rate(this) / rate(reads) is the mean read latency", l,
             d.read_seconds);
    out->Add("gpufleet_node_disk_write_time_seconds_total", kC,
             "Time writes took; rate(this) / rate(writes) is the mean write latency", l,
             d.write_seconds);
    out->Add("gpufleet_node_disk_io_time_seconds_total", kC, "Time the device had IO in flight", l,
             d.io_seconds);
    out->Add("gpufleet_node_disk_io_now", kG, "IOs in flight", l, d.in_flight);
  }
  if (auto net = root.Read("/proc/net/dev")) {
    for (const auto& line : strings::Split(*net, '\n')) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string dev(strings::Trim(line.substr(0, colon)));
      if (dev == "lo") continue;
      std::istringstream ss(line.substr(colon + 1));
      double v[16] = {};
      int n = 0;
      while (n < 16 && ss >> v[n]) ++n;
      if (n < 16) continue;
      const Labels l = {{"device", dev}};
      out->Add("gpufleet_node_network_receive_bytes_total", kC, "Bytes received", l, v[0]);
      out->Add("gpufleet_node_network_receive_packets_total", kC, "Packets received", l, v[1]);
      out->Add("gpufleet_node_network_receive_errors_total", kC, "Receive errors", l, v[2]);
      out->Add("gpufleet_node_network_receive_drops_total", kC, "Received packets dropped", l,
               v[3]);
      out->Add("gpufleet_node_network_transmit_bytes_total", kC, "Bytes sent", l, v[8]);
      out->Add("gpufleet_node_network_transmit_packets_total", kC, "Packets sent", l, v[9]);
      out->Add("gpufleet_node_network_transmit_errors_total", kC, "Transmit errors", l, v[10]);
      out->Add("gpufleet_node_network_transmit_drops_total", kC, "Sent packets dropped", l, v[11]);
    }
  }
  return OkStatus();
}

}  // namespace gpufleet::agent
