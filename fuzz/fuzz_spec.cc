// Fuzz target: a cluster spec (YAML) with --set overrides, parsed, validated, and when valid
// planned and rendered as JSON, so a value that passes validation and overflows later is found.
// Input: lines starting "#set PATH=VALUE" are overrides; the whole input is the YAML.
#include "base/json.h"
#include "fuzz/fuzz_common.h"
#include "model/spec.h"
#include "plan/plan.h"
#include "report/plan_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpufleet;
  const std::string_view text = fuzz::Text(data, size);
  std::vector<model::SpecOverride> overrides;
  size_t at = 0;
  while (at < text.size() && text.compare(at, 5, "#set ") == 0 && overrides.size() < 8) {
    const size_t nl = text.find('\n', at);
    auto o =
        model::ParseOverride(text.substr(at + 5, nl == std::string_view::npos ? nl : nl - at - 5));
    if (o) overrides.push_back(*o);
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  auto spec = model::ParseSpec(text, "fuzz.yaml", overrides);
  if (!spec) return 0;
  auto plan = plan::MakePlan(*spec);
  if (plan) (void)DumpJson(report::PlanJson(*spec, *plan));
  return 0;
}
