#include "topo/infiniband.h"

#include <cstdlib>

#include "base/strings.h"

namespace gpufleet::topo {

std::string IbStateName(const std::string& s) {
  std::string v(strings::Trim(s));
  size_t colon = v.find(':');
  if (colon != std::string::npos) return std::string(strings::Trim(v.substr(colon + 1)));
  static constexpr const char* kNames[] = {"NOP",   "DOWN",   "INIT",
                                           "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  int n = std::atoi(v.c_str());
  return (n >= 0 && n <= 5 && !v.empty()) ? kNames[n] : v;
}

double ParseIbRate(const std::string& s) { return std::strtod(s.c_str(), nullptr) * 1e9 / 8; }

const std::vector<std::string>& IbCounterNames() {
  // The IB port counters (PortCounters / PortCountersExtended) that say a link is sick.
  static const std::vector<std::string> kNames = {
      "symbol_error",
      "link_error_recovery",
      "link_downed",
      "port_rcv_errors",
      "port_rcv_remote_physical_errors",
      "port_rcv_switch_relay_errors",
      "port_xmit_discards",
      "port_xmit_constraint_errors",
      "port_rcv_constraint_errors",
      "local_link_integrity_errors",
      "excessive_buffer_overrun_errors",
      "VL15_dropped",
      "port_xmit_wait",
      "port_rcv_data",
      "port_xmit_data",
      "port_rcv_packets",
      "port_xmit_packets",
  };
  return kNames;
}

std::vector<IbPortReading> ReadIbPorts(const SysRoot& root, bool with_counters) {
  std::vector<IbPortReading> out;
  auto hcas = root.List("/sys/class/infiniband");
  if (!hcas) return out;
  for (const auto& hca : *hcas) {
    auto ports = root.List("/sys/class/infiniband/" + hca + "/ports");
    if (!ports) continue;
    for (const auto& port : *ports) {
      const std::string p = "/sys/class/infiniband/" + hca + "/ports/" + port + "/";
      IbPortReading r;
      r.hca = hca;
      r.port = std::atoi(port.c_str());
      if (auto s = root.Read(p + "state")) r.state = IbStateName(*s);
      if (auto s = root.Read(p + "phys_state")) r.phys_state = IbStateName(*s);
      if (auto s = root.Read(p + "rate")) r.rate_bytes_per_s = ParseIbRate(*s);
      if (auto s = root.Read(p + "link_layer")) r.link_layer = *s;
      if (with_counters) {
        for (const auto& name : IbCounterNames()) {
          auto s = root.Read(p + "counters/" + name);
          if (!s) continue;
          double v = std::strtod(s->c_str(), nullptr);
          if (name == "port_rcv_data" || name == "port_xmit_data") v *= 4;  // 4-octet words
          r.counters.emplace_back(name, v);
        }
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace gpufleet::topo
