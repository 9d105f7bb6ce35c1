// In-process cost of the planning pipeline on each example: parse + validate the spec, plan,
// and render JSON. Run: build/release/perf/plan_benchmark --benchmark_repetitions=10
//   --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <string>

#include "model/spec.h"
#include "plan/plan.h"
#include "report/plan_report.h"

namespace {

const std::string kExamples = std::string(GPUFLEET_SOURCE_DIR) + "/examples/";

void BM_LoadSpec(benchmark::State& state, const std::string& file) {
  for (auto _ : state) {
    auto spec = gpufleet::model::LoadSpecFile(kExamples + file);
    benchmark::DoNotOptimize(spec);
  }
}

void BM_Plan(benchmark::State& state, const std::string& file) {
  auto spec = gpufleet::model::LoadSpecFile(kExamples + file);
  for (auto _ : state) {
    auto plan = gpufleet::plan::MakePlan(*spec);
    benchmark::DoNotOptimize(plan);
  }
}

void BM_PlanAndRenderJson(benchmark::State& state, const std::string& file) {
  auto spec = gpufleet::model::LoadSpecFile(kExamples + file);
  for (auto _ : state) {
    auto plan = gpufleet::plan::MakePlan(*spec);
    std::string out = gpufleet::report::PlanJson(*spec, *plan).dump(2);
    benchmark::DoNotOptimize(out);
  }
}

BENCHMARK_CAPTURE(BM_LoadSpec, reference_32gpu, "reference-32gpu.yaml");
BENCHMARK_CAPTURE(BM_LoadSpec, h100_16384gpu, "h100-16384gpu.yaml");
BENCHMARK_CAPTURE(BM_Plan, reference_32gpu, "reference-32gpu.yaml");
BENCHMARK_CAPTURE(BM_Plan, h100_16384gpu, "h100-16384gpu.yaml");
BENCHMARK_CAPTURE(BM_PlanAndRenderJson, h100_16384gpu, "h100-16384gpu.yaml");

}  // namespace

BENCHMARK_MAIN();
