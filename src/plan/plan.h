#pragma once
// The whole plan of a spec: memory, compute, communication, storage, power,
// fabric, cost and findings. Pure; thread-safe.

#include <string>
#include <vector>

#include "base/result.h"
#include "model/spec.h"
#include "plan/comm.h"
#include "plan/compute.h"
#include "plan/cost.h"
#include "plan/fabric.h"
#include "plan/findings.h"
#include "plan/memory.h"
#include "plan/power.h"
#include "plan/step_model.h"
#include "plan/storage.h"

namespace gpufleet::plan {

struct Plan {
  MemoryPlan memory;
  ComputePlan compute;
  CommPlan comm;  // traffic and its times with compute at the spec's stated MFU
  // The expected step: the step model's (plan/step_model.h), as `sim step` predicts it.
  // Without one (a layout it cannot evaluate) it is comm.step's, at the stated MFU, and
  // step_model_error says why.
  StepBreakdown step;
  std::string step_model_error;
  StoragePlan storage;
  FabricPlan fabric;
  PowerPlan power;
  CostPlan cost;
  std::vector<Finding> findings;

  bool HasCritical() const;
};

// Plans `spec`. Fails (kInvalidArgument, with the spec's file:line:column) when
// the model fits no GPU even fully sharded with full recomputation at
// micro-batch 1: no plan is meaningful then.
Result<Plan> MakePlan(const model::Spec& spec);

}  // namespace gpufleet::plan
