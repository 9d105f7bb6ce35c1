// Verdicts, the nccl-tests table, the JSON the agent reads, the plan's
// expectation, and the HTML report.

#include "bench/results.h"

#include <gtest/gtest.h>

#include "bench/expected.h"
#include "model/spec.h"
#include "report/bench_report.h"

namespace gpufleet::bench {
namespace {

CollectiveRow Row(Op op, uint64_t bytes, double time_s, int ranks) {
  CollectiveRow r;
  r.op = op;
  r.bytes = bytes;
  r.count = bytes / 4;
  r.time_s = time_s;
  r.algbw_bytes_per_s = static_cast<double>(bytes) / time_s;
  r.busbw_bytes_per_s = r.algbw_bytes_per_s * BusBwFactor(op, ranks);
  r.wrong = 0;
  r.p50_s = time_s;
  r.p99_s = time_s * 1.1;
  return r;
}

CollectiveReport Report() {
  CollectiveReport r;
  r.backend = "mpi";
  r.device = "host memory";
  r.ranks = 4;
  r.nodes = 1;
  r.hosts = {"a", "a", "a", "a"};
  r.judge_from_bytes = 1 << 20;
  return r;
}

TEST(JudgeTest, PassesCleanRows) {
  auto r = Report();
  r.rows.push_back(Row(Op::kAllReduce, 4 << 20, 0.001, 4));
  Judge(&r);
  EXPECT_TRUE(r.passed());
  EXPECT_TRUE(r.findings.empty());
}

TEST(JudgeTest, WrongElementsFail) {
  auto r = Report();
  r.rows.push_back(Row(Op::kAllGather, 1024, 0.001, 4));
  r.rows.back().wrong = 3;
  Judge(&r);
  ASSERT_FALSE(r.passed());
  EXPECT_EQ(r.findings[0].message,
            "all_gather 1024 B: 3 wrong elements summed over the ranks (data corrupted in transit "
            "or by a faulty device)");
}

TEST(JudgeTest, BelowThresholdFromJudgeSizeOnly) {
  auto r = Report();
  r.rows.push_back(Row(Op::kAllReduce, 1024, 1e-3, 4));     // tiny: shown, not judged
  r.rows.push_back(Row(Op::kAllReduce, 64 << 20, 1.0, 4));  // 100 MB/s busbw
  for (auto& row : r.rows) row.expected_busbw_bytes_per_s = 1e9;
  Judge(&r);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_NE(r.findings[0].message.find("all_reduce 67108864 B: busbw 0.10 GB/s is 10 % of the "
                                       "expected 1.00 GB/s"),
            std::string::npos)
      << r.findings[0].message;
  EXPECT_NEAR(r.rows[1].ratio, 0.1006, 1e-3);
  r.threshold = 0.05;
  Judge(&r);
  EXPECT_TRUE(r.passed());
}

TEST(JudgeTest, FourMibAllReduceOverThirtyMs) {
  auto r = Report();
  r.rows.push_back(Row(Op::kAllReduce, 4 << 20, 0.031, 4));
  r.rows.push_back(Row(Op::kAllGather, 4 << 20, 0.050, 4));  // the rule is for all-reduce
  Judge(&r);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_NE(r.findings[0].message.find("over the 30 ms rule of thumb"), std::string::npos);
}

TEST(JudgeTest, SlowRankIsAWarningNamingItsHost) {
  auto r = Report();
  r.hosts = {"a", "b", "c", "d"};
  r.rows.push_back(Row(Op::kAllReduce, 4 << 20, 0.002, 4));
  r.rows.back().slowest_rank = 2;
  r.rows.back().skew = 0.5;
  Judge(&r);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].severity, "warn");
  EXPECT_NE(r.findings[0].message.find("rank 2 (host c) is 50 % slower"), std::string::npos);
  EXPECT_TRUE(r.passed());
}

TEST(OutputTest, TableAndJsonCarryTheNumbers) {
  auto r = Report();
  r.rows.push_back(Row(Op::kAllReduce, 1 << 20, 0.001, 4));
  r.rows.push_back(Row(Op::kBroadcast, 1 << 20, 0.001, 4));
  r.rows.back().root = 0;
  r.rows.back().wrong = -1;
  Judge(&r);
  const std::string text = CollectiveText(r);
  EXPECT_NE(text.find("# Out of bounds values : 0 OK"), std::string::npos) << text;
  EXPECT_NE(text.find("# all_reduce\n"), std::string::npos);
  EXPECT_NE(text.find("N/A"), std::string::npos);
  const auto j = CollectiveJson(r);
  // The fields `gpufleet agent --bench-dir` reads (agent/collect_bench.cc).
  EXPECT_EQ(j["schema"], "gpufleet.bench/v1");
  EXPECT_EQ(j["kind"], "collective");
  EXPECT_GT(j["time"].get<double>(), 1.7e9);
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(j["results"][0]["op"], "all_reduce");
  EXPECT_EQ(j["results"][0]["bytes"], 1 << 20);
  EXPECT_NEAR(j["results"][0]["busbw_bytes_per_s"].get<double>(), 1.048576e9 * 1.5, 1);
  EXPECT_TRUE(j["results"][1]["wrong"].is_null());
}

TEST(PercentileTest, NearestRank) {
  EXPECT_EQ(Percentile({}, 50), 0);
  EXPECT_EQ(Percentile({3, 1, 2}, 50), 2);
  EXPECT_EQ(Percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99), 10);
  EXPECT_EQ(Percentile({5}, 1), 5);
}

TEST(ExpectationTest, PlanGivesLatencyBoundSmallAndBandwidthBoundLarge) {
  auto spec = model::ReferenceSpec();
  ASSERT_TRUE(spec);
  // One node of 8 A100s (NVLink3): a few hundred GB/s at 1 GiB, far less at 8 KiB.
  const auto e = Expectation::FromPlan(*spec, 8, 1);
  const double big = *e.BusBw(Op::kAllReduce, 1ull << 30);
  const double small = *e.BusBw(Op::kAllReduce, 8 << 10);
  EXPECT_GT(big, 150e9);
  EXPECT_LT(big, 300e9);  // never above NVLink3's 300 GB/s per direction
  EXPECT_LT(small, big / 10);
  EXPECT_GT(*e.BusBw(Op::kAllGather, 1ull << 30), 100e9);
  EXPECT_GT(*e.BusBw(Op::kBroadcast, 1ull << 30), 100e9);
  EXPECT_FALSE(e.BusBw(Op::kAllToAll, 1ull << 30));
  EXPECT_EQ(e.source(), "plan");
  // Across nodes the fabric bounds it.
  const auto inter = Expectation::FromPlan(*spec, 8, 4);
  EXPECT_LT(*inter.BusBw(Op::kAllReduce, 1ull << 30), big);
  const auto flat = Expectation::Flat(5e9);
  EXPECT_EQ(*flat.BusBw(Op::kAllToAll, 8), 5e9);
}

TEST(HtmlTest, ChartsMeasuredBesideExpected) {
  auto r = Report();
  for (uint64_t b = 1 << 10; b <= (1 << 20); b *= 4) {
    r.rows.push_back(Row(Op::kAllReduce, b, 1e-4 + static_cast<double>(b) / 1e9, 4));
    r.rows.back().expected_busbw_bytes_per_s = 2e9;
    r.rows.back().expected_from = "plan";
  }
  Judge(&r);
  const std::string html = report::BenchCollectiveHtml(r);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("expected (plan)"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

}  // namespace
}  // namespace gpufleet::bench
