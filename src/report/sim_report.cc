#include "report/sim_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "base/units.h"
#include "report/html.h"
#include "report/svg.h"
#include "report/table.h"

namespace gpufleet::report {

namespace {

using nlohmann::ordered_json;
using units::FormatPercent;
using units::FormatTime;

std::string Pct(double x) { return fmt::format("{:.1f} %", x * 100); }

ordered_json RegimeJson(const plan::Regime& r) {
  return {{"confidence", plan::ConfidenceName(r.level)}, {"outside", r.reasons}};
}

// The pipeline rank whose micro-batch sets the step: the last (with the output layer and the
// loss), the first (holding a mixture of experts' dense layers) or the busiest (a layer more,
// with the split, or more MoE layers).
const char* SlowestRank(const sim::StepBreakdown& s) {
  if (s.LastStageSlowest()) return "last";
  return s.dense_layers > 0 && s.slowest_rank == 0 ? "first" : "busiest";
}

// What each pipeline rank builds, with the split the spec states, and which rank sets the step.
std::string PipelineRanksText(const sim::StepBreakdown& s) {
  const bool even = s.stage_layers == s.last_stage_layers;
  std::string text =
      even ? fmt::format(
                 "{} layers on each at most; the last also runs the output layer and the loss",
                 s.stage_layers)
           : fmt::format(
                 "{} layers on the busiest, {} on the last beside the output layer and "
                 "the loss",
                 s.stage_layers, s.last_stage_layers);
  if (s.dense_layers > 0) {
    text += fmt::format("; the {} dense layers come first, {} on the first rank", s.dense_layers,
                        s.first_stage_dense_layers);
  }
  if (!even || s.dense_layers > 0) text += fmt::format("; the {} sets the step", SlowestRank(s));
  if (s.dense_layers > 0) {
    text += fmt::format(" (rank {}, {} MoE layer{})", s.slowest_rank, s.slowest_moe_layers,
                        s.slowest_moe_layers == 1 ? "" : "s");
  }
  return text;
}

Table BreakdownTable(const sim::StepBreakdown& s) {
  Table t({"part", "time", "share"});
  auto row = [&](const char* name, double v) {
    if (v <= 0) return;
    t.AddRow({name, FormatTime(v), Pct(v / s.step_s)});
  };
  row("compute (forward + backward)", s.compute_s - s.recompute_s);
  row("recompute", s.recompute_s);
  row("compute slowed by hidden comm", s.contention_s);
  row("sharding casts and copies", s.sharding_copies_s);
  row("activation offload (exposed)", s.offload_s);
  row("tensor-parallel comm (exposed)", s.tp_comm_s);
  row("context-parallel comm (exposed)", s.cp_comm_s);
  row("expert-parallel all-to-all (exposed)", s.ep_comm_s);
  row("pipeline send/recv (exposed)", s.pp_comm_s);
  row("pipeline bubble", s.bubble_s);
  row("data-parallel comm (exposed)", s.dp_comm_s);
  row("optimizer", s.optimizer_s);
  row("step overhead", s.overhead_s);
  t.AddRow({"step", FormatTime(s.step_s), "100.0 %"});
  return t;
}

Table SummaryTable(const sim::StepBreakdown& s, const std::string& convention) {
  Table t = Table::KeyValue();
  t.AddRow({"layout", s.layout.Describe()});
  if (s.recompute_modules != model::Workload::RecomputeModules{}) {
    t.AddRow({"recompute", model::RecomputeLabel(s.layout.recompute, s.recompute_modules)});
  }
  t.AddRow({"GPUs", fmt::format("{}", s.layout.Gpus())});
  if (s.layout.pp > 1) t.AddRow({"pipeline ranks", PipelineRanksText(s)});
  t.AddRow({"micro-batches per step", fmt::format("{}", s.micro_batches)});
  t.AddRow({"step time", FormatTime(s.step_s)});
  t.AddRow({"tokens/s", units::FormatCount(s.tokens_per_s)});
  t.AddRow({"MFU", fmt::format("{} ({} FLOP counting)", Pct(s.mfu), convention)});
  t.AddRow({"HFU", Pct(s.hfu)});
  t.AddRow({"DP comm total / exposed",
            fmt::format("{} / {}", FormatTime(s.dp_comm_total_s), FormatTime(s.dp_comm_s))});
  t.AddRow({"memory per GPU", fmt::format("{} of {}{}", units::FormatBytes(s.memory_bytes),
                                          units::FormatBytes(s.memory_capacity_bytes),
                                          s.fits ? "" : "  DOES NOT FIT")});
  t.AddRow({"confidence", plan::RegimeText(s.regime)});
  return t;
}

Table SweepTable(const std::vector<sim::StepBreakdown>& sweep) {
  // Each point's memory: a point below the spec's size can need more than its GPUs hold (ZeRO's
  // and FSDP's states over fewer ranks), which its step time does not show.
  Table t({"GPUs", "DP", "global batch", "step", "tokens/s", "MFU", "exposed comm", "bubble",
           "memory per GPU"});
  for (const auto& s : sweep) {
    t.AddRow({fmt::format("{}", s.layout.Gpus()), fmt::format("{}", s.layout.dp),
              fmt::format("{}", s.micro_batches * s.layout.micro_batch * s.layout.dp),
              FormatTime(s.step_s), units::FormatCount(s.tokens_per_s), Pct(s.mfu),
              FormatTime(s.ExposedCommS()), FormatTime(s.bubble_s),
              units::FormatBytes(s.memory_bytes) + (s.fits ? "" : " DOES NOT FIT")});
  }
  return t;
}

ordered_json StepJson(const sim::StepBreakdown& s) {
  const sim::Layout& l = s.layout;
  return {
      {"layout",
       {{"tp", l.tp},
        {"pp", l.pp},
        {"cp", l.cp},
        {"dp", l.dp},
        {"micro_batch", l.micro_batch},
        {"virtual_stages", l.virtual_stages},
        {"recompute", model::RecomputeName(l.recompute)},
        {"recompute_modules", l.recompute == model::Recompute::kSelective
                                  ? ordered_json(s.recompute_modules.Names())
                                  : ordered_json::array()},
        {"recompute_layers", l.recompute_layers},
        {"strategy", model::StrategyName(l.strategy)},
        {"shard", model::StateShardRanks(l.strategy, l.shard, l.dp * l.cp)},
        {"ep", l.ep}}},
      {"pipeline", l.pp > 1 ? ordered_json{{"stage_layers", s.stage_layers},
                                           {"last_stage_layers", s.last_stage_layers},
                                           {"slowest_rank", SlowestRank(s)},
                                           {"dense_layers", s.dense_layers},
                                           {"first_stage_dense_layers", s.first_stage_dense_layers}}
                            : ordered_json()},
      {"gpus", l.Gpus()},
      {"micro_batches", s.micro_batches},
      {"step_s", s.step_s},
      {"compute_s", s.compute_s},
      {"recompute_s", s.recompute_s},
      {"tp_comm_exposed_s", s.tp_comm_s},
      {"cp_comm_exposed_s", s.cp_comm_s},
      {"ep_comm_exposed_s", s.ep_comm_s},
      {"pp_comm_exposed_s", s.pp_comm_s},
      {"dp_comm_exposed_s", s.dp_comm_s},
      {"dp_comm_total_s", s.dp_comm_total_s},
      {"contention_s", s.contention_s},
      {"sharding_copies_s", s.sharding_copies_s},
      {"offload_exposed_s", s.offload_s},
      {"bubble_s", s.bubble_s},
      {"optimizer_s", s.optimizer_s},
      {"overhead_s", s.overhead_s},
      {"tokens_per_s", s.tokens_per_s},
      {"model_flops_per_step", s.model_flops},
      {"mfu", s.mfu},
      {"hfu", s.hfu},
      {"memory_bytes_per_gpu", s.memory_bytes},
      {"memory_capacity_bytes", s.memory_capacity_bytes},
      {"fits", s.fits},
      {"regime", RegimeJson(s.regime)}};
}

}  // namespace

std::string SimStepText(const model::Spec& spec, const SimStepReport& r) {
  std::string out = fmt::format("Step time: {} ({})\n{}", spec.cluster.name, r.title,
                                SummaryTable(r.step, r.convention).Text());
  if (r.calibrated) {
    out += fmt::format(
        "\nThe fastest layout is outside calibration ({}). The fastest calibrated one: {}, step "
        "{} ({} slower)\n",
        plan::ConfidenceName(r.step.regime.level), r.calibrated->layout.Describe(),
        FormatTime(r.calibrated->step_s), Pct(r.calibrated->step_s / r.step.step_s - 1));
  }
  out += "\nBreakdown\n" + BreakdownTable(r.step).Text();
  if (!r.sweep.empty()) {
    out += fmt::format("\n{} scaling\n",
                       r.strong ? "Strong (global batch fixed)" : "Weak (per-replica batch fixed)");
    out += SweepTable(r.sweep).Text();
    // Strong scaling below a pipeline's worth of micro-batches a step runs plain 1F1B.
    std::vector<int> plain;
    for (const auto& pt : r.sweep) {
      if (pt.layout.virtual_stages < r.step.layout.virtual_stages)
        plain.push_back(pt.layout.Gpus());
    }
    if (!plain.empty()) {
      out += fmt::format(
          "Plain 1F1B (v1) at {} GPUs: fewer micro-batches a step than PP{}, which the "
          "interleaved schedule needs\n",
          fmt::join(plain, ", "), r.step.layout.pp);
    }
  }
  return out;
}

ordered_json SimStepJson(const model::Spec& spec, const SimStepReport& r) {
  ordered_json j;
  j["schema"] = "gpufleet.sim-step/v1";
  j["cluster"] = spec.cluster.name;
  j["flop_convention"] = r.convention;
  j["what"] = r.title;
  j["step"] = StepJson(r.step);
  j["fastest_calibrated"] = r.calibrated ? StepJson(*r.calibrated) : ordered_json(nullptr);
  ordered_json sweep = ordered_json::array();
  for (const auto& s : r.sweep) sweep.push_back(StepJson(s));
  j["sweep"] = sweep;
  j["sweep_kind"] = r.strong ? "strong" : "weak";
  return j;
}

std::string SimStepHtml(const model::Spec& spec, const SimStepReport& r) {
  std::string body =
      "<h2>" + EscapeXml(r.title) + "</h2>\n" + SummaryTable(r.step, r.convention).Html();
  BarChart bars;
  bars.title = "Step time breakdown";
  Bar b;
  b.label = r.step.layout.Describe();
  const auto& s = r.step;
  b.segments = {{"compute", s.compute_s - s.recompute_s},
                {"recompute", s.recompute_s},
                {"contention", s.contention_s},
                {"sharding copies", s.sharding_copies_s},
                {"activation offload", s.offload_s},
                {"TP comm", s.tp_comm_s},
                {"CP comm", s.cp_comm_s},
                {"EP all-to-all", s.ep_comm_s},
                {"PP send/recv", s.pp_comm_s},
                {"bubble", s.bubble_s},
                {"DP comm", s.dp_comm_s},
                {"optimizer + overhead", s.optimizer_s + s.overhead_s}};
  bars.bars.push_back(b);
  bars.unit = AxisUnit::kSeconds;
  body += RenderSvg(bars) + BreakdownTable(r.step).Html();
  if (!r.sweep.empty()) {
    LineChart c;
    c.title = r.strong ? "Strong scaling: MFU" : "Weak scaling: MFU";
    c.x = {"GPUs", AxisUnit::kCount, true, false};
    c.y = {"MFU", AxisUnit::kFraction, false, false, 0.1};
    Series mfu{"MFU", {}, {}, false};
    for (const auto& p : r.sweep) {
      mfu.x.push_back(p.layout.Gpus());
      mfu.y.push_back(p.mfu);
    }
    c.series.push_back(mfu);
    body += "<h2>Scaling</h2>\n" + RenderSvg(c) + SweepTable(r.sweep).Html();
  }
  return HtmlPage("gpufleet sim step: " + spec.cluster.name, "Spec: " + spec.file, body);
}

namespace {

// What the interval scan says: the optimum with its CI, the intervals within 0.1 % of it (the
// curve is flat near an optimum, and its exact place is noise), and the spec's own point.
struct ScanSummary {
  const sim::IntervalPoint* best = nullptr;
  const sim::IntervalPoint* spec = nullptr;
  double flat_lo = 0, flat_hi = 0;  // intervals within kFlat of the best
};
constexpr double kFlat = 0.001;

ScanSummary Summarise(const std::vector<sim::IntervalPoint>& scan) {
  ScanSummary s;
  if (scan.empty()) return s;
  s.best = &*std::max_element(scan.begin(), scan.end(),
                              [](const auto& a, const auto& b) { return a.mean < b.mean; });
  s.flat_lo = s.flat_hi = s.best->interval_s;
  for (const auto& p : scan) {
    if (p.spec) s.spec = &p;
    if (s.best->mean - p.mean <= kFlat) {
      s.flat_lo = std::min(s.flat_lo, p.interval_s);
      s.flat_hi = std::max(s.flat_hi, p.interval_s);
    }
  }
  return s;
}

std::string ScanVerdict(const SimGoodputReport& r, const ScanSummary& s) {
  std::string out =
      fmt::format("the optimum of the scan is {} ({} ± {}, 95 % CI)",
                  FormatTime(s.best->interval_s), Pct(s.best->mean), Pct(s.best->ci95));
  if (s.flat_hi > s.flat_lo) {
    out += fmt::format(
        "; any interval from {} to {} is within {:.1f} % of it, so the choice "
        "between them is free",
        FormatTime(s.flat_lo), FormatTime(s.flat_hi), kFlat * 100);
  }
  if (s.spec != nullptr) {
    out +=
        fmt::format("; the spec's {} gives {}", FormatTime(s.spec->interval_s), Pct(s.spec->mean));
  }
  return out + fmt::format(" (Young's formula {}, Daly's {})", FormatTime(r.young_s),
                           FormatTime(r.daly_s));
}

Table ScanTable(const std::vector<sim::IntervalPoint>& scan, const ScanSummary& s) {
  Table t({"interval", "goodput", "95 % CI", ""});
  for (const auto& p : scan) {
    std::string mark;
    if (&p == s.best) mark = "optimum";
    if (p.spec) mark += mark.empty() ? "the spec's" : ", the spec's";
    // Two decimals: the points of a scan differ by hundredths of a percent.
    t.AddRow({FormatTime(p.interval_s), fmt::format("{:.2f} %", p.mean * 100),
              fmt::format("± {:.2f} %", p.ci95 * 100), mark});
  }
  return t;
}

Table GoodputSummary(const model::Spec& spec, const SimGoodputReport& r) {
  const auto& in = r.input;
  const auto& g = r.result;
  Table t = Table::KeyValue();
  t.AddRow({"cluster", spec.cluster.name});
  t.AddRow({"job", fmt::format("{}, {}, {}, seed {}", units::Plural(in.nodes, "node", "nodes"),
                               units::Plural(in.horizon_s / 86400, "day", "days"),
                               units::Plural(in.trials, "trial", "trials"), in.seed)});
  t.AddRow({"job MTBF", g.mtbf_s < 1e18 ? FormatTime(g.mtbf_s) : "no failures"});
  if (!in.classes.empty()) {
    const double days = in.horizon_s / 86400;
    t.AddRow({"interruptions", fmt::format("{:.2f} unexpected a day ({:.1f} in {}), {:.2f} "
                                           "planned a day; counted in elapsed time",
                                           g.unexpected_per_day, g.unexpected_per_day * days,
                                           units::Plural(days, "day", "days"), g.planned_per_day)});
    const auto& rc = in.restart;
    t.AddRow({"recovery",
              fmt::format("detect {}, reschedule {} (onto one of {}) or {} without one, init {}, "
                          "load {}, warm-up {}",
                          FormatTime(rc.detect_s), FormatTime(rc.reschedule_spare_s),
                          units::Plural(in.spares, "spare", "spares"),
                          FormatTime(rc.reschedule_no_spare_s), FormatTime(rc.init_s),
                          FormatTime(rc.load_s), FormatTime(rc.warmup_s))});
  }
  t.AddRow({"checkpoint", fmt::format("every {} of training, {} blocking{}",
                                      FormatTime(in.interval_s), FormatTime(in.block_s),
                                      in.async ? fmt::format(", upload {}", FormatTime(in.write_s))
                                               : " (synchronous)")});
  t.AddRow({"effective training time",
            fmt::format("{:.2f} % ± {:.2f} % (95 % CI; min {:.2f} %, max {:.2f} %)", g.mean * 100,
                        g.ci95 * 100, g.min * 100, g.max * 100)});
  t.AddRow({"checkpoint overhead", Pct(g.checkpoint_overhead)});
  if (in.straggler_per_node_per_day > 0) t.AddRow({"straggler slowdown", Pct(g.straggler_loss)});
  if (r.tokens_per_s > 0) {
    t.AddRow({"tokens trained", units::FormatCount(g.mean * in.horizon_s * r.tokens_per_s)});
  }
  return t;
}

Table CauseTable(const sim::GoodputResult& g) {
  Table c({"cause", "interruptions/day", "work lost h/day", "downtime h/day"});
  for (const auto& x : g.causes) {
    c.AddRow({x.name, fmt::format("{:.2f}", x.interruptions_per_day),
              fmt::format("{:.2f}", x.lost_work_h_per_day),
              fmt::format("{:.2f}", x.downtime_h_per_day)});
  }
  return c;
}

constexpr const char* kGoodputDefinition =
    "effective training time: useful training over elapsed time, as Llama 3 and MegaScale "
    "define it";

}  // namespace

std::string SimGoodputText(const model::Spec& spec, const SimGoodputReport& r) {
  std::string out =
      fmt::format("Goodput: {}\n{}", spec.cluster.name, GoodputSummary(spec, r).Text());
  out += fmt::format("  ({})\n", kGoodputDefinition);
  if (Table c = CauseTable(r.result); !c.empty()) out += "\nBy cause\n" + c.Text();
  if (!r.scan.empty()) {
    const ScanSummary s = Summarise(r.scan);
    out +=
        "\nCheckpoint interval\n" + ScanTable(r.scan, s).Text() + "  " + ScanVerdict(r, s) + "\n";
  }
  return out;
}

ordered_json SimGoodputJson(const model::Spec& spec, const SimGoodputReport& r) {
  const auto& in = r.input;
  const auto& g = r.result;
  ordered_json j;
  j["schema"] = "gpufleet.sim-goodput/v1";
  j["cluster"] = spec.cluster.name;
  j["input"] = {{"nodes", in.nodes},     {"days", in.horizon_s / 86400}, {"trials", in.trials},
                {"seed", in.seed},       {"interval_s", in.interval_s},  {"async", in.async},
                {"block_s", in.block_s}, {"write_s", in.write_s},        {"spares", in.spares}};
  ordered_json classes = ordered_json::array();
  for (const auto& c : in.classes) {
    classes.push_back({{"name", c.name},
                       {"per_node_per_day", c.per_node_per_day},
                       {"needs_node", c.needs_node},
                       {"planned", c.planned}});
  }
  j["input"]["failure_classes"] = classes;
  j["input"]["recovery"] = {{"detect_s", in.restart.detect_s},
                            {"reschedule_spare_s", in.restart.reschedule_spare_s},
                            {"reschedule_no_spare_s", in.restart.reschedule_no_spare_s},
                            {"init_s", in.restart.init_s},
                            {"load_s", in.restart.load_s},
                            {"warmup_s", in.restart.warmup_s},
                            {"repair_s", in.repair_s}};
  j["unexpected_interruptions_per_day"] = g.unexpected_per_day;
  j["planned_interruptions_per_day"] = g.planned_per_day;
  j["goodput"] = {
      {"mean", g.mean}, {"ci95", g.ci95}, {"stdev", g.stdev}, {"min", g.min}, {"max", g.max}};
  j["checkpoint_overhead"] = g.checkpoint_overhead;
  j["straggler_loss"] = g.straggler_loss;
  j["mtbf_s"] = g.mtbf_s < 1e18 ? ordered_json(g.mtbf_s) : ordered_json(nullptr);
  ordered_json causes = ordered_json::array();
  for (const auto& c : g.causes) {
    causes.push_back({{"cause", c.name},
                      {"interruptions_per_day", c.interruptions_per_day},
                      {"lost_work_h_per_day", c.lost_work_h_per_day},
                      {"downtime_h_per_day", c.downtime_h_per_day}});
  }
  j["causes"] = causes;
  j["young_interval_s"] = r.young_s;
  j["daly_interval_s"] = r.daly_s;
  ordered_json scan = ordered_json::array();
  for (const auto& p : r.scan)
    scan.push_back(
        {{"interval_s", p.interval_s}, {"mean", p.mean}, {"ci95", p.ci95}, {"spec", p.spec}});
  j["interval_scan"] = scan;
  return j;
}

std::string SimGoodputHtml(const model::Spec& spec, const SimGoodputReport& r) {
  std::string body = "<h2>Summary</h2>\n" + GoodputSummary(spec, r).Html() + "<p>" +
                     EscapeXml(std::string(kGoodputDefinition)) + "</p>\n";
  if (Table c = CauseTable(r.result); !c.empty()) body += "<h2>By cause</h2>\n" + c.Html();
  if (!r.scan.empty()) {
    const ScanSummary s = Summarise(r.scan);
    LineChart c;
    c.title = "Goodput against the checkpoint interval";
    c.x = {"checkpoint interval", AxisUnit::kSeconds, true, false};
    c.y = {"goodput", AxisUnit::kFraction, false, false};
    Series mean{"simulated goodput", {}, {}, false};
    Series lo{"95 % CI, low", {}, {}, false}, hi{"95 % CI, high", {}, {}, false};
    Series spec_point{"the spec's interval", {}, {}, true};
    for (const auto& p : r.scan) {
      mean.x.push_back(p.interval_s);
      mean.y.push_back(p.mean);
      lo.x.push_back(p.interval_s);
      lo.y.push_back(p.mean - p.ci95);
      hi.x.push_back(p.interval_s);
      hi.y.push_back(p.mean + p.ci95);
      if (p.spec) {
        spec_point.x.push_back(p.interval_s);
        spec_point.y.push_back(p.mean);
      }
    }
    c.series = {mean, lo, hi};
    if (!spec_point.x.empty()) c.series.push_back(spec_point);
    body += "<h2>Checkpoint interval</h2>\n<p>" + EscapeXml(ScanVerdict(r, s)) + "</p>\n" +
            RenderSvg(c) + ScanTable(r.scan, s).Html();
  }
  // One simulated trial: each interruption as a point (they are events, not a trend).
  LineChart tl;
  tl.title = "One simulated run: work lost at each interruption";
  tl.x = {"wall time", AxisUnit::kSeconds, false, true};
  tl.y = {"work lost", AxisUnit::kSeconds, false, true};
  Series lost{"interruptions", {}, {}, true};
  Table events({"wall time", "event", "work lost"});
  for (const auto& e : r.result.timeline) {
    if (e.kind != "failure" && e.kind != "restart") continue;
    lost.x.push_back(e.t_s);
    lost.y.push_back(e.lost_s);
    events.AddRow({FormatTime(e.t_s), e.kind, FormatTime(e.lost_s)});
  }
  if (!lost.x.empty()) {
    tl.series.push_back(lost);
    body += fmt::format(
                "<h2>One simulated run</h2>\n<p>{} in {}.</p>\n",
                units::Plural(static_cast<double>(lost.x.size()), "interruption", "interruptions"),
                units::Plural(r.input.horizon_s / 86400, "day", "days")) +
            RenderSvg(tl) + events.Html();
  }
  return HtmlPage("gpufleet sim goodput: " + spec.cluster.name, "Spec: " + spec.file, body);
}

}  // namespace gpufleet::report
