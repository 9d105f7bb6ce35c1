#pragma once
// The cluster half of a spec: nodes, fabrics, storage tiers, facility and
// costs. Plain structs in SI units; built and validated by LoadSpec().

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "model/catalog.h"

namespace gpufleet::model {

// A value given as one number or a [low, high] range (prices are quoted as ranges).
struct Range {
  double low = 0;
  double high = 0;
  bool set() const { return high > 0; }
  double mid() const { return (low + high) / 2; }
};

enum class NicRole { kCompute, kStorage };
std::string_view NicRoleName(NicRole r);

struct NicGroup {
  NicRole role = NicRole::kCompute;
  std::string model;
  int count = 1;  // adapters per node
  int ports = 1;  // cabled ports per adapter
  double port_speed_bytes_per_s = 0;
  int Ports() const { return count * ports; }
  double NodeBandwidth() const { return Ports() * port_speed_bytes_per_s; }
};

struct LocalNvme {
  int count = 0;
  double capacity_bytes = 0;     // per drive
  double write_bytes_per_s = 0;  // per drive, sequential
  double read_bytes_per_s = 0;   // per drive, sequential
};

struct Node {
  int count = 0;
  GpuSpec gpu;
  int gpus_per_node = 0;
  CpuSpec cpu;
  int sockets = 1;
  double memory_bytes = 0;
  std::vector<NicGroup> nics;
  LocalNvme nvme;
  double max_power_w = 0;   // 0 = estimate from components
  double idle_power_w = 0;  // 0 = estimate from components

  int TotalGpus() const { return count * gpus_per_node; }
  // Sum over NIC groups of `role`: ports per node and bandwidth per node.
  int Ports(NicRole role) const;
  double Bandwidth(NicRole role) const;
};

enum class FabricType { kInfiniBand, kRoCE, kEthernet };
std::string_view FabricTypeName(FabricType t);

struct Fabric {
  bool present = false;
  FabricType type = FabricType::kInfiniBand;
  double speed_bytes_per_s = 0;       // port speed
  std::string topology = "fat-tree";  // fat-tree (spine-leaf is its two-tier case)
  double oversubscription = 1.0;      // leaf downlink:uplink, 1 = non-blocking
  bool rail_optimized = false;
  SwitchSpec switch_model;
};

// The NVLink/NVSwitch (or PCIe) domain that joins GPUs inside a node.
struct ScaleUp {
  std::string type;                  // from the GPU unless the spec says otherwise
  double bandwidth_bytes_per_s = 0;  // per GPU, both directions
  bool switched = true;              // NVSwitch all-to-all (false: point-to-point mesh or PCIe)
  int domain = 0;                    // GPUs in one NVLink domain (GB200 NVL72: 72); 0 = one node
};

enum class TierKind { kHot, kWarm, kCold };
std::string_view TierKindName(TierKind k);

struct StorageTier {
  std::string name;
  TierKind kind = TierKind::kWarm;
  bool local = false;            // hot tier on each node's NVMe
  double capacity_bytes = 0;     // aggregate (local: per node)
  double write_bytes_per_s = 0;  // aggregate (local: per node)
  double read_bytes_per_s = 0;
};

struct Facility {
  double voltage_v = 208;
  double current_a = 30;
  int phases = 3;
  double derating = 0.8;  // NEC continuous load: 80 % of breaker rating
  double power_factor = 1.0;
  int feeds = 1;  // 2 = A+B redundant feeds, each sized for the full load
  double pue = 1.3;
  double inlet_temperature_c = 25;
  double electricity_usd_per_kwh = 0.10;
};

struct Costs {
  Range capex_usd;               // whole build; if absent, node_usd x nodes + fabric
  Range node_usd;                // per node
  double opex_usd_per_year = 0;  // stated opex (power, cooling, space); 0 = compute energy only
  Range cloud_usd_per_gpu_hour;
  double utilization = 1.0;  // fraction of the year the GPUs train
  double depreciation_years = 4;
  double switch_usd = 0;  // per switch; 0 = fabric not priced
  double transceiver_usd = 0;
  double cable_usd = 0;
};

// How the cluster fails and recovers, for `gpufleet sim goodput`. Rates not given
// come from published defaults (docs/sim.md: Llama 3's 54-day run).
struct Reliability {
  std::vector<std::pair<std::string, double>> failures_per_node_per_day;  // class -> rate
  // Hot spare nodes; -1 (the default, "auto"): twice the nodes expected in repair at once.
  int spares = -1;
  // Defaults from published jobs (docs/sim.md): MegaScale (Jiang et al., NSDI 2024) detects and
  // diagnoses a failure in under 10 minutes and initialises > 10,000 GPUs in under 30 s.
  double detect_s = 600;                // until a failure is noticed and diagnosed
  double reschedule_s = 120;            // onto a hot spare (assumed: no published figure)
  double reschedule_no_spare_s = 3600;  // waiting for a node without one (assumed)
  double init_s = 30;                   // processes and NCCL initialisation
  double warmup_s = 0;                  // after init, before full speed
  double repair_s = 3 * 86400.0;        // until a failed node is a spare again
  double stragglers_per_node_per_day = 0;
  double straggler_slowdown = 0.1;  // fraction the whole job slows
  double straggler_detect_s = 3600;
};

// A rack: its nodes (compute trays), the NVLink switch trays a rack-scale domain puts in it
// (GB200 NVL72: 18 compute and 9 switch trays, 2 NVSwitch chips each, liquid-cooled), and the
// power its shelves or PDUs deliver. `nodes` 0: not described (then one NVLink domain per rack
// when the domain spans nodes, else no rack figures).
struct Rack {
  int nodes = 0;
  int switch_trays = 0;
  int switches_per_tray = 0;
  double switch_tray_w = 0;    // one switch tray's maximum draw; 0 = not given (not counted)
  double power_w = 0;          // the rack's power budget; 0 = not given
  bool liquid = false;         // direct liquid cooling of the GPUs, CPUs and switch ASICs
  double liquid_fraction = 0;  // of the rack's heat the liquid loop carries; 0 = not given
};

struct Cluster {
  std::string name;
  Node nodes;
  ScaleUp scale_up;
  Rack rack;
  Fabric compute_fabric;
  Fabric storage_fabric;
  std::vector<StorageTier> storage;
  Facility facility;
  Costs costs;
  Reliability reliability;

  const StorageTier* FindTier(std::string_view name) const;
  // GPUs that reach each other over the scale-up fabric: a node, or a rack-scale NVLink domain
  // of several nodes (never more than the cluster).
  int ScaleUpDomain() const {
    const int total = nodes.count * nodes.gpus_per_node;
    return std::max(nodes.gpus_per_node, std::min(scale_up.domain, total));
  }
};

}  // namespace gpufleet::model
