#include "plan/plan.h"

#include <fmt/format.h>

#include "base/units.h"

namespace gpufleet::plan {

bool Plan::HasCritical() const {
  for (const auto& f : findings) {
    if (f.severity == Severity::kCritical) return true;
  }
  return false;
}

Result<Plan> MakePlan(const model::Spec& spec) {
  Plan p;
  p.memory = PlanMemory(spec);
  if (!p.memory.minimum.fits) {
    const auto& m = p.memory.minimum;
    const int nodes = MinimumNodes(spec);
    const std::string fix =
        nodes > 0 ? fmt::format(
                        "it needs at least {} GPUs ({} nodes) at tensor {} x pipeline {}, or "
                        "more tensor or pipeline parallelism, or a larger GPU",
                        nodes * spec.cluster.nodes.gpus_per_node, nodes, spec.workload.tensor,
                        spec.workload.pipeline)
                  : fmt::format(
                        "no GPU count is enough at tensor {} x pipeline {} (one micro-batch's "
                        "activations alone exceed the GPU): raise tensor or pipeline "
                        "parallelism, shorten the sequence, or use a larger GPU",
                        spec.workload.tensor, spec.workload.pipeline);
    return InvalidArgument(spec.Where(
        "workload.model",
        fmt::format("{} parameters need {} per GPU even fully sharded (zero3) with full "
                    "activation checkpointing at micro-batch 1; the {} has {}: {}",
                    units::FormatCount(p.memory.params.total), units::FormatBytes(m.total_bytes),
                    spec.cluster.nodes.gpu.name, units::FormatBytes(m.capacity_bytes), fix)));
  }
  p.compute = PlanCompute(spec);
  p.comm = PlanComm(spec, p.compute);
  // MFU by the spec's FLOP counting, as the compute section's FLOPs per token.
  const AnalyticalStepModel step_model(
      spec.workload.causal_attention_flops ? FlopConvention::kCausal : FlopConvention::kMegatron);
  if (auto st = step_model.Step(spec, LayoutOf(spec), spec.TotalGpus())) {
    p.step = *st;
  } else {
    p.step_model_error = st.error().message;
    const StepTime& at_mfu = p.comm.step;
    p.step.layout = LayoutOf(spec);
    p.step.compute_s = at_mfu.compute_s;
    p.step.bubble_s = at_mfu.bubble_s;
    p.step.dp_comm_s = at_mfu.exposed_comm_s;
    p.step.step_s = at_mfu.step_s;
    p.step.tokens_per_s = at_mfu.tokens_per_s;
    p.step.mfu = at_mfu.effective_mfu;
  }
  p.storage = PlanStorage(spec, p.step.step_s);
  p.fabric = PlanFabric(spec);
  p.power = PlanPower(spec, p.fabric.power_w);
  p.cost = PlanCost(spec, p.step.tokens_per_s, p.power.it_load_w, p.power.it_idle_w,
                    p.fabric.cost_usd, p.fabric.priced);
  p.findings = Evaluate(spec, p);
  return p;
}

}  // namespace gpufleet::plan
