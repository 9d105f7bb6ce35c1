#include "plan/memory.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace gpufleet::plan {
namespace {

using model::Recompute;
using model::Strategy;
using testing::kGiB;

TEST(MemoryTest, CountsLlama2_13BParametersExactly) {
  // Per layer: attention 4 x 5120^2 = 104,857,600; SwiGLU 3 x 5120 x 13824 = 212,336,640;
  // two norms 2 x 5120 = 10,240 -> 317,204,480. Embedding and output 32000 x 5120 =
  // 163,840,000 each; final norm 5120. Total 40 x 317,204,480 + 327,680,000 + 5,120 =
  // 13,015,864,320, the published parameter count of Llama-2-13B.
  model::ModelShape m;
  m.layers = 40;
  m.hidden = 5120;
  m.heads = 40;
  m.kv_heads = 40;
  m.ffn_hidden = 13824;
  m.mlp = model::Mlp::kSwiglu;
  m.vocab = 32000;
  m.sequence = 4096;
  ParamCounts p = CountParams(m);
  EXPECT_DOUBLE_EQ(p.per_layer, 317204480);
  EXPECT_DOUBLE_EQ(p.embedding, 163840000);
  EXPECT_DOUBLE_EQ(p.total, 13015864320);
  EXPECT_DOUBLE_EQ(p.largest_unit, 317204480);
}

TEST(MemoryTest, CountsMixtureOfExpertsTotalAndActiveParameters) {
  // Qwen3-30B-A3B and Qwen3-235B-A22B (config.json: head size 128, 128 experts, top 8, untied
  // embeddings): 30.5B total and 3.3B activated, 235B and 22B, as Qwen publishes them. Active =
  // the matmul parameters one token goes through plus the embeddings.
  auto qwen = [](int layers, int hidden, int heads, int expert_ffn) {
    model::ModelShape m;
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kv_heads = 4;
    m.head_dim = 128;
    m.mlp = model::Mlp::kSwiglu;
    m.vocab = 151936;
    m.sequence = 4096;
    m.moe.experts = 128;
    m.moe.top_k = 8;
    m.moe.ffn_hidden = expert_ffn;
    return CountParams(m);
  };
  const ParamCounts small = qwen(48, 2048, 32, 768);
  EXPECT_NEAR(small.total / 1e9, 30.5, 0.1);
  EXPECT_NEAR((small.active_matmul + small.embedding + small.output) / 1e9, 3.3, 0.1);
  EXPECT_NEAR(small.experts / 1e9, 48 * 128 * 3.0 * 2048 * 768 / 1e9, 1e-9);
  const ParamCounts big = qwen(94, 4096, 64, 1536);
  EXPECT_NEAR(big.total / 1e9, 235, 1);
  EXPECT_NEAR((big.active_matmul + big.embedding + big.output) / 1e9, 22, 0.5);
}

// GPT-OSS 120B's parameters as OpenAI's model card (August 2025, Table 1) counts them: 116.83B in
// all, 114.71B of them in the MLPs (the routed experts and the router, with their biases), 0.96B
// in attention (with its biases), 1.16B in the embedding and the unembedding; 5.13B active a
// token with the unembedding. Linear biases (model.linear_bias) are a vector a weight, off the
// GEMMs: without them the experts lose 128 x (2 x 2,880 + 2,880) a layer.
TEST(MemoryTest, GptOssParametersWithTheirBiases) {
  model::ModelShape m = testing::GptOss120bShape();
  const ParamCounts p = CountParams(m);
  EXPECT_NEAR(p.total / 1e9, 116.83, 0.005);
  EXPECT_NEAR((p.embedding + p.output) / 1e9, 1.16, 0.005);
  const double attention = m.layers * (p.moe_layer - p.experts / m.layers - 128 * 2880.0 - 128 -
                                       2 * 2880.0);  // less the router and the norms
  EXPECT_NEAR(attention / 1e9, 0.96, 0.005);
  EXPECT_NEAR((p.experts + m.layers * (128 * 2880.0 + 128)) / 1e9, 114.71, 0.005);
  EXPECT_NEAR((p.active_matmul + p.output) / 1e9, 5.13, 0.01);
  m.linear_bias = false;
  const ParamCounts bare = CountParams(m);
  EXPECT_DOUBLE_EQ(p.experts - bare.experts, 36 * 128 * (2 * 2880.0 + 2880));
  EXPECT_DOUBLE_EQ(p.active_matmul, bare.active_matmul);
}

TEST(MemoryTest, ExpertParallelismDividesTheExperts) {
  model::Spec s = testing::Reference();
  s.workload.model.moe = {.experts = 64, .top_k = 2, .ffn_hidden = 4096};
  s.workload.strategy = Strategy::kZero1;
  const MemoryBreakdown one = EstimateMemory(s, Strategy::kZero1, 1, Recompute::kNone);
  s.workload.expert = 8;
  const MemoryBreakdown eight = EstimateMemory(s, Strategy::kZero1, 1, Recompute::kNone);
  // bf16 weights of the experts: 1/8 of them on each GPU.
  const ParamCounts p = CountParams(s.workload.model);
  const int tp_pp = s.workload.tensor * s.workload.pipeline;
  EXPECT_NEAR(one.states.weights_bytes - eight.states.weights_bytes,
              2 * p.experts / tp_pp * (1 - 1.0 / 8), 1);
  EXPECT_LT(eight.total_bytes, one.total_bytes);
}

TEST(MemoryTest, CountsGroupedQueryAttention) {
  // hidden 4096, 32 heads, 8 KV heads: K and V are 4096 x 1024 each.
  // Attention = 2 x 4096^2 + 2 x 4096 x 1024 = 33,554,432 + 8,388,608 = 41,943,040;
  // GELU MLP 2 x 4096 x 16384 = 134,217,728; norms 8,192 -> 176,168,960 per layer.
  model::ModelShape m;
  m.layers = 1;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn_hidden = 16384;
  m.vocab = 1;
  EXPECT_DOUBLE_EQ(CountParams(m).per_layer, 176168960);
}

TEST(MemoryTest, ReproducesTheZeroPaperFigure1) {
  // ZeRO (Rajbhandari et al. SC20) Fig. 1: 7.5B parameters, N_d = 64, K = 12.
  // Baseline 16 x 7.5 = 120 GB; P_os 4 x 7.5 + 12 x 7.5/64 = 31.4 GB;
  // P_os+g 2 x 7.5 + 14 x 7.5/64 = 16.6 GB; P_os+g+p 16 x 7.5/64 = 1.9 GB.
  const double psi = 7.5e9;
  EXPECT_DOUBLE_EQ(ModelStateBytes(Strategy::kDdp, psi, 64).Total(), 120e9);
  EXPECT_DOUBLE_EQ(ModelStateBytes(Strategy::kZero1, psi, 64).Total(), 31.40625e9);
  EXPECT_DOUBLE_EQ(ModelStateBytes(Strategy::kZero2, psi, 64).Total(), 16.640625e9);
  EXPECT_DOUBLE_EQ(ModelStateBytes(Strategy::kZero3, psi, 64).Total(), 1.875e9);
  EXPECT_DOUBLE_EQ(ModelStateBytes(Strategy::kFsdp, psi, 64).Total(), 1.875e9);
}

ActivationInputs Gpt3Layer() {
  // Korthikanti et al. 2022 Table 2 setting: GPT-3 175B, s 2048, b 1, h 12288, a 96, t 8.
  ActivationInputs a;
  a.sequence = 2048;
  a.micro_batch = 1;
  a.hidden = 12288;
  a.heads = 96;
  a.attention_split = 8;  // Q, K, V and the output, h wide each
  a.mlp_split = 16;       // a 4h GELU MLP: its input projection's output and the activation's
  a.vocab = 51200;
  a.layers_per_stage = 1;
  a.tensor = 8;
  a.flash_attention = false;
  return a;
}

TEST(MemoryTest, LayerActivationsFollowKorthikantiTable2) {
  ActivationInputs a = Gpt3Layer();
  const double sbh = 2048.0 * 12288;  // 25,165,824
  // TP only: sbh (10 + 24/t + 5 a s/(h t)) = sbh (10 + 3 + 10) = 23 sbh.
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), 23 * sbh);
  // TP + SP: sbh/t (34 + 5 a s/h) = sbh/8 x 114.
  a.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), sbh / 8 * 114);
  // TP + SP + selective recompute: 34 sbh / t.
  a.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), 34 * sbh / 8);
  // FlashAttention drops the score term like selective recompute does.
  a.recompute = Recompute::kNone;
  a.flash_attention = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), 34 * sbh / 8);
}

// Selective recompute's modules (Megatron-Core's recompute_modules) drop their outputs: the
// attention core its scores (without flash attention), layernorm the MoE layers' pre-MLP norm
// output (2 bytes an element, outside the TP region), moe_act the experts' activation output
// (2 bytes over k x the expert width, inside it), mlp a dense layer's MLP input and inner
// activations (2 + 4 f/h).
TEST(MemoryTest, SelectiveRecomputeModulesDropTheirOutputs) {
  ActivationInputs a = Gpt3Layer();
  const double sbh = 2048.0 * 12288;
  a.recompute = Recompute::kSelective;
  // Without the attention core among the modules the scores stay, as without recompute.
  a.recompute_core_attn = false;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), 23 * sbh);
  a.recompute_core_attn = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), 13 * sbh);  // 10 + 24/8
  // TP only: the replicated part loses its drop whole, the split part its drop over t.
  a.dropped_replicated = 2;
  a.dropped_split = 8;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), (8 + 16.0 / 8) * sbh);
  a.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), (34 - 10) * sbh / 8);
  // Counted only with selective recompute.
  a.recompute = Recompute::kNone;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), (34 + 5 * 96 * 2048 / 12288.0) * sbh / 8);

  // The drops, from the model: a MoE of 4 layers, 1 dense, top-2 of experts 1,024 wide at a
  // capacity factor of 1.25, hidden 2,048, dense MLP 8,192.
  model::ModelShape m;
  m.layers = 4;
  m.hidden = 2048;
  m.ffn_hidden = 8192;
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.ffn_hidden = 1024;
  m.moe.capacity_factor = 1.25;
  m.moe.dense_layers = 1;
  model::Workload::RecomputeModules mods{.core_attn = false, .layernorm = true};
  EXPECT_DOUBLE_EQ(SelectiveRecomputeDrops(m, mods).replicated, 2 * 0.75);
  EXPECT_DOUBLE_EQ(SelectiveRecomputeDrops(m, mods).split, 0);
  mods = {.core_attn = false, .moe_act = true};
  EXPECT_DOUBLE_EQ(SelectiveRecomputeDrops(m, mods).split, 2 * 2.5 * 1024 / 2048.0 * 0.75);
  mods = {.core_attn = false, .mlp = true};
  EXPECT_DOUBLE_EQ(SelectiveRecomputeDrops(m, mods).replicated, 2 * 0.25);
  EXPECT_DOUBLE_EQ(SelectiveRecomputeDrops(m, mods).split, 4 * 4.0 * 0.25);
  EXPECT_DOUBLE_EQ(SelectiveRecomputeDrops(m, {}).replicated + SelectiveRecomputeDrops(m, {}).split,
                   0);
  // A gated MLP keeps three f-wide tensors (its gate's and up projection's outputs, the
  // activation's): 6 f/h. Under Transformer Engine's FP8 (g = 1) the GEMM inputs are kept
  // quantized: the MLP's input 1 byte, the activation's output 1 over f, the experts' the same.
  m.mlp = model::Mlp::kSwiglu;
  mods = {.core_attn = false, .mlp = true};
  EXPECT_DOUBLE_EQ(SelectiveRecomputeDrops(m, mods).split, 6 * 4.0 * 0.25);
  EXPECT_DOUBLE_EQ(SelectiveRecomputeDrops(m, mods, 1).replicated, 0.25);
  EXPECT_DOUBLE_EQ(SelectiveRecomputeDrops(m, mods, 1).split, 5 * 4.0 * 0.25);
  mods = {.core_attn = false, .moe_act = true};
  EXPECT_DOUBLE_EQ(SelectiveRecomputeDrops(m, mods, 1).split, 2.5 * 1024 / 2048.0 * 0.75);
}

// FSDP's gathered unit on a rank: a MoE layer's attention and router split over TP, its routed
// experts E/EP of them split over the expert TP. Qwen3 30B-A3B's shape at TP4 on 64 GPUs (DP16):
// at EP16 (expert TP 4, Megatron's ExpertTensor) a rank's 8 experts are split four ways; at EP32,
// which takes TP's ranks (expert TP 1), a rank holds 4 whole experts, twice EP16's share, where
// the unit once divided them by TP all the same. (The vocabulary cut to 8,000, so that the
// embedding's share is not the largest unit.)
TEST(MemoryTest, FsdpUnitHoldsTheRanksExpertsAtTheirOwnTensorSplit) {
  model::Spec s = testing::Example("h100-16gpu-moe.yaml");
  s.cluster.nodes.count = 8;
  s.workload.tensor = 4;
  s.workload.model.vocab = 8000;        // the embedding smaller than a layer's share
  s.workload.fp8_param_gather = false;  // bf16 parameters (nemo-2025's FP8 ones are 1 byte)
  const model::ModelShape& m = s.workload.model;
  const ParamCounts pc = CountParams(m);
  const double layer_experts = pc.experts / m.MoeLayers();
  const double dense = pc.moe_layer - layer_experts;
  auto gathered = [&](int ep) {
    s.workload.expert = ep;
    return EstimateMemory(s, model::Strategy::kFsdp, 1, model::Recompute::kNone).gathered_bytes;
  };
  ASSERT_EQ(model::ExpertTensor(4, 16, 16), 4);
  ASSERT_EQ(model::ExpertTensor(4, 16, 32), 1);
  // Two bf16 copies of the weights (current and prefetched) and one of the gradients: 6 B each.
  EXPECT_NEAR(gathered(16), 6 * (dense / 4 + layer_experts / 16 / 4), 1);
  EXPECT_NEAR(gathered(32), 6 * (dense / 4 + layer_experts / 32), 1);
}

// LoRA: a frozen layer computes its input's gradient alone and keeps no input for a weight
// gradient. On GPT-3's layer (Korthikanti's Table 2) with LoRA on QKV alone: the MLP's input (2,
// outside the TP region) and its output projection's (2 f/h = 8, inside) go; the attention's
// output projection's input only without flash attention, whose kernel keeps it; none of the
// MLP's twice where selective recompute drops the MLP whole.
TEST(MemoryTest, FrozenLayersDoNotSaveTheirInputs) {
  model::ModelShape m = testing::Gpt3Shape();
  EXPECT_DOUBLE_EQ(FrozenInputDrops(m, true, false).replicated, 0);
  m.lora = {.rank = 16, .proj = false, .fc1 = false, .fc2 = false};
  EXPECT_DOUBLE_EQ(FrozenInputDrops(m, true, false).replicated, 2);
  EXPECT_DOUBLE_EQ(FrozenInputDrops(m, true, false).split, 8);
  EXPECT_DOUBLE_EQ(FrozenInputDrops(m, false, false).split, 10);
  EXPECT_DOUBLE_EQ(FrozenInputDrops(m, true, true).replicated, 0);
  EXPECT_DOUBLE_EQ(FrozenInputDrops(m, true, true).split, 0);
  // Under Transformer Engine's FP8 (g = 1) the frozen layers do not keep their quantized inputs:
  // the MLP's (1, and 1 over f = 4h) and, with flash attention too, the output projection's own
  // copy beside the attention's BF16 output (1).
  EXPECT_DOUBLE_EQ(FrozenInputDrops(m, true, false, 1).replicated, 1);
  EXPECT_DOUBLE_EQ(FrozenInputDrops(m, true, false, 1).split, 1 + 4);
  m.lora = {.rank = 16, .qkv = false, .proj = false, .fc1 = false};  // linear_fc2 alone
  EXPECT_DOUBLE_EQ(FrozenInputDrops(m, true, false).replicated, 4);
  EXPECT_DOUBLE_EQ(FrozenInputDrops(m, true, false).split, 0);
  ActivationInputs a = Gpt3Layer();  // TP 8 without SP, unfused attention: 23 sbh
  const double sbh = 2048.0 * 12288;
  a.frozen_replicated = 2;
  a.frozen_split = 10;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), (23 - 2 - 10.0 / 8) * sbh);
  a.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), sbh / 8 * (114 - 12));
  // With sequence parallelism the QKV adapter's A keeps its input gathered, the whole sequence,
  // beside the norm's sharded output.
  a.adapter_gathered = 2;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), sbh / 8 * (114 - 12) + 2 * sbh);
}

// LoRA's states: the frozen weights keep their bf16 working copy alone; gradients, the fp32
// master copy and Adam's moments are the adapters', as the strategy shards them.
TEST(MemoryTest, LoraKeepsStatesForTheAdaptersAlone) {
  model::Spec s = testing::Reference();
  s.workload.strategy = Strategy::kZero1;
  const MemoryPlan full = PlanMemory(s);
  s.workload.model.lora = {.rank = 16, .proj = false, .fc1 = false, .fc2 = false};
  const MemoryPlan lora = PlanMemory(s);
  const model::ModelShape& m = s.workload.model;
  const double adapters = 16.0 * m.layers * (m.hidden + m.QueryWidth() + 2 * m.KvWidth());
  EXPECT_DOUBLE_EQ(lora.params.adapters, adapters);
  EXPECT_DOUBLE_EQ(lora.params.Trainable(), adapters);
  EXPECT_DOUBLE_EQ(lora.params.total, full.params.total);
  const double mp = s.workload.tensor * s.workload.pipeline;
  const double ranks = s.DataParallel() * s.workload.context;
  EXPECT_DOUBLE_EQ(lora.configured.states.weights_bytes,
                   full.configured.states.weights_bytes + 2 * adapters / mp);
  EXPECT_DOUBLE_EQ(lora.configured.states.grads_bytes, 2 * adapters / mp);
  EXPECT_DOUBLE_EQ(lora.configured.states.optimizer_bytes, 12 * adapters / mp / ranks);
  EXPECT_LT(lora.configured.activation_bytes, full.configured.activation_bytes);
  // FSDP shards the frozen weights and gathers them as before, with no unit gradient to hold.
  s.workload.strategy = Strategy::kFsdp;
  const MemoryBreakdown fsdp = EstimateMemory(s, Strategy::kFsdp, 1, s.workload.recompute);
  EXPECT_DOUBLE_EQ(fsdp.states.grads_bytes, 2 * adapters / mp / ranks);
  EXPECT_DOUBLE_EQ(fsdp.gathered_bytes, 4 * full.params.largest_unit / s.workload.tensor);
}

TEST(MemoryTest, FullRecomputeKeepsLayerInputsPlusOneLayer) {
  ActivationInputs a = Gpt3Layer();
  a.layers_per_stage = 12;
  a.pipeline = 8;
  a.micro_batches = 8;  // the first stage, 8 in flight, sets the peak: no logits there
  a.sequence_parallel = true;
  a.recompute = Recompute::kFull;
  const double sbh = 2048.0 * 12288;
  // 8 x 12 layers x 2 sbh / t stored + one layer rebuilt: sbh/t x 114.
  EXPECT_DOUBLE_EQ(ActivationBytes(a), 8 * 12 * 2 * sbh / 8 + sbh / 8 * 114);
  // With one micro-batch the last stage, which holds the logits too, sets it:
  // + (4 s b h + 4 s b V) / t.
  a.micro_batches = 1;
  EXPECT_DOUBLE_EQ(ActivationBytes(a),
                   12 * 2 * sbh / 8 + sbh / 8 * 114 + (4 * sbh + 4 * sbh * 51200 / 12288) / 8);
}

// GPT-3's layer with sequence parallelism, `layers` a rank over PP8, `micro_batches` a step.
ActivationInputs Gpt3OverPp8(int layers, int micro_batches) {
  ActivationInputs a = Gpt3Layer();
  a.sequence_parallel = true;
  a.layers_per_stage = layers;
  a.pipeline = 8;
  a.micro_batches = micro_batches;
  return a;
}

TEST(MemoryTest, PipelineKeepsMicroBatchesInFlight) {
  ActivationInputs a = Gpt3OverPp8(12, 16);
  const double one = 12 * LayerActivationBytes(a);
  // 1F1B first stage: min(p, m) = 8 micro-batches.
  EXPECT_DOUBLE_EQ(ActivationBytes(a), 8 * one);
  // Interleaved with v = 2: x (1 + (p-1)/(p v)) = 1 + 7/16.
  a.virtual_stages = 2;
  EXPECT_DOUBLE_EQ(ActivationBytes(a), 8 * one * (1 + 7.0 / 16));
}

// Each pipeline rank holds its own layers with its own micro-batches in flight: interleaved
// (PP8 VP8), rank r warms up 2(p - r - 1) + (v - 1)p chunks of a v-th of its layers and runs one
// more, in the schedule's order. With the embedding in the split the first rank builds 15 layers
// (its first chunk one layer) where the second builds 16 with one micro-batch fewer (two
// chunks), and the second holds the most; the last rank holds (v - 1)p + 1 whole chunks beside
// one micro-batch's logits (its short last chunk is freed first), the peak with a large enough
// vocabulary. Fewer micro-batches than the warm-up keeps all m v chunks, m micro-batches.
TEST(MemoryTest, EachPipelineRankHoldsItsOwnLayersAndMicroBatches) {
  ActivationInputs a = Gpt3OverPp8(16, 64);
  a.virtual_stages = 8;
  const double one = LayerActivationBytes(a);
  EXPECT_DOUBLE_EQ(ActivationBytes(a), 16 * one * (64 + 7) / 8.0);  // the first rank
  a.first_stage_layers = 15;
  a.last_stage_layers = 15;
  EXPECT_DOUBLE_EQ(ActivationBytes(a), 16 * one * (64 + 5) / 8.0);  // the second rank
  a.vocab = 8'000'000;
  a.bytes_per_logit = 12;
  const double sbh = 2048.0 * 12288;
  const double logits = (4 * sbh + 12 * sbh * a.vocab / a.hidden) / 8;
  EXPECT_DOUBLE_EQ(ActivationBytes(a), 16 * one * (7 * 8 + 1) / 8.0 + logits);  // the last rank
  a.vocab = 51200;
  a.first_stage_layers = a.last_stage_layers = 0;
  a.micro_batches = 4;  // 32 chunks, fewer than any rank's warm-up: every rank holds all 4,
  // and the last one the logits beside them
  EXPECT_DOUBLE_EQ(ActivationBytes(a), 16 * one * 4 + (4 * sbh + 12 * sbh * 51200 / 12288) / 8);
  a.micro_batches = 64;
  a.first_stage_layers = a.last_stage_layers = 15;
  // 1F1B: rank r holds p - r; the first rank's 15 x 8 outweigh the second's 16 x 7.
  a.vocab = 51200;
  a.virtual_stages = 1;
  EXPECT_DOUBLE_EQ(ActivationBytes(a), 15 * one * 8);
}

TEST(MemoryTest, ReferenceClusterFitsWithFsdp) {
  model::Spec s = testing::Reference();
  MemoryPlan m = PlanMemory(s);
  // FSDP over 32 GPUs: 16 B x 13,015,864,320 / 32 = 6.508 GB of model states.
  EXPECT_DOUBLE_EQ(m.configured.states.Total(), 16 * 13015864320.0 / 32);
  // Gathered: 3 units x 2 B x 317,204,480.
  EXPECT_DOUBLE_EQ(m.configured.gathered_bytes, 6 * 317204480.0);
  // Activations (full recompute, micro-batch 4, s 4096, h 5120): 40 x 2 sbh stored +
  // one layer sbh (10 + 8 + 6 x 13824/5120: a SwiGLU MLP keeps its gate's and up projection's
  // outputs and the activation's) + logits 4 sbh (1 + 32000/5120).
  const double sbh = 4096.0 * 4 * 5120;
  EXPECT_NEAR(m.configured.activation_bytes,
              40 * 2 * sbh + sbh * (10 + 8 + 6 * 13824.0 / 5120) + 4 * sbh * (1 + 32000.0 / 5120),
              1.0);
  EXPECT_TRUE(m.configured.fits);
  EXPECT_LT(m.configured.total_bytes, 80 * kGiB);
  ASSERT_TRUE(m.cheapest_fitting.has_value());
  EXPECT_EQ(*m.cheapest_fitting, Strategy::kZero1);  // DDP needs 16 B x 13B > 80 GiB
  EXPECT_FALSE(m.strategies.front().fits);
}

// DeepSpeed's ZeRO-3 gathers module by module, not block by block: the reference model's
// largest module is its embedding (32,000 x 5,120), above the MLP's fused gate and up projection
// (2 x 5,120 x 13,824) and the fused QKV (5,120 x 3 x 5,120); three of it in fp16 are gathered,
// where FSDP holds three transformer blocks.
TEST(MemoryTest, DeepSpeedZero3GathersModuleByModule) {
  model::Spec s = testing::Reference();
  const MemoryPlan fsdp = PlanMemory(s);
  EXPECT_DOUBLE_EQ(fsdp.params.largest_module, 32000.0 * 5120);
  s.workload.sharding_impl = model::ShardingImpl::kDeepSpeed;
  const MemoryPlan ds = PlanMemory(s);
  EXPECT_DOUBLE_EQ(ds.configured.gathered_bytes, 6 * 32000.0 * 5120);
  EXPECT_LT(ds.configured.gathered_bytes, fsdp.configured.gathered_bytes);
  EXPECT_DOUBLE_EQ(ds.configured.states.Total(), fsdp.configured.states.Total());
  EXPECT_DOUBLE_EQ(ds.configured.activation_bytes, fsdp.configured.activation_bytes);
  // A small vocabulary: the fused gate and up projection is the largest, and TP splits it.
  s.workload.model.vocab = 1024;
  s.workload.model.kv_heads = 8;  // GQA: QKV is h x (h + 2 x 1,024), smaller
  EXPECT_DOUBLE_EQ(PlanMemory(s).params.largest_module, 2 * 5120.0 * 13824);
  s.workload.tensor = 2;
  EXPECT_DOUBLE_EQ(PlanMemory(s).configured.gathered_bytes, 6 * 2 * 5120.0 * 13824 / 2);
  // GELU's input projection, h x 4h.
  s.workload.tensor = 1;
  s.workload.model.mlp = model::Mlp::kGelu;
  s.workload.model.ffn_hidden = 4 * 5120;
  EXPECT_DOUBLE_EQ(PlanMemory(s).configured.gathered_bytes, 6 * 5120.0 * 4 * 5120);
  // A mixture of experts gathers one expert at a time, not the layer: here the QKV projection
  // is the largest module.
  s.workload.model.mlp = model::Mlp::kSwiglu;
  s.workload.model.moe.experts = 64;
  s.workload.model.moe.top_k = 8;
  s.workload.model.moe.ffn_hidden = 1536;
  s.workload.model.ffn_hidden = 1536;
  const MemoryPlan moe = PlanMemory(s);
  ASSERT_TRUE(s.workload.model.IsMoe());
  EXPECT_DOUBLE_EQ(moe.params.largest_module, 5120.0 * (5120 + 2 * 1024));  // above 2 h f
  EXPECT_DOUBLE_EQ(moe.configured.gathered_bytes, 6 * 5120.0 * (5120 + 2 * 1024));
}

// Without dropout the two masks (1 byte per element each, after attention and MLP) go; the
// loss keeps 4 bytes per logit (Megatron's vocab-parallel), 2 (fused) or 12 (PyTorch's
// cross_entropy on an fp32 copy: log-softmax kept, its gradient and the input's at the peak).
TEST(MemoryTest, DropoutMasksAndTheLossFollowTheSpec) {
  ActivationInputs a = Gpt3Layer();
  a.flash_attention = true;
  const double sbh = 2048.0 * 12288;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), sbh * (10 + 24.0 / 8));
  a.dropout = false;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), sbh * (8 + 24.0 / 8));
  a.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), sbh / 8 * 32);
  a.pipeline = 1;
  a.layers_per_stage = 0;
  const double logits = sbh * 51200 / 12288 / 8;  // s b V / t
  EXPECT_DOUBLE_EQ(ActivationBytes(a), 4 * sbh / 8 + 4 * logits);
  a.bytes_per_logit = 12;
  EXPECT_DOUBLE_EQ(ActivationBytes(a), 4 * sbh / 8 + 12 * logits);
  // The spec words and the stacks' defaults.
  model::Spec s = testing::Reference();
  EXPECT_EQ(s.workload.bytes_per_logit, 4);
  EXPECT_GT(s.workload.model.dropout, 0);
  const double before = PlanMemory(s).configured.activation_bytes;
  s.workload.model.dropout = 0;
  EXPECT_LT(PlanMemory(s).configured.activation_bytes, before);
}

// A layer keeps its own tensors: Llama 3 70B's K and V are 1,024 wide beside Q's 8,192 (4.5 of
// attention's bytes, not Korthikanti's 8 for K and V as wide as Q) and its SwiGLU MLP keeps the
// gate's and the up projection's outputs and the activation's (6 f/h = 21, not GELU's 4 f/h = 14):
// 8 + 4.5 + 21 = 33.5 bytes a token per hidden element over TP, where 16 + 4 f/h gives 30. Under
// Transformer Engine's FP8 recipes (Megatron-Core's stacks) the GEMMs keep their quantized inputs,
// 1 byte: the QKV projection's and the MLP's inputs (2 of the 8), the activation's output (f/h
// of the 21), and the output projection's own copy beside the attention's BF16 output (+1): 29.
// PyTorch's FP8 (torchao) keeps its inputs in BF16.
TEST(MemoryTest, LayersKeepTheirOwnTensors) {
  model::Spec s = testing::Reference();
  s.workload.model = testing::Llama3_70bShape();
  s.workload.model.dropout = 0;
  s.workload.tensor = 8;
  s.workload.pipeline = 1;
  s.workload.sequence_parallel = true;
  s.workload.recompute = Recompute::kNone;
  s.workload.micro_batch = 1;
  const double sbh = 4096.0 * 8192;
  // Two depths' difference: 40 layers' activations, the logits cancelled.
  auto per_layer = [&](const model::Spec& spec) {
    model::Spec shallow = spec;
    shallow.workload.model.layers = 40;
    return (PlanMemory(spec).configured.activation_bytes -
            PlanMemory(shallow).configured.activation_bytes) /
           40 / (sbh / 8);
  };
  EXPECT_NEAR(per_layer(s), 33.5, 1e-9);
  s.workload.precision = model::Precision::kFp8;
  s.workload.stack = "nemo-2025";
  ASSERT_TRUE(s.workload.RunsMegatronCore());
  EXPECT_NEAR(per_layer(s), 29, 1e-9);
  // FP8 attention keeps what its fused kernel saves: Q, K and V in 1 byte (Q's 8,192 wide, K's and
  // V's 1,024 over 8,192: 1 + 0.25 less), O in BF16 under current scaling (nemo-2025's), in FP8
  // under delayed (one more); under MXFP8 Q, K and V in both layouts with their block scales,
  // more than BF16's 2 (4.125: 0.0625 a Q element more, 2 x 0.0625 x 0.125 for K and V).
  s.workload.fp8_attention = true;
  s.workload.fp8_recipe = model::Fp8Recipe::kCurrent;
  EXPECT_NEAR(per_layer(s), 29 - 1 - 0.25, 1e-9);
  s.workload.fp8_recipe = model::Fp8Recipe::kDelayed;
  EXPECT_NEAR(per_layer(s), 29 - 2 - 0.25, 1e-9);
  s.workload.fp8_recipe = model::Fp8Recipe::kMxfp8;
  const double mx_fp8_attention = per_layer(s);
  s.workload.fp8_attention = false;
  EXPECT_NEAR(mx_fp8_attention - per_layer(s), 0.0625 + 2 * 0.0625 * 0.125, 1e-9);
  // With the attention core recomputed (selective recompute's core_attn), Megatron-Core's
  // checkpoint keeps Q, K and V in BF16 and the output projection its quantized input alone (O's
  // BF16 copy is the kernel's, rebuilt): 2 less than without, FP8 attention or not; in BF16 the
  // same bytes as without.
  s.workload.fp8_recipe = model::Fp8Recipe::kCurrent;
  s.workload.recompute = Recompute::kSelective;
  s.workload.recompute_modules = {.core_attn = true};
  EXPECT_NEAR(per_layer(s), 29 - 2, 1e-9);
  s.workload.fp8_attention = true;
  EXPECT_NEAR(per_layer(s), 29 - 2, 1e-9);
  s.workload.fp8_attention = false;
  s.workload.precision = model::Precision::kBf16;
  EXPECT_NEAR(per_layer(s), 33.5, 1e-9);
  s.workload.precision = model::Precision::kFp8;
  s.workload.recompute = Recompute::kNone;
  s.workload.stack = "pytorch-fsdp2";
  s.workload.fp8_recipe = model::Fp8Recipe::kCurrent;
  EXPECT_NEAR(per_layer(s), 33.5, 1e-9);
}

// Composer's training metrics run after each micro-batch's backward, when the activations are
// gone, beside the bf16 logits the trainer kept for them (state.outputs, 2 bytes each): a
// metric's cross-entropy holds log_softmax's bf16 output and, under autocast, nll_loss's fp32
// copy of it (6); under amp_fp8 the bf16 output alone (2). That phase is the peak only where the
// vocabulary dwarfs the layers (8 V > 2 V + 4 h + 32 L h): not for MPT 125M, for a 2-layer toy.
TEST(MemoryTest, TrainingMetricsAfterTheBackwardCanBeThePeak) {
  auto mpt = [](int layers, int hidden, const char* extra, const char* precision = "bf16") {
    Result<model::Spec> s =
        model::ParseSpec(fmt::format(R"(name: metrics
nodes:
  count: 1
  gpu: {{model: H100-SXM5-80GB, count: 8}}
  nics: [{{role: compute, model: ConnectX-7, count: 8, ports: 1, speed: 400 Gb/s}}]
fabrics:
  scale_up: {{type: nvlink4, bandwidth: 900 GB/s, switched: true}}
workload:
  model: {{name: mpt, layers: {}, hidden: {}, heads: {}, vocab: 50368, sequence: 2048,
          dropout: 0}}
  parallel: {{strategy: fsdp}}
  batch: {{micro: 26, accumulation: 1}}
  activation_checkpointing: none
  precision: {}
  software: {{stack: composer-2023{}}}
)",
                                     layers, hidden, hidden / 64, precision, extra),
                         "metrics.yaml");
    EXPECT_TRUE(s) << s.error().message;
    return s ? *s : model::Spec{};
  };
  const double logits = 2048.0 * 26 * 50368;
  // MPT 125M: the forward's end is the peak; the metrics change nothing.
  const model::Spec mpt125 = mpt(12, 768, "");
  EXPECT_EQ(mpt125.workload.metrics_bytes_per_logit, 6);
  EXPECT_DOUBLE_EQ(PlanMemory(mpt125).configured.activation_bytes,
                   PlanMemory(mpt(12, 768, ", train_metrics: false")).configured.activation_bytes);
  EXPECT_EQ(mpt(12, 768, ", train_metrics: false").workload.metrics_bytes_per_logit, 0);
  // A 2-layer toy: the metrics' phase is the peak, 8 bytes per logit (the gathered units are
  // resharded by then), 4 under amp_fp8.
  const MemoryBreakdown toy = PlanMemory(mpt(2, 256, "")).configured;
  EXPECT_NEAR(toy.gathered_bytes + toy.activation_bytes, 8 * logits, 1e-9 * logits);
  EXPECT_LT(PlanMemory(mpt(2, 256, ", train_metrics: false")).configured.activation_bytes,
            toy.activation_bytes - 4 * kGiB);
  const model::Spec fp8 = mpt(2, 256, "", "fp8");
  EXPECT_EQ(fp8.workload.metrics_bytes_per_logit, 2);
  const MemoryBreakdown f = PlanMemory(fp8).configured;
  EXPECT_LT(f.activation_bytes, toy.activation_bytes);
  EXPECT_GE(f.gathered_bytes + f.activation_bytes, 4 * logits - 1e-9 * logits);
  // Memory is no longer one line in the micro-batch (the larger of two phases, one less the
  // resharded units): the largest micro-batch that fits is still the last that does.
  for (double gib : {10.0, 20.0, 40.0}) {
    model::Spec small = mpt(2, 256, "");
    small.cluster.nodes.gpu.memory_bytes = gib * kGiB;
    const MemoryPlan plan = PlanMemory(small);
    ASSERT_GT(plan.max_micro_batch, 1) << gib;
    EXPECT_TRUE(EstimateMemory(small, Strategy::kFsdp, plan.max_micro_batch, Recompute::kNone).fits)
        << gib;
    EXPECT_FALSE(
        EstimateMemory(small, Strategy::kFsdp, plan.max_micro_batch + 1, Recompute::kNone).fits)
        << gib;
  }
}

// Sequence parallelism's saved inputs: Megatron keeps the QKV and MLP inputs sharded (2 bytes
// each of the per-layer constant, / t) and gathers them again in backward; PyTorch's DTensor TP
// keeps them whole, and the output layer's input too.
TEST(MemoryTest, SequenceParallelInputsKeptGatheredOrSharded) {
  ActivationInputs a = Gpt3Layer();  // t = 8
  a.flash_attention = true;
  a.dropout = false;
  a.sequence_parallel = true;
  const double sbh = 2048.0 * 12288;
  const double sharded = LayerActivationBytes(a);
  EXPECT_DOUBLE_EQ(sharded, sbh / 8 * 32);
  a.sp_gathered_input = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), sharded + 4 * sbh * (1 - 1.0 / 8));
  a.pipeline = 1;
  a.layers_per_stage = 0;
  const double logits = 4 * sbh * 51200 / 12288 / 8;
  EXPECT_DOUBLE_EQ(ActivationBytes(a), 4 * sbh / 8 + 2 * sbh * (1 - 1.0 / 8) + logits);
  a.sequence_parallel = false;  // without SP nothing is sharded by sequence: the word is moot
  const double tp_only = LayerActivationBytes(a);
  a.sp_gathered_input = false;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(a), tp_only);
}

// With pipeline parallelism FSDP keeps the stage's parameters gathered (bf16) and accumulates
// its gradients unsharded in the reduce dtype: 4 or 6 bytes per local parameter, not a few
// units.
TEST(MemoryTest, FsdpWithPipelineKeepsTheStageGathered) {
  model::Spec s = testing::Reference();
  s.workload.strategy = Strategy::kFsdp;
  const double units = PlanMemory(s).configured.gathered_bytes;
  s.workload.pipeline = 4;
  const MemoryPlan m = PlanMemory(s);
  // The first rank's: its 10 layers and the embedding.
  const double local = (10 * m.params.per_layer + m.params.embedding) / s.workload.tensor;
  EXPECT_DOUBLE_EQ(m.configured.gathered_bytes, (2 + 2) * local);  // bf16 gradient reduction
  EXPECT_GT(m.configured.gathered_bytes, units);
  s.workload.grad_reduce_bytes = 4;  // FSDP2's default: fp32 (torchtitan)
  EXPECT_DOUBLE_EQ(PlanMemory(s).configured.gathered_bytes, 6 * local);
}

// Hybrid sharding shards the states over the shard group and replicates them across groups: 32
// GPUs in shard groups of 8 hold four times the fully sharded states; the gathered units and the
// activations do not change, and the floor still shards over every rank.
TEST(MemoryTest, HybridShardingShardsTheStatesOverTheShardGroup) {
  model::Spec s = testing::Reference();
  ASSERT_EQ(s.workload.strategy, Strategy::kFsdp);
  ASSERT_EQ(s.DataParallel(), 32);
  const MemoryPlan full = PlanMemory(s);
  s.workload.shard = 8;
  const MemoryPlan hybrid = PlanMemory(s);
  EXPECT_DOUBLE_EQ(hybrid.configured.states.Total(), 16 * 13015864320.0 / 8);
  EXPECT_DOUBLE_EQ(hybrid.configured.states.Total(), 4 * full.configured.states.Total());
  EXPECT_DOUBLE_EQ(hybrid.configured.gathered_bytes, full.configured.gathered_bytes);
  EXPECT_DOUBLE_EQ(hybrid.configured.activation_bytes, full.configured.activation_bytes);
  EXPECT_DOUBLE_EQ(hybrid.minimum.total_bytes, full.minimum.total_bytes);
  EXPECT_EQ(MinimumNodes(s), MinimumNodes(testing::Reference()));
  // ZeRO-1 and -2 in the strategy table shard over every rank as before.
  EXPECT_DOUBLE_EQ(hybrid.strategies[1].states.Total(), full.strategies[1].states.Total());
  s.workload.shard = 32;  // a shard group of all the ranks is plain FSDP
  EXPECT_DOUBLE_EQ(PlanMemory(s).configured.total_bytes, full.configured.total_bytes);
}

TEST(MemoryTest, LargestMicroBatchIsTheLastThatFits) {
  model::Spec s = testing::Reference();
  MemoryPlan m = PlanMemory(s);
  ASSERT_GT(m.max_micro_batch, 0);
  const auto& w = s.workload;
  EXPECT_TRUE(EstimateMemory(s, w.strategy, m.max_micro_batch, w.recompute).fits);
  EXPECT_FALSE(EstimateMemory(s, w.strategy, m.max_micro_batch + 1, w.recompute).fits);
}

// Activation offload: the offloaded layers' activations wait in host memory, so the GPU holds
// the other layers' (Transformer Engine's cpu_offload.py: (layers - offloaded) x one layer); with
// recomputation (which Megatron-Core does not combine with it) nothing is offloaded.
TEST(MemoryTest, ActivationOffloadMovesLayersToHostMemory) {
  model::Spec s = testing::Reference();
  s.workload.recompute = Recompute::kNone;
  const MemoryBreakdown kept = PlanMemory(s).configured;
  EXPECT_EQ(kept.offloaded_bytes, 0);
  s.workload.activation_offload = 30;
  const MemoryBreakdown off = PlanMemory(s).configured;
  const int layers = s.workload.model.layers;  // 40, one stage
  ASSERT_GT(off.offloaded_bytes, 0);
  // Each offloaded layer takes one layer's activations off the GPU and into host memory.
  const double layer = off.offloaded_bytes / 30;
  EXPECT_NEAR(kept.activation_bytes - off.activation_bytes, 30 * layer, 1.0);
  EXPECT_LT(off.total_bytes, kept.total_bytes);
  EXPECT_GT(layer * layers, 0.7 * kept.activation_bytes);  // the layers are most of it
  s.workload.recompute = Recompute::kFull;
  EXPECT_EQ(PlanMemory(s).configured.offloaded_bytes, 0);
}

// Each pipeline rank holds its own layers' parameters, the first the embedding beside them and
// the last the output layer and the final norm: Llama 3 8B at PP8 puts 4 layers and the 0.53 B
// embedding (1.40 B parameters) on the first rank, where an even share of the model is 1.00 B.
// With tied weights the last rank builds its own copy of the embedding (Megatron's
// share_embeddings_and_output_weights). One stage holds the whole model over TP.
TEST(MemoryTest, PipelineRanksHoldTheirOwnParameters) {
  model::Spec s = testing::Reference();
  s.workload.model = testing::Llama3_8bShape();
  s.workload.strategy = Strategy::kDdp;
  s.workload.tensor = 1;
  s.workload.pipeline = 8;
  s.workload.sequence_parallel = false;
  s.workload.recompute = Recompute::kNone;
  s.workload.micro_batch = 1;
  s.workload.accumulation = 8;
  const ParamCounts pc = CountParams(s.workload.model);
  const MemoryBreakdown b = PlanMemory(s).configured;
  EXPECT_EQ(b.pipeline_rank, PipelineRank::kFirst);  // 8 micro-batches in flight, the embedding
  const double first = 4 * pc.per_layer + pc.embedding;
  EXPECT_NEAR(first / 1e9, 1.40, 0.01);
  EXPECT_NEAR(pc.total / 8 / 1e9, 1.00, 0.01);
  EXPECT_DOUBLE_EQ(b.states.weights_bytes, 2 * first);  // DDP: bf16 weights, 2 B each
  EXPECT_DOUBLE_EQ(b.states.optimizer_bytes, 12 * first);

  const RankLayers last_rank = LayersOnPipelineRank(s.workload.model, 8, 1, {}, 7);
  EXPECT_TRUE(last_rank.last && !last_rank.first);
  EXPECT_EQ(last_rank.layers, 4);
  const StageParams last = ParamsOnPipelineRank(pc, s.workload.model, 1, 4, 1, last_rank);
  EXPECT_DOUBLE_EQ(last.local.dense, 4 * pc.per_layer + pc.output + 4096);
  const StageParams middle = ParamsOnPipelineRank(
      pc, s.workload.model, 2, 4, 1, LayersOnPipelineRank(s.workload.model, 8, 1, {}, 3));
  EXPECT_DOUBLE_EQ(middle.local.dense, 4 * pc.per_layer / 2);
  EXPECT_DOUBLE_EQ(middle.local.dense_linear, 4 * pc.layer_linear / 2);

  model::ModelShape tied = s.workload.model;
  tied.tied_embeddings = true;
  const ParamCounts tc = CountParams(tied);
  EXPECT_DOUBLE_EQ(ParamsOnPipelineRank(tc, tied, 1, 4, 1, last_rank).local.dense,
                   4 * tc.per_layer + tc.embedding + 4096);
  const RankLayers one = LayersOnPipelineRank(tied, 1, 1, {}, 0);
  EXPECT_TRUE(one.first && one.last);
  EXPECT_EQ(one.layers, 32);
  const StageParams whole = ParamsOnPipelineRank(tc, tied, 2, 4, 1, one);
  EXPECT_DOUBLE_EQ(whole.local.dense, tc.total / 2);
  EXPECT_DOUBLE_EQ(whole.local.dense_linear, tc.linear / 2);

  // The last rank is the peak where its logits outweigh the first rank's micro-batches in
  // flight: one micro-batch each at PP2 with a large vocabulary.
  s.workload.pipeline = 2;
  s.workload.accumulation = 1;
  s.workload.model.vocab = 1'000'000;
  EXPECT_EQ(PlanMemory(s).configured.pipeline_rank, PipelineRank::kLast);
}

// A mixture of experts' dense layers come first, so the first ranks hold them and no routed
// expert, and a rank past them holds the most: Qwen3 30B-A3B on 16 H100s at PP4, its first 12
// layers made dense, puts 12 dense layers on the first rank and 12 MoE layers' experts on the
// second, which is the peak (an even split counted 9 MoE layers' experts on every rank). With 18
// dense layers, 6 reach the second rank, and the third, the lowest holding none of them, is.
TEST(MemoryTest, DenseLayersFirstLeaveTheExpertsToTheLaterRanks) {
  model::Spec s = testing::Example("h100-16gpu-moe.yaml");
  s.workload.pipeline = 4;
  s.workload.expert = 4;
  s.workload.accumulation = 16;
  s.workload.model.moe.dense_layers = 12;
  const model::ModelShape& m = s.workload.model;
  const ParamCounts pc = CountParams(m);
  const RankLayers second = LayersOnPipelineRank(m, 4, 1, {}, 1);
  ASSERT_EQ(LayersOnPipelineRank(m, 4, 1, {}, 0).dense, 12);
  ASSERT_EQ(second.dense, 0);
  const MemoryBreakdown b = EstimateMemory(s, Strategy::kZero1, 1, Recompute::kNone);
  EXPECT_EQ(b.pipeline_rank, PipelineRank::kSecond);
  const LocalParams local = ParamsOnPipelineRank(pc, m, 1, 4, 4, second).local;
  EXPECT_DOUBLE_EQ(local.experts, 12 * pc.experts / m.MoeLayers() / 4);
  EXPECT_DOUBLE_EQ(b.states.weights_bytes, 2 * local.dense + 2 * local.experts);
  // The same rank without dense layers anywhere holds the same layers, with the first rank's
  // embedding beside 12 MoE layers the peak.
  model::Spec all_moe = s;
  all_moe.workload.model.moe.dense_layers = 0;
  const MemoryBreakdown a = EstimateMemory(all_moe, Strategy::kZero1, 1, Recompute::kNone);
  EXPECT_EQ(a.pipeline_rank, PipelineRank::kFirst);
  EXPECT_GT(a.total_bytes, b.total_bytes);

  s.workload.model.moe.dense_layers = 18;
  ASSERT_EQ(LayersOnPipelineRank(s.workload.model, 4, 1, {}, 1).dense, 6);
  const MemoryBreakdown third = EstimateMemory(s, Strategy::kZero1, 1, Recompute::kNone);
  EXPECT_EQ(third.pipeline_rank, PipelineRank::kMiddle);
  EXPECT_EQ(third.pipeline_rank_index, 2);
  EXPECT_EQ(PipelineRankName(third.pipeline_rank), "middle");
  EXPECT_DOUBLE_EQ(third.states.weights_bytes, b.states.weights_bytes);
}

}  // namespace
}  // namespace gpufleet::plan
