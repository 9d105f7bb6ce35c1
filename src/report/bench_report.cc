#include "report/bench_report.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>

#include "base/units.h"
#include "report/html.h"
#include "report/svg.h"
#include "report/table.h"

namespace gpufleet::report {
namespace {

std::string Gbs(double v) { return fmt::format("{:.2f}", v / 1e9); }

std::string Findings(const std::vector<bench::Finding>& findings) {
  if (findings.empty()) return "<p>No findings.</p>\n";
  std::string out = "<ul>\n";
  for (const auto& f : findings) {
    out +=
        fmt::format("<li class=\"{}\">{}: {}</li>\n", f.severity == "fail" ? "critical" : "warning",
                    f.severity, EscapeXml(f.message));
  }
  return out + "</ul>\n";
}

}  // namespace

std::string BenchCollectiveHtml(const bench::CollectiveReport& r) {
  std::string body = fmt::format("<h2>Verdict: {}</h2>\n", r.passed() ? "pass" : "fail");
  body += Findings(r.findings);
  std::map<bench::Op, std::vector<const bench::CollectiveRow*>> by_op;
  for (const auto& row : r.rows) by_op[row.op].push_back(&row);
  for (const auto& [op, rows] : by_op) {
    LineChart c;
    c.title = fmt::format("{}: bus bandwidth by message size", bench::OpName(op));
    c.x = {"message size", AxisUnit::kBytes, true, false};
    c.y = {"busbw", AxisUnit::kBytesPerSecond, false, true};
    Series measured{"measured", {}, {}, false},
        expected{"expected (" + rows.front()->expected_from + ")", {}, {}, false};
    for (const auto* row : rows) {
      measured.x.push_back(static_cast<double>(row->bytes));
      measured.y.push_back(row->busbw_bytes_per_s);
      if (row->expected_busbw_bytes_per_s > 0) {
        expected.x.push_back(static_cast<double>(row->bytes));
        expected.y.push_back(row->expected_busbw_bytes_per_s);
      }
    }
    c.series.push_back(std::move(measured));
    if (!expected.x.empty()) c.series.push_back(std::move(expected));
    body += fmt::format("<h2>{}</h2>\n{}", bench::OpName(op), RenderSvg(c));
    Table t({"size (B)", "count", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "#wrong", "p50 (us)",
             "p99 (us)", "slowest rank", "skew", "expected (GB/s)", "ratio"});
    for (const auto* row : rows) {
      t.AddRow({fmt::format("{}", row->bytes), fmt::format("{}", row->count),
                fmt::format("{:.1f}", row->time_s * 1e6), Gbs(row->algbw_bytes_per_s),
                Gbs(row->busbw_bytes_per_s), row->wrong < 0 ? "N/A" : fmt::format("{}", row->wrong),
                fmt::format("{:.1f}", row->p50_s * 1e6), fmt::format("{:.1f}", row->p99_s * 1e6),
                fmt::format("{}", row->slowest_rank), units::FormatPercent(row->skew),
                row->expected_busbw_bytes_per_s > 0 ? Gbs(row->expected_busbw_bytes_per_s) : "-",
                row->expected_busbw_bytes_per_s > 0 ? fmt::format("{:.2f}", row->ratio) : "-"});
    }
    body += t.Html();
  }
  return HtmlPage(
      "gpufleet bench collective",
      fmt::format("{} on {}, backend {} ({}), warm-up {}, iterations {}",
                  units::Plural(r.ranks, "rank", "ranks"), units::Plural(r.nodes, "node", "nodes"),
                  r.backend, r.device, r.warmup, r.iters),
      body);
}

std::string BenchPairsHtml(const bench::PairsReport& r) {
  HeatMap m;
  m.title = "Bandwidth per direction between node pairs (first pass)";
  m.unit = AxisUnit::kBytesPerSecond;
  m.floor = r.fraction * r.reference_bandwidth_bytes_per_s;
  m.floor_label = fmt::format("{:.0f} % of the reference", r.fraction * 100);
  for (int i = 0; i < r.ranks; ++i) {
    m.labels.push_back(fmt::format("{} {}", i, bench::HostOf(r.hosts, i)));
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  m.cells.assign(static_cast<size_t>(r.ranks),
                 std::vector<double>(static_cast<size_t>(r.ranks), nan));
  for (const auto& p : r.pairs) {
    if (p.retest) continue;
    m.cells[static_cast<size_t>(p.a)][static_cast<size_t>(p.b)] = p.bandwidth_bytes_per_s;
    m.cells[static_cast<size_t>(p.b)][static_cast<size_t>(p.a)] = p.bandwidth_bytes_per_s;
  }
  std::string body = fmt::format("<h2>Verdict: {}</h2>\n", r.passed() ? "pass" : "fail");
  std::vector<bench::Finding> f;
  for (const auto& v : r.verdicts) f.push_back({"fail", v.message});
  for (const auto& t : r.transients)
    f.push_back({"warn", bench::TransientPairMessage(r.hosts, t.first, t.second)});
  body += Findings(f);
  body += RenderSvg(m);
  Table t({"a", "b", "bandwidth (GB/s)", "latency (us)", "pass"});
  for (const auto& p : r.pairs) {
    t.AddRow({fmt::format("{}", p.a), fmt::format("{}", p.b), Gbs(p.bandwidth_bytes_per_s),
              fmt::format("{:.2f}", p.latency_s * 1e6), p.retest ? "second" : "first"});
  }
  body += t.Html();
  return HtmlPage(
      "gpufleet bench pairs",
      fmt::format("{}, {} B each way, {}/{} rounds, reference {} GB/s (median over nodes "
                  "of each node's median pair){}",
                  units::Plural(r.ranks, "rank", "ranks"), r.bytes, r.rounds_run, r.rounds_total,
                  Gbs(r.reference_bandwidth_bytes_per_s),
                  r.retest_reference_bandwidth_bytes_per_s > r.reference_bandwidth_bytes_per_s
                      ? fmt::format(", second pass {} GB/s ({:.0f} % of the lower median of "
                                    "its pairs with a known-good node)",
                                    Gbs(r.retest_reference_bandwidth_bytes_per_s), r.fraction * 100)
                      : ""),
      body);
}

std::string BenchStorageHtml(const bench::StorageReport& r) {
  std::string body = fmt::format("<h2>Verdict: {}</h2>\n", r.passed() ? "pass" : "fail");
  body += Findings(r.findings);
  Table t({"test", "result", "needed"});
  t.AddRow({"sequential write", units::FormatByteRate(r.write_bytes_per_s), "-"});
  t.AddRow(
      {"sequential read", units::FormatByteRate(r.read_bytes_per_s),
       r.read_needed_bytes_per_s > 0 ? units::FormatByteRate(r.read_needed_bytes_per_s) : "-"});
  t.AddRow({fmt::format("fsync ({} calls)", r.fsyncs),
            fmt::format("p50 {}, p99 {}", units::FormatTime(r.fsync.p50_s),
                        units::FormatTime(r.fsync.p99_s)),
            "-"});
  t.AddRow(
      {fmt::format("random 4 KiB reads ({} jobs)", r.jobs),
       fmt::format("{:.0f} IOPS, p99 {}", r.random_iops, units::FormatTime(r.random_read.p99_s)),
       "-"});
  t.AddRow({fmt::format("metadata ({} files)", r.metadata_files),
            fmt::format("{:.0f} creates/s, {:.0f} stats/s, {:.0f} unlinks/s", r.creates_per_s,
                        r.stats_per_s, r.unlinks_per_s),
            "-"});
  t.AddRow({fmt::format("checkpoint ({} in {} shards)",
                        units::FormatBytes(static_cast<double>(r.checkpoint_bytes)), r.shards),
            units::FormatTime(r.checkpoint_s),
            r.checkpoint_budget_s > 0 ? units::FormatTime(r.checkpoint_budget_s) : "-"});
  BarChart bars;
  bars.title = "Sequential throughput";
  bars.unit = AxisUnit::kBytesPerSecond;
  bars.bars = {{"write", {{"measured", r.write_bytes_per_s}}},
               {"read", {{"measured", r.read_bytes_per_s}}}};
  if (r.read_needed_bytes_per_s > 0) {
    bars.limit = r.read_needed_bytes_per_s;
    bars.limit_label = "read the training needs";
  }
  body += RenderSvg(bars) + t.Html();
  return HtmlPage("gpufleet bench storage",
                  fmt::format("{} ({}{}), {} file, {} blocks", r.path, r.filesystem,
                              r.direct ? ", O_DIRECT" : ", page cache: " + r.direct_note,
                              units::FormatBytes(static_cast<double>(r.file_bytes)),
                              units::FormatBytes(static_cast<double>(r.block_bytes))),
                  body);
}

std::string BenchGpuHtml(const std::vector<bench::GpuMeasurement>& m) {
  Table t({"GPU", "test", "measured", "catalog peak", "share", "floor", "pass"});
  BarChart bars;
  bars.title = "Measured share of the catalog peak";
  bars.unit = AxisUnit::kFraction;
  double floor = 0;
  for (const auto& x : m) {
    const std::string test = x.dtype.empty() ? x.test : x.test + " " + x.dtype;
    const bool flops = x.unit == "FLOP/s";
    auto fmt_value = [&](double v) {
      return flops ? fmt::format("{:.1f} TFLOP/s", v / 1e12) : units::FormatByteRate(v);
    };
    t.AddRow({fmt::format("{} {}", x.gpu, x.name), test, fmt_value(x.value),
              x.peak > 0 ? fmt_value(x.peak) : "-",
              x.peak > 0 ? units::FormatPercent(x.value / x.peak) : "-",
              x.peak > 0 ? units::FormatPercent(x.floor) : "-", x.passed() ? "yes" : "no"});
    if (x.peak > 0) {
      bars.bars.push_back({fmt::format("GPU{} {}", x.gpu, test), {{"share", x.value / x.peak}}});
      floor = std::max(floor, x.floor);
    }
  }
  bool passed = true;
  for (const auto& x : m) passed = passed && x.passed();
  std::string body = fmt::format("<h2>Verdict: {}</h2>\n", passed ? "pass" : "fail");
  if (!bars.bars.empty()) {
    bars.limit = floor;
    bars.limit_label = "the strictest floor";
    body += RenderSvg(bars);
  }
  body += t.Html();
  return HtmlPage("gpufleet bench gpu", "GEMM, HBM and host<->device bandwidth against the catalog",
                  body);
}

}  // namespace gpufleet::report
