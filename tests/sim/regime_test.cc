// --search knows its limits (issue 13): each step carries the regime it is in, calibrated,
// extrapolated or unmodelled, with what is outside and the error measured on checked stacks.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/spec.h"
#include "plan/memory.h"
#include "published_runs.h"
#include "sim/step.h"

namespace gpufleet::sim {
namespace {

using runs::DeepSpeedAzureSpec;
using runs::Eff;
using runs::FoundrySpec;
using runs::FoundrySweepAndFp8Samples;
using runs::kFoundry;
using runs::kKorthikanti;
using runs::kMegatronRows;
using runs::kNemoFp8;
using runs::KorthikantiSample;
using runs::kTitan;
using runs::MegatronSpec;
using runs::NemoSpec;
using runs::Predicted;
using runs::Sample;
using runs::Sources;
using runs::TitanSpec;

// --search knows its limits (issue 13): the calibrated sources' runs (published_runs.h) are
// inside calibration, and a layout outside it says what is outside.
TEST(RegimeTest, TheCheckedRunsAreCalibrated) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  for (const auto& row : kMegatronRows) {
    const model::Spec spec = MegatronSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), spec.cluster.nodes.TotalGpus());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->regime.level, Confidence::kCalibrated)
        << row.name << ": " << (r->regime.reasons.empty() ? "" : r->regime.reasons[0]);
  }
  for (const auto& row : kNemoFp8) {
    const model::Spec spec = NemoSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r);
    if (std::string_view(row.recipe) == "nvfp4") {
      // Checked, on nineteen rows (NeMo's four, MLPerf's fifteen): NVFP4's GEMM speed is measured
      // on B300 alone, and the configs turn
      // TP overlap off (a departure from the preset, and TP without overlap where TP > 1).
      EXPECT_EQ(r->regime.level, Confidence::kExtrapolated) << row.name;
      std::vector<::testing::Matcher<std::string>> reasons = {
          ::testing::HasSubstr("NVFP4 (checked on"),
          ::testing::HasSubstr("(tp_comm_overlap false)")};
      if (row.tp > 1) reasons.push_back(::testing::HasSubstr("TP without communication overlap"));
      EXPECT_THAT(r->regime.reasons, ::testing::UnorderedElementsAreArray(reasons)) << row.name;
      continue;
    }
    if (std::string_view(row.recipe) == "mxfp8") {
      // Checked too, but set against nemo-2025's current scaling: a departure, named.
      EXPECT_EQ(r->regime.level, Confidence::kExtrapolated) << row.name;
      EXPECT_THAT(r->regime.reasons, ::testing::ElementsAre(::testing::HasSubstr(
                                         "set against the nemo-2025 stack (fp8_recipe mxfp8)")));
      continue;
    }
    EXPECT_EQ(r->regime.level, Confidence::kCalibrated)
        << row.name << ": " << (r->regime.reasons.empty() ? "" : r->regime.reasons[0]);
  }
}

TEST(RegimeTest, OutsideSaysWhat) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = NemoSpec(kNemoFp8[1]);  // 70B, 64 H100
  Layout l = LayoutOf(spec);
  l.strategy = model::Strategy::kFsdp;
  auto r = model.Step(spec, l, 64);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->regime.level, Confidence::kExtrapolated);
  ASSERT_EQ(r->regime.reasons.size(), 1u);
  EXPECT_THAT(r->regime.reasons[0], ::testing::HasSubstr("fsdp beyond one node"));
  spec.workload.flash_attention = false;
  r = model.Step(spec, LayoutOf(spec), 64);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->regime.level, Confidence::kExtrapolated);
  EXPECT_THAT(r->regime.reasons[0], ::testing::HasSubstr("unfused attention"));
  // A software word set against the stack's default is named; one equal to it is not.
  spec = NemoSpec(kNemoFp8[1]);
  spec.workload.software_departures = {"attention_kernel mma-sync"};
  r = model.Step(spec, LayoutOf(spec), 64);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->regime.level, Confidence::kExtrapolated);
  EXPECT_THAT(r->regime.reasons[0],
              ::testing::HasSubstr("set against the nemo-2025 stack (attention_kernel mma-sync)"));
  // Without DP overlap on CP8 x DP1 the data-parallel group is the eight CP ranks.
  spec = TitanSpec(kTitan[3]);  // 8B CP8 on 8 H100
  spec.workload.dp_comm_overlap = false;
  r = model.Step(spec, LayoutOf(spec), 8);
  ASSERT_TRUE(r);
  EXPECT_THAT(r->regime.reasons,
              ::testing::Contains(::testing::HasSubstr("DP without communication overlap")));
  // A kernel written for mma.sync where that instruction's share is not published; the Triton
  // kernel's own rate, measured on A100, is said to be so.
  spec = NemoSpec(kNemoFp8[4]);  // 8B, 8 B200
  spec.workload.attention_kernel = model::AttentionKernel::kTriton2022;
  r = model.Step(spec, LayoutOf(spec), 8);
  ASSERT_TRUE(r);
  EXPECT_THAT(r->regime.reasons,
              ::testing::Contains(::testing::AllOf(
                  ::testing::HasSubstr("the 2022 Triton attention on Blackwell"),
                  ::testing::HasSubstr("the kernel's rate was measured on A100"))));
  auto parsed = [](const std::string& software) {
    auto s = model::ParseSpec(
        "name: t\nnodes: {count: 1, gpu: {model: H100-SXM5-80GB, count: 8}}\nworkload:\n  model: "
        "{name: m, layers: 8, hidden: 1024, heads: 8, vocab: 32000, sequence: 2048}\n  parallel: "
        "{strategy: zero1}\n  batch: {micro: 1}\n  software: " +
            software + "\n",
        "t.yaml");
    EXPECT_TRUE(s) << s.error().message;
    return s ? s->workload.software_departures : std::vector<std::string>{};
  };
  EXPECT_TRUE(parsed("{stack: nemo-2025, cross_entropy: fused, tp_comm_overlap: true}").empty());
  EXPECT_THAT(parsed("{stack: pytorch-fsdp2, grad_reduce: bf16, cross_entropy: fused}"),
              ::testing::ElementsAre("grad_reduce bf16", "cross_entropy fused"));
  // A word that changes memory only leaves the step's regime alone.
  EXPECT_TRUE(parsed("{stack: megatron-core-2024, sp_saved_input: gathered}").empty());
}

// The GPU count: Megatron-Core's 177B ran to 4,608 GPUs; twice that is still calibrated, and
// beyond it the reason names both numbers and how far MLPerf's runs checked it.
TEST(RegimeTest, GpuCountBeyondTheMarginIsExtrapolated) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  auto regime = [&](int dp) {  // 177B, TP8 PP6: 48 GPUs per DP rank
    const model::Spec spec = MegatronSpec(96, 12288, 96, 8, 6, dp, 1152 * dp / 96);
    auto r = model.Step(spec, LayoutOf(spec), 48 * dp);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->regime : plan::Regime{};
  };
  const plan::Regime within = regime(192);  // 9,216 GPUs
  EXPECT_EQ(within.level, Confidence::kCalibrated)
      << (within.reasons.empty() ? "" : within.reasons[0]);
  const plan::Regime beyond = regime(200);  // 9,600
  EXPECT_EQ(beyond.level, Confidence::kExtrapolated);
  EXPECT_THAT(beyond.reasons, ::testing::ElementsAre("9600 GPUs (calibrated to 4608, with a margin "
                                                     "to 9216; MLPerf's runs check it to 11616)"));
}

// A stack checked outside the fit carries the bias measured on its runs into the regime
// (StackChecks): every checked row of that stack on that architecture counted, each inside the
// quoted range, and the range's ends the rows' extremes (within half a point), so that the quote
// stays what the runs say when the model moves. The calibrated stacks' rows are not quoted.
TEST(RegimeTest, QuotesTheErrorMeasuredOnEachCheckedStack) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  std::vector<Sample> checked;
  for (auto& source : Sources()) {
    for (auto& x : source) checked.push_back(std::move(x));
  }
  for (auto& x : FoundrySweepAndFp8Samples()) checked.push_back(std::move(x));
  // Korthikanti's baseline rows with the stack they ran (their printout's second line).
  for (const auto& row : kKorthikanti) {
    if (row.full_recompute) checked.push_back(KorthikantiSample(row, "megatron-2021"));
  }
  for (const auto& row : kTitan) checked.push_back({TitanSpec(row), row.tokens_per_gpu});

  struct Seen {
    int rows = 0;
    double low = 1e9, high = -1e9;
  };
  std::map<std::pair<std::string, std::string>, Seen> seen;  // (stack, architecture)
  for (const auto& x : checked) {
    const auto& stack = x.spec.workload.stack;
    if (plan::IsCalibratedStack(stack)) continue;
    const double error = Predicted(model, x) / x.published - 1;
    Seen& s = seen[{stack, x.spec.cluster.nodes.gpu.architecture}];
    ++s.rows;
    s.low = std::min(s.low, error);
    s.high = std::max(s.high, error);
  }
  for (const plan::StackCheck& c : plan::StackChecks()) {
    const auto it = seen.find({std::string(c.stack), std::string(c.architecture)});
    ASSERT_NE(it, seen.end()) << c.stack << " on " << c.architecture << ": no run checks it";
    const Seen& s = it->second;
    std::printf("%-14s on %-6s %3d rows, %+.1f %% to %+.1f %% (quoted: %d, %+.1f %% to %+.1f %%)\n",
                std::string(c.stack).c_str(), std::string(c.architecture).c_str(), s.rows,
                100 * s.low, 100 * s.high, c.rows, 100 * c.low, 100 * c.high);
    EXPECT_EQ(s.rows, c.rows) << c.stack << " on " << c.architecture << ": update StackChecks";
    EXPECT_NEAR(s.low, c.low, 0.005)
        << c.stack << " on " << c.architecture << ": update StackChecks";
    EXPECT_NEAR(s.high, c.high, 0.005)
        << c.stack << " on " << c.architecture << ": update StackChecks";
    seen.erase(it);
  }
  for (const auto& [key, s] : seen) {
    ADD_FAILURE() << key.first << " on " << key.second << ": " << s.rows
                  << " checked rows, not quoted in StackChecks";
  }

  // What a plan on such a stack says, on another architecture, and on a stack of one run.
  model::Spec spec = FoundrySpec(kFoundry[0]);  // 70B on 512 H100s
  auto r = model.Step(spec, LayoutOf(spec), kFoundry[0].gpus);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->regime.level, Confidence::kExtrapolated);
  EXPECT_THAT(r->regime.reasons,
              ::testing::Contains(::testing::MatchesRegex(
                  "the composer-2023 stack \\(checked on [0-9]+ LLM Foundry PyTorch FSDP runs on "
                  "Hopper: predicted throughput [-+][0-9.]+ % to [-+][0-9.]+ % off the "
                  "published; calibrated: megatron-core-2024, nemo-2025\\)")));
  EXPECT_THAT(r->regime.reasons, ::testing::Contains(::testing::HasSubstr(
                                     "fsdp beyond one node (calibrated inside one; LLM Foundry's "
                                     "runs check it to 512 GPUs)")));
  spec.workload.stack = "deepspeed-zero3";
  r = model.Step(spec, LayoutOf(spec), kFoundry[0].gpus);
  ASSERT_TRUE(r);
  EXPECT_THAT(r->regime.reasons, ::testing::Contains(::testing::HasSubstr(
                                     "the deepspeed-zero3 stack (checked on Ampere only")));
  // A stack checked on one run quotes that run's error.
  spec = DeepSpeedAzureSpec();
  r = model.Step(spec, LayoutOf(spec), 256);
  ASSERT_TRUE(r);
  EXPECT_THAT(r->regime.reasons,
              ::testing::Contains(::testing::MatchesRegex(
                  "the deepspeed-zero3 stack \\(checked on one DeepSpeed-on-Azure GPT-3 175B run "
                  "on Ampere: predicted throughput [-+][0-9.]+ % off it; calibrated: .*")));
  spec = TitanSpec(kTitan[0]);
  spec.cluster.nodes.gpu.architecture = "Blackwell";
  r = model.Step(spec, LayoutOf(spec), kTitan[0].gpus);
  ASSERT_TRUE(r);
  EXPECT_THAT(
      r->regime.reasons,
      ::testing::Contains(::testing::HasSubstr("the pytorch-fsdp2 stack (checked on Hopper only")));
}

// The 1,024-GPU example's fastest layout is FSDP across 128 nodes, which no published run checks
// (and published ZeRO-3/FSDP runs at that scale rule out); the search names the fastest
// calibrated layout beside it.
TEST(RegimeTest, SearchOffersTheFastestCalibratedLayout) {
  auto spec = model::LoadSpecFile(std::string(GPUFLEET_SOURCE_DIR) + "/examples/h100-1024gpu.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  std::optional<StepBreakdown> calibrated;
  auto best = Search(AnalyticalStepModel(), *spec, 1024, nullptr, &calibrated);
  ASSERT_TRUE(best) << best.error().message;
  if (best->regime.level == Confidence::kCalibrated) {
    EXPECT_FALSE(calibrated.has_value());
  } else {
    ASSERT_TRUE(calibrated.has_value());
    EXPECT_EQ(calibrated->regime.level, Confidence::kCalibrated);
    EXPECT_GE(calibrated->step_s, best->step_s);
    EXPECT_TRUE(calibrated->fits);
  }
}

// The search tries every chunk count that splits a rank's layers evenly, as the production
// recipes interleave (3, 8, 12, 20), not 2 and 4 alone: on the 1,024-GPU example (80 layers) the
// fastest at PP2 interleaves 20 chunks of 2 layers, as far as published runs check (Megatron
// Bridge's Llama 3 70B fine-tuning), and is outside calibration on its micro-batch of 4 alone;
// the fastest calibrated layout, named beside it, interleaves 20 too (PP4, one layer a chunk):
// neither is a count the search tried before. Past 20 chunks a layout is extrapolated.
TEST(RegimeTest, SearchInterleavesAsFarAsTheLayersSplitAndSaysWhereTheChecksEnd) {
  auto spec = model::LoadSpecFile(std::string(GPUFLEET_SOURCE_DIR) + "/examples/h100-1024gpu.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  const int layers = spec->workload.model.layers;
  std::optional<StepBreakdown> calibrated;
  auto best = Search(AnalyticalStepModel(), *spec, 1024, nullptr, &calibrated);
  ASSERT_TRUE(best) << best.error().message;
  ASSERT_TRUE(calibrated.has_value());
  for (const StepBreakdown* r : {&*best, &*calibrated}) {
    const Layout& l = r->layout;
    std::printf("%s: %.3f s\n", l.Describe().c_str(), r->step_s);
    EXPECT_EQ(layers % (l.pp * l.virtual_stages), 0) << l.Describe();
    EXPECT_GE(r->micro_batches, l.pp) << l.Describe();
  }
  EXPECT_GT(best->layout.virtual_stages, 12);
  EXPECT_THAT(best->regime.reasons,
              ::testing::Not(::testing::Contains(::testing::HasSubstr("virtual stages"))));
  EXPECT_THAT(best->regime.reasons,
              ::testing::Contains(::testing::HasSubstr("micro-batch 4 (calibrated to 2)")));
  EXPECT_GT(calibrated->layout.virtual_stages, 4);
  EXPECT_LE(calibrated->layout.virtual_stages, 20);
  // A stated layout past 20 chunks is extrapolated on that count alone: PP2, one layer a chunk.
  Layout stated = calibrated->layout;
  stated.pp = 2;
  stated.virtual_stages = layers / stated.pp;
  auto r = AnalyticalStepModel().Step(*spec, stated, 1024);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->regime.level, Confidence::kExtrapolated);
  EXPECT_THAT(r->regime.reasons, ::testing::Contains(::testing::HasSubstr(fmt::format(
                                     "{} virtual stages (checked to 20", stated.virtual_stages))));
}

}  // namespace
}  // namespace gpufleet::sim
