#include "plan/cost.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace gpufleet::plan {
namespace {

TEST(CostTest, ReferenceRentVersusBuildWorkedByHand) {
  model::Spec s = testing::Reference();
  CostPlan c =
      PlanCost(s, /*tokens_per_s=*/50000, /*it_load_w=*/23000, /*it_idle_w=*/8000, 0, false);
  // 32 GPUs x 8,760 h = 280,320 GPU-h; x $3 = $840,960, x $4 = $1,121,280
  // (formulas-and-facts.md §5 item 1: "$200K/year for 32 GPUs" is off by 4.2-5.6x).
  EXPECT_DOUBLE_EQ(c.gpu_hours_per_year, 280320);
  EXPECT_DOUBLE_EQ(c.cloud_usd_per_year.low, 840960);
  EXPECT_DOUBLE_EQ(c.cloud_usd_per_year.high, 1121280);
  // Build: $400-500K over 4 years + $50K stated opex = $150-175K a year.
  EXPECT_DOUBLE_EQ(c.build_usd_per_year.low, 150000);
  EXPECT_DOUBLE_EQ(c.build_usd_per_year.high, 175000);
  // Break-even: 400K / ((1,121,280 - 50,000)/12) = 4.48 months; 500K / ((840,960 - 50,000)/12)
  // = 7.59 months.
  EXPECT_NEAR(c.break_even_months.low, 400000 / ((1121280 - 50000) / 12.0), 1e-9);
  EXPECT_NEAR(c.break_even_months.high, 500000 / ((840960 - 50000) / 12.0), 1e-9);
  EXPECT_TRUE(c.breaks_even);
  // Energy: 23 kW x 1.3 PUE x 8,760 h x $0.10 = $26,192.4.
  EXPECT_NEAR(c.energy_usd_per_year, 23 * 1.3 * 8760 * 0.10, 1e-6);
  // Tokens per year 50,000 x 31,536,000; cloud $840,960 / 1.5768e12 x 1e6 = $0.533/M.
  EXPECT_NEAR(c.cloud_usd_per_million_tokens.low, 840960 / (50000.0 * 31536000) * 1e6, 1e-12);
}

TEST(CostTest, NodePricesAndFabricMakeTheCapexWhenNoTotalIsGiven) {
  model::Spec s = testing::Reference();
  s.cluster.costs.capex_usd = {};
  s.cluster.costs.node_usd = {100000, 120000};
  CostPlan c = PlanCost(s, 1, 1000, 500, 50000, true);
  EXPECT_DOUBLE_EQ(c.capex_usd.low, 4 * 100000 + 50000);
  EXPECT_DOUBLE_EQ(c.capex_usd.high, 4 * 120000 + 50000);
  EXPECT_TRUE(c.capex_includes_fabric);
}

TEST(CostTest, NoBreakEvenWhenRentIsBelowOpex) {
  model::Spec s = testing::Reference();
  s.cluster.costs.cloud_usd_per_gpu_hour = {0.1, 0.1};  // $28K/yr < $50K opex
  CostPlan c = PlanCost(s, 1, 1000, 500, 0, false);
  EXPECT_FALSE(c.breaks_even);
}

}  // namespace
}  // namespace gpufleet::plan
