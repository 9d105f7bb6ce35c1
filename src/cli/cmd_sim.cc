#include "cli/cmd_sim.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "base/json.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "model/spec.h"
#include "plan/plan.h"
#include "report/sim_report.h"
#include "sim/goodput.h"
#include "sim/step.h"

namespace gpufleet::cli {

CLI::App* AddSimCommand(CLI::App& app, SimOptions* o) {
  CLI::App* cmd = app.add_subcommand(
      "sim", "Step time at any scale; goodput over weeks under failures and checkpoints");
  cmd->require_subcommand(1);
  auto common = [o](CLI::App* c) {
    c->add_option("SPEC", o->spec, "Cluster spec (YAML); default: the embedded reference cluster");
    c->add_option("--set", o->set, "Change a spec value, PATH=VALUE");
    c->add_option("--format", o->format, "Output format")
        ->check(CLI::IsMember({"text", "json", "html"}))
        ->capture_default_str();
    c->add_option("-o,--output", o->output, "Write the report to this file instead of stdout");
  };
  CLI::App* step =
      cmd->add_subcommand("step", "Step-time breakdown, MFU, scaling sweep, layout search");
  common(step);
  step->add_option("--sweep", o->sweep, "Scaling curve, gpus=FROM..TO (e.g. gpus=8..100000)");
  step->add_flag("--strong", o->strong, "Sweep with the global batch fixed (default: per replica)");
  step->add_option("--points", o->points, "Sweep points, log-spaced (default: powers of two)")
      ->check(CLI::Range(0, 1000));
  step->add_flag("--search", o->search, "Find the fastest layout that fits memory");
  step->add_option("--gpus", o->gpus, "GPUs for --search (default: the spec's)")
      ->check(CLI::Range(1, 10'000'000));
  step->add_option("--flops", o->flops,
                   "FLOP counting for MFU (default: the spec's workload.attention_flops, full = "
                   "megatron)")
      ->check(CLI::IsMember({"megatron", "causal"}));
  step->callback([o] { o->step_cmd = true; });
  CLI::App* gp =
      cmd->add_subcommand("goodput", "Goodput under failures, by discrete-event simulation");
  common(gp);
  gp->add_option("--days", o->days, "Horizon in days")->capture_default_str();
  gp->add_option("--trials", o->trials, "Simulated runs")->capture_default_str();
  gp->add_option("--seed", o->seed, "Random seed (same seed, same output)")->capture_default_str();
  gp->add_option("--interval", o->interval_min,
                 "Checkpoint interval in minutes (default: the spec's)")
      ->check(CLI::Range(0.0, 525600.0));
  gp->add_option("--spares", o->spares, "Hot spare nodes (default: the spec's)")
      ->check(CLI::Range(0, 100000000));
  gp->add_option(
      "--rate", o->rates,
      "Failure rate per node per day, CLASS=RATE (overrides a default class or adds one)");
  gp->add_flag("--no-failures", o->no_failures, "No failures: checkpoint overhead only");
  // Recovery and stragglers: the spec's reliability section (or its defaults) unless given.
  // CLI::Range with integer bounds validates as an integer and refuses 0.5 s or 0.01 per day.
  const CLI::Validator non_negative(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        return end != s.c_str() && *end == 0 && v >= 0 && v <= 1e9 ? "" : "want a number, 0 to 1e9";
      },
      "NUMBER >= 0");
  gp->add_option("--detect", o->detect_s, "Seconds to detect a failure")->check(non_negative);
  gp->add_option("--reschedule", o->reschedule_s, "Seconds to reschedule onto a spare")
      ->check(non_negative);
  gp->add_option("--reschedule-no-spare", o->reschedule_no_spare_s,
                 "Seconds to get a node without a spare")
      ->check(non_negative);
  gp->add_option("--init", o->init_s, "Seconds of process and NCCL initialisation")
      ->check(non_negative);
  gp->add_option("--warmup", o->warmup_s, "Seconds of warm-up after a restart")
      ->check(non_negative);
  gp->add_option("--checkpoint-block", o->block_s,
                 "Seconds training stops per checkpoint, measured (default: the plan's)")
      ->check(non_negative);
  gp->add_option("--checkpoint-write", o->write_s,
                 "Seconds an async checkpoint takes to persist, measured (default: the plan's)")
      ->check(non_negative);
  gp->add_option("--load", o->load_s,
                 "Seconds to load a checkpoint, measured (default: the plan's)")
      ->check(non_negative);
  gp->add_option("--stragglers", o->stragglers, "Throttling GPUs per node per day")
      ->check(non_negative);
  gp->add_option("--straggler-slowdown", o->straggler_slowdown, "Percent a straggler slows the job")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            return end != s.c_str() && *end == 0 && v >= 0 && v < 100 ? "" : "want 0 to under 100";
          },
          "PERCENT"));
  gp->add_option("--scan", o->scan, "Checkpoint intervals to simulate around Young's (0 = none)")
      ->check(CLI::Range(0, 200))
      ->capture_default_str();
  gp->callback([o] { o->goodput_cmd = true; });
  return cmd;
}

namespace {

// "gpus=8..100000" -> (8, 100000).
Result<std::pair<int, int>> ParseSweep(const std::string& s) {
  int from = 0, to = 0;
  if (std::sscanf(s.c_str(), "gpus=%d..%d", &from, &to) != 2 || from < 1 || to < from ||
      to > 10'000'000) {
    return InvalidArgument(fmt::format("--sweep {}: want gpus=FROM..TO, e.g. gpus=8..100000", s));
  }
  return std::make_pair(from, to);
}

int Emit(const SimOptions& o, const std::string& text) {
  if (Status s = WriteOutput(o.output, text); !s) return ReportError(s.error());
  return kExitOk;
}

int RunStep(const SimOptions& o, const model::Spec& spec) {
  // The spec's counting unless the command line names one (plan counts by the spec alike).
  const std::string flops = !o.flops.empty()                       ? o.flops
                            : spec.workload.causal_attention_flops ? "causal"
                                                                   : "megatron";
  const sim::AnalyticalStepModel model(flops == "causal" ? sim::FlopConvention::kCausal
                                                         : sim::FlopConvention::kMegatron);
  report::SimStepReport r;
  r.convention = flops;
  const int gpus = o.gpus > 0 ? o.gpus : spec.cluster.nodes.TotalGpus();
  if (o.search) {
    int n = 0;
    auto best = sim::Search(model, spec, gpus, &n, &r.calibrated);
    if (!best) return ReportError(best.error());
    r.step = *best;
    r.title = fmt::format("fastest layout on {} GPUs ({} layouts evaluated)", gpus, n);
  } else {
    auto step = model.Step(spec, sim::LayoutOf(spec), spec.cluster.nodes.TotalGpus());
    if (!step) return ReportError(step.error());
    r.step = *step;
    r.title = "the spec's layout";
  }
  if (!o.sweep.empty()) {
    auto range = ParseSweep(o.sweep);
    if (!range) return ReportError(range.error());
    r.strong = o.strong;
    r.sweep = sim::Sweep(model, spec, {range->first, range->second, o.strong, o.points});
  }
  if (o.format == "json") return Emit(o, DumpJson(report::SimStepJson(spec, r)));
  if (o.format == "html") return Emit(o, report::SimStepHtml(spec, r));
  return Emit(o, report::SimStepText(spec, r));
}

int RunGoodput(const SimOptions& o, const model::Spec& spec) {
  if (!(o.days > 0 && o.days <= 3650)) {
    return ReportError(InvalidArgument(fmt::format("--days {}: want 0 to 3650", o.days)));
  }
  if (o.trials < 1 || o.trials > 1'000'000) {
    return ReportError(InvalidArgument(fmt::format("--trials {}: want 1 to 1000000", o.trials)));
  }
  auto plan = plan::MakePlan(spec);
  if (!plan) return ReportError(plan.error());
  const plan::StoragePlan& st = plan->storage;
  sim::GoodputInput in;
  in.nodes = spec.cluster.nodes.count;
  in.horizon_s = o.days * 86400;
  in.trials = o.trials;
  in.seed = o.seed;
  in.interval_s = o.interval_min > 0 ? o.interval_min * 60 : spec.workload.checkpoint_interval_s;
  in.async = spec.workload.checkpoint_async;
  in.write_s = o.write_s >= 0 ? o.write_s : st.target_write_s;
  in.block_s = o.block_s >= 0 ? o.block_s : in.async ? st.snapshot_s : st.target_write_s;
  const model::Reliability& re = spec.cluster.reliability;
  auto pick = [](double flag, double spec_value) { return flag >= 0 ? flag : spec_value; };
  in.spares = o.spares >= 0 ? o.spares : re.spares;
  in.repair_s = re.repair_s;
  in.restart = {pick(o.detect_s, re.detect_s),
                pick(o.reschedule_s, re.reschedule_s),
                pick(o.reschedule_no_spare_s, re.reschedule_no_spare_s),
                pick(o.init_s, re.init_s),
                0,
                pick(o.warmup_s, re.warmup_s)};
  for (const auto& t : st.tiers) {
    if (t.tier == st.target_tier) in.restart.load_s = t.read_s;
  }
  if (o.load_s >= 0) in.restart.load_s = o.load_s;
  in.straggler_per_node_per_day = pick(o.stragglers, re.stragglers_per_node_per_day);
  in.straggler_slowdown =
      o.straggler_slowdown >= 0 ? o.straggler_slowdown / 100 : re.straggler_slowdown;
  in.straggler_detect_s = re.straggler_detect_s;
  if (!o.no_failures) in.classes = sim::DefaultFailureClasses();
  // The spec's rates, then --rate, each replacing a default class or adding one.
  auto set_rate = [&](const std::string& name, double rate) {
    auto it = std::find_if(in.classes.begin(), in.classes.end(),
                           [&](const auto& c) { return c.name == name; });
    if (it != in.classes.end()) {
      it->per_node_per_day = rate;
    } else {
      in.classes.push_back({name, rate, true});
    }
  };
  if (!o.no_failures) {
    for (const auto& [name, rate] : re.failures_per_node_per_day) set_rate(name, rate);
  }
  for (const auto& r : o.rates) {
    const size_t eq = r.find('=');
    char* end = nullptr;
    const double rate = eq == std::string::npos ? -1 : std::strtod(r.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || rate < 0 || end == r.c_str() + eq + 1 || *end) {
      return ReportError(InvalidArgument(
          fmt::format("--rate {}: want CLASS=FAILURES_PER_NODE_PER_DAY, e.g. gpu=0.002", r)));
    }
    set_rate(r.substr(0, eq), rate);
  }
  if (in.spares < 0) in.spares = sim::AutoSpares(in);
  report::SimGoodputReport r;
  r.input = in;
  r.result = sim::SimulateGoodput(in);
  if (o.scan > 0 && !in.classes.empty()) r.scan = sim::ScanIntervals(in, std::max(o.scan, 2));
  const double delta = std::max(in.block_s, 1.0);
  if (r.result.mtbf_s < 1e18) {
    r.young_s = sim::YoungInterval(delta, r.result.mtbf_s);
    r.daly_s = sim::DalyInterval(delta, r.result.mtbf_s);
  }
  const sim::AnalyticalStepModel model;
  if (auto step = model.Step(spec, sim::LayoutOf(spec), spec.cluster.nodes.TotalGpus())) {
    r.tokens_per_s = step->tokens_per_s;
  }
  if (o.format == "json") return Emit(o, DumpJson(report::SimGoodputJson(spec, r)));
  if (o.format == "html") return Emit(o, report::SimGoodputHtml(spec, r));
  return Emit(o, report::SimGoodputText(spec, r));
}

}  // namespace

int RunSim(const SimOptions& o) {
  Result<model::Spec> spec = model::LoadSpec(o.spec, o.set);
  if (!spec) return ReportError(spec.error());
  return o.step_cmd ? RunStep(o, *spec) : RunGoodput(o, *spec);
}

}  // namespace gpufleet::cli
