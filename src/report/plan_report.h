#pragma once
// Renders a plan as text for people (aligned tables), Markdown, or JSON with
// the versioned schema documented in docs/schemas/plan-v1.md. Pure; thread-safe.

#include <nlohmann/json.hpp>
#include <string>

#include "model/spec.h"
#include "plan/plan.h"

namespace gpufleet::report {

inline constexpr const char* kPlanSchema = "gpufleet.plan/v1";

std::string PlanText(const model::Spec& spec, const plan::Plan& plan);
std::string PlanMarkdown(const model::Spec& spec, const plan::Plan& plan);
// A self-contained HTML page (inline CSS and SVG charts, no scripts).
std::string PlanHtml(const model::Spec& spec, const plan::Plan& plan);
nlohmann::ordered_json PlanJson(const model::Spec& spec, const plan::Plan& plan);

}  // namespace gpufleet::report
