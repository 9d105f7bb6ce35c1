// bench storage on a scratch folder: every test reports and nothing is left.

#include "bench/storage.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "../common/tree.h"

namespace gpufleet::bench {
namespace {

// Small enough to run in a moment on any disk.
StorageOptions Small(const std::string& path) {
  StorageOptions o;
  o.path = path;
  o.file_bytes = 4 << 20;
  o.fsyncs = 2;
  o.jobs = 2;
  o.random_seconds = 0.1;
  o.metadata_files = 5;
  return o;
}

TEST(StorageTest, RunsEveryTestAndCleansUp) {
  testing::Tree tree("bench-storage");
  StorageOptions o = Small(tree.path());
  o.file_bytes = 8 << 20;
  o.fsyncs = 5;
  o.random_seconds = 0.2;
  o.metadata_files = 50;
  o.checkpoint_bytes = 4 << 20;
  o.shards = 4;
  auto r = RunStorage(o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_GT(r->write_bytes_per_s, 0);
  EXPECT_GT(r->read_bytes_per_s, 0);
  EXPECT_GT(r->random_iops, 0);
  EXPECT_GT(r->fsync.p50_s, 0);
  EXPECT_LE(r->fsync.p50_s, r->fsync.max_s);
  EXPECT_GT(r->creates_per_s, 0);
  EXPECT_EQ(r->checkpoint_bytes, 4u << 20);
  EXPECT_GT(r->checkpoint_s, 0);
  EXPECT_TRUE(std::filesystem::is_empty(tree.path()));
  const auto j = StorageJson(*r);
  EXPECT_EQ(j["kind"], "storage");
  EXPECT_EQ(j["results"][0]["op"], "sequential_write");
  EXPECT_NE(StorageText(*r).find("checkpoint"), std::string::npos);
}

TEST(StorageTest, RefusesBadInputBeforeWriting) {
  testing::Tree tree("bench-storage-bad");
  StorageOptions o;
  o.path = tree.path() + "/missing";
  EXPECT_EQ(RunStorage(o).error().code, ErrorCode::kInvalidArgument);
  o.path = tree.path();
  o.block_bytes = 1000;
  EXPECT_EQ(RunStorage(o).error().code, ErrorCode::kInvalidArgument);
  o.block_bytes = 1 << 20;
  o.file_bytes = 1ull << 50;
  auto r = RunStorage(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("free for the tests"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(tree.path()));
}

TEST(StorageTest, MissedBudgetAndSlowReadsFail) {
  testing::Tree tree("bench-storage-budget");
  StorageOptions o = Small(tree.path());
  o.checkpoint_bytes = 4 << 20;
  o.checkpoint_budget_s = 1e-9;
  o.read_needed_bytes_per_s = 1e15;
  auto r = RunStorage(o);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->passed());
  int fails = 0;
  for (const auto& f : r->findings) fails += f.severity == "fail";
  EXPECT_EQ(fails, 2);
}

}  // namespace
}  // namespace gpufleet::bench
