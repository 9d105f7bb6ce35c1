#pragma once
// Power and cooling: per-node draw at load, idle and nameplate maximum; the
// facility's circuits at its voltage, amperage and phases with the 80 %
// continuous-load derating; heat in kW, BTU/h and tons. Pure; thread-safe.

#include <string>
#include <vector>

#include "model/spec.h"

namespace gpufleet::plan {

struct NodePower {
  double gpu_w = 0;       // all GPUs at TDP
  double cpu_w = 0;       // all sockets at TDP
  double platform_w = 0;  // memory, NVSwitch, NICs, drives, fans, PSU losses
  double max_w = 0;       // nameplate-class maximum: size circuits to this
  double load_w = 0;      // while training
  double idle_w = 0;
  bool max_from_spec = false;
  bool idle_from_spec = false;
  bool gpu_idle_assumed = false;  // the catalog has no idle figure for the GPU
};

// Nameplate maximum = 1.7 x (GPU TDP + CPU TDP), calibrated on NVIDIA's DGX
// maxima: DGX A100 6.5 kW (8 x 400 W + 2 x 225 W) and DGX H100 10.2 kW
// (8 x 700 W + 2 x 350 W) give factors 1.78 and 1.62.
NodePower EstimateNodePower(const model::Node& node);

// Continuous capacity of one circuit: V x I x PF (x sqrt(3) for three-phase,
// line-to-line voltage) x derating (NEC 210.19(A)(1), 210.20(A): continuous
// load <= 80 % of the breaker rating).
double CircuitCapacityW(double voltage_v, double current_a, int phases, double power_factor,
                        double derating);
// Current per phase drawn by `watts`.
double CurrentPerPhaseA(double watts, double voltage_v, int phases, double power_factor);

struct CircuitOption {
  std::string name;  // "208 V 30 A 3-phase"
  double capacity_w = 0;
  int nodes_per_circuit = 0;  // at nameplate maximum
};

// Racks (model::Rack): how many, each full rack's draw at training and at the nameplate maximum
// (its nodes plus its NVLink switch trays) against its power budget, and where its heat goes.
struct RackPower {
  int racks = 0;  // 0: no rack described
  int nodes_per_rack = 0;
  int switch_trays = 0;          // in the whole cluster
  int switch_chips = 0;          // NVSwitch chips in those trays
  double switch_trays_w = 0;     // their draw in the whole cluster (0 when not given)
  double load_w = 0, max_w = 0;  // one full rack
  double budget_w = 0;           // 0: not given
  bool liquid = false;
  double liquid_fraction = 0;              // 0: not given
  double liquid_max_w = 0, air_max_w = 0;  // one rack at the maximum, by where the heat goes
};

struct PowerPlan {
  NodePower node;
  double circuit_capacity_w = 0;
  int nodes_per_circuit = 0;  // 0: one node exceeds one circuit
  int circuits = 0;           // per feed x feeds
  double node_current_per_phase_a = 0;
  double fabric_w = 0;   // switches (from the fabric plan)
  double it_load_w = 0;  // nodes at load + fabric
  double it_idle_w = 0;
  double it_max_w = 0;
  double facility_load_w = 0;  // x PUE
  double heat_btu_per_h = 0;   // IT load (all electrical power ends as heat)
  double cooling_tons = 0;
  double heat_max_btu_per_h = 0;  // at the nameplate maximum: what cooling must survive
  double cooling_max_tons = 0;
  double gpu_board_w = 0;  // GPUs x TDP alone, the "32 x 400 W" arithmetic
  RackPower rack;
  std::vector<CircuitOption> common_circuits;
};

PowerPlan PlanPower(const model::Spec& spec, double fabric_w);

}  // namespace gpufleet::plan
