#include "sim/goodput.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace gpufleet::sim {
namespace {

constexpr double kHour = 3600, kDay = 86400;

GoodputInput Base() {
  GoodputInput in;
  in.nodes = 2048;
  in.horizon_s = 30 * kDay;
  in.interval_s = kHour;
  in.async = false;
  in.block_s = 60;
  in.trials = 200;
  in.seed = 7;
  return in;
}

TEST(GoodputTest, WithoutFailuresGoodputIsOneMinusTheCheckpointOverheadExactly) {
  GoodputInput in = Base();
  GoodputResult r = SimulateGoodput(in);
  // 30 days of (1 h training + 60 s checkpoint) cycles: nothing else is lost.
  const double cycles = std::floor(in.horizon_s / (in.interval_s + in.block_s));
  const double tail = std::min(in.horizon_s - cycles * (in.interval_s + in.block_s), in.interval_s);
  const double expected = (cycles * in.interval_s + tail) / in.horizon_s;
  EXPECT_NEAR(r.mean, 1 - r.checkpoint_overhead, 1e-12);  // exact up to rounding
  EXPECT_NEAR(r.mean, expected, 1e-12);
  EXPECT_NEAR(r.ci95, 0, 1e-12);
  EXPECT_TRUE(r.causes.empty());
}

TEST(GoodputTest, OneFailureClassMatchesTheFirstOrderWasteWithinTheConfidenceInterval) {
  GoodputInput in = Base();
  in.nodes = 100;
  in.classes = {{"node", 1.0 / 1000, true}};  // per node per day: job MTBF 10 days = 240 h
  in.restart = {600, 0, 0, 0, 0, 0};          // R = 10 min, all of it detection
  in.interval_s = kHour;
  in.block_s = 36;
  in.horizon_s = 365 * kDay;
  in.trials = 1000;
  GoodputResult r = SimulateGoodput(in);
  const double mtbf = kDay / (in.nodes * in.classes[0].per_node_per_day);
  const double waste = FirstOrderWaste(in.block_s, in.interval_s, 600, mtbf);
  EXPECT_DOUBLE_EQ(r.mtbf_s, mtbf);
  EXPECT_NEAR(r.mean, 1 - waste, r.ci95) << "waste " << waste << " ci " << r.ci95;
  ASSERT_EQ(r.causes.size(), 1u);
  EXPECT_NEAR(r.causes[0].interruptions_per_day, 0.1, 0.01);
}

TEST(GoodputTest, SameSeedSameOutputOtherSeedOtherOutput) {
  GoodputInput in = Base();
  in.classes = DefaultFailureClasses();
  in.async = true;
  in.block_s = 20;
  in.write_s = 300;
  in.trials = 50;
  GoodputResult a = SimulateGoodput(in), b = SimulateGoodput(in);
  EXPECT_EQ(a.mean, b.mean);
  EXPECT_EQ(a.timeline.size(), b.timeline.size());
  in.seed = 8;
  EXPECT_NE(SimulateGoodput(in).mean, a.mean);
}

TEST(GoodputTest, Llama3ScaleInterruptionsAndCauses) {
  // 16,384 GPUs: the default rates are Llama 3's, so ~7.8 interruptions a day (419 in 54 days).
  // With Llama 3's fast recovery (spares, quick detection and restart, frequent checkpoints)
  // the effective training time lands near the > 90 % they report.
  GoodputInput in = Base();
  in.classes = DefaultFailureClasses();
  in.trials = 100;
  in.interval_s = 20 * 60;
  in.block_s = 30;
  in.spares = 64;
  in.restart = {60, 120, 3600, 60, 60, 120};
  GoodputResult r = SimulateGoodput(in);
  double per_day = 0;
  for (const auto& c : r.causes) per_day += c.interruptions_per_day;
  // Failures while the job is down do not interrupt it again: a little under 419/54.
  EXPECT_NEAR(per_day, 419.0 / 54 * (1 - 0.05), 0.3);
  EXPECT_NEAR(r.mtbf_s / kHour, 54.0 * 24 / 419, 0.01);
  EXPECT_EQ(r.causes[0].name, "gpu");
  EXPECT_GT(r.causes[0].interruptions_per_day, r.causes[1].interruptions_per_day);  // GPU > HBM
  EXPECT_GT(r.mean, 0.85);  // Llama 3 reported > 90 % effective training time
  EXPECT_LT(r.mean, 0.97);
}

TEST(GoodputTest, AsyncUploadNotFinishedIsNotRestorable) {
  // A failure every ~2 h and an upload that takes most of the interval: async checkpoints
  // block less but lose more per failure than their blocking time suggests.
  GoodputInput in = Base();
  in.nodes = 12;
  in.classes = {{"node", 1.0, true}};
  in.trials = 300;
  in.block_s = 10;
  in.async = true;
  in.write_s = 0;
  const double instant = SimulateGoodput(in).mean;
  in.write_s = 3000;
  const double slow_upload = SimulateGoodput(in).mean;
  EXPECT_LT(slow_upload, instant - 0.01);
}

TEST(GoodputTest, SparesShortenRescheduling) {
  GoodputInput in = Base();
  in.classes = DefaultFailureClasses();
  in.trials = 100;
  in.restart.reschedule_no_spare_s = 4 * kHour;
  const double none = SimulateGoodput(in).mean;
  in.spares = 16;
  EXPECT_GT(SimulateGoodput(in).mean, none + 0.05);
}

TEST(GoodputTest, StragglersCostThroughput) {
  GoodputInput in = Base();
  in.trials = 50;
  in.straggler_per_node_per_day = 0.01;  // ~20 a day on 2,048 nodes
  in.straggler_slowdown = 0.2;
  in.straggler_detect_s = 1800;
  GoodputResult r = SimulateGoodput(in);
  EXPECT_GT(r.straggler_loss, 0.02);
  ASSERT_EQ(r.causes.size(), 1u);
  EXPECT_EQ(r.causes[0].name, "straggler");
  EXPECT_LT(r.mean, 1 - r.checkpoint_overhead - r.straggler_loss + 1e-9);
}

TEST(CheckpointIntervalTest, DalyAndYoungReproduceDalysFigures) {
  // Daly 2006 (FGCS 22:303) Figs. 3-5: delta 5 min; within 5 %.
  const double delta = 5 * 60;
  EXPECT_NEAR(DalyInterval(delta, 24 * kHour) / 60, 117, 117 * 0.05);
  EXPECT_NEAR(DalyInterval(delta, 6 * kHour) / 60, 57, 57 * 0.05);
  EXPECT_NEAR(DalyInterval(delta, 15 * 60) / 60, 9.1, 9.1 * 0.05);
  EXPECT_NEAR(YoungInterval(delta, 24 * kHour) / 60, 120.0, 0.1);
  EXPECT_NEAR(YoungInterval(delta, 15 * 60) / 60, 12.2, 0.1);
  EXPECT_DOUBLE_EQ(DalyInterval(delta, delta / 3), delta / 3);  // delta >= 2M: tau = M
}

TEST(CheckpointIntervalTest, SimulatedBestIntervalIsNearYoung) {
  GoodputInput in = Base();
  in.classes = DefaultFailureClasses();
  in.block_s = 120;
  in.trials = 100;
  auto scan = ScanIntervals(in, 9);
  ASSERT_EQ(scan.size(), 9u);
  const auto best = std::max_element(scan.begin(), scan.end(),
                                     [](const auto& a, const auto& b) { return a.mean < b.mean; });
  const double mtbf = SimulateGoodput(in).mtbf_s;
  const double young = YoungInterval(120, mtbf);
  // The optimum is flat; the best grid point is within a factor 2 of Young's.
  EXPECT_GT(best->interval_s, young / 2.01);
  EXPECT_LT(best->interval_s, young * 2.01);
}

}  // namespace
}  // namespace gpufleet::sim
