// The step-time model against published runs (reference/published-measurements.md):
// Megatron-Core r0.8.0 on H100, every row of its model table, and the strong-scaling
// endpoints of its 177B run. Tolerance from issue 6: throughput/MFU within 15 %.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/spec.h"
#include "plan/memory.h"
#include "sim/step.h"

namespace gpufleet::sim {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

struct MegatronRow {
  const char* name;
  int heads, hidden, layers, tp, pp, batch;
  double tflops_per_gpu;  // published, Megatron FLOP formula
};

// NVIDIA/Megatron-LM README (r0.8.0, images/model_table.png): DP 48 in every row,
// vocabulary 131,072, sequence 4,096.
constexpr MegatronRow kRows[] = {
    {"1.7B", 16, 2048, 24, 1, 1, 192, 408.8},      {"7.1B", 32, 4096, 30, 2, 1, 192, 465.9},
    {"16B", 48, 6144, 32, 4, 1, 192, 489.1},       {"32B", 56, 7168, 48, 8, 1, 192, 459.6},
    {"70B", 64, 8192, 84, 8, 2, 384, 419.7},       {"119B", 80, 10240, 92, 8, 4, 768, 420.5},
    {"177B", 96, 12288, 96, 8, 6, 1152, 432.8},    {"314B", 128, 16384, 96, 8, 8, 1536, 474.4},
    {"462B", 144, 18432, 112, 8, 16, 3072, 459.9},
};

// An H100 cluster (DGX H100: 8 GPUs on NVLink 4, 8 x 400 Gb/s NDR rails) running a
// GPT model with Megatron's distributed optimizer.
model::Spec MegatronSpec(int heads, int hidden, int layers, int tp, int pp, int dp, int batch) {
  const int gpus = tp * pp * dp;
  const std::string yaml =
      fmt::format(R"(name: megatron-{h}
nodes:
  count: {nodes}
  gpu: {{model: H100-SXM5-80GB, count: 8}}
  cpu: {{model: Intel Xeon Platinum 8480+, sockets: 2}}
  memory: 2 TiB
  nics:
    - {{role: compute, model: ConnectX-7, count: 8, ports: 1, speed: 400 Gb/s}}
fabrics:
  scale_up: {{type: nvlink4, bandwidth: 900 GB/s, switched: true}}
  compute: {{type: infiniband, speed: 400 Gb/s, topology: fat-tree, oversubscription: 1,
            rail_optimized: true, switch: QM9700}}
storage:
  - {{name: lustre, tier: warm, capacity: 10 PB, write: 200 GB/s, read: 400 GB/s}}
workload:
  model: {{name: gpt, layers: {layers}, hidden: {h}, heads: {heads}, ffn_hidden: {ffn},
          vocab: 131072, sequence: 4096}}
  precision: bf16
  parallel: {{strategy: zero1, tensor: {tp}, pipeline: {pp}, sequence_parallel: true}}
  batch: {{micro: 1, accumulation: {acc}}}
  activation_checkpointing: none
  checkpoint: {{interval: 1 h, mode: async, tier: lustre}}
)",
                  fmt::arg("h", hidden), fmt::arg("nodes", gpus / 8), fmt::arg("layers", layers),
                  fmt::arg("heads", heads), fmt::arg("ffn", 4 * hidden), fmt::arg("tp", tp),
                  fmt::arg("pp", pp), fmt::arg("acc", batch / dp));
  auto s = model::ParseSpec(yaml, "megatron.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

// GPUFLEET_SIM_EFF="half_flops,training,attention" overrides the constants
// (for refitting; see docs/sim.md).
Efficiency Eff() {
  Efficiency e;
  if (const char* v = std::getenv("GPUFLEET_SIM_EFF")) {
    std::sscanf(v, "%lf,%lf,%lf", &e.gemm_half_flops, &e.gemm_training, &e.attention);
  }
  return e;
}

TEST(CalibrationTest, MegatronCoreH100TableWithin15Percent) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  for (const auto& row : kRows) {
    const model::Spec spec =
        MegatronSpec(row.heads, row.hidden, row.layers, row.tp, row.pp, 48, row.batch);
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

// Same README: the 177B model strong-scaled from 96 to 4,608 H100s at a fixed batch of
// 1,152 sequences; MFU falls from 47 % to 42 % as communication and the bubble grow.
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

// Checked against, not fitted to (issue 13): NVIDIA Megatron Bridge performance summary, "25.11
// NeMo Container" pre-training table (docs/performance-summary.md of NVIDIA-NeMo/Megatron-Bridge),
// dense Llama 3 in FP8 with current scaling: FP8 only in the transformer layers' linear GEMMs,
// attention and the output layer in BF16 (the recipe's defaults; performance-guide.md). Sequence
// 8,192, micro-batch as printed; tokens/s per GPU.
// The nodes and fabrics of a DGX-class cluster: `count` nodes of `per_node` GPUs, 8 ConnectX-7
// at 400 Gb/s per node on a rail-optimised, non-blocking NDR fat tree, `scale_up` as given.
// A DGX-style node: `per_node` GPUs, 8 NICs of one rail each on a non-blocking fat tree (NDR
// ConnectX-7 and QM9700 unless the caller names the HDR generation).
std::string DgxCluster(int count, const std::string& gpu, const std::string& scale_up,
                       int per_node = 8, const std::string& nic = "ConnectX-7",
                       const std::string& speed = "400 Gb/s", const std::string& sw = "QM9700",
                       int nics = 8) {
  return fmt::format(R"(nodes:
  count: {}
  gpu: {{model: {}, count: {}}}
  nics:
    - {{role: compute, model: {}, count: {}, ports: 1, speed: {}}}
fabrics:
  scale_up: {}
  compute: {{type: infiniband, speed: {}, topology: fat-tree, oversubscription: 1,
            rail_optimized: true, switch: {}}}
)",
                     count, gpu, per_node, nic, nics, speed, scale_up, speed, sw);
}

// The system of a published NVIDIA run: GB200 and GB300 NVL72 racks are trays of 4 GPUs with a
// ConnectX-7 each in 72-GPU NVLink domains (GB300's ConnectX-8 at 800 Gb/s is not in the catalog,
// so its scale-out is understated; the pages do not say how 256 GPUs sit in racks: four domains
// of 64 are assumed); the others 8-GPU nodes on NVLink 4 (Hopper) or 5.
struct SystemShape {
  int per_node = 8;
  std::string scale_up;
};
SystemShape ShapeOf(std::string_view gpu, int gpus) {
  if (gpu.rfind("GB", 0) == 0) {
    return {4, fmt::format("{{type: nvlink5, bandwidth: 1800 GB/s, switched: true, domain: {}}}",
                           gpus <= 72 ? 72 : 64)};
  }
  if (gpu.rfind("H100", 0) == 0) return {8, "{type: nvlink4, bandwidth: 900 GB/s, switched: true}"};
  return {8, "{type: nvlink5, bandwidth: 1800 GB/s, switched: true}"};
}

struct NemoRow {
  const char* name;
  const char* gpu;
  int gpus, layers, hidden, heads, ffn, tp, pp, cp, vp, gbs, mbs;
  const char* strategy;
  double tokens_per_gpu;  // published
  double tolerance;
  // FP8-CS (current scaling) or, in the page's parentheses, FP8-MX (MXFP8; Blackwell).
  const char* recipe = "current";
  // Layers whose activations the recipe offloads to host memory (cpu_offloading_num_layers).
  int offload = 0;
  // The memory model puts the run within the GPU, as it ran; false where it puts it over (by at
  // most 12 %: FP8 runs at the edge, docs/sim.md).
  bool fits = true;
};
constexpr NemoRow kNemoFp8[] = {
    {"H100 Llama3 8B", "H100-SXM5-80GB", 8, 32, 4096, 32, 14336, 1, 1, 1, 1, 128, 1, "fsdp", 14451,
     0.15},
    {"H100 Llama3 70B", "H100-SXM5-80GB", 64, 80, 8192, 64, 28672, 4, 8, 1, 5, 128, 1, "zero1",
     1602, 0.15},
    // 126 layers: uneven stages (16 on the largest of PP8).
    {"H100 Llama3.1 405B", "H100-SXM5-80GB", 1024, 126, 16384, 128, 53248, 8, 8, 2, 8, 512, 1,
     "zero1", 292, 0.15},
    {"B200 Llama3.1 405B", "B200-SXM-180GB", 128, 126, 16384, 128, 53248, 4, 8, 2, 8, 64, 1,
     "zero1", 661, 0.15},
    // +17 % before GEMMs' fixed time grew with the engine's speed (docs/sim.md).
    {"B200 Llama3 8B", "B200-SXM-180GB", 8, 32, 4096, 32, 14336, 1, 1, 1, 1, 128, 2, "zero1", 30624,
     0.15},
    {"B200 Llama3 8B MX", "B200-SXM-180GB", 8, 32, 4096, 32, 14336, 1, 1, 1, 1, 128, 2, "zero1",
     29521, 0.15, "mxfp8"},
    {"B200 Llama3.1 405B MX", "B200-SXM-180GB", 128, 126, 16384, 128, 53248, 4, 8, 2, 8, 64, 1,
     "zero1", 624, 0.15, "mxfp8"},
    // GB200 and GB300 NVL72: trays of 4 GPUs in 72-GPU NVLink domains.
    {"GB200 Llama3 8B", "GB200-NVL72", 8, 32, 4096, 32, 14336, 1, 1, 1, 1, 128, 2, "zero1", 31508,
     0.15},
    // MXFP8 runs 3.6-5.5 % slower than FP8-CS on every Blackwell system here; the model 1.1 %
    // (its GEMMs at Transformer Engine's measured MXFP8 ceiling, its casts fewer bytes).
    {"GB200 Llama3 8B MX", "GB200-NVL72", 8, 32, 4096, 32, 14336, 1, 1, 1, 1, 128, 2, "zero1",
     29789, 0.15, "mxfp8"},
    // The 70B recipes offload activations to the Grace's memory (Megatron Bridge's
    // llama3_70b_pretrain_64gpu_gb200/gb300_fp8cs_config: 40 and 20 of the 80 layers).
    {"GB200 Llama3 70B", "GB200-NVL72", 64, 80, 8192, 64, 28672, 1, 1, 1, 1, 256, 2, "fsdp", 4312,
     0.15, "current", 40, false},
    {"GB200 Llama3.1 405B", "GB200-NVL72", 256, 126, 16384, 128, 53248, 4, 16, 1, 4, 1536, 1,
     "zero1", 813, 0.15, "current", 0, false},
    {"GB300 Llama3 8B", "GB300-NVL72", 8, 32, 4096, 32, 14336, 1, 1, 1, 1, 128, 2, "zero1", 37556,
     0.15},
    {"GB300 Llama3 8B MX", "GB300-NVL72", 8, 32, 4096, 32, 14336, 1, 1, 1, 1, 128, 2, "zero1",
     36108, 0.15, "mxfp8"},
    {"GB300 Llama3 70B", "GB300-NVL72", 64, 80, 8192, 64, 28672, 1, 1, 1, 1, 256, 2, "fsdp", 4520,
     0.15, "current", 20, false},
    {"GB300 Llama3.1 405B", "GB300-NVL72", 256, 126, 16384, 128, 53248, 2, 8, 2, 4, 1536, 1,
     "zero1", 999, 0.15, "current", 0, false},
};

model::Spec NemoSpec(const NemoRow& r) {
  const int dp = r.gpus / (r.tp * r.pp * r.cp);
  const SystemShape shape = ShapeOf(r.gpu, r.gpus);
  const int per_node = shape.per_node;
  const std::string& scale_up = shape.scale_up;
  const std::string yaml = fmt::format(
      R"(name: nemo
nodes:
  count: {nodes}
  gpu: {{model: {gpu}, count: {per_node}}}
  cpu: {{model: Intel Xeon Platinum 8480+, sockets: 2}}
  memory: 2 TiB
  nics:
    - {{role: compute, model: ConnectX-7, count: {per_node}, ports: 1, speed: 400 Gb/s}}
fabrics:
  scale_up: {su}
  compute: {{type: infiniband, speed: 400 Gb/s, topology: fat-tree, oversubscription: 1,
            rail_optimized: true, switch: QM9700}}
storage:
  - {{name: lustre, tier: warm, capacity: 10 PB, write: 200 GB/s, read: 400 GB/s}}
workload:
  model: {{name: llama, layers: {layers}, hidden: {hidden}, heads: {heads}, kv_heads: 8,
          ffn_hidden: {ffn}, mlp: swiglu, vocab: 128256, sequence: 8192, dropout: 0}}
  precision: fp8
  parallel: {{strategy: {strategy}, tensor: {tp}, pipeline: {pp}, context: {cp},
             virtual_stages: {vp}, sequence_parallel: {sp}}}
  batch: {{micro: {mbs}, accumulation: {acc}}}
  activation_checkpointing: none
  activation_offload: {offload}
  software: {{stack: nemo-2025, fp8_recipe: {recipe}}}
  checkpoint: {{interval: 1 h, mode: async, tier: lustre}}
)",
      fmt::arg("nodes", r.gpus / per_node), fmt::arg("gpu", r.gpu), fmt::arg("per_node", per_node),
      fmt::arg("su", scale_up), fmt::arg("recipe", r.recipe), fmt::arg("offload", r.offload),
      fmt::arg("layers", r.layers), fmt::arg("hidden", r.hidden), fmt::arg("heads", r.heads),
      fmt::arg("ffn", r.ffn), fmt::arg("strategy", r.strategy), fmt::arg("tp", r.tp),
      fmt::arg("pp", r.pp), fmt::arg("cp", r.cp), fmt::arg("vp", r.vp),
      fmt::arg("sp", r.tp > 1 ? "true" : "false"), fmt::arg("mbs", r.mbs),
      fmt::arg("acc", r.gbs / (dp * r.mbs)));
  auto s = model::ParseSpec(yaml, "nemo.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

// Checked against, not fitted to (issue 13): Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models"), Tables 3 and 5: GPT on 80 GB A100s (Selene, 8 x
// HDR 200 Gb/s per node), TP 8, sequence 2,048, vocabulary 51,200, no data parallelism,
// iteration time of each model twice: sequence parallelism with selective recomputation
// ("present work") and the baseline, full recomputation without sequence parallelism. 2022
// Megatron has fused softmax, not flash attention: `flash_attention: false`.
struct KorthikantiRow {
  const char* name;
  int heads, hidden, layers, pp, vp, gpus, global_batch, micro_batch;
  bool full_recompute;  // the baseline: full recomputation, no sequence parallelism
  double iteration_s;   // published
};
constexpr KorthikantiRow kKorthikanti[] = {
    {"22B", 64, 6144, 48, 1, 1, 8, 4, 4, false, 1.10},
    {"175B", 96, 12288, 96, 8, 3, 64, 64, 1, false, 13.75},
    {"530B", 128, 20480, 105, 35, 3, 280, 280, 1, false, 37.83},
    {"1T", 160, 25600, 128, 64, 1, 512, 512, 1, false, 71.49},
    {"22B", 64, 6144, 48, 1, 1, 8, 4, 4, true, 1.42},
    {"175B", 96, 12288, 96, 8, 3, 64, 64, 1, true, 18.13},
    {"530B", 128, 20480, 105, 35, 3, 280, 280, 1, true, 49.05},
    {"1T", 160, 25600, 128, 64, 1, 512, 512, 1, true, 94.42},
};

// Selene's DGX A100 nodes: 8 A100 80 GB on NVLink 3, 8 HDR 200 Gb/s HCAs on a fat tree.
std::string SeleneCluster(int nodes) {
  return DgxCluster(nodes, "A100-SXM4-80GB", "{type: nvlink3, bandwidth: 600 GB/s, switched: true}",
                    8, "ConnectX-6", "200 Gb/s", "QM8700");
}

model::Spec KorthikantiSpec(const KorthikantiRow& r,
                            std::string_view stack = "megatron-core-2024") {
  const std::string yaml =
      "name: selene\n" + SeleneCluster(r.gpus / 8) +
      fmt::format(
          R"(workload:
  model: {{name: gpt, layers: {layers}, hidden: {hidden}, heads: {heads}, vocab: 51200,
          sequence: 2048}}
  parallel: {{strategy: zero1, tensor: 8, pipeline: {pp}, virtual_stages: {vp},
             sequence_parallel: {sp}}}
  batch: {{micro: {mb}, global: {gb}}}
  activation_checkpointing: {ckpt}
  flash_attention: false
  software: {{stack: {stack}}}
)",
          fmt::arg("stack", stack), fmt::arg("layers", r.layers), fmt::arg("hidden", r.hidden),
          fmt::arg("heads", r.heads), fmt::arg("pp", r.pp), fmt::arg("vp", r.vp),
          fmt::arg("mb", r.micro_batch), fmt::arg("gb", r.global_batch),
          fmt::arg("sp", !r.full_recompute),
          fmt::arg("ckpt", r.full_recompute ? "full" : "selective"));
  auto s = model::ParseSpec(yaml, "selene.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
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

// Checked against, not fitted to (issue 13): MosaicML LLM Foundry's throughput tables
// (mosaicml/llm-foundry scripts/train/benchmarking/README.md): MPT models (GELU MLP of 4 h,
// vocabulary 50,368, flash attention) trained with PyTorch FSDP through Composer, sequence 2,048,
// BF16, tokens/s per GPU. FULL_SHARD is ZeRO-3 (fsdp), SHARD_GRAD_OP is ZeRO-2. A100 80 GB and
// A100 40 GB nodes with 1,600 Gb/s RoCE; H100 nodes (fabric unstated: 8 x 400 Gb InfiniBand
// assumed). The A100 40 GB table (8 to 128 GPUs, 125M to 70B) ran pure BF16.
struct FoundryRow {
  const char* name;
  const char* gpu;
  int layers, hidden, heads, gpus, micro_batch, accumulation;
  bool full_shard, checkpointing;
  double tokens_per_gpu;  // published
  int sequence = 2048;
  // Precision `bf16` with FSDP mixed precision PURE (the A100 70B rows): the model, its
  // gradients and their reduction in BF16; the others `amp_bf16` DEFAULT, reduced in FP32.
  bool pure_bf16 = false;
  // `amp_fp8` (the H100 FP8 table): Transformer Engine v0.10 linear layers (`fc_type: te`) under
  // its delayed scaling, the loss's output layer and the Triton attention in BF16.
  bool fp8 = false;
};
constexpr FoundryRow kFoundry[] = {
    {"70b", "H100-SXM5-80GB", 80, 8192, 64, 512, 8, 1, true, true, 1007},
    {"70b", "H100-SXM5-80GB", 80, 8192, 64, 256, 8, 1, true, true, 1035},
    {"70b", "H100-SXM5-80GB", 80, 8192, 64, 128, 8, 1, true, true, 1058},
    {"30b", "H100-SXM5-80GB", 48, 7168, 64, 512, 8, 1, true, true, 2115},
    {"30b", "H100-SXM5-80GB", 48, 7168, 64, 256, 8, 1, true, true, 2148},
    {"30b", "H100-SXM5-80GB", 48, 7168, 64, 128, 8, 1, true, true, 2199},
    {"13b", "H100-SXM5-80GB", 40, 5120, 40, 512, 16, 1, true, true, 4952},
    {"13b", "H100-SXM5-80GB", 40, 5120, 40, 256, 16, 1, true, true, 4989},
    {"13b", "H100-SXM5-80GB", 40, 5120, 40, 128, 16, 1, true, true, 5080},
    {"7b", "H100-SXM5-80GB", 32, 4096, 32, 512, 6, 1, true, false, 9670},
    {"7b", "H100-SXM5-80GB", 32, 4096, 32, 256, 6, 1, true, false, 10119},
    {"7b", "H100-SXM5-80GB", 32, 4096, 32, 128, 6, 1, true, false, 10475},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 512, 8, 1, false, false, 21664},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 256, 8, 1, false, false, 22772},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 128, 8, 1, false, false, 23422},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 512, 12, 1, false, false, 39837},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 256, 12, 1, false, false, 42555},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 128, 12, 1, false, false, 44123},
    {"70b", "H100-SXM5-80GB", 80, 8192, 64, 64, 8, 4, true, true, 1039},
    {"70b", "H100-SXM5-80GB", 80, 8192, 64, 32, 2, 16, true, true, 882},
    {"30b", "H100-SXM5-80GB", 48, 7168, 64, 32, 14, 3, true, true, 2308},
    {"30b", "H100-SXM5-80GB", 48, 7168, 64, 16, 10, 3, true, true, 2263},
    {"30b", "H100-SXM5-80GB", 48, 7168, 64, 8, 3, 21, true, true, 2002},
    {"13b", "H100-SXM5-80GB", 40, 5120, 40, 64, 2, 1, true, false, 4800},
    {"13b", "H100-SXM5-80GB", 40, 5120, 40, 32, 2, 1, true, false, 4811},
    {"13b", "H100-SXM5-80GB", 40, 5120, 40, 16, 2, 1, true, false, 4767},
    {"13b", "H100-SXM5-80GB", 40, 5120, 40, 8, 2, 1, true, false, 4792},
    {"7b", "H100-SXM5-80GB", 32, 4096, 32, 8, 6, 1, true, false, 10643},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 64, 6, 3, true, false, 22525},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 32, 6, 3, true, false, 23021},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 16, 10, 3, true, false, 24142},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 64, 20, 1, true, false, 44402},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 32, 20, 1, true, false, 45130},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 16, 20, 1, true, false, 46037},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 8, 14, 1, true, false, 45455},
    {"760m", "H100-SXM5-80GB", 24, 1536, 12, 32, 24, 1, true, false, 67971},
    {"760m", "H100-SXM5-80GB", 24, 1536, 12, 16, 24, 1, true, false, 68551},
    {"760m", "H100-SXM5-80GB", 24, 1536, 12, 8, 24, 2, true, false, 63147},
    {"70b", "A100-SXM4-80GB", 80, 8192, 64, 64, 8, 4, true, true, 410, 2048, true},
    {"70b", "A100-SXM4-80GB", 80, 8192, 64, 32, 2, 16, true, true, 373, 2048, true},
    {"30b", "A100-SXM4-80GB", 48, 7168, 64, 8, 3, 21, true, true, 916},
    {"13b", "A100-SXM4-80GB", 40, 5120, 40, 8, 2, 3, true, false, 2262},
    {"7b", "A100-SXM4-80GB", 32, 4096, 32, 8, 6, 2, true, false, 4641},
    {"3b", "A100-SXM4-80GB", 32, 2560, 32, 8, 10, 2, true, false, 10811},
    {"1b", "A100-SXM4-80GB", 24, 2048, 16, 8, 14, 4, true, false, 20513},
    {"760m", "A100-SXM4-80GB", 24, 1536, 12, 8, 24, 2, true, false, 32434},
    {"70b", "A100-SXM4-40GB", 80, 8192, 64, 128, 4, 1, true, true, 376, 2048, true},
    {"70b", "A100-SXM4-40GB", 80, 8192, 64, 64, 2, 1, true, true, 276, 2048, true},
    {"30b", "A100-SXM4-40GB", 48, 7168, 64, 128, 6, 1, true, true, 865, 2048, true},
    {"30b", "A100-SXM4-40GB", 48, 7168, 64, 32, 4, 1, true, true, 857, 2048, true},
    {"13b", "A100-SXM4-40GB", 40, 5120, 40, 128, 16, 1, true, true, 1972, 2048, true},
    {"13b", "A100-SXM4-40GB", 40, 5120, 40, 64, 16, 1, true, true, 1976, 2048, true},
    {"13b", "A100-SXM4-40GB", 40, 5120, 40, 32, 14, 1, true, true, 1998, 2048, true},
    {"13b", "A100-SXM4-40GB", 40, 5120, 40, 16, 10, 1, true, true, 1993, 2048, true},
    {"13b", "A100-SXM4-40GB", 40, 5120, 40, 8, 4, 16, true, true, 1668, 2048, true},
    {"7b", "A100-SXM4-40GB", 32, 4096, 32, 128, 18, 1, true, true, 3623, 2048, true},
    {"7b", "A100-SXM4-40GB", 32, 4096, 32, 64, 18, 1, true, true, 3665, 2048, true},
    {"7b", "A100-SXM4-40GB", 32, 4096, 32, 32, 18, 1, true, true, 3725, 2048, true},
    {"7b", "A100-SXM4-40GB", 32, 4096, 32, 16, 16, 1, true, true, 3645, 2048, true},
    {"7b", "A100-SXM4-40GB", 32, 4096, 32, 8, 12, 4, true, true, 3679, 2048, true},
    {"3b", "A100-SXM4-40GB", 32, 2560, 32, 128, 6, 1, true, false, 9538, 2048, true},
    {"3b", "A100-SXM4-40GB", 32, 2560, 32, 64, 6, 1, true, false, 9736, 2048, true},
    {"3b", "A100-SXM4-40GB", 32, 2560, 32, 32, 6, 1, true, false, 9914, 2048, true},
    {"3b", "A100-SXM4-40GB", 32, 2560, 32, 16, 5, 1, true, false, 9750, 2048, true},
    {"3b", "A100-SXM4-40GB", 32, 2560, 32, 8, 5, 8, true, false, 10065, 2048, true},
    {"1b", "A100-SXM4-40GB", 24, 2048, 16, 128, 10, 1, true, false, 18647, 2048, true},
    {"1b", "A100-SXM4-40GB", 24, 2048, 16, 64, 10, 1, true, false, 19001, 2048, true},
    {"1b", "A100-SXM4-40GB", 24, 2048, 16, 32, 10, 1, true, false, 15555, 2048, true},
    {"1b", "A100-SXM4-40GB", 24, 2048, 16, 16, 8, 1, true, false, 19085, 2048, true},
    {"1b", "A100-SXM4-40GB", 24, 2048, 16, 8, 8, 8, true, false, 19271, 2048, true},
    {"760m", "A100-SXM4-40GB", 24, 1536, 12, 128, 12, 1, true, false, 28940, 2048, true},
    {"760m", "A100-SXM4-40GB", 24, 1536, 12, 64, 12, 1, true, false, 29344, 2048, true},
    {"760m", "A100-SXM4-40GB", 24, 1536, 12, 32, 12, 1, true, false, 29648, 2048, true},
    {"760m", "A100-SXM4-40GB", 24, 1536, 12, 16, 12, 1, true, false, 29607, 2048, true},
    {"760m", "A100-SXM4-40GB", 24, 1536, 12, 8, 12, 4, true, false, 30173, 2048, true},
    {"350m", "A100-SXM4-40GB", 24, 1024, 16, 128, 18, 1, true, false, 51934, 2048, true},
    {"350m", "A100-SXM4-40GB", 24, 1024, 16, 64, 18, 1, true, false, 52689, 2048, true},
    {"350m", "A100-SXM4-40GB", 24, 1024, 16, 32, 18, 1, true, false, 53811, 2048, true},
    {"350m", "A100-SXM4-40GB", 24, 1024, 16, 16, 18, 1, true, false, 55413, 2048, true},
    {"350m", "A100-SXM4-40GB", 24, 1024, 16, 8, 16, 4, true, false, 55995, 2048, true},
    {"125m", "A100-SXM4-40GB", 12, 768, 12, 128, 26, 1, true, false, 123936, 2048, true},
    {"125m", "A100-SXM4-40GB", 12, 768, 12, 64, 26, 1, true, false, 125234, 2048, true},
    {"125m", "A100-SXM4-40GB", 12, 768, 12, 32, 26, 1, true, false, 127122, 2048, true},
    {"125m", "A100-SXM4-40GB", 12, 768, 12, 16, 26, 1, true, false, 130535, 2048, true},
    {"125m", "A100-SXM4-40GB", 12, 768, 12, 8, 26, 3, true, false, 136334, 2048, true},
};

// The same tables at other sequence lengths: every 8-GPU row without checkpointing of the models
// that have one at most lengths (A100 125M to 3B, H100 760M to 3B), about the same tokens per
// micro-batch at each length. They show attention's cost, which grows with the sequence.
constexpr FoundryRow kFoundrySweep[] = {
    {"125m", "A100-SXM4-80GB", 12, 768, 12, 8, 1, 2, true, false, 20368, 65536},
    {"125m", "A100-SXM4-80GB", 12, 768, 12, 8, 2, 2, true, false, 36407, 32768},
    {"125m", "A100-SXM4-80GB", 12, 768, 12, 8, 4, 2, true, false, 60040, 16384},
    {"125m", "A100-SXM4-80GB", 12, 768, 12, 8, 8, 2, true, false, 90392, 8192},
    {"125m", "A100-SXM4-80GB", 12, 768, 12, 8, 16, 2, true, false, 118396, 4096},
    {"125m", "A100-SXM4-80GB", 12, 768, 12, 8, 40, 2, true, false, 142830, 2048},
    {"350m", "A100-SXM4-80GB", 24, 1024, 16, 8, 1, 2, true, false, 7524, 65536},
    {"350m", "A100-SXM4-80GB", 24, 1024, 16, 8, 2, 2, true, false, 13652, 32768},
    {"350m", "A100-SXM4-80GB", 24, 1024, 16, 8, 4, 2, true, false, 23559, 16384},
    {"350m", "A100-SXM4-80GB", 24, 1024, 16, 8, 8, 2, true, false, 36569, 8192},
    {"350m", "A100-SXM4-80GB", 24, 1024, 16, 8, 16, 2, true, false, 49555, 4096},
    {"350m", "A100-SXM4-80GB", 24, 1024, 16, 8, 32, 2, true, false, 58782, 2048},
    {"760m", "A100-SXM4-80GB", 24, 1536, 12, 8, 1, 2, true, false, 8802, 32768},
    {"760m", "A100-SXM4-80GB", 24, 1536, 12, 8, 3, 2, true, false, 14274, 16384},
    {"760m", "A100-SXM4-80GB", 24, 1536, 12, 8, 6, 2, true, false, 20933, 8192},
    {"760m", "A100-SXM4-80GB", 24, 1536, 12, 8, 12, 2, true, false, 27351, 4096},
    {"760m", "A100-SXM4-80GB", 24, 1536, 12, 8, 24, 2, true, false, 32434, 2048},
    {"1b", "A100-SXM4-80GB", 24, 2048, 16, 8, 1, 4, true, false, 6275, 32768},
    {"1b", "A100-SXM4-80GB", 24, 2048, 16, 8, 2, 4, true, false, 9956, 16384},
    {"1b", "A100-SXM4-80GB", 24, 2048, 16, 8, 3, 4, true, false, 13814, 8192},
    {"1b", "A100-SXM4-80GB", 24, 2048, 16, 8, 7, 4, true, false, 17807, 4096},
    {"1b", "A100-SXM4-80GB", 24, 2048, 16, 8, 14, 4, true, false, 20513, 2048},
    {"3b", "A100-SXM4-80GB", 32, 2560, 32, 8, 1, 6, true, false, 5529, 16384},
    {"3b", "A100-SXM4-80GB", 32, 2560, 32, 8, 3, 6, true, false, 7695, 8192},
    {"3b", "A100-SXM4-80GB", 32, 2560, 32, 8, 5, 6, true, false, 9457, 4096},
    {"3b", "A100-SXM4-80GB", 32, 2560, 32, 8, 10, 2, true, false, 10811, 2048},
    {"125m", "A100-SXM4-40GB", 12, 768, 12, 8, 1, 4, true, false, 32651, 32768, true},
    {"125m", "A100-SXM4-40GB", 12, 768, 12, 8, 2, 3, true, false, 55484, 16384, true},
    {"125m", "A100-SXM4-40GB", 12, 768, 12, 8, 5, 3, true, false, 86858, 8192, true},
    {"125m", "A100-SXM4-40GB", 12, 768, 12, 8, 13, 3, true, false, 115162, 4096, true},
    {"125m", "A100-SXM4-40GB", 12, 768, 12, 8, 26, 3, true, false, 136334, 2048, true},
    {"350m", "A100-SXM4-40GB", 24, 1024, 16, 8, 1, 4, true, false, 13416, 32768, true},
    {"350m", "A100-SXM4-40GB", 24, 1024, 16, 8, 2, 4, true, false, 22896, 16384, true},
    {"350m", "A100-SXM4-40GB", 24, 1024, 16, 8, 4, 4, true, false, 34933, 8192, true},
    {"350m", "A100-SXM4-40GB", 24, 1024, 16, 8, 8, 4, true, false, 46833, 4096, true},
    {"350m", "A100-SXM4-40GB", 24, 1024, 16, 8, 16, 4, true, false, 55995, 2048, true},
    {"760m", "A100-SXM4-40GB", 24, 1536, 12, 8, 1, 4, true, false, 13914, 16384, true},
    {"760m", "A100-SXM4-40GB", 24, 1536, 12, 8, 3, 4, true, false, 20106, 8192, true},
    {"760m", "A100-SXM4-40GB", 24, 1536, 12, 8, 6, 4, true, false, 25863, 4096, true},
    {"760m", "A100-SXM4-40GB", 24, 1536, 12, 8, 12, 4, true, false, 30173, 2048, true},
    {"1b", "A100-SXM4-40GB", 24, 2048, 16, 8, 1, 8, true, false, 9715, 16384, true},
    {"1b", "A100-SXM4-40GB", 24, 2048, 16, 8, 2, 8, true, false, 13474, 8192, true},
    {"1b", "A100-SXM4-40GB", 24, 2048, 16, 8, 4, 8, true, false, 16856, 4096, true},
    {"1b", "A100-SXM4-40GB", 24, 2048, 16, 8, 8, 8, true, false, 19271, 2048, true},
    {"3b", "A100-SXM4-40GB", 32, 2560, 32, 8, 1, 8, true, false, 7149, 8192, true},
    {"3b", "A100-SXM4-40GB", 32, 2560, 32, 8, 2, 8, true, false, 8777, 4096, true},
    {"3b", "A100-SXM4-40GB", 32, 2560, 32, 8, 5, 8, true, false, 10065, 2048, true},
    {"760m", "H100-SXM5-80GB", 24, 1536, 12, 8, 1, 2, true, false, 16291, 32768},
    {"760m", "H100-SXM5-80GB", 24, 1536, 12, 8, 3, 2, true, false, 27815, 16384},
    {"760m", "H100-SXM5-80GB", 24, 1536, 12, 8, 6, 2, true, false, 41825, 8192},
    {"760m", "H100-SXM5-80GB", 24, 1536, 12, 8, 12, 2, true, false, 55459, 4096},
    {"760m", "H100-SXM5-80GB", 24, 1536, 12, 8, 96, 2, true, false, 83749, 512},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 8, 1, 4, true, false, 12025, 32768},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 8, 2, 4, true, false, 19649, 16384},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 8, 3, 4, true, false, 29157, 8192},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 8, 7, 4, true, false, 38535, 4096},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 8, 14, 1, true, false, 45455, 2048},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 8, 56, 4, true, false, 52275, 512},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 8, 1, 6, true, false, 11152, 16384},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 8, 3, 6, true, false, 16578, 8192},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 8, 5, 6, true, false, 20964, 4096},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 8, 40, 6, true, false, 27965, 512},
};

model::Spec FoundrySpec(const FoundryRow& r) {
  const bool h100 = std::string(r.gpu).rfind("H100", 0) == 0;
  const int nodes = std::max(1, r.gpus / 8);
  const std::string fabric =
      nodes == 1 ? ""
      : h100     ? "  compute: {type: infiniband, speed: 400 Gb/s, topology: fat-tree, "
                   "oversubscription: 1, rail_optimized: true, switch: QM9700}\n"
                 : "  compute: {type: roce, speed: 200 Gb/s, topology: fat-tree, "
                   "oversubscription: 1, rail_optimized: true, switch: SN5600}\n";
  const std::string yaml = fmt::format(
      R"(name: llm-foundry
nodes:
  count: {nodes}
  gpu: {{model: {gpu}, count: 8}}
  nics:
    - {{role: compute, model: ConnectX-7, count: 8, ports: 1, speed: {nic}}}
fabrics:
  scale_up: {su}
{fabric}workload:
  model: {{name: mpt, layers: {layers}, hidden: {hidden}, heads: {heads}, vocab: 50368,
          sequence: {sequence}, dropout: 0}}
  parallel: {{strategy: {strategy}}}
  batch: {{micro: {mb}, accumulation: {acc}}}
  activation_checkpointing: {ckpt}
  precision: {precision}
  software: {{stack: composer-2023{reduce}}}
)",
      fmt::arg("nodes", nodes), fmt::arg("gpu", r.gpu),
      fmt::arg("nic", h100 ? "400 Gb/s" : "200 Gb/s"),
      fmt::arg("su", h100 ? "{type: nvlink4, bandwidth: 900 GB/s, switched: true}"
                          : "{type: nvlink3, bandwidth: 600 GB/s, switched: true}"),
      fmt::arg("fabric", fabric), fmt::arg("layers", r.layers), fmt::arg("hidden", r.hidden),
      fmt::arg("heads", r.heads), fmt::arg("sequence", r.sequence),
      fmt::arg("strategy", r.full_shard ? "fsdp" : "zero2"), fmt::arg("mb", r.micro_batch),
      fmt::arg("acc", r.accumulation), fmt::arg("ckpt", r.checkpointing ? "full" : "none"),
      fmt::arg("reduce", r.pure_bf16 ? ", grad_reduce: bf16" : ""),
      fmt::arg("precision", r.fp8 ? "fp8" : "bf16"));
  auto s = model::ParseSpec(yaml, "llm-foundry.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

// The same configuration of the same model on the same GPUs: the same run when the published
// numbers agree too (a sweep row that is also a 2,048-token row), a twin at another precision.
bool SameRun(const FoundryRow& a, const FoundryRow& b) {
  return std::string_view(a.gpu) == b.gpu && std::string_view(a.name) == b.name &&
         a.sequence == b.sequence && a.gpus == b.gpus && a.micro_batch == b.micro_batch &&
         a.accumulation == b.accumulation && a.checkpointing == b.checkpointing;
}

// "A100", "A100-40" (the 40 GB table) or "H100", for the printouts.
std::string GpuLabel(const FoundryRow& r) {
  const std::string_view gpu = r.gpu;
  if (gpu == "A100-SXM4-40GB") return "A100-40";
  return gpu.rfind("A100", 0) == 0 ? "A100" : "H100";
}

// The A100 rows the model misses by more than 15 %, each with its bound and why: one row the
// model's A100 GEMM rate cannot reach, two published rows far below their neighbours in the same
// table, and the 125M model's 768-wide GEMMs.
struct FoundryMiss {
  const char* name;
  const char* gpu;
  int gpus;
  double bound;
};
constexpr FoundryMiss kFoundryA100Misses[] = {
    // 73.7 % hardware FLOPs utilisation with full recomputation: above the model's A100 GEMM rate
    // (0.87 x 0.78 of the peak, fitted on H100); -14.7 % before FSDP1's gradient copies.
    {"30b", "A100-SXM4-80GB", 8, 0.18},
    // 276 tokens/s per GPU at micro-batch 2, where 128 GPUs at micro-batch 4 ran 376: 36 % more
    // time per token on half the GPUs, which neither the gathers nor the bubble-free FSDP explain.
    {"70b", "A100-SXM4-40GB", 64, 0.26},
    // 15,555 tokens/s per GPU where 16 and 64 GPUs ran 19,085 and 19,001.
    {"1b", "A100-SXM4-40GB", 32, 0.21},
    // 768-wide GEMMs, further from the ceiling than gemm_half_flops says (the sweep's 125M rows).
    {"125m", "A100-SXM4-40GB", 128, 0.18},
    {"125m", "A100-SXM4-40GB", 64, 0.18},
    {"125m", "A100-SXM4-40GB", 32, 0.18},
};

// The H100 rows are a known miss, most predicted faster (-3.5 to +29 %, worst at small models
// without checkpointing; 14 of 14 checkpointed rows within 15 %, 19 of 24 without): with the
// Triton kernel at its own rate times mma.sync's share, the compute slowed beside FSDP's hidden
// collectives and FSDP1's gradient copies, what is left is every part of the step ~10 % slower
// on these H100s than the model says, at every sequence length
// (KernelRateFromTheSequenceSweep, docs/sim.md). Judged so that the bias stays
// visible and cannot grow unseen.
TEST(CalibrationTest, LlmFoundryFsdpRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  double worst_a100 = 0, worst_h100 = 0;
  int checkpointed_h100_within = 0, a100_within = 0, a100_rows = 0;
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
      EXPECT_GT(error, -0.05) << row.name << " on " << row.gpus << " H100";
      EXPECT_LT(error, 0.35) << row.name << " on " << row.gpus << " H100";
      worst_h100 = std::max(worst_h100, error);
      checkpointed_h100_within += row.checkpointing && error <= 0.15;
    }
    EXPECT_TRUE(r->fits) << row.name << " on " << row.gpus << ": it ran";
  }
  EXPECT_GE(checkpointed_h100_within, 14);  // of 14
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
// runs at exactly 0.263, gives 0.263 back within 1.5 %, so they do not. On H100 (the same kernel at
// mma.sync's share) the published slope and intercept are both ~14 % below the model's.
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
      EXPECT_GT(rate / model_rate, 0.80) << key;
      EXPECT_LT(rate / model_rate, 0.92) << key;
      EXPECT_GT(pred.intercept / pub.intercept, 0.80) << key;
      EXPECT_LT(pred.intercept / pub.intercept, 0.95) << key;
    }
  }
  ASSERT_EQ(a100_shares.size(), 5u);
  std::sort(a100_shares.begin(), a100_shares.end());
  EXPECT_NEAR(a100_shares[2], plan::kTriton2022AttentionOfPeak, 0.0005);  // the median
}

// With the kernel's own rate the A100 sweep lands within a few per cent at every length (from
// 350M up), and on H100 (the same kernel at mma.sync's share) the error no longer grows with the
// sequence: what is left on H100 is flat, +10 to +22 % at every length (docs/sim.md).
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
      // 125M's GEMMs, 768 wide, run further from the ceiling at short sequences than
      // gemm_half_flops says (+10 % and +15 % at 4,096 and 2,048); from 350M up within 7 %
      // (-6.5 % to +3.0 %).
      EXPECT_NEAR(error, 0, row.hidden < 1024 ? 0.20 : 0.07) << row.name << " at " << row.sequence;
      continue;
    }
    EXPECT_GT(error, 0.07) << row.name << " at " << row.sequence;
    EXPECT_LT(error, 0.25) << row.name << " at " << row.sequence;
    auto [it, fresh] = h100_range.try_emplace(row.name, error, error);
    it->second = {std::min(it->second.first, error), std::max(it->second.second, error)};
  }
  for (const auto& [name, range] : h100_range) {
    EXPECT_LT(range.second - range.first, 0.08) << name << ": the H100 error follows the sequence";
  }
}

// Checked against, not fitted to (issue 13): the same README's H100 80 GB FP8 table, added with
// the BF16 tables (commit b2a43a1): `amp_fp8` with `fc_type: te` (Transformer Engine v0.10, whose
// only recipe was delayed scaling), `attn_impl: triton`, 8 GPUs, FULL_SHARD. Every row.
constexpr FoundryRow kFoundryFp8[] = {
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 8, 3, 6, true, true, 5856, 32768, false, true},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 8, 3, 6, true, false, 19146, 8192, false, true},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 8, 10, 6, true, false, 30586, 2048, false, true},
    {"3b", "H100-SXM5-80GB", 32, 2560, 32, 8, 40, 6, true, false, 36527, 512, false, true},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 8, 1, 4, true, false, 12580, 32768, false, true},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 8, 2, 4, true, false, 32010, 8192, false, true},
    {"1b", "H100-SXM5-80GB", 24, 2048, 16, 8, 56, 4, true, false, 70315, 512, false, true},
};
// The BF16 table's checkpointed 3B row at 32,768 (the sweep above has the rows without
// checkpointing): the FP8 row's twin.
constexpr FoundryRow kFoundryBf16CheckpointedTwin = {
    "3b", "H100-SXM5-80GB", 32, 2560, 32, 8, 3, 6, true, true, 5873, 32768};

// The FP8 rows carry the H100 table's bias (+10.8 % to +15.7 %, where the BF16 sweep's rows of
// these models are +7.9 % to +14.8 %); where the BF16 table ran the same shape (model, length,
// micro-batch, accumulation, checkpointing), the FP8 speed-up itself, in which that bias cancels,
// is what the FP8 mechanisms predict: the linear layers at FP8's own ceiling with their casts,
// attention and the output layer in BF16 (1.00x at 32,768 tokens, where attention is most of the
// step, to 1.35x at 512).
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
    EXPECT_GT(error, 0.05) << row.name << " at " << row.sequence;
    EXPECT_LT(error, 0.20) << row.name << " at " << row.sequence;
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
  EXPECT_GE(within, 6);  // of 7: 1B at 32,768 is +15.7 %
}

// Checked against, not fitted to (issue 13): mixture-of-experts rows of NVIDIA's Megatron
// Bridge performance summary, "26.04.01 NeMo Container" (docs/performance-summary-archive.md of
// NVIDIA-NeMo/Megatron-Bridge): Qwen3 30B-A3B and 235B-A22B (128 experts, top 8, no shared
// expert, head size 128), sequence 4,096, token-dropless with the tokens forced to balance, FP8
// on H100 and MXFP8 (here fp8) on B200, distributed optimizer, tokens/s per GPU. 235B has 94
// layers: uneven stages (12 on the largest of PP8). GPT-OSS 120B
// (a regression the page footnotes, sliding-window attention with sinks) and DeepSeek-V3
// (multi-head latent attention) are not checked: their attention is not modelled.
struct MoeRow {
  const char* name;
  const char* gpu;
  int gpus, layers, hidden, heads, kv_heads, vocab, experts, top_k, expert_ffn;
  int gbs, mbs, tp, pp, vp, ep;
  bool tp_overlap;        // the recipe's CommOverlapConfig(tp_comm_overlap=...)
  double tokens_per_gpu;  // published
  // The recipe's dispatcher where EP leaves a node (HybridEP deduplicates per node; inside one
  // node or NVL72 domain, where the Blackwell recipes use it too, it changes nothing here).
  const char* dispatcher = "alltoall";
  const char* precision = "fp8";  // FP8 current scaling on Hopper, MXFP8 on Blackwell
  // The recipe's overlap_moe_expert_parallel_comm (Megatron Bridge's moe_a2a_overlap).
  bool ep_overlap = false;
};
constexpr MoeRow kMoe[] = {
    // The 26.04.01 recipe (qwen3_30b_a3b_pretrain_16gpu_h100_fp8cs_config): flex + HybridEP.
    // clang-format off
    {"Qwen3 30B-A3B", "H100-SXM5-80GB", 16, 48, 2048, 32, 4, 151936, 128, 8, 768, 1024, 1, 1, 1, 1,
     16, true, 8960, "hybridep"},
    // clang-format on
    {"Qwen3 30B-A3B", "B200-SXM-180GB", 8, 48, 2048, 32, 4, 151936, 128, 8, 768, 512, 4, 1, 1, 1, 8,
     true, 27136},
    // qwen3_235b_a22b_pretrain_256gpu_h100_fp8cs_config: all-to-all, EP overlap on (with
    // delay_wgrad_compute, which the skill below measured at 0.4 % of the step).
    // clang-format off
    {"Qwen3 235B-A22B", "H100-SXM5-80GB", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 1, 2, 8,
     4, 32, false, 1712, "alltoall", "fp8", true},
    // clang-format on
    {"Qwen3 235B-A22B", "B200-SXM-180GB", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 1, 1, 8,
     1, 8, true, 3776},
    // The same table's Blackwell racks and B300 (MXFP8).
    {"Qwen3 30B-A3B", "GB300-NVL72", 8, 48, 2048, 32, 4, 151936, 128, 8, 768, 512, 8, 1, 1, 1, 8,
     true, 31744},
    {"Qwen3 30B-A3B", "GB200-NVL72", 8, 48, 2048, 32, 4, 151936, 128, 8, 768, 512, 4, 1, 1, 1, 8,
     true, 26112},
    {"Qwen3 30B-A3B", "B300-SXM-270GB", 8, 48, 2048, 32, 4, 151936, 128, 8, 768, 512, 8, 1, 1, 1, 8,
     true, 30720},
    {"Qwen3 235B-A22B", "GB300-NVL72", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 2, 1, 4,
     12, 32, true, 6944},
    {"Qwen3 235B-A22B", "GB200-NVL72", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 1, 1, 8, 3,
     32, true, 5680},
    {"Qwen3 235B-A22B", "B300-SXM-270GB", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 2, 1, 8,
     1, 8, true, 5936},
    // Megatron Bridge's EP-overlap skill (skills/nemo-mbridge-perf-expert-parallel-overlap,
    // "HybridEP Production-Shape Benchmark", 2026-07-25): BF16, flex + HybridEP, EP overlap off,
    // 24.7138 s a step of 1,024 x 4,096 tokens on 16 H100s.
    // clang-format off
    {"Qwen3 30B-A3B BF16", "H100-SXM5-80GB", 16, 48, 2048, 32, 4, 151936, 128, 8, 768, 1024, 1, 1,
     1, 1, 16, true, 1024.0 * 4096 / 24.7138 / 16, "hybridep", "bf16"},
    // The same with EP overlap on, nothing else changed: 20.9920 s (its independent validation,
    // iterations 41-50; the search run's 21.0725 s beside it).
    // Megatron Bridge's CUDA-graphs skill (skills/nemo-mbridge-perf-cuda-graphs, 2026-05-18): the
    // same shape with the all-to-all dispatcher, eager, 41.36 s (42.00 s with its TE-scoped
    // graphs replayed).
    {"Qwen3 30B-A3B BF16 all-to-all", "H100-SXM5-80GB", 16, 48, 2048, 32, 4, 151936, 128, 8, 768,
     1024, 1, 1, 1, 1, 16, true, 1024.0 * 4096 / 41.36 / 16, "alltoall", "bf16"},
    // The dispatcher-selection skill's canonical recipe (HybridEP with 32 SMs and 64-token combine
    // chunks, EP overlap, CUDA graphs): 20.14729 s over steps 41-50, the knobs beyond the
    // overlap not in the model.
    {"Qwen3 30B-A3B BF16 canonical", "H100-SXM5-80GB", 16, 48, 2048, 32, 4, 151936, 128, 8, 768,
     1024, 1, 1, 1, 1, 16, true, 1024.0 * 4096 / 20.14729 / 16, "hybridep", "bf16", true},
    // Last: the EP-overlap skill's run with overlap on, whose memory the test checks below.
    {"Qwen3 30B-A3B BF16 EP overlap", "H100-SXM5-80GB", 16, 48, 2048, 32, 4, 151936, 128, 8, 768,
     1024, 1, 1, 1, 1, 16, true, 1024.0 * 4096 / 20.9920 / 16, "hybridep", "bf16", true},
    // clang-format on
};

const MoeRow& MoeRowNamed(std::string_view name) {
  for (const auto& row : kMoe) {
    if (row.name == name) return row;
  }
  ADD_FAILURE() << "no MoE row " << name;
  return kMoe[0];
}

model::Spec MoeSpec(const MoeRow& r) {
  const bool hopper = std::string(r.gpu).rfind("H100", 0) == 0;
  const SystemShape shape = ShapeOf(r.gpu, r.gpus);
  const std::string yaml =
      "name: moe\n" +
      DgxCluster(r.gpus / shape.per_node, r.gpu, shape.scale_up, shape.per_node, "ConnectX-7",
                 "400 Gb/s", "QM9700", shape.per_node) +
      fmt::format(
          R"(workload:
  model: {{name: qwen3, layers: {layers}, hidden: {hidden}, heads: {heads}, kv_heads: {kv},
          head_dim: 128, mlp: swiglu, vocab: {vocab}, sequence: 4096, dropout: 0,
          moe: {{experts: {experts}, top_k: {k}, ffn_hidden: {f}}}}}
  precision: {precision}
  parallel: {{strategy: zero1, tensor: {tp}, pipeline: {pp}, virtual_stages: {vp}, expert: {ep},
             sequence_parallel: {sp}}}
  batch: {{micro: {mbs}, global: {gbs}}}
  software: {{stack: nemo-2025, tp_comm_overlap: {tpo}, fp8_recipe: {recipe},
             moe_dispatcher: {dispatcher}, moe_comm_overlap: {ovl}}}
)",
          fmt::arg("tpo", r.tp_overlap), fmt::arg("ovl", r.ep_overlap),
          fmt::arg("recipe", hopper ? "current" : "mxfp8"), fmt::arg("precision", r.precision),
          fmt::arg("dispatcher", r.dispatcher), fmt::arg("layers", r.layers),
          fmt::arg("hidden", r.hidden), fmt::arg("heads", r.heads), fmt::arg("kv", r.kv_heads),
          fmt::arg("vocab", r.vocab), fmt::arg("experts", r.experts), fmt::arg("k", r.top_k),
          fmt::arg("f", r.expert_ffn), fmt::arg("tp", r.tp), fmt::arg("pp", r.pp),
          fmt::arg("vp", r.vp), fmt::arg("ep", r.ep), fmt::arg("sp", r.tp > 1 ? "true" : "false"),
          fmt::arg("mbs", r.mbs), fmt::arg("gbs", r.gbs));
  auto s = model::ParseSpec(yaml, "moe.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

// Eleven of fourteen within 15 %. Off by more: 30B on H100 in FP8 (+30.3 %), whose published
// step (29.3 s) is slower than the same shape's 24.7 s in BF16 that Megatron Bridge measured with
// the same HybridEP dispatcher, which the model meets (+7.3 %; +7.7 % with EP overlap on), and the
// same BF16 shape with NCCL's all-to-all (+15.1 %), whose dispatcher costs more than its
// transfers. 235B on H100, whose all-to-all crosses nodes, is within with its recipe's EP overlap
// (-22.6 % exposing all of it). On B200, B300, GB200 and GB300, where EP stays on NVLink and the
// recipe is MXFP8, -15.3 % to +9.5 %: 235B on B300 is the one below (-15.7 % before Blackwell
// Ultra's attention ran at its measured speed-up, -13.6 % before MXFP8's GEMMs ran at their own
// measured ceiling; docs/sim.md). Judged at 35 % so that the misses are seen and cannot grow
// unseen.
TEST(CalibrationTest, MoeRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  int within = 0;
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
    EXPECT_NEAR(error, 0, 0.35) << row.name << " on " << row.gpu;
    // The regime quotes this range ("checked on fourteen Qwen3 runs, -16 % to +31 %").
    EXPECT_GE(error, -0.16) << row.name << " on " << row.gpu << ": update RegimeOf's range";
    EXPECT_LE(error, 0.31) << row.name << " on " << row.gpu << ": update RegimeOf's range";
    EXPECT_GT(r->ep_comm_s, 0) << row.name;
    within += std::fabs(error) <= 0.15;
  }
  // Of 14: the page's 30B H100 FP8 row misses, the all-to-all run of the CUDA-graphs skill, and
  // 235B on B300.
  EXPECT_GE(within, 11);
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
  model::Spec spec = MoeSpec(kMoe[0]);   // Qwen3 30B-A3B on 16 H100, EP16
  spec.workload.moe_node_dedup = false;  // NCCL's all-to-all, one copy per routed expert
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

// HybridEP / DeepEP send a token across the fabric once per other node holding any of its
// experts: with 128 experts over 2 nodes and top 8, a token reaches the other node with
// probability 1 - C(64, 8) / C(128, 8) = 0.996, where the all-to-all sends it 4 copies on average;
// inside one node nothing changes.
TEST(MoeTest, HybridEpSendsATokenOncePerNode) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  model::Spec spec = MoeSpec(kMoe[0]);  // Qwen3 30B-A3B on 16 H100, EP16 over 2 nodes
  spec.workload.moe_node_dedup = false;
  auto alltoall = model.Step(spec, LayoutOf(spec), 16);
  spec.workload.moe_node_dedup = true;
  auto hybrid = model.Step(spec, LayoutOf(spec), 16);
  ASSERT_TRUE(alltoall && hybrid);
  // Fabric-bound both ways: 4 copies against 0.996 of one, less the same latency.
  EXPECT_NEAR(alltoall->ep_comm_s / hybrid->ep_comm_s, 4 / 0.996, 0.3);
  EXPECT_EQ(hybrid->compute_s, alltoall->compute_s);
  Layout inside = LayoutOf(spec);
  inside.ep = 8;
  auto in_hybrid = model.Step(spec, inside, 16);
  spec.workload.moe_node_dedup = false;
  auto in_alltoall = model.Step(spec, inside, 16);
  ASSERT_TRUE(in_hybrid && in_alltoall);
  EXPECT_EQ(in_hybrid->ep_comm_s, in_alltoall->ep_comm_s);
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
  // From 8 to 512 GPUs: a tenth or more of the per-GPU throughput is gone, most of it in the
  // last doubling, where each GPU runs a single micro-batch.
  std::printf("MFU on 8, 256, 512 GPUs: %.1f %%, %.1f %%, %.1f %%\n", 100 * sweep[0].mfu,
              100 * sweep[5].mfu, 100 * sweep[6].mfu);
  EXPECT_LT(sweep.back().mfu, 0.9 * sweep.front().mfu);
  EXPECT_GT(sweep[5].mfu - sweep[6].mfu, sweep[0].mfu - sweep[5].mfu);
}

// ZeRO-2 keeps only its gradient shard, so it reduce-scatters after every micro-batch; ZeRO-1
// (the distributed optimizer) accumulates and reduces once per step.
TEST(CalibrationTest, Zero2ReducesEveryMicroBatch) {
  model::Spec spec = FoundrySpec(kFoundry[11]);  // 7b on 128 H100
  spec.workload.micro_batch = 1;
  spec.workload.global_batch = 128 * 8;  // 8 micro-batches per step
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  Layout l = LayoutOf(spec);
  l.micro_batch = 1;
  l.strategy = model::Strategy::kZero1;
  auto one = model.Step(spec, l, 128);
  l.strategy = model::Strategy::kZero2;
  auto two = model.Step(spec, l, 128);
  ASSERT_TRUE(one && two);
  ASSERT_EQ(two->micro_batches, 8);
  // 8 reduce-scatters and one all-gather against one of each, of the same sizes: rs + ag vs
  // 8 rs + ag, with rs (fp32 gradients) twice ag (bf16 parameters).
  EXPECT_NEAR(two->dp_comm_total_s / one->dp_comm_total_s, (8 * 2.0 + 1) / (2 + 1), 0.3);
  EXPECT_GE(two->step_s, one->step_s);
}

// Checked against, not fitted to (issue 13): BigScience's BLOOM-176B run on Jean Zay
// (bigscience-workshop/bigscience train/tr11-176B-ml: README, slurm script and chronicles):
// 48 nodes of 8 A100 80 GB with NVLink and 4 Omni-Path 100 Gb/s links each (RDMA, modelled as
// InfiniBand at 100 Gb/s), Megatron-DeepSpeed with its bf16 ZeRO-1 and fp32 gradient
// accumulation, TP4 PP12 DP8, micro-batch 2, global batch 2,048 of 2,048 tokens, 70 layers of
// hidden 14,336 and 112 heads, vocabulary 250,880 (tied embeddings), full recompute, fused
// softmax (no flash attention): "elapsed time per iteration (s): 105.22" (chronicles, 2022-03-18).
model::Spec BloomSpec() {
  auto s = model::ParseSpec(R"(name: jean-zay
nodes:
  count: 48
  gpu: {model: A100-SXM4-80GB, count: 8}
  nics:
    - {role: compute, model: ConnectX-6, count: 4, ports: 1, speed: 100 Gb/s}
fabrics:
  scale_up: {type: nvlink3, bandwidth: 600 GB/s, switched: true}
  compute: {type: infiniband, speed: 100 Gb/s, topology: fat-tree, oversubscription: 1,
            switch: QM8700}
workload:
  model: {name: bloom-176b, layers: 70, hidden: 14336, heads: 112, vocab: 250880,
          sequence: 2048, tied_embeddings: true}
  parallel: {strategy: zero1, tensor: 4, pipeline: 12}
  batch: {micro: 2, global: 2048}
  activation_checkpointing: full
  flash_attention: false
  software: {stack: megatron-2021}
)",
                            "bloom.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}
constexpr double kBloomIterationS = 105.22;

// Checked against, not fitted to (issue 13): Megatron-Turing NLG 530B (Smith et al. 2022,
// arXiv 2201.11990, §2.4): Megatron-DeepSpeed on Selene's 80 GB A100s, bf16, TP 8 inside a node
// and PP 35 across nodes (1F1B, not interleaved), data parallelism growing from 8 to 12 at a
// global batch of 1,920 sequences of 2,048, full recompute, 105 layers of hidden 20,480 and 128
// heads, GPT-2's vocabulary padded as Megatron pads it (51,200, tied). Iteration time on 280,
// 350 and 420 nodes: 60.1, 50.2 and 44.4 s. The paper gives no micro-batch; the three times
// give it. At a fixed global batch the step is (m + p - 1) micro-batch times with m = 1,920 /
// (DP x micro-batch), so T(280) / T(420) is (240/b + 34) / (160/b + 34): 1.41 for b = 1, 1.35
// for b = 2, 1.27 for b = 4; published 60.1 / 44.4 = 1.354. The ZeRO stage is not given either;
// ZeRO-1 and plain data parallelism differ by 0.5 % here.
struct MtNlgRow {
  int nodes;
  double iteration_s;  // published
};
constexpr MtNlgRow kMtNlg[] = {{280, 60.1}, {350, 50.2}, {420, 44.4}};

model::Spec MtNlgSpec(const MtNlgRow& r) {
  auto s = model::ParseSpec("name: selene\n" + SeleneCluster(r.nodes) + R"(workload:
  model: {name: mt-nlg-530b, layers: 105, hidden: 20480, heads: 128, vocab: 51200,
          sequence: 2048, tied_embeddings: true}
  parallel: {strategy: zero1, tensor: 8, pipeline: 35, sequence_parallel: false}
  batch: {micro: 2, global: 1920}
  activation_checkpointing: full
  flash_attention: false
  software: {stack: megatron-2021}
)",
                            "mt-nlg.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

// Checked against, not fitted to (issue 13): torchtitan's Llama 3 runs on H100 (pytorch/torchtitan
// benchmarks/llama3_h100_202412_torchtitan.md, torchtitan 9dec370): FSDP2 with TP, PP and CP,
// torch.compile, Float8 (tensorwise) linear layers, full activation checkpointing, on Grand
// Teton H100s with 96 GB of HBM2e at 2.4 TB/s and a 500 W power limit. They publish memory
// (the allocator's peak reserved bytes, the largest over the GPUs) beside tokens/s per GPU.
// Rows with torchtitan's per-op selective checkpointing are not checked: the spec has no word
// for it.
struct TitanRow {
  const char* table;
  int gpus, layers, hidden, heads, ffn, sequence, tp, pp, cp, vp, micro_batch, accumulation;
  double tokens_per_gpu, memory_gib;  // published
};
constexpr TitanRow kTitan[] = {
    {"T2 8B FSDP8", 8, 32, 4096, 32, 14336, 32768, 1, 1, 1, 1, 1, 1, 3890, 83.9},
    {"T2 8B FSDP4 CP2", 8, 32, 4096, 32, 14336, 65536, 1, 1, 2, 1, 1, 1, 2540, 84.2},
    {"T2 8B FSDP2 CP4", 8, 32, 4096, 32, 14336, 131072, 1, 1, 4, 1, 1, 1, 1071, 84.0},
    {"T2 8B CP8", 8, 32, 4096, 32, 14336, 262144, 1, 1, 8, 1, 1, 1, 548, 84.5},
    {"T4 70B FSDP32 TP8", 256, 80, 8192, 64, 28672, 8192, 8, 1, 1, 1, 16, 1, 829, 71.9},
    {"T5 405B FSDP8 TP8 PP8 1F1B", 512, 126, 16384, 128, 53248, 8192, 8, 8, 1, 1, 4, 8, 100, 82.5},
    {"T6 405B FSDP8 TP8 PP8", 512, 126, 16384, 128, 53248, 32768, 8, 8, 1, 1, 1, 8, 76, 75.3},
    {"T6 405B FSDP4 TP8 PP8 CP2", 512, 126, 16384, 128, 53248, 65536, 8, 8, 2, 1, 1, 8, 47, 75.9},
    {"T6 405B FSDP2 TP8 PP8 CP4", 512, 126, 16384, 128, 53248, 131072, 8, 8, 4, 1, 1, 8, 31, 77.1},
    {"T6 405B TP8 PP8 CP8", 512, 126, 16384, 128, 53248, 262144, 8, 8, 8, 1, 1, 8, 16, 84.9},
};

model::Spec TitanSpec(const TitanRow& r) {
  const std::string yaml =
      "name: torchtitan\n" +
      DgxCluster(r.gpus / 8,
                 "H100-SXM5-80GB, memory: 96 GB, memory_bandwidth: 2.4 TB/s, tdp: 500 W",
                 "{type: nvlink4, bandwidth: 900 GB/s, switched: true}") +
      fmt::format(
          R"(workload:
  model: {{name: llama3, layers: {layers}, hidden: {hidden}, heads: {heads}, kv_heads: 8,
          ffn_hidden: {ffn}, mlp: swiglu, vocab: 128256, sequence: {seq}, dropout: 0}}
  precision: fp8
  parallel: {{strategy: fsdp, tensor: {tp}, pipeline: {pp}, context: {cp}, virtual_stages: {vp},
             sequence_parallel: {sp}}}
  batch: {{micro: {mb}, accumulation: {acc}}}
  activation_checkpointing: full
  software: {{stack: pytorch-fsdp2, tp_comm_overlap: {async_tp}}}
)",
          fmt::arg("layers", r.layers), fmt::arg("hidden", r.hidden), fmt::arg("heads", r.heads),
          fmt::arg("ffn", r.ffn), fmt::arg("seq", r.sequence), fmt::arg("tp", r.tp),
          fmt::arg("pp", r.pp), fmt::arg("cp", r.cp), fmt::arg("vp", r.vp),
          fmt::arg("sp", r.tp > 1 ? "true" : "false"), fmt::arg("mb", r.micro_batch),
          fmt::arg("acc", r.accumulation),
          // Tables 5 and 6 ran AsyncTP (opt-in); table 4's row here is "2D", without it.
          fmt::arg("async_tp", r.table[1] == '5' || r.table[1] == '6' ? "true" : "false"));
  auto s = model::ParseSpec(yaml, "torchtitan.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
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
  }
  // The scaling the micro-batch was read from: nothing else in the model (data-parallel
  // communication, the optimizer) bends it.
  ASSERT_EQ(step_s.size(), 3u);
  EXPECT_NEAR(step_s[0] / step_s[2], 60.1 / 44.4, 0.02);
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

TEST(CalibrationTest, NemoFp8LlamaRowsOutsideTheFit) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
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
    // NeMo ran every one of them.
    EXPECT_EQ(r->fits, row.fits) << row.name;
    EXPECT_LT(r->memory_bytes / r->memory_capacity_bytes, 1.12) << row.name;
  }
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

// Leave-one-source-out (issue 13): fit the fitted constants (gemm_training, attention,
// gemm_half_flops; docs/sim.md) to every source but one by grid search on the mean squared log
// error, predict the one left out, and report both errors. Seven sources: the Megatron-Core H100
// table (9 rows, throughput as TFLOP/s), NeMo 25.11 FP8 (15 rows), Korthikanti 2022 (8), LLM
// Foundry FSDP (85), Megatron Bridge MoE (11), BLOOM (1) and MT-NLG (3), tokens/s. The numbers are
// in docs/sim.md; the bound only guards against a regression.
struct Sample {
  model::Spec spec;
  double published;  // tokens/s per GPU
};

// A Korthikanti row as tokens/s per GPU, on `stack`.
Sample KorthikantiSample(const KorthikantiRow& row, std::string_view stack = "megatron-core-2024") {
  model::Spec spec = KorthikantiSpec(row, stack);
  const double tokens =
      static_cast<double>(spec.workload.global_batch) * spec.workload.model.sequence;
  return {std::move(spec), tokens / row.iteration_s / row.gpus};
}

std::vector<std::vector<Sample>> Sources() {
  std::vector<Sample> megatron, nemo;
  for (const auto& row : kRows) {
    const model::Spec spec =
        MegatronSpec(row.heads, row.hidden, row.layers, row.tp, row.pp, 48, row.batch);
    // TFLOP/s per GPU to tokens/s per GPU with the model's own FLOP count.
    auto r = AnalyticalStepModel().Step(spec, LayoutOf(spec), spec.cluster.nodes.TotalGpus());
    EXPECT_TRUE(r);
    const double flops_per_token =
        r->model_flops /
        (static_cast<double>(spec.workload.global_batch) * spec.workload.model.sequence);
    megatron.push_back({spec, row.tflops_per_gpu * 1e12 / flops_per_token});
  }
  for (const auto& row : kNemoFp8) nemo.push_back({NemoSpec(row), row.tokens_per_gpu});
  std::vector<Sample> korthikanti;
  for (const auto& row : kKorthikanti) korthikanti.push_back(KorthikantiSample(row));
  std::vector<Sample> foundry;
  for (const auto& row : kFoundry) foundry.push_back({FoundrySpec(row), row.tokens_per_gpu});
  std::vector<Sample> moe;
  for (const auto& row : kMoe) moe.push_back({MoeSpec(row), row.tokens_per_gpu});
  const model::Spec bloom = BloomSpec();
  std::vector<Sample> bigscience = {
      {bloom, 2048.0 * 2048 / kBloomIterationS / bloom.cluster.nodes.TotalGpus()}};
  std::vector<Sample> mtnlg;
  for (const auto& row : kMtNlg) {
    mtnlg.push_back({MtNlgSpec(row), 1920.0 * 2048 / row.iteration_s / (row.nodes * 8)});
  }
  return {megatron, nemo, korthikanti, foundry, moe, bigscience, mtnlg};
}

// One sample's prediction, tokens/s per GPU (0 when the model refuses the layout).
double Predicted(const AnalyticalStepModel& model, const Sample& x) {
  const int gpus = x.spec.cluster.nodes.TotalGpus();
  auto r = model.Step(x.spec, LayoutOf(x.spec), gpus);
  return r ? r->tokens_per_s / gpus : 0;
}

// The log error of a prediction against its published value (10 for a refused layout).
double LogErrorOf(double pred, double published) {
  return pred > 0 ? std::log(pred / published) : 10;
}

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

TEST(CalibrationTest, LeaveOneSourceOut) {
  const auto sources = Sources();
  const std::vector<Efficiency> fits = FitLeavingEachOut(sources);
  const char* names[] = {
      "Megatron-Core r0.8.0 H100 table", "NeMo 25.11 FP8 (H100, B200, GB200, GB300)",
      "Korthikanti 2022 A100 Table 5",   "LLM Foundry FSDP (A100, H100)",
      "Megatron Bridge MoE (Qwen3)",     "BigScience BLOOM-176B",
      "Smith 2022 MT-NLG 530B"};
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

// --search knows its limits (issue 13): every run above is inside calibration, and a layout
// outside it says what is outside.
TEST(RegimeTest, TheCheckedRunsAreCalibrated) {
  const AnalyticalStepModel model(FlopConvention::kMegatron, Eff());
  for (const auto& row : kRows) {
    const model::Spec spec =
        MegatronSpec(row.heads, row.hidden, row.layers, row.tp, row.pp, 48, row.batch);
    auto r = model.Step(spec, LayoutOf(spec), spec.cluster.nodes.TotalGpus());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->regime.level, Confidence::kCalibrated)
        << row.name << ": " << (r->regime.reasons.empty() ? "" : r->regime.reasons[0]);
  }
  for (const auto& row : kNemoFp8) {
    const model::Spec spec = NemoSpec(row);
    auto r = model.Step(spec, LayoutOf(spec), row.gpus);
    ASSERT_TRUE(r);
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
  // The sequence sweeps' rows that are not also 2,048-token rows.
  for (const auto& row : kFoundrySweep) {
    const bool listed = std::any_of(std::begin(kFoundry), std::end(kFoundry), [&](const auto& f) {
      return SameRun(f, row) && f.tokens_per_gpu == row.tokens_per_gpu;
    });
    if (!listed) checked.push_back({FoundrySpec(row), row.tokens_per_gpu});
  }
  for (const auto& row : kFoundryFp8) checked.push_back({FoundrySpec(row), row.tokens_per_gpu});
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

  // What a plan on such a stack says, and on one no run checked.
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
                                     "the deepspeed-zero3 stack (no published run checked")));
  spec = TitanSpec(kTitan[0]);
  spec.cluster.nodes.gpu.architecture = "Blackwell";
  r = model.Step(spec, LayoutOf(spec), kTitan[0].gpus);
  ASSERT_TRUE(r);
  EXPECT_THAT(
      r->regime.reasons,
      ::testing::Contains(::testing::HasSubstr("the pytorch-fsdp2 stack (checked on Hopper only")));
}

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
  s = base;
  s.workload.tp_comm_overlap = false;
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
  EXPECT_NEAR(b.contention_s, 0.189 * (b.dp_comm_total_s - b.dp_comm_s), 1e-12);
  EXPECT_GT(b.contention_s, 0);
  EXPECT_EQ(no_dp.contention_s, 0);
  EXPECT_GT(no_dp.step_s, b.step_s);
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
// at its own measured rate on both, times that share on Hopper.
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
    // Triton kernel attention/(0.263 share) - 1, the share 1 on Ampere.
    const double triton_extra = triton->compute_s - native->compute_s;
    const double legacy_extra = legacy->compute_s - native->compute_s;
    const double triton_factor = Eff().attention / plan::kTriton2022AttentionOfPeak;
    EXPECT_GT(triton_extra, 0) << row.gpu;
    if (std::string(row.gpu).rfind("H100", 0) == 0) {
      // Attention is ~7 % of this step's compute; at 0.65 of its rate it takes ~50 % longer.
      EXPECT_GT(slower, 1.02) << row.gpu;
      EXPECT_LT(slower, 1.08) << row.gpu;
      const double share = 0.629 / 0.964;  // Luo et al. 2024, Tables VII-VIII
      EXPECT_NEAR(triton_extra / legacy_extra, (triton_factor / share - 1) / (1 / share - 1), 1e-9);
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
  const double hbm = spec.cluster.nodes.gpu.memory_bandwidth_bytes_per_s;
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

// The compute time (forward and backward, with recomputation) of `spec`'s step on its own layout,
// failing the test where the step does not run.
double ComputeSeconds(const AnalyticalStepModel& model, const model::Spec& spec, int gpus) {
  auto out = model.Step(spec, LayoutOf(spec), gpus);
  EXPECT_TRUE(out) << out.error().message;
  return out ? out->compute_s : 0.0;
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
  const double hbm = spec.cluster.nodes.gpu.memory_bandwidth_bytes_per_s;
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
  // A kernel written for another architecture (mma.sync) gets the clock, not the softmax.
  model::Spec same_clock = blackwell;
  same_clock.cluster.nodes.gpu.sustained_clock = ultra.cluster.nodes.gpu.sustained_clock;
  EXPECT_NEAR(compute(ultra, AttentionKernel::kMmaSync, 8192),
              compute(same_clock, AttentionKernel::kNative, 8192), 1e-12);
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
  EXPECT_NEAR(gemms(b200) / gemms(gb200), lead, 0.01);  // their fixed per-kernel time scales too
  model::Spec as_printed = gb200;
  as_printed.cluster.nodes.gpu.sustained_clock = 1;
  EXPECT_NEAR(attention(b200) / attention(as_printed), 2500.0 / 2250, 1e-6);
  // MFU stays against the printed peak (FP8's here), as published MFUs are.
  auto step = model.Step(gb200, LayoutOf(gb200), row.gpus);
  ASSERT_TRUE(step);
  EXPECT_NEAR(step->mfu, step->model_flops / (row.gpus * 5000e12 * step->step_s), 1e-12);
  // A spec may state it; nothing runs at no clock.
  auto parse = [](std::string_view clock) {
    return model::ParseSpec(fmt::format(R"(name: t
nodes:
  count: 1
  gpu: {{model: GB200, count: 4, sustained_clock: {}}}
workload:
  model: {{name: m, layers: 8, hidden: 1024, heads: 8, vocab: 32000, sequence: 2048}}
  parallel: {{strategy: zero1}}
  batch: {{micro: 1}})",
                                        clock),
                            "t.yaml");
  };
  auto stated = parse("100 %");
  ASSERT_TRUE(stated) << stated.error().message;
  EXPECT_EQ(stated->cluster.nodes.gpu.sustained_clock, 1.0);
  auto none = parse("0 %");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("nodes.gpu.sustained_clock: must be above 0 %"),
            std::string::npos)
      << none.error().message;
}

TEST(SoftwareStackTest, PresetsSetTheirWords) {
  auto with = [](const std::string& software, const char* gpu = "H100-SXM5-80GB") {
    std::string yaml = fmt::format(R"(name: t
nodes:
  count: 1
  gpu: {{model: {}, count: 8}}
workload:
  model: {{name: m, layers: 8, hidden: 1024, heads: 8, vocab: 32000, sequence: 2048}}
  parallel: {{strategy: zero1, tensor: 2}}
  batch: {{micro: 1}}
  software: {})",
                                   gpu, software);
    auto s = model::ParseSpec(yaml, "t.yaml");
    EXPECT_TRUE(s) << s.error().message;
    return s ? s->workload : model::Workload{};
  };
  auto w = with("{stack: megatron-2021}");
  EXPECT_FALSE(w.tp_comm_overlap);
  EXPECT_FALSE(with("{stack: pytorch-fsdp2}").tp_comm_overlap);  // AsyncTP is opt-in
  EXPECT_FALSE(with("{stack: deepspeed-zero3}").tp_comm_overlap);
  EXPECT_EQ(w.grad_reduce_bytes, 4);
  w = with("{stack: megatron-core-2024}");
  EXPECT_TRUE(w.tp_comm_overlap && w.dp_comm_overlap);
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
  // FP8 scaling: delayed in Megatron-Core's 2024 default, current in NeMo's 2025 recipes;
  // MXFP8 only where the tensor cores have block scaling.
  EXPECT_EQ(with("{stack: megatron-core-2024}").fp8_recipe, model::Fp8Recipe::kDelayed);
  EXPECT_EQ(with("{stack: nemo-2025}").fp8_recipe, model::Fp8Recipe::kCurrent);
  EXPECT_EQ(with("{stack: composer-2023}").fp8_recipe, model::Fp8Recipe::kDelayed);  // TE v0.10
  EXPECT_EQ(with("{stack: nemo-2025, fp8_recipe: mxfp8}", "B200-SXM-180GB").fp8_recipe,
            model::Fp8Recipe::kMxfp8);
  EXPECT_THAT(with("{stack: nemo-2025, fp8_recipe: mxfp8}", "B200-SXM-180GB").software_departures,
              ::testing::ElementsAre("fp8_recipe mxfp8"));
  {
    auto hopper = model::ParseSpec(R"(name: t
nodes:
  count: 1
  gpu: {model: H100-SXM5-80GB, count: 8}
workload:
  model: {name: m, layers: 8, hidden: 1024, heads: 8, vocab: 32000, sequence: 2048}
  precision: fp8
  parallel: {strategy: zero1}
  batch: {micro: 1}
  software: {fp8_recipe: mxfp8})",
                                   "t.yaml");
    ASSERT_FALSE(hopper);
    EXPECT_THAT(hopper.error().message, ::testing::HasSubstr("MXFP8 needs Blackwell"));
  }
  // The sharding implementation follows the stack.
  EXPECT_EQ(w.sharding_impl, model::ShardingImpl::kFsdp1);  // composer-2023
  EXPECT_EQ(with("{stack: pytorch-fsdp2}").sharding_impl, model::ShardingImpl::kFsdp2);
  EXPECT_EQ(with("{stack: deepspeed-zero3}").sharding_impl, model::ShardingImpl::kDeepSpeed);
  EXPECT_EQ(with("{stack: nemo-2025}").sharding_impl, model::ShardingImpl::kMegatron);
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

}  // namespace
}  // namespace gpufleet::sim
