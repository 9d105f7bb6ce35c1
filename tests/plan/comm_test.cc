#include "plan/comm.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "plan/memory.h"
#include "plan/step_model.h"
#include "test_util.h"

namespace gpufleet::plan {
namespace {

NetworkModel TestNet() {
  NetworkModel n;
  n.gpus_per_node = 8;
  n.intra_busbw_bytes_per_s = 240e9;
  n.inter_busbw_bytes_per_s = 188e9;
  n.intra_alpha_s = 2.5e-6;
  n.inter_alpha_s = 4e-6;
  n.launch_s = 8e-6;
  return n;
}

// C(n, r) for the worked cases below.
double C(int n, int r) {
  double c = 1;
  for (int i = 0; i < r; ++i) c = c * (n - i) / (i + 1);
  return c;
}

// HybridEP inside one node sends a token once to each other rank holding any of its experts:
// what it sends is 7 x that probability of a token, by the routing (uniform, or limited to
// group_top_k of the groups), and NCCL's all-to-all sends 7 of 8 copies.
TEST(CommTest, ExpertAllToAllSendsWhatTheRoutingReaches) {
  NetworkModel net = TestNet();
  net.intra_efficiency = 0.8;
  auto share = [&](int experts, int top_k, int groups, int group_top_k) {
    model::Moe moe;
    moe.experts = experts;
    moe.top_k = top_k;
    moe.groups = groups;
    moe.group_top_k = group_top_k;
    return ExpertAllToAll(net, moe, true, 1.0, 8, 8).sent_bytes / 7;
  };
  // Uniform: 16 experts a rank of 128, top 8.
  EXPECT_NEAR(share(128, 8, 1, 1), 1 - C(112, 8) / C(128, 8), 1e-12);
  // A rank is one group of 4 (32 experts in 8 groups), 4 groups picked: reached when its group
  // is, half the time (a picked group holds some of the token's experts: Megatron picks groups
  // by their best experts).
  EXPECT_NEAR(share(32, 8, 8, 4), 0.5, 1e-12);
  // A rank inside a group (64 experts in 4 groups of 16, 2 picked, top 4): the 2 a picked group
  // holds miss the rank's 8 of its 16 with C(8, 2) / C(16, 2).
  EXPECT_NEAR(share(64, 4, 4, 2), 1 - (0.5 + 0.5 * C(8, 2) / C(16, 2)), 1e-12);
  // A rank of two groups (64 in 16 groups of 4, 4 picked, top 8): missed when neither is.
  EXPECT_NEAR(share(64, 8, 16, 4), 1 - C(14, 4) / C(16, 4), 1e-12);
  // A rank of a group and a half (48 experts in 12 groups of 4, EP8: 6 a rank): halfway between
  // one group's miss and two groups'.
  EXPECT_NEAR(share(48, 8, 12, 4), 1 - (0.5 * C(11, 4) / C(12, 4) + 0.5 * C(10, 4) / C(12, 4)),
              1e-12);
  // Every group picked is no limit.
  EXPECT_NEAR(share(64, 8, 16, 16), 1 - C(56, 8) / C(64, 8), 1e-12);
  // The all-to-all: 7 of 8 copies of a token's 8.
  model::Moe moe;
  moe.experts = 128;
  moe.top_k = 8;
  EXPECT_NEAR(ExpertAllToAll(net, moe, false, 1.0, 8, 8).sent_bytes, 7, 1e-12);
}

TEST(CommTest, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllReduce, 8), 1.75);   // 2(n-1)/n
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllGather, 8), 0.875);  // (n-1)/n
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kReduceScatter, 32), 31.0 / 32);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllReduce, 1), 0);
  EXPECT_DOUBLE_EQ(RingBytesSentPerRank(Collective::kAllReduce, 1e9, 4), 1.5e9);
}

TEST(CommTest, RingAllReduceInsideANodeWorkedByHand) {
  // 8 + 2 x 7 x 2.5 = 43 us latency; 1.75 x 1 GiB / 240 GB/s = 7.829 ms.
  const double bytes = 1073741824.0;
  const double t = CollectiveTime(TestNet(), Collective::kAllReduce, Algorithm::kRing, bytes, 8, 1);
  EXPECT_NEAR(t, 43e-6 + 1.75 * bytes / 240e9, 1e-12);
  // All-gather: 7 steps and (n-1)/n.
  const double ag =
      CollectiveTime(TestNet(), Collective::kAllGather, Algorithm::kRing, bytes, 8, 1);
  EXPECT_NEAR(ag, 8e-6 + 7 * 2.5e-6 + 0.875 * bytes / 240e9, 1e-12);
}

TEST(CommTest, RingAcrossNodesIsLimitedByTheSlowerLevel) {
  // 4 nodes x 8: 62 steps x 4 us + 8 us; bandwidth min(240, 188) = 188 GB/s.
  const double bytes = 1e9;
  const double t = CollectiveTime(TestNet(), Collective::kAllReduce, Algorithm::kRing, bytes, 8, 4);
  EXPECT_NEAR(t, 8e-6 + 62 * 4e-6 + (2 * 31.0 / 32) * bytes / 188e9, 1e-12);
  // Half the node's fabric bandwidth when two groups share it.
  const double shared =
      CollectiveTime(TestNet(), Collective::kAllReduce, Algorithm::kRing, bytes, 4, 4, 0.5);
  EXPECT_NEAR(shared, 8e-6 + 30 * 4e-6 + (2 * 15.0 / 16) * bytes / 94e9, 1e-12);
}

TEST(CommTest, TreeHasLogarithmicLatency) {
  // 4 nodes x 8: 2 (log2(4) x 4 + 7 x 2.5) = 51 us + 8 us launch; 2 S / 188 GB/s.
  const double t = CollectiveTime(TestNet(), Collective::kAllReduce, Algorithm::kTree, 8, 8, 4);
  EXPECT_NEAR(t, 59e-6 + 2 * 8 / 188e9, 1e-12);
  CollectiveEstimate e = EstimateCollective(TestNet(), Collective::kAllReduce, 8, 8, 4);
  EXPECT_EQ(e.best, Algorithm::kTree);  // small message: latency wins
  CollectiveEstimate big = EstimateCollective(TestNet(), Collective::kAllReduce, 16e9, 8, 4);
  EXPECT_EQ(big.best, Algorithm::kRing);  // large message: 2(n-1)/n < 2
  // 3 nodes: one level across them, as NCCL's tuning model counts a tree's depth (log2i, the
  // floor); the ceiling gave two.
  EXPECT_NEAR(CollectiveTime(TestNet(), Collective::kAllReduce, Algorithm::kTree, 8, 8, 3),
              8e-6 + 2 * (1 * 4e-6 + 7 * 2.5e-6) + 2 * 8 / 188e9, 1e-12);
}

// A traffic row's kind and the group it runs over.
void ExpectGroup(const Traffic& t, const char* kind, int size, int nodes) {
  EXPECT_EQ(t.kind, kind);
  EXPECT_EQ(t.group_size, size);
  EXPECT_EQ(t.group_nodes, nodes);
}

TEST(CommTest, ReferenceFsdpTrafficWorkedByHand) {
  // FSDP per micro-batch: all-gather x2 + reduce-scatter of the 2 B x 13.0B gradient/param
  // buffer over 32 ranks; each sends 31/32 of it per collective; 8 micro-batches.
  model::Spec s = testing::Reference();
  ComputePlan c = PlanCompute(s);
  CommPlan p = PlanComm(s, c);
  ASSERT_EQ(p.step.traffic.size(), 1u);
  const Traffic& dp = p.step.traffic[0];
  ExpectGroup(dp, "data-parallel", 32, 4);
  const double buffer = 2 * 13015864320.0;
  EXPECT_DOUBLE_EQ(dp.bytes_per_call, buffer);
  EXPECT_NEAR(dp.sent_bytes_per_gpu, 3 * 8 * 31.0 / 32 * buffer, 1);
  EXPECT_DOUBLE_EQ(dp.calls_per_step, 24);
  // The gathers hide behind compute: only about one layer's share is exposed.
  EXPECT_LT(dp.exposed_s, 0.01 * p.step.step_s);
  EXPECT_NEAR(p.step.step_s, c.compute_step_s + dp.exposed_s, 1e-9);
}

// ZeRO-2: Megatron's and DeepSpeed's reduce-scatter every micro-batch and gather once a step;
// PyTorch FSDP's SHARD_GRAD_OP gathers again in every micro-batch's forward.
TEST(CommTest, Zero2TrafficFollowsTheFramework) {
  model::Spec s = testing::Reference();
  s.workload.strategy = model::Strategy::kZero2;
  auto calls = [&](model::ShardingImpl impl) {
    s.workload.sharding_impl = impl;
    CommPlan p = PlanComm(s, PlanCompute(s));
    EXPECT_FALSE(p.step.traffic.empty());
    return p.step.traffic.empty() ? 0.0 : p.step.traffic[0].calls_per_step;
  };
  EXPECT_DOUBLE_EQ(calls(model::ShardingImpl::kDeepSpeed), 8 + 1);  // 8 micro-batches
  EXPECT_DOUBLE_EQ(calls(model::ShardingImpl::kFsdp1), 2 * 8);
  EXPECT_DOUBLE_EQ(calls(model::ShardingImpl::kFsdp2), 2 * 8);
  // With pipeline stages SHARD_GRAD_OP keeps the stage gathered and syncs on the last
  // micro-batch: one gather and one reduce-scatter a step, as the step model runs it.
  s.workload.pipeline = 2;
  EXPECT_DOUBLE_EQ(calls(model::ShardingImpl::kFsdp2), 2);
  EXPECT_DOUBLE_EQ(calls(model::ShardingImpl::kDeepSpeed), 8 + 1);
}

// Context-parallel ranks hold the same weights: the data-parallel traffic runs over DP x CP
// ranks, t apart (Megatron's order: tensor, context, data). The reference's 32 GPUs as CP2 x
// DP16: a group of 32 on 4 nodes, as the FSDP32 reference; CP2 x DP16 with TP2, 16 ranks two
// apart, four on a node.
TEST(CommTest, DataParallelTrafficRunsOverContextParallelRanksToo) {
  model::Spec s = testing::Reference();
  s.workload.context = 2;
  CommPlan p = PlanComm(s, PlanCompute(s));
  ASSERT_FALSE(p.step.traffic.empty());
  EXPECT_EQ(p.step.traffic[0].kind, "data-parallel");
  EXPECT_EQ(p.step.traffic[0].group_size, 32);
  EXPECT_EQ(p.step.traffic[0].group_nodes, 4);
  s.workload.tensor = 2;
  p = PlanComm(s, PlanCompute(s));
  ASSERT_FALSE(p.step.traffic.empty());
  EXPECT_EQ(p.step.traffic[0].group_size, 16);
  EXPECT_EQ(p.step.traffic[0].group_nodes, 4);
}

// Context parallelism's K/V exchange has its own row: per layer and micro-batch K and V of the
// whole sequence (over TP, bf16) around the ring forward, K and V again and their gradients
// backward, and K and V once more where full recompute re-runs the attention. The reference at TP2
// CP2 puts the CP ranks 2 apart inside a node; at CP4 over TP8 they span 4 nodes, one rank a node.
// Ring attention exposes at least one step of cp. (Before, the row was missing and a finding said
// so.)
TEST(CommTest, ContextParallelKvExchangeHasItsOwnRow) {
  model::Spec s = testing::Reference();
  s.workload.tensor = 2;
  s.workload.context = 2;
  s.workload.recompute = model::Recompute::kNone;
  auto cp_row = [](const CommPlan& p) {
    const auto it = std::find_if(p.step.traffic.begin(), p.step.traffic.end(),
                                 [](const Traffic& t) { return t.kind == "context-parallel"; });
    EXPECT_NE(it, p.step.traffic.end());
    return it == p.step.traffic.end() ? Traffic{} : *it;
  };
  const model::ModelShape& m = s.workload.model;
  const Traffic inside = cp_row(PlanComm(s, PlanCompute(s)));
  EXPECT_EQ(inside.group_size, 2);
  EXPECT_EQ(inside.group_nodes, 1);
  EXPECT_DOUBLE_EQ(inside.bytes_per_call,
                   2.0 * s.workload.micro_batch * m.sequence * m.KvWidth() * 2 / 2);
  EXPECT_DOUBLE_EQ(inside.calls_per_step, 3.0 * m.layers * s.workload.accumulation);
  // The attention's share of the compute at the stated MFU hides it, but for one ring step.
  const ComputePlan c = PlanCompute(s);
  EXPECT_NEAR(inside.overlappable_s,
              s.workload.accumulation * c.micro_batch_s * 3 * c.per_token.attention_forward /
                  c.per_token.hardware,
              1e-12);
  EXPECT_DOUBLE_EQ(inside.exposed_s,
                   std::max(inside.time_s / 2, inside.time_s - inside.overlappable_s));

  s.workload.recompute = model::Recompute::kFull;
  EXPECT_DOUBLE_EQ(cp_row(PlanComm(s, PlanCompute(s))).calls_per_step,
                   4.0 * m.layers * s.workload.accumulation);
  s.workload.tensor = 8;
  s.workload.context = 4;
  const Traffic across = cp_row(PlanComm(s, PlanCompute(s)));
  EXPECT_EQ(across.group_nodes, 4);
  EXPECT_GT(across.time_s / across.calls_per_step, inside.time_s / inside.calls_per_step / 4);

  s.workload.context = 1;
  const CommPlan none = PlanComm(s, PlanCompute(s));
  EXPECT_TRUE(std::none_of(none.step.traffic.begin(), none.step.traffic.end(),
                           [](const Traffic& t) { return t.kind == "context-parallel"; }));
}

// The gradient collectives move the gradients in the stack's reduction dtype, as the step model
// does (software.grad_reduce); the parameter gathers stay in bf16. The reference's FSDP moves two
// gathers and a reduce-scatter a micro-batch: 2 + 2 + 2 bytes a parameter in bf16, 2 + 2 + 4 in
// fp32. The table once moved bf16 gradients whatever the stack reduced in.
TEST(CommTest, GradientCollectivesMoveTheReductionDtype) {
  model::Spec s = testing::Reference();
  ASSERT_EQ(s.workload.grad_reduce_bytes, 2);
  const CommPlan bf16 = PlanComm(s, PlanCompute(s));
  s.workload.grad_reduce_bytes = 4;
  const CommPlan fp32 = PlanComm(s, PlanCompute(s));
  ASSERT_FALSE(bf16.step.traffic.empty() || fp32.step.traffic.empty());
  const Traffic &b = bf16.step.traffic[0], &f = fp32.step.traffic[0];
  EXPECT_DOUBLE_EQ(f.bytes_per_call, 2 * b.bytes_per_call);
  EXPECT_NEAR(f.sent_bytes_per_gpu / b.sent_bytes_per_gpu, 8.0 / 6.0, 1e-9);
  // The hybrid layout's all-reduce across the replicas is of gradients alone.
  s.workload.shard = 8;
  const CommPlan hybrid = PlanComm(s, PlanCompute(s));
  ASSERT_EQ(hybrid.step.traffic.size(), 2u);
  EXPECT_DOUBLE_EQ(hybrid.step.traffic[1].bytes_per_call, 4 * 13015864320.0 / 8);
}

// The first pipeline rank's backward ends last, so its gradients set the step's tail: Llama 3 8B
// at PP8 holds 1.40 B parameters there (4 layers and the 0.53 B embedding) where an even share of
// the model is 1.00 B. The plan's traffic table reduces them and the step model's optimizer
// steps them (both took the even share before).
TEST(CommTest, TheFirstPipelineRanksGradientsSetTheDataParallelTail) {
  model::Spec s = testing::Reference();
  s.workload.model = testing::Llama3_8bShape();
  s.workload.strategy = model::Strategy::kDdp;
  s.workload.tensor = 1;
  s.workload.pipeline = 8;
  s.workload.sequence_parallel = false;
  const ParamCounts pc = CountParams(s.workload.model);
  const double first = 4 * pc.per_layer + pc.embedding;
  ASSERT_GT(first, 1.35 * pc.total / 8);
  const CommPlan c = PlanComm(s, PlanCompute(s));
  ASSERT_FALSE(c.step.traffic.empty());
  EXPECT_DOUBLE_EQ(c.step.traffic[0].bytes_per_call, 2 * first);  // one bf16 all-reduce
  auto r = AnalyticalStepModel().Step(s, LayoutOf(s), s.TotalGpus());
  ASSERT_TRUE(r) << r.error().message;
  const double bw = s.cluster.nodes.gpu.StreamingBytesPerS();
  EXPECT_NEAR(r->optimizer_s / (first * 32 / bw), 1, 1e-12);  // DDP: every parameter stepped
}

// An oversubscribed leaf gives a node 1/o of its bandwidth across leaves. Rail-optimised, a
// rail's QM9700 leaf (64 ports, 48 down at 3:1) takes that port of 48 nodes, and NCCL's rings
// stay on the rails: 16 nodes keep their whole bandwidth, 64 do not. Without rails a leaf holds 6
// eight-port nodes, and 16 nodes already cross leaves. (Oversubscription once applied to rails
// the same.)
TEST(CommTest, RailsKeepTheirTrafficInTheLeafWhileTheNodesFit) {
  model::Spec s = testing::Example("h100-1024gpu.yaml");
  s.cluster.compute_fabric.oversubscription = 3;
  auto node_bw = [&](int nodes, bool rails) {
    s.cluster.nodes.count = nodes;
    s.cluster.compute_fabric.rail_optimized = rails;
    return BuildNetworkModel(s.cluster).inter_busbw_bytes_per_s;
  };
  const double full = node_bw(16, true);
  EXPECT_NEAR(node_bw(16, false), full / 3, 1);
  EXPECT_NEAR(node_bw(64, true), full / 3, 1);
  s.cluster.compute_fabric.oversubscription = 1;
  EXPECT_NEAR(node_bw(64, true), full, 1);
}

// Hybrid sharding: FSDP's gathers and reduce-scatters stay in each node's shard group of 8, on
// NVLink, and the fabric carries the all-reduce of each group's 1/8 of the gradients across the
// 4 replicas, once per micro-batch.
TEST(CommTest, HybridShardingKeepsTheGathersInTheShardGroup) {
  model::Spec s = testing::Reference();
  s.workload.shard = 8;
  CommPlan p = PlanComm(s, PlanCompute(s));
  ASSERT_EQ(p.step.traffic.size(), 2u);
  const Traffic& group = p.step.traffic[0];
  ExpectGroup(group, "data-parallel", 8, 1);
  const double buffer = 2 * 13015864320.0;
  EXPECT_NEAR(group.sent_bytes_per_gpu, 3 * 8 * 7.0 / 8 * buffer, 1);
  const Traffic& replicas = p.step.traffic[1];
  ExpectGroup(replicas, "data-parallel replicas", 4, 4);
  EXPECT_DOUBLE_EQ(replicas.bytes_per_call, buffer / 8);
  EXPECT_DOUBLE_EQ(replicas.calls_per_step, 8);
  EXPECT_NEAR(replicas.sent_bytes_per_gpu, 8 * 2 * 3.0 / 4 * buffer / 8, 1);
  // Each node's NICs carry its 8 GPUs' all-reduces: 8 x 2 x 3/4 x 1/8 of the buffer per
  // micro-batch, about half of what one ring of FSDP over all 32 ranks moves through them
  // (3 x 31/32 of it).
  s.workload.shard = 0;
  const CommPlan full = PlanComm(s, PlanCompute(s));
  ASSERT_EQ(full.step.traffic.size(), 1u);
  EXPECT_NEAR(8 * replicas.sent_bytes_per_gpu / full.step.traffic[0].sent_bytes_per_gpu,
              12.0 / (24 * 31.0 / 32), 1e-9);
}

TEST(CommTest, ScalingStartsAtOneNodeAndNeverExceedsIt) {
  model::Spec s = testing::Reference();
  CommPlan p = PlanComm(s, PlanCompute(s));
  ASSERT_EQ(p.scaling.size(), 3u);  // 1, 2, 4 nodes
  EXPECT_EQ(p.scaling.front().nodes, 1);
  EXPECT_EQ(p.scaling.back().gpus, 32);
  EXPECT_DOUBLE_EQ(p.scaling.front().efficiency, 1.0);
  // The step model's points (as sim step --sweep): the sharded optimizer step shrinks as DP
  // grows, so weak scaling can gain a hair; never more.
  for (const auto& pt : p.scaling) EXPECT_LE(pt.efficiency, 1.001);
}

TEST(CommTest, TensorAndPipelineTrafficAppearWhenUsed) {
  model::Spec s = testing::Example("h100-1024gpu.yaml");
  CommPlan p = PlanComm(s, PlanCompute(s));
  ASSERT_EQ(p.step.traffic.size(), 3u);
  const Traffic& tp = p.step.traffic[1];
  EXPECT_EQ(tp.kind, "tensor-parallel");
  EXPECT_EQ(tp.group_nodes, 1);  // TP 8 stays on NVLink
  // 4 all-reduces x 40 layers per stage x 16 micro-batches of b s h x 2 B.
  EXPECT_DOUBLE_EQ(tp.calls_per_step, 4 * 40 * 16);
  EXPECT_DOUBLE_EQ(tp.bytes_per_call, 2.0 * 1 * 4096 * 8192);
  // Bubble (p-1)/(v m) = 1 / (5 x 16) of the compute time.
  EXPECT_NEAR(p.step.bubble_s, p.step.compute_s / 80, 1e-9);
}

// A stage's ranks sit TP x CP x DP apart (Megatron's order), so a pipeline spans the whole job:
// the reference's 32 GPUs as TP2 PP8 DP2 put stages 4 ranks apart, two to a node, and the
// boundaries between nodes set the pace of the lockstep sends (a stride under the node's 8 was
// read as "the pipeline inside a node" before).
TEST(CommTest, PipelineSendsCrossTheFabricWhenTheStagesSpanNodes) {
  model::Spec s = testing::Reference();
  s.workload.strategy = model::Strategy::kZero1;
  s.workload.tensor = 2;
  s.workload.pipeline = 8;
  const CommPlan p = PlanComm(s, PlanCompute(s));
  const auto pp = std::find_if(p.step.traffic.begin(), p.step.traffic.end(),
                               [](const Traffic& t) { return t.kind == "pipeline-parallel"; });
  ASSERT_NE(pp, p.step.traffic.end());
  EXPECT_EQ(pp->group_size, 8);
  EXPECT_EQ(pp->group_nodes, 4);
  // Each send at the fabric's per-GPU share: b s h / t bytes over a node's NICs shared by 8.
  const NetworkModel& net = p.network;
  EXPECT_NEAR(pp->time_s / pp->calls_per_step,
              net.inter_alpha_s + pp->bytes_per_call / (net.inter_busbw_bytes_per_s / 8), 1e-12);
}

TEST(CommTest, BusBandwidthTableApproachesTheLinkLimit) {
  model::Spec s = testing::Reference();
  CommPlan p = PlanComm(s, PlanCompute(s));
  ASSERT_EQ(p.busbw_node.size(), 32u);  // 8 B .. 16 GiB
  EXPECT_DOUBLE_EQ(p.busbw_node.front().bytes, 8);
  EXPECT_DOUBLE_EQ(p.busbw_node.back().bytes, 16.0 * 1024 * 1024 * 1024);
  for (size_t i = 1; i < p.busbw_cluster.size(); ++i) {
    EXPECT_GE(p.busbw_cluster[i].busbw_bytes_per_s, p.busbw_cluster[i - 1].busbw_bytes_per_s);
  }
  EXPECT_NEAR(p.busbw_node.back().busbw_bytes_per_s, 240e9, 0.01 * 240e9);
  EXPECT_NEAR(p.busbw_cluster.back().busbw_bytes_per_s, 188e9, 0.01 * 188e9);
  EXPECT_LT(p.allreduce_4mib_s, 0.030);
}

}  // namespace
}  // namespace gpufleet::plan
