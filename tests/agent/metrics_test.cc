#include "agent/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace gpufleet::agent {
namespace {

TEST(MetricsTest, RendersTextFormatWithHelpTypeAndEscapes) {
  MetricSet m;
  m.Add("gpufleet_x_total", MetricType::kCounter, "A \\ help\nline", {{"a", "q\"uo\\te\n"}}, 3);
  m.Add("gpufleet_y", MetricType::kGauge, "Y", {}, 0.25);
  m.Add("gpufleet_x_total", MetricType::kCounter, "ignored", {{"a", "b"}}, 1e21);
  EXPECT_EQ(m.Render(),
            "# HELP gpufleet_x_total A \\\\ help\\nline\n"
            "# TYPE gpufleet_x_total counter\n"
            "gpufleet_x_total{a=\"q\\\"uo\\\\te\\n\"} 3\n"
            "gpufleet_x_total{a=\"b\"} 1e+21\n"
            "# HELP gpufleet_y Y\n"
            "# TYPE gpufleet_y gauge\n"
            "gpufleet_y 0.25\n");
  EXPECT_EQ(m.SampleCount(), 3u);
}

TEST(MetricsTest, ValuesInGoParseFloatSyntax) {
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatValue(HUGE_VAL), "+Inf");
  EXPECT_EQ(FormatValue(-HUGE_VAL), "-Inf");
  EXPECT_EQ(FormatValue(66035122176), "66035122176");
  EXPECT_EQ(FormatValue(0.1 + 0.2), "0.30000000000000004");  // round-trips, no %g loss
}

TEST(MetricsTest, AppendMergesFamiliesAndEmptyFamiliesVanish) {
  MetricSet a, b;
  a.Add("m", MetricType::kGauge, "h", {{"k", "1"}}, 1);
  b.Add("m", MetricType::kGauge, "h", {{"k", "2"}}, 2);
  b.Family("unused", MetricType::kGauge, "never filled");
  a.Append(std::move(b));
  EXPECT_EQ(a.Render(), "# HELP m h\n# TYPE m gauge\nm{k=\"1\"} 1\nm{k=\"2\"} 2\n");
}

}  // namespace
}  // namespace gpufleet::agent
