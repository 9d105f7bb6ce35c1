#include "report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpufleet::report {

namespace {

// Okabe and Ito (2008), "Color Universal Design": distinguishable with every common colour
// vision deficiency; with a dash pattern each, they survive grey-scale printing too.
// Past eight, Paul Tol's wine and teal, also safe.
constexpr const char* kColors[] = {"#0072B2", "#D55E00", "#009E73", "#E69F00", "#56B4E9",
                                   "#CC79A7", "#000000", "#999999", "#882255", "#44AA99"};
constexpr const char* kDashes[] = {"",    "7 3",  "2 2",     "9 3 2 3", "4 4",
                                   "1 3", "12 3", "3 3 1 3", "6 2 1 2", "10 2"};
constexpr double kWidth = 640;
constexpr double kFont = 11;
constexpr double kTitleFont = 13;

std::string Color(size_t k) { return kColors[k % std::size(kColors)]; }
std::string Dash(size_t k) {
  const std::string d = kDashes[k % std::size(kDashes)];
  return d.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", d);
}

// Heckbert's nice number: 1, 2 or 5 times a power of ten, rounded or at least `x`.
double NiceNum(double x, bool round) {
  const double e = std::floor(std::log10(x));
  const double f = x / std::pow(10, e);
  double nf;
  if (round) {
    nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  } else {
    nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  }
  return nf * std::pow(10, e);
}

// The display unit for values up to `mag` in `unit`: the factor to divide by and the suffix.
std::pair<double, std::string> DisplayUnit(double mag, AxisUnit unit) {
  switch (unit) {
    case AxisUnit::kFraction:
      return {0.01, " %"};
    case AxisUnit::kBytes: {
      static const char* kPrefix[] = {" B", " KiB", " MiB", " GiB", " TiB", " PiB"};
      int k = 0;
      while (k < 5 && mag >= std::pow(1024.0, k + 1)) ++k;
      return {std::pow(1024.0, k), kPrefix[k]};
    }
    case AxisUnit::kBytesPerSecond: {
      static const char* kPrefix[] = {" B/s", " kB/s", " MB/s", " GB/s", " TB/s", " PB/s"};
      int k = 0;
      while (k < 5 && mag >= std::pow(1000.0, k + 1)) ++k;
      return {std::pow(1000.0, k), kPrefix[k]};
    }
    case AxisUnit::kSeconds:
      if (mag < 1e-3) return {1e-6, " µs"};
      if (mag < 1) return {1e-3, " ms"};
      if (mag < 180) return {1, " s"};
      if (mag < 3 * 3600) return {60, " min"};
      if (mag < 3 * 86400) return {3600, " h"};
      return {86400, " d"};
    case AxisUnit::kCount:
    case AxisUnit::kNumber:
      break;
  }
  return {1, ""};
}

std::string Trim0(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

struct Frame {
  std::string svg;
  double width = kWidth, height = 0;
};

// Bold glyphs run ~12 % wider than TextWidth's regular ones.
double TitleWidth(const std::string& title) { return TextWidth(title, kTitleFont) * 1.12; }

std::string Open(const std::string& title, double w, double h) {
  // A title too long for the chart is set smaller rather than clipped.
  const double font =
      std::min(kTitleFont, kTitleFont * (w - 16) / std::max(1.0, TitleWidth(title)));
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {0:.0f} {1:.0f}\" width=\"100%\" "
      "style=\"max-width:{0:.0f}px;height:auto\" font-family=\"sans-serif\" font-size=\"{2:g}\" "
      "role=\"img\" aria-label=\"{3}\">\n<title>{3}</title>\n"
      "<text x=\"8\" y=\"18\" font-size=\"{4:g}\" font-weight=\"bold\">{3}</text>\n",
      w, h, kFont, EscapeXml(title), std::floor(font * 10) / 10);
}

// Legend entries laid out left to right from (x0, y), wrapping inside `width`; returns the rows
// used. `swatch(k, x, y)` draws entry k's key 16 px wide.
template <typename Swatch>
int Legend(const std::vector<std::string>& names, double x0, double y, double width, Swatch swatch,
           std::string* svg) {
  double x = x0;
  int rows = names.empty() ? 0 : 1;
  for (size_t k = 0; k < names.size(); ++k) {
    const double w = 20 + TextWidth(names[k]) + 14;
    if (x > x0 && x + w > width - 4) {
      x = x0;
      y += 16;
      ++rows;
    }
    *svg += swatch(k, x, y);
    *svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x + 20, y + 4,
                        EscapeXml(names[k]));
    x += w;
  }
  return rows;
}

// How many legend rows `names` need in `width` from x0 (the same flow as Legend).
int LegendRows(const std::vector<std::string>& names, double x0, double width) {
  double x = x0;
  int rows = names.empty() ? 0 : 1;
  for (const auto& n : names) {
    const double w = 20 + TextWidth(n) + 14;
    if (x > x0 && x + w > width - 4) {
      x = x0;
      ++rows;
    }
    x += w;
  }
  return rows;
}

}  // namespace

double TextWidth(const std::string& text, double font_px) {
  // Advance widths of DejaVu Sans (Debian's default sans-serif) in em, rounded up a little: an
  // estimate that errs wide, so margins never clip a label.
  double em = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      if ((c & 0xC0) != 0x80) em += 0.65;  // one per UTF-8 sequence
      continue;
    }
    if (c >= '0' && c <= '9') {
      em += 0.64;
    } else if (c == ' ') {
      em += 0.32;
    } else if (std::string_view(".,:;il|!'I").find(static_cast<char>(c)) !=
               std::string_view::npos) {
      em += 0.3;
    } else if (std::string_view("ftrj()[]/-").find(static_cast<char>(c)) !=
               std::string_view::npos) {
      em += 0.42;
    } else if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '%') {
      em += 0.98;
    } else if (c >= 'A' && c <= 'Z') {
      em += 0.74;
    } else {
      em += 0.62;
    }
  }
  return em * font_px;
}

std::string FormatValue(double v, AxisUnit unit) {
  if (!std::isfinite(v)) return "-";
  if (unit == AxisUnit::kCount) return fmt::format("{:.0f}", v);
  if (unit == AxisUnit::kNumber) return Trim0(fmt::format("{:.3g}", v));
  const auto [scale, suffix] = DisplayUnit(std::fabs(v), unit);
  const double d = v / scale;
  const int decimals = std::fabs(d) >= 100 ? 0 : std::fabs(d) >= 10 ? 1 : 2;
  return Trim0(fmt::format("{:.{}f}", d, decimals)) + suffix;
}

Ticks NiceTicks(double lo, double hi, AxisUnit unit, bool log, bool zero, int max_ticks) {
  Ticks t;
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (lo > hi) std::swap(lo, hi);
  // A range too narrow to tick (equal ends, or a few floating-point steps apart) is widened.
  const double mag = std::max(std::fabs(lo), std::fabs(hi));
  if (!(hi - lo > 1e-9 * mag)) {
    const double pad = mag > 0 ? mag * 0.05 : 0.5;
    lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    hi += pad;
  }
  if (log && lo > 0 && unit == AxisUnit::kSeconds) {
    // Time reads best at 1, 10 of each unit: 1 s, 10 s, 1 min, 10 min, 1 h, 10 h, 1 d, 10 d.
    static const double kSteps[] = {1e-6, 1e-5, 1e-4, 1e-3,  1e-2,  1e-1,   1,      10,
                                    60,   600,  3600, 36000, 86400, 864000, 8640000};
    static const char* kNames[] = {"1 µs",   "10 µs", "100 µs", "1 ms",  "10 ms",
                                   "100 ms", "1 s",   "10 s",   "1 min", "10 min",
                                   "1 h",    "10 h",  "1 d",    "10 d",  "100 d"};
    size_t a = 0, b = std::size(kSteps) - 1;
    while (a + 1 < std::size(kSteps) && kSteps[a + 1] <= lo) ++a;
    while (b > 0 && kSteps[b - 1] >= hi) --b;
    const size_t stride = std::max<size_t>(1, (b - a + max_ticks - 1) / max_ticks);
    for (size_t i = a; i <= b; i += stride) {
      t.values.push_back(kSteps[i]);
      t.labels.push_back(kNames[i]);
    }
    t.lo = t.values.front();
    t.hi = t.values.back();
    if (t.hi < hi) {  // the stride stepped over the top: close the axis there
      t.values.push_back(kSteps[b]);
      t.labels.push_back(kNames[b]);
      t.hi = kSteps[b];
    }
    return t;
  }
  if (log && lo > 0) {
    const double base = unit == AxisUnit::kBytes || unit == AxisUnit::kCount ? 2 : 10;
    const int elo = static_cast<int>(std::floor(std::log(lo) / std::log(base) + 1e-9));
    const int ehi = static_cast<int>(std::ceil(std::log(hi) / std::log(base) - 1e-9));
    // The fewest powers per tick that fit, preferring one that divides the span evenly so the
    // last tick is the top of the data.
    const int n = std::max(1, ehi - elo);
    int stride = std::max(1, static_cast<int>(std::ceil(n / double(max_ticks))));
    for (int s = stride; s <= std::min(n, 2 * stride); ++s) {
      if (n % s == 0) {
        stride = s;
        break;
      }
    }
    const int first = elo;  // the axis starts at the data: the first tick is its lowest power
    t.lo = std::pow(base, first);
    for (int e = first; e <= ehi + stride - 1; e += stride) {
      const double v = std::pow(base, e);
      t.values.push_back(v);
      t.labels.push_back(unit == AxisUnit::kCount || unit == AxisUnit::kNumber
                             ? Trim0(fmt::format("{:.0f}", v))
                             : FormatValue(v, unit));
      t.hi = v;
      if (e >= ehi) break;
    }
    return t;
  }
  if (zero) lo = std::min(lo, 0.0);
  const auto [scale, suffix] = DisplayUnit(std::max(std::fabs(lo), std::fabs(hi)), unit);
  const double dlo = lo / scale, dhi = hi / scale;
  double step = NiceNum((dhi - dlo) / std::max(1, max_ticks - 1), true);
  if (!(step > 0) || !std::isfinite(step)) step = 1;
  if (unit == AxisUnit::kCount) step = std::max(step, 1.0);
  // Rounding the step down can leave too many ticks: take the next nice step (1, 2, 5, 10).
  auto count = [&](double st) {
    return std::ceil(dhi / st - 1e-9) - std::floor(dlo / st + 1e-9) + 1;
  };
  while (count(step) > max_ticks + 1) {
    const double e = std::pow(10, std::floor(std::log10(step) + 1e-9));
    const double f = step / e;
    step = (f < 1.5 ? 2 : f < 3 ? 5 : 10) * e;
  }
  const double glo = std::floor(dlo / step + 1e-9) * step;
  const double ghi = std::ceil(dhi / step - 1e-9) * step;
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  for (int i = 0; i <= 1000; ++i) {  // an index, not v += step: a tiny step cannot stall it
    const double v = glo + i * step;
    if (v > ghi + step * 1e-6) break;
    const double clean = std::fabs(v) < step * 1e-9 ? 0 : v;
    t.values.push_back(clean * scale);
    t.labels.push_back(fmt::format("{:.{}f}{}", clean, decimals, suffix));
  }
  t.lo = glo * scale;
  t.hi = ghi * scale;
  return t;
}

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
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const auto& s : c.series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      if ((c.x.log && s.x[i] <= 0) || (c.y.log && s.y[i] <= 0)) continue;  // no log of 0
      xmin = std::min(xmin, s.x[i]);
      xmax = std::max(xmax, s.x[i]);
      ymin = std::min(ymin, s.y[i]);
      ymax = std::max(ymax, s.y[i]);
    }
  }
  if (!std::isfinite(xmin)) xmin = c.x.log ? 1 : 0, xmax = c.x.log ? 2 : 1;
  if (!std::isfinite(ymin)) ymin = 0, ymax = 1;
  // A range chosen to show the variation keeps a margin around it.
  if (!c.y.zero && ymax - ymin < c.y.min_span) {
    const double mid = (ymax + ymin) / 2;
    ymin = mid - c.y.min_span / 2;
    ymax = mid + c.y.min_span / 2;
    if (c.y.unit == AxisUnit::kFraction && ymax > 1 && ymax - c.y.min_span >= 0) {
      ymax = 1;  // keep a fraction's axis under 100 %
      ymin = 1 - c.y.min_span;
    }
  }
  if (!c.y.zero && !c.y.log && ymax > ymin) {
    const double pad = (ymax - ymin) * 0.1;
    const bool fraction = c.y.unit == AxisUnit::kFraction;
    ymin = fraction ? std::max(0.0, ymin - pad) : ymin - pad;
    ymax = fraction && ymax <= 1 ? std::min(1.0, ymax + pad) : ymax + pad;
  }
  const Ticks xt = NiceTicks(xmin, xmax, c.x.unit, c.x.log, c.x.zero && !c.x.log, 7);
  const Ticks yt = NiceTicks(ymin, ymax, c.y.unit, c.y.log, c.y.zero, 5);
  double ytick_w = 0;
  for (const auto& l : yt.labels) ytick_w = std::max(ytick_w, TextWidth(l));
  const double left = 8 + 14 + 6 + ytick_w + 6;  // y title, gap, tick labels, gap
  const double last_w = xt.labels.empty() ? 0 : TextWidth(xt.labels.back());
  const double right = std::max(12.0, last_w / 2 + 6);
  const double top = 30, plot_h = 210;
  const double plot_w = kWidth - left - right;
  std::vector<std::string> names;
  for (const auto& s : c.series) names.push_back(s.name);
  const int legend_rows = LegendRows(names, left, kWidth);
  const double height = top + plot_h + 19 + 18 + 8 + 16 * legend_rows + 6;

  auto sx = [&](double x) {
    const double a = c.x.log ? std::log(xt.lo) : xt.lo, b = c.x.log ? std::log(xt.hi) : xt.hi;
    const double v = c.x.log ? std::log(x) : x;
    return left + (v - a) / (b - a) * plot_w;
  };
  auto sy = [&](double y) {
    const double a = c.y.log ? std::log(yt.lo) : yt.lo, b = c.y.log ? std::log(yt.hi) : yt.hi;
    const double v = c.y.log ? std::log(y) : y;
    return top + plot_h - (v - a) / (b - a) * plot_h;
  };

  std::string svg = Open(c.title, kWidth, height);
  svg += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
      "stroke=\"#999\"/>\n",
      left, top, plot_w, plot_h);
  for (size_t i = 0; i < yt.values.size(); ++i) {
    const double y = sy(yt.values[i]);
    svg += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        left, y, left + plot_w, y, yt.values[i] == 0 ? "#666" : "#e6e6e6", left - 6, y + 3.5,
        EscapeXml(yt.labels[i]));
  }
  if (yt.lo > 0 && !c.y.log) {  // the axis does not start at zero: mark the break
    const double b = top + plot_h - 6;
    svg += fmt::format(
        "<path d=\"M{0:.1f} {1:.1f} l8 -4 M{0:.1f} {2:.1f} l8 -4\" stroke=\"#666\" "
        "fill=\"none\"><title>the axis does not start at zero</title></path>\n",
        left - 4, b + 2, b + 6);
  }
  // x tick labels: every one that fits, thinned evenly when they would touch.
  size_t every = 1;
  for (;; ++every) {
    double need = 0;
    for (size_t i = 0; i < xt.labels.size(); i += every) need += TextWidth(xt.labels[i]) + 10;
    if (need <= plot_w || every >= xt.labels.size()) break;
  }
  for (size_t i = 0; i < xt.values.size(); ++i) {
    const double x = sx(xt.values[i]);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e6e6e6\"/>\n",
        x, top, top + plot_h);
    if (i % every != 0) continue;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x,
                       top + plot_h + 18, EscapeXml(xt.labels[i]));
  }
  const std::string xlabel = c.x.label + (c.x.log ? " (log scale)" : "");
  const std::string ylabel = c.y.label + (c.y.log ? " (log scale)" : "");
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                     left + plot_w / 2, top + plot_h + 35, EscapeXml(xlabel));
  svg += fmt::format(
      "<text x=\"0\" y=\"0\" text-anchor=\"middle\" transform=\"translate(16 {:.1f}) "
      "rotate(-90)\">{}</text>\n",
      top + plot_h / 2, EscapeXml(ylabel));
  for (size_t k = 0; k < c.series.size(); ++k) {
    const auto& s = c.series[k];
    std::string points, dots;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (c.x.log && s.x[i] <= 0) ||
          (c.y.log && s.y[i] <= 0)) {
        continue;
      }
      const double x = sx(s.x[i]), y = sy(s.y[i]);
      points += fmt::format("{:.1f},{:.1f} ", x, y);
      dots += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{}: {} {}, {} "
          "{}</title></circle>\n",
          x, y, s.markers_only ? 3.5 : 2.5, Color(k), EscapeXml(s.name), EscapeXml(c.x.label),
          EscapeXml(FormatValue(s.x[i], c.x.unit)), EscapeXml(c.y.label),
          EscapeXml(FormatValue(s.y[i], c.y.unit)));
    }
    if (!s.markers_only && !points.empty()) {
      svg += fmt::format(
          "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n", Color(k),
          Dash(k), points);
    }
    svg += dots;
  }
  Legend(
      names, left, top + plot_h + 53, kWidth,
      [&](size_t k, double x, double y) {
        std::string out;
        if (!c.series[k].markers_only) {
          out += fmt::format(
              "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
              "stroke-width=\"2\"{}/>",
              x, y, x + 16, y, Color(k), Dash(k));
        }
        out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", x + 8, y,
                           Color(k));
        return out;
      },
      &svg);
  return svg + "</svg>\n";
}

std::string RenderSvg(const BarChart& c) {
  const double row = 26, top = 30;
  double label_w = 0;
  for (const auto& b : c.bars) label_w = std::max(label_w, TextWidth(b.label));
  label_w += 16;
  double max = std::isfinite(c.limit) ? c.limit : 0;
  for (const auto& b : c.bars) {
    double total = 0;
    for (const auto& s : b.segments) total += std::isfinite(s.value) ? s.value : 0;
    max = std::max(max, total);
  }
  const Ticks t = NiceTicks(0, max > 0 ? max : 1, c.unit, false, true, 6);
  const double right = std::max(12.0, (t.labels.empty() ? 0 : TextWidth(t.labels.back())) / 2 + 6);
  const double plot_w = kWidth - label_w - right;
  const double plot_h = row * static_cast<double>(c.bars.size());
  // The legend names the segments some bar has (a part that is zero everywhere is left out),
  // each keeping its colour.
  std::vector<std::string> names;
  std::vector<size_t> colour_of;
  if (!c.bars.empty()) {
    for (size_t k = 0; k < c.bars[0].segments.size(); ++k) {
      bool any = false;
      for (const auto& b : c.bars) any = any || (k < b.segments.size() && b.segments[k].value > 0);
      if (!any) continue;
      names.push_back(c.bars[0].segments[k].name);
      colour_of.push_back(k);
    }
  }
  if (c.limit > 0) names.push_back(c.limit_label);
  const int legend_rows = LegendRows(names, label_w, kWidth);
  const double height = top + plot_h + 22 + 10 + 16 * legend_rows + 6;
  auto px = [&](double v) { return label_w + v / t.hi * plot_w; };
  std::string svg = Open(c.title, kWidth, height);
  for (size_t i = 0; i < t.values.size(); ++i) {
    const double x = px(t.values[i]);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e6e6e6\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
        x, top, top + plot_h, top + plot_h + 15, EscapeXml(t.labels[i]));
  }
  for (size_t i = 0; i < c.bars.size(); ++i) {
    const auto& b = c.bars[i];
    const double y = top + row * static_cast<double>(i);
    double x = 0, total = 0;
    for (const auto& s : b.segments) total += s.value;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                       label_w - 6, y + 16, EscapeXml(b.label));
    for (size_t k = 0; k < b.segments.size(); ++k) {
      const auto& s = b.segments[k];
      if (!(s.value > 0) || !std::isfinite(s.value)) continue;
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>{} {}: {} (of {})</title></rect>\n",
          px(x), y + 4, px(x + s.value) - px(x), row - 8, Color(k), EscapeXml(b.label),
          EscapeXml(s.name), EscapeXml(FormatValue(s.value, c.unit)),
          EscapeXml(FormatValue(total, c.unit)));
      x += s.value;
    }
  }
  if (c.limit > 0) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#000\" "
        "stroke-width=\"1.5\" stroke-dasharray=\"5 3\"><title>{3}</title></line>\n",
        px(c.limit), top - 4, top + plot_h + 4, EscapeXml(c.limit_label));
  }
  Legend(
      names, label_w, top + plot_h + 36, kWidth,
      [&](size_t k, double x, double y) {
        if (c.limit > 0 && k + 1 == names.size()) {
          return fmt::format(
              "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#000\" "
              "stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>\n",
              x, y, x + 16, y);
        }
        return fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n", x + 1,
            y - 5, Color(colour_of[k]));
      },
      &svg);
  return svg + "</svg>\n";
}

std::string RenderSvg(const HeatMap& m) {
  const size_t n = m.labels.size();
  const double cell = n <= 16 ? 28 : n <= 48 ? 14 : 6;
  const bool labelled = cell >= 14;
  double label_w = 0;
  for (const auto& l : m.labels) label_w = std::max(label_w, TextWidth(l));
  const double left = labelled ? 8 + label_w + 6 : 12;
  const double top = labelled ? 30 + label_w + 6 : 30;  // column labels stand upright above
  const double grid = cell * static_cast<double>(n);
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& r : m.cells) {
    for (double v : r) {
      if (std::isnan(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  const bool any = std::isfinite(lo);
  const bool has_floor = std::isfinite(m.floor);
  const double shade_lo = has_floor ? m.floor : lo;
  const double shade_hi = any ? std::max(hi, shade_lo) : 1;
  // Light to dark blue (ColorBrewer "Blues" ends) for the acceptable range.
  auto blue = [&](double v) {
    const double t =
        shade_hi > shade_lo ? std::clamp((v - shade_lo) / (shade_hi - shade_lo), 0.0, 1.0) : 1;
    const int r = static_cast<int>(198 + (8 - 198) * t), g = static_cast<int>(219 + (48 - 219) * t),
              b = static_cast<int>(239 + (107 - 239) * t);
    return fmt::format("rgb({},{},{})", r, g, b);
  };
  std::vector<std::string> legend;
  std::string low_text = any ? FormatValue(shade_lo, m.unit) : "-";
  legend.push_back(fmt::format("{} {}", has_floor ? "floor" : "lowest", low_text));
  legend.push_back(fmt::format("best {}", any ? FormatValue(shade_hi, m.unit) : "-"));
  if (has_floor)
    legend.push_back("below the floor" + (m.floor_label.empty() ? "" : " (" + m.floor_label + ")"));
  legend.push_back("not measured");
  const double width = std::max({left + grid + 16, TitleWidth(m.title) + 24, 360.0});
  const int legend_rows = LegendRows(legend, 8, width);
  const double height = top + grid + 14 + 16 * legend_rows + 10 + (labelled ? 0 : 16);
  std::string svg = Open(m.title, width, height);
  if (labelled) {
    for (size_t i = 0; i < n; ++i) {
      const double c = static_cast<double>(i) * cell + cell / 2;
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                         left - 6, top + c + 4, EscapeXml(m.labels[i]));
      svg += fmt::format(
          "<text x=\"0\" y=\"0\" text-anchor=\"start\" transform=\"translate({:.1f} {:.1f}) "
          "rotate(-90)\">{}</text>\n",
          left + c + 4, top - 6, EscapeXml(m.labels[i]));
    }
  }
  for (size_t i = 0; i < n && i < m.cells.size(); ++i) {
    for (size_t j = 0; j < n && j < m.cells[i].size(); ++j) {
      const double v = m.cells[i][j];
      std::string fill = "#dddddd", stroke = "#fff";
      if (!std::isnan(v)) {
        if (has_floor && v < m.floor) {
          fill = "#D55E00";
          stroke = "#000";
        } else {
          fill = blue(v);
        }
      }
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
          "stroke=\"{}\"><title>{} - {}: {}</title></rect>\n",
          left + static_cast<double>(j) * cell, top + static_cast<double>(i) * cell, cell, cell,
          fill, stroke, EscapeXml(m.labels[i]), EscapeXml(m.labels[j]),
          std::isnan(v) ? std::string("not measured") : EscapeXml(FormatValue(v, m.unit)));
    }
  }
  double y = top + grid + 18;
  if (!labelled) {
    svg += fmt::format("<text x=\"8\" y=\"{:.1f}\">{} nodes: hover a cell for its pair</text>\n", y,
                       n);
    y += 16;
  }
  Legend(
      legend, 8, y, width,
      [&](size_t k, double x, double yy) {
        const std::string fill = k == 0                ? blue(shade_lo)
                                 : k == 1              ? blue(shade_hi)
                                 : has_floor && k == 2 ? std::string("#D55E00")
                                                       : std::string("#dddddd");
        return fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\" "
            "stroke=\"#999\"/>\n",
            x + 1, yy - 5, fill);
      },
      &svg);
  return svg + "</svg>\n";
}

}  // namespace gpufleet::report
