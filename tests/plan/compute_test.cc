#include "plan/compute.h"

#include <gtest/gtest.h>

#include "plan/memory.h"
#include "test_util.h"

namespace gpufleet::plan {
namespace {

TEST(ComputeTest, MatchesNarayananPerIterationFlops) {
  // Narayanan SC21 / Korthikanti: model FLOPs per token (3 passes) =
  // 72 L h^2 (1 + s/(6h) + V/(12 L h)).
  const model::ModelShape m = testing::Gpt3Shape();
  const double L = 96, h = 12288, s = 2048, V = 51200;
  const double expected = 72 * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  FlopsPerToken f = CountFlops(m, /*causal=*/false, model::Recompute::kNone);
  EXPECT_NEAR(f.model / expected, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(f.hardware, f.model);
  // Full recompute: 96 L h^2 (1 + s/(6h) + V/(16 L h)), i.e. 4 forward passes.
  f = CountFlops(m, false, model::Recompute::kFull);
  EXPECT_NEAR(f.hardware / (96 * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))), 1.0, 1e-12);
  EXPECT_NEAR(f.hardware / f.model, 4.0 / 3.0, 0.002);  // HFU ~ 4/3 MFU (Korthikanti)
}

TEST(ComputeTest, CausalConventionHalvesAttention) {
  const model::ModelShape m = testing::Gpt3Shape();
  FlopsPerToken full = CountFlops(m, false, model::Recompute::kNone);
  FlopsPerToken causal = CountFlops(m, true, model::Recompute::kNone);
  // Forward attention 4 s h L -> 2 s h L.
  EXPECT_DOUBLE_EQ(full.forward - causal.forward, 2.0 * 2048 * 12288 * 96);
}

// GPT-OSS 120B's attention: 64 heads of 64 (w = 4,096), 4,096 tokens, a window of 128 keys on 18
// of its 36 layers. A causal query meets s/2 = 2,048 keys on a full layer and
// 128 - 128 x 127 / (2 x 4,096) = 126.02 on a windowed one (Megatron Bridge's flop_utils), so
// forward attention per token is 4 w (18 x 2,048 + 18 x 126.02) where it was 4 w 36 x 2,048;
// counted whole, or executed without flash attention, the window changes nothing.
TEST(ComputeTest, ASlidingWindowBoundsTheKeysOfItsLayersCausally) {
  model::ModelShape m = testing::GptOss120bShape();
  const FlopsPerToken causal = CountFlops(m, true, model::Recompute::kNone);
  const FlopsPerToken whole = CountFlops(m, false, model::Recompute::kNone);
  m.sliding_window = 128;
  m.sliding_window_layers = 18;
  const FlopsPerToken windowed = CountFlops(m, true, model::Recompute::kNone);
  const double w = 4096, window_keys = 128 - 128.0 * 127 / (2 * 4096);
  EXPECT_DOUBLE_EQ(causal.attention_forward, 4 * w * 36 * 2048);
  EXPECT_NEAR(windowed.attention_forward / (4 * w * (18 * 2048 + 18 * window_keys)), 1, 1e-12);
  EXPECT_NEAR(causal.forward - windowed.forward, 4 * w * 18 * (2048 - window_keys), 1);
  EXPECT_DOUBLE_EQ(CountFlops(m, false, model::Recompute::kNone).forward, whole.forward);
  // Selective recompute re-runs the windowed scores, not the whole ones.
  EXPECT_DOUBLE_EQ(CountFlops(m, true, model::Recompute::kSelective).hardware,
                   windowed.model + windowed.attention_forward);
  // A window as long as the sequence is the causal prefix itself, and one key shorter never
  // costs more than it; none on any layer, no window. 0 windowed layers on a shape built in code
  // is all of them, as the spec's default.
  m.sliding_window = 4096;
  EXPECT_DOUBLE_EQ(CountFlops(m, true, model::Recompute::kNone).forward, causal.forward);
  m.sliding_window = 4095;
  EXPECT_DOUBLE_EQ(CountFlops(m, true, model::Recompute::kNone).forward, causal.forward);
  m.sliding_window = 8192;  // longer than the sequence
  EXPECT_DOUBLE_EQ(CountFlops(m, true, model::Recompute::kNone).forward, causal.forward);
  m.sliding_window = 1;
  EXPECT_DOUBLE_EQ(CountFlops(m, true, model::Recompute::kNone).attention_forward,
                   4 * w * (18 * 2048 + 18 * 1));
  m.sliding_window_layers = 0;
  EXPECT_EQ(m.WindowedLayers(), 36);
  m.sliding_window = 0;
  EXPECT_EQ(m.WindowedLayers(), 0);
  EXPECT_DOUBLE_EQ(CountFlops(m, true, model::Recompute::kNone).forward, causal.forward);
}

// Packed documents bound a causal query to its own document's keys, d/2 on average (Megatron
// Bridge's flop_utils counted sum(d^2) for a while); the whole count knows no documents; a window
// meets a document as it meets a sequence of that length.
TEST(ComputeTest, PackedDocumentsBoundTheKeysOfEveryQueryCausally) {
  model::ModelShape m = testing::Llama3_70bShape();
  const FlopsPerToken causal = CountFlops(m, true, model::Recompute::kNone);
  const FlopsPerToken whole = CountFlops(m, false, model::Recompute::kNone);
  m.document_length = 256;
  const FlopsPerToken packed = CountFlops(m, true, model::Recompute::kNone);
  EXPECT_DOUBLE_EQ(packed.attention_forward, 4 * 8192.0 * 80 * 128);
  EXPECT_DOUBLE_EQ(causal.forward - packed.forward, 4 * 8192.0 * 80 * (2048 - 128));
  EXPECT_DOUBLE_EQ(CountFlops(m, false, model::Recompute::kNone).forward, whole.forward);
  // Llama 3 70B in 4,096-token packs: 433.1 GFLOP a token counted causally over the whole
  // sequence, of which the scores' 16.1 fall to 1.0 in documents of 256.
  EXPECT_NEAR(causal.model / 1e9, 433.1, 0.1);
  EXPECT_NEAR(packed.model / 1e9, 418.0, 0.1);
  // A window over documents: the document is its sequence.
  m.sliding_window = 128;
  model::ModelShape short_sequence = m;
  short_sequence.sequence = 256;
  short_sequence.document_length = 0;
  EXPECT_DOUBLE_EQ(CausalWindowKeys(m), CausalWindowKeys(short_sequence));
  EXPECT_DOUBLE_EQ(CausalWindowKeys(m), 128 - 128.0 * 127 / (2 * 256));
  // One document filling the sequence is no packing.
  m.sliding_window = 0;
  m.document_length = 4096;
  EXPECT_DOUBLE_EQ(CountFlops(m, true, model::Recompute::kNone).forward, causal.forward);
}

// LoRA: the frozen matmuls and the logits count their forward and the input's gradient (2 x
// forward), the adapters and attention all three passes. Llama 3 70B in 4,096-token packs of
// documents of 256, rank 16 on QKV: 418.0 - 139.0 + 0.14 = 279.1 GFLOP a token, where Megatron
// Bridge's LoRA table gives 278.1-279.1 (its model TFLOP/s over its tokens/s on the five rows:
// its count of the frozen matmuls at two thirds and attention over the packed documents, without
// the adapters).
// A capacity factor pads each expert's tokens to its capacity: the GPU multiplies the padded
// slots (HFU), the model's FLOPs count the routed top-k alone (MFU). Top-2 of 8 experts at 1.25:
// half a copy's expert matmuls more a token, every pass, and once more recomputed.
TEST(ComputeTest, CapacityPaddingIsHardwareWorkNotModelWork) {
  model::ModelShape m;
  m.layers = 4;
  m.hidden = 2048;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 8192;
  m.vocab = 32000;
  m.sequence = 4096;
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.ffn_hidden = 1024;
  const FlopsPerToken dropless = CountFlops(m, true, model::Recompute::kNone);
  EXPECT_DOUBLE_EQ(dropless.hardware, dropless.model);
  m.moe.capacity_factor = 1.25;
  const FlopsPerToken padded = CountFlops(m, true, model::Recompute::kNone);
  EXPECT_DOUBLE_EQ(padded.model, dropless.model);
  const double half_copy = 2 * 0.5 * 2.0 * 2048 * 1024 * 4;  // GELU: in and out, 4 MoE layers
  EXPECT_DOUBLE_EQ(padded.hardware, padded.model + 3 * half_copy);
  const FlopsPerToken full = CountFlops(m, true, model::Recompute::kFull);
  EXPECT_DOUBLE_EQ(full.hardware,
                   padded.model + padded.forward - 2.0 * 2048 * 32000 + 4 * half_copy);
}

TEST(ComputeTest, LoraCountsNoWeightGradientForFrozenMatmuls) {
  model::ModelShape m = testing::Llama3_70bShape();
  m.document_length = 256;
  const FlopsPerToken full = CountFlops(m, true, model::Recompute::kNone);
  m.lora = {.rank = 16, .proj = false, .fc1 = false, .fc2 = false};
  const FlopsPerToken lora = CountFlops(m, true, model::Recompute::kNone);
  const double adapters = 16.0 * 80 * (8192 + 8192 + 2 * 1024);
  EXPECT_DOUBLE_EQ(CountParams(m).adapters, adapters);
  EXPECT_DOUBLE_EQ(lora.adapters_forward, 2 * adapters);
  EXPECT_DOUBLE_EQ(lora.forward, full.forward + 2 * adapters);
  const double frozen = 2 * CountParams(m).active_matmul + 2 * 8192.0 * 128256;
  EXPECT_DOUBLE_EQ(lora.model, full.model - frozen + 6 * adapters);
  EXPECT_NEAR(lora.model / 1e9, 279.1, 0.1);
  for (const double page :
       {2086e12 / 7481, 2072e12 / 7447, 1731e12 / 6206, 1663e12 / 5958, 735e12 / 2643}) {
    EXPECT_NEAR(lora.model / page, 1.0, 0.004) << page;
  }
  // Full recompute re-runs the forward, adapters included.
  EXPECT_DOUBLE_EQ(CountFlops(m, true, model::Recompute::kFull).hardware,
                   lora.model + lora.forward - 2 * 8192.0 * 128256);
}

TEST(ComputeTest, ReferenceStepTimeWorkedByHand) {
  // Forward per token = 40 (2 x 317,194,240 + 4 x 4096 x 5120) + 2 x 5120 x 32000
  //                   = 40 x 718,274,560 + 327,680,000 = 29,058,662,400; x 3 = 87,175,987,200.
  // Tokens per step 1024 x 4096 = 4,194,304 -> 3.6564e17 FLOPs.
  // Ideal step = 3.6564e17 / (32 x 312e12) = 36.62 s; at 45 % MFU 81.38 s.
  model::Spec s = testing::Reference();
  ComputePlan c = PlanCompute(s);
  EXPECT_DOUBLE_EQ(c.per_token.model, 87175987200.0);
  EXPECT_DOUBLE_EQ(c.tokens_per_step, 4194304);
  EXPECT_NEAR(c.ideal_step_s, 87175987200.0 * 4194304 / (32 * 312e12), 1e-9);
  EXPECT_NEAR(c.compute_step_s, c.ideal_step_s / 0.45, 1e-9);
  EXPECT_NEAR(c.micro_batch_s, c.compute_step_s / 8, 1e-9);
  // Full recompute: hardware = model + forward of the layers = 87,175,987,200 +
  // 28,730,982,400 = 115,906,969,600 FLOPs per token; HFU = 45 % x 1.3296 = 59.8 %.
  EXPECT_DOUBLE_EQ(c.per_token.hardware, 115906969600.0);
  EXPECT_NEAR(c.hfu, 0.45 * 115906969600.0 / 87175987200.0, 1e-12);
  EXPECT_DOUBLE_EQ(c.hfu_ceiling, 0.869);
}

}  // namespace
}  // namespace gpufleet::plan
