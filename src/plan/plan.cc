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
    return InvalidArgument(spec.Where(
        "workload.model",
        fmt::format("{} parameters need {} per GPU even fully sharded (zero3) with full "
                    "activation checkpointing at micro-batch 1; the {} has {}: add GPUs, tensor "
                    "or pipeline parallelism, or a larger GPU",
                    units::FormatCount(p.memory.params.total), units::FormatBytes(m.total_bytes),
                    spec.cluster.nodes.gpu.name, units::FormatBytes(m.capacity_bytes))));
  }
  p.compute = PlanCompute(spec);
  p.comm = PlanComm(spec, p.compute);
  p.storage = PlanStorage(spec, p.comm.step.step_s);
  p.fabric = PlanFabric(spec);
  p.power = PlanPower(spec, p.fabric.power_w);
  p.cost = PlanCost(spec, p.comm.step.tokens_per_s, p.power.it_load_w, p.power.it_idle_w,
                    p.fabric.cost_usd, p.fabric.priced);
  p.findings = Evaluate(spec, p);
  return p;
}

}  // namespace gpufleet::plan
