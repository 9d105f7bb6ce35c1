#include "plan/fabric.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace gpufleet::plan {
namespace {

TEST(FabricTest, OneSwitchWhileTheEndpointsFit) {
  FabricSize f = SizeFabric(4, 4, 64, 1.0, false);  // the reference: 16 ports on one QM9700
  EXPECT_EQ(f.tiers, 1);
  EXPECT_EQ(f.switches, 1);
  EXPECT_EQ(f.cables, 16);
  EXPECT_EQ(f.transceivers, 32);
}

TEST(FabricTest, TwoTierMaximumIsRadixSquaredOverTwo) {
  // formulas-and-facts.md §1.7: k = 64 non-blocking: 2,048 endpoints, 64 leaves + 32 spines.
  FabricSize f = SizeFabric(256, 8, 64, 1.0, false);
  EXPECT_EQ(f.endpoints, 2048);
  EXPECT_EQ(f.tiers, 2);
  EXPECT_EQ(f.max_endpoints, 2048);
  EXPECT_EQ(f.leaves, 64);
  EXPECT_EQ(f.spines, 32);
  EXPECT_EQ(f.switches, 96);
  EXPECT_EQ(f.cables, 2048 + 64 * 32);
  // k = 40 (QM8700): 800 endpoints, 60 switches.
  FabricSize hdr = SizeFabric(100, 8, 40, 1.0, false);
  EXPECT_EQ(hdr.max_endpoints, 800);
  EXPECT_EQ(hdr.switches, 60);
}

TEST(FabricTest, ThreeTierFatTreeAtSixteenThousandGpus) {
  // 16,384 endpoints on k = 64: 512 leaves in 16 pods of 32; 16 x 32 = 512 aggregation
  // switches; 512 x 32 / 64 = 256 cores; 1,280 switches (a quarter of the full 5,120).
  FabricSize f = SizeFabric(2048, 8, 64, 1.0, true);
  EXPECT_EQ(f.tiers, 3);
  EXPECT_EQ(f.leaves, 512);
  EXPECT_EQ(f.pods, 16);
  EXPECT_EQ(f.spines, 512);
  EXPECT_EQ(f.cores, 256);
  EXPECT_EQ(f.switches, 1280);
  EXPECT_EQ(f.max_endpoints, 65536);  // k^3 / 4
  EXPECT_TRUE(f.fits);
}

TEST(FabricTest, OversubscriptionShiftsPortsDownward) {
  // 3:1 on radix 64: 48 down, 16 up; 1,000 endpoints -> 21 leaves, 21 x 16 / 64 = 6 spines.
  FabricSize f = SizeFabric(125, 8, 64, 3.0, false);
  EXPECT_EQ(f.down_ports, 48);
  EXPECT_EQ(f.up_ports, 16);
  EXPECT_EQ(f.leaves, 21);
  EXPECT_EQ(f.spines, 6);
}

TEST(FabricTest, RailOptimisedCountsLeavesPerRail) {
  // 40 nodes x 8 rails, 32 down ports: each rail needs ceil(40/32) = 2 leaves -> 16 leaves
  // (rail-agnostic packing would need ceil(320/32) = 10).
  EXPECT_EQ(SizeFabric(40, 8, 64, 1.0, true).leaves, 16);
  EXPECT_EQ(SizeFabric(40, 8, 64, 1.0, false).leaves, 10);
}

TEST(FabricTest, TooLargeForThreeTiersIsReported) {
  FabricSize f = SizeFabric(20000, 8, 40, 1.0, false);  // 160,000 > 40^3/4 = 16,000
  EXPECT_EQ(f.tiers, 3);
  EXPECT_FALSE(f.fits);
}

TEST(FabricTest, PlanAddsPowerAndCostOfEveryNetwork) {
  model::Spec s = testing::Reference();
  s.cluster.costs.switch_usd = 30000;
  s.cluster.costs.transceiver_usd = 1000;
  s.cluster.costs.cable_usd = 100;
  FabricPlan p = PlanFabric(s);
  ASSERT_TRUE(p.compute_present && p.storage_present);
  // Compute: 1 switch, 16 cables, 32 optics; storage: 1 switch, 4 cables, 8 optics.
  EXPECT_DOUBLE_EQ(p.cost_usd, 2 * 30000 + 40 * 1000 + 20 * 100);
  EXPECT_DOUBLE_EQ(p.power_w, s.cluster.compute_fabric.switch_model.power_w +
                                  s.cluster.storage_fabric.switch_model.power_w);
  EXPECT_TRUE(p.priced);
}

}  // namespace
}  // namespace gpufleet::plan
