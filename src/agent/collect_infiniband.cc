// infiniband collector: every RDMA port's state, rate and counters from sysfs.
#include "agent/collector.h"
#include "topo/infiniband.h"

namespace gpufleet::agent {

Status CollectInfiniband(const CollectInput& in, MetricSet* out) {
  constexpr MetricType kG = MetricType::kGauge;
  constexpr MetricType kC = MetricType::kCounter;
  for (const auto& p : topo::ReadIbPorts(*in.root, /*with_counters=*/true)) {
    const Labels l = {{"hca", p.hca}, {"port", std::to_string(p.port)}};
    Labels info = l;
    info.emplace_back("state", p.state);
    info.emplace_back("phys_state", p.phys_state);
    info.emplace_back("link_layer", p.link_layer);
    out->Add("gpufleet_infiniband_port_info", kG, "Port state, physical state and link layer", info,
             1);
    out->Add("gpufleet_infiniband_port_active", kG, "1 if the port state is ACTIVE", l,
             p.state == "ACTIVE" ? 1 : 0);
    out->Add("gpufleet_infiniband_port_link_up", kG, "1 if the physical state is LinkUp", l,
             p.phys_state == "LinkUp" ? 1 : 0);
    out->Add("gpufleet_infiniband_port_rate_bytes_per_second", kG, "Negotiated port rate", l,
             p.rate_bytes_per_s);
    for (const auto& [name, value] : p.counters) {
      if (name == "port_rcv_data") {
        out->Add("gpufleet_infiniband_port_receive_bytes_total", kC, "Bytes received", l, value);
      } else if (name == "port_xmit_data") {
        out->Add("gpufleet_infiniband_port_transmit_bytes_total", kC, "Bytes sent", l, value);
      } else if (name == "port_rcv_packets") {
        out->Add("gpufleet_infiniband_port_receive_packets_total", kC, "Packets received", l,
                 value);
      } else if (name == "port_xmit_packets") {
        out->Add("gpufleet_infiniband_port_transmit_packets_total", kC, "Packets sent", l, value);
      } else if (name == "link_downed") {
        out->Add("gpufleet_infiniband_port_link_downed_total", kC,
                 "Times the link went down (training failed or the peer dropped)", l, value);
      } else if (name == "port_xmit_wait") {
        out->Add("gpufleet_infiniband_port_transmit_wait_total", kC,
                 "Ticks with data to send but no credits (congestion)", l, value);
      } else {
        Labels el = l;
        el.emplace_back("counter", name);
        out->Add("gpufleet_infiniband_port_errors_total", kC,
                 "Port error counters, by sysfs counter name", el, value);
      }
    }
  }
  return OkStatus();
}

}  // namespace gpufleet::agent
