// The software stack's words (issue 13): each moves the step the way its mechanism does, and
// each preset sets its words.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

#include "model/spec.h"
#include "plan/comm.h"
#include "plan/compute.h"
#include "plan/memory.h"
#include "published_runs.h"
#include "sim/step.h"

namespace gpufleet::sim {
namespace {

using runs::AttentionSeconds;
using runs::ComputeSeconds;
using runs::DgxCluster;
using runs::Eff;
using runs::FoundryRow;
using runs::FoundrySpec;
using runs::kFoundry;
using runs::kMlperf;
using runs::kNemoFp8;
using runs::kTitan;
using runs::MlperfSpec;
using runs::NemoRow;
using runs::NemoSpec;
using runs::TitanSpec;

// Each software-stack word moves the step the way its mechanism does (issue 13): without flash
// attention the whole square and the scores' HBM traffic; without TP overlap every TP
// collective exposed (with it one chunk of tp); without DP overlap every DP collective, and
// nothing left beside the compute to slow it; fp32 gradient reduction twice the reduce-scatter
// bytes.
TEST(SoftwareStackTest, EachWordSlowsTheStepItsWay) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const model::Spec base = NemoSpec(kNemoFp8[1]);  // 70B, TP4 PP8, 64 H100
  auto step = [&](const model::Spec& s) {
    auto r = model.Step(s, LayoutOf(s), 64);
    EXPECT_TRUE(r);
    return *r;
  };
  const StepBreakdown b = step(base);
  model::Spec s = base;
  s.workload.flash_attention = false;
  const StepBreakdown unfused = step(s);
  EXPECT_GT(unfused.compute_s, b.compute_s * 1.05);
  // Without TP overlap Transformer Engine still hides the column-parallel layers' dgrad
  // reduce-scatters behind their wgrad GEMMs (module/linear.py, async_op=True): three of the
  // four all-reduces' worth exposed, where a stack without Transformer Engine exposes all four;
  // what it hides slows the GEMMs beside it (overlap_slowdown). Without sequence parallelism
  // those are all-reduces: up to two of the four hidden, each up to its own wgrad GEMM (QKV's,
  // on a GQA model, is shorter than its all-reduce).
  s = base;
  s.workload.tp_comm_overlap = false;
  const StepBreakdown te = step(s);
  EXPECT_NEAR(te.tp_comm_s, 0.75 * b.tp_comm_s * b.layout.tp, 1e-9);
  EXPECT_NEAR(te.contention_s - b.contention_s, 0.189 * 0.25 * b.tp_comm_s * b.layout.tp, 1e-9);
  s.workload.sequence_parallel = false;
  const double no_sp = step(s).tp_comm_s / (b.tp_comm_s * b.layout.tp);
  EXPECT_GT(no_sp, 0.5);
  EXPECT_LT(no_sp, 0.7);
  s = base;
  s.workload.tp_comm_overlap = false;
  s.workload.stack = "megatron-2021";
  EXPECT_NEAR(step(s).tp_comm_s, b.tp_comm_s * b.layout.tp, 1e-9);
  // A thin model (hidden 2,048) with TP16 across 8-GPU nodes on 25 Gb/s Ethernet: the layer's
  // GEMMs cannot cover its collectives, so more than one chunk in tp is exposed, never more
  // than all of it.
  auto across = [&](bool overlap) {
    auto a = model::ParseSpec(
        "name: thin\n" +
            DgxCluster(2, "H100-SXM5-80GB", "{type: nvlink4, bandwidth: 900 GB/s, switched: true}",
                       8, "ConnectX-7", "25 Gb/s") +
            fmt::format(R"(workload:
  model: {{name: gpt, layers: 24, hidden: 2048, heads: 16, vocab: 131072, sequence: 4096}}
  parallel: {{strategy: zero1, tensor: 16, sequence_parallel: true}}
  batch: {{micro: 1, accumulation: 4}}
  software: {{tp_comm_overlap: {}}}
)",
                        overlap),
        "thin.yaml");
    EXPECT_TRUE(a) << a.error().message;
    auto r = model.Step(*a, LayoutOf(*a), 16);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->tp_comm_s : 0.0;
  };
  const double overlapped = across(true), exposed = across(false);
  EXPECT_GT(overlapped, exposed / 16 * 1.5);
  EXPECT_LE(overlapped, exposed);
  s = base;
  s.workload.dp_comm_overlap = false;
  const StepBreakdown no_dp = step(s);
  EXPECT_NEAR(no_dp.dp_comm_s, no_dp.dp_comm_total_s, 1e-9);
  // What DP overlap hides slows the compute beside it by `overlap_slowdown`; without it the
  // pipeline's hidden sends are all that is left beside the compute, and with every send
  // exposed nothing is.
  EXPECT_NEAR(b.contention_s - no_dp.contention_s, 0.189 * (b.dp_comm_total_s - b.dp_comm_s),
              1e-12);
  EXPECT_GT(no_dp.contention_s, 0);
  EXPECT_GT(no_dp.step_s, b.step_s);
  {
    Efficiency all_exposed = Eff();
    all_exposed.pp_p2p_exposed = 1;
    auto r = AnalyticalStepModel(FlopConvention::kMegatron, all_exposed)
                 .Step(s, LayoutOf(s), 64);  // s: no DP overlap
    ASSERT_TRUE(r);
    EXPECT_EQ(r->contention_s, 0);
  }
  s = base;
  s.workload.grad_reduce_bytes = 4;
  EXPECT_GT(step(s).dp_comm_total_s, b.dp_comm_total_s);
  // Context parallelism's K/V ring overlaps attention whatever the TP word says (PyTorch's ring
  // attention sends the next K/V before it computes; torchtitan's T2 ran without AsyncTP).
  auto cp = [&](bool tp_overlap) {
    model::Spec c = TitanSpec(kTitan[1]);  // 8B FSDP4 CP2
    c.workload.tp_comm_overlap = tp_overlap;
    auto r = model.Step(c, LayoutOf(c), 8);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->cp_comm_s : 0.0;
  };
  EXPECT_GT(cp(false), 0);
  EXPECT_EQ(cp(false), cp(true));
}

// Recomputation re-runs each part of the forward at that part's own rate: a slower attention
// kernel makes the recomputed forward slower by a third of what it adds to the whole
// forward+backward (before issue 13's last change all of it ran at the GEMM rate, so the
// kernel did not move it). torchtitan's 8B at 32K tokens per GPU, where attention is large.
TEST(SoftwareStackTest, RecomputeRunsAttentionAtAttentionsRate) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  auto step = [&](model::AttentionKernel kernel, model::Recompute recompute) {
    model::Spec s = TitanSpec(kTitan[0]);
    s.workload.attention_kernel = kernel;
    s.workload.recompute = recompute;
    auto r = model.Step(s, LayoutOf(s), kTitan[0].gpus);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : StepBreakdown{};
  };
  using model::AttentionKernel;
  using model::Recompute;
  const StepBreakdown native = step(AttentionKernel::kNative, Recompute::kNone);
  const StepBreakdown slow = step(AttentionKernel::kMmaSync, Recompute::kNone);
  const double attention_added = slow.compute_s - native.compute_s;
  ASSERT_GT(attention_added, 0.1 * native.compute_s);
  for (Recompute r : {Recompute::kFull, Recompute::kSelective}) {
    const double rec_native = step(AttentionKernel::kNative, r).recompute_s;
    const double rec_slow = step(AttentionKernel::kMmaSync, r).recompute_s;
    EXPECT_NEAR(rec_slow - rec_native, attention_added / 3, 1e-9 * attention_added);
  }
  // Selective recompute re-runs attention's forward only: with flash attention, a third of it.
  const StepBreakdown sel = step(AttentionKernel::kNative, Recompute::kSelective);
  EXPECT_LT(sel.recompute_s, step(AttentionKernel::kNative, Recompute::kFull).recompute_s);
}

// Attention kernels written for Ampere's mma.sync run on Hopper at that instruction's share of
// the peak, and on Ampere as they always did; the 2022 Triton kernel (LLM Foundry v0.3's) runs
// at its own rate measured on A100, times what FlashAttention and FlashAttention-2 gained from
// A100 to H100 in one benchmark (1.674x) on Hopper.
TEST(SoftwareStackTest, MmaSyncAttentionSlowsHopperOnly) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  auto find = [](std::string_view gpu) {
    for (const FoundryRow& r : kFoundry) {
      if (std::string_view(r.name) == "7b" && r.gpus == 8 && std::string_view(r.gpu) == gpu)
        return r;
    }
    ADD_FAILURE() << "no 7b row on 8 " << gpu;
    return kFoundry[0];
  };
  for (const FoundryRow& row : {find("H100-SXM5-80GB"), find("A100-SXM4-80GB")}) {  // mb 6
    model::Spec spec = FoundrySpec(row);
    // The composer-2023 preset.
    ASSERT_EQ(spec.workload.attention_kernel, model::AttentionKernel::kTriton2022);
    auto triton = model.Step(spec, LayoutOf(spec), row.gpus);
    spec.workload.attention_kernel = model::AttentionKernel::kMmaSync;
    auto legacy = model.Step(spec, LayoutOf(spec), row.gpus);
    spec.workload.attention_kernel = model::AttentionKernel::kNative;
    auto native = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(triton && legacy && native);
    const double slower = legacy->compute_s / native->compute_s;
    // What each kernel adds to the native kernel's attention time: mma.sync 1/share - 1, the
    // Triton kernel attention/(0.263 gain) - 1, where the gain is 1.674 x 312 / 989.4 of the
    // peaks on Hopper and 1 on Ampere.
    const double triton_extra = triton->compute_s - native->compute_s;
    const double legacy_extra = legacy->compute_s - native->compute_s;
    const double triton_factor = Eff().attention / plan::kTriton2022AttentionOfPeak;
    EXPECT_GT(triton_extra, 0) << row.gpu;
    if (std::string(row.gpu).rfind("H100", 0) == 0) {
      // Attention is ~7 % of this step's compute; at 0.65 of its rate it takes ~50 % longer.
      EXPECT_GT(slower, 1.02) << row.gpu;
      EXPECT_LT(slower, 1.08) << row.gpu;
      const double share = 0.629 / 0.964;       // Luo et al. 2024, Tables VII-VIII
      const double gain = 1.674 * 312 / 989.4;  // Dao 2023, the A100 and H100 benchmarks
      EXPECT_NEAR(triton_extra / legacy_extra, (triton_factor / gain - 1) / (1 / share - 1), 1e-9);
    } else {
      EXPECT_DOUBLE_EQ(slower, 1.0) << row.gpu;
    }
  }
}

// The sharding framework's own memory-bound work per micro-batch (issue 13): FSDP1 casts the
// unsharded gradient to fp32 (2 + 4 B), divides it in place (4 + 4) and builds it with a cat of
// its views' gradients (2 + 2): 18 B per parameter, 8 with bf16 reduction; FSDP2 copies each of
// its two gathers out (2 x 4) and casts into the reduce-scatter buffer (2 + 4): 14; DeepSpeed
// ZeRO-3 with its bf16 default: 8 + 4 + 4 + 4 = 20; Megatron's distributed optimizer nothing.
// Per micro-batch, so the 13B rows at micro-batch 2 pay it on a sixteenth of the tokens per
// parameter that the micro-batch 16 rows have.
TEST(SoftwareStackTest, ShardingCopiesFollowTheFramework) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const FoundryRow& row = kFoundry[24];  // 13b on 64 H100, micro-batch 2, FSDP, composer-2023
  ASSERT_EQ(std::string_view(row.name), "13b");
  ASSERT_EQ(row.micro_batch, 2);
  model::Spec spec = FoundrySpec(row);
  const double params = plan::CountParams(spec.workload.model).total;
  const double hbm = spec.cluster.nodes.gpu.StreamingBytesPerS();
  auto copies = [&](model::ShardingImpl impl, double reduce, model::Strategy strategy,
                    int accumulation = 1) {
    model::Spec s = spec;
    s.workload.sharding_impl = impl;
    s.workload.grad_reduce_bytes = reduce;
    s.workload.accumulation = accumulation;
    s.workload.global_batch = row.micro_batch * accumulation * row.gpus;  // DP = GPUs
    Layout l = LayoutOf(s);
    l.strategy = strategy;
    auto r = model.Step(s, l, row.gpus);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->sharding_copies_s * hbm / params : 0.0;
  };
  using model::ShardingImpl, model::Strategy;
  EXPECT_NEAR(copies(ShardingImpl::kFsdp1, 4, Strategy::kFsdp), 18, 1e-9);
  EXPECT_NEAR(copies(ShardingImpl::kFsdp1, 2, Strategy::kFsdp), 8, 1e-9);
  EXPECT_NEAR(copies(ShardingImpl::kFsdp1, 4, Strategy::kFsdp, 4), 4 * 18, 1e-9);
  EXPECT_NEAR(copies(ShardingImpl::kFsdp2, 4, Strategy::kFsdp), 14, 1e-9);
  EXPECT_NEAR(copies(ShardingImpl::kFsdp2, 4, Strategy::kZero2), 10, 1e-9);  // one gather
  EXPECT_NEAR(copies(ShardingImpl::kDeepSpeed, 2, Strategy::kZero3), 20, 1e-9);
  EXPECT_NEAR(copies(ShardingImpl::kDeepSpeed, 4, Strategy::kZero3), 34, 1e-9);
  EXPECT_EQ(copies(ShardingImpl::kMegatron, 4, Strategy::kFsdp), 0);
  EXPECT_EQ(copies(ShardingImpl::kFsdp1, 4, Strategy::kZero1), 0);  // once per step, no copies
  // It is in the step: the preset's 13B row pays 18 B per parameter per step at 3.35 TB/s.
  auto r = model.Step(spec, LayoutOf(spec), row.gpus);
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->sharding_copies_s, 18 * params / hbm, 1e-12);
  EXPECT_GT(r->sharding_copies_s / r->step_s, 0.08);  // ~70 ms of a ~0.8 s step
}

// FP8's casts beside its GEMMs (issue 13), counted from Transformer Engine 2.8's modules: per
// token and layer, the norm-fused QKV and MLP inputs (1 B each with delayed scaling, 4 with
// current), the output projections' inputs and the four output gradients at a standalone
// quantize's 4 (delayed), 6 (current) or 4.0625 (MXFP8) bytes per element. Llama 3 8B (h 4096,
// SwiGLU 14,336, 8 of 32 KV heads: QKV 6,144 wide): delayed 14 h + 12 f + 4 d, current
// 26 h + 18 f + 6 d. Element-wise work at HBM bandwidth, so the step grows by that over it.
TEST(SoftwareStackTest, Fp8CastsFollowTheRecipe) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const NemoRow& row = kNemoFp8[0];  // Llama 3 8B on 8 H100, FSDP, micro-batch 1, sequence 8,192
  ASSERT_EQ(row.hidden, 4096);
  model::Spec spec = NemoSpec(row);
  auto step = [&](model::Precision p, model::Fp8Recipe r) {
    model::Spec s = spec;
    s.workload.precision = p;
    s.workload.fp8_recipe = r;
    return ComputeSeconds(model, s, row.gpus);
  };
  using model::Fp8Recipe, model::Precision;
  const double h = 4096, f = 14336, d = 4096 + 2 * 1024;
  const double tokens = 128.0 / 8 * 8192;  // per GPU per step: GBS 128 over DP 8
  const double hbm = spec.cluster.nodes.gpu.StreamingBytesPerS();
  const double delayed = step(Precision::kFp8, Fp8Recipe::kDelayed);
  const double current = step(Precision::kFp8, Fp8Recipe::kCurrent);
  EXPECT_NEAR((current - delayed) * hbm / (tokens * 32),
              (26 - 14) * h + (18 - 12) * f + (6 - 4) * d, 1);
  // Against BF16, where no recipe casts anything.
  EXPECT_EQ(step(Precision::kBf16, Fp8Recipe::kDelayed),
            step(Precision::kBf16, Fp8Recipe::kCurrent));
  // On the 8B step the casts are 3-6 % of the FP8 compute: more than the element-wise work's
  // share grows, less than the GEMMs' saving.
  const double none =
      step(Precision::kFp8, Fp8Recipe::kDelayed) - tokens * 32 * (14 * h + 12 * f + 4 * d) / hbm;
  EXPECT_GT(current / none, 1.03);
  EXPECT_LT(current / none, 1.10);
  EXPECT_LT(current, step(Precision::kBf16, Fp8Recipe::kCurrent));
}

// torchao's float8 all-gather under FSDP2 (OLMo-core's Float8Config default): each unit's linear
// weights gathered in 1 byte, the gathered unit held in FP8, FSDP2's copy-out of each gather on
// those bytes; the shards stay the fp32 parameters torchao casts before the gather, where
// Megatron-FSDP stores its FP8 parameters' shards in 1 byte.
TEST(SoftwareStackTest, TorchaoFloat8AllGatherHalvesFsdp2GathersNotItsShards) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec on = runs::OlmoCoreSpec(runs::kOlmoCore[7]);  // OLMo 2 13B FP8
  ASSERT_TRUE(on.workload.fp8_param_gather);
  ASSERT_TRUE(on.workload.Fp8ParamsFor(model::Strategy::kFsdp));
  on.workload.model.vocab = 32000;  // a layer, not the embedding, is the largest unit
  model::Spec off = on;
  off.workload.fp8_param_gather = false;
  const plan::ParamCounts pc = plan::CountParams(on.workload.model);
  ASSERT_GT(pc.per_layer, pc.embedding);
  auto memory = [&](const model::Spec& s) {
    return plan::EstimateMemory(s, s.workload.strategy, 1, model::Recompute::kNone);
  };
  EXPECT_EQ(memory(on).states.weights_bytes, memory(off).states.weights_bytes);
  EXPECT_EQ(memory(on).states.optimizer_bytes, memory(off).states.optimizer_bytes);
  // The current and the prefetched unit in FP8 but for their norms, the current one's unsharded
  // gradient in bf16.
  const double layer = pc.per_layer, linear = pc.layer_linear;
  EXPECT_NEAR(memory(on).gathered_bytes, 2 * (2 * layer - linear) + 2 * layer, 1);
  EXPECT_NEAR(memory(off).gathered_bytes, 6 * layer, 1);
  model::Spec megatron_fsdp = on;
  megatron_fsdp.workload.sharding_impl = model::ShardingImpl::kMegatron;
  EXPECT_NEAR(memory(off).states.weights_bytes - memory(megatron_fsdp).states.weights_bytes,
              pc.linear / 8, 1);
  auto step = [&](const model::Spec& s) {
    auto r = model.Step(s, LayoutOf(s), 8);
    if (!r) ADD_FAILURE() << r.error().message;
    return r ? *r : StepBreakdown{};
  };
  const StepBreakdown with = step(on), without = step(off);
  ASSERT_GT(without.step_s, 0);
  EXPECT_EQ(with.compute_s, without.compute_s);
  EXPECT_LT(with.dp_comm_total_s, without.dp_comm_total_s);
  // Per micro-batch two gathers copied out (2 + 2 a bf16 parameter, 1 + 1 an FP8 one) and the
  // gradients' fp32 cast and chunk_cat (2 + 4), on one rank holding the whole model.
  const double fp8_share = pc.linear / pc.total;
  EXPECT_NEAR(with.sharding_copies_s / without.sharding_copies_s,
              (2 * 2 * (2 - fp8_share) + 6) / (2 * 2 * 2 + 6), 1e-9);
  EXPECT_LT(with.step_s, without.step_s);
}

// FP8 parameters (software.fp8_param_gather, as MLPerf's Megatron runs set it from v4.0 on): the
// linear weights are stored quantized with no bf16 copy beside them and gathered in 1 byte, the
// embedding, output layer and norms in bf16's 2; the gradients' reduce-scatter and the optimizer's
// states do not change. On v5.0's 405B on 512 H100 (TP8 PP8 CP2, the distributed optimizer) the
// weights shrink by exactly the bf16 copy of the linear parameters on the GPU (Hopper keeps the
// quantized weight and its transpose either way), the gathers by half; FSDP's gathered units too.
TEST(SoftwareStackTest, Fp8ParametersDropTheBf16LinearWeights) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const runs::MlperfRow& row = runs::MlperfRowNamed("v5.0 405B H100 512");
  ASSERT_STREQ(row.name, "v5.0 405B H100 512");
  const model::Spec on = MlperfSpec(row);
  ASSERT_TRUE(on.workload.fp8_param_gather);
  model::Spec off = on;
  off.workload.fp8_param_gather = false;
  const plan::ParamCounts pc = plan::CountParams(on.workload.model);
  // 405B: the 126 layers' projections and MLPs, all but the embedding, output layer and norms.
  EXPECT_NEAR(pc.linear / pc.total, 1 - 2 * 128256.0 * 16384 / pc.total - 253 * 16384 / pc.total,
              1e-9);
  auto memory = [&](const model::Spec& s) {
    return plan::EstimateMemory(s, s.workload.strategy, 1, model::Recompute::kNone);
  };
  // The linear weights of the pipeline rank that holds the most: the second, whose 16 layers
  // (the embedding and the loss counted in the split) take the first rank's micro-batches but one.
  ASSERT_EQ(memory(on).pipeline_rank, plan::PipelineRank::kSecond);
  const plan::LocalParams local =
      plan::ParamsOnPipelineRank(
          pc, on.workload.model, 8, 4 * 2, 1,
          plan::LayersOnPipelineRank(on.workload.model, 8, on.workload.virtual_stages,
                                     on.workload.pipeline_split, 1))
          .local;
  EXPECT_NEAR(memory(off).states.weights_bytes - memory(on).states.weights_bytes,
              2 * (local.dense_linear + local.experts), 1);
  EXPECT_EQ(memory(off).states.grads_bytes, memory(on).states.grads_bytes);
  EXPECT_EQ(memory(off).states.optimizer_bytes, memory(on).states.optimizer_bytes);
  // The plan's DDP row, which has no parameter gather, keeps bf16 weights.
  EXPECT_EQ(plan::EstimateMemory(on, model::Strategy::kDdp, 1, model::Recompute::kNone)
                .states.weights_bytes,
            plan::EstimateMemory(off, model::Strategy::kDdp, 1, model::Recompute::kNone)
                .states.weights_bytes);
  auto step = [&](const model::Spec& s) {
    auto r = model.Step(s, LayoutOf(s), row.gpus);
    EXPECT_TRUE(r);
    return *r;
  };
  const StepBreakdown with = step(on), without = step(off);
  EXPECT_LT(with.dp_comm_total_s, without.dp_comm_total_s);
  EXPECT_LT(with.step_s, without.step_s);
  EXPECT_EQ(with.compute_s, without.compute_s);
  // FSDP (no pipeline): the current and prefetched units (a layer: larger than the embedding)
  // gathered in FP8 but for their norms, the unsharded gradient in bf16.
  model::Spec fsdp = on, fsdp_off = off;
  for (model::Spec* s : {&fsdp, &fsdp_off}) {
    s->workload.strategy = model::Strategy::kFsdp;
    s->workload.tensor = 8;
    s->workload.pipeline = 1;
    s->workload.virtual_stages = 1;
    s->workload.context = 1;
  }
  ASSERT_GT(pc.per_layer, pc.embedding);
  const double layer = pc.per_layer, norms = 2 * 16384.0;
  EXPECT_NEAR(memory(fsdp).gathered_bytes / memory(fsdp_off).gathered_bytes,
              (2 * (2 * layer - (layer - norms)) + 2 * layer) / (6 * layer), 1e-12);
  // A mixture of experts: the shared experts' weights are linear, the router's are not; the
  // routed experts, which EP divides, count with LocalParams.
  model::ModelShape moe = on.workload.model;
  moe.moe.experts = 64;
  moe.moe.top_k = 4;
  moe.moe.shared_experts = 1;
  moe.moe.ffn_hidden = 2048;
  ASSERT_TRUE(moe.IsMoe());
  const plan::ParamCounts mc = plan::CountParams(moe);
  const double h = 16384, attention = 2 * h * 16384 + 2 * h * 1024, expert = 3 * h * 2048;
  EXPECT_NEAR(mc.linear,
              moe.MoeLayers() * (attention + expert) +
                  (moe.layers - moe.MoeLayers()) * (attention + 3 * h * 53248),
              1);
  // A middle rank's 16 MoE layers over TP8: their attention and shared experts are linear, the
  // router and the norms are not.
  const plan::LocalParams ml =
      plan::ParamsOnPipelineRank(mc, moe, 8, 8, 8, plan::RankLayers{16, 0, false, false}).local;
  EXPECT_NEAR(ml.dense_linear, 16 * (attention + expert) / 8, 1);
  EXPECT_NEAR(ml.dense, 16 * (attention + expert + h * 64 + 2 * h) / 8, 1);
}

// Transformer Engine keeps the quantized copy of each linear weight its GEMMs read (the first
// micro-batch's cast, cached: Megatron-Core passes is_first_microbatch) beside the bf16 weight:
// a row-wise and a column-wise copy, which per-tensor FP8 on Blackwell shares (its GEMMs take
// any layout; Hopper's take only TN, so a transpose is kept), MXFP8 and NVFP4 store apart with
// their block scales (Transformer Engine's quantizer.cpp). Not on PyTorch's own FP8 (torchao).
TEST(SoftwareStackTest, TransformerEngineKeepsAQuantizedCopyOfEachLinearWeight) {
  auto spec = [](const char* gpu, std::string_view precision, std::string_view software) {
    auto s = model::ParseSpec(fmt::format(R"(name: t
nodes:
  count: 1
  gpu: {{model: {}, count: 8}}
workload:
  model: {{name: m, layers: 8, hidden: 1024, heads: 8, vocab: 32000, sequence: 2048}}
  precision: {}
  parallel: {{strategy: zero1, tensor: 2}}
  batch: {{micro: 1}}
  software: {})",
                                          gpu, precision, software),
                              "t.yaml");
    EXPECT_TRUE(s) << s.error().message;
    return *s;
  };
  auto quantized = [](const model::Spec& s) {
    return plan::TeQuantizedWeightBytes(s.workload, s.cluster.nodes.gpu.architecture);
  };
  const model::Spec hopper = spec("H100-SXM5-80GB", "fp8", "{stack: megatron-core-2024}");
  EXPECT_EQ(quantized(hopper), 2);
  EXPECT_EQ(quantized(spec("B200-SXM-180GB", "fp8", "{stack: megatron-core-2024}")), 1);
  EXPECT_EQ(quantized(spec("B200-SXM-180GB", "fp8", "{stack: nemo-2025, fp8_recipe: mxfp8}")),
            2 * (1 + 1.0 / 32));
  EXPECT_EQ(quantized(spec("B200-SXM-180GB", "fp4", "{stack: nemo-2025}")), 2 * (0.5 + 1.0 / 16));
  EXPECT_EQ(quantized(spec("H100-SXM5-80GB", "bf16", "{stack: megatron-core-2024}")), 0);
  EXPECT_EQ(quantized(spec("H100-SXM5-80GB", "fp8", "{stack: pytorch-fsdp2}")), 0);
  // Without FP8 parameters the copy sits beside bf16's 2 bytes: on one rank of TP2 holding the
  // whole model (no pipeline), 2 bytes more for each of its linear weights on Hopper.
  const model::Spec bf16 = spec("H100-SXM5-80GB", "bf16", "{stack: megatron-core-2024}");
  auto weights = [](const model::Spec& s) {
    return plan::EstimateMemory(s, s.workload.strategy, 1, model::Recompute::kNone)
        .states.weights_bytes;
  };
  const plan::ParamCounts pc = plan::CountParams(hopper.workload.model);
  EXPECT_NEAR(weights(hopper) - weights(bf16), 2 * pc.linear / 2, 1);
  // With them (nemo-2025's default under an FP8 recipe) the quantized weight is all there is:
  // Blackwell's per-tensor FP8 in 1 byte, half bf16's.
  const model::Spec blackwell = spec("B200-SXM-180GB", "fp8", "{stack: nemo-2025}");
  ASSERT_TRUE(blackwell.workload.fp8_param_gather);
  EXPECT_NEAR(weights(spec("B200-SXM-180GB", "bf16", "{stack: nemo-2025}")) - weights(blackwell),
              pc.linear / 2, 1);
  // A mixture of experts: the routed experts are linear weights too. Qwen3 30B-A3B at EP16 on 16
  // B200 in MXFP8 with its parameters (2.0625 B each) against BF16 (2): the experts on the GPU and
  // the attention's projections both. The same memory whatever strategy the spec names (the
  // plan's rows and a search weigh zero1 from an fsdp spec too, whose MXFP8 parameters the model
  // does not have).
  std::ifstream in(std::string(GPUFLEET_SOURCE_DIR) + "/examples/h100-16gpu-moe.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  auto swap = [&](std::string_view from, std::string_view to) {
    const size_t at = yaml.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    yaml.replace(at, from.size(), to);
  };
  swap("H100-SXM5-80GB", "B200-SXM-180GB");
  swap("{stack: nemo-2025}", "{stack: nemo-2025, fp8_recipe: mxfp8}");
  auto parsed = model::ParseSpec(yaml, "moe.yaml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const model::Spec moe = *parsed;
  ASSERT_TRUE(moe.workload.Fp8ParamsFor(moe.workload.strategy));
  model::Spec moe_bf16 = moe;
  moe_bf16.workload.precision = model::Precision::kBf16;
  const plan::ParamCounts mc = plan::CountParams(moe.workload.model);
  const plan::LocalParams local =
      plan::ParamsOnPipelineRank(mc, moe.workload.model, 1, 16, 16,
                                 plan::LayersOnPipelineRank(moe.workload.model, 1, 1, {}, 0))
          .local;
  ASSERT_GT(local.experts, local.dense_linear);
  EXPECT_NEAR(weights(moe) - weights(moe_bf16), 0.0625 * (local.dense_linear + local.experts), 1);
  model::Spec fsdp = moe;
  fsdp.workload.strategy = model::Strategy::kFsdp;
  EXPECT_EQ(
      plan::EstimateMemory(fsdp, model::Strategy::kZero1, 1, model::Recompute::kNone).total_bytes,
      plan::EstimateMemory(moe, model::Strategy::kZero1, 1, model::Recompute::kNone).total_bytes);
}

// Megatron-Core's overlap_param_gather_with_optimizer_step dispatches the first model chunk's
// whole parameter all-gather after its optimizer step, the bucket the forward needs first
// dispatched last: without virtual stages the forward waits for all of it (Cisco's MLPerf 8B ran
// so), with them the other chunks' optimizer steps cover the first chunk's share.
TEST(SoftwareStackTest, ParamGatherWithTheOptimizerStepExposesTheFirstChunksGather) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const runs::MlperfRow& row = runs::MlperfRowNamed("v5.1 8B Cisco 128");
  ASSERT_STREQ(row.name, "v5.1 8B Cisco 128");
  model::Spec on = MlperfSpec(row);
  ASSERT_EQ(on.workload.optimizer_step_gather, model::OptimizerStepGather::kAlways);
  // bf16 parameters: the all-gather moves what the reduce-scatter does, half the DP traffic.
  on.workload.fp8_param_gather = false;
  model::Spec off = on;
  off.workload.optimizer_step_gather = model::OptimizerStepGather::kNever;
  auto step = [&](const model::Spec& s) {
    auto r = model.Step(s, LayoutOf(s), row.gpus);
    EXPECT_TRUE(r) << r.error().message;
    return *r;
  };
  const StepBreakdown with = step(on), without = step(off);
  EXPECT_EQ(with.dp_comm_total_s, without.dp_comm_total_s);
  EXPECT_EQ(with.compute_s, without.compute_s);
  // Without the option one bucket (64 M of the 4.0 B parameters on a GPU) is exposed; with it,
  // and no virtual stages, the whole gather.
  const double gather = with.dp_comm_total_s / 2;
  EXPECT_GT(with.dp_comm_s - without.dp_comm_s, 0.95 * gather);
  EXPECT_LE(with.dp_comm_s - without.dp_comm_s, gather);
  EXPECT_GT(with.step_s, without.step_s);
  // The plan's traffic view counts the gather as not overlappable, never as more.
  auto dp_traffic = [](const model::Spec& s) {
    const plan::CommPlan c = plan::PlanComm(s, plan::PlanCompute(s));
    const auto t = std::find_if(c.step.traffic.begin(), c.step.traffic.end(),
                                [](const plan::Traffic& x) { return x.kind == "data-parallel"; });
    return t == c.step.traffic.end() ? plan::Traffic{} : *t;
  };
  ASSERT_GT(dp_traffic(on).time_s, 0);
  EXPECT_LT(dp_traffic(on).overlappable_s, dp_traffic(off).overlappable_s);
  EXPECT_GT(dp_traffic(on).exposed_s, dp_traffic(off).exposed_s);
  // Interleaved stages (PP2, four chunks of four layers): the first chunk holds a quarter of the
  // parameters and the other three chunks' optimizer steps run beside its gather. The forward
  // hides the other three quarters here, and all of the gather but its first bucket (64 M of the
  // 2.0 B parameters on a GPU, with its ring's latency) without the option.
  for (model::Spec* s : {&on, &off}) {
    s->workload.pipeline = 2;
    s->workload.virtual_stages = 4;
  }
  const StepBreakdown vwith = step(on), vwithout = step(off);
  const double vgather = vwith.dp_comm_total_s / 2;
  const double first_chunk = vgather / 4 - 3 * vwith.optimizer_s / 4;
  EXPECT_LE(vwith.dp_comm_s - vwithout.dp_comm_s, first_chunk);
  EXPECT_GE(vwith.dp_comm_s - vwithout.dp_comm_s, first_chunk - 0.05 * vgather);
  EXPECT_LE(dp_traffic(on).overlappable_s, dp_traffic(off).overlappable_s);
  // ZeRO-2 on Megatron's distributed optimizer shares ZeRO-1's gather, not the option.
  for (model::Spec* s : {&on, &off}) s->workload.strategy = model::Strategy::kZero2;
  EXPECT_EQ(step(on).dp_comm_s, step(off).dp_comm_s);
}

// The loss and Composer's training metrics are memory-bound work over the logits, counted per
// logit from their kernels (docs/sim.md, "The loss and the training metrics"): the step grows by
// exactly the bytes over HBM bandwidth, V logits per token, on every micro-batch.
TEST(SoftwareStackTest, LossAndTrainingMetricsMoveTheirBytes) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const FoundryRow& row = kFoundry[24];  // 13b on 64 H100, micro-batch 2, FSDP, composer-2023
  const model::Spec spec = FoundrySpec(row);
  const model::Workload& w = spec.workload;
  EXPECT_EQ(w.loss_traffic_per_logit, 8 + 28);  // fused_crossentropy and the two metrics
  auto with_traffic = [&](double bytes) {
    model::Spec s = spec;
    s.workload.loss_traffic_per_logit = bytes;
    return ComputeSeconds(model, s, row.gpus);
  };
  const double tokens = static_cast<double>(w.global_batch) / row.gpus * w.model.sequence;
  const double hbm = spec.cluster.nodes.gpu.StreamingBytesPerS();
  EXPECT_NEAR((with_traffic(52) - with_traffic(8)) * hbm / (tokens * w.model.vocab), 44, 1e-6);
  EXPECT_NEAR((with_traffic(8) - with_traffic(0)) * hbm / (tokens * w.model.vocab), 8, 1e-6);
  // Under tensor parallelism each rank holds V/tp of the logits.
  model::Spec tp = runs::MegatronSpec(runs::kMegatronRows[1]);  // 7.1B, TP2
  ASSERT_EQ(tp.workload.tensor, 2);
  auto tp_step = [&](double bytes) {
    model::Spec s = tp;
    s.workload.loss_traffic_per_logit = bytes;
    return ComputeSeconds(model, s, s.cluster.nodes.TotalGpus());
  };
  const double tp_tokens = static_cast<double>(tp.workload.global_batch) /
                           (tp.cluster.nodes.TotalGpus() / 2) * tp.workload.model.sequence;
  EXPECT_NEAR((tp_step(52) - tp_step(0)) * tp.cluster.nodes.gpu.StreamingBytesPerS() /
                  (tp_tokens * tp.workload.model.vocab / 2),
              52, 1e-6);
}

// PyTorch eager's element-wise kernels (software.elementwise: eager, pytorch-fsdp1's default) move
// what ibm-fms's Llama block moves, counted kernel by kernel: for Llama 2 7B (hidden 4,096, MHA,
// SwiGLU of 11,008) 183.8 bytes per hidden element per token forward and 334.9 backward, where the
// fused layers move 136 in all; full recompute moves the eager forward's 183.8 again (the fused
// layers' 34). Grouped-query attention adds the copies that expand K and V to the query heads.
TEST(SoftwareStackTest, EagerLayersMoveTheirCountedBytes) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = runs::FmsSpec(runs::kFms[3]);  // 7B on 128 A100, pytorch-fsdp1
  ASSERT_EQ(spec.workload.elementwise, model::Elementwise::kEager);
  const auto& m = spec.workload.model;
  const double tokens = 2.0 * m.sequence * m.layers * m.hidden;  // hidden elements per step
  const double hbm = spec.cluster.nodes.gpu.StreamingBytesPerS();
  auto compute = [&](model::Elementwise e, model::Recompute r) {
    spec.workload.elementwise = e;
    spec.workload.recompute = r;
    return ComputeSeconds(model, spec, 128);
  };
  const double ffn = 11008.0 / 4096;
  const double forward = 2 * 36 + 2 * 36.25 + 0.4 + 10 * ffn + 12;
  const double backward = 2 * 92 + 2 * 36.25 + 18 * ffn + 30;
  EXPECT_NEAR(forward, 183.8, 0.05);
  EXPECT_NEAR(backward, 334.9, 0.05);
  using model::Elementwise;
  using model::Recompute;
  EXPECT_NEAR((compute(Elementwise::kEager, Recompute::kNone) -
               compute(Elementwise::kFused, Recompute::kNone)) *
                  hbm / tokens,
              forward + backward - 136, 1e-6);
  // Recomputing moves the forward's bytes again, on top of the recomputed GEMMs and attention.
  const double eager_rec = compute(Elementwise::kEager, Recompute::kFull) -
                           compute(Elementwise::kEager, Recompute::kNone);
  const double fused_rec = compute(Elementwise::kFused, Recompute::kFull) -
                           compute(Elementwise::kFused, Recompute::kNone);
  EXPECT_NEAR((eager_rec - fused_rec) * hbm / tokens, forward - 136.0 / 4, 1e-6);
  // Llama 2 70B's 8 KV heads of 64: K and V copied to 64 heads forward, summed back backward.
  model::Spec gqa = runs::FmsSpec(runs::kFms[0]);
  const auto& g = gqa.workload.model;
  ASSERT_EQ(g.kv_heads, 8);
  const double g_tokens = 2.0 * g.sequence * g.layers * g.hidden;
  auto g_compute = [&](Elementwise e) {
    gqa.workload.elementwise = e;
    gqa.workload.recompute = Recompute::kNone;
    return ComputeSeconds(model, gqa, 128);
  };
  const double kv = 1.0 / 8, g_ffn = 28672.0 / 8192;
  const double expand = 2 * (2 * kv + 2);  // per direction, per hidden element
  EXPECT_NEAR((g_compute(Elementwise::kEager) - g_compute(Elementwise::kFused)) *
                  gqa.cluster.nodes.gpu.StreamingBytesPerS() / g_tokens,
              2 * 36 + 36.25 * (1 + kv) + 0.4 + 10 * g_ffn + 12 + expand + 2 * 92 +
                  36.25 * (1 + kv) + 18 * g_ffn + 30 + expand - 136,
              1e-6);
}

// Tensor parallelism without sequence parallelism runs each rank's share of the heads and MLP
// columns but the hidden stream whole: the norms, the frequencies' gather and broadcast read, the
// residual adds and the gradient sums are replicated on both ranks, the rest of rotary
// embeddings, the MLP's activation and the K/V expand split; the fused count keeps Korthikanti's 10
// of 34 replicated.
TEST(SoftwareStackTest, EagerHiddenStreamRunsWholeOnEveryTensorParallelRank) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = runs::FmsSpec(runs::kFms[1]);  // Llama 2 34B: 8 KV heads, f = 22016
  const auto& m = spec.workload.model;
  spec.workload.recompute = model::Recompute::kNone;
  // Hidden elements per rank and step: the global batch (2 per GPU) over DP = 128 / tp.
  const double tokens = 2.0 * m.sequence * m.layers * m.hidden;
  const double hbm = spec.cluster.nodes.gpu.StreamingBytesPerS();
  auto eager_over_fused = [&](int tp, bool sp) {
    spec.workload.tensor = tp;
    spec.workload.sequence_parallel = sp;
    spec.workload.elementwise = model::Elementwise::kEager;
    const double eager = ComputeSeconds(model, spec, 128);
    spec.workload.elementwise = model::Elementwise::kFused;
    return (eager - ComputeSeconds(model, spec, 128)) * hbm / (tokens * tp);
  };
  const double kv = 1024.0 / 8192, ffn = 22016.0 / 8192, expand = 2 * (2 * kv + 2);
  const double hidden_stream = (2 * 36 + 0.4 + 12) + (2 * 92 + 30) + 2 * 0.25 * (1 + kv);
  const double split = 2 * 36 * (1 + kv) + (10 + 18) * ffn + 2 * expand;
  EXPECT_NEAR(eager_over_fused(1, false), hidden_stream + split - 136, 1e-6);
  EXPECT_NEAR(eager_over_fused(2, false), hidden_stream + split / 2 - 136 * (10 + 24.0 / 2) / 34,
              1e-6);
  EXPECT_NEAR(eager_over_fused(2, true), (hidden_stream + split - 136) / 2, 1e-6);
}

// MXFP8's GEMMs at their own ceiling: Transformer Engine's GEMM profiling guide measured the twelve
// GEMMs of a 5B layer on B300, pre-quantized, at 7.161 ms in MXFP8 (scale swizzles inside) and
// 6.812 ms in FP8 with per-tensor scales. The FP8 GEMMs' time is read off the step by halving the
// GPU's FP8 ceiling (they alone run at it; attention and the output layer stay BF16).
TEST(SoftwareStackTest, Mxfp8GemmsRunAtTheirMeasuredCeiling) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const NemoRow& row = kNemoFp8[4];  // Llama 3 8B on 8 B200
  ASSERT_STREQ(row.gpu, "B200-SXM-180GB");
  const model::Spec spec = NemoSpec(row);
  const double e = spec.cluster.nodes.gpu.fp8_matmul_efficiency;
  ASSERT_GT(e, 0);
  auto compute = [&](model::Fp8Recipe r, double fp8_ceiling) {
    model::Spec s = spec;
    s.workload.fp8_recipe = r;
    s.cluster.nodes.gpu.fp8_matmul_efficiency = fp8_ceiling;
    return ComputeSeconds(model, s, row.gpus);
  };
  using model::Fp8Recipe;
  // Halving the ceiling adds the FP8 GEMMs' time once.
  const double mx = compute(Fp8Recipe::kMxfp8, e / 2) - compute(Fp8Recipe::kMxfp8, e);
  const double current = compute(Fp8Recipe::kCurrent, e / 2) - compute(Fp8Recipe::kCurrent, e);
  ASSERT_GT(current, 0);
  EXPECT_NEAR(mx / current, 7.161 / 6.812, 1e-9);
  // So MXFP8 is the slower recipe here, as NeMo measured it on every Blackwell system (its casts
  // move fewer bytes than current scaling's, less than its GEMMs lose).
  EXPECT_GT(compute(Fp8Recipe::kMxfp8, e), compute(Fp8Recipe::kCurrent, e));
}

// Blackwell Ultra's attention at its measured speed-up over Blackwell: cuDNN's SDPA training
// benchmark timed Llama 3.1's attention forward and backward on GB200 and GB300 the same day with
// the same cuDNN, 5.426 ms against 4.902 ms at 8,192 tokens. The model reproduces that ratio
// between its GB200 and GB300 steps: GB300's clock lead (its printed peak against GB200's 93.2 %
// of it) and Blackwell Ultra's softmax together. Each GPU's attention time is read off its step
// by running attention at the 2022 Triton kernel's rate (0.263 of the peak, written for another
// architecture: no speed-up) against the native kernel (GB200) or mma.sync's (GB300: the fitted
// 0.40 without the speed-up).
TEST(SoftwareStackTest, BlackwellUltraAttentionRunsAtItsMeasuredSpeedup) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  NemoRow row = kNemoFp8[7];  // Llama 3 8B on 8 GB200, sequence 8,192
  ASSERT_STREQ(row.gpu, "GB200-NVL72");
  const model::Spec blackwell = NemoSpec(row);
  row.gpu = "GB300-NVL72";
  const model::Spec ultra = NemoSpec(row);
  auto compute = [&](const model::Spec& base, model::AttentionKernel kernel, int sequence) {
    model::Spec s = base;
    s.workload.attention_kernel = kernel;
    s.workload.model.sequence = sequence;
    return ComputeSeconds(model, s, row.gpus);
  };
  using model::AttentionKernel;
  const double to_triton = Eff().attention / plan::kTriton2022AttentionOfPeak - 1;
  auto speedup_at = [&](int sequence) {
    const double gb200 = (compute(blackwell, AttentionKernel::kTriton2022, sequence) -
                          compute(blackwell, AttentionKernel::kNative, sequence)) /
                         to_triton;
    const double mma = compute(ultra, AttentionKernel::kMmaSync, sequence);
    const double gb300 =
        (compute(ultra, AttentionKernel::kTriton2022, sequence) - mma) / to_triton +
        (compute(ultra, AttentionKernel::kNative, sequence) - mma);
    return gb200 / gb300;
  };
  EXPECT_NEAR(speedup_at(8192), (1.336 + 4.090) / (1.105 + 3.797), 1e-6);  // measured at 8,192
  EXPECT_NEAR(speedup_at(2048), (0.125 + 0.382) / (0.094 + 0.354), 1e-6);  // and at 2,048
  // Between measured lengths, linear in log2 of the length; beyond them, the end values.
  EXPECT_NEAR(speedup_at(11585), (1.107 + 1.154) / 2, 0.002);  // 2^13.5
  EXPECT_NEAR(speedup_at(131072), (22.428 + 73.209) / (16.716 + 62.100), 1e-6);
  // A kernel written for another architecture (mma.sync) gets the clock, not the softmax (at
  // GB300's measured streaming rate, 88.4 % of HBM's peak against GB200's 81.9 %, as well).
  model::Spec same_clock = blackwell;
  same_clock.cluster.nodes.gpu.sustained_clock = ultra.cluster.nodes.gpu.sustained_clock;
  same_clock.cluster.nodes.gpu.memory_efficiency = ultra.cluster.nodes.gpu.memory_efficiency;
  EXPECT_NEAR(compute(ultra, AttentionKernel::kMmaSync, 8192),
              compute(same_clock, AttentionKernel::kNative, 8192), 1e-12);
}

// The attention forward pays one exponential per score element beside 4 d matmul FLOPs (head
// size d), in series: 4d / (4d + x) of the tensor rate, x the tensor FLOPs per exponential.
// That reproduces the published forward kernels' ratios to head size 128 within 3 % (rates 6 %)
// (FlashAttention-3 on H100, BF16, 16k, not causal: 497, 648, 756 TFLOP/s at 64, 128, 256; FP8
// at 128: 1,008; FlashAttention-4 on B200, causal, 4,096: 713 and 1,090 at 64 and 128), and the
// step model, fitted at 128, charges heads of other sizes that much more or less per forward
// FLOP: Llama 3 8B's attention with 64 heads of 64 (16 KV heads, the same widths and FLOPs)
// against 32 of 128 takes (2 + g) / 3 of the time, forward g and backward 2 at 128's rate.
TEST(SoftwareStackTest, AttentionForwardPaysItsExponentialsAtEachHeadSize) {
  // The serial rate, x the tensor FLOPs per exponential (H100 4,096 over 16 a clock per SM,
  // twice that in FP8; B200 8,192 over 16).
  auto serial = [](double peak, double x, int d) { return peak * 4 * d / (4 * d + x); };
  EXPECT_NEAR(serial(989.4, 256, 64) / 497, 1, 0.05);
  EXPECT_NEAR(serial(989.4, 256, 128) / 648, 1, 0.05);
  EXPECT_NEAR(serial(989.4, 256, 256) / 756, 1, 0.05);
  EXPECT_NEAR(serial(1978.9, 512, 128) / 1008, 1, 0.05);
  EXPECT_NEAR(serial(2250, 512, 64) / 713, 1, 0.06);
  EXPECT_NEAR(serial(2250, 512, 128) / 1090, 1, 0.05);
  EXPECT_DOUBLE_EQ(plan::ForwardExponentialFactor("Hopper", 64, false),
                   serial(1, 256, 128) / serial(1, 256, 64));
  EXPECT_DOUBLE_EQ(plan::ForwardExponentialFactor("Blackwell", 64, false),
                   serial(1, 512, 128) / serial(1, 512, 64));
  // The ratios the step model uses: 4/3 on Hopper and Blackwell Ultra (twice Blackwell's
  // exponentials), 3/2 on Blackwell, 5/3 in FP8 there; a head of 256 on Hopper 5/6; Ampere 6/5.
  EXPECT_DOUBLE_EQ(plan::ForwardExponentialFactor("Hopper", 64, false), 4.0 / 3);
  EXPECT_DOUBLE_EQ(plan::ForwardExponentialFactor("Blackwell Ultra", 64, false), 4.0 / 3);
  EXPECT_DOUBLE_EQ(plan::ForwardExponentialFactor("Blackwell", 64, false), 1.5);
  EXPECT_DOUBLE_EQ(plan::ForwardExponentialFactor("Blackwell", 64, true), 5.0 / 3);
  EXPECT_DOUBLE_EQ(plan::ForwardExponentialFactor("Hopper", 256, false), 5.0 / 6);
  EXPECT_DOUBLE_EQ(plan::ForwardExponentialFactor("Ampere", 64, false), 1.2);
  EXPECT_DOUBLE_EQ(plan::ForwardExponentialFactor("Blackwell", 128, true), 1.0);
  EXPECT_DOUBLE_EQ(plan::ForwardExponentialFactor("CDNA 3", 64, false), 1.0);  // not known

  auto attention = [](const model::Spec& s) {
    return AttentionSeconds(s, s.cluster.nodes.TotalGpus());
  };
  auto small_heads = [](model::Spec s) {
    s.workload.model.heads = 64;
    s.workload.model.kv_heads = 16;
    return s;
  };
  for (const char* gpu : {"H100-SXM5-80GB", "B200-SXM-180GB", "GB300-NVL72"}) {
    NemoRow row = kNemoFp8[7];  // Llama 3 8B on 8 GPUs
    row.gpu = gpu;
    const model::Spec llama = NemoSpec(row);
    const std::string& arch = llama.cluster.nodes.gpu.architecture;
    const double g = plan::ForwardExponentialFactor(arch, 64, false);
    EXPECT_NEAR(attention(small_heads(llama)) / attention(llama), (2 + g) / 3, 1e-9) << gpu;
    // Kernels other than the native ones keep one rate per FLOP at every head size.
    model::Spec mma = llama;
    mma.workload.attention_kernel = model::AttentionKernel::kMmaSync;
    EXPECT_NEAR(attention(small_heads(mma)) / attention(mma), 1, 1e-9) << gpu;
  }
}

// QK-norm (model.qk_norm: OLMo 2, Qwen3): a norm on the projected queries and keys, whose kernels
// move their saved input's 2 bytes an element four times (written forward, read backward, and a
// gradient of the same size), as the fused element-wise count runs its 136 bytes per hidden
// element (34 stored); and the memory keeps that input, 2 (q + k) bytes a token a layer.
TEST(SoftwareStackTest, QkNormMovesAndKeepsTheQueriesAndKeys) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  Efficiency doubled = Eff();
  doubled.elementwise_bytes *= 2;
  const AnalyticalStepModel twice(FlopConvention::kMegatron, doubled);
  const model::Spec llama = NemoSpec(kNemoFp8[7]);  // Llama 3 8B on 8 GB200s
  ASSERT_EQ(llama.workload.tensor, 1);
  ASSERT_EQ(llama.workload.pipeline, 1);
  model::Spec normed = llama;
  normed.workload.model.qk_norm = true;
  const int gpus = llama.cluster.nodes.TotalGpus();
  const model::ModelShape& m = llama.workload.model;
  const double base = ComputeSeconds(model, llama, gpus);
  // The fused count's time (what doubles with its bytes) against QK-norm's.
  const double fused = ComputeSeconds(twice, llama, gpus) - base;
  const double qk = ComputeSeconds(model, normed, gpus) - base;
  EXPECT_GT(qk, 0);
  EXPECT_NEAR(qk / fused,
              8.0 * (m.QueryWidth() + m.KvWidth()) / (Eff().elementwise_bytes * m.hidden), 1e-9);
  // PyTorch eager's norm (software.elementwise: eager) is its fp32 RMSNorm: 36 bytes an element
  // forward, 92 backward, against the eager layer's own count (EagerLlamaBytes).
  model::Spec eager = llama, eager_normed = normed;
  eager.workload.elementwise = model::Elementwise::kEager;
  eager_normed.workload.elementwise = model::Elementwise::kEager;
  EXPECT_NEAR((ComputeSeconds(model, eager_normed, gpus) - ComputeSeconds(model, eager, gpus)) / qk,
              128.0 / 8, 1e-9);
  // Memory: every layer keeps the queries and keys before the norm.
  const plan::MemoryBreakdown off = plan::PlanMemory(llama).configured;
  const plan::MemoryBreakdown on = plan::PlanMemory(normed).configured;
  const double per_layer =
      2.0 * (m.QueryWidth() + m.KvWidth()) * m.sequence * llama.workload.micro_batch;
  EXPECT_NEAR(on.activation_bytes - off.activation_bytes, m.layers * per_layer, 1e-3);
}

// A sliding window's kernel: the 128 x 128 tiles its query blocks meet (the diagonal and
// ceil((w - 1)/128) behind it, all of them near the start), plus a fixed cost per query block
// measured on cuDNN's windowed kernels, over a causal kernel's tiles
// (plan::WindowedAttentionShare). Checked on a run the costs were not taken from: cuDNN 9.19's
// windowed kernel on GB300 at a window of 1,024 (NVIDIA/cudnn-frontend,
// benchmark/sdpa_benchmark_training/results/ gb300_919_only_cudnn, 2026-02-26: GPT-OSS's 64 query
// heads of 64, batch 2, beside Llama 3.1's 64 of 128, batch 1), where the costs are GB300's
// cuDNN 9.26 ones at a window of 128.
TEST(SoftwareStackTest, WindowedAttentionPaysAFixedCostPerQueryBlock) {
  // No tile outside a window as long as the span: the causal kernel.
  const plan::WindowedAttentionTime none = plan::WindowedAttentionShare("Hopper", 4096, 4096);
  EXPECT_DOUBLE_EQ(none.forward, 1);
  EXPECT_DOUBLE_EQ(none.backward, 1);
  // The layer's count keeps the window's own keys a query (Megatron Bridge's): 126 of 4,096.
  model::ModelShape m;
  m.sequence = 4096;
  m.sliding_window = 128;
  EXPECT_NEAR(plan::CausalWindowKeys(m), 128 - 128.0 * 127 / (2 * 4096), 1e-9);
  // The tiles alone: 63 of a causal kernel's 528 at 4,096 tokens (0.119), twice the window's
  // share of the causal count (126 of 2,048 keys); the fixed cost weighs on top.
  for (const char* arch : {"Hopper", "Blackwell", "Blackwell Ultra"}) {
    const plan::WindowedAttentionTime w = plan::WindowedAttentionShare(arch, 4096, 128);
    EXPECT_GT(w.forward, 63.0 / 528) << arch;
    EXPECT_GT(w.backward, 63.0 / 528) << arch;
    EXPECT_LT(w.forward, 0.5) << arch;
    EXPECT_LT(w.backward, 0.5) << arch;
    // Longer windows cost more; at long sequences the share falls with the causal kernel's tiles.
    EXPECT_GT(plan::WindowedAttentionShare(arch, 4096, 1024).forward, w.forward) << arch;
    EXPECT_LT(plan::WindowedAttentionShare(arch, 32768, 128).backward, w.backward / 4) << arch;
  }
  // cuDNN 9.19 on GB300, window 1,024: milliseconds forward and backward, windowed (batch 2)
  // and causal (batch 1), at 2,048 to 32,768 tokens; per head and sequence, the windowed heads'
  // forward at their exponentials' rate (ForwardExponentialFactor), as the step model runs them.
  const double lengths[] = {2048, 4096, 8192, 16384, 32768};
  const double windowed_fwd[] = {0.089, 0.178, 0.359, 0.722, 1.448};
  const double windowed_bwd[] = {0.221, 0.472, 0.965, 1.951, 3.930};
  const double causal_fwd[] = {0.054, 0.164, 0.583, 2.235, 8.734};
  const double causal_bwd[] = {0.190, 0.575, 1.985, 7.380, 28.390};
  const double g = plan::ForwardExponentialFactor("Blackwell Ultra", 64, false);
  for (int i = 0; i < 5; ++i) {
    const plan::WindowedAttentionTime w =
        plan::WindowedAttentionShare("Blackwell Ultra", lengths[i], 1024);
    const double fwd = (windowed_fwd[i] / 2) / (0.5 * g * causal_fwd[i]);
    const double bwd = (windowed_bwd[i] / 2) / (0.5 * causal_bwd[i]);
    if (i == 0) {
      // At 2,048 tokens, twice the window, the kernel ran slower than the causal one (1.24x
      // forward, 1.16x backward); the share stops at the causal kernel's time.
      EXPECT_GT(fwd, 1.2);
      EXPECT_GT(bwd, 1.1);
      EXPECT_DOUBLE_EQ(w.forward, 1);
      EXPECT_DOUBLE_EQ(w.backward, 1);
      continue;
    }
    EXPECT_NEAR(w.forward / fwd, 1, 0.035) << lengths[i];
    EXPECT_NEAR(w.backward / bwd, 1, 0.22) << lengths[i];
    EXPECT_NEAR((g * w.forward + 2 * w.backward) / (g * fwd + 2 * bwd), 1, 0.15) << lengths[i];
  }
  // Never more than the causal kernel: a window a key short of the span, or short spans where the
  // fixed cost would outweigh the few tiles (packed documents of 1,024 under a window of 128).
  for (const char* arch : {"Hopper", "Blackwell", "Blackwell Ultra"}) {
    EXPECT_LE(plan::WindowedAttentionShare(arch, 4096, 4095).forward, 1) << arch;
    EXPECT_LE(plan::WindowedAttentionShare(arch, 4096, 4095).backward, 1) << arch;
    EXPECT_LE(plan::WindowedAttentionShare(arch, 1024, 128).forward, 1) << arch;
  }
  EXPECT_DOUBLE_EQ(plan::WindowedAttentionShare("Blackwell Ultra", 1024, 128).forward, 1);
}

// FP8 attention (software.fp8_attention) runs the attention at cuDNN's measured speed over its
// BF16 kernel on the same GPU (NVIDIA/cudnn-frontend's SDPA training benchmark, forward +
// backward), per-tensor or block-scaled as the recipe scales: faster on Blackwell at long
// sequences, slower block-scaled at short ones, and slower on Hopper from about 5,500 tokens,
// where cuDNN 9.19's FP8 backward is slower than its BF16 one. The rest of the step does not
// change, and a kernel other than the fused one keeps its rate (the spec refuses the pair).
TEST(SoftwareStackTest, Fp8AttentionRunsAtItsMeasuredSpeed) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  // BF16 attention's time in the step (what halves when its rate doubles), and the ratio of that
  // time to FP8 attention's.
  auto speedup = [&](model::Spec s, model::Fp8Recipe recipe, int sequence) {
    s.workload.model.sequence = sequence;
    s.workload.fp8_recipe = recipe;
    const int gpus = s.cluster.nodes.TotalGpus();
    const double bf16 = ComputeSeconds(model, s, gpus);
    const double attention = AttentionSeconds(s, gpus);
    EXPECT_GT(attention, 0);
    s.workload.fp8_attention = true;
    const double fp8_attention = attention - (bf16 - ComputeSeconds(model, s, gpus));
    return attention / fp8_attention;
  };
  const model::Spec gb200 = NemoSpec(kNemoFp8[7]);  // Llama 3 8B on 8 GB200
  ASSERT_EQ(gb200.cluster.nodes.gpu.architecture, "Blackwell");
  using model::Fp8Recipe;
  EXPECT_NEAR(speedup(gb200, Fp8Recipe::kCurrent, 8192), (1.336 + 4.090) / (1.093 + 3.802), 1e-6);
  EXPECT_NEAR(speedup(gb200, Fp8Recipe::kDelayed, 32768), (22.428 + 73.209) / (16.482 + 52.660),
              1e-6);
  EXPECT_NEAR(speedup(gb200, Fp8Recipe::kMxfp8, 4096), (0.391 + 1.173) / (0.321 + 1.333), 1e-6);
  EXPECT_LT(speedup(gb200, Fp8Recipe::kMxfp8, 2048), 1);  // block scaling costs more than it saves
  NemoRow row = kNemoFp8[7];
  row.gpu = "GB300-NVL72";
  EXPECT_NEAR(speedup(NemoSpec(row), Fp8Recipe::kCurrent, 4096), (0.303 + 1.096) / (0.218 + 0.986),
              1e-6);
  const model::Spec h100 = NemoSpec(kNemoFp8[0]);  // Llama 3 8B on 8 H100
  ASSERT_EQ(h100.cluster.nodes.gpu.architecture, "Hopper");
  EXPECT_NEAR(speedup(h100, Fp8Recipe::kCurrent, 2048), (0.142 + 0.464) / (0.098 + 0.437), 1e-6);
  EXPECT_NEAR(speedup(h100, Fp8Recipe::kCurrent, 8192), (1.708 + 5.083) / (1.141 + 6.392), 1e-6);
  EXPECT_LT(speedup(h100, Fp8Recipe::kCurrent, 16384), 0.8);
  model::Spec triton = gb200;
  triton.workload.attention_kernel = model::AttentionKernel::kTriton2022;
  const double triton_bf16 = ComputeSeconds(model, triton, 8);
  triton.workload.fp8_attention = true;
  EXPECT_DOUBLE_EQ(ComputeSeconds(model, triton, 8), triton_bf16);
  // Between measured lengths, linear in log2 of the length.
  EXPECT_NEAR(speedup(gb200, Fp8Recipe::kCurrent, 11585),
              ((1.336 + 4.090) / (1.093 + 3.802) + (5.091 + 16.573) / (4.166 + 13.471)) / 2, 0.002);
}

// A one-node spec of a small model on `gpu` ("H100, count: 8") with one catalog field overridden.
Result<model::Spec> WithGpuField(std::string_view gpu, std::string_view key,
                                 std::string_view value) {
  return model::ParseSpec(fmt::format(R"(name: t
nodes:
  count: 1
  gpu: {{model: {}, {}: {}}}
workload:
  model: {{name: m, layers: 8, hidden: 1024, heads: 8, vocab: 32000, sequence: 2048}}
  parallel: {{strategy: zero1}}
  batch: {{micro: 1}})",
                                      gpu, key, value),
                          "t.yaml");
}

// GB200 borrows B200's measured ceilings, and its datasheet prints peaks 2,500/2,250 = 1.111x
// B200's; cuDNN's prefill benchmark (the same cuDNN 9.27) runs the same attention kernel 1.036x
// faster on GB200 (geometric mean over 2,048-16,384 tokens), so the step model runs GB200's tensor
// work at 93.2 % of its printed peaks (catalog `sustained_clock`): 1.036x B200's, GEMMs and
// attention alike. A spec may set it (`nodes.gpu.sustained_clock`).
TEST(SoftwareStackTest, Gb200SustainsItsMeasuredLeadOverB200) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  NemoRow row = kNemoFp8[7];  // Llama 3 8B on 8 GB200
  ASSERT_STREQ(row.gpu, "GB200-NVL72");
  const model::Spec gb200 = NemoSpec(row);
  row.gpu = "B200-SXM-180GB";
  const model::Spec b200 = NemoSpec(row);
  EXPECT_NEAR(gb200.cluster.nodes.gpu.sustained_clock, 0.932, 1e-9);
  EXPECT_EQ(b200.cluster.nodes.gpu.sustained_clock, 1.0);
  auto compute = [&](model::Spec s, model::AttentionKernel kernel, double fp8_ceiling) {
    s.workload.attention_kernel = kernel;
    s.cluster.nodes.gpu.fp8_matmul_efficiency = fp8_ceiling;
    return ComputeSeconds(model, s, row.gpus);
  };
  using model::AttentionKernel;
  const double to_triton = Eff().attention / plan::kTriton2022AttentionOfPeak - 1;
  const double e = b200.cluster.nodes.gpu.fp8_matmul_efficiency;
  auto attention = [&](const model::Spec& s) {
    return (compute(s, AttentionKernel::kTriton2022, e) - compute(s, AttentionKernel::kNative, e)) /
           to_triton;
  };
  // Halving the FP8 ceiling adds the FP8 GEMMs' time once.
  auto gemms = [&](const model::Spec& s) {
    return compute(s, AttentionKernel::kNative, e / 2) - compute(s, AttentionKernel::kNative, e);
  };
  const double lead = 2500.0 / 2250 * 0.932;
  EXPECT_NEAR(attention(b200) / attention(gb200), lead, 1e-6);
  // ml-engineering's MAMF measured on GB200 itself (1,822 of 2,500 TFLOPS in BF16, 3,615.6 of
  // 5,000 in FP8) is what the borrowed ceilings give at the sustained clock: 0.6 and 1.2 points
  // below.
  const model::GpuSpec& g = gb200.cluster.nodes.gpu;
  EXPECT_NEAR(g.MatmulEfficiency(model::Precision::kBf16) * g.sustained_clock, 1822.0 / 2500,
              0.012);
  EXPECT_NEAR(g.MatmulEfficiency(model::Precision::kFp8) * g.sustained_clock, 3615.6 / 5000,
              0.0125);
  EXPECT_NEAR(gemms(b200) / gemms(gb200), lead, 0.01);  // their fixed per-kernel time scales too
  model::Spec as_printed = gb200;
  as_printed.cluster.nodes.gpu.sustained_clock = 1;
  EXPECT_NEAR(attention(b200) / attention(as_printed), 2500.0 / 2250, 1e-6);
  // MFU stays against the printed peak (FP8's here), as published MFUs are.
  auto step = model.Step(gb200, LayoutOf(gb200), row.gpus);
  ASSERT_TRUE(step);
  EXPECT_NEAR(step->mfu, step->model_flops / (row.gpus * 5000e12 * step->step_s), 1e-12);
  // A spec may state it; nothing runs at no clock.
  auto stated = WithGpuField("GB200, count: 4", "sustained_clock", "100 %");
  ASSERT_TRUE(stated) << stated.error().message;
  EXPECT_EQ(stated->cluster.nodes.gpu.sustained_clock, 1.0);
  auto none = WithGpuField("GB200, count: 4", "sustained_clock", "0 %");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("nodes.gpu.sustained_clock: must be above 0 %"),
            std::string::npos)
      << none.error().message;
}

// Memory-bound work (element-wise layers, casts, the loss, the optimizer, the sharding copies)
// runs at the share of the printed HBM bandwidth a streaming kernel measures on that GPU (catalog
// `memory_efficiency`: torch.clone on an H100 SXM, 3,003 of 3,350 GB/s), not at the printed peak,
// which no kernel reaches; the GEMMs and attention do not move. A spec may state it.
TEST(SoftwareStackTest, MemoryBoundWorkRunsAtTheMeasuredStreamingRate) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  const model::Spec spec = runs::MegatronSpec(runs::kMegatronRows[0]);
  const int gpus = spec.TotalGpus();
  const model::GpuSpec& gpu = spec.cluster.nodes.gpu;
  ASSERT_EQ(gpu.name, "H100-SXM5-80GB");
  EXPECT_NEAR(gpu.memory_efficiency, 0.896, 1e-9);
  EXPECT_NEAR(gpu.StreamingBytesPerS(), 3350e9 * 0.896, 1);
  model::Spec at_peak = spec;
  at_peak.cluster.nodes.gpu.memory_efficiency = 1;
  auto measured = model.Step(spec, LayoutOf(spec), gpus);
  auto printed = model.Step(at_peak, LayoutOf(at_peak), gpus);
  ASSERT_TRUE(measured && printed);
  // The optimizer's bytes over the streaming rate: 1/0.896 of its time at the peak.
  EXPECT_NEAR(measured->optimizer_s / printed->optimizer_s, 1 / 0.896, 1e-9);
  // Only the memory-bound share of the compute grows, and by that factor at most (the GEMMs and
  // attention keep their rates); the collectives keep their time.
  EXPECT_GT(measured->compute_s, printed->compute_s);
  EXPECT_LT(measured->compute_s, printed->compute_s / 0.896);
  EXPECT_DOUBLE_EQ(measured->tp_comm_s, printed->tp_comm_s);
  EXPECT_DOUBLE_EQ(measured->dp_comm_total_s, printed->dp_comm_total_s);
  EXPECT_DOUBLE_EQ(measured->pp_comm_s, printed->pp_comm_s);
  // Halving the rate doubles the memory-bound time: the compute grows by (1/r - 1) of the
  // memory-bound time at the peak, at r = 0.448 as at 0.896.
  model::Spec half = spec;
  half.cluster.nodes.gpu.memory_efficiency = 0.448;
  auto slow = model.Step(half, LayoutOf(half), gpus);
  ASSERT_TRUE(slow);
  EXPECT_NEAR((slow->compute_s - printed->compute_s) / (measured->compute_s - printed->compute_s),
              (1 / 0.448 - 1) / (1 / 0.896 - 1), 1e-6);
  auto stated = WithGpuField("H100, count: 8", "memory_efficiency", "100 %");
  ASSERT_TRUE(stated) << stated.error().message;
  EXPECT_EQ(stated->cluster.nodes.gpu.memory_efficiency, 1.0);
  for (const char* bad : {"0 %", "120 %"}) {
    auto r = WithGpuField("H100, count: 8", "memory_efficiency", bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("nodes.gpu.memory_efficiency: must be above 0 % and at most "
                                     "100 %"),
              std::string::npos)
        << r.error().message;
  }
}

TEST(SoftwareStackTest, PresetsSetTheirWords) {
  // A one-node spec of a small model with the given GPU, precision (none: the default, which a
  // test may still set after the software), layout and software.
  auto parse = [](std::string_view gpu, std::string_view precision, std::string_view parallel,
                  std::string_view batch, std::string_view software) {
    return model::ParseSpec(
        fmt::format(R"(name: t
nodes:
  count: 1
  gpu: {{model: {}, count: 8}}
workload:
  model: {{name: m, layers: 8, hidden: 1024, heads: 8, vocab: 32000, sequence: 2048}}{}
  parallel: {}
  batch: {}
  software: {})",
                    gpu,
                    precision.empty() ? std::string() : fmt::format("\n  precision: {}", precision),
                    parallel, batch, software),
        "t.yaml");
  };
  auto with = [&](std::string_view software, const char* gpu = "H100-SXM5-80GB") {
    auto s = parse(gpu, "", "{strategy: zero1, tensor: 2}", "{micro: 1}", software);
    EXPECT_TRUE(s) << s.error().message;
    return s ? s->workload : model::Workload{};
  };
  auto w = with("{stack: megatron-2021}");
  EXPECT_FALSE(w.tp_comm_overlap);
  EXPECT_FALSE(w.pp_comm_overlap);  // its interleaved schedule waited for its sends
  EXPECT_TRUE(with("{stack: megatron-2021, pp_comm_overlap: true}").pp_comm_overlap);
  EXPECT_FALSE(with("{stack: pytorch-fsdp2}").tp_comm_overlap);  // AsyncTP is opt-in
  EXPECT_FALSE(with("{stack: deepspeed-zero3}").tp_comm_overlap);
  EXPECT_EQ(w.grad_reduce_bytes, 4);
  w = with("{stack: megatron-core-2024}");
  EXPECT_TRUE(w.tp_comm_overlap && w.dp_comm_overlap && w.pp_comm_overlap);
  EXPECT_EQ(w.grad_reduce_bytes, 2);
  w = with("{stack: composer-2023}");
  EXPECT_EQ(w.attention_kernel, model::AttentionKernel::kTriton2022);
  EXPECT_EQ(w.grad_reduce_bytes, 4);
  EXPECT_EQ(with("{stack: composer-2023, attention_kernel: native}").attention_kernel,
            model::AttentionKernel::kNative);
  EXPECT_EQ(with("{stack: megatron-core-2024, attention_kernel: mma-sync}").attention_kernel,
            model::AttentionKernel::kMmaSync);
  // PyTorch's SDPA runs FlashAttention-2 (mma.sync) on Hopper; B200 gets cuDNN's kernel.
  EXPECT_EQ(with("{stack: pytorch-fsdp2}").attention_kernel, model::AttentionKernel::kMmaSync);
  EXPECT_EQ(with("{stack: deepspeed-zero3}").attention_kernel, model::AttentionKernel::kMmaSync);
  EXPECT_EQ(with("{stack: pytorch-fsdp2}", "B200-SXM-180GB").attention_kernel,
            model::AttentionKernel::kNative);
  EXPECT_TRUE(with("{stack: pytorch-fsdp2}").software_departures.empty());
  // Eager layers on fms-fsdp's stack; fused (Megatron, Transformer Engine, torch.compile) else.
  EXPECT_EQ(with("{stack: pytorch-fsdp1}").elementwise, model::Elementwise::kEager);
  EXPECT_EQ(with("{stack: pytorch-fsdp2}").elementwise, model::Elementwise::kFused);
  EXPECT_EQ(with("{stack: composer-2023}").elementwise, model::Elementwise::kFused);
  EXPECT_THAT(with("{stack: deepspeed-zero3, elementwise: eager}").software_departures,
              ::testing::ElementsAre("elementwise eager"));
  EXPECT_THAT(with("{stack: pytorch-fsdp2, attention_kernel: native}").software_departures,
              ::testing::ElementsAre("attention_kernel native"));
  // Unfused attention is cuBLAS GEMMs, native on Hopper, whatever the stack.
  EXPECT_EQ(with("{stack: pytorch-fsdp2}\n  flash_attention: false").attention_kernel,
            model::AttentionKernel::kNative);
  // The loss: bytes per logit at its backward.
  EXPECT_EQ(w.bytes_per_logit, 2);  // composer-2023: fused_crossentropy
  EXPECT_EQ(with("{stack: megatron-core-2024}").bytes_per_logit, 4);
  EXPECT_EQ(with("{stack: nemo-2025}").bytes_per_logit, 2);
  EXPECT_EQ(with("{stack: pytorch-fsdp2}").bytes_per_logit, 12);
  EXPECT_EQ(with("{stack: nemo-2025, cross_entropy: unfused}").bytes_per_logit, 12);
  // OLMo-core's: a fused kernel on the fp32 logits its model returns, and their fp32 gradient.
  EXPECT_EQ(with("{stack: pytorch-fsdp2, cross_entropy: fused-fp32}").bytes_per_logit, 8);
  // And the bytes it moves per logit in the step, with Composer's training metrics (two fp32
  // cross-entropies after every micro-batch) on its stack alone.
  EXPECT_EQ(with("{stack: megatron-core-2024}").loss_traffic_per_logit, 52);
  EXPECT_EQ(with("{stack: nemo-2025}").loss_traffic_per_logit, 8);
  EXPECT_EQ(with("{stack: pytorch-fsdp2}").loss_traffic_per_logit, 48);
  EXPECT_EQ(with("{stack: pytorch-fsdp2, cross_entropy: fused-fp32}").loss_traffic_per_logit, 44);
  EXPECT_EQ(with("{stack: composer-2023}").loss_traffic_per_logit, 8 + 28);
  EXPECT_EQ(with("{stack: composer-2023, train_metrics: false}").loss_traffic_per_logit, 8);
  EXPECT_EQ(with("{stack: megatron-core-2024, train_metrics: true}").loss_traffic_per_logit,
            52 + 28);
  // Composer's amp_fp8 runs no autocast: the metrics' log_softmax reads the bf16 logits.
  EXPECT_EQ(with("{stack: composer-2023}\n  precision: fp8").loss_traffic_per_logit, 8 + 16);
  EXPECT_THAT(with("{stack: composer-2023, train_metrics: false}").software_departures,
              ::testing::ElementsAre("train_metrics false"));
  // FP8 scaling: delayed in Megatron-Core's 2024 default, current in NeMo's 2025 recipes;
  // MXFP8 only where the tensor cores have block scaling.
  EXPECT_EQ(with("{stack: megatron-core-2024}").fp8_recipe, model::Fp8Recipe::kDelayed);
  EXPECT_EQ(with("{stack: nemo-2025}").fp8_recipe, model::Fp8Recipe::kCurrent);
  EXPECT_EQ(with("{stack: composer-2023}").fp8_recipe, model::Fp8Recipe::kDelayed);  // TE v0.10
  EXPECT_EQ(with("{stack: nemo-2025, fp8_recipe: mxfp8}", "B200-SXM-180GB").fp8_recipe,
            model::Fp8Recipe::kMxfp8);
  EXPECT_THAT(with("{stack: nemo-2025, fp8_recipe: mxfp8}", "B200-SXM-180GB").software_departures,
              ::testing::ElementsAre("fp8_recipe mxfp8"));
  // A one-node spec's error message, or "" when it parses.
  auto refused = [&](std::string_view precision, std::string_view strategy,
                     std::string_view software, const char* gpu = "H100-SXM5-80GB") {
    auto s =
        parse(gpu, precision, fmt::format("{{strategy: {}}}", strategy), "{micro: 1}", software);
    return s ? std::string() : s.error().message;
  };
  EXPECT_THAT(refused("fp8", "zero1", "{fp8_recipe: mxfp8}"),
              ::testing::HasSubstr("MXFP8 needs Blackwell"));
  // FP8 parameters: on in nemo-2025 with an FP8 or FP4 recipe (Megatron Bridge's mixed-precision
  // configs), off in megatron-core-2024 (Megatron-LM's default) and in BF16; refused, stated,
  // where they mean nothing.
  auto with_fp8 = [&](std::string_view software, std::string_view strategy = "zero1",
                      const char* gpu = "H100-SXM5-80GB") {
    auto s = parse(gpu, "fp8", fmt::format("{{strategy: {}}}", strategy), "{micro: 1}", software);
    EXPECT_TRUE(s) << s.error().message;
    return s ? s->workload : model::Workload{};
  };
  // The preset asks for them whatever the strategy; each layout's strategy says whether it runs
  // them (Fp8ParamsFor), and what its parameter gather moves per linear weight.
  auto runs = [](const model::Workload& wl) { return wl.Fp8ParamsFor(wl.strategy); };
  EXPECT_FALSE(with("{stack: nemo-2025}").fp8_param_gather);
  EXPECT_TRUE(runs(with_fp8("{stack: nemo-2025}")));
  EXPECT_TRUE(runs(with_fp8("{stack: nemo-2025}", "fsdp")));
  const model::Workload ddp = with_fp8("{stack: nemo-2025}", "ddp");
  EXPECT_TRUE(ddp.fp8_param_gather);
  EXPECT_FALSE(runs(ddp));
  EXPECT_EQ(ddp.GatheredLinearWeightBytes(model::Strategy::kDdp), 2);
  EXPECT_EQ(ddp.GatheredLinearWeightBytes(model::Strategy::kZero1), 1);
  const model::Workload mx =
      with_fp8("{stack: nemo-2025, fp8_recipe: mxfp8}", "zero1", "B200-SXM-180GB");
  EXPECT_TRUE(runs(mx));
  EXPECT_EQ(mx.GatheredLinearWeightBytes(model::Strategy::kZero1), 2);  // bf16, gradient buffer
  EXPECT_FALSE(mx.Fp8ParamsFor(model::Strategy::kFsdp));
  EXPECT_FALSE(runs(with_fp8("{stack: nemo-2025, fp8_recipe: mxfp8}", "fsdp", "B200-SXM-180GB")));
  auto nvfp4 =
      parse("B200-SXM-180GB", "fp4", "{strategy: zero1}", "{micro: 1}", "{stack: nemo-2025}");
  ASSERT_TRUE(nvfp4) << nvfp4.error().message;
  EXPECT_TRUE(runs(nvfp4->workload));
  EXPECT_EQ(nvfp4->workload.GatheredLinearWeightBytes(model::Strategy::kZero2), 0.5 + 1.0 / 16);
  EXPECT_EQ(nvfp4->workload.GatheredLinearWeightBytes(model::Strategy::kZero3), 2);
  EXPECT_TRUE(with_fp8("{stack: nemo-2025}").software_departures.empty());
  EXPECT_TRUE(ddp.software_departures.empty());
  EXPECT_FALSE(with_fp8("{stack: megatron-core-2024}").fp8_param_gather);
  EXPECT_FALSE(with("{stack: megatron-core-2024}").fp8_param_gather);
  EXPECT_EQ(refused("fp8", "zero1", "{fp8_param_gather: true}"), "");
  EXPECT_EQ(refused("fp8", "fsdp", "{fp8_param_gather: true}"), "");
  EXPECT_THAT(
      refused("bf16", "zero1", "{fp8_param_gather: true}"),
      ::testing::HasSubstr("FP8 parameters need precision fp8 or fp4 (the spec says bf16)"));
  EXPECT_THAT(refused("fp8", "ddp", "{fp8_param_gather: true}"),
              ::testing::HasSubstr("ddp has no parameter gather"));
  EXPECT_EQ(
      refused("fp8", "zero1", "{fp8_recipe: mxfp8, fp8_param_gather: true}", "B200-SXM-180GB"), "");
  EXPECT_THAT(
      refused("fp8", "fsdp", "{fp8_recipe: mxfp8, fp8_param_gather: true}", "B200-SXM-180GB"),
      ::testing::HasSubstr("Megatron-FSDP's are not"));
  EXPECT_EQ(refused("bf16", "zero1", "{fp8_param_gather: false}"), "");
  EXPECT_EQ(refused("fp8", "zero1", "{stack: nemo-2025, fp8_param_gather: true}"), "");
  // On FSDP2 they are torchao's float8 all-gather: fully sharded layouts, per-tensor scaling, off
  // in the preset; the plan's zero2 row (SHARD_GRAD_OP) goes without them; other PyTorch stacks
  // and DeepSpeed's are refused.
  EXPECT_FALSE(with_fp8("{stack: pytorch-fsdp2}", "fsdp").fp8_param_gather);
  const model::Workload torchao =
      with_fp8("{stack: pytorch-fsdp2, fp8_param_gather: true}", "fsdp");
  EXPECT_TRUE(runs(torchao));
  EXPECT_EQ(torchao.GatheredLinearWeightBytes(model::Strategy::kFsdp), 1);
  EXPECT_FALSE(torchao.Fp8ParamsFor(model::Strategy::kZero2));
  EXPECT_EQ(torchao.GatheredLinearWeightBytes(model::Strategy::kZero2), 2);
  EXPECT_EQ(refused("fp8", "zero3", "{stack: pytorch-fsdp2, fp8_param_gather: true}"), "");
  EXPECT_THAT(refused("fp8", "zero2", "{stack: pytorch-fsdp2, fp8_param_gather: true}"),
              ::testing::HasSubstr("modelled for fsdp and zero3 with per-tensor scaling, "
                                   "fp8_recipe current or delayed (the spec says zero2)"));
  EXPECT_THAT(
      refused("fp8", "fsdp", "{stack: pytorch-fsdp2, fp8_recipe: mxfp8, fp8_param_gather: true}",
              "B200-SXM-180GB"),
      ::testing::HasSubstr("(the spec says fsdp, block-scaled)"));
  {
    // torchao swaps nn.Linear layers: a mixture of experts' grouped experts are not.
    auto moe = model::ParseSpec(R"(name: t
nodes:
  count: 1
  gpu: {model: H100-SXM5-80GB, count: 8}
workload:
  model: {name: m, layers: 8, hidden: 1024, heads: 8, vocab: 32000, sequence: 2048,
          moe: {experts: 8, top_k: 2, ffn_hidden: 1024}}
  precision: fp8
  parallel: {strategy: fsdp}
  batch: {micro: 1}
  software: {stack: pytorch-fsdp2, fp8_param_gather: true})",
                                "t.yaml");
    ASSERT_FALSE(moe);
    EXPECT_THAT(moe.error().message, ::testing::HasSubstr("grouped experts are not nn.Linear"));
  }
  EXPECT_THAT(refused("fp8", "fsdp", "{stack: pytorch-fsdp1, fp8_param_gather: true}"),
              ::testing::HasSubstr("the pytorch-fsdp1 stack's are not modelled"));
  EXPECT_THAT(refused("fp8", "zero3", "{stack: deepspeed-zero3, fp8_param_gather: true}"),
              ::testing::HasSubstr("the deepspeed-zero3 stack's are not modelled"));
  // FP8 attention: off in every preset, stated per run; Transformer Engine's fused kernel on
  // Megatron-Core's stacks with FP8 precision, refused elsewhere.
  EXPECT_FALSE(with("{stack: nemo-2025}").fp8_attention);
  EXPECT_EQ(refused("fp8", "zero1", "{fp8_attention: true}"), "");
  EXPECT_EQ(refused("fp8", "zero1", "{fp8_recipe: mxfp8, fp8_attention: true}", "B200-SXM-180GB"),
            "");
  // Beside NVFP4's GEMMs too (MLPerf v5.1's 8B NVFP4 configs), scaled per tensor.
  EXPECT_EQ(refused("fp4", "zero1", "{fp8_attention: true}", "B200-SXM-180GB"), "");
  EXPECT_THAT(
      refused("bf16", "zero1", "{fp8_attention: true}"),
      ::testing::HasSubstr("FP8 attention needs precision fp8 or fp4 (the spec says bf16)"));
  EXPECT_THAT(refused("fp8", "fsdp", "{stack: pytorch-fsdp2, fp8_attention: true}"),
              ::testing::HasSubstr("the pytorch-fsdp2 stack's attention is not"));
  EXPECT_THAT(refused("fp8", "zero1", "{attention_kernel: triton-2022, fp8_attention: true}"),
              ::testing::HasSubstr("needs flash_attention: true and attention_kernel: native"));
  // The first chunk's gather after its optimizer step: on in nemo-2025's preset for the
  // distributed optimizer on layouts with virtual stages, but with MXFP8; refused where stated
  // off the distributed optimizer, without its overlapped gathers or off Megatron-Core's stacks.
  EXPECT_EQ(with("{stack: nemo-2025}").optimizer_step_gather,
            model::OptimizerStepGather::kWithVirtualStages);
  EXPECT_EQ(with("{stack: megatron-core-2024}").optimizer_step_gather,
            model::OptimizerStepGather::kNever);
  EXPECT_EQ(with("{stack: nemo-2025, fp8_recipe: mxfp8}", "B200-SXM-180GB").optimizer_step_gather,
            model::OptimizerStepGather::kNever);
  // Nor with NVFP4 (Megatron Bridge's overrides.py), which takes no FP8 recipe.
  {
    auto fp4 = parse("B200-SXM-180GB", "fp4", "{strategy: zero1, tensor: 2}", "{micro: 1}",
                     "{stack: nemo-2025}");
    ASSERT_TRUE(fp4) << fp4.error().message;
    EXPECT_EQ(fp4->workload.optimizer_step_gather, model::OptimizerStepGather::kNever);
    EXPECT_TRUE(fp4->workload.software_departures.empty());
    auto recipe = parse("B200-SXM-180GB", "fp4", "{strategy: zero1, tensor: 2}", "{micro: 1}",
                        "{stack: nemo-2025, fp8_recipe: current}");
    ASSERT_FALSE(recipe);
    EXPECT_THAT(recipe.error().message,
                ::testing::HasSubstr("fp4 is NVFP4's own recipe; drop fp8_recipe"));
  }
  // nemo-2025's preset is per layout (on with virtual stages); a stated word holds for every
  // layout and departs from the preset where it differs on the spec's own.
  auto interleaved = [&](std::string_view software, std::string_view strategy = "zero1") {
    auto s = parse("H100-SXM5-80GB", "",
                   fmt::format("{{strategy: {}, pipeline: 2, virtual_stages: 2}}", strategy),
                   "{micro: 1, accumulation: 4}", software);
    EXPECT_TRUE(s) << s.error().message;
    return s ? s->workload : model::Workload{};
  };
  model::Workload iw = interleaved("{stack: nemo-2025}");
  EXPECT_TRUE(iw.GathersAfterOptimizerStep(iw.strategy, 2));
  EXPECT_FALSE(iw.GathersAfterOptimizerStep(iw.strategy, 1));
  EXPECT_TRUE(iw.software_departures.empty());
  iw = interleaved("{stack: nemo-2025, overlap_param_gather_with_optimizer_step: true}");
  EXPECT_TRUE(iw.GathersAfterOptimizerStep(iw.strategy, 1));
  EXPECT_FALSE(iw.GathersAfterOptimizerStep(model::Strategy::kFsdp, 2));  // a searched layout
  EXPECT_TRUE(iw.software_departures.empty());
  iw = interleaved("{stack: nemo-2025, overlap_param_gather_with_optimizer_step: false}");
  EXPECT_FALSE(iw.GathersAfterOptimizerStep(iw.strategy, 2));
  EXPECT_THAT(iw.software_departures,
              ::testing::ElementsAre("overlap_param_gather_with_optimizer_step false"));
  EXPECT_EQ(interleaved("{stack: megatron-core-2024}").optimizer_step_gather,
            model::OptimizerStepGather::kNever);
  EXPECT_EQ(interleaved("{stack: nemo-2025}", "zero2").optimizer_step_gather,
            model::OptimizerStepGather::kNever);
  EXPECT_EQ(interleaved("{stack: nemo-2025, dp_comm_overlap: false}").optimizer_step_gather,
            model::OptimizerStepGather::kNever);
  // A word with no value is the preset's, not a statement.
  iw = interleaved("{stack: nemo-2025, overlap_param_gather_with_optimizer_step: ~}");
  EXPECT_EQ(iw.optimizer_step_gather, model::OptimizerStepGather::kWithVirtualStages);
  EXPECT_EQ(refused("bf16", "zero1", "{overlap_param_gather_with_optimizer_step: true}"), "");
  EXPECT_THAT(refused("bf16", "fsdp", "{overlap_param_gather_with_optimizer_step: true}"),
              ::testing::HasSubstr("the distributed optimizer's (strategy zero1)"));
  EXPECT_THAT(refused("bf16", "zero1",
                      "{overlap_param_gather_with_optimizer_step: true, dp_comm_overlap: false}"),
              ::testing::HasSubstr("needs dp_comm_overlap"));
  EXPECT_THAT(refused("bf16", "zero1",
                      "{stack: deepspeed-zero3, overlap_param_gather_with_optimizer_step: true}"),
              ::testing::HasSubstr("not the deepspeed-zero3 stack's"));
  // The sharding implementation follows the stack.
  EXPECT_EQ(w.sharding_impl, model::ShardingImpl::kFsdp1);  // composer-2023
  EXPECT_EQ(with("{stack: pytorch-fsdp2}").sharding_impl, model::ShardingImpl::kFsdp2);
  EXPECT_EQ(with("{stack: deepspeed-zero3}").sharding_impl, model::ShardingImpl::kDeepSpeed);
  EXPECT_EQ(with("{stack: nemo-2025}").sharding_impl, model::ShardingImpl::kMegatron);
  // pytorch-fsdp1 (fms-fsdp, llama-recipes): FSDP1 with the bf16 MixedPrecision policy, SDPA's
  // FlashAttention-2 on Hopper, PyTorch's cross_entropy, no TP overlap, no training metrics.
  w = with("{stack: pytorch-fsdp1}");
  EXPECT_EQ(w.sharding_impl, model::ShardingImpl::kFsdp1);
  EXPECT_EQ(w.grad_reduce_bytes, 2);
  EXPECT_EQ(w.attention_kernel, model::AttentionKernel::kMmaSync);
  EXPECT_FALSE(w.tp_comm_overlap);
  EXPECT_TRUE(w.dp_comm_overlap);
  EXPECT_EQ(w.bytes_per_logit, 12);
  EXPECT_EQ(w.loss_traffic_per_logit, 48);
  EXPECT_EQ(w.metrics_bytes_per_logit, 0);
  EXPECT_TRUE(w.sp_saves_gathered_input);
  EXPECT_TRUE(w.software_departures.empty());
  EXPECT_EQ(with("{stack: pytorch-fsdp1}", "A100-SXM4-80GB").attention_kernel,
            model::AttentionKernel::kNative);
  // Sequence parallelism's saved inputs: gathered by PyTorch's DTensor TP only.
  EXPECT_TRUE(with("{stack: pytorch-fsdp2}").sp_saves_gathered_input);
  EXPECT_FALSE(with("{stack: nemo-2025}").sp_saves_gathered_input);
  EXPECT_FALSE(with("{stack: megatron-core-2024}").sp_saves_gathered_input);
  EXPECT_TRUE(
      with("{stack: megatron-core-2024, sp_saved_input: gathered}").sp_saves_gathered_input);
  w = with("{stack: megatron-2021, tp_comm_overlap: true, grad_reduce: bf16}");
  EXPECT_TRUE(w.tp_comm_overlap);
  EXPECT_EQ(w.grad_reduce_bytes, 2);
  EXPECT_FALSE(model::ParseSpec(
      "name: t\nnodes: {count: 1, gpu: {model: H100-SXM5-80GB, count: 8}}\nworkload:\n  model: "
      "{name: m, layers: 8, hidden: 1024, heads: 8, vocab: 32000, sequence: 2048}\n  parallel: "
      "{strategy: zero1}\n  batch: {micro: 1}\n  software: {stack: megatron-2019}\n",
      "t.yaml"));
  auto with_dropout = [](const std::string& p) {
    return model::ParseSpec(
        "name: t\nnodes: {count: 1, gpu: {model: H100-SXM5-80GB, count: 8}}\nworkload:\n  model: "
        "{name: m, layers: 8, hidden: 1024, heads: 8, vocab: 32000, sequence: 2048, dropout: " +
            p + "}\n  parallel: {strategy: zero1}\n  batch: {micro: 1}\n",
        "t.yaml");
  };
  for (const char* bad : {"1.5", "1", "-0.1", ".nan"}) {
    auto s = with_dropout(bad);
    ASSERT_FALSE(s) << bad;
    EXPECT_THAT(s.error().message, ::testing::HasSubstr("workload.model.dropout")) << bad;
  }
  EXPECT_TRUE(with_dropout("0"));
  EXPECT_TRUE(with_dropout("0.1"));
}

}  // namespace
}  // namespace gpufleet::sim
