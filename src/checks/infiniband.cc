// infiniband: the node has the RDMA ports the spec's compute NICs promise (count × ports),
// each ACTIVE and LinkUp at the spec's rate. Without a spec, every RDMA port must be ACTIVE.
// A compute fabric of InfiniBand is counted on ports whose link layer is InfiniBand, RoCE on
// Ethernet ones; an Ethernet (TCP) compute fabric expects no RDMA port at all.
#include <fmt/format.h>

#include <algorithm>

#include "base/units.h"
#include "checks/check.h"

namespace gpufleet::checks {

namespace {

struct Expected {
  int ports = 0;                // compute RDMA ports per node
  double rate_bytes_per_s = 0;  // the slowest compute port the spec names
  std::string link_layer;       // "InfiniBand", "Ethernet", or "" for either
  std::string what;             // "10 x ConnectX-7 (1 port) at 400 Gb/s"
};

Expected FromSpec(const model::Spec& spec) {
  Expected e;
  const model::Fabric& f = spec.cluster.compute_fabric;
  if (f.present && f.type == model::FabricType::kEthernet) return e;  // sockets, no RDMA
  if (f.present)
    e.link_layer = f.type == model::FabricType::kInfiniBand ? "InfiniBand" : "Ethernet";
  for (const auto& n : spec.cluster.nodes.nics) {
    if (n.role != model::NicRole::kCompute) continue;
    e.ports += n.Ports();
    e.rate_bytes_per_s = e.rate_bytes_per_s == 0
                             ? n.port_speed_bytes_per_s
                             : std::min(e.rate_bytes_per_s, n.port_speed_bytes_per_s);
    e.what += fmt::format("{}{} x {} ({} port{}) at {}", e.what.empty() ? "" : " + ", n.count,
                          n.model, n.ports, n.ports == 1 ? "" : "s",
                          units::FormatBitRate(n.port_speed_bytes_per_s));
  }
  return e;
}

bool Active(const topo::NicPort& p) {
  return p.state == "ACTIVE" && (p.phys_state.empty() || p.phys_state == "LinkUp");
}

std::string StateOf(const topo::NicPort& p) {
  return fmt::format("state {} / {}", p.state.empty() ? "-" : p.state,
                     p.phys_state.empty() ? "-" : p.phys_state);
}

}  // namespace

std::vector<Finding> CheckInfinibandPorts(const CheckContext& ctx) {
  std::vector<Finding> out;
  const Expected want = ctx.spec != nullptr ? FromSpec(*ctx.spec) : Expected{};
  struct Port {
    std::string who;
    const topo::NicPort* port;
  };
  std::vector<Port> matching, other;
  for (const auto& nic : ctx.node->nics) {
    for (const auto& p : nic.ports) {
      if (p.state.empty() && p.link_layer.empty()) continue;  // a netdev without RDMA
      Port port{fmt::format("{} port {}", nic.name, p.number), &p};
      const bool match =
          want.link_layer.empty() || p.link_layer.empty() || p.link_layer == want.link_layer;
      (match ? matching : other).push_back(port);
    }
  }
  if (ctx.spec == nullptr || want.ports == 0) {
    // Nothing promised: every RDMA port that exists must be up (NCCL skips the others).
    for (const auto* list : {&matching, &other}) {
      for (const auto& p : *list) {
        if (Active(*p.port)) continue;
        out.push_back({Status::kFail, "", p.who,
                       fmt::format("{}: NCCL uses ACTIVE ports only", StateOf(*p.port)),
                       Action::kDrain});
      }
    }
    return out;
  }
  int active = 0;
  for (const auto& p : matching) active += Active(*p.port) ? 1 : 0;
  const bool short_of_ports = active < want.ports;
  for (const auto& p : matching) {
    if (!Active(*p.port)) {
      // Short of ports: each down port is part of why. Enough up: a spare or uncabled port.
      out.push_back({short_of_ports ? Status::kFail : Status::kWarn, "", p.who,
                     fmt::format("{}: NCCL uses ACTIVE ports only{}", StateOf(*p.port),
                                 short_of_ports ? "" : " (the spec's count is met without it)"),
                     short_of_ports ? Action::kDrain : Action::kNone});
    } else if (want.rate_bytes_per_s > 0 && p.port->rate_bytes_per_s > 0 &&
               p.port->rate_bytes_per_s < want.rate_bytes_per_s * 0.99) {
      out.push_back({Status::kFail, "", p.who,
                     fmt::format("runs at {}, the spec says {}",
                                 units::FormatBitRate(p.port->rate_bytes_per_s),
                                 units::FormatBitRate(want.rate_bytes_per_s)),
                     Action::kDrain});
    }
  }
  // After the ports themselves, so a drain reason names the port that is down.
  if (short_of_ports) {
    out.push_back(
        {Status::kFail, "", "node",
         matching.empty()
             ? fmt::format("no {}RDMA port at all (/sys/class/infiniband), the spec has {} "
                           "compute port{}: {}",
                           want.link_layer.empty() ? "" : want.link_layer + " ", want.ports,
                           want.ports == 1 ? "" : "s", want.what)
             : fmt::format("{} of the spec's {} compute ports are ACTIVE ({} {}RDMA port{} "
                           "found): {}",
                           active, want.ports, matching.size(),
                           want.link_layer.empty() ? "" : want.link_layer + " ",
                           matching.size() == 1 ? "" : "s", want.what),
         Action::kDrain});
  }
  return out;
}

}  // namespace gpufleet::checks
