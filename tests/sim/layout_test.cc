// How the step model costs a layout's parallelism: FSDP and ZeRO-2 as data parallelism grows,
// context-parallel gradient groups and K/V exchanges, layouts below a node, tensor parallelism
// across NVL72 trays, activation offload, the pipeline split.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <string_view>

#include "model/spec.h"
#include "plan/comm.h"
#include "published_runs.h"
#include "sim/step.h"

namespace gpufleet::sim {
namespace {

using runs::DgxCluster;
using runs::Eff;
using runs::FoundrySpec;
using runs::kFoundry;
using runs::kMoe;
using runs::kNemoFp8;
using runs::kTitan;
using runs::MlperfRowNamed;
using runs::MlperfSpec;
using runs::MoeSpec;
using runs::NemoRow;
using runs::NemoSpec;
using runs::TitanSpec;

// ZeRO-3 / FSDP at a fixed global batch (issue 13): as DP doubles, the accumulation halves but
// each micro-batch still gathers every unit's parameters and reduce-scatters its gradients, with
// a ring latency that grows with DP, so per-GPU throughput falls, and falls faster once one
// micro-batch per step is left; before issue 13 it stayed flat from hundreds to thousands of
// GPUs. LLM Foundry's 7B on H100 (FSDP, micro-batch 2), global batch 1,024 sequences.
TEST(CalibrationTest, FsdpThroughputPerGpuFallsAsDataParallelGrowsAtAFixedGlobalBatch) {
  model::Spec spec = FoundrySpec(kFoundry[11]);  // 7b on 128 H100, no checkpointing
  ASSERT_EQ(spec.workload.model.hidden, 4096);
  spec.workload.micro_batch = 2;
  spec.workload.accumulation = 1;
  spec.workload.global_batch = 1024;
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const auto sweep = Sweep(model, spec, {.from = 8, .to = 512, .strong = true});
  ASSERT_EQ(sweep.size(), 7u);  // 8 .. 512 GPUs
  for (size_t i = 1; i < sweep.size(); ++i) {
    EXPECT_EQ(sweep[i].layout.dp, 2 * sweep[i - 1].layout.dp);
    EXPECT_EQ(sweep[i].micro_batches * sweep[i].layout.dp * 2, 1024);
    EXPECT_LT(sweep[i].mfu, sweep[i - 1].mfu) << sweep[i].layout.dp << " ranks";
  }
  // From 8 to 512 GPUs: a tenth or more of the per-GPU throughput is gone, about half of it in
  // the last doubling alone (47 %), where each GPU runs a single micro-batch.
  std::printf("MFU on 8, 256, 512 GPUs: %.1f %%, %.1f %%, %.1f %%\n", 100 * sweep[0].mfu,
              100 * sweep[5].mfu, 100 * sweep[6].mfu);
  EXPECT_LT(sweep.back().mfu, 0.9 * sweep.front().mfu);
  EXPECT_GT(sweep[5].mfu - sweep[6].mfu, 0.8 * (sweep[0].mfu - sweep[5].mfu));
}

// ZeRO-2 keeps only its gradient shard, so it reduce-scatters after every micro-batch; ZeRO-1
// (the distributed optimizer) accumulates and reduces once per step. PyTorch FSDP's
// SHARD_GRAD_OP also gathers every unit's parameters again in each micro-batch's forward, one
// collective per unit (FULL_SHARD without the backward's gather); DeepSpeed's ZeRO-2 gathers
// once per step.
TEST(CalibrationTest, Zero2ReducesEveryMicroBatch) {
  model::Spec spec = FoundrySpec(kFoundry[11]);  // 7b on 128 H100, composer-2023 (FSDP1)
  spec.workload.micro_batch = 1;
  spec.workload.global_batch = 128 * 8;  // 8 micro-batches per step
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  Layout l = LayoutOf(spec);
  l.micro_batch = 1;
  auto step = [&](model::Strategy strategy, model::ShardingImpl impl) {
    model::Spec s = spec;
    s.workload.sharding_impl = impl;
    Layout sl = l;
    sl.strategy = strategy;
    auto r = model.Step(s, sl, 128);
    EXPECT_TRUE(r);
    return r ? *r : StepBreakdown{};
  };
  using model::ShardingImpl, model::Strategy;
  const StepBreakdown one = step(Strategy::kZero1, ShardingImpl::kDeepSpeed);
  const StepBreakdown two = step(Strategy::kZero2, ShardingImpl::kDeepSpeed);
  ASSERT_EQ(two.micro_batches, 8);
  // 8 reduce-scatters and one all-gather against one of each, of the same sizes: rs + ag vs
  // 8 rs + ag, with rs (fp32 gradients) twice ag (bf16 parameters).
  EXPECT_NEAR(two.dp_comm_total_s / one.dp_comm_total_s, (8 * 2.0 + 1) / (2 + 1), 0.3);
  EXPECT_GE(two.step_s, one.step_s);
  // FSDP1's SHARD_GRAD_OP: 8 x (rs + ag) of ZeRO-1's bytes, in 32 collectives of each (one per
  // block) a micro-batch, 512 in all, each with its ring's latency (127 steps).
  const StepBreakdown fsdp = step(Strategy::kZero2, ShardingImpl::kFsdp1);
  std::printf("FSDP1 SHARD_GRAD_OP moves %.2fx ZeRO-1's DP time\n",
              fsdp.dp_comm_total_s / one.dp_comm_total_s);
  EXPECT_GT(fsdp.dp_comm_total_s / one.dp_comm_total_s, 8.5);
  EXPECT_LT(fsdp.dp_comm_total_s / one.dp_comm_total_s, 11);
  // Per unit, the rings' latency grows with the ranks: on 512 GPUs the same per-GPU batch takes
  // longer than on 128 (the published 1B and 3B rows fall 10 % and 8 % from 128 to 512 GPUs).
  model::Spec big = spec;
  big.workload.global_batch = 512 * 8;
  big.cluster.nodes.count = 64;
  Layout l512 = LayoutOf(big);
  l512.micro_batch = 1;
  l512.strategy = Strategy::kZero2;
  ASSERT_EQ(l512.dp, 512);
  auto r512 = model.Step(big, l512, 512);
  ASSERT_TRUE(r512);
  EXPECT_GT(r512->step_s, fsdp.step_s);
  // With pipeline stages FSDP keeps the stage gathered and syncs once a step, SHARD_GRAD_OP as
  // FULL_SHARD: the same DP traffic at 8 micro-batches a step as at 4.
  Layout staged = l;
  staged.pp = 2;
  staged.dp = 64;
  staged.strategy = Strategy::kZero2;
  model::Spec s2 = spec;
  s2.workload.sharding_impl = ShardingImpl::kFsdp2;
  s2.workload.global_batch = 64 * 8;
  auto eight = model.Step(s2, staged, 128);
  s2.workload.global_batch = 64 * 4;
  auto four = model.Step(s2, staged, 128);
  ASSERT_TRUE(eight && four);
  ASSERT_EQ(eight->micro_batches, 8);
  ASSERT_EQ(four->micro_batches, 4);
  EXPECT_DOUBLE_EQ(eight->dp_comm_total_s, four->dp_comm_total_s);
}

// Context-parallel ranks hold the same weights: their gradients are reduced, and the optimizer
// sharded, over DP x CP ranks (Megatron's data-parallel group with context parallelism,
// torchtitan's dp_shard_cp mesh), as the memory model shards them. Before, CP8 x DP1 reduced
// nothing and stepped an unsharded optimizer.
TEST(CalibrationTest, ContextParallelRanksReduceGradientsTogether) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const model::Spec cp8 = TitanSpec(kTitan[3]);  // 8B CP8 on 8 H100: DP1
  auto r = model.Step(cp8, LayoutOf(cp8), 8);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->layout.dp, 1);
  EXPECT_GT(r->dp_comm_total_s, 0);
  // The same 8B without CP on the same GPUs (FSDP8): the same group of eight, the same bytes
  // per unit, and the optimizer steps the same eighth of the parameters.
  const model::Spec fsdp8 = TitanSpec(kTitan[0]);
  auto f = model.Step(fsdp8, LayoutOf(fsdp8), 8);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_NEAR(r->optimizer_s, f->optimizer_s, 1e-12);
  EXPECT_NEAR(r->dp_comm_total_s, f->dp_comm_total_s, 1e-9);
}

// Context parallelism's K/V exchange. K and V are kv_heads x head_dim wide: a Qwen3-like layer of
// hidden 2,048 with 4 KV heads of 128 moves 512 a token each, twice what heads of 64 move (the
// exchange once read hidden x kv_heads / heads, 256 for both). And every TP rank runs its own
// ring at once, so a ring across nodes takes its share of the node's NICs, as the DP rings do:
// at TP8 CP2 on two DGX H100s each of a node's eight rings moves at one NIC's rate (it once had
// all eight).
model::Spec ContextParallelSpec(int head_dim, int tp) {
  auto s = model::ParseSpec(
      "name: cp\n" +
          DgxCluster(2, "H100-SXM5-80GB", "{type: nvlink4, bandwidth: 900 GB/s, switched: true}") +
          fmt::format(R"(workload:
  model: {{name: qwen-like, layers: 8, hidden: 2048, heads: 32, kv_heads: 8, head_dim: {},
          ffn_hidden: 6144, mlp: swiglu, vocab: 32000, sequence: 32768}}
  precision: bf16
  parallel: {{strategy: zero1, tensor: {}, context: 2, sequence_parallel: true}}
  batch: {{micro: 1, global: {}}}
  software: {{stack: nemo-2025}}
)",
                      head_dim, tp, 16 / (2 * tp)),
      "cp.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

TEST(ContextParallelTest, KvExchangeIsItsHeadsWidth) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const model::Spec wide = ContextParallelSpec(128, 1), narrow = ContextParallelSpec(64, 1);
  auto w = model.Step(wide, LayoutOf(wide), 16);
  auto n = model.Step(narrow, LayoutOf(narrow), 16);
  ASSERT_TRUE(w && n);
  ASSERT_GT(n->cp_comm_s, 0);
  // Inside a node, 1/cp of each exchange exposed behind 32K tokens of attention: twice the width,
  // twice the bytes; the rings' fixed latency keeps the time under twice (1.90).
  EXPECT_GT(w->cp_comm_s / n->cp_comm_s, 1.8);
  EXPECT_LT(w->cp_comm_s / n->cp_comm_s, 2.0);
}

TEST(ContextParallelTest, RingsAcrossNodesShareTheNodesNics) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const model::Spec spec = ContextParallelSpec(128, 8);  // TP8 CP2: the CP pairs span the nodes
  auto r = model.Step(spec, LayoutOf(spec), 16);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->layout.cp, 2);
  // A K/V all-gather of each TP rank's share, one rank a node, on one of the node's eight NICs.
  const model::ModelShape& m = spec.workload.model;
  const double kv = 2.0 * m.sequence * m.KvWidth() * 2 / 8;
  const double one_nic =
      plan::CollectiveTime(plan::BuildNetworkModel(spec.cluster), plan::Collective::kAllGather,
                           plan::Algorithm::kRing, kv, 1, 2, 1.0 / 8);
  const double all_nics =
      plan::CollectiveTime(plan::BuildNetworkModel(spec.cluster), plan::Collective::kAllGather,
                           plan::Algorithm::kRing, kv, 1, 2, 1.0);
  ASSERT_GT(one_nic, 4 * all_nics);
  // Forward one exchange a layer, backward two (Transformer Engine's ring passes K/V again and
  // their gradients beside them), 1/cp exposed behind the attention (the exchange per layer is
  // well under 32K tokens' attention), every layer and micro-batch.
  const double exposed = r->micro_batches * m.layers * 3 * one_nic / 2;
  EXPECT_NEAR(r->cp_comm_s / exposed, 1.0, 1e-6);
}

// A layout on fewer GPUs than a node (what a sweep or a search below one node evaluates) is
// sized over its own data-parallel ranks: ZeRO-1's states over 4 ranks on 4 of a DGX's 8 GPUs,
// as on a node of 4. They were sharded over the node's 8, and the search proposed layouts that
// do not fit.
TEST(SubNodeLayoutTest, MemoryShardsOverTheLayoutsOwnRanks) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  auto spec = [](int per_node) {
    auto s = model::ParseSpec(
        "name: box\n" +
            DgxCluster(1, "H100-SXM5-80GB", "{type: nvlink4, bandwidth: 900 GB/s, switched: true}",
                       per_node) +
            R"(workload:
  model: {name: llama-8b, layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336,
          mlp: swiglu, vocab: 128256, sequence: 8192}
  precision: bf16
  parallel: {strategy: zero1}
  batch: {micro: 1, global: 64}
  software: {stack: nemo-2025}
)",
        "box.yaml");
    EXPECT_TRUE(s) << s.error().message;
    return *s;
  };
  const model::Spec eight = spec(8), four = spec(4);
  Layout l = LayoutOf(eight);
  l.dp = 4;
  auto on_eight = model.Step(eight, l, 4);
  auto on_four = model.Step(four, LayoutOf(four), 4);
  ASSERT_TRUE(on_eight && on_four);
  ASSERT_EQ(on_four->layout.dp, 4);
  EXPECT_NEAR(on_eight->memory_bytes, on_four->memory_bytes, 1.0);
  auto whole = model.Step(eight, LayoutOf(eight), 8);
  ASSERT_TRUE(whole);
  EXPECT_GT(on_eight->memory_bytes, whole->memory_bytes);  // half the ranks, twice the shard
}

// Hybrid sharding (HSDP): IBM's fms-fsdp 7B on 128 A100s with 4 x 100 Gb/s per node, sharded
// in each node and replicated across 16 nodes. The shard group's gathers and reduce-scatters
// stay on NVLink; the fabric carries one all-reduce of each unit's 1/8 gradient shard across the
// replicas: per node, two passes of the model's gradients where FULL_SHARD moves three (two
// gathers and a reduce-scatter), in rings of 16 ranks rather than 128, for 16x the states in HBM.
// A shard group of every rank is FULL_SHARD exactly.
TEST(HybridShardingTest, TradesShardedStatesForFabricTraffic) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = runs::FmsSpec(runs::kFms[3]);  // 7B, A100, shard: 8
  ASSERT_EQ(spec.workload.shard, 8);
  auto step = [&](int shard) {
    spec.workload.shard = shard;
    auto r = model.Step(spec, LayoutOf(spec), 128);
    EXPECT_TRUE(r) << r.error().message;
    return *r;
  };
  const StepBreakdown hybrid = step(8), full = step(0), all = step(128);
  EXPECT_EQ(hybrid.layout.Describe(), "TP1 PP1 CP1 DP128 mb2 v1 none fsdp shard8");
  EXPECT_EQ(full.layout.Describe(), "TP1 PP1 CP1 DP128 mb2 v1 none fsdp");
  EXPECT_DOUBLE_EQ(all.step_s, full.step_s);
  EXPECT_DOUBLE_EQ(all.memory_bytes, full.memory_bytes);
  // Less time in collectives (0.68 s against 0.89 s), and 16 B per parameter over 8 ranks of
  // states on each GPU rather than over 128.
  std::printf("7B on 128 A100: collectives %.2f s (hybrid) / %.2f s (full), step %.2f / %.2f s\n",
              hybrid.dp_comm_total_s, full.dp_comm_total_s, hybrid.step_s, full.step_s);
  EXPECT_LT(hybrid.dp_comm_total_s, 0.8 * full.dp_comm_total_s);
  EXPECT_LT(hybrid.step_s, full.step_s);
  const double params = 6738415616;  // Llama 2 7B
  EXPECT_NEAR(hybrid.memory_bytes - full.memory_bytes, 1.1 * 16 * params * (1.0 / 8 - 1.0 / 128),
              1e6);
  EXPECT_LT(hybrid.optimizer_s, 16.1 * full.optimizer_s);
  EXPECT_GT(hybrid.optimizer_s, 15.9 * full.optimizer_s);
  // A shard group that does not divide the ranks is refused.
  spec.workload.shard = 24;
  EXPECT_FALSE(model.Step(spec, LayoutOf(spec), 128));
  // The search weighs the node's shard group beside FULL_SHARD and ZeRO-1: its best is no slower
  // than the hybrid layout.
  spec.workload.shard = 0;
  int evaluated = 0;
  auto best = Search(model, spec, 128, &evaluated, nullptr);
  ASSERT_TRUE(best) << best.error().message;
  std::printf("search: %s, %.2f s, of %d layouts\n", best->layout.Describe().c_str(), best->step_s,
              evaluated);
  EXPECT_LE(best->step_s, hybrid.step_s);
}

// Checkpointing some of the layers (activation_checkpointing_layers; Megatron's block method,
// fms-fsdp's every other block): IBM's 13B recomputes 20 of its 40 layers. The recompute costs
// half of full recomputation's, and the activations held sit between none and full: 20 layers'
// inputs and 20 layers' whole activations. The published HFU over MFU (0.59 / 0.51 on A100) is
// what recomputing half the layers' forward gives.
TEST(PartialRecomputeTest, RecomputesItsShareOfTheLayers) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = runs::FmsSpec(runs::kFms[2]);  // 13B, A100, 20 of 40 layers
  ASSERT_EQ(spec.workload.recompute_layers, 20);
  auto step = [&](model::Recompute r, int layers) {
    spec.workload.recompute = r;
    spec.workload.recompute_layers = layers;
    auto s = model.Step(spec, LayoutOf(spec), 128);
    EXPECT_TRUE(s) << s.error().message;
    return *s;
  };
  const StepBreakdown some = step(model::Recompute::kFull, 20),
                      all = step(model::Recompute::kFull, 0),
                      none = step(model::Recompute::kNone, 0);
  EXPECT_EQ(some.layout.Describe(), "TP1 PP1 CP1 DP128 mb2 v1 full(20) fsdp");
  EXPECT_NEAR(some.recompute_s, all.recompute_s / 2, 1e-12);
  EXPECT_GT(some.step_s, none.step_s);
  EXPECT_LT(some.step_s, all.step_s);
  // Memory: the recomputed layers keep their inputs (2 s b h), the others their whole
  // activations, and one layer is rebuilt at a time: linear in the layers recomputed, from
  // all of them (full) to none of them (none and the rebuilt layer).
  const double m10 = step(model::Recompute::kFull, 10).memory_bytes,
               m30 = step(model::Recompute::kFull, 30).memory_bytes;
  EXPECT_NEAR(some.memory_bytes - m10, m30 - some.memory_bytes, 1e3);
  EXPECT_NEAR(some.memory_bytes + (some.memory_bytes - m10) * 2, all.memory_bytes, 1e3);
  EXPECT_GT(some.memory_bytes, all.memory_bytes);
  EXPECT_LT(some.memory_bytes, none.memory_bytes);
  // HFU over MFU: 1 + (half the layers' forward) / (3 forwards).
  std::printf("13B on 128 A100: HFU / MFU %.3f (published 0.59 / 0.51 = %.3f)\n",
              some.hfu / some.mfu, 0.59 / 0.51);
  EXPECT_NEAR(some.hfu / some.mfu, 0.59 / 0.51, 0.015);
  EXPECT_NEAR(all.hfu / all.mfu, 0.67 / 0.50, 0.02);  // the 70B row's ratio, full recompute
}

// Rack-scale NVLink (issue 14): on 8 GB200 NVL72-style racks (trays of 4 B200 with 8 NICs, a
// 72-GPU NVLink domain), TP 16 spans four trays over NVLink, not the scale-out fabric.
model::Spec RackSpec(int gpus_per_node, int nodes, int domain) {
  auto s = model::ParseSpec(
      "name: nvl72\n" +
          DgxCluster(nodes, "B200-SXM-180GB",
                     fmt::format("{{type: nvlink5, bandwidth: 1800 GB/s, switched: true, "
                                 "domain: {}}}",
                                 domain),
                     gpus_per_node) +
          R"(workload:
  model: {name: llama, layers: 126, hidden: 16384, heads: 128, kv_heads: 16, ffn_hidden: 53248,
          mlp: swiglu, vocab: 128256, sequence: 8192}
  precision: fp8
  parallel: {strategy: zero1, tensor: 16, pipeline: 4, sequence_parallel: true}
  batch: {micro: 1, global: 576}
  software: {stack: nemo-2025}
)",
      "nvl72.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

TEST(RackScaleTest, TensorParallelAcrossTraysStaysOnNvlink) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const model::Spec trays = RackSpec(4, 144, 0), racks = RackSpec(4, 144, 72);
  auto t = model.Step(trays, LayoutOf(trays), 576);
  auto r = model.Step(racks, LayoutOf(racks), 576);
  ASSERT_TRUE(t && r);
  EXPECT_LT(r->tp_comm_s, 0.6 * t->tp_comm_s);  // 720 GB/s NVLink vs 384 GB/s of NICs per tray
  EXPECT_LT(r->step_s, t->step_s);
  // On NVLink, TP 16 across four trays costs what it costs inside one 16-GPU node.
  const model::Spec node16 = RackSpec(16, 36, 0);
  auto flat = model.Step(node16, LayoutOf(node16), 576);
  ASSERT_TRUE(flat);
  EXPECT_NEAR(r->tp_comm_s, flat->tp_comm_s, 1e-9);
  // NVL72 domains are checked (NeMo's GB200 and GB300 rows); TP 16 is not.
  EXPECT_EQ(r->regime.level, Confidence::kExtrapolated);
  EXPECT_THAT(r->regime.reasons,
              ::testing::Contains(::testing::HasSubstr("TP16 (calibrated to 8)")));
}

// Pipeline sends follow the stages' placement: a stage's ranks sit TP x CP x DP apart, so PP16
// over TP4 stages (64 GPUs) lies inside one 72-GPU NVLink domain and sends GPU to GPU over
// NVLink, where the same layout on 4-GPU trays without a rack domain crosses the NICs at every
// boundary. Once DP2 spreads the pipeline over 128 GPUs, a boundary crosses the fabric on the
// rack too, and the lockstep stages wait for it.
TEST(RackScaleTest, PipelineSendsStayOnNvlinkInsideTheDomain) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const model::Spec trays = RackSpec(4, 144, 0), racks = RackSpec(4, 144, 72);
  Layout l = LayoutOf(racks);
  l.tp = 4;
  l.pp = 16;
  l.dp = 1;
  auto on_trays = model.Step(trays, l, 64);
  auto in_rack = model.Step(racks, l, 64);
  ASSERT_TRUE(on_trays && in_rack);
  EXPECT_GT(on_trays->pp_comm_s, 0);
  EXPECT_LT(in_rack->pp_comm_s, 0.3 * on_trays->pp_comm_s);  // per GPU: 720 GB/s vs 96 of NICs
  l.dp = 2;
  auto across = model.Step(racks, l, 128);
  ASSERT_TRUE(across);
  std::printf("PP16 sends per micro-batch: %.2f ms on trays, %.2f in the rack, %.2f across racks\n",
              1e3 * on_trays->pp_comm_s / on_trays->micro_batches,
              1e3 * in_rack->pp_comm_s / in_rack->micro_batches,
              1e3 * across->pp_comm_s / across->micro_batches);
  // The same sends per micro-batch, now paced by the fabric's.
  EXPECT_GT(across->pp_comm_s / across->micro_batches,
            3 * in_rack->pp_comm_s / in_rack->micro_batches);
}

// Activation offload's copies (Transformer Engine's CPU offload): n layers out while the later
// layers run forward and back while they run backward, so each direction hides behind the other
// L - 1 layers' compute. A GB200's NVLink-C2C (225 GB/s per GPU each way) hides NeMo's 40 of 80
// layers; a B200 host's PCIe Gen5 (54.8 GB/s) does not, and shows it; 5 layers hide there too.
TEST(ActivationOffloadTest, CopiesHideBehindTheOtherLayersOnC2cNotOnPcie) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const NemoRow* gb200 = nullptr;
  for (const auto& row : kNemoFp8) {
    if (std::string_view(row.name) == "GB200 Llama3 70B") gb200 = &row;
  }
  ASSERT_NE(gb200, nullptr);
  const model::Spec grace = NemoSpec(*gb200);
  EXPECT_NEAR(grace.cluster.nodes.gpu.HostLinkBytesPerS(), 225e9, 1e6);
  auto on_c2c = model.Step(grace, LayoutOf(grace), 64);
  ASSERT_TRUE(on_c2c);
  EXPECT_EQ(on_c2c->offload_s, 0);

  NemoRow hgx = *gb200;
  hgx.gpu = "B200-SXM-180GB";
  model::Spec pcie = NemoSpec(hgx);
  EXPECT_NEAR(pcie.cluster.nodes.gpu.HostLinkBytesPerS(), 54.8e9, 0.1e9);
  auto on_pcie = model.Step(pcie, LayoutOf(pcie), 64);
  ASSERT_TRUE(on_pcie);
  EXPECT_GT(on_pcie->offload_s, 0.1 * on_pcie->step_s);
  // The rest of the step as on GB200 (whose sustained peak is 3.6 % above B200's).
  EXPECT_NEAR(on_pcie->step_s - on_pcie->offload_s, on_c2c->step_s, 0.2 * on_c2c->step_s);
  EXPECT_EQ(on_pcie->regime.level, Confidence::kExtrapolated);
  pcie.workload.activation_offload = 5;
  auto few = model.Step(pcie, LayoutOf(pcie), 64);
  ASSERT_TRUE(few);
  EXPECT_EQ(few->offload_s, 0);
  EXPECT_GT(few->memory_bytes, on_pcie->memory_bytes);  // and holds more on the GPU
}

// The embedding and the loss in the pipeline split (Megatron-Core's account_for_*_in_pipeline_
// split): a middle rank holds L+2 / pp layers, the last one fewer beside the output layer and the
// loss, and the slower of the two sets the step. Without the split the model puts the largest
// stage's ceil(L/pp) layers beside the output layer, a layer more than the split's last rank.
// Compute alone: the split leaves the parameters, and so the optimizer and DP traffic, as they
// are; a model with the last rank's layer count on every stage gives that rank's compute.
double ComputeS(model::Spec spec, int layers, bool split) {
  spec.workload.model.layers = layers;
  spec.workload.pipeline_split = {split, split};
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  auto r = model.Step(spec, LayoutOf(spec), spec.TotalGpus());
  EXPECT_TRUE(r) << r.error().message;
  return r ? r->compute_s : 0;
}

// Qwen3 235B-A22B on 256 B200s (its recipe: PP8 EP8, no virtual stages).
model::Spec Qwen235bOnB200() {
  const auto row = std::find_if(std::begin(kMoe), std::end(kMoe), [](const runs::MoeRow& r) {
    return r.name == std::string_view("Qwen3 235B-A22B") &&
           r.gpu == std::string_view("B200-SXM-180GB");
  });
  EXPECT_NE(row, std::end(kMoe));
  return row != std::end(kMoe) ? MoeSpec(*row) : model::Spec{};
}

TEST(PipelineSplitTest, TheSlowerOfAMiddleRankAndTheLastSetsTheStep) {
  // Qwen3 235B on 256 B200s at PP8 (96 slots, 12 a rank): the output layer over its 151,936-token
  // vocabulary is 2.4 layers' FLOPs, so the last rank's 11 layers and the output layer outweigh a
  // middle rank's 12; it runs what 88 layers' largest stage (11) and the output layer run.
  const model::Spec moe = Qwen235bOnB200();
  ASSERT_EQ(moe.workload.pipeline, 8);
  {
    const AnalyticalStepModel m(FlopConvention::kMegatron, Eff());
    auto r = m.Step(moe, LayoutOf(moe), moe.TotalGpus());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->stage_layers, 12);
    EXPECT_EQ(r->last_stage_layers, 11);
    EXPECT_TRUE(r->LastStageSlowest());
  }
  const double moe_split = ComputeS(moe, 94, true), moe_whole = ComputeS(moe, 94, false);
  EXPECT_NEAR(moe_split / ComputeS(moe, 88, false), 1, 1e-9);
  EXPECT_LT(moe_split, moe_whole);
  std::printf("Qwen3 235B PP8 on B200: compute %.2f s with the split, %.2f s without\n", moe_split,
              moe_whole);
  // The same on Llama 3.1 405B on 256 B200s at PP8 (128 slots, 16 a rank) in FP8: the output
  // layer runs in BF16 at half the layers' rate, and the last rank's 15 layers and it outweigh
  // 16 layers. In BF16 the output layer over 128,256 tokens at hidden 16,384 weighs less than
  // the layer it displaces, and a middle rank's 16 layers set the step: more than the last
  // rank's 15 and the output layer (what 120 layers' largest stage runs), less than 16 and the
  // output layer (the model without the split).
  model::Spec dense = MlperfSpec(MlperfRowNamed("v5.1 405B UF B200 256"));
  ASSERT_EQ(dense.workload.pipeline, 8);
  const double fp8 = ComputeS(dense, 126, true);
  EXPECT_NEAR(fp8 / ComputeS(dense, 120, false), 1, 1e-9);
  EXPECT_LT(fp8, ComputeS(dense, 126, false));
  dense.workload.precision = model::Precision::kBf16;
  const double split = ComputeS(dense, 126, true), whole = ComputeS(dense, 126, false);
  EXPECT_GT(split, ComputeS(dense, 120, false) * 1.001);
  EXPECT_LT(split, whole);
  std::printf("Llama 3.1 405B PP8 on B200 in BF16: compute %.2f s with the split, %.2f s without\n",
              split, whole);
  // On H100 at TP8 (NeMo's 405B row) the last rank computes longer than a middle one, as on B200
  // in FP8, but the middle rank's sixteenth layer exposes its TP collectives too, and in all it
  // takes longer: the step charges the middle rank's compute and its 16 layers' collectives.
  {
    model::Spec h100 = NemoSpec(kNemoFp8[2]);
    ASSERT_EQ(h100.workload.model.layers, 126);
    ASSERT_TRUE(h100.workload.pipeline_split.loss);
    const AnalyticalStepModel m(FlopConvention::kMegatron, Eff());
    auto split_r = m.Step(h100, LayoutOf(h100), h100.TotalGpus());
    ASSERT_TRUE(split_r) << split_r.error().message;
    EXPECT_EQ(split_r->stage_layers, 16);  // what `sim step` reports of the ranks
    EXPECT_EQ(split_r->last_stage_layers, 15);
    EXPECT_FALSE(split_r->LastStageSlowest());
    const double last_rank = ComputeS(h100, 120, false);
    EXPECT_LT(split_r->compute_s, last_rank);
    model::Spec middle = h100;  // 128 layers, 16 a rank: the middle rank's collectives
    middle.workload.model.layers = 128;
    middle.workload.pipeline_split = {};
    auto middle_r = m.Step(middle, LayoutOf(middle), middle.TotalGpus());
    ASSERT_TRUE(middle_r) << middle_r.error().message;
    EXPECT_NEAR(split_r->tp_comm_s / middle_r->tp_comm_s, 1, 1e-9);
    // The same per layer on either rank: the last rank's 15 layers expose 15/16 of it.
    const double comm = split_r->tp_comm_s + split_r->cp_comm_s;
    EXPECT_GT(split_r->compute_s + comm, last_rank + comm * 15 / 16);
    std::printf(
        "Llama 3.1 405B PP8 on H100: compute %.2f s and TP %.2f s (the last rank computes "
        "%.2f s)\n",
        split_r->compute_s, split_r->tp_comm_s, last_rank);
  }
  // A layout the split does not divide is none Megatron-Core runs: 128 slots over 6 ranks, or 16
  // a rank over 32 virtual stages (`sim step --search` skips them).
  dense.workload.pipeline_split = {true, true};
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  for (auto [pp, v] : {std::pair{6, 1}, std::pair{8, 32}}) {
    Layout l = LayoutOf(dense);
    l.pp = pp, l.virtual_stages = v, l.tp = 4, l.cp = 1;
    auto r = model.Step(dense, l, 24 * pp);
    ASSERT_FALSE(r) << pp << " x " << v;
    EXPECT_THAT(r.error().message, testing::HasSubstr("does not divide the model"));
  }
}

// Megatron-Core runs the interleaved schedule only with at least a pipeline's worth of
// micro-batches a step (the spec refuses it; so does the step model, which the search asks
// about layouts the spec never stated): UF's 405B on 256 B200s at PP8 VP8 over DP4, with 7 and
// with 8 micro-batches a step.
TEST(PipelineSplitTest, InterleavingNeedsAPipelinesWorthOfMicroBatches) {
  model::Spec spec = MlperfSpec(MlperfRowNamed("v5.1 405B UF B200 256"));
  const Layout layout = LayoutOf(spec);
  ASSERT_EQ(layout.pp, 8);
  ASSERT_EQ(layout.virtual_stages, 8);
  const AnalyticalStepModel m(FlopConvention::kMegatron, Eff());
  const int per_micro_batch =
      spec.TotalGpus() / (layout.tp * layout.pp * layout.cp) * layout.micro_batch;
  spec.workload.global_batch = 7 * per_micro_batch;
  auto refused = m.Step(spec, layout, spec.TotalGpus());
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, ::testing::HasSubstr("v8 needs at least PP8 micro-batches"));
  Layout plain = layout;
  plain.virtual_stages = 1;
  EXPECT_TRUE(m.Step(spec, plain, spec.TotalGpus()));
  spec.workload.global_batch = 8 * per_micro_batch;
  EXPECT_TRUE(m.Step(spec, layout, spec.TotalGpus()));
}

// Plain 1F1B exchanges each micro-batch's activation and gradient with blocking send/recv
// pairs (Megatron-Core's schedule without interleaving; Megatron Bridge's batch_p2p_comm), so
// its steady-state sends are exposed whole; the interleaved schedule overlaps them with the
// next chunk but for pp_p2p_exposed (software.pp_comm_overlap, off on megatron-2021). Qwen3 235B on
// 256 B200s at PP8 (its recipe: no virtual stages; 12 slots a rank, so 2 chunks fit), untied
// embeddings: the exposed pipeline time is (2 m + 2 (p - 1)) sends at v1, (2 m v 0.1 + 2 (p - 1))
// at v2.
TEST(PipelineSplitTest, PlainOneFOneBSendsBlockAndInterleavedOnesOverlap) {
  const model::Spec spec = Qwen235bOnB200();
  ASSERT_FALSE(spec.workload.model.tied_embeddings);
  const Layout plain = LayoutOf(spec);
  ASSERT_EQ(plain.virtual_stages, 1);
  const AnalyticalStepModel m(FlopConvention::kMegatron, Eff());
  auto one = m.Step(spec, plain, spec.TotalGpus());
  ASSERT_TRUE(one) << one.error().message;
  const double mbs = one->micro_batches, p = plain.pp;
  const double send = one->pp_comm_s / (2 * mbs + 2 * (p - 1));
  Layout interleaved = plain;
  interleaved.virtual_stages = 2;
  auto two = m.Step(spec, interleaved, spec.TotalGpus());
  ASSERT_TRUE(two) << two.error().message;
  EXPECT_NEAR(two->pp_comm_s, send * (2 * mbs * 2 * Efficiency{}.pp_p2p_exposed + 2 * (p - 1)),
              1e-9);
  EXPECT_GT(one->pp_comm_s, 4 * two->pp_comm_s);
  // Megatron-LM's 2021-22 interleaved schedule waited for its sends (megatron-2021's
  // pp_comm_overlap: false): twice as many as 1F1B's, all exposed.
  model::Spec blocking = spec;
  blocking.workload.pp_comm_overlap = false;
  auto waited = m.Step(blocking, interleaved, spec.TotalGpus());
  ASSERT_TRUE(waited) << waited.error().message;
  EXPECT_NEAR(waited->pp_comm_s, send * (2 * mbs * 2 + 2 * (p - 1)), 1e-9);
  std::printf("PP8 sends exposed a step: %.3f s in 1F1B, %.3f s interleaved (%.0f micro-batches)\n",
              one->pp_comm_s, two->pp_comm_s, mbs);
}

}  // namespace
}  // namespace gpufleet::sim
