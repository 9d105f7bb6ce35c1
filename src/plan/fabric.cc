#include "plan/fabric.h"

#include <cmath>

namespace gpufleet::plan {

FabricSize SizeFabric(int nodes, int ports_per_node, int radix, double oversubscription,
                      bool rail_optimized) {
  FabricSize f;
  f.endpoints = nodes * ports_per_node;
  f.radix = radix;
  f.oversubscription = oversubscription;
  f.rail_optimized = rail_optimized;
  if (f.endpoints == 0 || radix < 2) return f;
  const int k = radix;
  f.down_ports = static_cast<int>(std::floor(k * oversubscription / (oversubscription + 1)));
  f.up_ports = k - f.down_ports;
  auto ceil_div = [](long a, long b) { return static_cast<int>((a + b - 1) / b); };

  if (f.endpoints <= k) {
    f.tiers = 1;
    f.leaves = 1;
    f.max_endpoints = k;
    f.switches = 1;
    f.cables = f.endpoints;
    f.transceivers = 2 * f.cables;
    return f;
  }
  const int d = f.down_ports;
  const int u = f.up_ports;
  // Leaves: per rail when rail-optimised (each rail's leaves take one port per node).
  f.leaves = rail_optimized ? ports_per_node * ceil_div(nodes, d) : ceil_div(f.endpoints, d);
  const long two_tier_max = static_cast<long>(k) * d;
  if (f.leaves <= k) {
    f.tiers = 2;
    f.max_endpoints = static_cast<int>(two_tier_max);
    // Every leaf spreads its u uplinks over the spines; a spine has k ports.
    f.spines = ceil_div(static_cast<long>(f.leaves) * u, k);
    f.switches = f.leaves + f.spines;
    f.cables = f.endpoints + f.leaves * u;
  } else {
    f.tiers = 3;
    const int leaves_per_pod = k / 2;
    f.max_endpoints = static_cast<int>(static_cast<long>(k) * leaves_per_pod * d);
    f.pods = ceil_div(f.leaves, leaves_per_pod);
    if (f.pods > k) f.fits = false;
    // Each pod: u aggregation switches, each with k/2 ports down (one per leaf)
    // and k/2 up to the cores.
    f.spines = f.pods * u;
    f.cores = ceil_div(static_cast<long>(f.spines) * (k / 2), k);
    f.switches = f.leaves + f.spines + f.cores;
    f.cables = f.endpoints + f.leaves * u + f.spines * (k / 2);
  }
  f.transceivers = 2 * f.cables;
  return f;
}

FabricPlan PlanFabric(const model::Spec& spec) {
  const model::Cluster& c = spec.cluster;
  const model::Costs& costs = c.costs;
  FabricPlan p;
  auto size = [&](const model::Fabric& fab, model::NicRole role, FabricSize* out,
                  std::string* name) {
    if (!fab.present) return false;
    *out = SizeFabric(c.nodes.count, c.nodes.Ports(role), fab.switch_model.radix,
                      fab.oversubscription, fab.rail_optimized);
    *name = fab.switch_model.name;
    p.power_w += out->switches * fab.switch_model.power_w;
    p.power_unverified = p.power_unverified || fab.switch_model.verify;
    return true;
  };
  p.compute_present =
      size(c.compute_fabric, model::NicRole::kCompute, &p.compute, &p.compute_switch);
  p.storage_present =
      size(c.storage_fabric, model::NicRole::kStorage, &p.storage, &p.storage_switch);
  const int switches = p.compute.switches + p.storage.switches;
  const int cables = p.compute.cables + p.storage.cables;
  const int optics = p.compute.transceivers + p.storage.transceivers;
  p.priced = costs.switch_usd > 0;
  p.cost_usd =
      switches * costs.switch_usd + optics * costs.transceiver_usd + cables * costs.cable_usd;
  if (p.compute_present) {
    // Half the endpoints talk to the other half; leaf uplinks carry 1/o of it.
    const double port = c.compute_fabric.speed_bytes_per_s;
    p.bisection_bytes_per_s = p.compute.endpoints / 2.0 * port /
                              (p.compute.tiers > 1 ? c.compute_fabric.oversubscription : 1.0);
  }
  return p;
}

}  // namespace gpufleet::plan
