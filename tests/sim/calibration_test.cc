// The step-time model against published runs (docs/sim.md, "Calibration"): Megatron-Core
// r0.8.0's H100 table and its 177B strong-scaling endpoints, which the constants were fitted to,
// and the runs outside the fit: NeMo 25.11 FP8, Korthikanti et al. 2022, BLOOM-176B, MT-NLG 530B
// and torchtitan; then leave-one-source-out cross-validation over every fitted source, and every
// judged row against the bound. LLM Foundry's tables are checked row by row in foundry_test.cc,
// the MoE rows in moe_test.cc. Tolerance from issue 6: throughput/MFU within 15 %.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/spec.h"
#include "plan/memory.h"
#include "published_runs.h"
#include "sim/step.h"

namespace gpufleet::sim {
namespace {

using runs::BloomSpec;
using runs::BridgeCardQwen3FineTuningSpec;
using runs::BridgeCardQwen3MoeScalingSpec;
using runs::BridgeCardQwen3Spec;
using runs::BridgeFlopsPerToken;
using runs::BridgeSftLayoutSpec;
using runs::DeepSpeedAzureSpec;
using runs::DeepSpeedAzureTokensPerGpu;
using runs::Eff;
using runs::FmsSpec;
using runs::FoundrySweepAndFp8Samples;
using runs::kBloomIterationS;
using runs::kBridgeCardQwen3MoeScaling;
using runs::kBridgeCardQwen3TokensPerGpu;
using runs::kBridgeSftLayouts;
using runs::kFms;
using runs::kGiB;
using runs::kKorthikanti;
using runs::kMegatronRows;
using runs::kMlperf;
using runs::kMtNlg;
using runs::kNemoFp8;
using runs::kNemoLongSequence;
using runs::kNemoLora;
using runs::kNemoSft;
using runs::kOlmoCore;
using runs::KorthikantiRow;
using runs::KorthikantiSpec;
using runs::kTitan;
using runs::LogErrorOf;
using runs::MegatronSpec;
using runs::MlperfSpec;
using runs::MlperfTokensPerGpu;
using runs::MoeRowNamed;
using runs::MoeSpec;
using runs::MtNlgSpec;
using runs::NemoLongSequenceSpec;
using runs::NemoLongSequenceTokensPerGpu;
using runs::NemoSpec;
using runs::OlmoCoreRow;
using runs::OlmoCoreSpec;
using runs::Predicted;
using runs::Sample;
using runs::Sources;
using runs::TitanSpec;

TEST(CalibrationTest, MegatronCoreH100TableWithin15Percent) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  for (const auto& row : kMegatronRows) {
    const model::Spec spec = MegatronSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), spec.cluster.nodes.TotalGpus());
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    const double tflops = r->model_flops / spec.cluster.nodes.TotalGpus() / r->step_s / 1e12;
    const double ratio = tflops / row.tflops_per_gpu;
    std::printf("%-5s %-32s predicted %6.1f TFLOP/s/GPU (MFU %4.1f %%), published %6.1f: %.3f\n",
                row.name, r->layout.Describe().c_str(), tflops, r->mfu * 100, row.tflops_per_gpu,
                ratio);
    EXPECT_NEAR(ratio, 1.0, 0.15) << row.name;
  }
}

// NVIDIA/Megatron-LM's README (r0.8.0): the 177B model strong-scaled from 96 to 4,608 H100s at a
// fixed batch of 1,152 sequences; MFU falls from 47 % to 42 % as communication and the bubble grow.
TEST(CalibrationTest, MegatronStrongScalingEndpointsWithin15Percent) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  double first = 0, last = 0;
  for (int dp : {2, 96}) {
    model::Spec spec = MegatronSpec(96, 12288, 96, 8, 6, dp, 1152);
    spec.workload.virtual_stages = 4;  // interleaved 1F1B, as Megatron's large runs use
    auto r = model.Step(spec, LayoutOf(spec), spec.cluster.nodes.TotalGpus());
    ASSERT_TRUE(r) << r.error().message;
    std::printf("177B on %4d GPUs: MFU %.1f %% (bubble %.2f s of %.2f s)\n", 48 * dp, r->mfu * 100,
                r->bubble_s, r->step_s);
    (dp == 2 ? first : last) = r->mfu;
  }
  EXPECT_NEAR(first / 0.47, 1.0, 0.15);
  EXPECT_NEAR(last / 0.42, 1.0, 0.15);
  EXPECT_GT(first, last);
}

TEST(CalibrationTest, NemoFp8LlamaRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  int within = 0;
  for (const auto& row : kNemoFp8) {
    const model::Spec spec = NemoSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    const double per_gpu = r->tokens_per_s / row.gpus;
    std::printf(
        "%-20s %-30s predicted %7.0f tokens/s/GPU, published %7.0f: %+.1f %%, memory %.1f of "
        "%.1f GiB\n",
        row.name, r->layout.Describe().c_str(), per_gpu, row.tokens_per_gpu,
        (per_gpu / row.tokens_per_gpu - 1) * 100, r->memory_bytes / kGiB,
        r->memory_capacity_bytes / kGiB);
    EXPECT_NEAR(per_gpu / row.tokens_per_gpu, 1.0, row.tolerance) << row.name;
    within += std::fabs(per_gpu / row.tokens_per_gpu - 1) <= 0.15;
    // NeMo ran every one of them. The three the model puts over are at most 2.6 % over (4.5 %
    // before Transformer Engine's quantized weights and the recipes' FP8 and FP4 parameters were
    // counted, 9 % before each rank's own parameters and tensors).
    EXPECT_EQ(r->fits, row.fits) << row.name;
    EXPECT_LT(r->memory_bytes / r->memory_capacity_bytes, 1.03) << row.name;
  }
  // 25 of 26: GB300's 70B in NVFP4 is -15.5 % (docs/sim.md, "NVFP4"), its 405B -14.0 %.
  EXPECT_EQ(within, 25);
}

// Megatron Bridge's SFT table: Llama 3 70B fine-tuned on SQuAD packed into 4,096-token
// sequences (model.document_length), on H100, GB200 and GB300, FP8 and MXFP8.
TEST(CalibrationTest, NemoSftRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  for (const auto& row : kNemoSft) {
    const model::Spec spec = NemoSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    const double per_gpu = r->tokens_per_s / row.gpus;
    // As whole 4,096-token sequences (one document each): the attention the packing skips.
    model::Spec whole = spec;
    whole.workload.model.document_length = 0;
    auto w = model.Step(whole, LayoutOf(whole), row.gpus);
    ASSERT_TRUE(w) << w.error().message;
    std::printf(
        "%-24s %-30s predicted %5.0f tokens/s/GPU (%5.0f unpacked), published %5.0f: %+.1f %%, "
        "memory %.1f of %.1f GiB\n",
        row.name, r->layout.Describe().c_str(), per_gpu, w->tokens_per_s / row.gpus,
        row.tokens_per_gpu, (per_gpu / row.tokens_per_gpu - 1) * 100, r->memory_bytes / kGiB,
        r->memory_capacity_bytes / kGiB);
    EXPECT_NEAR(per_gpu / row.tokens_per_gpu, 1.0, row.tolerance) << row.name;
    EXPECT_GT(r->tokens_per_s, w->tokens_per_s) << row.name;
    EXPECT_TRUE(r->fits) << row.name;
    EXPECT_DOUBLE_EQ(r->memory_bytes, w->memory_bytes) << row.name;
    // One document filling the sequence is no packing.
    model::Spec one = spec;
    one.workload.model.document_length = one.workload.model.sequence;
    auto o = model.Step(one, LayoutOf(one), row.gpus);
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_DOUBLE_EQ(o->step_s, w->step_s) << row.name;
  }
  // The page's model TFLOP/s over its tokens/s (432-435 GFLOP a token on every row) is
  // Megatron Bridge v0.5.0's count of whole 4,096-token causal sequences, 433.1 (its count of
  // the packed documents' sum(d^2), #3839, was reverted before 26.06): so are the layout rows'.
  const model::Spec h100 = NemoSpec(kNemoSft[0]);
  EXPECT_NEAR(BridgeFlopsPerToken(h100) / (710e12 / 1638), 1.0, 0.005);
  // The regime: the documents' kernels are shorter than any cuDNN's benchmark times; with CP
  // Transformer Engine's padding of each document is not counted.
  auto has = [](const plan::Regime& r, std::string_view what) {
    return std::any_of(r.reasons.begin(), r.reasons.end(),
                       [&](const std::string& x) { return x.find(what) != std::string::npos; });
  };
  const plan::Regime packed = plan::RegimeOf(h100, LayoutOf(h100), 32);
  EXPECT_EQ(packed.level, plan::Confidence::kExtrapolated);
  EXPECT_TRUE(has(packed, "attention over packed documents, 256 tokens a kernel"));
  EXPECT_FALSE(has(packed, "context parallelism over packed documents"));
  model::Spec ring = h100;
  ring.workload.context = 2;
  EXPECT_TRUE(has(plan::RegimeOf(ring, LayoutOf(ring), 32), "context parallelism over packed"));
  // Unfused attention computes the whole square and masks it, whatever the documents.
  model::Spec unfused = h100;
  unfused.workload.flash_attention = false;
  model::Spec unfused_whole = unfused;
  unfused_whole.workload.model.document_length = 0;
  auto a = model.Step(unfused, LayoutOf(unfused), 32);
  auto b = model.Step(unfused_whole, LayoutOf(unfused_whole), 32);
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(a->step_s, b->step_s);
}

// The same page's LoRA table: Llama 3 70B with rank-16 adapters on QKV over frozen weights, 8
// GPUs, the same packed SQuAD. Against full fine-tuning in the same layouts: no frozen weight
// gradient (a third of the linear GEMMs), gradients, reduction and optimizer step for the
// adapters alone, fewer saved inputs.
TEST(CalibrationTest, NemoLoraRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  for (const auto& row : kNemoLora) {
    const model::Spec spec = NemoSpec(row);
    ASSERT_TRUE(spec.workload.model.lora.Enabled()) << row.name;
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    const double per_gpu = r->tokens_per_s / row.gpus;
    model::Spec trained = spec;
    trained.workload.model.lora = {};
    auto f = model.Step(trained, LayoutOf(trained), row.gpus);
    ASSERT_TRUE(f) << f.error().message;
    std::printf(
        "%-24s %-30s predicted %5.0f tokens/s/GPU (%5.0f every weight trained), published %5.0f: "
        "%+.1f %%, memory %.1f of %.1f GiB (%.1f)\n",
        row.name, r->layout.Describe().c_str(), per_gpu, f->tokens_per_s / row.gpus,
        row.tokens_per_gpu, (per_gpu / row.tokens_per_gpu - 1) * 100, r->memory_bytes / kGiB,
        r->memory_capacity_bytes / kGiB, f->memory_bytes / kGiB);
    EXPECT_NEAR(per_gpu / row.tokens_per_gpu, 1.0, row.tolerance) << row.name;
    EXPECT_TRUE(r->fits) << row.name;
    EXPECT_GT(r->tokens_per_s, 1.3 * f->tokens_per_s) << row.name;
    EXPECT_LT(r->memory_bytes, f->memory_bytes) << row.name;
    EXPECT_LT(r->optimizer_s, f->optimizer_s / 100) << row.name;
    if (spec.DataParallel() > 1) {
      EXPECT_LT(r->dp_comm_s, f->dp_comm_s) << row.name;
    }
  }
  // linear_qkv alone is what the rows check; other layers are extrapolated.
  auto lora_reason = [](const plan::Regime& r) {
    return std::any_of(r.reasons.begin(), r.reasons.end(),
                       [](const std::string& x) { return x.starts_with("LoRA on"); });
  };
  model::Spec h100 = NemoSpec(kNemoLora[4]);
  EXPECT_FALSE(lora_reason(plan::RegimeOf(h100, LayoutOf(h100), 8)));
  // The adapters' own TP exchanges, exposed, beyond what full training exposes (at TP2 the
  // overlapped collectives expose half of themselves either way): with sequence parallelism and
  // TP overlap the QKV adapter gathers its input and reduce-scatters its gradient, and QKV's own
  // gather loses its overlap, 1.5 all-reduce volumes a layer; an adapter on the attention's
  // output projection gathers B's output and scatters it back, 1.
  model::Spec trained = h100;
  trained.workload.model.lora = {};
  model::Spec proj = h100;
  proj.workload.model.lora.proj = true;
  auto with = model.Step(h100, LayoutOf(h100), 8);
  auto full = model.Step(trained, LayoutOf(trained), 8);
  auto both = model.Step(proj, LayoutOf(proj), 8);
  ASSERT_TRUE(with && full && both);
  EXPECT_NEAR((with->tp_comm_s - full->tp_comm_s) / (both->tp_comm_s - with->tp_comm_s), 1.5, 1e-9);
  // Megatron splits the QKV adapter's A over TP by its rank.
  model::Spec odd = h100;
  odd.workload.model.lora.rank = 5;
  EXPECT_FALSE(model.Step(odd, LayoutOf(odd), 8));
  // Off Megatron Bridge's stack the adapters' exchanges and saved inputs are not checked.
  model::Spec fsdp = h100;
  fsdp.workload.stack = "pytorch-fsdp2";
  const plan::Regime other = plan::RegimeOf(fsdp, LayoutOf(fsdp), 8);
  EXPECT_TRUE(std::any_of(other.reasons.begin(), other.reasons.end(), [](const std::string& x) {
    return x == "LoRA on the pytorch-fsdp2 stack (checked on Megatron Bridge's)";
  }));
  h100.workload.model.lora.fc1 = true;
  const plan::Regime wider = plan::RegimeOf(h100, LayoutOf(h100), 8);
  EXPECT_EQ(wider.level, plan::Confidence::kExtrapolated);
  EXPECT_TRUE(lora_reason(wider));
}

// The same H100 SFT run in five layouts (Megatron Bridge PR #3107): what recomputing the MLP
// costs, and what PP8 and TP8 at DP1 cost, against TP4 PP4 with the attention core recomputed.
TEST(CalibrationTest, BridgeSftLayoutsRankAsTheyRan) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  std::vector<double> step, published;
  for (const auto& row : kBridgeSftLayouts) {
    const model::Spec spec = BridgeSftLayoutSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), 32);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    const double tflops = BridgeFlopsPerToken(spec) * r->tokens_per_s / 32 / 1e12;
    std::printf(
        "H100 Llama3 70B SFT %-24s predicted %5.1f TFLOP/s/GPU, published %5.1f: %+.1f %% "
        "(step %.3f s, TP exposed %.3f s, recompute %.3f s; memory %.1f GiB)\n",
        row.name, tflops, row.tflops_per_gpu, (tflops / row.tflops_per_gpu - 1) * 100, r->step_s,
        r->tp_comm_s, r->recompute_s, r->memory_bytes / kGiB);
    step.push_back(r->step_s);
    published.push_back(1 / row.tflops_per_gpu);  // the same tokens a step
    // What docs/sim.md ("Fine-tuning") quotes beside it: every TP collective exposed.
    model::Spec exposed = spec;
    exposed.workload.tp_comm_overlap = false;
    auto e = model.Step(exposed, LayoutOf(exposed), 32);
    ASSERT_TRUE(e) << row.name;
    const double exposed_tflops = BridgeFlopsPerToken(exposed) * e->tokens_per_s / 32 / 1e12;
    std::printf("    without TP overlap: %5.1f TFLOP/s/GPU, %+.1f %%\n", exposed_tflops,
                (exposed_tflops / row.tflops_per_gpu - 1) * 100);
  }
  // Recomputing the MLP: 18.6 % and 20.0 % longer steps published (with the attention core).
  EXPECT_NEAR((step[3] / step[0]) / (published[3] / published[0]), 1.0, 0.05);
  EXPECT_NEAR((step[4] / step[0]) / (published[4] / published[0]), 1.0, 0.05);
  // PP8 at DP1: 5.4 % longer published.
  EXPECT_NEAR((step[1] / step[0]) / (published[1] / published[0]), 1.0, 0.05);
  // TP8 at DP1: 38.4 % longer published; the model's TP overlap hides most of the doubled
  // exchange (docs/sim.md, "Fine-tuning": outside, and what it would be without the overlap).
  EXPECT_GT(step[2], step[0]);
  EXPECT_LT(step[2] / step[0], published[2] / published[0]);
}

// The FP8 recipe's mechanism: FP8 speeds up the linear GEMMs only, at FP8's own measured ceiling
// (H100: 70.9 % of 1,979 TFLOPS against BF16's 80.3 % of 989), so a step is 1.2-1.5x faster, not
// 2x (NeMo performance guide: "typically achieving a speedup of 1.2-1.5X").
TEST(CalibrationTest, Fp8SpeedupIsTheLinearLayersOnly) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec fp8 = NemoSpec(kNemoFp8[1]);
  model::Spec bf16 = fp8;
  bf16.workload.precision = model::Precision::kBf16;
  auto a = model.Step(fp8, LayoutOf(fp8), 64);
  auto b = model.Step(bf16, LayoutOf(bf16), 64);
  ASSERT_TRUE(a && b);
  const double speedup = b->step_s / a->step_s;
  std::printf("FP8 speedup on Llama 3 70B, 64 H100: %.2fx\n", speedup);
  EXPECT_GT(speedup, 1.2);
  EXPECT_LT(speedup, 1.5);
}

// NVFP4 against FP8 on the same page, model and system (the 26.06 container's 405B on 256 GPUs,
// against FP8 with current scaling; the 26.04.01 container's 70B on 64, against MXFP8):
// the linear GEMMs at NVFP4's measured speed over FP8 (1.81x on B300), attention and the output
// layer in BF16, NVFP4's quantize passes; the NVFP4 configs with TP overlap off, which
// Transformer Engine half makes up for (its backward reduce-scatters run beside the wgrad GEMMs).
// Published 1.348x on GB300 (TP4 PP8 VP4 both) and 1.383x on GB200 (VP4 in FP8, VP8 in NVFP4);
// 70B 1.500x on GB300 (TP1 PP4 VP5) and 1.310x on GB200 (TP2, its MXFP8 with TP overlap).
TEST(CalibrationTest, Nvfp4SpeedupOverFp8OnTheSamePage) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  auto row = [](std::string_view name) {
    for (const auto& r : kNemoFp8) {
      if (name == r.name) return r;
    }
    ADD_FAILURE() << name;
    return kNemoFp8[0];
  };
  const struct {
    const char *fp8, *nvfp4;
  } kPairs[] = {{"GB300 Llama3.1 405B 26.06", "GB300 Llama3.1 405B NVFP4 26.06"},
                {"GB200 Llama3.1 405B 26.06", "GB200 Llama3.1 405B NVFP4 26.06"},
                {"GB300 Llama3 70B MX 26.04.01", "GB300 Llama3 70B NVFP4 26.04.01"},
                {"GB200 Llama3 70B MX 26.04.01", "GB200 Llama3 70B NVFP4 26.04.01"}};
  for (const auto& [fp8_name, nvfp4_name] : kPairs) {
    const runs::NemoRow a = row(fp8_name), b = row(nvfp4_name);
    const model::Spec fp8 = NemoSpec(a), fp4 = NemoSpec(b);
    auto x = model.Step(fp8, LayoutOf(fp8), a.gpus);
    auto y = model.Step(fp4, LayoutOf(fp4), b.gpus);
    ASSERT_TRUE(x && y);
    const double predicted = x->step_s / y->step_s, published = b.tokens_per_gpu / a.tokens_per_gpu;
    std::printf("%s over %s: predicted %.3fx, published %.3fx; compute %.1f s to %.1f s\n",
                nvfp4_name, a.recipe, predicted, published, x->compute_s, y->compute_s);
    EXPECT_NEAR(predicted / published, 1, 0.10) << nvfp4_name;
    // The GEMMs gain their measured 1.81x over per-tensor FP8 (1.81 / 0.951 = 1.90x over MXFP8,
    // the two 70B pairs' baseline), the rest of the compute nothing: all of it, less.
    EXPECT_GT(x->compute_s / y->compute_s, 1.2) << nvfp4_name;
    EXPECT_LT(x->compute_s / y->compute_s, 6.812 / 3.764 / 0.951) << nvfp4_name;
  }
}

TEST(CalibrationTest, KorthikantiA100RowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  for (const auto& row : kKorthikanti) {
    const model::Spec spec = KorthikantiSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    std::printf("A100 %-5s %-40s predicted %6.2f s, published %6.2f s: throughput %+.1f %%\n",
                row.name, r->layout.Describe().c_str(), r->step_s, row.iteration_s,
                (row.iteration_s / r->step_s - 1) * 100);
    EXPECT_NEAR(row.iteration_s / r->step_s, 1.0, 0.15) << row.name;
    EXPECT_TRUE(r->fits) << row.name;
    if (row.full_recompute) {
      // 2022 Megatron had no userbuffers TP overlap, only the asynchronous all-reduce of the
      // input gradient: the megatron-2021 stack, exposing all of it, is more pessimistic still.
      const model::Spec old = KorthikantiSpec(row, "megatron-2021");
      auto o = model.Step(old, LayoutOf(old), row.gpus);
      ASSERT_TRUE(o) << row.name;
      std::printf("     with the megatron-2021 stack %6.2f s: throughput %+.1f %%\n", o->step_s,
                  (row.iteration_s / o->step_s - 1) * 100);
      EXPECT_GT(o->step_s, r->step_s) << row.name;
    }
  }
}

// The paper's own comparison: sequence parallelism with selective recompute over the baseline
// (full recompute, no SP) is 29-32 % faster on each model. The model's gain comes from the
// baseline's recomputed forward, its two extra TP collectives per layer and the element-wise
// work it replicates on every TP rank, which is only the 10 of Table 2's 34 bytes per element
// outside the tensor-parallel region (before, all 34 were: the model said 35-43 %).
TEST(CalibrationTest, KorthikantiGainOfSelectiveRecomputeWithSequenceParallelism) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  constexpr size_t kModels = std::size(kKorthikanti) / 2;
  for (size_t i = 0; i < kModels; ++i) {
    const KorthikantiRow& present = kKorthikanti[i];
    const KorthikantiRow& baseline = kKorthikanti[i + kModels];
    ASSERT_STREQ(present.name, baseline.name);
    const model::Spec p = KorthikantiSpec(present), b = KorthikantiSpec(baseline);
    auto rp = model.Step(p, LayoutOf(p), present.gpus);
    auto rb = model.Step(b, LayoutOf(b), baseline.gpus);
    ASSERT_TRUE(rp && rb) << present.name;
    const double published = baseline.iteration_s / present.iteration_s;
    const double predicted = rb->step_s / rp->step_s;
    std::printf("A100 %-5s baseline / present work: predicted %.3f, published %.3f\n", present.name,
                predicted, published);
    EXPECT_NEAR(predicted, published, 0.03) << present.name;
  }
}

TEST(CalibrationTest, BloomRowOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const model::Spec spec = BloomSpec();
  auto r = model.Step(spec, LayoutOf(spec), 384);
  ASSERT_TRUE(r) << r.error().message;
  std::printf(
      "A100 BLOOM-176B %s predicted %6.2f s, published %6.2f s: throughput %+.1f %% (bubble %.1f "
      "s, exposed TP %.1f s)\n",
      r->layout.Describe().c_str(), r->step_s, kBloomIterationS,
      (kBloomIterationS / r->step_s - 1) * 100, r->bubble_s, r->tp_comm_s);
  EXPECT_NEAR(kBloomIterationS / r->step_s, 1.0, 0.15);
  EXPECT_TRUE(r->fits);
}

TEST(CalibrationTest, DeepSpeedZero3RowOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const model::Spec spec = DeepSpeedAzureSpec();
  auto r = model.Step(spec, LayoutOf(spec), 256);
  ASSERT_TRUE(r) << r.error().message;
  const double predicted = r->tokens_per_s / 256, published = DeepSpeedAzureTokensPerGpu();
  std::printf(
      "A100 GPT-3 175B DeepSpeed ZeRO-3 %s predicted %5.1f tokens/s/GPU, published %5.1f: %+.1f "
      "%% (DP comm %.2f s, exposed %.2f s, of %.2f s); memory %.1f of 80 GiB\n",
      r->layout.Describe().c_str(), predicted, published, 100 * (predicted / published - 1),
      r->dp_comm_total_s, r->dp_comm_s, r->step_s, r->memory_bytes / (1 << 30));
  EXPECT_NEAR(published, 145.55, 0.01);  // the blog's 204.49 TFLOP/s by its formula
  EXPECT_NEAR(predicted / published, 1, 0.15);
  EXPECT_TRUE(r->fits) << "it ran";
}

// MLPerf Training's runs (docs/sim.md): each within 15 % but two, each held to its own bound.
// Cisco's 8B at TP2 on 128 H100s ran 25 % slower per GPU than its TP1 run on 64, where the model
// says 14 % (both runs wait for their whole parameter gather after the optimizer step, as their
// configs ask). Its two configs differ in TP and the node count alone, its systems files in the
// count alone, and TP2 halves each GPU's data-parallel bytes over the RoCE fabric: what the model
// misses is in TP2 at micro-batch 1 (userbuffers cut to 2-8 SMs, no CUDA graphs), not the fabric.
// (Oracle's GPT-3 on 3,072 H100s, within at +14.8 %, slows as it runs: 8-step blocks from 2.81 s
// to 3.4-3.5 s, the median 3.33 s, where the model's 2.90 s meets the first blocks.) The University
// of Florida's 8B on DGX B200s holds 0.19 s a step from 32 to 128 GPUs and takes 0.22 s on 256,
// steadily in all ten result files, where the model adds 3 ms: its 32-node config is its 16-node
// one with twice the nodes, and its run script differs only in where it reads its data (an absolute
// path on /red). Its 405B on 256 and 448 B200s, within at +10.5 % and +11.5 %, ran without TP
// overlap (its launched configs comment TP_COMM_OVERLAP out): +17.2 % and +18.2 % when the rows
// took the stock config's overlap.
TEST(CalibrationTest, MlperfRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const std::map<std::string_view, double> misses = {{"v5.1 8B Cisco 128", 0.28}};
  for (const auto& row : kMlperf) {
    const model::Spec spec = MlperfSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    const double predicted = r->tokens_per_s / row.gpus, published = MlperfTokensPerGpu(row);
    std::printf(
        "MLPerf %-23s %-13s %s predicted %6.0f tokens/s/GPU, published %6.0f: %+.1f %% (step "
        "%.3f s, bubble %.3f s, exposed DP %.3f s); memory %.1f GiB\n",
        row.name, row.gpu, r->layout.Describe().c_str(), predicted, published,
        100 * (predicted / published - 1), r->step_s, r->bubble_s, r->dp_comm_s,
        r->memory_bytes / (1 << 30));
    const auto miss = misses.find(row.name);
    EXPECT_NEAR(predicted / published, 1, miss == misses.end() ? 0.15 : miss->second) << row.name;
    EXPECT_TRUE(r->fits) << row.name << ": it ran";
  }
}

TEST(CalibrationTest, MtNlgRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  std::vector<double> step_s;
  for (const auto& row : kMtNlg) {
    const model::Spec spec = MtNlgSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.nodes * 8);
    ASSERT_TRUE(r) << row.nodes << ": " << r.error().message;
    std::printf("A100 MT-NLG 530B %s predicted %6.2f s, published %6.2f s: throughput %+.1f %%\n",
                r->layout.Describe().c_str(), r->step_s, row.iteration_s,
                (row.iteration_s / r->step_s - 1) * 100);
    EXPECT_NEAR(row.iteration_s / r->step_s, 1.0, 0.15) << row.nodes << " nodes";
    EXPECT_TRUE(r->fits) << row.nodes << " nodes";
    step_s.push_back(r->step_s);
    // The micro-batch is inferred (docs/sim.md quotes the error at 1 beside it).
    model::Spec one = spec;
    one.workload.micro_batch = 1;
    one.workload.accumulation *= 2;
    auto o = model.Step(one, LayoutOf(one), row.nodes * 8);
    ASSERT_TRUE(o) << row.nodes;
    std::printf("    at micro-batch 1: %6.2f s, throughput %+.1f %%\n", o->step_s,
                (row.iteration_s / o->step_s - 1) * 100);
  }
  // The scaling the micro-batch was read from: nothing else in the model (data-parallel
  // communication, the optimizer) bends it.
  ASSERT_EQ(step_s.size(), 3u);
  EXPECT_NEAR(step_s[0] / step_s[2], 60.1 / 44.4, 0.02);
}

// Memory within 10 % on every row: the loss's fp32 logits (12 bytes each at its backward,
// PyTorch's cross_entropy on an fp32 copy) are most of the 8B rows' memory; with pipeline
// parallelism FSDP keeps the stage gathered (6 bytes per parameter); and with sequence
// parallelism PyTorch's DTensor TP keeps the column-parallel layers' inputs gathered (the
// pytorch-fsdp2 stack's sp_saved_input), which moved the 70B row from -15.4 % to -7.4 %. Throughput
// is not judged against 15 %, only seen to stay optimistic: these GPUs ran at a 500 W power limit
// the catalog's peak does not know, and the model misses CP's ring-attention cost (docs/sim.md).
TEST(CalibrationTest, TorchtitanRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  for (const auto& row : kTitan) {
    const model::Spec spec = TitanSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r) << row.table << ": " << r.error().message;
    const double predicted = r->tokens_per_s / row.gpus;
    const double gib = r->memory_bytes / kGiB;
    std::printf(
        "%-28s predicted %6.0f tokens/s/GPU, published %6.0f: %+6.1f %%; memory %5.1f GiB, "
        "published %5.1f: %+6.1f %%\n",
        row.table, predicted, row.tokens_per_gpu, 100 * (predicted / row.tokens_per_gpu - 1), gib,
        row.memory_gib, 100 * (gib / row.memory_gib - 1));
    EXPECT_NEAR(gib / row.memory_gib, 1, 0.10) << row.table;
    EXPECT_GT(predicted, row.tokens_per_gpu) << row.table;  // optimistic, as docs/sim.md says
  }
}

// Megatron-LM's own memory tests (NVIDIA/Megatron-LM tests/functional_tests/test_cases/gpt/
// gpt3_7b_tp4_pp1_memory_speed and gpt3_7b_tp1_pp4_memory_speed, golden_values_dev_dgx_h100.json at
// d98e8a64): a 7B GPT (32 layers of 4,096, 8 KV groups, GeLU MLP of 16,384, LayerNorm, learned
// positions, dropout 0.1, untied 131,073-token vocabulary, sequence 8,192) on 8 H100s with the
// distributed optimizer in BF16, no recompute, no sequence parallelism, global batch 8. The last
// rank logs torch.cuda.memory_stats()'s allocated bytes after each step and their peak since the
// start (never reset): from the second step, with the optimizer's states, 53.22 GiB at TP4
// (micro-batch 2) and 56.55 GiB at PP4 with 8 virtual stages (micro-batch 1; the last stage, with
// the output layer and the loss), 19.24 and 23.11 GiB after the step. The peak is what the memory
// model's live tensors are, the after-step bytes its model states. Megatron-LM accumulates and
// reduces BF16 training's gradients in fp32 unless --grad-reduce-in-bf16 (arguments.py), which
// these tests do not set: `grad_reduce: fp32`, whose 4-byte gradient buffer the model counts.
TEST(CalibrationTest, MegatronLmMemoryTests) {
  struct Case {
    const char* name;
    const char* parallel;
    int micro_batch;
    double peak_gib, after_step_gib;
  };
  constexpr Case kCases[] = {{"7B TP4", "tensor: 4", 2, 57143791616.0 / kGiB, 20663519232.0 / kGiB},
                             {"7B PP4 VP8", "pipeline: 4, virtual_stages: 8", 1,
                              60720852992.0 / kGiB, 24808996864.0 / kGiB}};
  for (const Case& c : kCases) {
    auto spec = model::ParseSpec(fmt::format(R"(name: megatron-lm-memory
nodes:
  count: 1
  gpu: {{model: H100-SXM5-80GB, count: 8}}
fabrics:
  scale_up: {{type: nvlink4, bandwidth: 900 GB/s, switched: true}}
workload:
  model: {{name: gpt3-7b, layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 16384,
          mlp: gelu, vocab: 131073, sequence: 8192, dropout: 0.1}}
  precision: bf16
  parallel: {{strategy: zero1, {}, sequence_parallel: false}}
  batch: {{micro: {}, global: 8}}
  activation_checkpointing: none
  software: {{stack: megatron-core-2024, grad_reduce: fp32}}
)",
                                             c.parallel, c.micro_batch),
                                 "megatron-lm-memory.yaml");
    ASSERT_TRUE(spec) << spec.error().message;
    const auto& w = spec->workload;
    const plan::MemoryBreakdown mem =
        plan::EstimateMemory(*spec, w.strategy, w.micro_batch, w.recompute);
    const double states = mem.states.Total() / kGiB;
    const double live = states + (mem.gathered_bytes + mem.activation_bytes) / kGiB;
    std::printf(
        "Megatron-LM %-10s live tensors %.1f GiB, published peak allocated %.1f: %+.1f %%; "
        "model states %.1f GiB, allocated after the step %.1f: %+.1f %%\n",
        c.name, live, c.peak_gib, 100 * (live / c.peak_gib - 1), states, c.after_step_gib,
        100 * (states / c.after_step_gib - 1));
    EXPECT_NEAR(live / c.peak_gib, 1, 0.10) << c.name;
    EXPECT_NEAR(states / c.after_step_gib, 1, 0.10) << c.name;
    // The fp32 gradient buffer: 2 bytes a parameter more than bf16's.
    model::Spec bf16 = *spec;
    bf16.workload.grad_reduce_bytes = 2;
    const plan::MemoryBreakdown half =
        plan::EstimateMemory(bf16, w.strategy, w.micro_batch, w.recompute);
    EXPECT_NEAR(mem.states.grads_bytes, 2 * half.states.grads_bytes, 1) << c.name;
  }
}

// IBM's fms-fsdp: PyTorch FSDP1 on A100 and H100 by the same scripts, its eager Llama layers
// counted (EagerLlamaBytes). Each row within 15 % but the pessimistic A100 70B, held to its own
// bound (the model's A100 GEMM rate, as on LLM Foundry's A100 tables); the H100 7B, which IBM's
// README itself calls out ("the MFU for 7 and 13B falls below 0.40" on H100), is within since
// memory-bound work runs at H100's measured streaming rate (+13.3 %, +16.0 % at the peak). The H100
// rows over the A100 rows of the same model are printed beside the model's ratio, which runs above
// the published one here as on LLM Foundry's tables (docs/sim.md).
TEST(CalibrationTest, FmsFsdpRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const std::map<std::string_view, double> misses = {{"A100 Llama2 70B", 0.19}};
  std::vector<double> predicted;
  for (const auto& row : kFms) {
    const model::Spec spec = FmsSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    predicted.push_back(r->tokens_per_s / row.gpus);
    std::printf(
        "%-16s %s predicted %5.0f tokens/s/GPU, published %5.0f: %+.1f %% (exposed DP %.2f s, "
        "slowed by hidden comm %.2f s of %.2f s)\n",
        row.name, r->layout.Describe().c_str(), predicted.back(), row.tokens_per_gpu,
        100 * (predicted.back() / row.tokens_per_gpu - 1), r->dp_comm_s, r->contention_s,
        r->step_s);
    const auto miss = misses.find(row.name);
    EXPECT_NEAR(predicted.back() / row.tokens_per_gpu, 1,
                miss == misses.end() ? 0.15 : miss->second)
        << row.name;
    EXPECT_TRUE(r->fits) << row.name << ": it ran";
  }
  constexpr size_t kPairs = std::size(kFms) / 2;  // the A100 rows, then the H100 rows
  ASSERT_EQ(predicted.size(), 2 * kPairs);
  for (size_t i = 0; i < kPairs; ++i) {
    std::printf("%s on H100 over A100: predicted %.2fx, published %.2fx\n", kFms[i].name + 5,
                predicted[i + kPairs] / predicted[i],
                kFms[i + kPairs].tokens_per_gpu / kFms[i].tokens_per_gpu);
  }
}

// AI2's OLMo-core README (docs/sim.md, "OLMo-core, 2024"): FSDP2 with torch.compile on one node of
// 8 H100s, BF16 and torchao's Float8. Each row within the bound but the 13B in FP8, every run
// fitting its 80 GB (they ran), and each FP8 row's gain over its BF16 row printed beside the
// published one.
TEST(CalibrationTest, OlmoCoreRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const std::map<std::string_view, double> misses = {{"OLMo 2 13B FP8", 0.35}};
  std::map<std::string, double> predicted;
  for (const auto& row : kOlmoCore) {
    const model::Spec spec = OlmoCoreSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), 8);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    const double tokens = r->tokens_per_s / 8;
    predicted[row.name] = tokens;
    std::printf(
        "%-15s predicted %6.0f tokens/s/GPU, published %6.0f: %+.1f %% (step %.1f s, slowed by "
        "hidden comm %.1f s, sharding copies %.1f s, exposed DP %.2f s); memory %.1f GiB\n",
        row.name, tokens, row.tokens_per_gpu, 100 * (tokens / row.tokens_per_gpu - 1), r->step_s,
        r->contention_s, r->sharding_copies_s, r->dp_comm_s, r->memory_bytes / kGiB);
    const auto miss = misses.find(row.name);
    EXPECT_NEAR(tokens / row.tokens_per_gpu, 1, miss == misses.end() ? 0.15 : miss->second)
        << row.name;
    EXPECT_TRUE(r->fits) << row.name << ": it ran";
  }
  for (size_t i = 0; i + 1 < std::size(kOlmoCore); i += 2) {
    const OlmoCoreRow& bf16 = kOlmoCore[i];
    const OlmoCoreRow& fp8 = kOlmoCore[i + 1];
    ASSERT_TRUE(!bf16.fp8 && fp8.fp8);
    std::printf("%s FP8 over BF16: predicted %.3fx, published %.3fx\n", bf16.name,
                predicted[fp8.name] / predicted[bf16.name],
                fp8.tokens_per_gpu / bf16.tokens_per_gpu);
  }
}

// Megatron Bridge's model verification cards (docs/sim.md, "Megatron Bridge's verification
// cards, 2026"): Qwen3 8B's pre-training on 16 H100s and Qwen3 30B-A3B's weak scaling on GB300,
// judged and within the bound, the 8B fitting its 80 GB (it ran). Qwen3 30B-A3B's card ran the
// shape, dispatcher and graphs of the EP-overlap skill's forced-balance run (its overlap off) with
// natural routing: the model times both alike, and says the natural one is unmodelled.
TEST(CalibrationTest, BridgeCardRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const model::Spec spec = BridgeCardQwen3Spec();
  auto r = model.Step(spec, LayoutOf(spec), 16);
  ASSERT_TRUE(r) << r.error().message;
  const double tokens = r->tokens_per_s / 16;
  std::printf(
      "Qwen3 8B on 16 H100 %s predicted %6.0f tokens/s/GPU, published %6.0f: %+.1f %% (step "
      "%.2f s, published 25.07 s; exposed DP %.3f s); memory %.1f GiB\n",
      r->layout.Describe().c_str(), tokens, kBridgeCardQwen3TokensPerGpu,
      100 * (tokens / kBridgeCardQwen3TokensPerGpu - 1), r->step_s, r->dp_comm_s,
      r->memory_bytes / kGiB);
  EXPECT_NEAR(tokens / kBridgeCardQwen3TokensPerGpu, 1, 0.15);
  EXPECT_TRUE(r->fits) << "it ran";
  EXPECT_EQ(r->regime.level, Confidence::kCalibrated);

  // Qwen3 30B-A3B's weak scaling on GB300 (64 sequences a GPU a step): flat from 8 to 256 GPUs,
  // as published.
  std::vector<double> scaling;
  for (const auto& p : kBridgeCardQwen3MoeScaling) {
    const model::Spec moe = BridgeCardQwen3MoeScalingSpec(p);
    auto rs = model.Step(moe, LayoutOf(moe), p.gpus);
    ASSERT_TRUE(rs) << rs.error().message;
    const double per_gpu = rs->tokens_per_s / p.gpus;
    scaling.push_back(per_gpu);
    std::printf(
        "Qwen3 30B-A3B on %3d GB300 %s predicted %6.0f tokens/s/GPU, published %6.0f: %+.1f %% "
        "(step %.3f s, exposed DP %.3f s)\n",
        p.gpus, rs->layout.Describe().c_str(), per_gpu, p.tokens_per_gpu,
        100 * (per_gpu / p.tokens_per_gpu - 1), rs->step_s, rs->dp_comm_s);
    EXPECT_NEAR(per_gpu / p.tokens_per_gpu, 1, 0.15) << p.gpus;
  }
  EXPECT_NEAR(scaling.back() / scaling.front(), 1, 0.02);

  // The card's 30.2896 s a step (2026-07-19) against the skill's 24.7138 s (2026-07-25): TP1 PP1
  // EP16, micro-batch 1, global batch 1,024, BF16, flex + HybridEP, TE's graphs of the router and
  // the MoE preprocessing on both.
  model::Spec natural = MoeSpec(MoeRowNamed("Qwen3 30B-A3B BF16", "H100-SXM5-80GB"));
  const model::Spec balanced = natural;
  natural.workload.model.moe.natural_routing = true;
  auto rn = model.Step(natural, LayoutOf(natural), 16);
  auto rb = model.Step(balanced, LayoutOf(balanced), 16);
  ASSERT_TRUE(rn && rb);
  constexpr double kCardStepS = 30.2896, kSkillStepS = 24.7138;
  std::printf(
      "Qwen3 30B-A3B on 16 H100, natural routing: predicted step %.2f s, published %.2f s "
      "(forced balance %.2f s: %.2fx)\n",
      rn->step_s, kCardStepS, kSkillStepS, kCardStepS / kSkillStepS);
  EXPECT_EQ(rn->step_s, rb->step_s);  // timed as balanced
  EXPECT_EQ(rn->regime.level, Confidence::kUnmodelled);
  EXPECT_THAT(rn->regime.reasons, ::testing::Contains(::testing::HasSubstr("natural routing")));
  EXPECT_NE(rb->regime.level, Confidence::kUnmodelled);

  // Not judged: the fine-tuning cards (Bridge f3ae2767, Tulu 3 packed into 2,048-token
  // sequences, 32 micro-batches of one a step, no recompute, no CUDA graphs): full SFT at TP4
  // without sequence parallelism on 4 H100s, 7.42424 s a step; LoRA of rank 8 on QKV and the
  // attention projection on one, 7.77479 s. The LoRA GPU does about 2.7x the SFT GPU's GEMM work a
  // micro-batch and took as long: what sets these steps is not the GPU's work, which is what the
  // model times (BridgeCardQwen3FineTuningSpec).
  struct FineTuningCard {
    const char* name;
    int gpus, tp;
    bool lora;
    double step_s;
  };
  constexpr FineTuningCard kFineTuning[] = {{"full SFT", 4, 4, false, 7.42424},
                                            {"LoRA", 1, 1, true, 7.77479}};
  for (const FineTuningCard& c : kFineTuning) {
    const model::Spec ft = BridgeCardQwen3FineTuningSpec(c.gpus, c.tp, c.lora);
    auto rf = model.Step(ft, LayoutOf(ft), c.gpus);
    ASSERT_TRUE(rf) << rf.error().message;
    std::printf(
        "Qwen3 8B %s on %d H100: predicted step %.2f s (%.0f ms a micro-batch), published %.2f s "
        "(%.0f ms): %.2f of it\n",
        c.name, c.gpus, rf->step_s, rf->step_s / 32 * 1e3, c.step_s, c.step_s / 32 * 1e3,
        rf->step_s / c.step_s);
    EXPECT_LT(rf->step_s, 0.75 * c.step_s) << c.name;
  }
}

// NeMo's long-sequence page (docs/sim.md, "NeMo long sequences, 2024-2025"): Llama 2 7B on H100s
// (FlashAttention-2, as NeMo's launcher ran them) and Llama 3 8B on B200s in FP8 from 4K to 1M
// tokens, context parallelism to 32 ranks. Every row within the bound, every layout fitting its
// GPU (they ran) but the H100 4K one, which the model puts 1 % over.
TEST(CalibrationTest, NemoLongSequenceRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  for (const auto& row : kNemoLongSequence) {
    const model::Spec spec = NemoLongSequenceSpec(row);
    const int gpus = spec.cluster.nodes.TotalGpus();
    ASSERT_EQ(gpus, row.tp * row.pp * row.dp * row.cp) << row.name;
    auto r = model.Step(spec, LayoutOf(spec), gpus);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    const double tokens = r->tokens_per_s / gpus;
    const double published = NemoLongSequenceTokensPerGpu(row);
    std::printf(
        "%-20s %-26s predicted %8.1f tokens/s/GPU, published %8.1f: %+.1f %% (step %.2f s, "
        "exposed CP %.3f s); memory %.1f GiB\n",
        row.name, r->layout.Describe().c_str(), tokens, published, 100 * (tokens / published - 1),
        r->step_s, r->cp_comm_s, r->memory_bytes / kGiB);
    EXPECT_NEAR(tokens / published, 1, 0.15) << row.name;
    EXPECT_EQ(r->fits, row.fits) << row.name;
    if (!row.fits) {
      EXPECT_LT(r->memory_bytes / r->memory_capacity_bytes, 1.02) << row.name;
    }
    // Beyond CP 2 the regime says these runs check it.
    if (row.cp > 2) {
      EXPECT_EQ(r->regime.level, plan::Confidence::kExtrapolated) << row.name;
      const std::string reason = fmt::format(
          "CP{} (calibrated to 2; NeMo's long-sequence runs check it to 16 on B200 and 32 on H100)",
          row.cp);
      EXPECT_TRUE(std::any_of(r->regime.reasons.begin(), r->regime.reasons.end(),
                              [&](const std::string& x) { return x == reason; }))
          << row.name;
    }
  }
}

// Leave-one-source-out (issue 13): fit the fitted constants (gemm_training, attention,
// gemm_half_flops; docs/sim.md) to every source but one by grid search on the mean squared log
// error, predict the one left out, and report both errors. Twelve sources: the Megatron-Core
// H100 table (9 rows, throughput as TFLOP/s), NeMo 25.11 to 26.06 with the fine-tuning rows (41),
// Korthikanti 2022 (8), LLM Foundry FSDP (85), Megatron Bridge MoE (28), BLOOM (1), MT-NLG (3),
// fms-fsdp (8), DeepSpeed on Azure (1), MLPerf Training (53), AI2's OLMo-core (8) and NeMo's
// long-sequence page (17), tokens/s.
// The numbers are in
// docs/sim.md; the bound only guards against a regression.
double LogError(const Efficiency& e, const std::vector<Sample>& samples, double* mean_abs) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, e);
  double sq = 0, abs = 0;
  for (const auto& x : samples) {
    const double pred = Predicted(model, x);
    const double err = LogErrorOf(pred, x.published);
    sq += err * err;
    abs += std::fabs(pred / x.published - 1);
  }
  if (mean_abs) *mean_abs = abs / samples.size();
  return sq / samples.size();
}

// The best constants on a grid for every fold at once: fold k fits on every source but k. Each grid
// point's step times are computed once and shared by the folds (the folds differ only in which
// samples they sum), so the refit costs one sweep, not one per fold; the sums run over the samples
// in source order, exactly as LogError would.
std::vector<Efficiency> FitLeavingEachOut(const std::vector<std::vector<Sample>>& sources) {
  const size_t folds = sources.size();
  std::vector<Efficiency> best(folds);
  std::vector<double> best_err(folds, 1e300);
  size_t total = 0;
  for (const auto& src : sources) total += src.size();
  // Integer steps: gemm_training 0.50-1.00 and attention 0.10-0.90 by 0.02, half 5-20 GFLOP.
  for (int gi = 0; gi <= 25; ++gi) {
    for (int ai = 0; ai <= 40; ++ai) {
      for (int hi = 0; hi <= 6; ++hi) {
        Efficiency e;
        e.gemm_training = 0.50 + 0.02 * gi;
        e.attention = 0.10 + 0.02 * ai;
        e.gemm_half_flops = 5e9 + 2.5e9 * hi;
        const AnalyticalStepModel model(FlopConvention::kMegatron, e);
        std::vector<std::vector<double>> sq(folds);
        for (size_t k = 0; k < folds; ++k) {
          for (const auto& x : sources[k]) {
            const double err = LogErrorOf(Predicted(model, x), x.published);
            sq[k].push_back(err * err);
          }
        }
        for (size_t out = 0; out < folds; ++out) {
          double sum = 0;
          for (size_t k = 0; k < folds; ++k) {
            if (k == out) continue;
            for (double v : sq[k]) sum += v;
          }
          const double err = sum / static_cast<double>(total - sources[out].size());
          if (err < best_err[out]) {
            best_err[out] = err;
            best[out] = e;
          }
        }
      }
    }
  }
  return best;
}

// Sources()'s lists, in its order.
constexpr const char* kSourceNames[] = {
    "Megatron-Core r0.8.0 H100 table",
    "NeMo 25.11-26.06 FP8, MXFP8, NVFP4 (H100, B200, GB200, GB300), with SFT",
    "Korthikanti 2022 A100 Table 5",
    "LLM Foundry FSDP (A100, H100)",
    "Megatron Bridge MoE (Qwen3, GPT-OSS)",
    "BigScience BLOOM-176B",
    "Smith 2022 MT-NLG 530B",
    "IBM fms-fsdp (A100, H100)",
    "DeepSpeed on Azure 2022 (ZeRO-3)",
    "MLPerf Training (H100, H200, B200, B300, GB200, GB300)",
    "AI2 OLMo-core FSDP2 (H100; BF16, FP8)",
    "NeMo long sequences with CP (H100 24.03.01, B200 25.04)",
    "Megatron Bridge verification cards (H100, GB300)"};

TEST(CalibrationTest, LeaveOneSourceOut) {
  const auto sources = Sources();
  const std::vector<Efficiency> fits = FitLeavingEachOut(sources);
  const auto& names = kSourceNames;
  ASSERT_EQ(sources.size(), std::size(names));
  for (size_t out = 0; out < sources.size(); ++out) {
    std::vector<Sample> fit_on;
    for (size_t k = 0; k < sources.size(); ++k) {
      if (k != out) fit_on.insert(fit_on.end(), sources[k].begin(), sources[k].end());
    }
    const Efficiency& e = fits[out];
    double in_fit = 0, held_out = 0, as_shipped = 0;
    LogError(e, fit_on, &in_fit);
    LogError(e, sources[out], &held_out);
    LogError(Efficiency{}, sources[out], &as_shipped);
    std::printf(
        "left out %-34s fit gemm_training %.2f attention %.2f gemm_half_flops %.1fG: in-fit "
        "%.1f %%, held out %.1f %% (shipped constants %.1f %%)\n",
        names[out], e.gemm_training, e.attention, e.gemm_half_flops / 1e9, in_fit * 100,
        held_out * 100, as_shipped * 100);
    EXPECT_LT(held_out, 0.20) << names[out];
  }
}

// Every judged row against the issue's ±15 % bound, per source, and the rows outside it by name:
// the ones docs/sim.md lists ("Where the model stands"). A row that crosses the bound either way
// fails here until the docs say so. Judged: the thirteen sources of the cross-validation and LLM
// Foundry's sequence sweeps (the rows that are not also rows of its main tables) and FP8 table;
// not judged: torchtitan's throughput (500 W GPUs).
TEST(CalibrationTest, RowsOutsideTheBoundAreTheOnesTheDocsName) {
  auto sources = Sources();
  ASSERT_EQ(sources.size(), std::size(kSourceNames));
  std::vector<std::string> names(std::begin(kSourceNames), std::end(kSourceNames));
  sources.push_back(FoundrySweepAndFp8Samples());
  names.push_back("LLM Foundry sequence sweeps and FP8 (A100, H100)");
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  std::set<std::string> outside;
  int rows = 0, within = 0;
  for (size_t k = 0; k < sources.size(); ++k) {
    int n = 0, in = 0;
    double low = 1e9, high = -1e9;
    for (const Sample& x : sources[k]) {
      const double error = Predicted(model, x) / x.published - 1;
      ++n;
      low = std::min(low, error);
      high = std::max(high, error);
      if (std::fabs(error) <= 0.15) {
        ++in;
      } else {
        outside.insert(x.label);
        std::printf("  outside: %-52s %+.1f %%\n", x.label.c_str(), 100 * error);
      }
    }
    std::printf("%-52s %3d rows, %3d within, %+.1f %% to %+.1f %%\n", names[k].c_str(), n, in,
                100 * low, 100 * high);
    rows += n;
    within += in;
  }
  std::printf("%d rows, %d within +-15 %%, %zu outside\n", rows, within, outside.size());
  const std::set<std::string> documented = {
      // Published runs out of line with their own neighbours (docs/sim.md, "PyTorch FSDP, 2023").
      "LLM Foundry H100 760m on 8",     // 7-8 % slower per GPU than its 16- and 32-GPU rows
      "LLM Foundry A100-40 70b on 64",  // 36 % more time per token than 128 GPUs
      "LLM Foundry A100-40 1b on 32",   // 15,555 where 16 and 64 GPUs ran 19,085 and 19,001
      // A100 rows faster than the model's A100 (30B: 73 % hardware FLOPs utilisation).
      "LLM Foundry A100 30b on 8", "fms-fsdp A100 Llama2 70B",
      // A recipe NVIDIA tracks as slower than its BF16 one (no CUDA graphs; issue #2842).
      "H100-SXM5-80GB Qwen3 30B-A3B on 16",
      // MLPerf: Cisco's TP2 run on 128 GPUs (25 % less per GPU than its TP1 run on 64, nothing
      // else changed).
      "MLPerf v5.1 8B Cisco 128",
      // NVFP4 on GB300, faster than the model (its 405B at -14.0 %; docs/sim.md, "NVFP4").
      "GB300 Llama3 70B NVFP4 26.04.01",
      // GPT-OSS 120B, every recipe the spec can state but 26.06's on GB300 (+17 % to +50 %,
      // H100's too): what makes it slower than Qwen3 on the same recipes beyond Megatron-Core's
      // eager paths is not in the model (docs/sim.md, "GPT-OSS 120B").
      "GB200-NVL72 GPT-OSS 120B 26.06 on 64", "B300-SXM-270GB GPT-OSS 120B 26.06 on 64",
      "GB300-NVL72 GPT-OSS 120B BF16 26.04.01 on 64",
      "B300-SXM-270GB GPT-OSS 120B BF16 26.04.01 on 64",
      "GB200-NVL72 GPT-OSS 120B BF16 26.04.01 on 64",
      "B200-SXM-180GB GPT-OSS 120B BF16 26.04.01 on 64",
      "H100-SXM5-80GB GPT-OSS 120B BF16 26.04.01 on 64",
      // TP8 at hidden 8,192 on H100 in FP8: 38 % slower than TP4 published, where the model's TP
      // overlap hides most of the doubled exchange (docs/sim.md, "Fine-tuning").
      "H100 Llama3 70B SFT TP8 PP4",
      // OLMo-core's 13B in FP8: its FP8 gain over BF16 is 1.20x published, 1.37x in the model
      // (the 7B's 1.30x and 1.33x; docs/sim.md, "OLMo-core, 2024").
      "OLMo-core OLMo 2 13B FP8"};
  EXPECT_EQ(within, rows - static_cast<int>(documented.size()));
  EXPECT_EQ(outside, documented);
}

}  // namespace
}  // namespace gpufleet::sim
