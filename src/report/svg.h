#pragma once
// Small self-contained SVG charts for HTML reports: a line chart (optionally
// log2 x-axis, e.g. message size) and a horizontal stacked bar chart. No
// scripts, no external fonts; safe to embed inline. Pure; thread-safe.

#include <string>
#include <vector>

namespace gpufleet::report {

struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log2_x = false;
  std::vector<Series> series;
  // Formats an axis value for a tick label ("1 MiB", "200 GB/s").
  std::string (*format_x)(double) = nullptr;
  std::string (*format_y)(double) = nullptr;
};

struct BarSegment {
  std::string name;
  double value = 0;
};
struct Bar {
  std::string label;
  std::vector<BarSegment> segments;
};
struct BarChart {
  std::string title;
  std::vector<Bar> bars;
  double limit = 0;  // a vertical line (e.g. GPU memory); 0 = none
  std::string limit_label;
  std::string (*format)(double) = nullptr;
};

// A square matrix of values as coloured cells (low = red, high = green), e.g.
// the bandwidth between node pairs. NaN cells (not measured) are grey.
struct HeatMap {
  std::string title;
  std::vector<std::string> labels;         // rows and columns
  std::vector<std::vector<double>> cells;  // [row][column]
  std::string (*format)(double) = nullptr;
};

std::string RenderSvg(const LineChart& chart);
std::string RenderSvg(const HeatMap& map);
std::string RenderSvg(const BarChart& chart);
// Escapes &, <, >, " for text and attributes.
std::string EscapeXml(const std::string& s);

}  // namespace gpufleet::report
