// `sim step`'s text report: what a sweep tells the reader about each point.
#include "report/sim_report.h"

#include <gtest/gtest.h>

#include <string>

#include "model/spec.h"
#include "sim/step.h"

namespace gpufleet::report {
namespace {

// A weak-scaling sweep of the one-node example from 1 GPU: FSDP's states over 1 and 2 ranks do
// not fit an 80 GB GPU, which the step times alone do not show; each row says its memory, and
// the points that do not fit say so.
TEST(SimReportTest, SweepRowsSayWhatDoesNotFit) {
  auto spec =
      model::LoadSpecFile(std::string(GPUFLEET_SOURCE_DIR) + "/examples/h100-8gpu-box.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  const sim::AnalyticalStepModel model(sim::FlopConvention::kMegatron, sim::Efficiency{});
  auto step = model.Step(*spec, sim::LayoutOf(*spec), spec->TotalGpus());
  ASSERT_TRUE(step) << step.error().message;
  SimStepReport r;
  r.step = *step;
  r.title = "spec layout";
  r.convention = "megatron";
  r.sweep = sim::Sweep(model, *spec, {.from = 1, .to = 8});
  ASSERT_EQ(r.sweep.size(), 4u);
  ASSERT_FALSE(r.sweep.front().fits);
  ASSERT_TRUE(r.sweep.back().fits);
  const std::string text = SimStepText(*spec, r);
  EXPECT_NE(text.find("memory per GPU"), std::string::npos);
  int marked = 0;
  for (size_t at = text.find("DOES NOT FIT"); at != std::string::npos;
       at = text.find("DOES NOT FIT", at + 1)) {
    ++marked;
  }
  int unfit = 0;
  for (const auto& p : r.sweep) unfit += p.fits ? 0 : 1;
  EXPECT_EQ(marked, unfit + (r.step.fits ? 0 : 1));
}

// A mixture of experts with its dense layers first: the "pipeline ranks" line says where they
// sit and which rank, with how many MoE layers, sets the step. Qwen3 30B-A3B at PP4 with its first
// 12 layers dense: all of them on the first rank, 12 MoE layers on the last, which sets it.
TEST(SimReportTest, PipelineRanksSayWhereTheDenseLayersSit) {
  auto spec =
      model::LoadSpecFile(std::string(GPUFLEET_SOURCE_DIR) + "/examples/h100-16gpu-moe.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  spec->workload.pipeline = 4;
  spec->workload.expert = 4;
  spec->workload.model.moe.dense_layers = 12;
  const sim::AnalyticalStepModel model(sim::FlopConvention::kMegatron, sim::Efficiency{});
  auto step = model.Step(*spec, sim::LayoutOf(*spec), spec->TotalGpus());
  ASSERT_TRUE(step) << step.error().message;
  EXPECT_EQ(step->first_stage_dense_layers, 12);
  SimStepReport r;
  r.step = *step;
  r.title = "spec layout";
  r.convention = "megatron";
  EXPECT_NE(SimStepText(*spec, r).find("the 12 dense layers come first, 12 on the first rank; the "
                                       "last sets the step (rank 3, 12 MoE layers)"),
            std::string::npos)
      << SimStepText(*spec, r);
}

}  // namespace
}  // namespace gpufleet::report
