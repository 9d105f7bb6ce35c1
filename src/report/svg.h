#pragma once
// The chart module every HTML report uses: self-contained inline SVG (no scripts, fonts or
// fetches) for line charts, horizontal stacked bars and heat maps. Axes get "nice" 1-2-5 ticks
// (Heckbert, Graphics Gems 1990) in their own unit — bytes with binary prefixes, rates with
// decimal ones, time in the unit the range calls for, percentages — and log axes are marked
// and ticked at powers. Margins come from the widths of the labels they hold, legends sit
// outside the plot, discrete series are markers, every point carries a <title> (its values on
// hover), colours are Okabe and Ito's colour-blind-safe set with a dash pattern per series (so
// print in grey keeps them apart), and each chart scales to its container (viewBox,
// width="100%"). Pure; thread-safe.

#include <cmath>
#include <string>
#include <vector>

namespace gpufleet::report {

enum class AxisUnit {
  kNumber,          // plain numbers, 3 significant digits
  kCount,           // whole numbers (GPUs, nodes)
  kBytes,           // binary prefixes: KiB, MiB, GiB
  kBytesPerSecond,  // decimal prefixes: MB/s, GB/s (as NICs, NCCL and nccl-tests count)
  kSeconds,         // µs, ms, s, min, h or d, whichever the range calls for
  kFraction,        // 0..1 shown as percent
};

struct Axis {
  std::string label;
  AxisUnit unit = AxisUnit::kNumber;
  bool log = false;  // log scale, ticked at powers of 2 (bytes, counts) or 10; marked "log"
  // Start at zero (bars, throughput); false chooses the range that shows the variation and
  // marks the axis break.
  bool zero = true;
  // With `zero` false, the smallest span the axis shows (in the axis unit): a few hundredths of
  // a percent of noise drawn over the full height would read as a trend. 0 = any.
  double min_span = 0;
};

struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
  bool markers_only = false;  // discrete events or measurements: no line between them
};

struct LineChart {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
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
  AxisUnit unit = AxisUnit::kNumber;
  std::vector<Bar> bars;
  double limit = 0;  // a vertical line (e.g. GPU memory); 0 = none
  std::string limit_label;
};

// A square matrix of values as coloured cells, e.g. the bandwidth between node pairs. Cells at
// or above `floor` shade from light (the floor) to dark blue (the best); cells below it are
// vermillion and outlined, so a pass never shows red; NaN cells (not measured) are grey.
struct HeatMap {
  std::string title;
  std::vector<std::string> labels;         // rows and columns
  std::vector<std::vector<double>> cells;  // [row][column]
  AxisUnit unit = AxisUnit::kNumber;
  double floor = NAN;  // NaN: no floor, shade over the measured range
  std::string floor_label;
};

std::string RenderSvg(const LineChart& chart);
std::string RenderSvg(const HeatMap& map);
std::string RenderSvg(const BarChart& chart);
// Escapes &, <, >, " for text and attributes.
std::string EscapeXml(const std::string& s);

// Exposed for tests: tick positions and their labels for [lo, hi] in `unit`.
struct Ticks {
  std::vector<double> values;
  std::vector<std::string> labels;
  double lo = 0, hi = 1;  // the axis range the ticks span
};
Ticks NiceTicks(double lo, double hi, AxisUnit unit, bool log, bool zero, int max_ticks = 6);
// A value in `unit`, as the charts print it (tooltips, legends).
std::string FormatValue(double v, AxisUnit unit);
// Approximate width in pixels of `text` at `font_px` in the report's sans-serif font.
double TextWidth(const std::string& text, double font_px = 11);

}  // namespace gpufleet::report
