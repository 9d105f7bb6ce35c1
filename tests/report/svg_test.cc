#include "report/svg.h"

#include <gtest/gtest.h>

namespace gpufleet::report {
namespace {

TEST(SvgTest, LineChartPlacesPointsOnALog2Axis) {
  LineChart c;
  c.title = "t";
  c.log2_x = true;
  c.series.push_back({"s", {1, 2, 4}, {0, 50, 100}});
  const std::string svg = RenderSvg(c);
  // Plot area x from 70 to 620 (width 640 - right margin 20): log2 1, 2, 4 -> 70, 345, 620.
  // y: 0 at the bottom (250), 100 at 250 - 100/105 x 220.
  EXPECT_NE(svg.find("points=\"70.0,250.0 345.0,145.2 620.0,40.5 \""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>t</title>"), std::string::npos);
}

TEST(SvgTest, BarChartStacksSegmentsAndDrawsTheLimit) {
  BarChart c;
  c.title = "m";
  c.limit = 10;
  c.limit_label = "cap";
  c.bars.push_back({"a", {{"x", 5}, {"y", 15}}});
  const std::string svg = RenderSvg(c);
  // Max 20 over 530 px from x = 90: x segment 90..222.5, y segment 222.5..620; limit at 355.
  EXPECT_NE(svg.find("x=\"90.0\" y=\"33\" width=\"132.5\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("x=\"222.5\" y=\"33\" width=\"397.5\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("x1=\"355.0\""), std::string::npos) << svg;
}

TEST(SvgTest, EscapesText) { EXPECT_EQ(EscapeXml("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;"); }

}  // namespace
}  // namespace gpufleet::report
