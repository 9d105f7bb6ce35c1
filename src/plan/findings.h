#pragma once
// Findings: where the spec breaks practice or physics, each with a severity,
// the number behind it, the limit it was judged against, and what to do.
// Rules of thumb are computed for this spec, not repeated (DESIGN.md).

#include <string>
#include <string_view>
#include <vector>

namespace gpufleet::plan {

enum class Severity { kInfo, kWarning, kCritical };
std::string_view SeverityName(Severity s);

struct Finding {
  Severity severity = Severity::kInfo;
  std::string id;         // stable rule id, e.g. "storage.checkpoint-over-2min"
  std::string component;  // memory, compute, network, storage, power, fabric, cost, spec
  std::string message;    // what is wrong, with the numbers
  double value = 0;       // the number behind it, in `unit`
  double limit = 0;       // what it was judged against, in `unit`
  std::string unit;       // "s", "B", "W", "fraction", "count", ...
  std::string action;     // what to change
};

struct Plan;

}  // namespace gpufleet::plan

namespace gpufleet::model {
struct Spec;
}  // namespace gpufleet::model

namespace gpufleet::plan {
// Evaluates every rule against the spec and its plan; most severe first.
std::vector<Finding> Evaluate(const model::Spec& spec, const Plan& plan);
}  // namespace gpufleet::plan
