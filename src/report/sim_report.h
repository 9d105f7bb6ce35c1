#pragma once
// `gpufleet sim` reports: the step-time breakdown and scaling curve, and the
// goodput simulation, as text, JSON (schemas gpufleet.sim-step/v1 and
// gpufleet.sim-goodput/v1) and self-contained HTML with SVG charts. Pure; thread-safe.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/spec.h"
#include "sim/goodput.h"
#include "sim/step.h"

namespace gpufleet::report {

struct SimStepReport {
  sim::StepBreakdown step;  // the spec's layout, or the search's best
  // --search: the fastest calibrated layout, when the best is outside calibration.
  std::optional<sim::StepBreakdown> calibrated;
  std::string title;                      // "spec layout" or "fastest layout (N evaluated)"
  std::vector<sim::StepBreakdown> sweep;  // empty without --sweep
  bool strong = false;
  std::string convention;  // "megatron" or "causal"
};

std::string SimStepText(const model::Spec& spec, const SimStepReport& r);
nlohmann::ordered_json SimStepJson(const model::Spec& spec, const SimStepReport& r);
std::string SimStepHtml(const model::Spec& spec, const SimStepReport& r);

struct SimGoodputReport {
  sim::GoodputInput input;
  sim::GoodputResult result;
  std::vector<sim::IntervalPoint> scan;  // goodput against the checkpoint interval
  double young_s = 0, daly_s = 0;        // with delta = the blocking time
  double tokens_per_s = 0;               // of the step model, to turn time into tokens
};

std::string SimGoodputText(const model::Spec& spec, const SimGoodputReport& r);
nlohmann::ordered_json SimGoodputJson(const model::Spec& spec, const SimGoodputReport& r);
std::string SimGoodputHtml(const model::Spec& spec, const SimGoodputReport& r);

}  // namespace gpufleet::report
