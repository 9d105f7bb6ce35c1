#pragma once
// Fabric sizing: leaf, spine and core switches, ports, cables and optics for a
// folded-Clos (fat-tree) network at the spec's oversubscription, rail-optimised
// or not; and the cost and power of the result. Pure; thread-safe.

#include <string>

#include "model/spec.h"

namespace gpufleet::plan {

struct FabricSize {
  int endpoints = 0;  // NIC ports to connect
  int radix = 0;
  int down_ports = 0;  // per leaf, toward nodes
  int up_ports = 0;    // per leaf, toward spines
  int tiers = 0;       // 1 = one switch layer, 2 = leaf-spine, 3 = three-tier fat tree
  int leaves = 0;
  int spines = 0;         // tier 2 (aggregation in a three-tier tree)
  int cores = 0;          // tier 3
  int pods = 0;           // three-tier only
  int max_endpoints = 0;  // the largest network of this many tiers at this radix and ratio
  int switches = 0;
  int cables = 0;        // node-leaf plus switch-switch links
  int transceivers = 0;  // two per cable (each end), if every link is optical
  double oversubscription = 1;
  bool rail_optimized = false;
  bool fits = true;  // false: more than three tiers would be needed
};

// Leaf: d = floor(k o / (o + 1)) ports down, u = k - d up. One tier while the
// endpoints fit one switch. Two tiers (leaf-spine) hold up to k leaves, k d
// endpoints (k^2/2 at 1:1). Three tiers (Al-Fares et al. SIGCOMM 2008): pods
// of k/2 leaves and u aggregation switches, up to k pods, k^2 d / 2 endpoints
// (k^3/4 at 1:1), with (pods x u x k/2) / k core switches.
// Rail-optimised: each NIC index (rail) gets its own leaves, so leaves are
// counted per rail (ceil(nodes / d) each).
FabricSize SizeFabric(int nodes, int ports_per_node, int radix, double oversubscription,
                      bool rail_optimized);

struct FabricPlan {
  FabricSize compute;
  FabricSize storage;
  bool compute_present = false;
  bool storage_present = false;
  std::string compute_switch;
  std::string storage_switch;
  double power_w = 0;             // all switches (optics excluded; see docs/plan.md)
  bool power_unverified = false;  // some switch power is second-hand
  double cost_usd = 0;            // 0 when no prices are given
  bool priced = false;
  double bisection_bytes_per_s = 0;  // compute fabric, at the spec's ratio
};

FabricPlan PlanFabric(const model::Spec& spec);

}  // namespace gpufleet::plan
