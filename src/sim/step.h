#pragma once
// Step time at any scale and the layout search, on the step model that `plan`
// uses too (plan/step_model.h): weak and strong scaling sweeps, and the fastest
// layout that fits memory. Pure; thread-safe.

#include <optional>
#include <vector>

#include "base/result.h"
#include "model/spec.h"
#include "plan/step_model.h"

namespace gpufleet::sim {

using plan::AnalyticalStepModel;
using plan::Confidence;
using plan::ConfidenceName;
using plan::Efficiency;
using plan::FlopConvention;
using plan::Layout;
using plan::LayoutOf;
using plan::StepBreakdown;
using plan::StepModel;

// Weak scaling (the per-replica batch fixed; the global batch grows with DP) or
// strong scaling (the spec's global batch fixed), for GPU counts from..to, each a
// multiple of the layout's model-parallel size and, above one node, of the node.
struct SweepOptions {
  int from = 8, to = 100000;
  bool strong = false;
  int points = 0;  // 0: powers of two
};
std::vector<StepBreakdown> Sweep(const StepModel& m, const model::Spec& spec,
                                 const SweepOptions& o);

// The fastest layout (TP, PP, CP, DP, micro-batch, interleaving, recompute) that
// fits memory on `gpus` GPUs, keeping the spec's global batch; kInvalidArgument
// when none fits. `evaluated` (optional) counts the layouts tried.
// `calibrated` (optional) gets the fastest layout whose regime is calibrated, when the fastest
// is not (and one fits): what --search offers beside a best that is outside calibration.
Result<StepBreakdown> Search(const StepModel& m, const model::Spec& spec, int gpus,
                             int* evaluated = nullptr,
                             std::optional<StepBreakdown>* calibrated = nullptr);

}  // namespace gpufleet::sim
