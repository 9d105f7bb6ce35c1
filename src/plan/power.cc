#include "plan/power.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpufleet::plan {

namespace {
constexpr double kPlatformFactor = 1.7;  // see EstimateNodePower in power.h
// Modelling assumptions, not measurements (docs/plan.md lists them; override
// with nodes.power.idle / nodes.power.max from a measured node):
constexpr double kGpuIdleFraction = 0.15;  // of TDP, when the catalog has no idle figure
constexpr double kCpuLoadFraction = 0.5;   // CPUs feed data loaders while GPUs train
constexpr double kCpuIdleFraction = 0.25;
constexpr double kPlatformLoadFraction = 0.7;
constexpr double kPlatformIdleFraction = 0.4;
// 1 W = 3.412 BTU/h; 1 ton of refrigeration = 12,000 BTU/h (formulas-and-facts §1.6).
constexpr double kBtuPerW = 3.412;
constexpr double kBtuPerTon = 12000;
}  // namespace

NodePower EstimateNodePower(const model::Node& node) {
  NodePower p;
  p.gpu_w = node.gpu.tdp_w * node.gpus_per_node;
  p.cpu_w = node.cpu.tdp_w * node.sockets;
  const double estimated_max = kPlatformFactor * (p.gpu_w + p.cpu_w);
  p.platform_w = estimated_max - p.gpu_w - p.cpu_w;
  p.max_w = estimated_max;
  if (node.max_power_w > 0) {
    p.max_w = node.max_power_w;
    p.max_from_spec = true;
    p.platform_w = std::max(0.0, p.max_w - p.gpu_w - p.cpu_w);
  }
  // Training holds GPUs at their power limit.
  p.load_w = p.gpu_w + kCpuLoadFraction * p.cpu_w + kPlatformLoadFraction * p.platform_w;
  p.load_w = std::min(p.load_w, p.max_w);
  double gpu_idle = node.gpu.idle_w;
  if (gpu_idle <= 0) {
    gpu_idle = kGpuIdleFraction * node.gpu.tdp_w;
    p.gpu_idle_assumed = true;
  }
  p.idle_w = gpu_idle * node.gpus_per_node + kCpuIdleFraction * p.cpu_w +
             kPlatformIdleFraction * p.platform_w;
  if (node.idle_power_w > 0) {
    p.idle_w = node.idle_power_w;
    p.idle_from_spec = true;
    p.gpu_idle_assumed = false;
  }
  return p;
}

double CircuitCapacityW(double voltage_v, double current_a, int phases, double power_factor,
                        double derating) {
  const double phase_factor = phases == 3 ? std::sqrt(3.0) : 1.0;
  return voltage_v * current_a * phase_factor * power_factor * derating;
}

double CurrentPerPhaseA(double watts, double voltage_v, int phases, double power_factor) {
  const double phase_factor = phases == 3 ? std::sqrt(3.0) : 1.0;
  return watts / (voltage_v * phase_factor * power_factor);
}

PowerPlan PlanPower(const model::Spec& spec, double fabric_w) {
  const model::Cluster& c = spec.cluster;
  const model::Facility& f = c.facility;
  PowerPlan p;
  p.node = EstimateNodePower(c.nodes);
  p.circuit_capacity_w =
      CircuitCapacityW(f.voltage_v, f.current_a, f.phases, f.power_factor, f.derating);
  // Size to the nameplate maximum, not the running draw (formulas-and-facts §5 item 2).
  // In doubles, clamped before they become counts: a spec may state a node of a milliwatt or a
  // circuit of a megavolt (no more nodes per circuit than there are nodes, no more circuits
  // than an int holds).
  const double fit = std::floor(p.circuit_capacity_w / p.node.max_w);
  p.nodes_per_circuit = static_cast<int>(std::clamp(fit, 0.0, static_cast<double>(c.nodes.count)));
  double circuits = 0;
  if (p.nodes_per_circuit > 0) {
    circuits = f.feeds * std::ceil(static_cast<double>(c.nodes.count) / p.nodes_per_circuit);
  } else {
    // A node needs several circuits (its PSUs on separate feeds).
    circuits = f.feeds * static_cast<double>(c.nodes.count) *
               std::ceil(p.node.max_w / p.circuit_capacity_w);
  }
  p.circuits = static_cast<int>(std::min(circuits, double{std::numeric_limits<int>::max()}));
  p.node_current_per_phase_a =
      CurrentPerPhaseA(p.node.max_w, f.voltage_v, f.phases, f.power_factor);
  // Racks: the NVLink switch trays draw the same at any load (their ASICs and optics run).
  RackPower& r = p.rack;
  if (c.rack.nodes > 0) {
    r.nodes_per_rack = c.rack.nodes;
    r.racks = (c.nodes.count + c.rack.nodes - 1) / c.rack.nodes;
    r.switch_trays = r.racks * c.rack.switch_trays;
    r.switch_chips = r.switch_trays * c.rack.switches_per_tray;
    r.switch_trays_w = r.switch_trays * c.rack.switch_tray_w;
    const double trays_w = c.rack.switch_trays * c.rack.switch_tray_w;
    const int in_rack = std::min(c.rack.nodes, c.nodes.count);
    r.load_w = in_rack * p.node.load_w + trays_w;
    r.max_w = in_rack * p.node.max_w + trays_w;
    r.budget_w = c.rack.power_w;
    r.liquid = c.rack.liquid;
    r.liquid_fraction = c.rack.liquid_fraction;
    r.liquid_max_w = r.liquid ? r.max_w * r.liquid_fraction : 0;
    r.air_max_w = r.max_w - r.liquid_max_w;
  }
  p.fabric_w = fabric_w + r.switch_trays_w;
  p.it_load_w = c.nodes.count * p.node.load_w + p.fabric_w;
  p.it_idle_w = c.nodes.count * p.node.idle_w + p.fabric_w;
  p.it_max_w = c.nodes.count * p.node.max_w + p.fabric_w;
  p.facility_load_w = p.it_load_w * f.pue;
  p.heat_btu_per_h = p.it_load_w * kBtuPerW;
  p.cooling_tons = p.heat_btu_per_h / kBtuPerTon;
  p.heat_max_btu_per_h = p.it_max_w * kBtuPerW;
  p.cooling_max_tons = p.heat_max_btu_per_h / kBtuPerTon;
  p.gpu_board_w = p.node.gpu_w * c.nodes.count;

  struct Std {
    double v, a;
    int ph;
  };
  for (Std s : {Std{120, 20, 1}, Std{208, 20, 1}, Std{240, 20, 1}, Std{208, 20, 3}, Std{208, 30, 3},
                Std{415, 20, 3}, Std{415, 32, 3}, Std{415, 60, 3}}) {
    CircuitOption o;
    o.name = fmt::format("{:.0f} V {:.0f} A {}", s.v, s.a, s.ph == 3 ? "3-phase" : "1-phase");
    o.capacity_w = CircuitCapacityW(s.v, s.a, s.ph, f.power_factor, f.derating);
    o.nodes_per_circuit = static_cast<int>(std::floor(o.capacity_w / p.node.max_w));
    p.common_circuits.push_back(o);
  }
  return p;
}

}  // namespace gpufleet::plan
