// The step-time model against MosaicML LLM Foundry's throughput tables (docs/sim.md): the A100
// and H100 FSDP rows at 2,048 tokens, the sequence sweeps that give the Triton attention kernel's
// rate, and the H100 FP8 table. Checked against, not fitted to.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
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

using runs::Eff;
using runs::FoundryRow;
using runs::FoundrySpec;
using runs::GpuLabel;
using runs::kFoundry;
using runs::kFoundryBf16CheckpointedTwin;
using runs::kFoundryFp8;
using runs::kFoundrySweep;
using runs::SameRun;

// The A100 rows the model misses by more than 15 %, each with its bound and why: one row the
// model's A100 GEMM rate cannot reach and two published rows far below their neighbours in the
// same table. (The 125M rows at 32-128 GPUs, +15 to +17 %, were the loss and the training
// metrics, which the model did not count: now -6 to -8 %.)
struct FoundryMiss {
  const char* name;
  const char* gpu;
  int gpus;
  double bound;
};

constexpr FoundryMiss kFoundryA100Misses[] = {
    // 73.7 % hardware FLOPs utilisation with full recomputation: above the model's A100 GEMM rate
    // (0.87 x 0.78 of the peak, fitted on H100); -14.7 % before FSDP1's gradient copies.
    {"30b", "A100-SXM4-80GB", 8, 0.19},
    // 276 tokens/s per GPU at micro-batch 2, where 128 GPUs at micro-batch 4 ran 376: 36 % more
    // time per token on half the GPUs, which neither the gathers nor the bubble-free FSDP explain.
    {"70b", "A100-SXM4-40GB", 64, 0.26},
    // 15,555 tokens/s per GPU where 16 and 64 GPUs ran 19,085 and 19,001.
    {"1b", "A100-SXM4-40GB", 32, 0.18},
};

// The H100 rows: -5.2 to +17.7 % (14 of 14 checkpointed rows within 15 %, 23 of 24 without).
// With the Triton kernel at its A100 rate times what FlashAttention and FlashAttention-2 gained
// from A100 to H100, the compute slowed beside FSDP's hidden collectives, FSDP1's gradient
// copies, SHARD_GRAD_OP's per-unit collectives, and the loss and training metrics, what is left
// is the kernel ~7 % faster on these H100s than the model says and the rest of the step 5-12 %
// slower (KernelRateFromTheSequenceSweep, docs/sim.md). The row outside is 760M on 8 GPUs
// (+17.7 %), which ran 8 % slower than on 16 or 32 (before the kernel's measured gain, -3.6 to
// +23.5 %, with 1B ZeRO-2 on 512 GPUs at +15.2 %). Judged so that the bias stays visible and
// cannot grow unseen.
TEST(CalibrationTest, LlmFoundryFsdpRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  double worst_a100 = 0, worst_h100 = 0;
  int checkpointed_h100_within = 0, h100_within = 0, a100_within = 0, a100_rows = 0;
  for (const auto& row : kFoundry) {
    const model::Spec spec = FoundrySpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    const double predicted = r->tokens_per_s / row.gpus;
    const double error = predicted / row.tokens_per_gpu - 1;
    const bool a100 = std::string(row.gpu).rfind("A100", 0) == 0;
    std::printf(
        "%s %-5s %4d GPUs %-9s mb %-2d ckpt %d predicted %7.0f tokens/s/GPU, published %7.0f: "
        "%+.1f %%%s\n",
        GpuLabel(row).c_str(), row.name, row.gpus, row.full_shard ? "fsdp" : "zero2",
        row.micro_batch, row.checkpointing, predicted, row.tokens_per_gpu, error * 100,
        r->fits ? "" : " (does not fit, by the memory model)");
    if (a100) {
      double bound = 0.15;
      for (const auto& miss : kFoundryA100Misses) {
        if (std::string_view(miss.name) == row.name && std::string_view(miss.gpu) == row.gpu &&
            miss.gpus == row.gpus) {
          bound = miss.bound;
        }
      }
      EXPECT_NEAR(error, 0, bound) << row.name << " on " << row.gpus << " " << row.gpu;
      worst_a100 = std::max(worst_a100, std::fabs(error));
      a100_within += std::fabs(error) <= 0.15;
      ++a100_rows;
    } else {
      EXPECT_GT(error, -0.07) << row.name << " on " << row.gpus << " H100";
      EXPECT_LT(error, 0.18) << row.name << " on " << row.gpus << " H100";
      worst_h100 = std::max(worst_h100, error);
      checkpointed_h100_within += row.checkpointing && error <= 0.15;
      h100_within += error <= 0.15;
    }
    EXPECT_TRUE(r->fits) << row.name << " on " << row.gpus << ": it ran";
  }
  EXPECT_GE(checkpointed_h100_within, 14);  // of 14
  EXPECT_GE(h100_within, 37);               // of 38
  EXPECT_EQ(a100_within, a100_rows - static_cast<int>(std::size(kFoundryA100Misses)));
  std::printf("A100 rows within 15 %%: %d of %d; worst: A100 %.1f %%, H100 %+.1f %%\n", a100_within,
              a100_rows, worst_a100 * 100, worst_h100 * 100);
}

// A least-squares line through (x, y) points, and its largest residual relative to y.
struct Line {
  double slope = 0, intercept = 0, worst_residual = 0;
};

Line FitLine(const std::vector<std::pair<double, double>>& xy) {
  double mx = 0, my = 0;
  for (const auto& [x, y] : xy) mx += x / xy.size(), my += y / xy.size();
  double sxy = 0, sxx = 0;
  for (const auto& [x, y] : xy) sxy += (x - mx) * (y - my), sxx += (x - mx) * (x - mx);
  Line l;
  l.slope = sxy / sxx;
  l.intercept = my - l.slope * mx;
  for (const auto& [x, y] : xy) {
    l.worst_residual = std::max(l.worst_residual, std::fabs(l.intercept + l.slope * x - y) / y);
  }
  return l;
}

// The Triton kernel's rate is the slope of the A100 sweep: per model, the published time per
// token and layer against the sequence (least squares over 2,048 and up), 6 s w FLOPs of
// attention per token and layer at the kernel's rate. The tokens per micro-batch are not quite
// constant along a sweep (16 K to 48 K), so the GEMMs' size and FSDP's per-micro-batch costs
// could leak into the slope: the same fit through the model's own predictions, whose attention
// runs at exactly 0.263, gives 0.263 back within 1.5 %, so they do not. On H100 (the same kernel
// at its A100 rate times the 1.674x that FlashAttention and FlashAttention-2 gained from A100 to
// H100) the published slope is 6-7 % above the model's (the kernel gained 1.80x, at the top of
// their 1.57-1.79x; at mma.sync's share of the GEMM peak, 2.07x, it was 13-15 % below) and the
// intercept, the rest of the step, 5-12 % below. The intercept is where the loss and the training
// metrics sit, a cost per token that does not grow with the sequence: without them the intercepts
// were 7-16 % below on H100, and 125M's on A100 15 % below where 350M-3B's were within 1 to 7 %
// above.
TEST(CalibrationTest, KernelRateFromTheSequenceSweep) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  struct Sweep {
    const FoundryRow* row = nullptr;                              // any row of the model: its shape
    std::vector<std::pair<double, double>> published, predicted;  // (s, seconds/token/layer)
  };
  std::map<std::string, Sweep> sweeps;  // "A100 1b"
  for (const auto& r : kFoundrySweep) {
    const bool a100 = std::string_view(r.gpu).rfind("A100", 0) == 0;
    if (a100 && r.sequence < 2048) continue;
    const model::Spec spec = FoundrySpec(r);
    auto step = model.Step(spec, LayoutOf(spec), r.gpus);
    ASSERT_TRUE(step) << r.name;
    Sweep& sw = sweeps[fmt::format("{} {}", GpuLabel(r), r.name)];
    sw.row = &r;
    sw.published.push_back({r.sequence, 1 / (r.tokens_per_gpu * r.layers)});
    sw.predicted.push_back({r.sequence, r.gpus / (step->tokens_per_s * r.layers)});
  }
  std::vector<double> a100_shares;
  for (const auto& [key, sw] : sweeps) {
    const bool a100 = key.rfind("A100", 0) == 0;
    const double peak = a100 ? 312e12 : 989.4e12;  // dense BF16
    const Line pub = FitLine(sw.published), pred = FitLine(sw.predicted);
    const double rate = 6.0 * sw.row->hidden / pub.slope;
    const double model_rate = 6.0 * sw.row->hidden / pred.slope;
    std::printf(
        "%-9s attention %.1f TFLOP/s published (%.3f of the peak), %.1f in the model; the rest "
        "of the step at %.3f of the model's speed; line within %.1f %%\n",
        key.c_str(), rate / 1e12, rate / peak, model_rate / 1e12, pred.intercept / pub.intercept,
        pub.worst_residual * 100);
    EXPECT_LT(pub.worst_residual, 0.035) << key << ": not a line";
    if (key.rfind("A100-40", 0) == 0) {
      // The 40 GB table, not used for the rate: the same kernel on the same SMs. Its sweeps are
      // shorter (to 8,192 for 3B) and their tokens per micro-batch vary more, which tilts the
      // model's own line as much as the published one: the two slopes are compared (1B, 350M,
      // 760M, 3B within 4 %; 125M's 768-wide GEMMs 9.5 %).
      EXPECT_NEAR(rate / model_rate, 1, sw.row->hidden < 1024 ? 0.10 : 0.05) << key;
    } else if (a100) {
      a100_shares.push_back(rate / peak);
      EXPECT_NEAR(rate / peak, plan::kTriton2022AttentionOfPeak, 0.012) << key;
      EXPECT_NEAR(model_rate / peak, plan::kTriton2022AttentionOfPeak, 0.004) << key;
    } else {
      // The model's kernel: 0.263 x 1.674 x 312 / 989.4 of the peak, within the GEMMs' leak.
      EXPECT_NEAR(model_rate / peak, 0.139, 0.003) << key;
      EXPECT_GT(rate / model_rate, 1.03) << key;
      EXPECT_LT(rate / model_rate, 1.10) << key;
      EXPECT_GT(pred.intercept / pub.intercept, 0.88) << key;
      EXPECT_LT(pred.intercept / pub.intercept, 0.97) << key;
    }
  }
  ASSERT_EQ(a100_shares.size(), 5u);
  std::sort(a100_shares.begin(), a100_shares.end());
  EXPECT_NEAR(a100_shares[2], plan::kTriton2022AttentionOfPeak, 0.0005);  // the median
}

// With the kernel's own rate, and the loss and training metrics counted, the A100 sweep lands
// within -8 % to +6 % at every length and model (125M's error no longer grows as the sequence
// shortens: it ran +0.1 % at 65,536 to +14.5 % at 2,048, now -2.1 % to 0.0 %). On H100 (the same
// kernel at its A100 rate times FlashAttention's measured A100-to-H100 gain) what is left is
// -4.2 % to +8.8 %, lower at long sequences, where the kernel the model runs ~7 % slow weighs
// most, and higher at short ones, where the rest of the step it runs 5-12 % fast does (at
// mma.sync's share of the GEMM peak it was +6 to +16.4 %, growing with the sequence; docs/sim.md).
TEST(CalibrationTest, LlmFoundrySequenceSweep) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  std::map<std::string, std::pair<double, double>> h100_range;  // model: (lowest, highest)
  for (const auto& row : kFoundrySweep) {
    const model::Spec spec = FoundrySpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    const double error = r->tokens_per_s / row.gpus / row.tokens_per_gpu - 1;
    const bool a100 = std::string_view(row.gpu).rfind("A100", 0) == 0;
    std::printf(
        "%s %-5s sequence %6d mb %-3d predicted %7.0f tokens/s/GPU, published %7.0f: %+.1f %%\n",
        GpuLabel(row).c_str(), row.name, row.sequence, row.micro_batch, r->tokens_per_s / row.gpus,
        row.tokens_per_gpu, error * 100);
    EXPECT_TRUE(r->fits) << row.name << " at " << row.sequence << ": it ran";
    if (a100) {
      EXPECT_NEAR(error, 0, 0.12) << row.name << " at " << row.sequence;
      continue;
    }
    EXPECT_GT(error, -0.06) << row.name << " at " << row.sequence;
    EXPECT_LT(error, 0.10) << row.name << " at " << row.sequence;
    auto [it, fresh] = h100_range.try_emplace(row.name, error, error);
    it->second = {std::min(it->second.first, error), std::max(it->second.second, error)};
  }
  for (const auto& [name, range] : h100_range) {
    // The spread: the kernel the model runs ~7 % slow at the long end, the rest of the step
    // 5-12 % fast at the short end (11.9 and 12.4 points for 760M and 1B, 7.1 for 3B; 5.4-7.1
    // at mma.sync's share, the other way round).
    EXPECT_LT(range.second - range.first, 0.13)
        << name << ": the H100 error's spread along the sequence";
  }
}

// The loss and the training metrics are a cost per token that does not grow with the sequence,
// and their share of the step is the vocabulary's: 125M (768 wide, 31 % of its parameters in the
// 50,368-word vocabulary) shows them most. Without them the A100 125M sweep's error grew from
// +0.1 % at 65,536 tokens to +14.5 % at 2,048 as the logits' share grew; with them, counted from
// the kernels and not fitted, it is flat within 3 points. The 40 GB table's 125M sweep (Composer
// 0.13, its attention slope 13 % below the 80 GB table's: 0.232 of the peak) does not show it:
// +5.1 % to +11.9 % without, -5.0 % to +5.9 % with, still within 12 % (LlmFoundrySequenceSweep).
TEST(CalibrationTest, TheLossFlattensTheSmallModelsSweep) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  for (const char* gpu : {"A100-SXM4-80GB", "A100-SXM4-40GB"}) {
    double low[2] = {1, 1}, high[2] = {-1, -1};  // without, with the loss
    int rows = 0;
    for (const auto& row : kFoundrySweep) {
      if (std::string_view(row.gpu) != gpu || std::string_view(row.name) != "125m") continue;
      ++rows;
      for (int with = 0; with < 2; ++with) {
        model::Spec spec = FoundrySpec(row);
        if (!with) spec.workload.loss_traffic_per_logit = 0;
        auto r = model.Step(spec, LayoutOf(spec), row.gpus);
        ASSERT_TRUE(r) << row.name;
        const double error = r->tokens_per_s / row.gpus / row.tokens_per_gpu - 1;
        low[with] = std::min(low[with], error);
        high[with] = std::max(high[with], error);
      }
    }
    std::printf(
        "%s 125M sweep (%d lengths): error %+.1f %% to %+.1f %% without the loss, %+.1f %% "
        "to %+.1f %% with it\n",
        gpu, rows, 100 * low[0], 100 * high[0], 100 * low[1], 100 * high[1]);
    EXPECT_GE(rows, 5);
    if (std::string_view(gpu) != "A100-SXM4-80GB") continue;
    EXPECT_GT(high[0] - low[0], 0.10) << gpu;
    EXPECT_LT(high[1] - low[1], 0.04) << gpu;
  }
}

// The FP8 rows carry the H100 table's bias (-6.8 % to +10.0 %, where the BF16 sweep's rows of
// these models are -4.2 % to +8.2 %; +7.8 % to +15.1 % and +5.0 % to +13.0 % before the Triton
// kernel's measured A100-to-H100 gain; under Composer's amp_fp8 the training metrics run on the
// bf16 logits without autocast, 16 bytes per logit where amp_bf16 moves 28); where the BF16 table
// ran the same shape (model, length, micro-batch, accumulation, checkpointing), the FP8 speed-up
// itself, in which that bias cancels, is what the FP8 mechanisms predict: the linear layers at
// FP8's own ceiling with their casts, attention and the output layer in BF16 (1.00x at 32,768
// tokens, where attention is most of the step, to 1.35x at 512).
TEST(CalibrationTest, LlmFoundryFp8RowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  auto predicted = [&](const FoundryRow& row) {
    const model::Spec spec = FoundrySpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    EXPECT_TRUE(r) << row.name << ": " << r.error().message;
    EXPECT_TRUE(r && r->fits) << row.name << " at " << row.sequence << ": it ran";
    return r ? r->tokens_per_s / row.gpus : 0.0;
  };
  int within = 0, twins = 0;
  for (const auto& row : kFoundryFp8) {
    const double fp8 = predicted(row);
    const double error = fp8 / row.tokens_per_gpu - 1;
    std::printf(
        "H100 FP8 %-3s sequence %6d mb %-2d predicted %6.0f tokens/s/GPU, published %6.0f: "
        "%+.1f %%\n",
        row.name, row.sequence, row.micro_batch, fp8, row.tokens_per_gpu, error * 100);
    EXPECT_GT(error, -0.08) << row.name << " at " << row.sequence;
    EXPECT_LT(error, 0.11) << row.name << " at " << row.sequence;
    within += error <= 0.15;
    const auto same_shape = [&](const FoundryRow& b) { return SameRun(b, row); };
    const FoundryRow* bf16 =
        std::find_if(std::begin(kFoundrySweep), std::end(kFoundrySweep), same_shape);
    if (bf16 == std::end(kFoundrySweep)) {
      if (!same_shape(kFoundryBf16CheckpointedTwin)) continue;
      bf16 = &kFoundryBf16CheckpointedTwin;
    }
    const double published_speedup = row.tokens_per_gpu / bf16->tokens_per_gpu;
    const double model_speedup = fp8 / predicted(*bf16);
    std::printf("    FP8 over BF16: predicted %.2fx, published %.2fx\n", model_speedup,
                published_speedup);
    EXPECT_NEAR(model_speedup / published_speedup, 1, 0.10) << row.name << " at " << row.sequence;
    ++twins;
  }
  EXPECT_EQ(twins, 5);
  EXPECT_EQ(within, 7);  // of 7 (1B at 32,768 was +15.1 % before the kernel's measured gain)
}

}  // namespace
}  // namespace gpufleet::sim
