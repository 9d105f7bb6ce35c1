// Mixture-of-experts in the step model (issue 13): Megatron Bridge's Qwen3 and GPT-OSS rows and
// the mechanisms on their own (active experts, the all-to-all, HybridEP, EP overlap).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string_view>
#include <tuple>

#include "model/spec.h"
#include "plan/comm.h"
#include "plan/compute.h"
#include "plan/memory.h"
#include "published_runs.h"
#include "sim/step.h"

namespace gpufleet::sim {
namespace {

using runs::Eff;
using runs::kGiB;
using runs::kMoe;
using runs::MoeRow;
using runs::MoeRowNamed;
using runs::MoeSpec;

// Nineteen of Qwen3's twenty within 15 % (GPT-OSS's eight at the end of this comment). Off by more:
// 30B on H100 in FP8 (+25.7 %), whose published step (29.3 s) is slower than the same shape's 24.7
// s in BF16 that Megatron Bridge measured with the same HybridEP dispatcher, which the model meets
// (+3.6 %; +5.8 % with EP overlap on; +11.4 % with NCCL's all-to-all, whose dispatcher costs more
// than its transfers and sorts). The two 235B recipes on the all-to-all dispatcher (H100 +14.0 %,
// B200 +12.3 %) were outside (+16.3 %, +16.1 %) while the model gave that dispatcher HybridEP's
// bytes and passes inside a node; B300's 235B recipe on both dispatchers, a container apart, gained
// 22 % on HybridEP, the model 3.6 % (+5.8 % on the all-to-all, -10.2 % on HybridEP). The 235B
// recipes count the embedding and the loss in the pipeline split (qwen3_235b_a22b_pretrain_config:
// account_for_*_in_pipeline_split; 94 layers fill 8 ranks no other way), which puts 11 layers and
// the output layer (2.4 layers' FLOPs at the 151,936 vocabulary) on the last rank. 235B on H100,
// whose all-to-all crosses nodes, exposes what its recipe's EP overlap does not hide. The 26.06
// container's recipes on the same Blackwell layouts (EP overlap, MXFP8 attention and the fused
// grouped MLP, modelled; full-iteration CUDA graphs not) run 30-56 % faster than 26.04.01's, the
// model 34-65 %: 30B on GB200 at micro-batch 4 was -20.4 % while the experts' GEMMs were sized one
// expert a kernel. Judged at 35 % so that the misses are seen and cannot grow unseen. GPT-OSS 120B,
// on the same page and the same recipes' software, is +21 % to +85 % on every recipe the spec can
// state, Hopper's too (H100 +32 %; three of 26.04.01's recipes recompute the norm before each MoE
// layer and the experts' activation, statable since activation_checkpointing_modules; GB200's,
// with EP overlap, +85 %) (its sliding window and its windowed kernels' cost counted; the two B300
// rows were +61 % while the experts' gradients rode the whole data-parallel ring instead of their
// own group's, one rank a node; the two 26.06 rack rows +37 % and +47 % while their FP8 attention's
// windowed backward was priced at the window, where cuDNN runs the whole square): on 26.06's GB300
// recipe it runs at 1.08 PFLOP/s a GPU by the causal count, Qwen3 30B-A3B at 1.05; the model gives
// Qwen3 1.14 and GPT-OSS 1.31. What the published runs lose on GPT-OSS is not in the model
// (docs/sim.md, "GPT-OSS 120B"); held to its own range, apart.
TEST(CalibrationTest, MoeRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  int within = 0, gpt_oss_rows = 0;
  for (const auto& row : kMoe) {
    const model::Spec spec = MoeSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r) << row.name << ": " << r.error().message;
    const double predicted = r->tokens_per_s / row.gpus;
    const double error = predicted / row.tokens_per_gpu - 1;
    std::printf(
        "%s %-16s %-40s predicted %6.0f tokens/s/GPU, published %6.0f: %+.1f %% "
        "(all-to-all %.0f %% of the step), memory %.1f GiB%s\n",
        row.gpu, row.name, r->layout.Describe().c_str(), predicted, row.tokens_per_gpu, error * 100,
        100 * r->ep_comm_s / r->step_s, r->memory_bytes / kGiB,
        r->fits ? "" : " (does not fit, by the memory model)");
    // The regime quotes these ranges ("checked on twenty-three Qwen3 runs, -13 % to +23 %, and
    // eight GPT-OSS runs, +14 % to +50 %": these twenty and the verification cards' three
    // weak-scaling points, BridgeCardRowsOutsideTheFit).
    const bool gpt_oss = std::string_view(row.name).rfind("GPT-OSS", 0) == 0;
    if (!gpt_oss) {
      EXPECT_NEAR(error, 0, 0.35) << row.name << " on " << row.gpu;
    }
    EXPECT_GE(error, gpt_oss ? 0.135 : -0.135)
        << row.name << " on " << row.gpu << ": update RegimeOf's range";
    EXPECT_LE(error, gpt_oss ? 0.50 : 0.235)
        << row.name << " on " << row.gpu << ": update RegimeOf's range";
    gpt_oss_rows += gpt_oss;
    EXPECT_GT(r->ep_comm_s, 0) << row.name;
    within += std::fabs(error) <= 0.15;
  }
  // Of Qwen3's 20 the page's 30B H100 FP8 row misses (+23.4 %); seven of GPT-OSS's eight do.
  EXPECT_EQ(gpt_oss_rows, 8);
  EXPECT_GE(within, 20);
  // The skill's run also publishes its memory: rank 0's peak allocated, 62.166 GiB, which is
  // what the memory model's live tensors are (without the CUDA context and NCCL buffers it
  // reserves beside them, and without the allocator's fragmentation).
  const MoeRow& skill = kMoe[std::size(kMoe) - 1];
  ASSERT_STREQ(skill.precision, "bf16");
  const model::Spec spec = MoeSpec(skill);
  const auto& w = spec.workload;
  const plan::MemoryBreakdown mem =
      plan::EstimateMemory(spec, w.strategy, w.micro_batch, w.recompute);
  const double live = mem.states.Total() + mem.gathered_bytes + mem.activation_bytes;
  std::printf(
      "Qwen3 30B-A3B BF16 on 16 H100: live tensors %.1f GiB, published peak allocated "
      "62.2 GiB: %+.1f %%\n",
      live / kGiB, (live / (62.166 * kGiB) - 1) * 100);
  EXPECT_NEAR(live / (62.166 * kGiB), 1, 0.10);
}

// The mixture-of-experts mechanisms on their own: FLOPs follow the active experts, the
// all-to-all leaves the node when EP does, and expert parallelism divides the expert weights.
TEST(MoeTest, ActiveExpertsAllToAllAndExpertParallelism) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = MoeSpec(kMoe[0]);  // Qwen3 30B-A3B on 16 H100, EP16
  spec.workload.moe_dedup = false;      // NCCL's all-to-all, one copy per routed expert
  auto across = model.Step(spec, LayoutOf(spec), 16);
  ASSERT_TRUE(across);
  Layout inside = LayoutOf(spec);
  inside.ep = 8;  // one node's GPUs
  auto local = model.Step(spec, inside, 16);
  ASSERT_TRUE(local);
  EXPECT_GT(across->ep_comm_s, 4 * local->ep_comm_s);    // 8 GPUs' worth over 50 GB/s NICs
  EXPECT_GT(local->memory_bytes, across->memory_bytes);  // twice the experts per GPU
  // The same work in smaller GEMMs: each expert gets the tokens of 8 ranks, not 16.
  EXPECT_GT(local->compute_s, across->compute_s);
  // Model FLOPs per token: 6 x the active parameters plus attention and logits, not 6 x 30.5B.
  const double per_token = across->model_flops / (1024.0 * 4096);
  EXPECT_GT(per_token, 6 * 2.7e9);
  EXPECT_LT(per_token, 6 * 6e9);
  // Top-k doubled: twice the routed FLOPs and all-to-all bytes.
  spec.workload.model.moe.top_k = 16;
  auto wider = model.Step(spec, LayoutOf(spec), 16);
  ASSERT_TRUE(wider);
  EXPECT_NEAR(wider->ep_comm_s / across->ep_comm_s, 2, 0.05);
  Layout bad = LayoutOf(spec);
  bad.ep = 32;
  EXPECT_FALSE(model.Step(spec, bad, 16));
}

// Qwen3 30B-A3B on 16 H100s (the first MoE row) at PP4 EP4, without the pipeline split.
model::Spec Qwen3AtPp4Ep4() {
  model::Spec spec = MoeSpec(kMoe[0]);
  spec.workload.pipeline = 4;
  spec.workload.pipeline_split = {};
  spec.workload.expert = 4;
  return spec;
}

// A mixture of experts' dense layers come first (moe.dense_layers), so the ranks past them run
// MoE layers only. Qwen3 30B-A3B on 16 H100s at PP4 with its first 12 layers dense: the first
// rank's 12 are all dense, every other rank's all MoE, so the slowest rank runs 12 MoE layers'
// all-to-alls, as without dense layers, where an average over the ranks counted 9. The first
// rank holds no routed expert, the second 12 layers' of them, and the second's, the larger,
// set the data-parallel tail.
TEST(MoeTest, RanksPastTheDenseLayersRunOnlyMoeLayers) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = Qwen3AtPp4Ep4();
  auto step = [&](const model::Spec& s) {
    auto r = model.Step(s, LayoutOf(s), 16);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : StepBreakdown{};
  };
  const StepBreakdown all_moe = step(spec);
  model::Spec dense = spec;
  dense.workload.model.moe.dense_layers = 12;
  const model::ModelShape& m = dense.workload.model;
  const StepBreakdown first_dense = step(dense);
  ASSERT_GT(all_moe.ep_comm_s, 0);
  EXPECT_DOUBLE_EQ(first_dense.ep_comm_s, all_moe.ep_comm_s);
  EXPECT_TRUE(first_dense.LastStageSlowest());

  const plan::ParamCounts pc = plan::CountParams(m);
  const int dpc = 16 / 4;
  const plan::RankLayers first = plan::LayersOnPipelineRank(m, 4, 1, {}, 0);
  const plan::RankLayers second = plan::LayersOnPipelineRank(m, 4, 1, {}, 1);
  EXPECT_EQ(first.dense, 12);
  EXPECT_EQ(second.dense, 0);
  EXPECT_EQ(plan::ParamsOnPipelineRank(pc, m, 1, dpc, 4, first).local.experts, 0);
  const plan::LocalParams on_second = plan::ParamsOnPipelineRank(pc, m, 1, dpc, 4, second).local;
  EXPECT_DOUBLE_EQ(on_second.experts, 12 * pc.experts / m.MoeLayers() / 4);
  const plan::LocalParams tail = plan::ParamsOnTailPipelineRank(pc, m, 1, 4, 1, {}, dpc, 4).local;
  EXPECT_DOUBLE_EQ(tail.experts, on_second.experts);
  // With one dense layer the first rank's 11 MoE layers and the embedding outweigh the second's
  // 12 MoE layers, and the first sets the tail, as without dense layers.
  model::ModelShape one = m;
  one.moe.dense_layers = 1;
  const plan::ParamCounts one_pc = plan::CountParams(one);
  const plan::LocalParams one_tail =
      plan::ParamsOnTailPipelineRank(one_pc, one, 1, 4, 1, {}, dpc, 4).local;
  EXPECT_DOUBLE_EQ(one_tail.experts, 11 * one_pc.experts / one.MoeLayers() / 4);
  EXPECT_GT(one_tail.dense, one_pc.embedding);
}

// Where the dense layers are the heavier ones, the first rank sets the step: Qwen3 30B-A3B at
// PP4 with its dense layers 16 times as wide as Qwen3's MLP would be (131,072), the first 12 of
// them, all on the first rank; interleaved over 2 virtual stages of 6 layers, the first 30, the
// first rank's two chunks (layers 0-5 and 24-29). That rank runs no all-to-all, so the step
// exposes none (under EP overlap it once divided by the rank's zero MoE layers); the other ranks'
// all-to-alls fit beside its longer compute.
TEST(MoeTest, AFirstRankOfHeavyDenseLayersSetsTheStep) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = Qwen3AtPp4Ep4();
  spec.workload.model.ffn_hidden = 131072;
  for (int v : {1, 2}) {
    spec.workload.virtual_stages = v;
    spec.workload.model.moe.dense_layers = v == 1 ? 12 : 30;
    spec.workload.moe_comm_overlap = v > 1;
    auto r = model.Step(spec, LayoutOf(spec), 16);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_FALSE(r->LastStageSlowest()) << "VP" << v;
    EXPECT_EQ(r->slowest_rank, 0) << "VP" << v;
    EXPECT_EQ(r->slowest_moe_layers, 0) << "VP" << v;
    EXPECT_EQ(r->ep_comm_s, 0) << "VP" << v;
    EXPECT_TRUE(std::isfinite(r->step_s)) << "VP" << v;
  }
}

// Megatron-Core reduces and gathers the routed experts' parameters over their own
// expert-data-parallel group (DDP's expert_parallel_buffers): the ranks EP x ETP apart that hold
// the same experts. GPT-OSS 120B on 8 nodes of 8 B300 at EP8: 14.3 B expert parameters a GPU,
// reduced over 8 ranks, one a node, each on its own NIC (a DGX B300's ConnectX-8 at 800 Gb/s):
// 28.7 GB of bf16 gradients through it one way and the parameters back, at least (7/8) x 57.3 GB
// / 100 GB/s = 0.50 s a step. On 64 GB200s at EP64 no expert is replicated, and nothing of theirs
// is reduced.
TEST(MoeTest, ExpertGradientsReduceOverTheExpertDataParallelGroup) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  auto step = [&](const model::Spec& s) {
    auto r = model.Step(s, LayoutOf(s), s.cluster.nodes.TotalGpus());
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : StepBreakdown{};
  };
  const model::Spec b300 = MoeSpec(MoeRowNamed("GPT-OSS 120B BF16 26.04.01", "B300-SXM-270GB"));
  const plan::LocalParams local =
      plan::ParamsOnPipelineRank(plan::CountParams(b300.workload.model), b300.workload.model, 1, 64,
                                 b300.workload.expert,
                                 plan::LayersOnPipelineRank(b300.workload.model, 1, 1, {}, 0))
          .local;
  EXPECT_NEAR(local.experts, 14.33e9, 0.01e9);
  const double expert_bytes = 2 * 2 * local.experts * 7 / 8;  // reduce-scatter and gather
  const StepBreakdown eight = step(b300);
  constexpr double kNic = 100e9;  // ConnectX-8, 800 Gb/s
  EXPECT_GT(eight.dp_comm_total_s, expert_bytes / kNic);
  EXPECT_LT(eight.dp_comm_total_s, 1.6 * expert_bytes / kNic);
  // Twice the experts' width, twice their share of the traffic; at EP64 none of it.
  model::Spec wider = b300;
  wider.workload.model.moe.ffn_hidden *= 2;
  EXPECT_GT(step(wider).dp_comm_total_s, 1.8 * eight.dp_comm_total_s);
  const model::Spec gb200 = MoeSpec(MoeRowNamed("GPT-OSS 120B 26.06", "GB200-NVL72"));
  ASSERT_EQ(gb200.workload.expert, 64);
  model::Spec gb200_wider = gb200;
  gb200_wider.workload.model.moe.ffn_hidden *= 2;
  EXPECT_DOUBLE_EQ(step(gb200_wider).dp_comm_total_s, step(gb200).dp_comm_total_s);
  // The plan's communication table says the same, in its data-parallel row.
  auto dp_row = [](const model::Spec& s) {
    const plan::CommPlan c = plan::PlanComm(s, plan::PlanCompute(s));
    for (const plan::Traffic& t : c.step.traffic) {
      if (t.kind == "data-parallel") return t;
    }
    ADD_FAILURE() << "no data-parallel traffic";
    return plan::Traffic{};
  };
  const plan::Traffic b300_row = dp_row(b300);
  EXPECT_THAT(b300_row.collectives,
              ::testing::HasSubstr("the routed experts' over their 8 expert-data-parallel ranks"));
  EXPECT_GT(b300_row.time_s, expert_bytes / kNic);
  EXPECT_GT(dp_row(wider).time_s, 1.8 * b300_row.time_s);
  EXPECT_THAT(dp_row(gb200).collectives, ::testing::HasSubstr("no routed expert replicated"));
  EXPECT_DOUBLE_EQ(dp_row(gb200_wider).time_s, dp_row(gb200).time_s);
}

// FSDP and ZeRO-3 shard the routed experts over the same expert-data-parallel group and gather
// and reduce-scatter them there per unit (torchtitan's experts on their own dp_shard_mod_ep
// mesh); with hybrid sharding over that group's share of a shard group. GPT-OSS 120B at EP8 of
// 64 B300s under FSDP: the experts' collectives grow with their width; at EP64 (GB200) there are
// none. Sharded in groups of 32 (two replicas) every rank steps twice the dense and twice the
// expert parameters it steps over all 64 (the experts over 4 ranks where they were over 8).
TEST(MoeTest, FsdpShardsTheExpertsOverTheirOwnGroup) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  auto step = [&](const model::Spec& s) {
    auto r = model.Step(s, LayoutOf(s), s.cluster.nodes.TotalGpus());
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : StepBreakdown{};
  };
  auto fsdp = [](model::Spec s, int shard = 0) {
    s.workload.strategy = model::Strategy::kFsdp;
    s.workload.shard = shard;
    return s;
  };
  auto wider = [](model::Spec s) {
    s.workload.model.moe.ffn_hidden *= 2;
    return s;
  };
  const model::Spec b300 =
      fsdp(MoeSpec(MoeRowNamed("GPT-OSS 120B BF16 26.04.01", "B300-SXM-270GB")));
  ASSERT_EQ(b300.workload.expert, 8);
  // Per micro-batch two gathers and a reduce-scatter of 14.3 B expert parameters' bf16 bytes a
  // GPU over 8 ranks, one a node, each on its own 800 Gb/s NIC: at least (7/8) x 3 x 28.7 GB /
  // 100 GB/s a micro-batch (over the whole group, the node's eight NICs, it was some 6x less).
  const plan::LocalParams local =
      plan::ParamsOnPipelineRank(plan::CountParams(b300.workload.model), b300.workload.model, 1, 64,
                                 8, plan::LayersOnPipelineRank(b300.workload.model, 1, 1, {}, 0))
          .local;
  const StepBreakdown sharded = step(b300);
  const double one_nic = sharded.micro_batches * 3 * 2 * local.experts * 7 / 8 / 100e9;
  EXPECT_GT(sharded.dp_comm_total_s, one_nic);
  EXPECT_LT(sharded.dp_comm_total_s, 1.6 * one_nic);
  const model::Spec gb200 = fsdp(MoeSpec(MoeRowNamed("GPT-OSS 120B 26.06", "GB200-NVL72")));
  ASSERT_EQ(gb200.workload.expert, 64);
  EXPECT_DOUBLE_EQ(step(wider(gb200)).dp_comm_total_s, step(gb200).dp_comm_total_s);
  // Hybrid: half the shard ranks for both, so twice the optimizer's parameters a rank.
  EXPECT_NEAR(step(fsdp(b300, 32)).optimizer_s / step(b300).optimizer_s, 2, 1e-9);
  // The memory model shards the experts' states so too, and the plan's table moves them there.
  const plan::MemoryBreakdown full = plan::PlanMemory(b300).configured;
  const plan::MemoryBreakdown hybrid = plan::PlanMemory(fsdp(b300, 32)).configured;
  EXPECT_NEAR(hybrid.states.optimizer_bytes / full.states.optimizer_bytes, 2, 1e-6);
  auto dp_rows = [](const model::Spec& s) {
    const plan::CommPlan c = plan::PlanComm(s, plan::PlanCompute(s));
    std::vector<plan::Traffic> rows;
    for (const plan::Traffic& t : c.step.traffic) {
      if (t.kind.rfind("data-parallel", 0) == 0) rows.push_back(t);
    }
    return rows;
  };
  const std::vector<plan::Traffic> rows = dp_rows(b300);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_THAT(rows[0].collectives,
              ::testing::HasSubstr("the routed experts' over their 8 expert-data-parallel ranks"));
  EXPECT_DOUBLE_EQ(dp_rows(wider(gb200))[0].time_s, dp_rows(gb200)[0].time_s);
  const std::vector<plan::Traffic> hybrid_rows = dp_rows(fsdp(b300, 32));
  ASSERT_EQ(hybrid_rows.size(), 2u);  // the shard group's and the replicas'
  EXPECT_THAT(hybrid_rows[0].collectives, ::testing::HasSubstr("over their 4 expert"));
  // Without EP a block's experts are in its own collectives: one all-reduce of the shards a
  // micro-batch across the replicas, two gathers and a reduce-scatter in the group.
  model::Spec no_ep = fsdp(b300, 32);
  no_ep.workload.expert = 1;
  const std::vector<plan::Traffic> no_ep_rows = dp_rows(no_ep);
  ASSERT_EQ(no_ep_rows.size(), 2u);
  const double micro_batches = step(no_ep).micro_batches;
  EXPECT_DOUBLE_EQ(no_ep_rows[0].calls_per_step, 3 * micro_batches);
  EXPECT_DOUBLE_EQ(no_ep_rows[1].calls_per_step, micro_batches);
  EXPECT_GT(dp_rows(wider(fsdp(b300, 32)))[1].time_s, 1.5 * hybrid_rows[1].time_s);
}

// cuDNN's FP8 attention backward runs the whole square on a windowed layer; its forward, and BF16
// both ways, the windowed kernel (plan::WindowedAttentionShare: a share f of a causal layer's
// forward time, b of its backward). GPT-OSS 120B on 64 GB300s with every layer windowed: against
// no window, the attention's time changes by (g8 f s/2 + 2s) - (g8 + 2) s/2 forward-equivalents a
// layer with FP8 attention (the backward over the whole square of s) and by (g f + 2b - g - 2) s/2
// without, s = 4,096, g8 and g the FP8 and BF16 forwards' exponential factors at heads of 64
// (ForwardExponentialFactor): the window makes the FP8 run slower and the BF16 one faster.
TEST(MoeTest, Fp8AttentionsWindowedBackwardRunsTheWholeSquare) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec on = MoeSpec(MoeRowNamed("GPT-OSS 120B 26.06", "GB300-NVL72"));
  ASSERT_TRUE(on.workload.fp8_attention);
  on.workload.model.sliding_window_layers = on.workload.model.layers;
  model::Spec off = on;
  off.workload.fp8_attention = false;
  auto compute = [&](model::Spec s, bool window) {
    if (!window) s.workload.model.sliding_window = 0;
    auto r = model.Step(s, LayoutOf(s), 64);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->compute_s : 0.0;
  };
  const double with_fp8 = compute(on, true) - compute(on, false);
  const double without = compute(off, true) - compute(off, false);
  EXPECT_GT(with_fp8, 0);
  EXPECT_LT(without, 0);
  const double s = 4096;
  const plan::WindowedAttentionTime share = plan::WindowedAttentionShare("Blackwell Ultra", s, 128);
  // The same layers, tokens and rate but FP8 attention's speed-up over BF16 at this length.
  const double fp8_speedup = plan::Fp8AttentionFactor(on.workload, "Blackwell Ultra", 1);
  const double g8 = plan::ForwardExponentialFactor("Blackwell Ultra", 64, true);
  const double g = plan::ForwardExponentialFactor("Blackwell Ultra", 64, false);
  EXPECT_NEAR(with_fp8 * fp8_speedup / without,
              (g8 * share.forward * s / 2 + 2 * s - (g8 + 2) * s / 2) /
                  ((g * share.forward + 2 * share.backward - g - 2) * s / 2),
              1e-6);
}

// In packed documents (model.document_length) a window meets each document as a sequence of that
// length: no longer than the window, no tile lies outside it and the layer runs the causal kernel;
// longer, FP8 attention's backward square is the document's and the windowed forward the one a
// sequence of the document's length runs.
TEST(MoeTest, PackedDocumentsBoundTheWindowedBackwardsSquare) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec on = MoeSpec(MoeRowNamed("GPT-OSS 120B 26.06", "GB300-NVL72"));
  ASSERT_TRUE(on.workload.fp8_attention);
  auto compute = [&](model::Spec s, int documents, bool window) {
    s.workload.model.document_length = documents;
    if (!window) s.workload.model.sliding_window = 0;
    auto r = model.Step(s, LayoutOf(s), 64);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->compute_s : 0.0;
  };
  EXPECT_NEAR(compute(on, 128, true) / compute(on, 128, false), 1.0, 1e-12);
  EXPECT_NEAR(compute(on, 64, true) / compute(on, 64, false), 1.0, 1e-12);
  // Documents of 1,024 and whole sequences of 4,096: what the window adds to a layer's attention,
  // per token, over the causal layer's time (g8 + 2) d/2: the windowed forward's share of a
  // causal one's at that length (g8 f d/2) and the backward's whole square (2d), less the causal
  // layer's. The causal attention's time is what halves when its rate doubles.
  const double g8 = plan::ForwardExponentialFactor("Blackwell Ultra", 64, true);
  for (int d : {1024, 0}) {
    const double length = d > 0 ? d : 4096;
    model::Spec causal = on;
    causal.workload.model.document_length = d;
    causal.workload.model.sliding_window = 0;
    const double attention = runs::AttentionSeconds(causal, 64);
    const double f = plan::WindowedAttentionShare("Blackwell Ultra", length, 128).forward;
    EXPECT_GT(compute(on, d, true), compute(on, d, false)) << d;
    EXPECT_NEAR((compute(on, d, true) - compute(on, d, false)) / attention,
                ((g8 * f * length / 2 + 2 * length) / ((g8 + 2) * length / 2) - 1) *
                    on.workload.model.WindowedLayers() / on.workload.model.layers,
                1e-6)
        << d;
  }
}

// The windowed kernels' measured cost is the native kernels' (cuDNN's): a kernel written for
// mma.sync (FlashAttention-2 on Hopper) keeps the window's count, k keys a query where a causal
// layer meets s/2, at its own rate.
TEST(MoeTest, WindowedKernelsCostIsTheNativeKernels) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec mma = MoeSpec(MoeRowNamed("GPT-OSS 120B BF16 26.04.01", "H100-SXM5-80GB"));
  mma.workload.attention_kernel = model::AttentionKernel::kMmaSync;
  model::Spec causal = mma;
  causal.workload.model.sliding_window = 0;
  const int gpus = mma.cluster.nodes.TotalGpus();
  auto compute = [&](const model::Spec& s) { return runs::ComputeSeconds(model, s, gpus); };
  const double attention = runs::AttentionSeconds(causal, gpus);
  const model::ModelShape& m = mma.workload.model;
  const double k = plan::CausalWindowKeys(m), s = m.sequence;
  EXPECT_NEAR((compute(mma) - compute(causal)) / attention,
              (2 * k / s - 1) * m.WindowedLayers() / m.layers, 1e-6);
  // The native kernel pays more than the count: its windowed layers' tiles and fixed cost.
  model::Spec native = mma;
  native.workload.attention_kernel = model::AttentionKernel::kNative;
  model::Spec native_causal = causal;
  native_causal.workload.attention_kernel = model::AttentionKernel::kNative;
  EXPECT_GT(compute(native) - compute(native_causal),
            (2 * k / s - 1) * m.WindowedLayers() / m.layers *
                runs::AttentionSeconds(native_causal, gpus));
}

// Megatron-Core runs three of GPT-OSS's kernels in PyTorch eager (plan's MegatronEagerBytes,
// traced through Megatron-LM's code): YaRN's rotary embeddings, whose attention factor Transformer
// Engine's fused RoPE does not take (44 bytes an element of the queries and keys beyond the fused
// kernel's, every layer), the clamp before the experts' quick-GeGLU (46 an element of each routed
// copy's expert width) and the experts' second bias (28 a hidden element of each copy). On
// 26.04.01's GB300 recipe (TP1, no recompute, the per-expert path) each costs its bytes at the
// streaming rate, 4,096 x 4 tokens a micro-batch, 5 micro-batches; the fused grouped MLP runs
// the clamp and the bias in its kernel; other stacks run none of the three.
TEST(MoeTest, MegatronRunsGptOssEagerWhereItsFusedKernelsCannot) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  auto compute = [&](const model::Spec& s) {
    auto r = model.Step(s, LayoutOf(s), 64);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->compute_s : 0.0;
  };
  const model::Spec bf16 = MoeSpec(MoeRowNamed("GPT-OSS 120B BF16 26.04.01", "GB300-NVL72"));
  const model::ModelShape& m = bf16.workload.model;
  ASSERT_EQ(m.mlp, model::Mlp::kQuickGeglu);
  ASSERT_EQ(m.rope_scaling, model::RopeScaling::kYarn);
  ASSERT_TRUE(m.linear_bias);
  ASSERT_EQ(m.activation_clamp, 7);
  const double bw = bf16.cluster.nodes.gpu.StreamingBytesPerS();
  const double per_layer = 5.0 * 4 * 4096 * 36 / bw;  // micro-batches x tokens x layers
  const double h = 2880, f = 2880, k = 4, qk = 64 * 64 + 8 * 64;
  auto without = [](model::Spec s, auto change) {
    change(s.workload.model);
    return s;
  };
  const double rope = compute(bf16) - compute(without(bf16, [](model::ModelShape& x) {
                        x.rope_scaling = model::RopeScaling::kNone;
                      }));
  EXPECT_NEAR(rope, per_layer * 44 * qk, 1e-9 * rope);
  const double clamp =
      compute(bf16) - compute(without(bf16, [](model::ModelShape& x) { x.activation_clamp = 0; }));
  EXPECT_NEAR(clamp, per_layer * 46 * k * f, 1e-9 * clamp);
  const double bias =
      compute(bf16) - compute(without(bf16, [](model::ModelShape& x) { x.linear_bias = false; }));
  EXPECT_NEAR(bias, per_layer * 28 * k * h, 1e-9 * bias);
  // A SwiGLU's clamp is no eager path (Megatron-Core's fused SwiGLU took none at 2edffadb).
  EXPECT_DOUBLE_EQ(
      compute(without(bf16, [](model::ModelShape& x) { x.mlp = model::Mlp::kSwiglu; })),
      compute(without(bf16, [](model::ModelShape& x) {
        x.mlp = model::Mlp::kSwiglu;
        x.activation_clamp = 0;
      })));
  // The fused grouped MLP (26.06's rack recipes) keeps only the rotary embeddings' cost.
  const model::Spec fused = MoeSpec(MoeRowNamed("GPT-OSS 120B 26.06", "GB300-NVL72"));
  ASSERT_TRUE(fused.workload.moe_fused_grouped_mlp);
  EXPECT_DOUBLE_EQ(compute(fused), compute(without(fused, [](model::ModelShape& x) {
                     x.activation_clamp = 0;
                     x.linear_bias = false;
                   })));
  EXPECT_GT(compute(fused), compute(without(fused, [](model::ModelShape& x) {
              x.rope_scaling = model::RopeScaling::kNone;
            })));
  // Packed sequences take Transformer Engine's fused THD kernel before the attention factor's
  // check: no eager rotary embeddings.
  EXPECT_DOUBLE_EQ(compute(without(fused, [](model::ModelShape& x) { x.document_length = 2048; })),
                   compute(without(fused, [](model::ModelShape& x) {
                     x.document_length = 2048;
                     x.rope_scaling = model::RopeScaling::kNone;
                   })));
  // Outside Megatron-Core none of the three is charged.
  model::Spec titan = bf16;
  titan.workload.stack = "pytorch-fsdp2";
  EXPECT_DOUBLE_EQ(compute(titan), compute(without(titan, [](model::ModelShape& x) {
                     x.activation_clamp = 0;
                     x.rope_scaling = model::RopeScaling::kNone;
                   })));
  // The clamp keeps the clamped copy of the first GEMM's output beside its input: 4 k f bytes a
  // token more in each MoE layer (4 micro-batch samples of 4,096 tokens in flight, 36 layers).
  const double kept =
      plan::EstimateMemory(bf16, bf16.workload.strategy, 4, model::Recompute::kNone)
          .activation_bytes -
      plan::EstimateMemory(without(bf16, [](model::ModelShape& x) { x.activation_clamp = 0; }),
                           bf16.workload.strategy, 4, model::Recompute::kNone)
          .activation_bytes;
  EXPECT_NEAR(kept, 4 * k * f * 4 * 4096 * 36, 1e-6 * kept);
}

// Selective recompute re-runs its modules at their own rates (activation_checkpointing_modules,
// Megatron-Core's recompute_modules): GPT-OSS 120B's H100 recipe recomputes the norm before each
// MoE layer (its input read and output written again, 4 h bytes a token) and the experts'
// activation (the gated first GEMM's 2 x k x f outputs read, k x f written: 6 k f bytes a token;
// before it, Megatron-Core's eager clamp of GPT-OSS's inputs: 16 k f), memory-bound on the
// busiest stage's 9 MoE layers, 80 micro-batches a step; no attention again. Its memory drops
// those outputs and the clamped copy of the first GEMM's output (4 k f). A dense model's mlp
// re-runs the MLP's GEMMs (HFU counts them) and, with TP, the MLP's forward collective.
TEST(MoeTest, SelectiveRecomputeModulesRerunTheirOwnWork) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const model::Spec oss = MoeSpec(MoeRowNamed("GPT-OSS 120B BF16 26.04.01", "H100-SXM5-80GB"));
  const model::Workload& w = oss.workload;
  ASSERT_EQ(w.recompute, model::Recompute::kSelective);
  ASSERT_TRUE(w.recompute_modules.layernorm && w.recompute_modules.moe_act);
  ASSERT_FALSE(w.recompute_modules.core_attn);
  auto step = [&](model::Spec s) {
    auto r = model.Step(s, LayoutOf(s), 64);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : StepBreakdown{};
  };
  model::Spec nothing = oss;
  nothing.workload.recompute_modules = {.core_attn = false};
  const StepBreakdown with = step(oss), without = step(nothing);
  EXPECT_EQ(without.recompute_s, 0);
  const double h = 2880, k = 4, f = 2880, tokens = 4096, layers = 9, micro_batches = 80;
  const double bw = oss.cluster.nodes.gpu.StreamingBytesPerS();
  EXPECT_NEAR(with.recompute_s, micro_batches * layers * tokens * (4 * h + (6 + 16) * k * f) / bw,
              1e-9 * with.recompute_s);
  // Memory: 2 + (2 + 4) k f/h = 26 bytes a token a hidden element of each MoE layer, on the
  // first pipeline rank (4 micro-batches in flight, 9 layers).
  const plan::MemoryBreakdown mem_with =
      plan::EstimateMemory(oss, w.strategy, w.micro_batch, w.recompute);
  const plan::MemoryBreakdown mem_without =
      plan::EstimateMemory(nothing, w.strategy, w.micro_batch, w.recompute);
  EXPECT_NEAR(mem_without.activation_bytes - mem_with.activation_bytes,
              4 * layers * (2 + (2 + 4) * k * f / h) * tokens * h,
              1e-6 * mem_with.activation_bytes);
  EXPECT_LT(with.memory_bytes, without.memory_bytes);
  // B200's recipe recomputes the same two to fit: without them the memory model puts it over its
  // 180 GiB, with them under (printed; docs/sim.md quotes both).
  model::Spec b200 = MoeSpec(MoeRowNamed("GPT-OSS 120B BF16 26.04.01", "B200-SXM-180GB"));
  const StepBreakdown b200_with = step(b200);
  EXPECT_TRUE(b200_with.fits);
  b200.workload.recompute = model::Recompute::kNone;
  const StepBreakdown b200_without = step(b200);
  EXPECT_FALSE(b200_without.fits);
  model::Spec gb200 = MoeSpec(MoeRowNamed("GPT-OSS 120B BF16 26.04.01", "GB200-NVL72"));
  const StepBreakdown gb200_with = step(gb200);
  gb200.workload.recompute = model::Recompute::kNone;
  const StepBreakdown gb200_without = step(gb200);
  for (const auto& [gpu, in, out] :
       {std::tuple{"B200", b200_with, b200_without}, std::tuple{"GB200", gb200_with, gb200_without},
        std::tuple{"H100", with, without}}) {
    std::printf("GPT-OSS 120B BF16 on %s: %.1f GiB with the recompute, %.1f without, of %.1f\n",
                gpu, in.memory_bytes / (1 << 30), out.memory_bytes / (1 << 30),
                in.memory_capacity_bytes / (1 << 30));
  }
  // A layout that recomputes otherwise (the search's) runs none of the modules.
  for (model::Recompute r : {model::Recompute::kNone, model::Recompute::kFull}) {
    model::Spec a = oss, b = nothing;
    a.workload.recompute = b.workload.recompute = r;
    const StepBreakdown sa = step(a), sb = step(b);
    EXPECT_DOUBLE_EQ(sa.step_s, sb.step_s) << model::RecomputeName(r);
    EXPECT_DOUBLE_EQ(sa.hfu, sb.hfu) << model::RecomputeName(r);
    EXPECT_DOUBLE_EQ(sa.memory_bytes, sb.memory_bytes) << model::RecomputeName(r);
    EXPECT_EQ(sa.recompute_modules, model::Workload::RecomputeModules{});
  }
  EXPECT_EQ(with.recompute_modules, w.recompute_modules);
  // The attention core, Megatron's default module, re-runs attention's forward instead.
  model::Spec attention = oss;
  attention.workload.recompute_modules = {};
  const StepBreakdown core = step(attention);
  EXPECT_GT(core.recompute_s, 0);
  // HFU's FLOPs (HFU x step time): the attention core's forward again; element-wise work none.
  EXPECT_GT(core.hfu * core.step_s, without.hfu * without.step_s);
  EXPECT_NEAR(with.hfu * with.step_s, without.hfu * without.step_s, 1e-12);
  // With context parallelism the attention core's re-run gathers K and V again; the other
  // modules do not.
  model::Spec cp_core = attention, cp_other = oss;
  cp_core.workload.context = cp_other.workload.context = 2;
  EXPECT_GT(step(cp_core).cp_comm_s, step(cp_other).cp_comm_s);
  model::Spec cp_none = cp_other;
  cp_none.workload.recompute = model::Recompute::kNone;
  EXPECT_DOUBLE_EQ(step(cp_other).cp_comm_s, step(cp_none).cp_comm_s);

  // mlp on a dense model: Megatron-Core's GPT table's 175B row (TP8 PP8 with SP).
  const runs::MegatronRow& row = runs::kMegatronRows[8];
  model::Spec dense = runs::MegatronSpec(row);
  ASSERT_GT(dense.workload.tensor, 1);
  dense.workload.recompute = model::Recompute::kSelective;
  dense.workload.recompute_modules = {.core_attn = false};
  model::Spec mlp = dense;
  mlp.workload.recompute_modules.mlp = true;
  auto dense_step = [&](const model::Spec& s) {
    auto r = model.Step(s, LayoutOf(s), s.TotalGpus());
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : StepBreakdown{};
  };
  const StepBreakdown base = dense_step(dense), again = dense_step(mlp);
  EXPECT_GT(again.recompute_s, 0);
  EXPECT_GT(again.tp_comm_s, base.tp_comm_s);
  // Without TP overlap every collective is exposed (but what Transformer Engine hides beside its
  // wgrad GEMMs, the same whatever recomputes): the MLP's forward collective is one, full
  // recompute's re-run two.
  model::Spec exposed = dense, exposed_mlp = mlp;
  exposed.workload.tp_comm_overlap = exposed_mlp.workload.tp_comm_overlap = false;
  model::Spec exposed_full = exposed;
  exposed_full.workload.recompute = model::Recompute::kFull;
  const double one = dense_step(exposed_mlp).tp_comm_s - dense_step(exposed).tp_comm_s;
  EXPECT_GT(one, 0);
  EXPECT_NEAR(dense_step(exposed_full).tp_comm_s - dense_step(exposed).tp_comm_s, 2 * one,
              1e-9 * one);
  // HFU gains the MLP's forward GEMMs: 2 x 2 h f a token a layer of the model's 3 x forward.
  const model::ModelShape& m = dense.workload.model;
  const plan::FlopsPerToken flops = plan::CountFlops(m, false, model::Recompute::kNone);
  const double mlp_fwd = 2.0 * 2 * m.hidden * m.ffn_hidden * m.layers;
  EXPECT_NEAR(again.hfu / base.hfu,
              (flops.model + mlp_fwd) / flops.model * base.step_s / again.step_s, 1e-9);
  EXPECT_LT(dense_step(mlp).memory_bytes, base.memory_bytes);
}

// HybridEP / DeepEP send a token once to each rank holding any of its experts and across the
// fabric once per other node holding any; Megatron-Core's all-to-all sends a copy per expert and
// sorts the copies it receives by local expert and back.
// Megatron-Core's expert ranks run tp (= ETP), ep, dp, with no cp: EP peers sit ETP apart, and
// with context parallelism an EP group spans CP ranks before DP ones. Qwen3 30B-A3B on 16 H100s
// at CP2 EP8: the group is one node's eight GPUs, its all-to-all on NVLink whatever the fabric
// (placed t x cp apart, the dense order, it spanned both nodes); the plan's table says so too.
TEST(MoeTest, ExpertParallelRanksSitExpertTensorApart) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = MoeSpec(kMoe[0]);
  spec.workload.context = 2;
  spec.workload.expert = 8;
  model::Spec slow = spec;
  slow.cluster.compute_fabric.speed_bytes_per_s /= 10;
  auto fast_step = model.Step(spec, LayoutOf(spec), 16);
  auto slow_step = model.Step(slow, LayoutOf(slow), 16);
  ASSERT_TRUE(fast_step && slow_step)
      << (fast_step ? slow_step.error() : fast_step.error()).message;
  EXPECT_GT(fast_step->ep_comm_s, 0);
  EXPECT_DOUBLE_EQ(slow_step->ep_comm_s, fast_step->ep_comm_s);
  const plan::CommPlan c = plan::PlanComm(spec, plan::PlanCompute(spec));
  bool found = false;
  for (const plan::Traffic& t : c.step.traffic) {
    if (t.kind != "expert-parallel") continue;
    found = true;
    EXPECT_EQ(t.group_size, 8);
    EXPECT_EQ(t.group_nodes, 1);
  }
  EXPECT_TRUE(found);
}

TEST(MoeTest, HybridEpSendsATokenOncePerRankAndNode) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = MoeSpec(kMoe[0]);  // Qwen3 30B-A3B on 16 H100, EP16 over 2 nodes
  // Across nodes, on a fabric slow enough to set both: 4 copies a token against the 0.996 of
  // one that reaches the other node (1 - C(64, 8) / C(128, 8)), less the same latency.
  model::Spec slow = spec;
  slow.cluster.compute_fabric.speed_bytes_per_s /= 10;
  slow.workload.moe_dedup = false;
  auto alltoall = model.Step(slow, LayoutOf(slow), 16);
  slow.workload.moe_dedup = true;
  auto hybrid = model.Step(slow, LayoutOf(slow), 16);
  ASSERT_TRUE(alltoall && hybrid);
  EXPECT_NEAR(alltoall->ep_comm_s / hybrid->ep_comm_s, 4 / 0.996, 0.1);
  // Inside a node (EP8, 16 experts a rank): a rank receives 8 (1 - C(112, 8) / C(128, 8)) = 5.34
  // of a rank's tokens at HybridEP's measured 0.619 of NVLink's one-way peak; NCCL sends 7 of 8
  // copies at its 0.80: nearly the same time.
  Layout inside = LayoutOf(spec);
  inside.ep = 8;
  spec.workload.moe_dedup = true;
  auto in_hybrid = model.Step(spec, inside, 16);
  spec.workload.moe_dedup = false;
  auto in_alltoall = model.Step(spec, inside, 16);
  ASSERT_TRUE(in_hybrid && in_alltoall);
  const plan::NetworkModel net = plan::BuildNetworkModel(spec.cluster);
  const double one_way = net.intra_busbw_bytes_per_s / net.intra_efficiency;  // 450 GB/s
  const double token_bytes = 4096.0 * 2048 * 2;
  const double calls = 64.0 * 48 * 4;  // micro-batches x MoE layers x all-to-alls
  const double fixed = net.launch_s + net.intra_alpha_s;
  EXPECT_NEAR(in_hybrid->ep_comm_s, calls * (fixed + token_bytes * 5.3394 / (one_way * 0.6193)),
              1e-3 * in_hybrid->ep_comm_s);
  EXPECT_NEAR(in_alltoall->ep_comm_s, calls * (fixed + token_bytes * 7 / (one_way * 0.80)),
              1e-3 * in_alltoall->ep_comm_s);
  // The all-to-all's sorts: 16 more bytes per routed copy per hidden element, 64 micro-batches
  // of 4,096 tokens through 48 MoE layers at the H100's streaming rate (89.6 % of 3.35 TB/s).
  EXPECT_NEAR(in_alltoall->compute_s - in_hybrid->compute_s,
              64 * 16.0 * 8 * 2048 * 4096 * 48 / spec.cluster.nodes.gpu.StreamingBytesPerS(), 1e-3);
  // Where a token's experts rarely share a rank (16 experts, top 2, 2 a rank) deduplication saves
  // little: 8 (1 - C(14, 2) / C(16, 2)) = 1.93 received against 1.75 copies sent, and HybridEP's
  // measured rate makes it the slower on the wire (Megatron Bridge found the all-to-all faster
  // for GPT-OSS 120B's top 4 on GB200, #3561).
  model::Spec few = spec;
  few.workload.model.moe.experts = 16;
  few.workload.model.moe.top_k = 2;
  auto few_alltoall = model.Step(few, inside, 16);
  few.workload.moe_dedup = true;
  auto few_hybrid = model.Step(few, inside, 16);
  ASSERT_TRUE(few_alltoall && few_hybrid);
  EXPECT_NEAR(few_alltoall->ep_comm_s / few_hybrid->ep_comm_s,
              (fixed + token_bytes * 1.75 / (one_way * 0.80)) /
                  (fixed + token_bytes * 8 * (1 - 91.0 / 120) / (one_way * 0.6193)),
              0.01);
  // One expert a rank (EP = experts): nothing to sort.
  model::Spec one = spec;
  one.workload.model.moe.experts = 16;
  one.workload.model.moe.top_k = 2;
  Layout sixteen = LayoutOf(one);
  auto one_alltoall = model.Step(one, sixteen, 16);
  one.workload.moe_dedup = true;
  auto one_hybrid = model.Step(one, sixteen, 16);
  ASSERT_TRUE(one_alltoall && one_hybrid);
  EXPECT_DOUBLE_EQ(one_alltoall->compute_s, one_hybrid->compute_s);
}

// Megatron-LM's MoE-layer performance baseline (tests/functional_tests/test_cases/common/moe_perf:
// baseline.json, cf39a4dd; test_cases.py; one DGX H100 node, EP8, 4,096 tokens a rank, forced
// balance, BF16): one MoE layer's forward and backward on each dispatcher, matched (the router,
// the permutes, the dispatch, the experts and the combine; __main__.py builds no shared expert).
// Its DeepSeek proxy (hidden 7,168, 32 experts of 2,048, top 8 from 4 of 8 groups) takes
// 7.12 + 10.48 ms on the all-to-all and 5.39 + 8.80 ms on HybridEP: 3.42 ms apart (1.73 forward,
// 1.68 backward). Its Mixtral proxy (8 experts of 14,336, top 2: one expert a rank, nothing to
// sort) 12.01 and 12.08 ms: 0.07 ms the other way. One layer, one micro-batch: the layer's gap is
// the all-to-alls' and the compute's (the sorts), apart from the rest of the step.
double DispatcherGapMs(int hidden, int experts, int top_k, int ffn, int groups, int group_top_k) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  double step[2] = {0, 0};
  for (int dedup = 0; dedup < 2; ++dedup) {
    const std::string yaml =
        "name: moe-perf\n" +
        runs::DgxCluster(1, "H100-SXM5-80GB",
                         "{type: nvlink4, bandwidth: 900 GB/s, switched: true}") +
        fmt::format(R"(workload:
  model: {{name: proxy, layers: 1, hidden: {h}, heads: 8, mlp: swiglu, vocab: 32000,
          sequence: 4096, dropout: 0,
          moe: {{experts: {e}, top_k: {k}, ffn_hidden: {f}, groups: {g}, group_top_k: {gk}}}}}
  precision: bf16
  parallel: {{strategy: zero1, expert: 8}}
  batch: {{micro: 1, global: 8}}
  software: {{stack: nemo-2025, moe_dispatcher: {d}}}
)",
                    fmt::arg("h", hidden), fmt::arg("e", experts), fmt::arg("k", top_k),
                    fmt::arg("f", ffn), fmt::arg("g", groups), fmt::arg("gk", group_top_k),
                    fmt::arg("d", dedup ? "hybridep" : "alltoall"));
    auto s = model::ParseSpec(yaml, "moe-perf.yaml");
    EXPECT_TRUE(s) << s.error().message;
    if (!s) return 0;
    auto r = model.Step(*s, LayoutOf(*s), 8);
    EXPECT_TRUE(r) << r.error().message;
    if (!r) return 0;
    step[dedup] = r->ep_comm_s + r->compute_s;
  }
  return (step[0] - step[1]) * 1e3;
}

TEST(MoeTest, DispatcherGapAgainstMegatronsMoeLayerBaseline) {
  // DeepSeek proxy: a rank is one group, so HybridEP reaches the 4 ranks of the token's 4 groups
  // (8 x 1/2) where the all-to-all sends 7 copies and sorts them: 2.45 ms of the measured 3.42
  // (with routing uniform over the experts a token would reach 5.64 ranks: 1.07 ms; the sorts at
  // H100's measured streaming rate, 89.6 % of its HBM peak: 2.32 and 0.94 ms at the peak). The
  // rest is as large backward as forward, so not the all-to-all dispatcher's forward-only host
  // synchronisation; HybridEP's rate on Hopper is GB200's share, and at DeepEP's H800 share (0.78)
  // the gap would be 3.14 ms.
  const double deepseek = DispatcherGapMs(7168, 32, 8, 2048, 8, 4);
  std::printf(
      "DeepSeek proxy: the all-to-all %.2f ms slower than HybridEP a layer, measured 3.42\n",
      deepseek);
  EXPECT_NEAR(deepseek, 2.45, 0.05);
  EXPECT_NEAR(DispatcherGapMs(7168, 32, 8, 2048, 1, 1), 1.07, 0.05);
  // Mixtral proxy: the two within half a millisecond of each other, as measured (0.07 ms).
  const double mixtral = DispatcherGapMs(4096, 8, 2, 14336, 1, 1);
  std::printf("Mixtral proxy: %.2f ms, measured -0.07\n", mixtral);
  EXPECT_LT(std::fabs(mixtral), 0.5);
}

// Megatron-Core's EP overlap runs one micro-batch's forward beside another's backward, each
// one's all-to-alls beside the other's compute; the first forward and the last backward have no
// partner. Where the all-to-all is shorter than the compute beside it, it hides but for them and
// still slows that compute; where it is longer, what the compute cannot cover stays exposed.
TEST(MoeTest, EpOverlapHidesTheAllToAllBehindTheOtherMicroBatch) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = MoeSpec(MoeRowNamed("Qwen3 30B-A3B BF16"));  // 16 H100, overlap off
  ASSERT_FALSE(spec.workload.moe_comm_overlap);
  auto off = model.Step(spec, LayoutOf(spec), 16);
  spec.workload.moe_comm_overlap = true;
  auto on = model.Step(spec, LayoutOf(spec), 16);
  ASSERT_TRUE(off && on);
  EXPECT_EQ(on->compute_s, off->compute_s);
  // 64 micro-batches: one forward and one backward of the 64 unpaired, a 64th of the total.
  EXPECT_NEAR(on->ep_comm_s, off->ep_comm_s / 64, 0.01 * off->ep_comm_s);
  const double hidden = off->ep_comm_s - on->ep_comm_s;
  EXPECT_NEAR(on->contention_s - off->contention_s, 0.189 * hidden, 1e-9);
  EXPECT_LT(on->step_s, off->step_s - 0.75 * hidden);
  // One micro-batch a step has no partner: nothing hides.
  model::Spec single = spec;
  single.workload.accumulation = 1;
  single.workload.global_batch = 16;
  single.workload.moe_comm_overlap = false;
  auto single_off = model.Step(single, LayoutOf(single), 16);
  single.workload.moe_comm_overlap = true;
  auto single_on = model.Step(single, LayoutOf(single), 16);
  ASSERT_TRUE(single_off && single_on);
  EXPECT_DOUBLE_EQ(single_on->ep_comm_s, single_off->ep_comm_s);
  // A fabric a hundred times slower: the all-to-all outgrows the compute beside it, and what the
  // compute cannot cover (at least 4 all-to-alls less the layer's compute) stays exposed.
  model::Spec slow = spec;
  slow.cluster.compute_fabric.speed_bytes_per_s /= 100;
  auto slow_on = model.Step(slow, LayoutOf(slow), 16);
  slow.workload.moe_comm_overlap = false;
  auto slow_off = model.Step(slow, LayoutOf(slow), 16);
  ASSERT_TRUE(slow_on && slow_off);
  EXPECT_GT(slow_on->ep_comm_s, slow_off->ep_comm_s - slow_off->compute_s);
  EXPECT_LT(slow_on->ep_comm_s, slow_off->ep_comm_s);
  // Full recomputation (a searched layout; the spec refuses it stated): Megatron-Core runs no
  // overlap with it, so the model does not either, and the regime says so.
  Layout full = LayoutOf(spec);
  full.recompute = model::Recompute::kFull;
  auto recomputed = model.Step(spec, full, 16);
  model::Spec plain = spec;
  plain.workload.moe_comm_overlap = false;
  auto recomputed_plain = model.Step(plain, full, 16);
  ASSERT_TRUE(recomputed && recomputed_plain);
  EXPECT_DOUBLE_EQ(recomputed->ep_comm_s, recomputed_plain->ep_comm_s);
  EXPECT_THAT(fmt::format("{}", fmt::join(recomputed->regime.reasons, "; ")),
              ::testing::HasSubstr("EP overlap does not run"));
}

// LoRA on a mixture of experts' attention: the routed experts are frozen too, so they run their
// forward and their input's gradient alone, and the EP overlap pairs those two passes with the
// other micro-batch's: the compute falls by about a fifth, the all-to-alls stay, and the
// overlap still hides all but the unpaired ones.
TEST(MoeTest, LoraFreezesTheExpertsToo) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = MoeSpec(MoeRowNamed("Qwen3 30B-A3B BF16"));  // 16 H100
  spec.workload.moe_comm_overlap = true;
  auto full = model.Step(spec, LayoutOf(spec), 16);
  spec.workload.model.lora = {.rank = 16, .fc1 = false, .fc2 = false};
  auto lora = model.Step(spec, LayoutOf(spec), 16);
  spec.workload.moe_comm_overlap = false;
  auto plain = model.Step(spec, LayoutOf(spec), 16);
  ASSERT_TRUE(full && lora && plain);
  EXPECT_LT(lora->compute_s, 0.85 * full->compute_s);
  EXPECT_EQ(lora->compute_s, plain->compute_s);
  EXPECT_LT(lora->ep_comm_s, plain->ep_comm_s / 10);
  EXPECT_LT(lora->optimizer_s, full->optimizer_s / 100);
}

// Transformer Engine's GroupedLinear runs a GEMM per local expert; its fused grouped MLP runs a
// rank's experts as one kernel, which pays one launch, prologue and tail and fills the SMs with
// all of their tiles. The smaller each expert's GEMM, the more that saves; with one expert a rank
// there is nothing to group.
TEST(MoeTest, TheFusedGroupedMlpRunsARanksExpertsAsOneKernel) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  auto compute = [&](model::Spec spec, bool fused) {
    spec.workload.moe_fused_grouped_mlp = fused;
    auto r = model.Step(spec, LayoutOf(spec), spec.cluster.nodes.TotalGpus());
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->compute_s : 0.0;
  };
  // 30B-A3B on 8 GB200s, 16 experts a rank: micro-batch 4 (8,192 rows an expert from the 8
  // ranks) gains more than 8 (16,384), at the same tokens a step.
  model::Spec mb4 = MoeSpec(MoeRowNamed("Qwen3 30B-A3B 26.06", "GB200-NVL72"));
  ASSERT_TRUE(mb4.workload.moe_fused_grouped_mlp);
  ASSERT_EQ(mb4.workload.micro_batch, 4);
  model::Spec mb8 = mb4;
  mb8.workload.micro_batch = 8;
  mb8.workload.accumulation /= 2;
  const double gain4 = compute(mb4, false) / compute(mb4, true);
  const double gain8 = compute(mb8, false) / compute(mb8, true);
  std::printf("fused grouped MLP on 8 GB200s: compute %.2fx faster at micro-batch 4, %.2fx at 8\n",
              gain4, gain8);
  EXPECT_GT(gain8, 1.1);
  EXPECT_GT(gain4, gain8);
  // One expert a rank (8 experts over EP 8): the same kernel either way.
  model::Spec one = mb4;
  one.workload.model.moe.experts = 8;
  one.workload.model.moe.top_k = 2;
  EXPECT_DOUBLE_EQ(compute(one, true), compute(one, false));
}

}  // namespace
}  // namespace gpufleet::sim
