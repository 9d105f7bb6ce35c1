#include "report/bench_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpufleet::report {
namespace {

using ::testing::HasSubstr;

// The GPU report without a GPU: measurements as the bench would return them, a table with every
// number and a chart of each test's share of the catalog peak against the floor.
TEST(BenchReportTest, GpuPageHasATableAndAChartOfShares) {
  std::vector<bench::GpuMeasurement> m = {
      {0, "NVIDIA H100 80GB HBM3", "0000:18:00.0", 0, "gemm", "bf16", 700e12, 989e12, 0.6,
       "FLOP/s"},
      {0, "NVIDIA H100 80GB HBM3", "0000:18:00.0", 0, "hbm", "", 2.9e12, 3.35e12, 0.8, "B/s"},
      {1, "NVIDIA H100 80GB HBM3", "0000:2a:00.0", 0, "hbm", "", 1.2e12, 3.35e12, 0.8, "B/s"}};
  const std::string html = BenchGpuHtml(m);
  EXPECT_THAT(html, HasSubstr("<h2>Verdict: fail</h2>"));
  EXPECT_THAT(html, HasSubstr("<td>gemm bf16</td><td class=\"n\">700.0 TFLOP/s</td>"));
  EXPECT_THAT(html, HasSubstr("<title>GPU1 hbm share: 35.8 % (of 35.8 %)</title>"));
  EXPECT_THAT(html, HasSubstr("the strictest floor"));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("<pre>")));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("<script")));
}

}  // namespace
}  // namespace gpufleet::report
