#include "plan/power.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"

namespace gpufleet::plan {
namespace {

TEST(PowerTest, CircuitCapacityMatchesTheDerivedTable) {
  // formulas-and-facts.md §1.6 (80 %, PF 1): 120 V/20 A 1-phase 1.92 kW; 208 V/20 A 1-phase
  // 3.33; 240 V/20 A 1-phase 3.84; 208 V/20 A 3-phase 5.76; 208 V/30 A 3-phase 8.65;
  // 415 V/32 A 3-phase 18.4; 415 V/60 A 3-phase 34.5.
  EXPECT_NEAR(CircuitCapacityW(120, 20, 1, 1, 0.8), 1920, 1);
  EXPECT_NEAR(CircuitCapacityW(208, 20, 1, 1, 0.8), 3328, 1);
  EXPECT_NEAR(CircuitCapacityW(240, 20, 1, 1, 0.8), 3840, 1);
  EXPECT_NEAR(CircuitCapacityW(208, 20, 3, 1, 0.8), 5764, 1);
  EXPECT_NEAR(CircuitCapacityW(208, 30, 3, 1, 0.8), 8646, 1);
  EXPECT_NEAR(CircuitCapacityW(415, 32, 3, 1, 0.8), 18401, 1);
  EXPECT_NEAR(CircuitCapacityW(415, 60, 3, 1, 0.8), 34502, 1);
}

TEST(PowerTest, CurrentPerPhaseMatchesTheBlogCheck) {
  // formulas-and-facts.md §5 item 2: 4.5 kW draws 21.6 A at 208 V single-phase,
  // 12.5 A per phase at 208 V three-phase; 6.5 kW is 18.0 A per phase at 208 V 3-phase.
  EXPECT_NEAR(CurrentPerPhaseA(4500, 208, 1, 1), 21.6, 0.05);
  EXPECT_NEAR(CurrentPerPhaseA(4500, 208, 3, 1), 12.5, 0.05);
  EXPECT_NEAR(CurrentPerPhaseA(6500, 208, 3, 1), 18.0, 0.05);
}

// 8 GB200 NVL72 racks (examples/gb200-nvl72-576gpu.yaml): 18 trays of 5.4 kW per rack against
// its 132 kW of power shelves, 72 NVLink switch trays with 144 NVSwitch chips in all.
TEST(PowerTest, RacksOfARackScaleDomain) {
  model::Spec s = testing::Example("gb200-nvl72-576gpu.yaml");
  PowerPlan p = PlanPower(s, 0);
  const RackPower& r = p.rack;
  EXPECT_EQ(r.racks, 8);
  EXPECT_EQ(r.nodes_per_rack, 18);
  EXPECT_EQ(r.switch_trays, 72);
  EXPECT_EQ(r.switch_chips, 144);
  EXPECT_DOUBLE_EQ(r.max_w, 18 * 5400.0);
  EXPECT_DOUBLE_EQ(r.load_w, 18 * p.node.load_w);
  EXPECT_DOUBLE_EQ(r.budget_w, 132000);
  EXPECT_TRUE(r.liquid);
  EXPECT_DOUBLE_EQ(r.switch_trays_w, 0);  // not given: not counted, and a finding says so
  // A switch tray's draw, when given, is in every rack and in the IT load at any utilisation;
  // a liquid fraction splits the heat.
  s.cluster.rack.switch_tray_w = 1000;
  s.cluster.rack.liquid_fraction = 0.8;
  PowerPlan q = PlanPower(s, 0);
  EXPECT_DOUBLE_EQ(q.rack.max_w, 18 * 5400.0 + 9 * 1000.0);
  EXPECT_DOUBLE_EQ(q.it_max_w - p.it_max_w, 72 * 1000.0);
  EXPECT_DOUBLE_EQ(q.it_idle_w - p.it_idle_w, 72 * 1000.0);
  EXPECT_DOUBLE_EQ(q.rack.liquid_max_w, 0.8 * q.rack.max_w);
  EXPECT_DOUBLE_EQ(q.rack.liquid_max_w + q.rack.air_max_w, q.rack.max_w);
  // An HGX cluster has no rack figures.
  EXPECT_EQ(PlanPower(testing::Reference(), 0).rack.racks, 0);
}

TEST(PowerTest, NodeEstimateIsCalibratedOnDgxNameplates) {
  // DGX A100: 8 x 400 W + 2 x EPYC 7742 225 W; 1.7 x 3,650 = 6,205 W vs 6.5 kW (-4.5 %).
  model::Node dgx_a100;
  dgx_a100.gpus_per_node = 8;
  dgx_a100.gpu.tdp_w = 400;
  dgx_a100.cpu.tdp_w = 225;
  dgx_a100.sockets = 2;
  EXPECT_NEAR(EstimateNodePower(dgx_a100).max_w / 6500, 1.0, 0.05);
  // DGX H100: 8 x 700 W + 2 x 350 W; 1.7 x 6,300 = 10,710 W vs 10.2 kW (+5.0 %).
  model::Node dgx_h100 = dgx_a100;
  dgx_h100.gpu.tdp_w = 700;
  dgx_h100.cpu.tdp_w = 350;
  EXPECT_NEAR(EstimateNodePower(dgx_h100).max_w / 10200, 1.0, 0.051);
}

TEST(PowerTest, ReferenceClusterPowerWorkedByHand) {
  model::Spec s = testing::Reference();
  PowerPlan p = PlanPower(s, /*fabric_w=*/1000);
  // GPUs 8 x 400 = 3,200 W; CPUs 2 x 360 = 720 W; max 1.7 x 3,920 = 6,664 W.
  EXPECT_DOUBLE_EQ(p.node.max_w, 1.7 * 3920);
  // Training: 3,200 + 0.5 x 720 + 0.7 x (6,664 - 3,920) = 5,480.8 W.
  EXPECT_NEAR(p.node.load_w, 3200 + 360 + 0.7 * 2744, 1e-9);
  // 208 V x 30 A x sqrt(3) x PF 0.95 x 0.8 = 8,212 W: one node per circuit, 4 circuits.
  EXPECT_NEAR(p.circuit_capacity_w, 208 * 30 * std::sqrt(3.0) * 0.95 * 0.8, 1e-6);
  EXPECT_EQ(p.nodes_per_circuit, 1);
  EXPECT_EQ(p.circuits, 4);
  // IT load 4 x 5,480.8 + 1,000; heat x 3.412 BTU/h per W; / 12,000 BTU/h per ton.
  EXPECT_NEAR(p.it_load_w, 4 * 5480.8 + 1000, 1e-6);
  EXPECT_NEAR(p.heat_btu_per_h, p.it_load_w * 3.412, 1e-6);
  EXPECT_NEAR(p.cooling_tons, p.it_load_w * 3.412 / 12000, 1e-9);
  EXPECT_NEAR(p.facility_load_w, p.it_load_w * 1.3, 1e-6);
  EXPECT_DOUBLE_EQ(p.gpu_board_w, 32 * 400);  // the "12.8 kW" of the rule of thumb
}

// Found by the fuzz smoke: counts from a ratio of powers are clamped before they become ints
// (UBSan flagged inf -> int), so a milliwatt node (every node on one circuit) or a circuit of
// almost no voltage (more circuits than an int holds) plans, absurdly but defined.
TEST(PowerTest, AbsurdPowersGiveClampedCounts) {
  model::Spec s = testing::Reference();
  s.cluster.nodes.max_power_w = 1e-3;
  PowerPlan p = PlanPower(s, 0);
  EXPECT_EQ(p.nodes_per_circuit, s.cluster.nodes.count);
  EXPECT_EQ(p.circuits, s.cluster.facility.feeds);
  s = testing::Reference();
  s.cluster.facility.voltage_v = 1e-300;
  p = PlanPower(s, 0);
  EXPECT_EQ(p.nodes_per_circuit, 0);
  EXPECT_EQ(p.circuits, std::numeric_limits<int>::max());
}

TEST(PowerTest, ANodeLargerThanOneCircuitNeedsSeveral) {
  model::Spec s = testing::Reference();
  s.cluster.facility.voltage_v = 120;
  s.cluster.facility.current_a = 20;
  s.cluster.facility.phases = 1;
  PowerPlan p = PlanPower(s, 0);
  EXPECT_EQ(p.nodes_per_circuit, 0);
  // 6,664 W over 120 x 20 x 0.95 x 0.8 = 1,824 W circuits: 4 per node, 16 in all.
  EXPECT_EQ(p.circuits, 16);
}

}  // namespace
}  // namespace gpufleet::plan
