// The published runs' rows and the specs they ran (published_runs.h).
#include "published_runs.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plan/compute.h"

namespace gpufleet::sim::runs {

const MegatronRow kMegatronRows[] = {
    {"1.7B", 16, 2048, 24, 1, 1, 192, 408.8},      {"7.1B", 32, 4096, 30, 2, 1, 192, 465.9},
    {"16B", 48, 6144, 32, 4, 1, 192, 489.1},       {"32B", 56, 7168, 48, 8, 1, 192, 459.6},
    {"70B", 64, 8192, 84, 8, 2, 384, 419.7},       {"119B", 80, 10240, 92, 8, 4, 768, 420.5},
    {"177B", 96, 12288, 96, 8, 6, 1152, 432.8},    {"314B", 128, 16384, 96, 8, 8, 1536, 474.4},
    {"462B", 144, 18432, 112, 8, 16, 3072, 459.9},
};

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

model::Spec MegatronSpec(const MegatronRow& row) {
  return MegatronSpec(row.heads, row.hidden, row.layers, row.tp, row.pp, 48, row.batch);
}

Efficiency Eff() {
  Efficiency e;
  if (const char* v = std::getenv("GPUFLEET_SIM_EFF")) {
    std::sscanf(v, "%lf,%lf,%lf", &e.gemm_half_flops, &e.gemm_training, &e.attention);
  }
  return e;
}

std::string DgxCluster(int count, const std::string& gpu, const std::string& scale_up, int per_node,
                       const std::string& nic, const std::string& speed, const std::string& sw,
                       int nics, const std::string& fabric, bool rail_optimized) {
  return fmt::format(R"(nodes:
  count: {}
  gpu: {{model: {}, count: {}}}
  nics:
    - {{role: compute, model: {}, count: {}, ports: 1, speed: {}}}
fabrics:
  scale_up: {}
  compute: {{type: {}, speed: {}, topology: fat-tree, oversubscription: 1,
            rail_optimized: {}, switch: {}}}
)",
                     count, gpu, per_node, nic, nics, speed, scale_up, fabric, speed,
                     rail_optimized, sw);
}

namespace {

// The system of a published NVIDIA run: GB200 and GB300 NVL72 racks are trays of 4 GPUs with a NIC
// each in 72-GPU NVLink domains (the pages do not say how 256 GPUs sit in racks: four domains of
// 64 are assumed); the others 8-GPU nodes on NVLink 4 (Hopper) or 5. Blackwell Ultra (B300,
// GB300) runs a ConnectX-8 at 800 Gb/s a GPU on Quantum-X800 (NVIDIA's HGX B300 and GB300 NVL72
// reference architectures), the rest a ConnectX-7 at 400 Gb/s on NDR.
struct SystemShape {
  int per_node = 8;
  std::string scale_up;
  // A NIC a GPU: ConnectX-8 at 800 Gb/s on an XDR fabric (Quantum-X800) for Blackwell Ultra,
  // ConnectX-7 at 400 Gb/s on NDR (QM9700) for the rest.
  std::string nic = "ConnectX-7", nic_speed = "400 Gb/s", sw = "QM9700";
};
SystemShape ShapeOf(std::string_view gpu, int gpus) {
  const bool ultra = gpu.rfind("B300", 0) == 0 || gpu.rfind("GB300", 0) == 0;
  SystemShape s;
  if (ultra) {
    s.nic = "ConnectX-8";
    s.nic_speed = "800 Gb/s";
    s.sw = "Q3400-RA";
  }
  if (gpu.rfind("GB", 0) == 0) {
    s.per_node = 4;
    s.scale_up = fmt::format("{{type: nvlink5, bandwidth: 1800 GB/s, switched: true, domain: {}}}",
                             gpus <= 72 ? 72 : 64);
    return s;
  }
  if (gpu.rfind("H100", 0) == 0 || gpu.rfind("H200", 0) == 0) {
    s.scale_up = "{type: nvlink4, bandwidth: 900 GB/s, switched: true}";
    return s;
  }
  s.scale_up = "{type: nvlink5, bandwidth: 1800 GB/s, switched: true}";
  return s;
}

}  // namespace

const NemoRow kNemoFp8[] = {
    {"H100 Llama3 8B", "H100-SXM5-80GB", 8, 32, 4096, 32, 14336, 1, 1, 1, 1, 128, 1, "fsdp", 14451,
     0.15},
    {"H100 Llama3 70B", "H100-SXM5-80GB", 64, 80, 8192, 64, 28672, 4, 8, 1, 5, 128, 1, "zero1",
     1602, 0.15},
    // 126 layers and the embedding and the loss in the split (NemoSpec): 16 on a middle rank of
    // PP8, 15 on the last beside the output layer.
    {"H100 Llama3.1 405B", "H100-SXM5-80GB", 1024, 126, 16384, 128, 53248, 8, 8, 2, 8, 512, 1,
     "zero1", 292, 0.15},
    {"B200 Llama3.1 405B", "B200-SXM-180GB", 128, 126, 16384, 128, 53248, 4, 8, 2, 8, 64, 1,
     "zero1", 661, 0.15},
    // +17 % before GEMMs' fixed time grew with the engine's speed (docs/sim.md).
    {"B200 Llama3 8B", "B200-SXM-180GB", 8, 32, 4096, 32, 14336, 1, 1, 1, 1, 128, 2, "zero1", 30624,
     0.15},
    {"B200 Llama3 8B MX", "B200-SXM-180GB", 8, 32, 4096, 32, 14336, 1, 1, 1, 1, 128, 2, "zero1",
     29521, 0.15, "mxfp8"},
    // +9.1 % before the embedding and the loss took their places in the pipeline split (the
    // largest stage's 16 layers and the output layer on one rank, where the last holds 15),
    // +15.4 % with it until the pipeline's hidden sends slowed the compute beside them.
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
     0.15, "current", 20},
    {"GB300 Llama3.1 405B", "GB300-NVL72", 256, 126, 16384, 128, 53248, 2, 8, 2, 4, 1536, 1,
     "zero1", 999, 0.15},
    // The 26.06 container's 405B rows (the performance-summary archive's "26.06 NeMo Container";
    // llama31_workload_base_configs.py at the summary's commit 63b08b397, the _V2 presets, on
    // llama31_405b_pretrain_config: the distributed optimizer, TP overlap, no CUDA graphs, no
    // offload). GB200's MXFP8 layout, TP4 PP16 VP8, is 8 slots a rank and one layer a chunk,
    // which only the embedding and the loss counted in the split make (126 layers alone cannot
    // fill 128 chunks; 800 tokens/s/GPU on 26.04.01's page). GB300's FP8 layout is TP4 PP8 CP1
    // where 25.11's was TP2 CP2; H100's is 25.11's at three times the global batch.
    {"GB200 Llama3.1 405B MX 26.06", "GB200-NVL72", 256, 126, 16384, 128, 53248, 4, 16, 1, 8, 1536,
     1, "zero1", 783, 0.15, "mxfp8"},
    {"GB200 Llama3.1 405B 26.06", "GB200-NVL72", 256, 126, 16384, 128, 53248, 4, 16, 1, 4, 1536, 1,
     "zero1", 843, 0.15, "current", 0, false},
    {"GB300 Llama3.1 405B 26.06", "GB300-NVL72", 256, 126, 16384, 128, 53248, 4, 8, 1, 4, 1536, 1,
     "zero1", 1048, 0.15, "current"},
    {"GB300 Llama3.1 405B MX 26.06", "GB300-NVL72", 256, 126, 16384, 128, 53248, 2, 8, 2, 4, 1536,
     1, "zero1", 952, 0.15, "mxfp8"},
    {"H100 Llama3.1 405B 26.06", "H100-SXM5-80GB", 1024, 126, 16384, 128, 53248, 8, 8, 2, 8, 1536,
     1, "zero1", 326, 0.15},
    // The same page's NVFP4 rows (bf16_with_nvfp4_mixed: every transformer layer's linear GEMMs
    // in NVFP4, attention and the output layer in BF16; FP4 parameter gather), in the FP8 rows'
    // layouts but GB200's VP8, with TP overlap off and the optimizer-step gather not overlapped
    // (overrides.py: not with NVFP4). GB200's config also turns the parameter gathers' overlap off
    // (disable_param_gather_overlap, an OOM workaround), which the model does not separate from
    // the gradient reduction's.
    {"GB200 Llama3.1 405B NVFP4 26.06", "GB200-NVL72", 256, 126, 16384, 128, 53248, 4, 16, 1, 8,
     1536, 1, "zero1", 1166, 0.15, "nvfp4"},
    {"GB300 Llama3.1 405B NVFP4 26.06", "GB300-NVL72", 256, 126, 16384, 128, 53248, 4, 8, 1, 4,
     1536, 1, "zero1", 1413, 0.15, "nvfp4"},
    // Llama 3 70B in MXFP8 and NVFP4 in the same layouts, the 26.04.01 container's page
    // (llama3_workload_base_configs.py at Megatron Bridge v0.4.2, the _V2 presets): 64 GPUs, GBS
    // 256, no CUDA graphs, offload or recompute; GB200's MXFP8 with TP overlap, its NVFP4 without;
    // neither overlaps the optimizer-step gather.
    {"GB300 Llama3 70B MX 26.04.01", "GB300-NVL72", 64, 80, 8192, 64, 28672, 1, 4, 1, 5, 256, 1,
     "zero1", 4864, 0.15, "mxfp8"},
    // NVFP4 on GB300 is 15.5 % faster than the model (its casts at GB300's measured streaming
    // rate; -14.1 % at HBM's printed peak): docs/sim.md, "NVFP4".
    {"GB300 Llama3 70B NVFP4 26.04.01", "GB300-NVL72", 64, 80, 8192, 64, 28672, 1, 4, 1, 5, 256, 1,
     "zero1", 7296, 0.17, "nvfp4"},
    {"GB200 Llama3 70B MX 26.04.01", "GB200-NVL72", 64, 80, 8192, 64, 28672, 2, 4, 1, 5, 256, 1,
     "zero1", 3712, 0.15, "mxfp8"},
    {"GB200 Llama3 70B NVFP4 26.04.01", "GB200-NVL72", 64, 80, 8192, 64, 28672, 2, 4, 1, 5, 256, 1,
     "zero1", 4864, 0.15, "nvfp4"},
};

// Every row Llama 3 70B on 32 GPUs, GBS 32, micro-batch 1, 4,096-token packs of SQuAD; the
// GB200 and GB300 recipes run TP1 (the GB300 one PP2 VP20, GB200's PP8 VP10), H100's TP4 PP4 VP5
// with TP overlap; every one with CUDA graphs of the MLP (not modelled).
constexpr NemoRow SftRow(const char* name, const char* gpu, int tp, int pp, int vp,
                         double tokens_per_gpu, const char* recipe) {
  return {.name = name,
          .gpu = gpu,
          .gpus = 32,
          .layers = 80,
          .hidden = 8192,
          .heads = 64,
          .ffn = 28672,
          .tp = tp,
          .pp = pp,
          .cp = 1,
          .vp = vp,
          .gbs = 32,
          .mbs = 1,
          .strategy = "zero1",
          .tokens_per_gpu = tokens_per_gpu,
          .tolerance = 0.15,
          .recipe = recipe,
          .sequence = 4096,
          .document_length = kSquadDocumentTokens};
}
const NemoRow kNemoSft[] = {
    SftRow("H100 Llama3 70B SFT", "H100-SXM5-80GB", 4, 4, 5, 1638, "current"),
    SftRow("GB200 Llama3 70B SFT", "GB200-NVL72", 1, 8, 10, 3864, "current"),
    SftRow("GB200 Llama3 70B SFT MX", "GB200-NVL72", 1, 8, 10, 3593, "mxfp8"),
    SftRow("GB300 Llama3 70B SFT", "GB300-NVL72", 1, 2, 20, 4819, "current"),
    SftRow("GB300 Llama3 70B SFT MX", "GB300-NVL72", 1, 2, 20, 4312, "mxfp8"),
};

constexpr NemoRow LoraRow(const char* name, const char* gpu, int tp, int pp, double tokens_per_gpu,
                          const char* recipe) {
  NemoRow row = SftRow(name, gpu, tp, pp, 20, tokens_per_gpu, recipe);
  row.gpus = 8;
  row.lora_rank = kLoraRank;
  return row;
}
const NemoRow kNemoLora[] = {
    LoraRow("GB300 Llama3 70B LoRA", "GB300-NVL72", 1, 2, 7481, "current"),
    LoraRow("GB300 Llama3 70B LoRA MX", "GB300-NVL72", 1, 2, 7447, "mxfp8"),
    LoraRow("GB200 Llama3 70B LoRA", "GB200-NVL72", 1, 2, 6206, "current"),
    LoraRow("GB200 Llama3 70B LoRA MX", "GB200-NVL72", 1, 4, 5958, "mxfp8"),
    LoraRow("H100 Llama3 70B LoRA", "H100-SXM5-80GB", 2, 4, 2643, "current"),
};

double BridgeFlopsPerToken(const model::Spec& spec) {
  model::ModelShape whole = spec.workload.model;
  whole.document_length = 0;
  return plan::CountFlops(whole, /*causal=*/true, model::Recompute::kNone).model;
}

const BridgeSftLayoutRow kBridgeSftLayouts[] = {
    {"TP4 PP4 core_attn", 4, 4, "core_attn", 704},
    {"TP4 PP8", 4, 8, "core_attn", 668.0},
    {"TP8 PP4", 8, 4, "core_attn", 508.7},
    {"TP4 PP4 mlp", 4, 4, "mlp", 593.6},
    {"TP4 PP4 mlp core_attn", 4, 4, "mlp, core_attn", 586.8},
};

model::Spec BridgeSftLayoutSpec(const BridgeSftLayoutRow& r) {
  NemoRow row = kNemoSft[0];
  row.tp = r.tp;
  row.pp = r.pp;
  row.recompute_modules = r.recompute_modules;
  return NemoSpec(row);
}

model::Spec NemoSpec(const NemoRow& r) {
  const int dp = r.gpus / (r.tp * r.pp * r.cp);
  const bool nvfp4 = std::string_view(r.recipe) == "nvfp4";
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
    - {{role: compute, model: {nic}, count: {per_node}, ports: 1, speed: {nic_speed}}}
fabrics:
  scale_up: {su}
  compute: {{type: infiniband, speed: {nic_speed}, topology: fat-tree, oversubscription: 1,
            rail_optimized: true, switch: {sw}}}
storage:
  - {{name: lustre, tier: warm, capacity: 10 PB, write: 200 GB/s, read: 400 GB/s}}
workload:
  model: {{name: llama, layers: {layers}, hidden: {hidden}, heads: {heads}, kv_heads: 8,
          ffn_hidden: {ffn}, mlp: swiglu, vocab: 128256, sequence: {sequence}, dropout: 0{docs}}}
  precision: {precision}
  parallel: {{strategy: {strategy}, tensor: {tp}, pipeline: {pp}, context: {cp},
             virtual_stages: {vp}, sequence_parallel: {sp}, embedding_in_pipeline_split: {split},
             loss_in_pipeline_split: {split}}}
  batch: {{micro: {mbs}, accumulation: {acc}}}
  activation_checkpointing: {recompute}
  activation_offload: {offload}
  software: {{stack: nemo-2025, {recipe}tp_comm_overlap: {tpo}}}
  checkpoint: {{interval: 1 h, mode: async, tier: lustre}}
)",
      fmt::arg("nodes", r.gpus / per_node), fmt::arg("gpu", r.gpu), fmt::arg("per_node", per_node),
      fmt::arg("su", scale_up), fmt::arg("nic", shape.nic), fmt::arg("nic_speed", shape.nic_speed),
      fmt::arg("sw", shape.sw), fmt::arg("offload", r.offload), fmt::arg("sequence", r.sequence),
      fmt::arg("recompute", r.recompute_modules != nullptr
                                ? fmt::format("selective\n  activation_checkpointing_modules: [{}]",
                                              r.recompute_modules)
                                : std::string("none")),
      fmt::arg("docs",
               (r.document_length > 0 ? fmt::format(", document_length: {}", r.document_length)
                                      : std::string()) +
                   (r.lora_rank > 0
                        ? fmt::format(",\n          lora: {{rank: {}, modules: [linear_qkv]}}",
                                      r.lora_rank)
                        : std::string())),
      // NVFP4 (precision fp4, no FP8 recipe) with TP overlap off, as Megatron Bridge's
      // NVFP4 workload configs set it (llama31_workload_base_configs.py, v0.5.0).
      fmt::arg("precision", nvfp4 ? "fp4" : "fp8"),
      fmt::arg("recipe", nvfp4 ? std::string() : fmt::format("fp8_recipe: {}, ", r.recipe)),
      fmt::arg("tpo", !nvfp4), fmt::arg("layers", r.layers), fmt::arg("hidden", r.hidden),
      fmt::arg("heads", r.heads), fmt::arg("ffn", r.ffn), fmt::arg("strategy", r.strategy),
      fmt::arg("tp", r.tp), fmt::arg("pp", r.pp), fmt::arg("cp", r.cp), fmt::arg("vp", r.vp),
      fmt::arg("sp", r.tp > 1 ? "true" : "false"), fmt::arg("mbs", r.mbs),
      // Every 405B recipe (126 layers) counts the embedding and the loss in the pipeline split
      // (llama31_405b_pretrain_config: account_for_*_in_pipeline_split).
      fmt::arg("acc", r.gbs / (dp * r.mbs)), fmt::arg("split", r.layers == 126));
  auto s = model::ParseSpec(yaml, "nemo.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

const KorthikantiRow kKorthikanti[] = {
    {"22B", 64, 6144, 48, 1, 1, 8, 4, 4, false, 1.10},
    {"175B", 96, 12288, 96, 8, 3, 64, 64, 1, false, 13.75},
    {"530B", 128, 20480, 105, 35, 3, 280, 280, 1, false, 37.83},
    {"1T", 160, 25600, 128, 64, 1, 512, 512, 1, false, 71.49},
    {"22B", 64, 6144, 48, 1, 1, 8, 4, 4, true, 1.42},
    {"175B", 96, 12288, 96, 8, 3, 64, 64, 1, true, 18.13},
    {"530B", 128, 20480, 105, 35, 3, 280, 280, 1, true, 49.05},
    {"1T", 160, 25600, 128, 64, 1, 512, 512, 1, true, 94.42},
};

namespace {

// Selene's DGX A100 nodes: 8 A100 80 GB on NVLink 3, 8 HDR 200 Gb/s HCAs on a fat tree.
std::string SeleneCluster(int nodes) {
  return DgxCluster(nodes, "A100-SXM4-80GB", "{type: nvlink3, bandwidth: 600 GB/s, switched: true}",
                    8, "ConnectX-6", "200 Gb/s", "QM8700");
}

}  // namespace

model::Spec KorthikantiSpec(const KorthikantiRow& r, std::string_view stack) {
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

const FoundryRow kFoundry[] = {
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

const FoundryRow kFoundrySweep[] = {
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

bool SameRun(const FoundryRow& a, const FoundryRow& b) {
  return std::string_view(a.gpu) == b.gpu && std::string_view(a.name) == b.name &&
         a.sequence == b.sequence && a.gpus == b.gpus && a.micro_batch == b.micro_batch &&
         a.accumulation == b.accumulation && a.checkpointing == b.checkpointing;
}

bool InFoundryTable(const FoundryRow& sweep_row) {
  return std::any_of(std::begin(kFoundry), std::end(kFoundry), [&](const FoundryRow& f) {
    return SameRun(f, sweep_row) && f.tokens_per_gpu == sweep_row.tokens_per_gpu;
  });
}

std::string GpuLabel(const FoundryRow& r) {
  const std::string_view gpu = r.gpu;
  if (gpu == "A100-SXM4-40GB") return "A100-40";
  return gpu.rfind("A100", 0) == 0 ? "A100" : "H100";
}

// Checked against, not fitted to (issue 13): the same README's H100 80 GB FP8 table, added with
// the BF16 tables (commit b2a43a1): `amp_fp8` with `fc_type: te` (Transformer Engine v0.10, whose
// only recipe was delayed scaling), `attn_impl: triton`, 8 GPUs, FULL_SHARD. Every row.
const FoundryRow kFoundryFp8[] = {
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
const FoundryRow kFoundryBf16CheckpointedTwin = {
    "3b", "H100-SXM5-80GB", 32, 2560, 32, 8, 3, 6, true, true, 5873, 32768};

const MoeRow kMoe[] = {
    // The 26.04.01 recipe (qwen3_30b_a3b_pretrain_16gpu_h100_fp8cs_config): flex + HybridEP.
    // clang-format off
    {"Qwen3 30B-A3B", "H100-SXM5-80GB", 16, 48, 2048, 32, 4, 151936, 128, 8, 768, 1024, 1, 1, 1, 1,
     16, true, 8960, "hybridep"},
    // clang-format on
    // The Blackwell 30B recipes: flex + HybridEP too (qwen3_workload_base_configs.py at v0.4.2).
    // clang-format off
    {"Qwen3 30B-A3B", "B200-SXM-180GB", 8, 48, 2048, 32, 4, 151936, 128, 8, 768, 512, 4, 1, 1, 1, 8,
     true, 27136, "hybridep"},
    // clang-format on
    // qwen3_235b_a22b_pretrain_config_h100 with the V2 preset (Megatron Bridge v0.4.2, c810129;
    // GBS 8,192 is V2's): all-to-all, EP overlap on (with delay_wgrad_compute, which the skill
    // below measured at 0.4 % of the step), FP8 parameters (not stated: the spec's one bf16
    // gather per step is the slower reading). 235B on B200: all-to-all too, the only other 26.04.01
    // 235B
    // recipe without HybridEP.
    // clang-format off
    {"Qwen3 235B-A22B", "H100-SXM5-80GB", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 1, 2, 8,
     4, 32, false, 1712, "alltoall", "fp8", true},
    // clang-format on
    {"Qwen3 235B-A22B", "B200-SXM-180GB", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 1, 1, 8,
     1, 8, true, 3776},
    // The same table's Blackwell racks and B300 (MXFP8).
    // All on flex + HybridEP.
    // clang-format off
    {"Qwen3 30B-A3B", "GB300-NVL72", 8, 48, 2048, 32, 4, 151936, 128, 8, 768, 512, 8, 1, 1, 1, 8,
     true, 31744, "hybridep"},
    {"Qwen3 30B-A3B", "GB200-NVL72", 8, 48, 2048, 32, 4, 151936, 128, 8, 768, 512, 4, 1, 1, 1, 8,
     true, 26112, "hybridep"},
    {"Qwen3 30B-A3B", "B300-SXM-270GB", 8, 48, 2048, 32, 4, 151936, 128, 8, 768, 512, 8, 1, 1, 1, 8,
     true, 30720, "hybridep"},
    {"Qwen3 235B-A22B", "GB300-NVL72", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 2, 1, 4,
     12, 32, true, 6944, "hybridep"},
    {"Qwen3 235B-A22B", "GB200-NVL72", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 1, 1, 8, 3,
     32, true, 5680, "hybridep"},
    // B300's 235B recipe moved to HybridEP for this container (Megatron Bridge #3490, cherry-picked
    // into v0.4.2 as 6a5c997e7); the 26.04 container's page ran it on the all-to-all dispatcher,
    // nothing else in the recipe changed: 4,865 tokens/s per GPU, the next row.
    {"Qwen3 235B-A22B", "B300-SXM-270GB", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 2, 1, 8,
     1, 8, true, 5936, "hybridep"},
    {"Qwen3 235B-A22B 26.04", "B300-SXM-270GB", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 2,
     1, 8, 1, 8, true, 4865, "alltoall"},
    // clang-format on
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
    // The next software generation: the 26.06 container's Blackwell MXFP8 recipes
    // (scripts/performance/configs/qwen/qwen3_workload_base_configs.py at the 26.06 summary,
    // 63b08b397) on the same layouts. Modelled: moe_a2a_overlap; fp8_dot_product_attention;
    // cutedsl_fused_grouped_mlp (one grouped GEMM kernel over a rank's experts). Not modelled:
    // full-iteration CUDA graphs (moe_expert_rank_capacity_factor 1.5, paged stashing); the fused
    // MLP's SwiGLU and quantize in its GEMM's epilogue. The performance summary's "26.06 NeMo
    // Container" rows.
    {"Qwen3 30B-A3B 26.06", "GB300-NVL72", 8, 48, 2048, 32, 4, 151936, 128, 8, 768, 512, 8, 1, 1,
     1, 8, true, 45275, "hybridep", "fp8", true, true, true},
    {"Qwen3 30B-A3B 26.06", "GB200-NVL72", 8, 48, 2048, 32, 4, 151936, 128, 8, 768, 512, 4, 1, 1,
     1, 8, true, 40706, "hybridep", "fp8", true, true, true},
    {"Qwen3 30B-A3B 26.06", "B300-SXM-270GB", 8, 48, 2048, 32, 4, 151936, 128, 8, 768, 512, 8, 1,
     1, 1, 8, true, 40769, "hybridep", "fp8", true, true, true},
    {"Qwen3 235B-A22B 26.06", "GB300-NVL72", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 2,
     1, 4, 12, 32, true, 9015, "hybridep", "fp8", true, true, true},
    {"Qwen3 235B-A22B 26.06", "GB200-NVL72", 256, 94, 4096, 64, 4, 151936, 128, 8, 1536, 8192, 1,
     1, 8, 3, 32, true, 7376, "hybridep", "fp8", true, true, true},
    // GPT-OSS 120B (Megatron Bridge's gpt_oss_bridge.py over openai/gpt-oss-120b: 36 layers of
    // hidden 2,880, 64 query and 8 KV heads of 64, 128 experts of 2,880 top-4 with a gated
    // quick-GELU, clamped, between their GEMMs, untied vocabulary of 201,088; window_size
    // (127, 0) on every odd layer, window_attn_skip_freq 2: a window of 128 keys on 18 of the
    // 36 layers), 64 GPUs, GBS 1,280 of 4,096 tokens, micro-batch 4, TP1 PP1, its 64 ranks'
    // data parallelism, no recompute, no TP overlap. Not in the model: its attention sinks
    // (softmax_type learnable, which leaves cuDNN's fused attention the only kernel). The linear
    // layers' biases, the clamp and YaRN are, as Megatron-Core's eager paths run them (the model
    // words MoeSpec writes for GPT-OSS). The 26.06 and 26.08 Blackwell-rack rows
    // (GPT_OSS_120B_PRETRAIN_CONFIG_{GB300,GB200}_FP8_MX_V2 at c270efc50, the same recipe in
    // perf_recipes/gpt_oss at 4ab94dfad): MXFP8, flex + HybridEP, EP overlap, FP8 attention, the
    // fused grouped MLP, and full-iteration CUDA graphs (not modelled; their expert capacity 1.5
    // is memory); EP16 on GB300, EP64 on GB200. Their MXFP8 parameter gather through the
    // gradient buffer (reuse_grad_buf_for_mxfp8_param_ag) is not in the model: the spec gathers
    // bf16. The performance summary's 26.06 rows (docs/performance-summary.md at c270efc50); its
    // 26.08 rows (at 4ab94dfad), the same recipe a container later, are within 1 % of them
    // (33,024 and 28,672) and not counted again.
    {"GPT-OSS 120B 26.06", "GB300-NVL72", 64, 36, 2880, 64, 8, 201088, 128, 4, 2880, 1280, 4, 1, 1,
     1, 16, false, 33166, "hybridep", "fp8", true, true, true, 64, 128, 18},
    {"GPT-OSS 120B 26.06", "GB200-NVL72", 64, 36, 2880, 64, 8, 201088, 128, 4, 2880, 1280, 4, 1, 1,
     1, 64, false, 28947, "hybridep", "fp8", true, true, true, 64, 128, 18},
    // 26.06's B300 row (docs/performance-summary.md at 8f341b04f): MXFP8 on the BF16 recipe's
    // layout (B300_FP8_MX_V2 = B300_BF16_V2): EP8 inside a node, flex + HybridEP, Transformer
    // Engine's CUDA graphs of attention and the router; no EP overlap, no FP8 attention, one
    // GEMM per expert.
    {"GPT-OSS 120B 26.06", "B300-SXM-270GB", 64, 36, 2880, 64, 8, 201088, 128, 4, 2880, 1280, 4, 1,
     1, 1, 8, false, 18534, "hybridep", "fp8", false, false, false, 64, 128, 18},
    // 26.04.01's BF16 rows on the layouts the model can state (Megatron Bridge v0.4.2's V2
    // configs; the archive at c270efc50): GB300 EP64 on NCCL's all-to-all with Transformer
    // Engine's graphs of attention and the router, B300 EP8 on HybridEP; neither recomputes.
    {"GPT-OSS 120B BF16 26.04.01", "GB300-NVL72", 64, 36, 2880, 64, 8, 201088, 128, 4, 2880, 1280,
     4, 1, 1, 1, 64, false, 19200, "alltoall", "bf16", false, false, false, 64, 128, 18},
    {"GPT-OSS 120B BF16 26.04.01", "B300-SXM-270GB", 64, 36, 2880, 64, 8, 201088, 128, 4, 2880,
     1280, 4, 1, 1, 1, 8, false, 15232, "hybridep", "bf16", false, false, false, 64, 128, 18},
    // 26.04.01's other three BF16 rows, which recompute the norm before each MoE layer and the
    // experts' activation (recompute_modules layernorm, moe_act; the V2 configs of
    // gpt_oss_workload_base_configs.py at Megatron Bridge v0.4.2): GB200 at EP64 with EP overlap
    // (moe_a2a_overlap) on the all-to-all, B200 at EP8 on the all-to-all, H100 at PP4 EP8,
    // micro-batch 1, the embedding and the loss outside the pipeline split (the recipe's
    // account_for_*_in_pipeline_split False: 9 layers a stage, the last beside the output layer).
    {"GPT-OSS 120B BF16 26.04.01", "GB200-NVL72", 64, 36, 2880, 64, 8, 201088, 128, 4, 2880, 1280,
     4, 1, 1, 1, 64, false, 16640, "alltoall", "bf16", true, false, false, 64, 128, 18,
     "layernorm, moe_act"},
    {"GPT-OSS 120B BF16 26.04.01", "B200-SXM-180GB", 64, 36, 2880, 64, 8, 201088, 128, 4, 2880,
     1280, 4, 1, 1, 1, 8, false, 13568, "alltoall", "bf16", false, false, false, 64, 128, 18,
     "layernorm, moe_act"},
    {"GPT-OSS 120B BF16 26.04.01", "H100-SXM5-80GB", 64, 36, 2880, 64, 8, 201088, 128, 4, 2880,
     1280, 1, 1, 4, 1, 8, false, 5824, "alltoall", "bf16", false, false, false, 64, 128, 18,
     "layernorm, moe_act", false},
    // Last: the EP-overlap skill's run with overlap on, whose memory MoeRowsOutsideTheFit checks.
    {"Qwen3 30B-A3B BF16 EP overlap", "H100-SXM5-80GB", 16, 48, 2048, 32, 4, 151936, 128, 8, 768,
     1024, 1, 1, 1, 1, 16, true, 1024.0 * 4096 / 20.9920 / 16, "hybridep", "bf16", true},
    // clang-format on
};

const MoeRow& MoeRowNamed(std::string_view name, std::string_view gpu) {
  for (const auto& row : kMoe) {
    if (row.name == name && (gpu.empty() || row.gpu == gpu)) return row;
  }
  ADD_FAILURE() << "no MoE row " << name << (gpu.empty() ? "" : " on ") << gpu;
  return kMoe[0];
}

model::Spec MoeSpec(const MoeRow& r) {
  const bool hopper = std::string(r.gpu).rfind("H100", 0) == 0;
  const SystemShape shape = ShapeOf(r.gpu, r.gpus);
  const std::string yaml =
      "name: moe\n" +
      DgxCluster(r.gpus / shape.per_node, r.gpu, shape.scale_up, shape.per_node, shape.nic,
                 shape.nic_speed, shape.sw, shape.per_node) +
      fmt::format(
          R"(workload:
  model: {{name: moe, layers: {layers}, hidden: {hidden}, heads: {heads}, kv_heads: {kv},
          head_dim: {head_dim}, {mlp}, vocab: {vocab}, sequence: 4096, dropout: 0,{window}
          qk_norm: {qk_norm},
          moe: {{experts: {experts}, top_k: {k}, ffn_hidden: {f}}}}}
  precision: {precision}
  parallel: {{strategy: zero1, tensor: {tp}, pipeline: {pp}, virtual_stages: {vp}, expert: {ep},
             sequence_parallel: {sp}, embedding_in_pipeline_split: {split},
             loss_in_pipeline_split: {split}}}
  batch: {{micro: {mbs}, global: {gbs}}}{recompute}
  software: {{stack: nemo-2025, tp_comm_overlap: {tpo}, fp8_recipe: {recipe},
             moe_dispatcher: {dispatcher}, moe_comm_overlap: {ovl},
             fp8_attention: {fp8_attention}, moe_expert_gemm: {gemm}}}
)",
          fmt::arg("tpo", r.tp_overlap), fmt::arg("ovl", r.ep_overlap),
          fmt::arg("gemm", r.fused_grouped_mlp ? "fused" : "per-expert"),
          fmt::arg("fp8_attention", r.fp8_attention),
          fmt::arg("recipe", hopper ? "current" : "mxfp8"), fmt::arg("precision", r.precision),
          fmt::arg("dispatcher", r.dispatcher), fmt::arg("layers", r.layers),
          fmt::arg("hidden", r.hidden), fmt::arg("heads", r.heads), fmt::arg("kv", r.kv_heads),
          fmt::arg("vocab", r.vocab), fmt::arg("experts", r.experts), fmt::arg("k", r.top_k),
          fmt::arg("f", r.expert_ffn), fmt::arg("tp", r.tp), fmt::arg("pp", r.pp),
          fmt::arg("vp", r.vp), fmt::arg("ep", r.ep), fmt::arg("sp", r.tp > 1 ? "true" : "false"),
          fmt::arg("mbs", r.mbs), fmt::arg("gbs", r.gbs), fmt::arg("head_dim", r.head_dim),
          fmt::arg("split", r.pipeline_split),
          fmt::arg("recompute", r.recompute_modules == nullptr
                                    ? std::string()
                                    : fmt::format("\n  activation_checkpointing: selective\n"
                                                  "  activation_checkpointing_modules: [{}]",
                                                  r.recompute_modules)),
          // Qwen3's attention norms each head's queries and keys (q_norm, k_norm); GPT-OSS's none.
          fmt::arg("qk_norm", std::string_view(r.name).rfind("Qwen3", 0) == 0),
          // GPT-OSS's clamped gated quick-GELU, linear biases and YaRN (its Hugging Face config's
          // swiglu_limit 7 and rope_scaling; Megatron Bridge's gpt_oss_bridge.py:
          // add_bias_linear, activation_func_clamp_value 7, position_embedding_type yarn with a
          // scale of 32); Qwen3's SwiGLU.
          fmt::arg("mlp", std::string_view(r.name).rfind("GPT-OSS", 0) == 0
                              ? "mlp: quick-geglu, activation_clamp: 7, linear_bias: true,\n"
                                "          rope_scaling: yarn"
                              : "mlp: swiglu"),
          fmt::arg("window", r.sliding_window == 0
                                 ? std::string()
                                 : fmt::format(" sliding_window: {}, sliding_window_layers: {},",
                                               r.sliding_window, r.windowed_layers)));
  auto s = model::ParseSpec(yaml, "moe.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

const MlperfRow kMlperf[] = {
    // GPT-3 175B. v4.0 eos_n64: config_DGXH100_64x8x128x4x8_mbs2.sh (its log's global batch is
    // 2,304 where the file's MINIBS gives 2,048); 119,934 ms over 11 steps.
    {"v4.0 GPT-3 512", "gpt3", "H100-SXM5-80GB", 512, 4, 8, 4, 1, 2, 2304, 10.903},
    // v3.1 eos-dfw_n512 and _n1344 (config_DGXH100_512x8x16x4x8_mbs1.sh, _1344x8x8x4x8_mbs1.sh,
    // the interleaving left at custom.yaml's 12), and Azure+NVIDIA's ND_H100_v5_n1344 (the same
    // config file on Azure's ND H100 v5 VMs).
    {"v3.1 GPT-3 4,096", "gpt3", "H100-SXM5-80GB", 4096, 4, 8, 12, 1, 1, 2048, 1.6276, nullptr,
     nullptr, false},
    {"v3.1 GPT-3 10,752", "gpt3", "H100-SXM5-80GB", 10752, 4, 8, 12, 1, 1, 2688, 0.9522, nullptr,
     nullptr, false},
    {"v3.1 GPT-3 Azure 10,752", "gpt3", "H100-SXM5-80GB", 10752, 4, 8, 12, 1, 1, 2688, 0.9765,
     nullptr, nullptr, false},
    // v4.0 eos-dfw_n1344 and _n1452 (config_DGXH100_1344x8x6x4x6_mbs1_cg.sh, CUDA graphs).
    {"v4.0 GPT-3 10,752", "gpt3", "H100-SXM5-80GB", 10752, 4, 6, 8, 1, 1, 2688, 0.9207},
    {"v4.0 GPT-3 11,616", "gpt3", "H100-SXM5-80GB", 11616, 4, 6, 8, 1, 1, 2904, 0.9224},
    // v4.1 (mlcommons/training_results_v4.1): NVIDIA's eos_n32 and _n64 (NeMo 24.09,
    // config_DGXH100_32x8x256x4x8_mbs2.sh and _64x8x128x4x8_mbs2.sh, the interleaving 6), and
    // Oracle's 1536x and 3072xBM.GPU.H100.8 (NeMo on OCI, 24.04 by its systems file and 24.09 by
    // its logs: 8 H100s with 16 RDMA ports, NCCL_IB_HCA's, of 200 Gb/s by OCI's description of the
    // shape, RoCE v2 on an Ethernet fabric whose switches and topology are not stated: a generic
    // 64-port 400 GbE switch; config_DGXH100_192x8x64x4x8_mbs2.sh and _384x8x32x4x8_mbs2.sh, the
    // interleaving 4). All FP8 parameters, no CUDA graphs. Oracle's 3,072-GPU run slows as it
    // runs (its 8-step blocks from 2.81 s to 3.4-3.5 s, in each result file; the 1,536 stays at
    // 5.22 s): the median, as for every row, is 3.33 s. (v4.1's eos-dfw_n1452 is v4.0's 11,616 row
    // again; its preview
    // DGX B200 run states no scale-out NIC.)
    {"v4.1 GPT-3 256", "gpt3", "H100-SXM5-80GB", 256, 4, 8, 6, 1, 2, 2048, 18.4073},
    {"v4.1 GPT-3 512", "gpt3", "H100-SXM5-80GB", 512, 4, 8, 6, 1, 2, 2048, 9.5350},
    {"v4.1 GPT-3 Oracle 1,536", "gpt3", "H100-SXM5-80GB", 1536, 4, 8, 4, 1, 2, 3072, 5.2235,
     "Tomahawk4-64x400G"},
    {"v4.1 GPT-3 Oracle 3,072", "gpt3", "H100-SXM5-80GB", 3072, 4, 8, 4, 1, 2, 3072, 3.3261,
     "Tomahawk4-64x400G"},
    // Llama 3.1 405B, v5.0: NVIDIA's tyche_ngpu256 and _ngpu512, IBM+CoreWeave+NVIDIA's
    // carina_ngpu2496 (config_GB200_*xtp4pp8cp2*.sh: TP4 PP8 VP8 CP2, TP overlap, CUDA graphs,
    // FP8 delayed scaling with FP8 parameter gather).
    {"v5.0 405B 256", "llama31_405b", "GB200-NVL72", 256, 4, 8, 8, 2, 1, 448, 19.0961},
    {"v5.0 405B 512", "llama31_405b", "GB200-NVL72", 512, 4, 8, 8, 2, 1, 896, 19.6041},
    {"v5.0 405B 2,496", "llama31_405b", "GB200-NVL72", 2496, 4, 8, 8, 2, 1, 1248, 5.8222},
    // carina's other sizes (config_GB200_128x4x112 to _512x4x40xtp4pp8cp2.sh, the same recipe).
    {"v5.0 405B 512 (carina)", "llama31_405b", "GB200-NVL72", 512, 4, 8, 8, 2, 1, 896, 19.4305},
    {"v5.0 405B 1,024", "llama31_405b", "GB200-NVL72", 1024, 4, 8, 8, 2, 1, 768, 8.4496},
    {"v5.0 405B 1,536", "llama31_405b", "GB200-NVL72", 1536, 4, 8, 8, 2, 1, 1152, 8.4912},
    {"v5.0 405B 2,048", "llama31_405b", "GB200-NVL72", 2048, 4, 8, 8, 2, 1, 1280, 7.1519},
    // v5.0's eos-dfw_n64 to _n1024 (config_DGXH100_*xtp8pp8cp2.sh: TP8 PP8 VP8 CP2 on Eos's
    // DGX H100, 8x ConnectX-7 NDR; TP overlap and FP8 parameters, no CUDA graphs); step times as
    // above, from result_0.txt (the three results of each size agree within 1.2 %).
    {"v5.0 405B H100 512", "llama31_405b", "H100-SXM5-80GB", 512, 8, 8, 8, 2, 1, 1152, 55.1066},
    {"v5.0 405B H100 2,048", "llama31_405b", "H100-SXM5-80GB", 2048, 8, 8, 8, 2, 1, 1152, 14.2083},
    {"v5.0 405B H100 2,432", "llama31_405b", "H100-SXM5-80GB", 2432, 8, 8, 8, 2, 1, 1216, 12.7006},
    {"v5.0 405B H100 2,560", "llama31_405b", "H100-SXM5-80GB", 2560, 8, 8, 8, 2, 1, 1120, 11.1840},
    {"v5.0 405B H100 8,192", "llama31_405b", "H100-SXM5-80GB", 8192, 8, 8, 8, 2, 1, 1536, 5.1820},
    // Llama 3.1 8B, v5.1: theia (GB300) and tyche (GB200), 512 GPUs at TP2 CP4 with TP overlap
    // (config_GB300_128x4x1xtp2pp1cp4_8b.sh), 72 at TP1 CP2; one sequence per data-parallel
    // rank a step.
    {"v5.1 8B GB300 512", "llama31_8b", "GB300-NVL72", 512, 2, 1, 1, 4, 1, 64, 0.0855},
    {"v5.1 8B GB200 512", "llama31_8b", "GB200-NVL72", 512, 2, 1, 1, 4, 1, 64, 0.0890},
    {"v5.1 8B GB300 72", "llama31_8b", "GB300-NVL72", 72, 1, 1, 1, 2, 1, 36, 0.1473},
    {"v5.1 8B GB200 72", "llama31_8b", "GB200-NVL72", 72, 1, 1, 1, 2, 1, 36, 0.1688},
    // Cisco's hpf_n8 and hpf_n16 (NeMo 2.4 on the 25.01 container; DGX H100-class nodes with 8
    // ConnectX-7 400 Gb/s, RoCE on Cisco Silicon One G200 switches, 51.2 Tb/s as 128 x 400 GbE,
    // written as the catalog's SN5600 of that radix and speed; config_DGXH100_8x8x1xtp1pp1cp1.sh
    // and
    // _16x8x1xtp2pp1cp1.sh): FP8 with delayed scaling (custom.yaml's default) and FP8
    // parameters, TP overlap, no CUDA graphs (MCORE_CUDA_GRAPH=False).
    {"v5.1 8B Cisco 64", "llama31_8b", "H100-SXM5-80GB", 64, 1, 1, 1, 1, 1, 64, 0.7199, "SN5600",
     "delayed", true, true},
    {"v5.1 8B Cisco 128", "llama31_8b", "H100-SXM5-80GB", 128, 2, 1, 1, 1, 1, 64, 0.4831, "SN5600",
     "delayed", true, true},
    // The University of Florida's HiPerGator DGX B200s (hpg.dgxb200x8.n1 to .n56: 8 B200 per node
    // on NVLink 5, InfiniBand, the DGX's 8 ConnectX-7 at 400 Gb/s; the 25.09 container), NVIDIA's
    // implementation: FP8 with current scaling ("tensorwise"), FP8 parameters, CUDA graphs, no
    // gather after the optimizer step (config_common_cg.sh). The 8B on 1 to 32 nodes: TP1, one
    // node at micro-batch 2 (config_DGXB200_1x8x2xtp1pp1cp1_8b.sh), two the same
    // (config_DGXB200_2x8x2...), from four nodes CP2 at micro-batch 1 (the configs the runs
    // launched, llama31_8b/implementations/hpg.dgxb200x8/config_DGXB200_{4,8,16,32}x8x1xtp1pp1cp2
    // _8b.sh, TP overlap off), one step a sequence per rank.
    {"v5.1 8B UF B200 8", "llama31_8b", "B200-SXM-180GB", 8, 1, 1, 1, 1, 2, 16, 0.5437},
    {"v5.1 8B UF B200 16", "llama31_8b", "B200-SXM-180GB", 16, 1, 1, 1, 1, 2, 32, 0.5712},
    {"v5.1 8B UF B200 32", "llama31_8b", "B200-SXM-180GB", 32, 1, 1, 1, 2, 1, 16, 0.1877},
    {"v5.1 8B UF B200 64", "llama31_8b", "B200-SXM-180GB", 64, 1, 1, 1, 2, 1, 32, 0.1896},
    {"v5.1 8B UF B200 128", "llama31_8b", "B200-SXM-180GB", 128, 1, 1, 1, 2, 1, 64, 0.1929},
    {"v5.1 8B UF B200 256", "llama31_8b", "B200-SXM-180GB", 256, 1, 1, 1, 2, 1, 128, 0.2214},
    // The 405B on 32 and 56 nodes as run_32n.sub and run_56n.sub launch it
    // (hpg.dgxb200x8/config_DGXB200_32x8x144xtp4pp8cp2_cg.sh and _56x8x144...: TP4 PP8 VP8 CP2,
    // 144 micro-batches a step, the embedding and the loss counted in the pipeline split), which
    // comment out TP_COMM_OVERLAP, so custom.yaml's ub_tp_comm_overlap keeps its default, False
    // (the stock b200_nemo/config_DGXB200_64x8x144xtp4pp8cp2_cg.sh beside them, not launched,
    // sets it).
    {"v5.1 405B UF B200 256", "llama31_405b", "B200-SXM-180GB", 256, 4, 8, 8, 2, 1, 576, 27.6385,
     nullptr, "current", true, false, false, false},
    {"v5.1 405B UF B200 448", "llama31_405b", "B200-SXM-180GB", 448, 4, 8, 8, 2, 1, 1008, 27.9100,
     nullptr, "current", true, false, false, false},
    // Oracle's 8xBM.GPU.B200.8 (RoCE v2, "ROCE2" by its systems file: OCI's 8 ConnectX-7 at 400
    // Gb/s per node, on the Oracle rows' generic switch above), the same implementation and
    // config_DGXB200_8x8x1xtp1pp1cp2_8b.sh (FP8 current scaling, FP8 parameters, CUDA graphs).
    {"v5.1 8B Oracle B200 64", "llama31_8b", "B200-SXM-180GB", 64, 1, 1, 1, 2, 1, 32, 0.1914,
     "Tomahawk4-64x400G"},
    // HPE's Cray XD670 with 8 H200 per node (NVLink 4; 8 ConnectX-7 NDR at 400 Gb/s per node; the
    // 25.08 container, cuDNN 9.12), NVIDIA's implementation on 8 nodes
    // (config_XD670_8x8x1xtp1pp1cp2_8b.sh): TP1 CP2, micro-batch 1, FP8 current scaling, FP8
    // parameters, CUDA graphs, no gather after the optimizer step, and FP8 attention
    // (config_common_fp8attn.sh: FP8_DPA, per-tensor with the linear layers' tensorwise recipe).
    {"v5.1 8B HPE H200 64", "llama31_8b", "H200-SXM-141GB", 64, 1, 1, 1, 2, 1, 32, 0.3532, nullptr,
     nullptr, true, false, true},
    // NVIDIA's v5.1 405B runs, all NVFP4 (the 25.09 container): config_GB200_128x4x144xtp4pp8cp2_
    // cg_fp4.sh (tyche, 512 GB200), config_GB300_128x4x72xtp2pp8cp2_cg_fp4.sh (theia, 512 GB300),
    // config_GB200_640x4x24... and _1280x4x16xtp4pp8cp2_cg_fp4.sh (hsg, 2,560 and 5,120 GB200),
    // each sourcing config_common.sh, _fp4.sh, _405b.sh and _cg.sh: every layer's linear GEMMs in
    // NVFP4 (no BF16 layers; the Hadamard transform, stochastic rounding and 2D weight scales
    // off), BF16 attention, no FP4 or FP8 parameter gather, TP_COMM_OVERLAP=False, no gather after
    // the optimizer step, full-iteration CUDA graphs (not modelled), the embedding and the loss in
    // the pipeline split. Tyche's FP8 run of v5.0 (v5.0 405B 512, above: 19.60 s at GBS 896) is the
    // same system and layout at another batch and container.
    {"v5.1 405B NVFP4 512", "llama31_405b", "GB200-NVL72", 512, 4, 8, 8, 2, 1, 1152, 17.2365,
     nullptr, nullptr, false, false, false, false, true},
    {"v5.1 405B NVFP4 GB300 512", "llama31_405b", "GB300-NVL72", 512, 2, 8, 8, 2, 1, 1152, 13.1400,
     nullptr, nullptr, false, false, false, false, true},
    {"v5.1 405B NVFP4 2,560", "llama31_405b", "GB200-NVL72", 2560, 4, 8, 8, 2, 1, 960, 3.1935,
     nullptr, nullptr, false, false, false, false, true},
    {"v5.1 405B NVFP4 5,120", "llama31_405b", "GB200-NVL72", 5120, 4, 8, 8, 2, 1, 1280, 2.2293,
     nullptr, nullptr, false, false, false, false, true},
    // v5.1's single-node 8B runs in NVFP4, NVIDIA's and five partners' (NVIDIA's implementation:
    // config_GB200_2x4x2xtp1pp1cp1_8b_fp4.sh and its GB300 twin, the partners' copies named in
    // their logs), each sourcing config_common.sh, _fp4.sh, _cg.sh, _8b.sh (stochastic rounding
    // and 2D weight scales back on; Nebius's B300 sources _fp4.sh last, leaving them off) and
    // _fp8attn.sh: NVFP4 GEMMs beside FP8 attention (FP8_DPA, NVTE_DPA_FP8_RECIPE=
    // Float8CurrentScaling), TP1 at micro-batch 2, GBS 16, no FP8 or FP4 parameters, per-layer
    // CUDA graphs (Nebius's B300 full-iteration ones). The median train_step_time after the first
    // ten logged of each system's first result file.
    {"v5.1 8B NVFP4 NVIDIA GB200 8", "llama31_8b", "GB200-NVL72", 8, 1, 1, 1, 1, 2, 16, 0.4050,
     nullptr, nullptr, false, false, true, false, true},
    {"v5.1 8B NVFP4 NVIDIA GB300 8", "llama31_8b", "GB300-NVL72", 8, 1, 1, 1, 1, 2, 16, 0.3456,
     nullptr, nullptr, false, false, true, false, true},
    {"v5.1 8B NVFP4 Dell B200 8", "llama31_8b", "B200-SXM-180GB", 8, 1, 1, 1, 1, 2, 16, 0.4506,
     nullptr, nullptr, false, false, true, false, true},
    {"v5.1 8B NVFP4 Lenovo SR680aV3 B200 8", "llama31_8b", "B200-SXM-180GB", 8, 1, 1, 1, 1, 2, 16,
     0.4438, nullptr, nullptr, false, false, true, false, true},
    {"v5.1 8B NVFP4 Lenovo SR780aV3 B200 8", "llama31_8b", "B200-SXM-180GB", 8, 1, 1, 1, 1, 2, 16,
     0.4511, nullptr, nullptr, false, false, true, false, true},
    {"v5.1 8B NVFP4 Lenovo B300 8", "llama31_8b", "B300-SXM-270GB", 8, 1, 1, 1, 1, 2, 16, 0.4054,
     nullptr, nullptr, false, false, true, false, true},
    {"v5.1 8B NVFP4 Nebius B200 8", "llama31_8b", "B200-SXM-180GB", 8, 1, 1, 1, 1, 2, 16, 0.4560,
     nullptr, nullptr, false, false, true, false, true},
    {"v5.1 8B NVFP4 Nebius B300 8", "llama31_8b", "B300-SXM-270GB", 8, 1, 1, 1, 1, 2, 16, 0.3944,
     nullptr, nullptr, false, false, true, false, true},
    {"v5.1 8B NVFP4 Oracle B200 8", "llama31_8b", "B200-SXM-180GB", 8, 1, 1, 1, 1, 2, 16, 0.4540,
     nullptr, nullptr, false, false, true, false, true},
    {"v5.1 8B NVFP4 Supermicro AS-4126 B200 8", "llama31_8b", "B200-SXM-180GB", 8, 1, 1, 1, 1, 2,
     16, 0.4497, nullptr, nullptr, false, false, true, false, true},
    {"v5.1 8B NVFP4 Supermicro SYS-422 B200 8", "llama31_8b", "B200-SXM-180GB", 8, 1, 1, 1, 1, 2,
     16, 0.4510, nullptr, nullptr, false, false, true, false, true},
};

const MlperfRow& MlperfRowNamed(std::string_view name) {
  for (const auto& row : kMlperf) {
    if (row.name == name) return row;
  }
  ADD_FAILURE() << "no MLPerf row " << name;
  return kMlperf[0];
}

model::Spec MlperfSpec(const MlperfRow& r) {
  const std::string_view bench = r.benchmark;
  const SystemShape shape = ShapeOf(r.gpu, r.gpus);
  const int dp = r.gpus / (r.tp * r.pp * r.cp);
  const std::string model =
      bench == "gpt3"
          ? "{name: gpt3-175b, layers: 96, hidden: 12288, heads: 96, vocab: 50688, sequence: 2048,"
            " dropout: 0, tied_embeddings: true}"
      : bench == "llama31_405b"
          ? "{name: llama31-405b, layers: 126, hidden: 16384, heads: 128, kv_heads: 8,"
            " ffn_hidden: 53248, mlp: swiglu, vocab: 128256, sequence: 8192, dropout: 0}"
          : "{name: llama31-8b, layers: 32, hidden: 4096, heads: 32, kv_heads: 8,"
            " ffn_hidden: 14336, mlp: swiglu, vocab: 128256, sequence: 8192, dropout: 0}";
  // RoCE (Oracle's two 200 Gb/s ports per GPU written as one 400 Gb/s link; Cisco's 400 Gb/s) on a
  // non-blocking tree of the row's switches, without rails: neither states its topology.
  auto s = model::ParseSpec(
      "name: mlperf\n" +
          DgxCluster(r.gpus / shape.per_node, r.gpu, shape.scale_up, shape.per_node,
                     r.roce_switch ? "ConnectX-7" : shape.nic,
                     r.roce_switch ? "400 Gb/s" : shape.nic_speed,
                     r.roce_switch ? r.roce_switch : shape.sw, shape.per_node,
                     r.roce_switch ? "roce" : "infiniband", r.roce_switch == nullptr) +
          fmt::format(
              R"(workload:
  model: {model}
  precision: {precision}
  parallel: {{strategy: zero1, tensor: {tp}, pipeline: {pp}, virtual_stages: {vp},
             context: {cp}, sequence_parallel: {sp}, embedding_in_pipeline_split: {split},
             loss_in_pipeline_split: {split}}}
  batch: {{micro: {mbs}, accumulation: {acc}}}
  activation_checkpointing: none
  software: {{stack: megatron-core-2024, {recipe}fp8_param_gather: {fp8p},
             overlap_param_gather_with_optimizer_step: {pgos}, fp8_attention: {fp8a},
             tp_comm_overlap: {tpo}}}
)",
              fmt::arg("model", model), fmt::arg("tp", r.tp), fmt::arg("pp", r.pp),
              fmt::arg("vp", r.vp), fmt::arg("cp", r.cp),
              fmt::arg("sp", r.tp > 1 ? "true" : "false"), fmt::arg("mbs", r.micro_batch),
              fmt::arg("acc", r.global_batch / (dp * r.micro_batch)),
              fmt::arg("precision", r.nvfp4 ? "fp4" : "fp8"),
              fmt::arg("recipe", r.nvfp4 ? std::string()
                                         : fmt::format("fp8_recipe: {}, ",
                                                       r.fp8_recipe            ? r.fp8_recipe
                                                       : bench == "llama31_8b" ? "current"
                                                                               : "delayed")),
              fmt::arg("fp8p", r.fp8_params), fmt::arg("pgos", r.param_gather_with_optimizer_step),
              fmt::arg("fp8a", r.fp8_attention), fmt::arg("tpo", r.tp_comm_overlap),
              fmt::arg("split", bench == "llama31_405b")),
      "mlperf.yaml");
  EXPECT_TRUE(s) << r.name << ": " << s.error().message;
  return *s;
}

double MlperfTokensPerGpu(const MlperfRow& r) {
  const double sequence = MlperfSpec(r).workload.model.sequence;  // the benchmark's
  return r.global_batch * sequence / r.step_s / r.gpus;
}

model::Spec DeepSpeedAzureSpec() {
  auto s = model::ParseSpec(
      "name: ndm-a100-v4\n" +
          DgxCluster(32, "A100-SXM4-80GB", "{type: nvlink3, bandwidth: 600 GB/s, switched: true}",
                     8, "ConnectX-6", "200 Gb/s", "QM8700") +
          R"(workload:
  model: {name: gpt3-175b, layers: 96, hidden: 12288, heads: 96, vocab: 50304, sequence: 512,
          tied_embeddings: true}
  parallel: {strategy: zero3}
  batch: {micro: 32, accumulation: 1}
  activation_checkpointing: full
  flash_attention: false
  precision: fp16
  software: {stack: deepspeed-zero3, cross_entropy: vocab-parallel}
)",
      "deepspeed-azure.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

double DeepSpeedAzureTokensPerGpu() {
  const model::ModelShape& m = DeepSpeedAzureSpec().workload.model;
  const double l = m.layers, h = m.hidden, s = m.sequence, v = m.vocab;
  const double flops_per_token = 96 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  return kDeepSpeedAzureTflopsPerGpu * 1e12 / flops_per_token;
}

namespace {
// Qwen3-8B's Hugging Face config (the cards' revision b968826d): 36 layers of 4,096, 32 query and
// 8 KV heads of 128, SwiGLU 12,288, 151,936 tokens untied, QK-norm.
constexpr std::string_view kQwen3_8bShape =
    "name: qwen3-8b, layers: 36, hidden: 4096, heads: 32, kv_heads: 8, head_dim: 128,\n"
    "          ffn_hidden: 12288, mlp: swiglu, vocab: 151936, dropout: 0, qk_norm: true";
}  // namespace

model::Spec BridgeCardQwen3Spec() {
  const SystemShape shape = ShapeOf("H100-SXM5-80GB", 16);
  auto s = model::ParseSpec("name: bridge-card-qwen3-8b\n" +
                                DgxCluster(2, "H100-SXM5-80GB", shape.scale_up, 8, shape.nic,
                                           shape.nic_speed, shape.sw, 8) +
                                fmt::format(R"(workload:
  model: {{{shape}, sequence: 4096}}
  precision: bf16
  parallel: {{strategy: zero1, tensor: 1, pipeline: 1}}
  batch: {{micro: 1, global: 1024}}
  activation_checkpointing: none
  software: {{stack: nemo-2025}}
)",
                                            fmt::arg("shape", kQwen3_8bShape)),
                            "bridge-card-qwen3-8b.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

model::Spec BridgeCardQwen3FineTuningSpec(int gpus, int tp, bool lora) {
  auto s = model::ParseSpec(
      fmt::format(R"(name: bridge-card-qwen3-8b-{gpus}
nodes:
  count: 1
  gpu: {{model: H100-SXM5-80GB, count: {gpus}}}
fabrics:
  scale_up: {{type: nvlink4, bandwidth: 900 GB/s, switched: true}}
workload:
  model: {{{shape}, sequence: 2048, document_length: 1000{lora}}}
  precision: bf16
  parallel: {{strategy: zero1, tensor: {tp}, pipeline: 1, sequence_parallel: false}}
  batch: {{micro: 1, global: 32}}
  activation_checkpointing: none
  software: {{stack: nemo-2025, dp_comm_overlap: false}}
)",
                  fmt::arg("gpus", gpus), fmt::arg("tp", tp), fmt::arg("shape", kQwen3_8bShape),
                  fmt::arg("lora", lora ? ",\n          lora: {rank: 8, modules: "
                                          "[linear_qkv, linear_proj]}"
                                        : "")),
      "bridge-card-fine-tuning.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

model::Spec BridgeCardQwen3MoeScalingSpec(const BridgeCardScalingPoint& p) {
  MoeRow row = MoeRowNamed("Qwen3 30B-A3B 26.06", "GB300-NVL72");
  row.gbs = row.gbs / row.gpus * p.gpus;
  row.gpus = p.gpus;
  row.tokens_per_gpu = p.tokens_per_gpu;
  return MoeSpec(row);
}

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

const MtNlgRow kMtNlg[] = {{280, 60.1}, {350, 50.2}, {420, 44.4}};

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

const TitanRow kTitan[] = {
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

const FmsRow kFms[] = {
    {"A100 Llama2 70B", "A100-SXM4-80GB", 128, 80, 8192, 64, 8, 28672, 0, "full", 0, 370},
    {"A100 Llama2 34B", "A100-SXM4-80GB", 128, 48, 8192, 64, 8, 22016, 0, "full", 0, 700},
    {"A100 Llama2 13B", "A100-SXM4-80GB", 128, 40, 5120, 40, 40, 13824, 0, "full", 20, 1800},
    {"A100 Llama2 7B", "A100-SXM4-80GB", 128, 32, 4096, 32, 32, 11008, 8, "none", 0, 3700},
    {"H100 Llama2 70B", "H100-SXM5-80GB", 96, 80, 8192, 64, 8, 28672, 0, "full", 0, 800},
    {"H100 Llama2 34B", "H100-SXM5-80GB", 96, 48, 8192, 64, 8, 22016, 0, "full", 0, 1550},
    {"H100 Llama2 13B", "H100-SXM5-80GB", 96, 40, 5120, 40, 40, 13824, 0, "full", 20, 3800},
    {"H100 Llama2 7B", "H100-SXM5-80GB", 96, 32, 4096, 32, 32, 11008, 8, "none", 0, 7500},
};

model::Spec FmsSpec(const FmsRow& r) {
  const bool h100 = std::string_view(r.gpu).rfind("H100", 0) == 0;
  const std::string yaml =
      "name: fms-fsdp\n" +
      DgxCluster(r.gpus / 8, r.gpu,
                 h100 ? "{type: nvlink4, bandwidth: 900 GB/s, switched: true}"
                      : "{type: nvlink3, bandwidth: 600 GB/s, switched: true}",
                 8, h100 ? "ConnectX-7" : "ConnectX-6", "100 Gb/s", "SN5600", h100 ? 8 : 4, "roce",
                 false) +
      fmt::format(
          R"(workload:
  model: {{name: llama2, layers: {layers}, hidden: {hidden}, heads: {heads},
          kv_heads: {kv_heads}, ffn_hidden: {ffn}, mlp: swiglu, vocab: 32000, sequence: 4096,
          dropout: 0}}
  parallel: {{strategy: fsdp{shard}}}
  batch: {{micro: 2, accumulation: 1}}
  activation_checkpointing: {recompute}{recompute_layers}
  precision: bf16
  software: {{stack: pytorch-fsdp1}}
)",
          fmt::arg("layers", r.layers), fmt::arg("hidden", r.hidden), fmt::arg("heads", r.heads),
          fmt::arg("kv_heads", r.kv_heads), fmt::arg("ffn", r.ffn),
          fmt::arg("shard", r.shard > 0 ? fmt::format(", shard: {}", r.shard) : std::string()),
          fmt::arg("recompute", r.recompute),
          fmt::arg("recompute_layers",
                   r.recompute_layers > 0
                       ? fmt::format("\n  activation_checkpointing_layers: {}", r.recompute_layers)
                       : std::string()));
  auto s = model::ParseSpec(yaml, "fms-fsdp.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

Sample KorthikantiSample(const KorthikantiRow& row, std::string_view stack) {
  model::Spec spec = KorthikantiSpec(row, stack);
  const double tokens =
      static_cast<double>(spec.workload.global_batch) * spec.workload.model.sequence;
  return {std::move(spec), tokens / row.iteration_s / row.gpus,
          fmt::format("Korthikanti A100 {} {}", row.name,
                      row.full_recompute ? "full recompute" : "selective")};
}

const OlmoCoreRow kOlmoCore[] = {
    {"OLMo 2 1B", 18, 2048, 16, 16, 5632, 8, 1024, false, 55000, false},
    {"OLMo 2 1B FP8", 18, 2048, 16, 16, 5632, 8, 1024, true, 65000, false},
    {"OLMo 2 7B", 32, 4096, 32, 32, 11008, 2, 1024, false, 10000},
    {"OLMo 2 7B FP8", 32, 4096, 32, 32, 11008, 2, 1024, true, 13000},
    {"Llama 3 8B", 32, 4096, 32, 8, 14336, 2, 1024, false, 9500},
    {"Llama 3 8B FP8", 32, 4096, 32, 8, 14336, 2, 1024, true, 12500},
    {"OLMo 2 13B", 40, 5120, 40, 40, 13824, 1, 2048, false, 4600},
    {"OLMo 2 13B FP8", 40, 5120, 40, 40, 13824, 1, 2048, true, 5500},
};

model::Spec OlmoCoreSpec(const OlmoCoreRow& r) {
  const std::string yaml =
      "name: olmo-core\n" +
      DgxCluster(1, "H100-SXM5-80GB", "{type: nvlink4, bandwidth: 900 GB/s, switched: true}") +
      fmt::format(
          R"(workload:
  model: {{name: olmo-core, layers: {layers}, hidden: {hidden}, heads: {heads},
          kv_heads: {kv_heads}, ffn_hidden: {ffn}, mlp: swiglu, vocab: 100352, sequence: 4096,
          dropout: 0, qk_norm: {qk_norm}}}
  parallel: {{strategy: fsdp}}
  batch: {{micro: {mb}, global: {gbs}}}
  activation_checkpointing: none
  precision: {precision}
  software: {{stack: pytorch-fsdp2, cross_entropy: {loss}{fp8}}}
)",
          fmt::arg("layers", r.layers), fmt::arg("hidden", r.hidden), fmt::arg("heads", r.heads),
          fmt::arg("kv_heads", r.kv_heads), fmt::arg("ffn", r.ffn), fmt::arg("mb", r.micro_batch),
          fmt::arg("gbs", r.global_batch), fmt::arg("precision", r.fp8 ? "fp8" : "bf16"),
          fmt::arg("fp8", r.fp8 ? ", fp8_param_gather: true" : ""),
          fmt::arg("loss", r.triton_loss ? "fused-fp32" : "fused"),
          // OLMo 2's layers norm the whole query and key projections (TransformerConfig.olmo_*'s
          // qk_norm); OLMo-core's Llama 3 8B shape does not.
          fmt::arg("qk_norm", std::string_view(r.name).rfind("OLMo 2", 0) == 0));
  auto s = model::ParseSpec(yaml, "olmo-core.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

const NemoLongSequenceRow kNemoLongSequence[] = {
    {"H100 Llama2 7B 4K", "H100-SXM5-80GB", 4, 1, 1, 4, 1, 1024, 768, false},
    {"H100 Llama2 7B 8K", "H100-SXM5-80GB", 8, 1, 2, 4, 1, 512, 730},
    {"H100 Llama2 7B 16K", "H100-SXM5-80GB", 16, 2, 1, 8, 1, 256, 660},
    {"H100 Llama2 7B 32K", "H100-SXM5-80GB", 32, 2, 1, 8, 2, 128, 610},
    {"H100 Llama2 7B 64K", "H100-SXM5-80GB", 64, 4, 1, 8, 2, 64, 574},
    {"H100 Llama2 7B 128K", "H100-SXM5-80GB", 128, 4, 1, 8, 4, 32, 555},
    {"H100 Llama2 7B 256K", "H100-SXM5-80GB", 256, 4, 1, 8, 8, 16, 549},
    {"H100 Llama2 7B 512K", "H100-SXM5-80GB", 512, 8, 1, 4, 16, 8, 549},
    {"H100 Llama2 7B 1M", "H100-SXM5-80GB", 1024, 8, 1, 4, 32, 4, 536},
    {"B200 Llama3 8B 8K", "B200-SXM-180GB", 8, 1, 1, 2, 1, 512, 1671},
    {"B200 Llama3 8B 16K", "B200-SXM-180GB", 16, 1, 1, 4, 1, 256, 1717},
    {"B200 Llama3 8B 32K", "B200-SXM-180GB", 32, 1, 1, 4, 2, 128, 1624},
    {"B200 Llama3 8B 64K", "B200-SXM-180GB", 64, 1, 1, 4, 4, 64, 1600},
    {"B200 Llama3 8B 128K", "B200-SXM-180GB", 128, 2, 1, 4, 4, 32, 1588},
    {"B200 Llama3 8B 256K", "B200-SXM-180GB", 256, 4, 1, 4, 4, 16, 1590},
    {"B200 Llama3 8B 512K", "B200-SXM-180GB", 512, 4, 1, 4, 8, 8, 1619},
    {"B200 Llama3 8B 1M", "B200-SXM-180GB", 1024, 4, 1, 4, 16, 4, 1608},
};

namespace {
// Llama 2 7B (the H100 rows) or Llama 3 8B (the B200 rows).
bool Llama3(const NemoLongSequenceRow& r) { return std::string_view(r.gpu).rfind("B200", 0) == 0; }
}  // namespace

model::Spec NemoLongSequenceSpec(const NemoLongSequenceRow& r) {
  const bool llama3 = Llama3(r);
  const int gpus = r.tp * r.pp * r.dp * r.cp;
  const int per_node = std::min(gpus, 8);
  const std::string yaml =
      "name: nemo-long-sequence\n" +
      DgxCluster(gpus / per_node, r.gpu, ShapeOf(r.gpu, gpus).scale_up, per_node) +
      fmt::format(
          R"(workload:
  model: {{name: {name}, layers: 32, hidden: 4096, heads: 32, kv_heads: {kv}, ffn_hidden: {ffn},
          mlp: swiglu, vocab: {vocab}, sequence: {sequence}, dropout: 0}}
  precision: fp8
  parallel: {{strategy: zero1, tensor: {tp}, pipeline: {pp}, context: {cp},
             sequence_parallel: {sp}}}
  batch: {{micro: 1, global: {gbs}}}
  activation_checkpointing: none
  software: {{stack: {stack}, fp8_recipe: delayed, tp_comm_overlap: false{software}}}
)",
          fmt::arg("name", llama3 ? "llama3-8b" : "llama2-7b"), fmt::arg("kv", llama3 ? 8 : 32),
          fmt::arg("ffn", llama3 ? 14336 : 11008), fmt::arg("vocab", llama3 ? 128256 : 32000),
          fmt::arg("sequence", r.sequence_k * 1024), fmt::arg("tp", r.tp), fmt::arg("pp", r.pp),
          fmt::arg("cp", r.cp), fmt::arg("sp", r.tp > 1 ? "true" : "false"),
          fmt::arg("gbs", r.global_batch),
          // NeMo 24.03.01 (2024) runs Megatron-Core and Transformer Engine as the 2024 preset
          // describes, with FlashAttention-2 (its launcher turns cuDNN's attention off) and bf16
          // parameters; NeMo 25.04 as nemo-2025 (FP8 parameters) but for its delayed scaling.
          fmt::arg("stack", llama3 ? "nemo-2025" : "megatron-core-2024"),
          fmt::arg("software", llama3 ? "" : ", attention_kernel: mma-sync"));
  auto s = model::ParseSpec(yaml, "nemo-long-sequence.yaml");
  EXPECT_TRUE(s) << r.name << ": " << s.error().message;
  return *s;
}

double NemoLongSequenceTokensPerGpu(const NemoLongSequenceRow& r) {
  // NeMo's count is the model's full (non-causal) one of the spec's shape, norms aside.
  const model::ModelShape m = NemoLongSequenceSpec(r).workload.model;
  return r.tflops_per_gpu * 1e12 /
         plan::CountFlops(m, /*causal=*/false, model::Recompute::kNone).model;
}

std::vector<std::vector<Sample>> Sources() {
  std::vector<Sample> megatron, nemo;
  for (const auto& row : kMegatronRows) {
    const model::Spec spec = MegatronSpec(row);
    // TFLOP/s per GPU to tokens/s per GPU with the model's own FLOP count.
    auto r = AnalyticalStepModel().Step(spec, LayoutOf(spec), spec.cluster.nodes.TotalGpus());
    EXPECT_TRUE(r);
    const double flops_per_token =
        r->model_flops /
        (static_cast<double>(spec.workload.global_batch) * spec.workload.model.sequence);
    megatron.push_back({spec, row.tflops_per_gpu * 1e12 / flops_per_token,
                        fmt::format("Megatron-Core H100 {}", row.name)});
  }
  for (const auto& row : kNemoFp8) nemo.push_back({NemoSpec(row), row.tokens_per_gpu, row.name});
  for (const auto& row : kNemoSft) nemo.push_back({NemoSpec(row), row.tokens_per_gpu, row.name});
  for (const auto& row : kNemoLora) nemo.push_back({NemoSpec(row), row.tokens_per_gpu, row.name});
  for (const auto& row : kBridgeSftLayouts) {
    model::Spec spec = BridgeSftLayoutSpec(row);
    const double tokens = row.tflops_per_gpu * 1e12 / BridgeFlopsPerToken(spec);
    nemo.push_back({std::move(spec), tokens, fmt::format("H100 Llama3 70B SFT {}", row.name)});
  }
  std::vector<Sample> korthikanti;
  for (const auto& row : kKorthikanti) korthikanti.push_back(KorthikantiSample(row));
  std::vector<Sample> foundry;
  for (const auto& row : kFoundry) {
    foundry.push_back({FoundrySpec(row), row.tokens_per_gpu,
                       fmt::format("LLM Foundry {} {} on {}{}", GpuLabel(row), row.name, row.gpus,
                                   row.full_shard ? "" : " (ZeRO-2)")});
  }
  std::vector<Sample> moe;
  for (const auto& row : kMoe) {
    moe.push_back({MoeSpec(row), row.tokens_per_gpu,
                   fmt::format("{} {} on {}", row.gpu, row.name, row.gpus)});
  }
  const model::Spec bloom = BloomSpec();
  std::vector<Sample> bigscience = {
      {bloom, 2048.0 * 2048 / kBloomIterationS / bloom.cluster.nodes.TotalGpus(), "BLOOM-176B"}};
  std::vector<Sample> mtnlg;
  for (const auto& row : kMtNlg) {
    mtnlg.push_back({MtNlgSpec(row), 1920.0 * 2048 / row.iteration_s / (row.nodes * 8),
                     fmt::format("MT-NLG 530B on {} nodes", row.nodes)});
  }
  std::vector<Sample> fms;
  for (const auto& row : kFms) {
    fms.push_back({FmsSpec(row), row.tokens_per_gpu, fmt::format("fms-fsdp {}", row.name)});
  }
  std::vector<Sample> deepspeed = {
      {DeepSpeedAzureSpec(), DeepSpeedAzureTokensPerGpu(), "DeepSpeed ZeRO-3 GPT-3 175B"}};
  std::vector<Sample> mlperf;
  for (const auto& row : kMlperf) {
    mlperf.push_back(
        {MlperfSpec(row), MlperfTokensPerGpu(row), fmt::format("MLPerf {}", row.name)});
  }
  std::vector<Sample> olmo;
  for (const auto& row : kOlmoCore) {
    olmo.push_back({OlmoCoreSpec(row), row.tokens_per_gpu, fmt::format("OLMo-core {}", row.name)});
  }
  std::vector<Sample> long_sequence;
  for (const auto& row : kNemoLongSequence) {
    long_sequence.push_back({NemoLongSequenceSpec(row), NemoLongSequenceTokensPerGpu(row),
                             fmt::format("NeMo long sequence {}", row.name)});
  }
  std::vector<Sample> cards = {
      {BridgeCardQwen3Spec(), kBridgeCardQwen3TokensPerGpu, "Bridge card Qwen3 8B on 16 H100"}};
  for (const BridgeCardScalingPoint& p : kBridgeCardQwen3MoeScaling) {
    cards.push_back({BridgeCardQwen3MoeScalingSpec(p), p.tokens_per_gpu,
                     fmt::format("Bridge card Qwen3 30B-A3B on {} GB300", p.gpus)});
  }
  return {megatron, nemo,      korthikanti, foundry, moe,           bigscience, mtnlg,
          fms,      deepspeed, mlperf,      olmo,    long_sequence, cards};
}

std::vector<Sample> FoundrySweepAndFp8Samples() {
  std::vector<Sample> samples;
  for (const FoundryRow& row : kFoundrySweep) {
    if (InFoundryTable(row)) continue;
    samples.push_back(
        {FoundrySpec(row), row.tokens_per_gpu,
         fmt::format("LLM Foundry {} {} at {}", GpuLabel(row), row.name, row.sequence)});
  }
  for (const FoundryRow& row : kFoundryFp8) {
    samples.push_back({FoundrySpec(row), row.tokens_per_gpu,
                       fmt::format("LLM Foundry H100 FP8 {} at {}", row.name, row.sequence)});
  }
  return samples;
}

double Predicted(const AnalyticalStepModel& model, const Sample& x) {
  const int gpus = x.spec.cluster.nodes.TotalGpus();
  auto r = model.Step(x.spec, LayoutOf(x.spec), gpus);
  return r ? r->tokens_per_s / gpus : 0;
}

double LogErrorOf(double pred, double published) {
  return pred > 0 ? std::log(pred / published) : 10;
}

double ComputeSeconds(const AnalyticalStepModel& model, const model::Spec& spec, int gpus) {
  auto out = model.Step(spec, LayoutOf(spec), gpus);
  EXPECT_TRUE(out) << out.error().message;
  return out ? out->compute_s : 0.0;
}

double AttentionSeconds(const model::Spec& spec, int gpus) {
  Efficiency faster = Eff();
  faster.attention *= 2;
  return 2 * (ComputeSeconds(AnalyticalStepModel(FlopConvention::kMegatron, Eff()), spec, gpus) -
              ComputeSeconds(AnalyticalStepModel(FlopConvention::kMegatron, faster), spec, gpus));
}

}  // namespace gpufleet::sim::runs
