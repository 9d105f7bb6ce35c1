#include "sim/step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

namespace gpufleet::sim {

std::vector<StepBreakdown> Sweep(const StepModel& model, const model::Spec& spec,
                                 const SweepOptions& o) {
  std::vector<StepBreakdown> out;
  const Layout base = LayoutOf(spec);
  const int mp = base.tp * base.pp * base.cp;
  const int gpn = spec.cluster.nodes.gpus_per_node;
  const int per_replica = spec.workload.global_batch / std::max(1, base.dp);
  std::vector<int> counts;
  if (o.points > 1) {
    for (int i = 0; i < o.points; ++i) {
      counts.push_back(static_cast<int>(
          std::lround(o.from * std::pow(static_cast<double>(o.to) / o.from,
                                        static_cast<double>(i) / (o.points - 1)))));
    }
  } else {
    for (long long g = o.from; g <= o.to; g *= 2) counts.push_back(static_cast<int>(g));  // NOLINT
    if (counts.empty() || counts.back() != o.to) counts.push_back(o.to);
  }
  for (int g : counts) {
    // Round to a whole number of model-parallel groups and, above a node, of nodes.
    const int unit = g >= gpn ? std::lcm(mp, gpn) : mp;
    g = std::max(unit, g / unit * unit);
    if (!out.empty() && out.back().layout.Gpus() == g) continue;
    model::Spec s = spec;
    const int dp = g / mp;
    if (!o.strong) s.workload.global_batch = per_replica * dp;
    s.cluster.nodes.count = std::max(1, g / gpn);
    Layout l = base;
    l.shard = std::gcd(l.shard, dp * base.cp);  // a hybrid shard group as the count allows
    // Strong scaling leaves fewer micro-batches a step as DP grows: below a pipeline's worth the
    // interleaved schedule does not run (Megatron-Core), and the point runs plain 1F1B, as its
    // layout says.
    const int per_step = dp * l.micro_batch;
    if (per_step > 0 &&
        !model::InterleavingRuns(l.virtual_stages, l.pp, s.workload.global_batch / per_step)) {
      l.virtual_stages = 1;
    }
    auto r = model.Step(s, l, g);
    if (r) out.push_back(*r);
  }
  return out;
}

Result<StepBreakdown> Search(const StepModel& model, const model::Spec& spec, int gpus,
                             int* evaluated, std::optional<StepBreakdown>* calibrated) {
  const auto& m = spec.workload.model;
  const int gpn = spec.cluster.nodes.gpus_per_node;
  const int global = spec.workload.global_batch;
  model::Spec s = spec;
  s.cluster.nodes.count = std::max(1, gpus / gpn);
  // A layout the search proposes runs TP with sequence parallelism: a free choice, never slower.
  s.workload.sequence_parallel = true;
  const int domain = s.cluster.ScaleUpDomain();  // a hybrid candidate shards in one
  const model::PipelineSplit split = spec.workload.pipeline_split;
  std::optional<StepBreakdown> best, best_calibrated;
  int n = 0;
  for (int tp = 1; tp <= std::min(gpn, gpus); tp *= 2) {
    if (m.heads % tp) continue;
    for (int cp = 1; cp <= 16 && tp * cp <= gpus; cp *= 2) {
      if (m.sequence % cp || (cp > 1 && m.sequence < 8192)) continue;
      for (int pp = 1; pp <= std::min(m.layers, 128) && tp * cp * pp <= gpus; ++pp) {
        if (m.layers < pp || gpus % (tp * cp * pp)) continue;
        const int dp = gpus / (tp * cp * pp);
        for (int mb = 1; mb <= 16; mb *= 2) {
          if (global % (dp * mb)) continue;
          // Plain 1F1B wherever the split fits (uneven stages too); interleaving with every
          // chunk count that splits each rank's share evenly (as the production recipes do: 3,
          // 8, 12) and a pipeline's worth of micro-batches a step (Megatron-Core's rules).
          auto runs = [&](int v) {
            if (v == 1) return model::PipelineSplitFits(m.layers, pp, 1, split);
            return pp > 1 && model::InterleavingRuns(v, pp, global / (dp * mb)) &&
                   model::InterleavingEven(m.layers, pp, v, split);
          };
          for (int v = 1; v <= (m.layers + split.Counted()) / pp; ++v) {
            if (!runs(v)) continue;
            for (auto rc :
                 {model::Recompute::kNone, model::Recompute::kSelective, model::Recompute::kFull}) {
              for (auto st : {model::Strategy::kZero1, model::Strategy::kFsdp}) {
                // Expert parallel for a mixture of experts: powers of two dividing the experts
                // and DP x CP (x TP, with expert TP 1).
                for (int ep = 1; ep == 1 || (m.IsMoe() && ep <= m.moe.experts); ep *= 2) {
                  if (m.IsMoe() && (m.moe.experts % ep || (dp * cp * tp) % ep)) break;
                  // FSDP sharded over every rank, and hybrid: sharded inside a scale-up domain
                  // (its DP x CP ranks: a node, or an NVL72 rack), replicated across them.
                  const int node_shard = domain / tp;
                  // With EP the shard group must hold whole EP x ETP groups.
                  const bool hybrid =
                      st == model::Strategy::kFsdp && node_shard > 1 && node_shard < dp * cp &&
                      (dp * cp) % node_shard == 0 &&
                      model::ExpertsFitShardGroup(node_shard, tp, dp * cp, ep) &&
                      spec.workload.sharding_impl != model::ShardingImpl::kDeepSpeed;
                  for (int shard : {0, node_shard}) {
                    if (shard > 0 && !hybrid) break;
                    Layout l{tp, pp, cp, dp, mb, v, rc, st, ep, shard};
                    auto r = model.Step(s, l, gpus);
                    ++n;
                    if (!r || !r->fits) continue;
                    if (!best || r->step_s < best->step_s) best = *r;
                    if (r->regime.level == Confidence::kCalibrated &&
                        (!best_calibrated || r->step_s < best_calibrated->step_s)) {
                      best_calibrated = *r;
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  if (evaluated) *evaluated = n;
  if (calibrated) {
    calibrated->reset();
    if (best && best->regime.level != Confidence::kCalibrated) *calibrated = best_calibrated;
  }
  if (!best) {
    return InvalidArgument(fmt::format(
        "no layout of {} GPUs fits the model in memory with global batch {}", gpus, global));
  }
  return *best;
}

}  // namespace gpufleet::sim
