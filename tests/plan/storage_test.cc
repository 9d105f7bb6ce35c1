#include "plan/storage.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace gpufleet::plan {
namespace {

TEST(StorageTest, ReferenceCheckpointWorkedByHand) {
  model::Spec s = testing::Reference();
  StoragePlan p = PlanStorage(s, /*step_s=*/80.0);
  // 14 B x 13,015,864,320 = 182.22 GB; weights only 2 B/param = 26.03 GB.
  EXPECT_DOUBLE_EQ(p.checkpoint_bytes, 14 * 13015864320.0);
  EXPECT_DOUBLE_EQ(p.weights_only_bytes, 2 * 13015864320.0);
  ASSERT_EQ(p.tiers.size(), 3u);
  // Hot: each of 4 nodes writes its quarter to 4 drives x 4.1 GB/s: 182.22 GB / 65.6 GB/s.
  EXPECT_NEAR(p.tiers[0].write_s, 14 * 13015864320.0 / (4 * 4 * 4.1e9), 1e-9);
  // Warm: min(20 GB/s tier, 4 nodes x 100 Gb/s = 50 GB/s) = 20 GB/s -> 9.11 s.
  EXPECT_EQ(p.tiers[1].write_bound, "tier bandwidth");
  EXPECT_NEAR(p.tiers[1].write_s, 14 * 13015864320.0 / 20e9, 1e-9);
  EXPECT_TRUE(p.tiers[1].under_2_min);
  EXPECT_EQ(p.target_tier, "parallel-fs");
  // Async: training stalls only for the device-to-host copy of each GPU's 1/32 shard over
  // PCIe Gen4 (32 GB/s x 0.8).
  EXPECT_NEAR(p.snapshot_s, 14 * 13015864320.0 / 32 / 25.6e9, 1e-12);
  EXPECT_DOUBLE_EQ(p.stall_s, p.snapshot_s);
  EXPECT_TRUE(p.async_keeps_up);
  // Input: 1024 samples x 4096 tokens x 2 B per 80 s step = 104,857.6 B/s.
  EXPECT_DOUBLE_EQ(p.input_bytes_per_s, 1024 * 4096 * 2 / 80.0);
  // Hot tier keeps 2 copies: 2 x 182.22 GB / 4 nodes per node, 4 x 3.84 TB available.
  EXPECT_DOUBLE_EQ(p.hot_bytes_needed_per_node, 2 * 14 * 13015864320.0 / 4);
  EXPECT_DOUBLE_EQ(p.hot_bytes_available_per_node, 4 * 3.84e12);
}

TEST(StorageTest, SyncCheckpointStallsForTheWholeWriteAndNicsCanBind) {
  model::Spec s = testing::Reference();
  s.workload.checkpoint_async = false;
  s.cluster.storage[1].write_bytes_per_s = 400e9;  // faster than 4 x 12.5 GB/s of NICs
  StoragePlan p = PlanStorage(s, 80.0);
  EXPECT_EQ(p.tiers[1].write_bound, "storage NICs");
  EXPECT_NEAR(p.tiers[1].write_s, 14 * 13015864320.0 / 50e9, 1e-9);
  EXPECT_DOUBLE_EQ(p.stall_s, p.tiers[1].write_s);
  EXPECT_DOUBLE_EQ(p.stall_fraction, p.stall_s / 3600);
}

TEST(StorageTest, AsyncThatCannotFinishBeforeTheNextCheckpointIsFlagged) {
  model::Spec s = testing::Reference();
  s.workload.checkpoint_interval_s = 5;  // the warm write takes 9.1 s
  EXPECT_FALSE(PlanStorage(s, 80.0).async_keeps_up);
}

}  // namespace
}  // namespace gpufleet::plan
