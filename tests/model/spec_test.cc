#include "model/spec.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "../common/replace.h"

namespace gpufleet::model {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A small valid spec; tests replace one line to make it wrong. Line numbers matter.
constexpr const char* kSpec = R"(name: t-16gpu
nodes:
  count: 2
  gpu: {model: A100-SXM4-80GB, count: 8}
  nics:
    - {role: compute, model: ConnectX-7, count: 2, ports: 2, speed: 400 Gb/s}
    - {role: storage, model: Ethernet-100G, count: 1, speed: 100 Gb/s}
fabrics:
  compute: {type: infiniband, speed: 400 Gb/s, switch: QM9700}
storage:
  - {name: pfs, tier: warm, write: 10 GB/s, read: 20 GB/s}
workload:
  model: {name: m, layers: 24, hidden: 2048, heads: 16, vocab: 50257, sequence: 2048}
  parallel: {strategy: fsdp, tensor: 1}
  batch: {micro: 4, accumulation: 2}
)";

using test::Replace;

std::string ErrorOf(const std::string& text) {
  Result<Spec> s = ParseSpec(text, "t.yaml");
  EXPECT_FALSE(s) << "expected an error";
  if (s) return "";
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.error().message.find('\n'), std::string::npos) << "one line";
  return s.error().message;
}

TEST(ClusterSpecTest, LoadsTheSmallSpecWithDefaults) {
  Result<Spec> s = ParseSpec(kSpec, "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->TotalGpus(), 16);
  EXPECT_EQ(s->DataParallel(), 16);
  EXPECT_EQ(s->workload.global_batch, 4 * 2 * 16);
  EXPECT_EQ(s->workload.model.kv_heads, 16);
  EXPECT_EQ(s->workload.model.ffn_hidden, 4 * 2048);
  EXPECT_EQ(s->workload.checkpoint_tier, "pfs");
  EXPECT_DOUBLE_EQ(s->cluster.nodes.Bandwidth(NicRole::kCompute), 4 * 50e9);
  EXPECT_DOUBLE_EQ(s->cluster.scale_up.bandwidth_bytes_per_s, 600e9);  // from the GPU
}

// A one-node spec needs no fabrics: section; its NVLink still comes from the GPU (it was zero,
// and `plan` predicted an infinite step).
TEST(ClusterSpecTest, ScaleUpComesFromTheGpuWithoutAFabricsSection) {
  std::string text = Replace(kSpec, "  count: 2\n", "  count: 1\n");
  text = Replace(text, "fabrics:\n  compute: {type: infiniband, speed: 400 Gb/s, switch: QM9700}\n",
                 "");
  Result<Spec> s = ParseSpec(text, "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->cluster.scale_up.type, "nvlink3");  // A100
  EXPECT_DOUBLE_EQ(s->cluster.scale_up.bandwidth_bytes_per_s, 600e9);
  EXPECT_TRUE(s->cluster.scale_up.switched);
}

// `batch.global` alone sets the accumulation (issue 13); it must divide.
TEST(ClusterSpecTest, GlobalBatchAloneDerivesTheAccumulation) {
  Result<Spec> s = ParseSpec(
      Replace(kSpec, "batch: {micro: 4, accumulation: 2}", "batch: {micro: 4, global: 192}"),
      "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->workload.accumulation, 3);  // 192 / (4 x 16)
  EXPECT_THAT(ErrorOf(Replace(kSpec, "batch: {micro: 4, accumulation: 2}",
                              "batch: {micro: 4, global: 100}")),
              HasSubstr("global batch 100 is not a multiple of micro 4 x data parallel 16 = 64"));
}

TEST(ClusterSpecTest, LoadsTheEmbeddedReferenceCluster) {
  Result<Spec> s = ReferenceSpec();
  ASSERT_TRUE(s) << s.error().message;
  const Cluster& c = s->cluster;
  EXPECT_EQ(c.name, "reference-32gpu");
  EXPECT_EQ(c.nodes.count, 4);
  EXPECT_EQ(c.nodes.gpus_per_node, 8);
  EXPECT_EQ(c.nodes.gpu.name, "A100-SXM4-80GB");
  EXPECT_EQ(c.nodes.Ports(NicRole::kCompute), 4);  // 2 x ConnectX-7 2-port
  EXPECT_DOUBLE_EQ(c.nodes.nvme.capacity_bytes, 3.84e12);
  EXPECT_EQ(c.compute_fabric.switch_model.name, "QM9700");
  EXPECT_EQ(s->workload.strategy, Strategy::kFsdp);
  EXPECT_EQ(s->workload.micro_batch, 4);
  EXPECT_EQ(s->workload.accumulation, 8);
  EXPECT_EQ(s->workload.recompute, Recompute::kFull);
  EXPECT_TRUE(s->workload.checkpoint_async);
  EXPECT_DOUBLE_EQ(s->workload.checkpoint_interval_s, 3600);
  EXPECT_DOUBLE_EQ(c.costs.cloud_usd_per_gpu_hour.low, 3);
  EXPECT_DOUBLE_EQ(c.costs.capex_usd.high, 500e3);
}

TEST(ClusterSpecTest, RejectsUnknownKeysWithTheClosestKnownKey) {
  EXPECT_EQ(ErrorOf(Replace(kSpec, "  count: 2", "  cont: 2")),
            "t.yaml:3:3: nodes.cont: unknown key 'cont'; did you mean 'count'?");
  EXPECT_EQ(ErrorOf(Replace(kSpec, "batch: {micro: 4,", "batch: {mikro: 4,")),
            "t.yaml:15:11: workload.batch.mikro: unknown key 'mikro'; did you mean 'micro'?");
}

TEST(ClusterSpecTest, RejectsWrongUnits) {
  EXPECT_EQ(ErrorOf(Replace(kSpec, "{type: infiniband, speed: 400 Gb/s",
                            "{type: infiniband, speed: 400 GB")),
            "t.yaml:9:38: fabrics.compute.speed: '400 GB' is a size, expected a bandwidth such "
            "as '400 Gb/s' or '50 GB/s'");
  EXPECT_EQ(ErrorOf(Replace(kSpec, "write: 10 GB/s", "write: 10")),
            "t.yaml:11:36: storage[0].write: '10' has no unit; expected a bandwidth such as "
            "'400 Gb/s'");
}

TEST(ClusterSpecTest, RejectsACircuitOfNoVoltageOrCurrent) {
  // Found by the fuzz smoke: `voltage: 000 V` made the power plan divide by a 0 W circuit.
  EXPECT_THAT(ErrorOf(kSpec + std::string("facility: {voltage: 000 V}\n")),
              HasSubstr("facility.voltage: must be above 0 V"));
  EXPECT_THAT(ErrorOf(kSpec + std::string("facility: {current: 0 A}\n")),
              HasSubstr("facility.current: must be above 0 A"));
}

TEST(ClusterSpecTest, RejectsZeroNodes) {
  EXPECT_EQ(ErrorOf(Replace(kSpec, "  count: 2", "  count: 0")),
            "t.yaml:3:10: nodes.count: 0 is out of range; use a whole number of at least 1");
}

TEST(ClusterSpecTest, RejectsParallelSizesThatDoNotDivideTheGpus) {
  EXPECT_EQ(ErrorOf(Replace(kSpec, "tensor: 1}", "tensor: 1, pipeline: 3}")),
            "t.yaml:14:13: workload.parallel: tensor 1 x pipeline 3 x context 1 = 3 does not "
            "divide the 16 GPUs (2 nodes x 8); make the product one of 1, 2, 4, 8, 16");
  EXPECT_THAT(ErrorOf(Replace(Replace(kSpec, "tensor: 1}", "tensor: 8}"), "heads: 16,",
                              "heads: 16, kv_heads: 4,")),
              StartsWith("t.yaml:14:38: workload.parallel.tensor: tensor parallel 8 must divide "
                         "the 16 heads and 4 KV heads"));
}

TEST(ClusterSpecTest, RejectsAGlobalBatchThatDisagreesWithTheLayout) {
  EXPECT_EQ(ErrorOf(Replace(kSpec, "accumulation: 2}", "accumulation: 2, global: 100}")),
            "t.yaml:15:46: workload.batch.global: global batch 100 != micro 4 x accumulation 2 x "
            "data parallel 16 = 128; drop 'global' or change micro/accumulation");
}

TEST(ClusterSpecTest, RejectsUnknownHardwareWithASuggestion) {
  EXPECT_EQ(ErrorOf(Replace(kSpec, "A100-SXM4-80GB", "A100-SXM4-80G")),
            "t.yaml:4:16: nodes.gpu.model: unknown GPU model 'A100-SXM4-80G'; did you mean "
            "'A100-SXM4-80GB'?");
  EXPECT_THAT(ErrorOf(Replace(kSpec, "switch: QM9700", "switch: QM9701")),
              HasSubstr("fabrics.compute.switch: unknown switch model 'QM9701'; did you mean "
                        "'QM9700'?"));
}

TEST(ClusterSpecTest, RejectsMissingKeysAndBadYaml) {
  EXPECT_EQ(ErrorOf(Replace(kSpec, "{micro: 4, accumulation: 2}", "{accumulation: 2}")),
            "t.yaml:15:10: workload.batch.micro: missing required key 'micro'");
  EXPECT_THAT(ErrorOf(Replace(kSpec, "  count: 2", "  count: [2")), StartsWith("t.yaml:"));
  EXPECT_THAT(ErrorOf("- just\n- a list\n"), HasSubstr("expected a YAML map"));
}

TEST(ClusterSpecTest, RejectsContradictionsBetweenFields) {
  EXPECT_THAT(ErrorOf(Replace(kSpec, "{type: infiniband, speed: 400 Gb/s, switch: QM9700}",
                              "{type: roce, speed: 400 Gb/s, switch: QM9700}")),
              HasSubstr("QM9700 is an infiniband switch but the fabric type is roce"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "heads: 16,", "heads: 16, kv_heads: 3,")),
              HasSubstr("3 KV heads do not divide 16 attention heads"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "  parallel:", "  precision: fp8\n  parallel:")),
              HasSubstr("A100-SXM4-80GB has no FP8 tensor cores"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "  parallel:", "  precision: fp4\n  parallel:")),
              HasSubstr("A100-SXM4-80GB has no FP4 tensor cores (NVFP4 needs Blackwell)"));
  EXPECT_THAT(ErrorOf(Replace(Replace(kSpec, "model: A100-SXM4-80GB", "model: B200"), "  parallel:",
                              "  precision: fp4\n  software: {stack: pytorch-fsdp2}\n  parallel:")),
              HasSubstr("FP4 is Transformer Engine's NVFP4 recipe"));
  // The architecture too: an FP4 peak written onto a Hopper does not make it Blackwell.
  EXPECT_THAT(
      ErrorOf(Replace(Replace(kSpec, "model: A100-SXM4-80GB", "model: H100, fp4: 4000 TFLOPS"),
                      "  parallel:", "  precision: fp4\n  parallel:")),
      HasSubstr("H100-SXM5-80GB has no FP4 tensor cores (NVFP4 needs Blackwell)"));
  // Nor an FP8 peak written away: NVFP4's rate is FP8's times its measured speed-up.
  EXPECT_THAT(ErrorOf(Replace(Replace(kSpec, "model: A100-SXM4-80GB", "model: B200, fp8: 0 TFLOPS"),
                              "  parallel:", "  precision: fp4\n  parallel:")),
              HasSubstr("NVFP4's rate is modelled from FP8's, and B200-SXM-180GB has no FP8 peak"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "  batch:", "  checkpoint: {tier: nvme}\n  batch:")),
              HasSubstr("no storage tier named 'nvme'; tiers: pfs"));
  EXPECT_THAT(
      ErrorOf(Replace(
          kSpec, "    - {role: compute, model: ConnectX-7, count: 2, ports: 2, speed: 400 Gb/s}\n",
          "")),
      HasSubstr("nodes.nics: a cluster of more than one node needs a NIC with role compute"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "ports: 2, speed: 400 Gb/s", "ports: 4, speed: 400 Gb/s")),
              HasSubstr("ConnectX-7 has 2 ports, not 4"));
}

TEST(ClusterSpecTest, ReadsAMixtureOfExpertsAndChecksItsLayout) {
  const std::string moe =
      Replace(kSpec, "vocab: 50257,",
              "head_dim: 128, vocab: 50257, moe: {experts: 64, top_k: 6, ffn_hidden: 1408, "
              "shared_experts: 2, dense_layers: 1},");
  Result<Spec> s = ParseSpec(Replace(moe, "tensor: 1}", "tensor: 1, expert: 8}"), "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  const ModelShape& m = s->workload.model;
  EXPECT_EQ(m.moe.experts, 64);
  EXPECT_EQ(m.moe.top_k, 6);
  EXPECT_EQ(m.moe.ffn_hidden, 1408);
  EXPECT_EQ(m.moe.shared_experts, 2);
  EXPECT_EQ(m.MoeLayers(), 23);
  EXPECT_EQ(m.HeadDim(), 128);
  EXPECT_EQ(s->workload.expert, 8);
  EXPECT_THAT(ErrorOf(Replace(moe, "top_k: 6", "top_k: 65")),
              HasSubstr("top_k 65 is more than the 64 experts"));
  EXPECT_THAT(ErrorOf(Replace(moe, "dense_layers: 1", "dense_layers: 24")),
              HasSubstr("24 dense layers leave no MoE layer of 24"));
  EXPECT_THAT(ErrorOf(Replace(moe, "tensor: 1}", "tensor: 1, expert: 32}")),
              HasSubstr("expert parallel 32 must divide the 64 experts and data parallel 16"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "tensor: 1}", "tensor: 1, expert: 2}")),
              HasSubstr("expert parallelism needs a mixture-of-experts model"));
  // Hybrid sharding with EP: a shard group of 8 holds two EP4 groups (the experts shard over 2
  // of its ranks), one of 4 does not hold EP8.
  EXPECT_TRUE(ParseSpec(Replace(moe, "{strategy: fsdp, tensor: 1}",
                                "{strategy: fsdp, tensor: 1, expert: 4, shard: 8}"),
                        "t.yaml"));
  EXPECT_THAT(ErrorOf(Replace(moe, "{strategy: fsdp, tensor: 1}",
                              "{strategy: fsdp, tensor: 1, expert: 8, shard: 4}")),
              HasSubstr("workload.parallel.shard: shard group 4 x tensor 1 does not hold whole "
                        "expert-parallel groups of 8 x expert tensor 1 ranks"));
  EXPECT_THAT(ErrorOf(Replace(moe, "dense_layers: 1", "dense_layers: 1, capacity_factor: 0.5")),
              HasSubstr("workload.model.moe.capacity_factor: must be 1 to 64"));
  EXPECT_THAT(ErrorOf(Replace(moe, "top_k: 6", "top_k: 6, experts_per_token: 2")),
              HasSubstr("experts_per_token"));
  // Group-limited routing: no limit unless stated; groups divide the experts, and the groups a
  // token may use hold at least its top_k.
  EXPECT_EQ(m.moe.groups, 1);
  EXPECT_EQ(m.moe.group_top_k, 1);  // = groups: no limit
  Result<Spec> grouped =
      ParseSpec(Replace(moe, "top_k: 6", "top_k: 6, groups: 8, group_top_k: 3"), "t.yaml");
  ASSERT_TRUE(grouped) << grouped.error().message;
  EXPECT_EQ(grouped->workload.model.moe.groups, 8);
  EXPECT_EQ(grouped->workload.model.moe.group_top_k, 3);
  EXPECT_EQ(ParseSpec(Replace(moe, "top_k: 6", "top_k: 6, groups: 8"), "t.yaml")
                ->workload.model.moe.group_top_k,
            8);
  EXPECT_THAT(ErrorOf(Replace(moe, "top_k: 6", "top_k: 6, groups: 5")),
              HasSubstr("workload.model.moe.groups: 5 groups do not divide the 64 experts"));
  EXPECT_THAT(ErrorOf(Replace(moe, "top_k: 6", "top_k: 6, groups: 8, group_top_k: 9")),
              HasSubstr("group_top_k 9 is more than the 8 groups"));
  EXPECT_THAT(ErrorOf(Replace(moe, "top_k: 6", "top_k: 6, group_top_k: 2")),
              HasSubstr("group_top_k 2 is more than the 1 group (set workload.model.moe.groups)"));
  EXPECT_THAT(ErrorOf(Replace(moe, "top_k: 6", "top_k: 6, groups: 16, group_top_k: 8")),
              HasSubstr("group_top_k 8 is more than top_k 6"));
  EXPECT_THAT(ErrorOf(Replace(moe, "top_k: 6", "top_k: 6, groups: 32, group_top_k: 2")),
              HasSubstr("top_k 6 is more than the 4 experts of 2 groups"));
  // Routing: balanced (forced, as benchmarks run it) unless stated.
  EXPECT_FALSE(m.moe.natural_routing);
  EXPECT_TRUE(ParseSpec(Replace(moe, "top_k: 6", "top_k: 6, routing: natural"), "t.yaml")
                  ->workload.model.moe.natural_routing);
  EXPECT_FALSE(ParseSpec(Replace(moe, "top_k: 6", "top_k: 6, routing: balanced"), "t.yaml")
                   ->workload.model.moe.natural_routing);
  EXPECT_THAT(ErrorOf(Replace(moe, "top_k: 6", "top_k: 6, routing: random")),
              HasSubstr("workload.model.moe.routing"));
}

// model.sliding_window: the keys a windowed layer's query attends to, on sliding_window_layers of
// the layers (all of them unless stated).
TEST(ClusterSpecTest, ReadsASlidingWindow) {
  Result<Spec> s =
      ParseSpec(Replace(kSpec, "vocab: 50257,", "vocab: 50257, sliding_window: 128,"), "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->workload.model.sliding_window, 128);
  EXPECT_EQ(s->workload.model.WindowedLayers(), s->workload.model.layers);
  Result<Spec> half =
      ParseSpec(Replace(kSpec, "vocab: 50257,",
                        "vocab: 50257, sliding_window: 128, sliding_window_layers: 12,"),
                "t.yaml");
  ASSERT_TRUE(half) << half.error().message;
  EXPECT_EQ(half->workload.model.WindowedLayers(), 12);
  Result<Spec> none = ParseSpec(kSpec, "t.yaml");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(none->workload.model.WindowedLayers(), 0);
  EXPECT_THAT(ErrorOf(Replace(kSpec, "vocab: 50257,", "vocab: 50257, sliding_window_layers: 12,")),
              HasSubstr("workload.model.sliding_window_layers: needs model.sliding_window"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "vocab: 50257,",
                              "vocab: 50257, sliding_window: 128, sliding_window_layers: 25,")),
              HasSubstr("25 windowed layers is more than the model's 24; use at most 24"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "vocab: 50257,", "vocab: 50257, sliding_window: -1,")),
              HasSubstr("workload.model.sliding_window"));
  // cuDNN's FP8 attention takes a window from Blackwell on (Transformer Engine's rule).
  const std::string fp8 =
      Replace(Replace(kSpec, "vocab: 50257,", "vocab: 50257, sliding_window: 128,"),
              "batch: {micro: 4, accumulation: 2}",
              "batch: {micro: 4, accumulation: 2}\n  precision: fp8\n"
              "  software: {stack: megatron-core-2024, fp8_attention: true}");
  EXPECT_THAT(ErrorOf(Replace(fp8, "model: A100-SXM4-80GB", "model: H100")),
              HasSubstr("FP8 attention with a sliding window needs Blackwell"));
  Result<Spec> blackwell =
      ParseSpec(Replace(fp8, "model: A100-SXM4-80GB", "model: B200"), "t.yaml");
  ASSERT_TRUE(blackwell) << blackwell.error().message;
  EXPECT_TRUE(blackwell->workload.fp8_attention);
}

// model.qk_norm: a norm on the queries and keys (OLMo 2, Qwen3); off unless stated, a boolean.
TEST(ClusterSpecTest, ReadsQkNorm) {
  Result<Spec> none = ParseSpec(kSpec, "t.yaml");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(none->workload.model.qk_norm);
  Result<Spec> on =
      ParseSpec(Replace(kSpec, "vocab: 50257,", "vocab: 50257, qk_norm: true,"), "t.yaml");
  ASSERT_TRUE(on) << on.error().message;
  EXPECT_TRUE(on->workload.model.qk_norm);
  EXPECT_THAT(ErrorOf(Replace(kSpec, "vocab: 50257,", "vocab: 50257, qk_norm: per-head,")),
              HasSubstr("workload.model.qk_norm"));
}

// GPT-OSS's words: a gated quick-GELU (mlp: quick-geglu), the clamp of its inputs, linear biases
// and YaRN's rotary scaling; none of them unless stated. A clamp is a gated MLP's and not
// negative.
TEST(ClusterSpecTest, ReadsGptOssWords) {
  Result<Spec> none = ParseSpec(kSpec, "t.yaml");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(none->workload.model.activation_clamp, 0);
  EXPECT_FALSE(none->workload.model.linear_bias);
  EXPECT_EQ(none->workload.model.rope_scaling, model::RopeScaling::kNone);
  Result<Spec> oss = ParseSpec(Replace(kSpec, "vocab: 50257,",
                                       "vocab: 50257, mlp: quick-geglu, activation_clamp: 7, "
                                       "linear_bias: true, rope_scaling: yarn,"),
                               "t.yaml");
  ASSERT_TRUE(oss) << oss.error().message;
  EXPECT_EQ(oss->workload.model.mlp, model::Mlp::kQuickGeglu);
  EXPECT_EQ(oss->workload.model.MlpInputProjections(), 2);
  EXPECT_EQ(oss->workload.model.activation_clamp, 7);
  EXPECT_TRUE(oss->workload.model.linear_bias);
  EXPECT_EQ(oss->workload.model.rope_scaling, model::RopeScaling::kYarn);
  EXPECT_THAT(ErrorOf(Replace(kSpec, "vocab: 50257,", "vocab: 50257, activation_clamp: 7,")),
              HasSubstr("workload.model.activation_clamp: clamps a gated MLP's"));
  EXPECT_THAT(
      ErrorOf(Replace(kSpec, "vocab: 50257,", "vocab: 50257, mlp: swiglu, activation_clamp: -1,")),
      HasSubstr("-1 is negative"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "vocab: 50257,", "vocab: 50257, rope_scaling: ntk,")),
              HasSubstr("workload.model.rope_scaling"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "vocab: 50257,", "vocab: 50257, linear_bias: yes-ish,")),
              HasSubstr("workload.model.linear_bias"));
}

// model.document_length: packed sequences, attention masked at the documents' boundaries; a
// document longer than the sequence is refused; 0 is none, as sliding_window's 0.
TEST(ClusterSpecTest, ReadsPackedDocuments) {
  Result<Spec> s =
      ParseSpec(Replace(kSpec, "vocab: 50257,", "vocab: 50257, document_length: 256,"), "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->workload.model.document_length, 256);
  EXPECT_DOUBLE_EQ(s->workload.model.AttentionSpan(), 256);
  Result<Spec> none = ParseSpec(kSpec, "t.yaml");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(none->workload.model.document_length, 0);
  EXPECT_DOUBLE_EQ(none->workload.model.AttentionSpan(), none->workload.model.sequence);
  const int sequence = none->workload.model.sequence;
  Result<Spec> whole = ParseSpec(
      Replace(kSpec, "vocab: 50257,", fmt::format("vocab: 50257, document_length: {},", sequence)),
      "t.yaml");
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_DOUBLE_EQ(whole->workload.model.AttentionSpan(), sequence);
  EXPECT_THAT(ErrorOf(Replace(kSpec, "vocab: 50257,",
                              fmt::format("vocab: 50257, document_length: {},", sequence + 1))),
              HasSubstr(fmt::format("workload.model.document_length: documents of {} tokens do "
                                    "not pack into sequences of {}",
                                    sequence + 1, sequence)));
  Result<Spec> zero =
      ParseSpec(Replace(kSpec, "vocab: 50257,", "vocab: 50257, document_length: 0,"), "t.yaml");
  ASSERT_TRUE(zero) << zero.error().message;
  EXPECT_DOUBLE_EQ(zero->workload.model.AttentionSpan(), sequence);
  EXPECT_THAT(ErrorOf(Replace(kSpec, "vocab: 50257,", "vocab: 50257, document_length: -1,")),
              HasSubstr("workload.model.document_length"));
}

// model.lora: Megatron Bridge's LoRA defaults (rank 32 on all four linear layers) where unsaid,
// the layers in Megatron-Core's names; an unknown or no layer, a rank that is not low, and LoRA on
// a mixture of experts' MLPs are one-line errors.
TEST(ClusterSpecTest, ReadsLora) {
  auto with = [](const std::string& lora) {
    return Replace(kSpec, "vocab: 50257,", "vocab: 50257, lora: " + lora + ",");
  };
  Result<Spec> none = ParseSpec(kSpec, "t.yaml");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(none->workload.model.lora.Enabled());
  Result<Spec> defaults = ParseSpec(with("{}"), "t.yaml");
  ASSERT_TRUE(defaults) << defaults.error().message;
  EXPECT_EQ(defaults->workload.model.lora.rank, 32);
  EXPECT_THAT(defaults->workload.model.lora.Names(),
              ElementsAre("linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"));
  Result<Spec> qkv = ParseSpec(with("{rank: 16, modules: [linear_qkv]}"), "t.yaml");
  ASSERT_TRUE(qkv) << qkv.error().message;
  EXPECT_EQ(qkv->workload.model.lora.rank, 16);
  EXPECT_THAT(qkv->workload.model.lora.Names(), ElementsAre("linear_qkv"));
  EXPECT_THAT(ErrorOf(with("{modules: [linear_qkv, q_proj]}")),
              HasSubstr("workload.model.lora.modules: 'q_proj' is not a linear layer LoRA adapts "
                        "here"));
  EXPECT_THAT(ErrorOf(with("{modules: []}")),
              HasSubstr("workload.model.lora.modules: names no layer"));
  EXPECT_THAT(ErrorOf(with("{rank: 2048}")),
              HasSubstr("workload.model.lora.rank: rank 2048 is not low"));
  EXPECT_THAT(ErrorOf(with("{rank: 0}")), HasSubstr("workload.model.lora"));
  EXPECT_THAT(ErrorOf(Replace(with("{rank: 6}"), "tensor: 1}", "tensor: 4}")),
              HasSubstr("workload.model.lora.rank: rank 6 does not split over tensor parallel 4"));
  Result<Spec> split = ParseSpec(Replace(with("{rank: 8}"), "tensor: 1}", "tensor: 4}"), "t.yaml");
  ASSERT_TRUE(split) << split.error().message;
  EXPECT_THAT(ErrorOf(with("{rank: 16, alpha: 32}")), HasSubstr("alpha"));
  const std::string moe =
      Replace(kSpec, "vocab: 50257,",
              "vocab: 50257, moe: {experts: 64, top_k: 6, ffn_hidden: 1408}, lora: {rank: 16},");
  EXPECT_THAT(ErrorOf(moe), HasSubstr("LoRA on a mixture of experts' MLPs"));
  Result<Spec> moe_attention = ParseSpec(
      Replace(moe, "lora: {rank: 16}", "lora: {rank: 16, modules: [linear_qkv, linear_proj]}"),
      "t.yaml");
  ASSERT_TRUE(moe_attention) << moe_attention.error().message;
}

// software.moe_comm_overlap: Megatron-Core's EP overlap, under its rules (expert parallelism,
// a 16-bit base precision, no full recomputation, virtual stages with pipeline stages), each
// broken rule a one-line error.
TEST(ClusterSpecTest, MoeCommOverlapFollowsMegatronCoresRules) {
  const std::string moe = Replace(
      Replace(kSpec, "vocab: 50257,",
              "head_dim: 128, vocab: 50257, moe: {experts: 64, top_k: 6, ffn_hidden: 1408},"),
      "batch: {micro: 4, accumulation: 2}",
      "batch: {micro: 4, accumulation: 2}\n  software: {moe_comm_overlap: true}");
  const std::string with = Replace(moe, "tensor: 1}", "tensor: 1, expert: 8}");
  Result<Spec> s = ParseSpec(with, "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->workload.moe_comm_overlap);
  EXPECT_THAT(s->workload.software_departures, ::testing::Contains("moe_comm_overlap true"));
  EXPECT_FALSE(
      ParseSpec(Replace(with, "moe_comm_overlap: true", "moe_comm_overlap: false"), "t.yaml")
          ->workload.moe_comm_overlap);
  EXPECT_THAT(ErrorOf(moe), HasSubstr("workload.software.moe_comm_overlap: needs expert "
                                      "parallelism"));
  EXPECT_THAT(ErrorOf(with + "  activation_checkpointing: full\n"),
              HasSubstr("does not run with full activation checkpointing"));
  EXPECT_THAT(ErrorOf(Replace(with, "expert: 8}", "expert: 8, pipeline: 2}")),
              HasSubstr("needs virtual stages"));
  EXPECT_TRUE(ParseSpec(Replace(with, "expert: 8}", "expert: 8, pipeline: 2, virtual_stages: 2}"),
                        "t.yaml"));
  EXPECT_THAT(ErrorOf(with + "  precision: fp32\n"), HasSubstr("BF16 or FP16 base precision"));
}

// software.moe_expert_gemm: fused is Transformer Engine's fused grouped MLP, which runs on
// Blackwell under MXFP8 or NVFP4 with a SwiGLU between its GEMMs, for Megatron-Core's stacks; each
// broken rule a one-line error.
TEST(ClusterSpecTest, TheFusedGroupedMlpFollowsTransformerEnginesRules) {
  const std::string with =
      Replace(Replace(Replace(Replace(kSpec, "A100-SXM4-80GB", "B200-SXM-180GB"), "vocab: 50257,",
                              "head_dim: 128, mlp: swiglu, vocab: 50257, "
                              "moe: {experts: 64, top_k: 6, ffn_hidden: 1408},"),
                      "batch: {micro: 4, accumulation: 2}",
                      "batch: {micro: 4, accumulation: 2}\n  precision: fp8\n"
                      "  software: {fp8_recipe: mxfp8, moe_expert_gemm: fused}"),
              "{strategy: fsdp, tensor: 1}", "{strategy: zero1, tensor: 1, expert: 8}");
  Result<Spec> s = ParseSpec(with, "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->workload.moe_fused_grouped_mlp);
  EXPECT_THAT(s->workload.software_departures, ::testing::Contains("moe_expert_gemm fused"));
  Result<Spec> per_expert =
      ParseSpec(Replace(with, "moe_expert_gemm: fused", "moe_expert_gemm: per-expert"), "t.yaml");
  ASSERT_TRUE(per_expert) << per_expert.error().message;
  EXPECT_FALSE(per_expert->workload.moe_fused_grouped_mlp);
  Result<Spec> nvfp4 = ParseSpec(
      Replace(Replace(with, "precision: fp8", "precision: fp4"), "fp8_recipe: mxfp8, ", ""),
      "t.yaml");
  ASSERT_TRUE(nvfp4) << nvfp4.error().message;
  EXPECT_TRUE(nvfp4->workload.moe_fused_grouped_mlp);
  // A precision the GPU cannot run is named before the fusion.
  EXPECT_THAT(ErrorOf(Replace(Replace(Replace(with, "B200-SXM-180GB", "H100-SXM5-80GB"),
                                      "precision: fp8", "precision: fp4"),
                              "fp8_recipe: mxfp8, ", "")),
              HasSubstr("workload.precision: H100-SXM5-80GB has no FP4 tensor cores"));
  EXPECT_THAT(ErrorOf(Replace(Replace(with, "B200-SXM-180GB", "H100-SXM5-80GB"),
                              "fp8_recipe: mxfp8", "fp8_recipe: current")),
              HasSubstr("workload.software.moe_expert_gemm: fused needs Blackwell's grouped GEMM "
                        "kernels; H100-SXM5-80GB is Hopper"));
  EXPECT_THAT(ErrorOf(Replace(with, "fp8_recipe: mxfp8", "fp8_recipe: current")),
              HasSubstr("fused runs under MXFP8 or NVFP4"));
  EXPECT_THAT(ErrorOf(Replace(with, "mlp: swiglu", "mlp: gelu")), HasSubstr("the model's is GELU"));
  EXPECT_THAT(ErrorOf(Replace(with, "software: {", "software: {stack: pytorch-fsdp2, ")),
              HasSubstr("not the pytorch-fsdp2 stack's"));
  EXPECT_THAT(ErrorOf(Replace(Replace(with, "moe: {experts: 64, top_k: 6, ffn_hidden: 1408},", ""),
                              ", expert: 8}", "}")),
              HasSubstr("the model has no experts"));
  EXPECT_THAT(ErrorOf(Replace(with, "moe_expert_gemm: fused", "moe_expert_gemm: grouped")),
              HasSubstr("'grouped' is not one of per-expert, fused"));
}

TEST(ClusterSpecTest, ShardedGradientsRunWithPipelinesButZero3DoesNot) {
  // Llama 3 ran ZeRO-2-style sharding (gradients and optimizer states) with pipeline stages.
  for (const char* ok : {"zero1", "zero2", "fsdp"}) {
    Result<Spec> s = ParseSpec(Replace(kSpec, "{strategy: fsdp, tensor: 1}",
                                       fmt::format("{{strategy: {}, pipeline: 2}}", ok)),
                               "t.yaml");
    EXPECT_TRUE(s) << ok << ": " << s.error().message;
  }
  EXPECT_THAT(
      ErrorOf(Replace(kSpec, "{strategy: fsdp, tensor: 1}", "{strategy: zero3, pipeline: 2}")),
      HasSubstr("zero3 (DeepSpeed) does not run with pipeline parallelism; use fsdp"));
  // Uneven stages: 24 layers over 16 stages is accepted (the largest has 2); fewer layers than
  // stages x virtual stages is not.
  EXPECT_TRUE(ParseSpec(
      Replace(kSpec, "{strategy: fsdp, tensor: 1}", "{strategy: zero1, pipeline: 16}"), "t.yaml"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "{strategy: fsdp, tensor: 1}",
                              "{strategy: zero1, pipeline: 16, virtual_stages: 2}")),
              HasSubstr("24 layers cannot fill pipeline 16 x virtual stages 2"));
}

// Megatron-Core's interleaved schedule takes the micro-batches in groups of at least the
// pipeline's size (schedules.py raises when the group lies outside [PP, M]): a step with fewer
// micro-batches than stages does not run interleaved, and plain 1F1B does.
TEST(ClusterSpecTest, InterleavingNeedsAtLeastAPipelinesWorthOfMicroBatches) {
  auto with = [](const std::string& parallel, const std::string& batch) {
    return Replace(
        Replace(kSpec, "{strategy: fsdp, tensor: 1}", "{strategy: zero1, " + parallel + "}"),
        "batch: {micro: 4, accumulation: 2}", batch);
  };
  // 16 GPUs at PP4: DP 4, so micro 4 x accumulation 3 is 3 micro-batches a step.
  EXPECT_THAT(ErrorOf(with("pipeline: 4, virtual_stages: 2", "batch: {micro: 4, accumulation: 3}")),
              HasSubstr("virtual stages (interleaved 1F1B) need at least 4 micro-batches a "
                        "step (pipeline 4), and global batch 48 over micro 4 x data parallel 4 "
                        "gives 3"));
  EXPECT_THAT(ErrorOf(with("pipeline: 4, virtual_stages: 2", "batch: {micro: 4, global: 32}")),
              HasSubstr("gives 2 (Megatron-Core refuses it)"));
  EXPECT_TRUE(ParseSpec(
      with("pipeline: 4, virtual_stages: 2", "batch: {micro: 4, accumulation: 4}"), "t.yaml"));
  EXPECT_TRUE(ParseSpec(with("pipeline: 4", "batch: {micro: 4, accumulation: 1}"), "t.yaml"));
  // The key the error names, on the one line.
  EXPECT_THAT(ErrorOf(with("pipeline: 4, virtual_stages: 2", "batch: {micro: 4, accumulation: 3}")),
              HasSubstr("workload.parallel.virtual_stages"));
}

// Megatron-Core's account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split:
// the embedding and the loss take a layer's place each, and its rules hold: the L + e + l slots
// divide over the pipeline and each rank's over its virtual stages.
TEST(ClusterSpecTest, TheEmbeddingAndTheLossCanTakeALayersPlaceInThePipelineSplit) {
  auto with = [](const std::string& parallel) {
    return Replace(kSpec, "{strategy: fsdp, tensor: 1}", "{strategy: zero1, " + parallel + "}");
  };
  const std::string both = "embedding_in_pipeline_split: true, loss_in_pipeline_split: true";
  // 24 layers and the two are 26 slots, 13 a rank of 2, one a chunk of 13: 24 layers alone
  // cannot fill 26 chunks.
  Result<Spec> s = ParseSpec(with("pipeline: 2, virtual_stages: 13, " + both), "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->workload.pipeline_split.embedding);
  EXPECT_TRUE(s->workload.pipeline_split.loss);
  EXPECT_THAT(ErrorOf(with("pipeline: 2, virtual_stages: 13")),
              HasSubstr("24 layers cannot fill pipeline 2 x virtual stages 13"));
  EXPECT_THAT(ErrorOf(with("pipeline: 4, " + both)),
              HasSubstr("24 layers with the embedding and loss counted (embedding_in_pipeline_"
                        "split, loss_in_pipeline_split) are 26 slots, which pipeline 4 does not "
                        "divide"));
  EXPECT_THAT(ErrorOf(with("pipeline: 2, virtual_stages: 2, loss_in_pipeline_split: true")),
              HasSubstr("24 layers with the loss counted (loss_in_pipeline_split) are 25 slots, "
                        "which pipeline 2 does not divide"));
  EXPECT_THAT(ErrorOf(with("pipeline: 2, virtual_stages: 4, " + both)),
              HasSubstr("13 slots per pipeline rank (embedding_in_pipeline_split, "
                        "loss_in_pipeline_split) do not divide into 4 virtual stages"));
  // 14 layers and the two over 16 ranks: one slot a rank, the first rank only the embedding.
  EXPECT_THAT(ErrorOf(Replace(with("pipeline: 16, " + both), "layers: 24", "layers: 14")),
              HasSubstr("16 slots over pipeline 16 leave a rank only the embedding and loss"));
  // Without pipeline stages the one rank holds everything: nothing to split.
  EXPECT_TRUE(ParseSpec(with(both), "t.yaml"));
  EXPECT_THAT(ErrorOf(with("pipeline: 2, loss_in_pipeline_split: yes please")),
              HasSubstr("loss_in_pipeline_split"));
}

// A mixture of experts' dense layers come first (DeepSeek-V3's three of 61), so the first ranks
// hold them: at PP16 the first rank's 4 layers are 3 dense and a MoE one, every other rank's all
// MoE. Interleaved, each rank's first chunk comes before every rank's second: 61 layers and the
// embedding and the loss over PP7 x VP3 put 3 slots in a chunk, the embedding and 2 dense layers
// on the first rank, the third on the second; the ranks' counts add up to the model's.
TEST(ClusterSpecTest, DenseLayersSitOnTheFirstPipelineRanks) {
  const PipelineSplit none, both{true, true};
  EXPECT_EQ(DenseLayersOnRank(61, 3, 16, 1, none, 0), 3);
  EXPECT_EQ(DenseLayersOnRank(61, 3, 16, 1, none, 1), 0);
  EXPECT_EQ(DenseLayersOnRank(61, 3, 16, 1, none, 15), 0);
  EXPECT_EQ(DenseLayersOnRank(61, 3, 7, 3, both, 0), 2);
  EXPECT_EQ(DenseLayersOnRank(61, 3, 7, 3, both, 1), 1);
  EXPECT_EQ(DenseLayersOnRank(61, 3, 7, 3, both, 2), 0);
  // One layer a chunk: rank r's chunks hold layers r, r + p, ...; 10 dense layers over PP4 x VP4
  // of 16 layers are 3, 3, 2 and 2.
  EXPECT_EQ(DenseLayersOnRank(16, 10, 4, 4, none, 0), 3);
  EXPECT_EQ(DenseLayersOnRank(16, 10, 4, 4, none, 1), 3);
  EXPECT_EQ(DenseLayersOnRank(16, 10, 4, 4, none, 3), 2);
  // Uneven chunks (18 layers over PP4 x VP4, which the spec takes without the split) spread
  // their boundaries: no dense layer is lost between them.
  for (auto [layers, dense, p, v, split] : {std::tuple{61, 3, 16, 1, none},
                                            {61, 3, 7, 3, both},
                                            {16, 10, 4, 4, none},
                                            {61, 3, 1, 1, none},
                                            {18, 17, 4, 4, none},
                                            {61, 40, 8, 2, none}}) {
    int sum = 0;
    for (int r = 0; r < p; ++r) sum += DenseLayersOnRank(layers, dense, p, v, split, r);
    EXPECT_EQ(sum, dense) << layers << " layers, PP" << p << " VP" << v;
  }
  EXPECT_EQ(DenseLayersOnRank(61, 0, 16, 1, none, 0), 0);
}

// The layers each pipeline rank builds (Megatron-Core's get_num_layers_to_build).
TEST(ClusterSpecTest, PipelineRanksHoldTheLayersMegatronCoreBuilds) {
  const PipelineSplit none, both{true, true}, embedding{true, false}, loss{false, true};
  // Llama 3.1 405B: 126 layers over 8 ranks, the largest 16 beside the output layer without the
  // split; with it, 16 on a middle rank and 15 on the last.
  EXPECT_EQ(PipelineStageLayers(126, 8, none).most, 16);
  EXPECT_EQ(PipelineStageLayers(126, 8, none).last, 16);
  EXPECT_EQ(PipelineStageLayers(126, 8, both).most, 16);
  EXPECT_EQ(PipelineStageLayers(126, 8, both).last, 15);
  EXPECT_EQ(PipelineStageLayers(126, 8, both).first, 15);
  // Two ranks of 64 slots: the first builds 63 beside the embedding, the last 63 beside the loss.
  EXPECT_EQ(PipelineStageLayers(126, 2, both).first, 63);
  EXPECT_EQ(PipelineStageLayers(126, 2, both).most, 63);
  // Two ranks have no middle: the first and the last each hold one fewer with both counted; with
  // the embedding alone the last holds the most.
  EXPECT_EQ(PipelineStageLayers(30, 2, both).most, 15);
  EXPECT_EQ(PipelineStageLayers(31, 2, embedding).most, 16);
  EXPECT_EQ(PipelineStageLayers(31, 2, embedding).last, 16);
  EXPECT_EQ(PipelineStageLayers(31, 2, loss).most, 16);
  EXPECT_EQ(PipelineStageLayers(31, 2, loss).last, 15);
  EXPECT_EQ(PipelineStageLayers(126, 1, both).last, 126);
  // Megatron-Core's checks: 126 + 2 fills PP16 x VP8, one layer a chunk (NVIDIA's GB200 MXFP8
  // layout); 126 alone does not, nor does 126 + 2 over PP16 x VP16 or over 6 ranks.
  EXPECT_TRUE(PipelineSplitFits(126, 16, 8, both));
  EXPECT_FALSE(PipelineSplitFits(126, 16, 8, none));
  EXPECT_FALSE(PipelineSplitFits(126, 16, 16, both));
  EXPECT_FALSE(PipelineSplitFits(126, 6, 1, both));
  // 6 layers and the two over 8 ranks: Megatron-Core builds an embedding-only first rank and a
  // loss-only last one; the model refuses a rank without a layer.
  EXPECT_FALSE(PipelineSplitFits(6, 8, 1, both));
  EXPECT_TRUE(PipelineSplitFits(14, 8, 1, both));
  // Two ranks with both counted hold one fewer each; more than two with the embedding alone keep
  // the middle's on the last.
  EXPECT_EQ(PipelineStageLayers(30, 2, both).last, 15);
  EXPECT_EQ(PipelineStageLayers(31, 4, embedding).most, 8);
  EXPECT_EQ(PipelineStageLayers(31, 4, embedding).last, 8);
  EXPECT_TRUE(PipelineSplitFits(126, 6, 1, none));  // uneven stages, the largest 21
  EXPECT_EQ(StageLayers(126, 6), 21);
}

TEST(ClusterSpecTest, HybridShardingShardsInsideAGroupOfFullyShardedRanks) {
  // 16 GPUs, data parallel 16: shard groups of 8 (a node), two replicas.
  Result<Spec> s = ParseSpec(
      Replace(kSpec, "{strategy: fsdp, tensor: 1}", "{strategy: fsdp, shard: 8}"), "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->workload.shard, 8);
  EXPECT_EQ(ShardGroup(s->workload.shard, s->DataParallel()), 8);
  EXPECT_EQ(ShardGroup(0, s->DataParallel()), 16);  // no word: the whole group
  EXPECT_TRUE(ParseSpec(
      Replace(kSpec, "{strategy: fsdp, tensor: 1}", "{strategy: zero3, tensor: 2, shard: 4}"),
      "t.yaml"));
  EXPECT_THAT(
      ErrorOf(Replace(kSpec, "{strategy: fsdp, tensor: 1}", "{strategy: zero2, shard: 8}")),
      HasSubstr(
          "workload.parallel.shard: hybrid sharding needs strategy fsdp or zero3, not zero2"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "{strategy: fsdp, tensor: 1}", "{strategy: fsdp, shard: 6}")),
              HasSubstr("shard group 6 does not divide data parallel 16 x context 1 = 16 ranks"));
  EXPECT_THAT(ErrorOf(Replace(kSpec, "{strategy: fsdp, tensor: 1}", "{strategy: fsdp, shard: 0}")),
              HasSubstr("workload.parallel.shard"));
  EXPECT_THAT(  // a group of one shards nothing
      ErrorOf(Replace(kSpec, "{strategy: fsdp, tensor: 1}", "{strategy: fsdp, shard: 1}")),
      HasSubstr("workload.parallel.shard"));
  // 24 GPUs on 3 nodes: groups of 4 or 24 line up with the nodes, groups of 6 or 12 straddle.
  const std::string three = Replace(kSpec, "  count: 2\n", "  count: 3\n");
  EXPECT_TRUE(ParseSpec(Replace(three, "{strategy: fsdp, tensor: 1}", "{strategy: fsdp, shard: 4}"),
                        "t.yaml"));
  EXPECT_THAT(
      ErrorOf(Replace(three, "{strategy: fsdp, tensor: 1}", "{strategy: fsdp, shard: 12}")),
      HasSubstr("shard group 12 would straddle NVLink domains, which hold 8 of its ranks each"));
  EXPECT_THAT(
      ErrorOf(Replace(Replace(kSpec, "{strategy: fsdp, tensor: 1}", "{strategy: zero3, shard: 8}"),
                      "  batch: {micro: 4, accumulation: 2}\n",
                      "  batch: {micro: 4, accumulation: 2}\n"
                      "  software: {stack: deepspeed-zero3}\n")),
      HasSubstr("hybrid sharding on the deepspeed-zero3 stack"));
}

TEST(ClusterSpecTest, CheckpointingSomeLayersNeedsFullRecomputeAndAStagesLayers) {
  const std::string full = Replace(kSpec, "  batch: {micro: 4, accumulation: 2}\n",
                                   "  batch: {micro: 4, accumulation: 2}\n"
                                   "  activation_checkpointing: full\n"
                                   "  activation_checkpointing_layers: 12\n");
  Result<Spec> s = ParseSpec(full, "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->workload.recompute_layers, 12);
  EXPECT_THAT(ErrorOf(Replace(full, "activation_checkpointing: full",
                              "activation_checkpointing: "
                              "selective")),
              HasSubstr("workload.activation_checkpointing_layers: needs "
                        "activation_checkpointing: full"));
  // 24 layers over 2 pipeline stages: 12 a stage at most.
  EXPECT_TRUE(ParseSpec(
      Replace(full, "{strategy: fsdp, tensor: 1}", "{strategy: zero1, pipeline: 2}"), "t.yaml"));
  EXPECT_THAT(ErrorOf(Replace(
                  Replace(full, "{strategy: fsdp, tensor: 1}", "{strategy: zero1, pipeline: 2}"),
                  "activation_checkpointing_layers: 12", "activation_checkpointing_layers: 13")),
              HasSubstr("13 layers recomputed of 12 per pipeline stage"));
}

// activation_checkpointing_modules: Megatron-Core's recompute_modules under its rules; the modules
// the step model does not re-run, and those with nothing to re-run in the model, refused by name.
TEST(ClusterSpecTest, RecomputeModulesFollowMegatronCoresRules) {
  const std::string moe =
      Replace(Replace(kSpec, "vocab: 50257,",
                      "head_dim: 128, vocab: 50257, moe: {experts: 64, top_k: 6, ffn_hidden: 1408, "
                      "dense_layers: 1},"),
              "batch: {micro: 4, accumulation: 2}\n",
              "batch: {micro: 4, accumulation: 2}\n  activation_checkpointing: selective\n");
  // Selective recompute without modules re-runs the attention core alone (Megatron's default).
  Result<Spec> plain = ParseSpec(moe, "t.yaml");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->workload.recompute_modules, Workload::RecomputeModules{});
  EXPECT_TRUE(plain->workload.recompute_modules.core_attn);
  const std::string with = moe + "  activation_checkpointing_modules: [layernorm, moe_act, mlp]\n";
  Result<Spec> s = ParseSpec(with, "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  const Workload::RecomputeModules& mods = s->workload.recompute_modules;
  EXPECT_FALSE(mods.core_attn);  // listed modules replace the default
  EXPECT_TRUE(mods.layernorm && mods.moe_act && mods.mlp);
  EXPECT_EQ(RecomputeLabel(s->workload.recompute, mods), "selective (moe_act, layernorm, mlp)");
  EXPECT_EQ(RecomputeLabel(Recompute::kSelective, {}), "selective");
  // An empty list recomputes nothing (Megatron-Core's does too): write none. Other stacks have no
  // recompute_modules.
  EXPECT_THAT(ErrorOf(moe + "  activation_checkpointing_modules: []\n"),
              HasSubstr("an empty list recomputes nothing: write activation_checkpointing: none"));
  EXPECT_THAT(ErrorOf(with + "  software: {stack: pytorch-fsdp2}\n"),
              HasSubstr("is Megatron-Core's recompute_modules, and the pytorch-fsdp2 stack has "
                        "none"));
  EXPECT_TRUE(ParseSpec(with + "  software: {stack: nemo-2025}\n", "t.yaml"));

  EXPECT_THAT(ErrorOf(Replace(with, "activation_checkpointing: selective",
                              "activation_checkpointing: full")),
              HasSubstr("workload.activation_checkpointing_modules: needs "
                        "activation_checkpointing: selective"));
  EXPECT_THAT(ErrorOf(moe + "  activation_checkpointing_modules: [moe]\n"),
              HasSubstr("'moe' is a Megatron-Core module the step model does not recompute"));
  EXPECT_THAT(ErrorOf(moe + "  activation_checkpointing_modules: [mla_up_proj]\n"),
              HasSubstr("does not recompute"));
  EXPECT_THAT(ErrorOf(moe + "  activation_checkpointing_modules: [layernrom]\n"),
              HasSubstr("unknown module 'layernrom'"));
  // Without a MoE layer neither moe_act nor layernorm has anything to re-run; without a dense
  // layer, mlp.
  const std::string dense =
      Replace(with, " moe: {experts: 64, top_k: 6, ffn_hidden: 1408, dense_layers: 1},", "");
  EXPECT_THAT(ErrorOf(Replace(dense, "[layernorm, moe_act, mlp]", "[moe_act]")),
              HasSubstr("moe_act re-runs part of a MoE layer"));
  EXPECT_THAT(ErrorOf(Replace(dense, "[layernorm, moe_act, mlp]", "[layernorm]")),
              HasSubstr("layernorm re-runs part of a MoE layer (the norm before its router"));
  EXPECT_TRUE(ParseSpec(Replace(dense, "[layernorm, moe_act, mlp]", "[mlp, core_attn]"), "t.yaml"));
  EXPECT_THAT(ErrorOf(Replace(with, ", dense_layers: 1", "")),
              HasSubstr("every layer of the model is a MoE layer"));
  // FP8's delayed scaling cannot recompute them (Megatron-Core's TransformerConfig).
  const std::string fp8 = Replace(with, "A100-SXM4-80GB", "H100-SXM5-80GB") + "  precision: fp8\n";
  EXPECT_THAT(ErrorOf(fp8), HasSubstr("do not recompute under FP8 delayed scaling"));
  EXPECT_TRUE(ParseSpec(fp8 + "  software: {fp8_recipe: current}\n", "t.yaml"));
}

TEST(ClusterSpecTest, ReadsARackScaleNvlinkDomain) {
  const std::string rack =
      Replace(kSpec, "fabrics:\n",
              "fabrics:\n  scale_up: {type: nvlink3, bandwidth: 600 GB/s, domain: 16}\n");
  Result<Spec> s = ParseSpec(rack, "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->cluster.scale_up.domain, 16);
  EXPECT_EQ(s->cluster.ScaleUpDomain(), 16);
  EXPECT_THAT(ErrorOf(Replace(rack, "domain: 16", "domain: 12")),
              HasSubstr("fabrics.scale_up.domain: 12 GPUs is not a whole number of 8-GPU nodes"));
  EXPECT_THAT(ErrorOf(Replace(rack, "domain: 16}", "domain: 16, switched: false}")),
              HasSubstr("needs NVLink switches"));
  // A domain larger than the cluster is the whole cluster.
  Result<Spec> big = ParseSpec(Replace(rack, "domain: 16", "domain: 72"), "t.yaml");
  ASSERT_TRUE(big) << big.error().message;
  EXPECT_EQ(big->cluster.ScaleUpDomain(), 16);
}

TEST(ClusterSpecTest, LetsTheSpecOverrideCatalogValues) {
  Result<Spec> s =
      ParseSpec(Replace(kSpec, "{model: A100-SXM4-80GB, count: 8}",
                        "{model: A100-SXM4-80GB, count: 8, tdp: 500 W, memory: 40 GiB}"),
                "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_DOUBLE_EQ(s->cluster.nodes.gpu.tdp_w, 500);
  EXPECT_DOUBLE_EQ(s->cluster.nodes.gpu.memory_bytes, 40.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(s->cluster.nodes.gpu.bf16_flop_per_s, 312e12);  // untouched
}

TEST(ClusterSpecTest, ReportsAMissingFileAsNotFound) {
  Result<Spec> s = LoadSpecFile("/nonexistent/spec.yaml");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(s.error().message,
            "/nonexistent/spec.yaml: cannot read spec: No such file or directory");
}

TEST(RackSpecTest, ReadsRacksAndDerivesOneDomainPerRack) {
  auto s = LoadSpecFile(std::string(GPUFLEET_SOURCE_DIR) + "/examples/gb200-nvl72-576gpu.yaml");
  ASSERT_TRUE(s) << s.error().message;
  const Rack& r = s->cluster.rack;
  EXPECT_EQ(r.nodes, 18);
  EXPECT_EQ(r.switch_trays, 9);
  EXPECT_EQ(r.switches_per_tray, 2);
  EXPECT_DOUBLE_EQ(r.power_w, 132000);
  EXPECT_TRUE(r.liquid);
  EXPECT_EQ(s->cluster.ScaleUpDomain(), 72);
  EXPECT_EQ(s->cluster.nodes.gpu.name, "GB200-NVL72");
  EXPECT_EQ(s->cluster.nodes.cpu.name, "NVIDIA Grace");
  // Without a racks: section, a domain across nodes is one rack.
  auto d = ReferenceSpec({{"nodes.gpu.model", "GB200"},
                          {"nodes.gpu.count", "4"},
                          {"nodes.count", "36"},
                          {"fabrics.scale_up", "{type: nvlink5, domain: 72}"}});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->cluster.rack.nodes, 18);
  EXPECT_EQ(ReferenceSpec({})->cluster.rack.nodes, 0);  // an HGX cluster: no rack described
}

TEST(RackSpecTest, RejectsBadRacksWithTheirPath) {
  auto bad = ReferenceSpec({{"racks", "{nodes: 4, cooling: water}"}});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("racks.cooling"));
  bad = ReferenceSpec({{"racks", "{nodes: 4, liquid_fraction: 80 %}"}});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("an air-cooled rack has no liquid loop"));
  bad = ReferenceSpec({{"racks", "{switch_trays: 9}"}});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("racks.nodes"));
  bad = ReferenceSpec({{"nodes.gpu.model", "GB200"},
                       {"nodes.gpu.count", "4"},
                       {"nodes.count", "36"},
                       {"fabrics.scale_up", "{type: nvlink5, domain: 72}"},
                       {"racks", "{nodes: 5}"}});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("5 nodes per rack does not divide the 72-GPU NVLink domain's "
                                   "18 nodes"));
}

}  // namespace
}  // namespace gpufleet::model

namespace gpufleet::model {
namespace {

constexpr const char* kSpecForOverrides = kSpec;  // the small spec above

TEST(SpecOverrideTest, AppliesCommandLineChangesBeforeReading) {
  Result<Spec> s = ParseSpec(kSpecForOverrides, "t.yaml",
                             {{"nodes.count", "4"},
                              {"workload.batch.micro", "2"},
                              {"nodes.nics[0].speed", "200 Gb/s"},
                              {"costs.capex_usd", "[1M, 2M]"}});
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->TotalGpus(), 32);
  EXPECT_EQ(s->workload.micro_batch, 2);
  EXPECT_DOUBLE_EQ(s->cluster.nodes.nics[0].port_speed_bytes_per_s, 25e9);
  EXPECT_DOUBLE_EQ(s->cluster.costs.capex_usd.high, 2e6);  // a map created on the way
}

TEST(SpecOverrideTest, ErrorsInAnOverriddenValueNameTheSet) {
  Result<Spec> s = ParseSpec(kSpecForOverrides, "t.yaml", {{"nodes.count", "0"}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message,
            "t.yaml (--set nodes.count): nodes.count: 0 is out of range; use a whole number of "
            "at least 1");
  s = ParseSpec(kSpecForOverrides, "t.yaml", {{"workload.batch.global", "7"}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message.rfind("t.yaml (--set workload.batch.global): ", 0), 0u);
  s = ParseSpec(kSpecForOverrides, "t.yaml", {{"nodes.nics[9].speed", "1"}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "--set nodes.nics[9].speed=1: no list item [9]");
}

TEST(SpecOverrideTest, ParsesPathEqualsValue) {
  Result<SpecOverride> o = ParseOverride("nodes.count=64");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->path, "nodes.count");
  EXPECT_EQ(o->value, "64");
  EXPECT_FALSE(ParseOverride("nodes.count"));
  EXPECT_FALSE(ParseOverride("=3"));
}

}  // namespace
}  // namespace gpufleet::model

namespace gpufleet::model {
namespace {

TEST(ReliabilitySpecTest, ReadsRatesSparesAndDurations) {
  auto s =
      ReferenceSpec({{"reliability",
                      "{failures_per_node_per_day: {gpu: 0.002, fan: 0.0001}, spares: 8, "
                      "detect: 90 s, reschedule_without_spare: 2 h, straggler_slowdown: 15 %}"}});
  ASSERT_TRUE(s) << s.error().message;
  const Reliability& r = s->cluster.reliability;
  ASSERT_EQ(r.failures_per_node_per_day.size(), 2u);
  EXPECT_EQ(r.failures_per_node_per_day[1].first, "fan");
  EXPECT_DOUBLE_EQ(r.failures_per_node_per_day[0].second, 0.002);
  EXPECT_EQ(r.spares, 8);
  EXPECT_DOUBLE_EQ(r.detect_s, 90);
  EXPECT_DOUBLE_EQ(r.reschedule_no_spare_s, 7200);
  EXPECT_DOUBLE_EQ(r.straggler_slowdown, 0.15);
  EXPECT_DOUBLE_EQ(r.init_s, 30);  // default kept (MegaScale's)
  auto a = ReferenceSpec({{"reliability", "{spares: auto}"}});
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->cluster.reliability.spares, -1);
  EXPECT_FALSE(ReferenceSpec({{"reliability", "{spares: some}"}}));
}

TEST(ReliabilitySpecTest, RejectsBadValuesWithTheirPath) {
  auto bad = ReferenceSpec({{"reliability", "{failures_per_node_per_day: {gpu: -1}}"}});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("reliability.failures_per_node_per_day.gpu: a rate cannot be "
                                   "negative"));
  bad = ReferenceSpec({{"reliability", "{spare: 3}"}});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("did you mean 'spares'"));
  bad = ReferenceSpec({{"reliability", "{detect: 5}"}});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("reliability.detect"));
}

// activation_offload: Megatron-Core's cpu_offloading, under its rules (fewer layers than the
// model has, no pipeline stages, no recomputation), each broken rule a one-line error.
TEST(ClusterSpecTest, ActivationOffloadFollowsMegatronCoresRules) {
  const std::string with = Replace(kSpec, "batch: {micro: 4, accumulation: 2}",
                                   "batch: {micro: 4, accumulation: 2}\n  activation_offload: 12");
  Result<Spec> s = ParseSpec(with, "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->workload.activation_offload, 12);
  EXPECT_EQ(ParseSpec(kSpec, "t.yaml")->workload.activation_offload, 0);
  EXPECT_THAT(ErrorOf(Replace(with, "activation_offload: 12", "activation_offload: 24")),
              HasSubstr("24 layers offloaded of 24: at most 23"));
  EXPECT_THAT(ErrorOf(Replace(with, "activation_offload: 12", "activation_offload: -1")),
              HasSubstr("activation_offload"));
  EXPECT_THAT(ErrorOf(Replace(with, "tensor: 1}", "tensor: 1, pipeline: 2}")),
              HasSubstr("does not run with pipeline parallelism"));
  EXPECT_THAT(ErrorOf(with + "  activation_checkpointing: full\n"),
              HasSubstr("does not combine with activation_checkpointing"));
}

}  // namespace
}  // namespace gpufleet::model
