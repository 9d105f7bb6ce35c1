#include "report/svg.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

namespace gpufleet::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TicksTest, NiceOneTwoFiveStepsInTheAxisUnit) {
  // The report's old axes: 0/26/52/79/105 % and 63.0/126.0/188.9/251.9 GB/s.
  EXPECT_THAT(NiceTicks(0, 1.05, AxisUnit::kFraction, false, true).labels,
              ElementsAre("0 %", "20 %", "40 %", "60 %", "80 %", "100 %", "120 %"));
  EXPECT_THAT(NiceTicks(0, 251.9e9, AxisUnit::kBytesPerSecond, false, true, 5).labels,
              ElementsAre("0 GB/s", "100 GB/s", "200 GB/s", "300 GB/s"));
  // Binary prefixes for sizes; time in the unit the range calls for.
  EXPECT_THAT(NiceTicks(0, 70.0 * (1 << 30), AxisUnit::kBytes, false, true, 5).labels,
              ElementsAre("0 GiB", "20 GiB", "40 GiB", "60 GiB", "80 GiB"));
  EXPECT_THAT(NiceTicks(0, 0.0979838 * 86400, AxisUnit::kSeconds, false, true, 5).labels,
              ElementsAre("0 min", "50 min", "100 min", "150 min"));
  EXPECT_THAT(NiceTicks(0, 95, AxisUnit::kSeconds, false, true, 5).labels,
              ElementsAre("0 s", "20 s", "40 s", "60 s", "80 s", "100 s"));
  // A range chosen to show the variation: 97.1 %..99.9 % is not squeezed against 0.
  const Ticks g = NiceTicks(0.971, 0.999, AxisUnit::kFraction, false, false, 5);
  EXPECT_GE(g.lo, 0.96);
  EXPECT_LE(g.hi, 1.0);
  EXPECT_EQ(g.labels.front(), "97 %");
  // Counts never get fractional ticks.
  for (const auto& l : NiceTicks(1, 3, AxisUnit::kCount, false, true, 8).labels) {
    EXPECT_EQ(l.find('.'), std::string::npos) << l;
  }
}

// Ranges no chart should meet, met anyway: they end with ticks, never a hang or a NaN.
TEST(TicksTest, DegenerateRangesStillTick) {
  for (auto [lo, hi] : {std::pair{1.0, std::nextafter(1.0, 2.0)}, std::pair{0.5, 0.5},
                        std::pair{0.0, 0.0}, std::pair{0.0, double(INFINITY)},
                        std::pair{double(NAN), 1.0}, std::pair{5.0, 1.0}, std::pair{-3.0, -1.0}}) {
    for (AxisUnit unit : {AxisUnit::kNumber, AxisUnit::kFraction, AxisUnit::kSeconds}) {
      const Ticks t = NiceTicks(lo, hi, unit, false, false, 5);
      EXPECT_GE(t.values.size(), 2u) << lo << ".." << hi;
      EXPECT_LE(t.values.size(), 12u) << lo << ".." << hi;
      for (double v : t.values) EXPECT_TRUE(std::isfinite(v)) << lo << ".." << hi;
    }
  }
  BarChart c;
  c.title = "infinite";
  c.bars.push_back({"a", {{"x", INFINITY}}});
  EXPECT_THAT(RenderSvg(c), HasSubstr("</svg>"));
}

TEST(TicksTest, LogAxesTickAtPowers) {
  // Bytes: powers of two, thinned to whole binary prefixes or their divisors.
  const Ticks b = NiceTicks(1024, 16.0 * (1 << 30), AxisUnit::kBytes, true, false, 6);
  EXPECT_EQ(b.labels.front(), "1 KiB");
  EXPECT_EQ(b.labels.back(), "16 GiB");
  for (double v : b.values) EXPECT_EQ(std::exp2(std::round(std::log2(v))), v);
  // Seconds: powers of ten.
  // Seconds: 1 and 10 of each unit.
  const Ticks s = NiceTicks(30, 30000, AxisUnit::kSeconds, true, false, 6);
  EXPECT_THAT(s.labels, ElementsAre("10 s", "1 min", "10 min", "1 h", "10 h"));
}

TEST(TextWidthTest, ErrsWideOfTheFont) {
  EXPECT_GT(TextWidth("131072"), 6 * 0.6 * 11);  // DejaVu Sans digits are 0.636 em
  EXPECT_GT(TextWidth("GPU memory 80 GiB"), TextWidth("gpu memory 80 gib"));
  EXPECT_EQ(TextWidth(""), 0);
}

TEST(SvgTest, LineChartScalesMarksLogAxesAndKeepsTheLegendOutside) {
  LineChart c;
  c.title = "Expected all-reduce bus bandwidth";
  c.x = {"message size", AxisUnit::kBytes, true, false};
  c.y = {"busbw", AxisUnit::kBytesPerSecond, false, true};
  c.series.push_back({"one node", {1024, 1 << 20, 1 << 30}, {1e9, 100e9, 230e9}, false});
  c.series.push_back({"whole cluster", {1024, 1 << 20, 1 << 30}, {0.5e9, 50e9, 190e9}, false});
  const std::string svg = RenderSvg(c);
  EXPECT_THAT(svg, HasSubstr("viewBox=\"0 0 640 "));
  EXPECT_THAT(svg, HasSubstr("width=\"100%\""));
  EXPECT_THAT(svg, HasSubstr(">message size (log scale)</text>"));
  EXPECT_THAT(svg, HasSubstr("<title>one node: message size 1 GiB, busbw 230 GB/s</title>"));
  EXPECT_THAT(svg, HasSubstr(">1 KiB</text>"));
  EXPECT_THAT(svg, HasSubstr(">250 GB/s</text>"));
  // The two series differ in colour and dash.
  EXPECT_THAT(svg, HasSubstr("stroke=\"#0072B2\" stroke-width=\"2\" points="));
  EXPECT_THAT(svg, HasSubstr("stroke=\"#D55E00\" stroke-width=\"2\" stroke-dasharray=\"7 3\""));
  // The legend sits below the plot's bottom edge.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m,
                                std::regex("<rect x=\"[0-9.]+\" y=\"([0-9.]+)\" width=\"[0-9.]+\" "
                                           "height=\"([0-9.]+)\" fill=\"none\"")));
  const double bottom = std::stod(m[1]) + std::stod(m[2]);
  ASSERT_TRUE(
      std::regex_search(svg, m, std::regex("<text x=\"[0-9.]+\" y=\"([0-9.]+)\">one node</text>")));
  EXPECT_GT(std::stod(m[1]), bottom + 30);
}

TEST(SvgTest, DiscreteSeriesAreMarkersAndABrokenAxisIsMarked) {
  LineChart c;
  c.title = "Goodput";
  c.x = {"interval", AxisUnit::kSeconds, true, false};
  c.y = {"goodput", AxisUnit::kFraction, false, false};
  c.series.push_back({"events", {600, 1200, 2400}, {0.981, 0.986, 0.983}, true});
  const std::string svg = RenderSvg(c);
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("<polyline")));
  EXPECT_THAT(svg, HasSubstr("r=\"3.5\""));
  EXPECT_THAT(svg, HasSubstr("the axis does not start at zero"));
}

TEST(SvgTest, BarLabelsGetTheRoomTheyNeed) {
  BarChart c;
  c.title = "Step time breakdown";
  c.unit = AxisUnit::kSeconds;
  c.limit = 10;
  c.limit_label = "cap";
  c.bars.push_back({"zero3 (fully sharded data parallel)", {{"x", 5}, {"y", 15}}});
  const std::string svg = RenderSvg(c);
  // The label's right edge is left of the first bar and its left edge inside the chart.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      svg, m, std::regex("<rect x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"[0-9.]+\" height=\"18.0\"")));
  const double bar_x = std::stod(m[1]);
  EXPECT_GE(bar_x - 6 - TextWidth("zero3 (fully sharded data parallel)"), 0);
  EXPECT_THAT(svg,
              HasSubstr("<title>zero3 (fully sharded data parallel) y: 15 s (of 20 s)</title>"));
  EXPECT_THAT(svg, HasSubstr(">cap</text>"));  // the limit is in the legend
}

TEST(SvgTest, HeatMapLabelsBothAxesAndNeverShowsAPassInRed) {
  HeatMap h;
  h.title = "Bandwidth per direction between node pairs";
  h.labels = {"0 n1", "1 n2", "2 n3"};
  h.unit = AxisUnit::kBytesPerSecond;
  h.floor = 40e9;
  h.floor_label = "80 % of the reference";
  const double nan = NAN;
  h.cells = {{nan, 48e9, 47e9}, {48e9, nan, 30e9}, {47e9, 30e9, nan}};
  const std::string svg = RenderSvg(h);
  EXPECT_THAT(svg, HasSubstr("rotate(-90)\">1 n2</text>"));        // column label
  EXPECT_THAT(svg, HasSubstr("text-anchor=\"end\">1 n2</text>"));  // row label
  EXPECT_THAT(svg, HasSubstr("floor 40 GB/s"));
  EXPECT_THAT(svg, HasSubstr("below the floor (80 % of the reference)"));
  // Only the two 30 GB/s cells are vermillion.
  size_t red = 0;
  for (size_t at = svg.find("fill=\"#D55E00\" stroke=\"#000\""); at != std::string::npos;
       at = svg.find("fill=\"#D55E00\" stroke=\"#000\"", at + 1)) {
    ++red;
  }
  EXPECT_EQ(red, 2u);
}

TEST(SvgTest, EscapesText) { EXPECT_EQ(EscapeXml("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;"); }

}  // namespace
}  // namespace gpufleet::report
