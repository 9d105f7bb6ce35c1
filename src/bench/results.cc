#include "bench/results.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "base/units.h"

namespace gpufleet::bench {
namespace {

// The rule of thumb (docs/plan.md): a 4 MiB all-reduce slower than 30 ms means
// something is wrong with the fabric or NCCL's configuration, whatever the size.
constexpr uint64_t kRuleBytes = 4ull << 20;
constexpr double kRuleSeconds = 0.030;
constexpr double kSkewWarn = 0.20;

std::string Gbs(double bytes_per_s) { return fmt::format("{:.2f}", bytes_per_s / 1e9); }
std::string Us(double s) { return fmt::format("{:.1f}", s * 1e6); }

}  // namespace

bool NoFailures(const std::vector<Finding>& findings) {
  return std::none_of(findings.begin(), findings.end(),
                      [](const Finding& f) { return f.severity == "fail"; });
}

bool CollectiveReport::passed() const { return NoFailures(findings); }

std::string HostOf(const std::vector<std::string>& hosts, int rank) {
  return rank >= 0 && rank < static_cast<int>(hosts.size()) ? hosts[static_cast<size_t>(rank)]
                                                            : "?";
}

std::string TransientPairMessage(const std::vector<std::string>& hosts, int a, int b) {
  return fmt::format(
      "rank {} ({}) <-> rank {} ({}) was below the floor once and reached it when measured "
      "again: transient (contention on the path or a host), not judged",
      a, HostOf(hosts, a), b, HostOf(hosts, b));
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

void Judge(CollectiveReport* r) {
  r->findings.clear();
  for (auto& row : r->rows) {
    const std::string what = fmt::format("{} {} B", OpName(row.op), row.bytes);
    if (row.wrong > 0) {
      r->findings.push_back(
          {"fail", fmt::format("{}: {} wrong elements summed over the ranks (data corrupted in "
                               "transit or by a faulty device)",
                               what, row.wrong)});
    }
    if (row.expected_busbw_bytes_per_s > 0) {
      row.ratio = row.busbw_bytes_per_s / row.expected_busbw_bytes_per_s;
      if (row.bytes >= r->judge_from_bytes && row.ratio < r->threshold) {
        r->findings.push_back(
            {"fail", fmt::format("{}: busbw {} GB/s is {:.0f} % of the expected {} GB/s ({}); "
                                 "the threshold is {:.0f} %",
                                 what, Gbs(row.busbw_bytes_per_s), row.ratio * 100,
                                 Gbs(row.expected_busbw_bytes_per_s), row.expected_from,
                                 r->threshold * 100)});
      }
    }
    if (row.op == Op::kAllReduce && row.bytes == kRuleBytes && row.time_s > kRuleSeconds) {
      r->findings.push_back(
          {"fail", fmt::format("all_reduce 4 MiB took {} (over the 30 ms rule of thumb): check "
                               "the fabric and NCCL's transport",
                               units::FormatTime(row.time_s))});
    }
    if (r->ranks > 2 && row.skew > kSkewWarn && row.time_s > 1e-3) {
      r->findings.push_back(
          {"warn",
           fmt::format("{}: rank {} (host {}) is {:.0f} % slower than the median rank", what,
                       row.slowest_rank, HostOf(r->hosts, row.slowest_rank), row.skew * 100)});
    }
  }
}

std::string CollectiveText(const CollectiveReport& r) {
  std::string out;
  out += fmt::format(
      "# gpufleet bench collective: {} ranks on {} node{}, backend {} ({}), "
      "warmup {}, iters {}\n",
      r.ranks, r.nodes, r.nodes == 1 ? "" : "s", r.backend, r.device, r.warmup, r.iters);
  for (size_t i = 0; i < r.hosts.size(); ++i) {
    out += fmt::format("#  Rank {:3} on {}\n", i, r.hosts[i]);
  }
  out += "#\n";
  const bool expect = std::any_of(r.rows.begin(), r.rows.end(), [](const CollectiveRow& row) {
    return row.expected_busbw_bytes_per_s > 0;
  });
  out += fmt::format(
      "# {:>12} {:>12} {:>8} {:>6} {:>5} {:>10} {:>8} {:>8} {:>7} {:>10} {:>10} "
      "{:>8} {:>7}",
      "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "p50", "p99",
      "slowest", "skew");
  if (expect) out += fmt::format(" {:>9} {:>6}", "expected", "ratio");
  out += "\n";
  out += fmt::format(
      "# {:>12} {:>12} {:>8} {:>6} {:>5} {:>10} {:>8} {:>8} {:>7} {:>10} {:>10} "
      "{:>8} {:>7}",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "rank",
      "(%)");
  if (expect) out += fmt::format(" {:>9} {:>6}", "(GB/s)", "");
  out += "\n";
  Op last = r.rows.empty() ? Op::kAllReduce : r.rows.front().op;
  bool first = true;
  double busbw_sum = 0;
  int64_t wrong = 0;
  bool checked = false;
  for (const auto& row : r.rows) {
    if (first || row.op != last) out += fmt::format("# {}\n", OpName(row.op));
    first = false;
    last = row.op;
    out += fmt::format(
        "  {:>12} {:>12} {:>8} {:>6} {:>5} {:>10} {:>8} {:>8} {:>7} {:>10} {:>10} "
        "{:>8} {:>7.1f}",
        row.bytes, row.count, DataTypeName(row.type),
        IsReduction(row.op) ? std::string(RedOpName(row.redop)) : "none", row.root, Us(row.time_s),
        Gbs(row.algbw_bytes_per_s), Gbs(row.busbw_bytes_per_s),
        row.wrong < 0 ? std::string("N/A") : fmt::format("{}", row.wrong), Us(row.p50_s),
        Us(row.p99_s), row.slowest_rank, row.skew * 100);
    if (expect) {
      if (row.expected_busbw_bytes_per_s > 0) {
        out += fmt::format(" {:>9} {:>6.2f}", Gbs(row.expected_busbw_bytes_per_s), row.ratio);
      } else {
        out += fmt::format(" {:>9} {:>6}", "-", "-");
      }
    }
    out += "\n";
    busbw_sum += row.busbw_bytes_per_s;
    if (row.wrong >= 0) {
      wrong += row.wrong;
      checked = true;
    }
  }
  out += fmt::format("# Out of bounds values : {} {}\n", wrong,
                     !checked     ? "(not checked)"
                     : wrong == 0 ? "OK"
                                  : "FAILED");
  out += fmt::format("# Avg bus bandwidth    : {}\n",
                     r.rows.empty() ? "0" : Gbs(busbw_sum / static_cast<double>(r.rows.size())));
  for (const auto& f : r.findings) out += fmt::format("# {}: {}\n", f.severity, f.message);
  out += fmt::format("# verdict: {}\n", r.passed() ? "pass" : "fail");
  return out;
}

nlohmann::json CollectiveJson(const CollectiveReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows) {
    nlohmann::json j = {
        {"op", OpName(row.op)},
        {"bytes", row.bytes},
        {"count", row.count},
        {"type", DataTypeName(row.type)},
        {"redop", IsReduction(row.op) ? std::string(RedOpName(row.redop)) : "none"},
        {"root", row.root},
        {"time_s", row.time_s},
        {"algbw_bytes_per_s", row.algbw_bytes_per_s},
        {"busbw_bytes_per_s", row.busbw_bytes_per_s},
        {"p50_s", row.p50_s},
        {"p99_s", row.p99_s},
        {"max_s", row.max_s},
        {"slowest_rank", row.slowest_rank},
        {"skew", row.skew},
    };
    j["wrong"] = row.wrong < 0 ? nlohmann::json(nullptr) : nlohmann::json(row.wrong);
    if (row.expected_busbw_bytes_per_s > 0) {
      j["expected_busbw_bytes_per_s"] = row.expected_busbw_bytes_per_s;
      j["expected_from"] = row.expected_from;
      j["ratio"] = row.ratio;
    }
    rows.push_back(std::move(j));
  }
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"severity", f.severity}, {"message", f.message}});
  nlohmann::json doc = BenchDocument("collective", r.passed());
  doc.update({
      {"backend", r.backend},
      {"device", r.device},
      {"ranks", r.ranks},
      {"nodes", r.nodes},
      {"hosts", r.hosts},
      {"warmup", r.warmup},
      {"iters", r.iters},
      {"threshold", r.threshold},
      {"judge_from_bytes", r.judge_from_bytes},
      {"results", rows},
      {"findings", findings},
  });
  return doc;
}

nlohmann::json BenchDocument(const std::string& kind, bool passed) {
  return {
      {"schema", "gpufleet.bench/v1"},
      {"kind", kind},
      {"time",
       std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()},
      {"verdict", passed ? "pass" : "fail"}};
}

}  // namespace gpufleet::bench
