#pragma once
// InfiniBand / RoCE ports from sysfs (/sys/class/infiniband/HCA/ports/N): what
// discovery, the checks and the agent's infiniband collector all read. Through
// a SysRoot, so a captured tree or a test fixture works like a live node.

#include <string>
#include <utility>
#include <vector>

#include "base/sysroot.h"

namespace gpufleet::topo {

struct IbPortReading {
  std::string hca;  // mlx5_0
  int port = 1;
  std::string state;       // ACTIVE, DOWN, INIT, ARMED
  std::string phys_state;  // LinkUp, Polling, Disabled
  double rate_bytes_per_s = 0;
  std::string link_layer;  // InfiniBand or Ethernet
  // ports/N/counters/*, data counters already in bytes (sysfs counts 4-octet words).
  std::vector<std::pair<std::string, double>> counters;
};

// "4: ACTIVE" -> "ACTIVE"; a bare "4" (hwloc's Port1State) -> "ACTIVE".
std::string IbStateName(const std::string& s);
// "400 Gb/sec (4X NDR)" -> bytes/s.
double ParseIbRate(const std::string& s);

// Every port of every HCA, sorted by HCA and port. `with_counters` also reads
// the error and data counters. An absent /sys/class/infiniband is no ports.
std::vector<IbPortReading> ReadIbPorts(const SysRoot& root, bool with_counters);

// The counters ReadIbPorts reads, in order (sysfs names).
const std::vector<std::string>& IbCounterNames();

}  // namespace gpufleet::topo
