#include "report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpufleet::report {

namespace {
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
constexpr int kWidth = 640;
constexpr int kLeft = 70;
constexpr int kRight = 20;
constexpr int kTop = 30;

std::string Num(double v) { return fmt::format("{:.3g}", v); }
}  // namespace

std::string EscapeXml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderSvg(const LineChart& c) {
  const int height = 300;
  const int bottom = 50;
  const int plot_w = kWidth - kLeft - kRight;
  const int plot_h = height - kTop - bottom;
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
  for (const auto& s : c.series) {
    for (size_t i = 0; i < s.x.size(); ++i) {
      const double x = c.log2_x ? std::log2(s.x[i]) : s.x[i];
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      ymax = std::max(ymax, s.y[i]);
    }
  }
  if (!(xmax > xmin)) xmax = xmin + 1;
  if (ymax <= 0) ymax = 1;
  ymax *= 1.05;
  auto px = [&](double x) {
    const double v = c.log2_x ? std::log2(x) : x;
    return kLeft + (v - xmin) / (xmax - xmin) * plot_w;
  };
  auto py = [&](double y) { return kTop + plot_h - y / ymax * plot_h; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\n"
      "<title>{}</title>\n<text x=\"{}\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{}</text>\n"
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n",
      kWidth, height, EscapeXml(c.title), kLeft, EscapeXml(c.title), kLeft, kTop, plot_w, plot_h);
  for (int i = 0; i <= 4; ++i) {  // y grid
    const double y = ymax * i / 4;
    svg += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        kLeft, py(y), kLeft + plot_w, py(y), kLeft - 4, py(y) + 4,
        EscapeXml(c.format_y ? c.format_y(y) : Num(y)));
  }
  const int ticks = 6;
  for (int i = 0; i <= ticks; ++i) {  // x ticks
    double v = xmin + (xmax - xmin) * i / ticks;
    if (c.log2_x) v = std::round(v);
    const double x = c.log2_x ? std::exp2(v) : v;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(x),
                       kTop + plot_h + 15, EscapeXml(c.format_x ? c.format_x(x) : Num(x)));
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n"
      "<text x=\"14\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">{}</text>\n",
      kLeft + plot_w / 2, height - 8, EscapeXml(c.x_label), kTop + plot_h / 2, kTop + plot_h / 2,
      EscapeXml(c.y_label));
  for (size_t k = 0; k < c.series.size(); ++k) {
    const auto& s = c.series[k];
    const char* color = kColors[k % std::size(kColors)];
    std::string points;
    for (size_t i = 0; i < s.x.size(); ++i) {
      points += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(s.y[i]));
    }
    svg += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n"
        "<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n",
        color, points, kLeft + 8, kTop + 14 + 14 * static_cast<int>(k), color, EscapeXml(s.name));
  }
  return svg + "</svg>\n";
}

std::string RenderSvg(const BarChart& c) {
  const int row = 26;
  const int label_w = 90;
  const int height = kTop + row * static_cast<int>(c.bars.size()) + 50;
  const int plot_w = kWidth - label_w - kRight;
  double max = c.limit;
  for (const auto& b : c.bars) {
    double total = 0;
    for (const auto& s : b.segments) total += s.value;
    max = std::max(max, total);
  }
  if (max <= 0) max = 1;
  auto px = [&](double v) { return label_w + v / max * plot_w; };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\n<title>{}</title>\n"
      "<text x=\"{}\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{}</text>\n",
      kWidth, height, EscapeXml(c.title), label_w, EscapeXml(c.title));
  for (size_t i = 0; i < c.bars.size(); ++i) {
    const auto& b = c.bars[i];
    const int y = kTop + row * static_cast<int>(i);
    double x = 0;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", label_w - 6,
                       y + 15, EscapeXml(b.label));
    for (size_t k = 0; k < b.segments.size(); ++k) {
      const auto& s = b.segments[k];
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\">"
          "<title>{}: {}</title></rect>\n",
          px(x), y + 3, px(x + s.value) - px(x), row - 6, kColors[k % std::size(kColors)],
          EscapeXml(s.name), EscapeXml(c.format ? c.format(s.value) : Num(s.value)));
      x += s.value;
    }
  }
  if (c.limit > 0) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#000\" "
        "stroke-dasharray=\"4 3\"/><text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"end\">{4}</text>\n",
        px(c.limit), kTop, kTop + row * static_cast<int>(c.bars.size()),
        kTop + row * static_cast<int>(c.bars.size()) + 14, EscapeXml(c.limit_label));
  }
  // Legend from the first bar's segment names.
  if (!c.bars.empty()) {
    int lx = label_w;
    const int ly = height - 12;
    for (size_t k = 0; k < c.bars[0].segments.size(); ++k) {
      const auto& name = c.bars[0].segments[k].name;
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>"
          "<text x=\"{}\" y=\"{}\">{}</text>\n",
          lx, ly - 9, kColors[k % std::size(kColors)], lx + 13, ly, EscapeXml(name));
      lx += 20 + 7 * static_cast<int>(name.size());
    }
  }
  return svg + "</svg>\n";
}

std::string RenderSvg(const HeatMap& map) {
  const size_t n = map.labels.size();
  const int cell = n <= 16 ? 36 : n <= 64 ? 12 : 4;
  const int left = 90, top = 40;
  const int size = cell * static_cast<int>(n);
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& row : map.cells) {
    for (double v : row) {
      if (std::isnan(v)) continue;
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  }
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"{}\" y=\"20\" "
      "font-size=\"14\">{}</text>\n",
      left + size + 20, top + size + 40, left, EscapeXml(map.title));
  for (size_t i = 0; i < n && i < map.cells.size(); ++i) {
    if (cell >= 12) {
      svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 4,
                         top + static_cast<int>(i) * cell + cell / 2 + 4, EscapeXml(map.labels[i]));
    }
    for (size_t j = 0; j < n && j < map.cells[i].size(); ++j) {
      const double v = map.cells[i][j];
      std::string fill = "#ddd";
      if (!std::isnan(v)) {
        // red (low) through yellow to green (high), relative to the range.
        const double t = hi > lo ? (v - lo) / (hi - lo) : 1;
        const int r = t < 0.5 ? 220 : static_cast<int>(220 - (t - 0.5) * 2 * 180);
        const int g = t < 0.5 ? static_cast<int>(60 + t * 2 * 160) : 200;
        fill = fmt::format("rgb({},{},60)", r, g);
      }
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
          "stroke=\"#fff\"><title>{} - {}: {}</title></rect>\n",
          left + static_cast<int>(j) * cell, top + static_cast<int>(i) * cell, cell, cell, fill,
          EscapeXml(map.labels[i]), EscapeXml(map.labels[j]),
          std::isnan(v) ? std::string("not measured")
          : map.format  ? map.format(v)
                        : fmt::format("{:g}", v));
    }
  }
  if (any) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\">low {} (red) .. high {} (green)</text>\n", left,
                       top + size + 20, map.format ? map.format(lo) : fmt::format("{:g}", lo),
                       map.format ? map.format(hi) : fmt::format("{:g}", hi));
  }
  return svg + "</svg>\n";
}

}  // namespace gpufleet::report
