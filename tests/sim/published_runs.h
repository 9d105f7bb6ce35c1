#pragma once
// The published training runs the step model is judged on (docs/sim.md, "Calibration"): each
// source's rows as published and the spec of the system and job each row ran, shared by the sim
// tests (calibration_test.cc, foundry_test.cc, moe_test.cc, layout_test.cc, regime_test.cc,
// software_stack_test.cc). The rows are in published_runs.cc.

#include <string>
#include <string_view>
#include <vector>

#include "model/spec.h"
#include "sim/step.h"

namespace gpufleet::sim::runs {

inline constexpr double kGiB = 1024.0 * 1024 * 1024;

// GPUFLEET_SIM_EFF="half_flops,training,attention" overrides the constants
// (for refitting; see docs/sim.md).
Efficiency Eff();

// A DGX-style node: `per_node` GPUs, 8 NICs of one rail each on a non-blocking fat tree (NDR
// ConnectX-7 and QM9700 unless the caller names another generation, an Ethernet fabric or
// fewer NICs without rails).
std::string DgxCluster(int count, const std::string& gpu, const std::string& scale_up,
                       int per_node = 8, const std::string& nic = "ConnectX-7",
                       const std::string& speed = "400 Gb/s", const std::string& sw = "QM9700",
                       int nics = 8, const std::string& fabric = "infiniband",
                       bool rail_optimized = true);

struct MegatronRow {
  const char* name;
  int heads, hidden, layers, tp, pp, batch;
  double tflops_per_gpu;  // published, Megatron FLOP formula
};
// NVIDIA/Megatron-LM README (r0.8.0, images/model_table.png): DP 48 in every row,
// vocabulary 131,072, sequence 4,096.
extern const MegatronRow kMegatronRows[9];
// An H100 cluster (DGX H100: 8 GPUs on NVLink 4, 8 x 400 Gb/s NDR rails) running a
// GPT model with Megatron's distributed optimizer.
model::Spec MegatronSpec(int heads, int hidden, int layers, int tp, int pp, int dp, int batch);
// A row of the table as it ran: DP 48.
model::Spec MegatronSpec(const MegatronRow& row);

// Checked against, not fitted to (issue 13): NVIDIA Megatron Bridge performance summary, "25.11
// NeMo Container" pre-training table (docs/performance-summary.md of NVIDIA-NeMo/Megatron-Bridge),
// the seven Llama 3.1 405B rows of its "26.06 NeMo Container" section (the archive) and four
// Llama 3 70B rows of its "26.04.01" one, dense Llama 3 in FP8 with current scaling or MXFP8, or on
// GB200 and GB300 in NVFP4: FP8 (or FP4) only
// in the transformer layers' linear GEMMs, attention and the output layer in BF16 (the recipe's
// defaults; performance-guide.md). Sequence 8,192, micro-batch as printed; tokens/s per GPU.
struct NemoRow {
  const char* name;
  const char* gpu;
  int gpus, layers, hidden, heads, ffn, tp, pp, cp, vp, gbs, mbs;
  const char* strategy;
  double tokens_per_gpu;  // published
  double tolerance;
  // FP8-CS (current scaling) or, in the page's parentheses, FP8-MX (MXFP8; Blackwell), or NVFP4
  // ("nvfp4": precision fp4).
  const char* recipe = "current";
  // Layers whose activations the recipe offloads to host memory (cpu_offloading_num_layers).
  int offload = 0;
  // The memory model puts the run within the GPU, as it ran; false where it puts it over (by at
  // most 3 %: the GB200 rows at the edge, docs/sim.md).
  bool fits = true;
  int sequence = 8192;
  // Fine-tuning's packed sequences (model.document_length; 0 = pretraining's whole sequences).
  int document_length = 0;
  // Selective recompute of these Megatron-Core modules; none where null.
  const char* recompute_modules = nullptr;
  // LoRA's rank on linear_qkv, every base weight frozen (model.lora); 0 = every weight trained.
  int lora_rank = 0;
};
extern const NemoRow kNemoFp8[26];
model::Spec NemoSpec(const NemoRow& r);

// Megatron Bridge's SFT table (the 26.06 container, docs/performance-summary-archive.md):
// Llama 3 70B fine-tuned on SQuAD packed into sequences of 4,096 tokens (THD, attention masked
// at each example's boundary), 32 GPUs, GBS 32, micro-batch 1, no recompute; the layouts of
// Megatron Bridge v0.5.0's LLAMA3_70B_SFT_CONFIG_* (scripts/performance/configs/llama).
// kSquadDocumentTokens is the examples' length-weighted mean (docs/sim.md, "Fine-tuning").
inline constexpr int kSquadDocumentTokens = 256;
extern const NemoRow kNemoSft[5];

// The same page's LoRA table: Llama 3 70B fine-tuned with LoRA on the same packed SQuAD, 8 GPUs,
// GBS 32, micro-batch 1; Megatron Bridge v0.5.0's LLAMA3_70B_LORA_CONFIG_* layouts and
// llama3_70b_lora_config_*: rank 16 (alpha 32) on linear_qkv alone, TP overlap where TP > 1, CUDA
// graphs of the MLP on GB200 and GB300 (not modelled).
inline constexpr int kLoraRank = 16;
extern const NemoRow kNemoLora[5];

// Megatron Bridge's PR #3107 (its skills `nemo-mbridge-perf-memory-tuning` and
// `nemo-mbridge-perf-activation-recompute`, validated 2026-06-29 and 2026-08-12): the H100 SFT run
// of kNemoSft in five layouts, model TFLOP/s per GPU (Megatron Bridge's count of whole causal
// sequences, BridgeFlopsPerToken): TP4 PP4 VP5 recomputing the attention core, PP8 and TP8 (DP1),
// and recomputing the MLP, with and without the attention core.
struct BridgeSftLayoutRow {
  const char* name;
  int tp, pp;
  const char* recompute_modules;
  double tflops_per_gpu;  // published
};
extern const BridgeSftLayoutRow kBridgeSftLayouts[5];
model::Spec BridgeSftLayoutSpec(const BridgeSftLayoutRow& r);
// Megatron Bridge v0.5.0's model FLOPs a token (flop_utils: causal, over the whole sequence: its
// count of the packed documents' sum(d^2) came and went before 26.06).
double BridgeFlopsPerToken(const model::Spec& spec);

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
extern const KorthikantiRow kKorthikanti[8];
model::Spec KorthikantiSpec(const KorthikantiRow& r, std::string_view stack = "megatron-core-2024");

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
extern const FoundryRow kFoundry[85];
// The same tables at other sequence lengths: every 8-GPU row without checkpointing of the models
// that have one at most lengths (A100 125M to 3B, H100 760M to 3B), about the same tokens per
// micro-batch at each length. They show attention's cost, which grows with the sequence.
extern const FoundryRow kFoundrySweep[62];
// The H100 80 GB FP8 table (Transformer Engine v0.10 linear layers under delayed scaling, 8 GPUs),
// and the BF16 table's checkpointed 3B row at 32,768 tokens, twin of one of them.
extern const FoundryRow kFoundryFp8[7];
extern const FoundryRow kFoundryBf16CheckpointedTwin;
model::Spec FoundrySpec(const FoundryRow& r);
// The same configuration of the same model on the same GPUs: the same run when the published
// numbers agree too (a sweep row that is also a 2,048-token row), a twin at another precision.
bool SameRun(const FoundryRow& a, const FoundryRow& b);
// Whether a sweep row is also a row of kFoundry: the same run with the same published number.
bool InFoundryTable(const FoundryRow& sweep_row);
// "A100", "A100-40" (the 40 GB table) or "H100", for the printouts.
std::string GpuLabel(const FoundryRow& r);

// Checked against, not fitted to (issue 13): mixture-of-experts rows of NVIDIA's Megatron
// Bridge performance summary, "26.04.01 NeMo Container", on five Blackwell layouts "26.06 NeMo
// Container", and B300's 235B on the all-to-all "26.04 NeMo Container"
// (docs/performance-summary-archive.md of NVIDIA-NeMo/Megatron-Bridge): Qwen3
// 30B-A3B and 235B-A22B (128 experts, top 8, no shared expert, head size 128), sequence 4,096,
// token-dropless with the tokens forced to balance, FP8 on H100 and MXFP8 (here fp8) on B200,
// distributed optimizer, tokens/s per GPU. 235B has 94 layers: uneven stages (12 on the largest of
// PP8). GPT-OSS 120B (head size 64, a window of 128 keys on half its layers) on the recipes the
// spec can state, beside them (kMoe's comment). DeepSeek-V3 (multi-head latent attention) is not
// checked: its attention is not modelled.
struct MoeRow {
  const char* name;
  const char* gpu;
  int gpus, layers, hidden, heads, kv_heads, vocab, experts, top_k, expert_ffn;
  int gbs, mbs, tp, pp, vp, ep;
  bool tp_overlap;        // the recipe's CommOverlapConfig(tp_comm_overlap=...)
  double tokens_per_gpu;  // published
  // The recipe's dispatcher (qwen3_workload_base_configs.py; the performance harness sets the
  // all-to-all where a recipe names no flex backend): HybridEP sends a token once per rank and
  // node holding its experts, NCCL's all-to-all once per expert, and sorts what it receives.
  const char* dispatcher = "alltoall";
  const char* precision = "fp8";  // FP8 current scaling on Hopper, MXFP8 on Blackwell
  // The recipe's overlap_moe_expert_parallel_comm (Megatron Bridge's moe_a2a_overlap).
  bool ep_overlap = false;
  // The recipe's fp8_dot_product_attention.
  bool fp8_attention = false;
  // The recipe's cutedsl_fused_grouped_mlp (Transformer Engine's fused grouped MLP).
  bool fused_grouped_mlp = false;
  int head_dim = 128;
  // GPT-OSS's sliding window (128 keys on 18 of its 36 layers); 0 = none (Qwen3).
  int sliding_window = 0;
  int windowed_layers = 0;
  // The recipe's recompute_modules with selective recompute ("layernorm, moe_act"); none where
  // null.
  const char* recompute_modules = nullptr;
  // The recipe's account_for_embedding/loss_in_pipeline_split (Megatron Bridge's MoE recipes set
  // both, GPT-OSS's neither).
  bool pipeline_split = true;
};
extern const MoeRow kMoe[28];
// The row of kMoe named `name` (on `gpu`, where given; else the first of that name); a test
// failure where none is.
const MoeRow& MoeRowNamed(std::string_view name, std::string_view gpu = {});
model::Spec MoeSpec(const MoeRow& r);

// Checked against, not fitted to (issue 13): BigScience's BLOOM-176B run on Jean Zay
// (bigscience-workshop/bigscience train/tr11-176B-ml: README, slurm script and chronicles):
// 48 nodes of 8 A100 80 GB with NVLink and 4 Omni-Path 100 Gb/s links each (RDMA, modelled as
// InfiniBand at 100 Gb/s), Megatron-DeepSpeed with its bf16 ZeRO-1 and fp32 gradient
// accumulation, TP4 PP12 DP8, micro-batch 2, global batch 2,048 of 2,048 tokens, 70 layers of
// hidden 14,336 and 112 heads, vocabulary 250,880 (tied embeddings), full recompute, fused
// softmax (no flash attention): "elapsed time per iteration (s): 105.22" (chronicles, 2022-03-18).
model::Spec BloomSpec();
inline constexpr double kBloomIterationS = 105.22;

// Checked against, not fitted to (issue 13): MLPerf Training's pretraining benchmarks as NVIDIA and
// its partners ran them (mlcommons/training_results_v3.1, _v4.0, _v4.1, _v5.0 and _v5.1): GPT-3
// 175B on H100 (Eos; Azure's ND H100 v5 in v3.1; Oracle's OCI on RoCE in v4.1) in FP8 with delayed
// scaling; v5.0's Llama 3.1 405B on GB200 NVL72 (NVIDIA's and IBM's, CoreWeave's and NVIDIA's) and
// on Eos's H100s in FP8 with delayed scaling; v5.1's Llama 3.1 8B on GB200 and GB300 NVL72 in FP8
// with per-tensor current scaling ("tensorwise"; trays of 4 GPUs with a ConnectX-7 each, GB300's
// ConnectX-8 written as one) and on Cisco's H100s on RoCE with delayed scaling; v5.1's 405B on
// GB200 and GB300 in NVFP4. All NeMo on
// Megatron-Core with Transformer Engine: the distributed optimizer with overlapped bf16 gradient
// reduction and parameter gathers, sequence parallelism with TP, no recompute, dropout 0, FP8
// parameters from v4.0 on (not the NVFP4 runs); what the model does not have: CUDA graphs (v4.0's
// largest runs, v5.0 on GB200, NVIDIA's v5.1). Step times: GPT-3, the median of (block_stop -
// block_start) / steps over result_0.txt's blocks after the first; Llama 3.1, the median of
// result_0.txt's train_step_time after its first 10 steps. The global batch is the logged one.
struct MlperfRow {
  const char* name;
  const char* benchmark;  // "gpt3", "llama31_405b", "llama31_8b"
  const char* gpu;
  int gpus, tp, pp, vp, cp, micro_batch, global_batch;
  double step_s;  // measured
  // Oracle's and Cisco's RoCE v2: the Ethernet switch it runs on; nullptr = InfiniBand NDR
  // (QM9700) with rails.
  const char* roce_switch = nullptr;
  // The FP8 recipe where the run's differs from its benchmark's (GPT-3 and 405B delayed, NVIDIA's
  // 8B current): Cisco's 8B keeps custom.yaml's delayed.
  const char* fp8_recipe = nullptr;
  // FP8 parameters (`fp8_param_gather`): v4.0's and v4.1's GPT-3 config_common.sh (FP8_PARAMS,
  // NVIDIA's and Oracle's), v5.0's 405B (FP8_PARAMS on Eos, FP8_PARAM_GATHER on GB200), v5.1's 8B
  // (FP8_PARAM_GATHER; Cisco's FP8_PARAMS); v3.1's GPT-3 configs set neither.
  bool fp8_params = true;
  // OVERLAP_PARAM_GATHER_WITH_OPTIM_STEP: v5.0's and v5.1's config_common.sh sets it; NVIDIA's
  // 8B turns it off again (config_common_8b.sh), its 405B on GB200 with CUDA graphs
  // (config_common_cg.sh), and Eos's 405B leaves custom.yaml's False; Cisco's 8B, with
  // config_common.sh alone, runs it. GPT-3 (v3.1-v4.1) ran NeMo 1 with Apex's distributed Adam
  // (conf/optim/distributed_fused_adam.yaml), whose overlap_param_sync gathers bucket by bucket
  // ahead of the forward and has no such option.
  bool param_gather_with_optimizer_step = false;
  // FP8 attention (FP8_DPA, config_common_fp8attn.sh): HPE's 8B; NVIDIA's FP8 8B configs and the
  // University of Florida's and Oracle's 64-GPU ones leave it off.
  bool fp8_attention = false;
  // TP communication overlap (TP_COMM_OVERLAP, custom.yaml's ub_tp_comm_overlap): every config
  // with TP > 1 sets it but the University of Florida's 405B ones, which comment it out, and
  // NVIDIA's v5.1 405B NVFP4 ones, which set it False.
  bool tp_comm_overlap = true;
  // NVFP4 (FP4=True, FP4_RECIPE=nvfp4: v5.1's 405B and single-node 8B configs,
  // config_common_fp4.sh): precision fp4, no FP8 recipe or parameters (the 8B's FP8 attention
  // stated beside it).
  bool nvfp4 = false;
};
extern const MlperfRow kMlperf[53];
// The row of that name (a test failure, and the first row, when there is none).
const MlperfRow& MlperfRowNamed(std::string_view name);
model::Spec MlperfSpec(const MlperfRow& r);
double MlperfTokensPerGpu(const MlperfRow& r);

// Checked against, not fitted to (issue 13): DeepSpeed's ZeRO-3 on Azure, the DeepSpeed blog of
// 2022-07-26 ("Azure empowers easy-to-use, high-performance, and hyperscale model training using
// DeepSpeed", deepspeedai/DeepSpeed docs/_posts/2022-07-26-deepspeed-azure.md): GPT-3 175B (96
// layers, hidden 12,288, 96 heads) with no tensor or pipeline parallelism on 256 A100 80 GB of
// NDm A100 v4 VMs (8 GPUs each, each GPU with its own 200 Gb/s HDR InfiniBand), fp16,
// micro-batch 32 of 512 tokens, no accumulation: "the peak throughput of 204.49 TFLOPs/GPU was
// achieved on 256 GPUs with a micro batch size of 32 and sequence length of 512", counted with
// Megatron's 96 B s l h^2 (1 + s/6h + V/16lh), which includes the recomputed forward. Its recipe
// (deepspeedai/Megatron-DeepSpeed examples_deepspeed/azure/run-175b.sh): ZeRO stage 3 with
// overlap_comm, no offload, --checkpoint-activations, GPT-2's vocabulary (Megatron pads 50,257 to
// 50,304) with the output layer tied to it, Megatron's fused softmax (no flash attention) and its
// vocab-parallel loss, where the stack's default is a Hugging Face model's.
model::Spec DeepSpeedAzureSpec();
inline constexpr double kDeepSpeedAzureTflopsPerGpu = 204.49;
// The blog's TFLOP/s per GPU as tokens/s per GPU, by the blog's own formula.
double DeepSpeedAzureTokensPerGpu();

// Checked against, not fitted to (issue 13): Megatron Bridge's model verification cards
// (NVIDIA-NeMo/Megatron-Bridge examples/model_verification_cards/*/card.yaml, collected at
// 067f987d, 2026-08-22), which publish each verified training run's command, Bridge commit and
// last-10-step means (step time, model TFLOP/s and tokens/s per GPU) as "sanity checks, not
// optimized performance results". Judged: Qwen3 8B's pre-training on 16 H100s (qwen3-8b's
// `pretrain`, 2026-07-21, Bridge 619cc20b: qwen3_8b_pretrain_16gpu_h100_bf16_config, TP1 PP1
// DP16, micro-batch 1 of 4,096 tokens, global batch 1,024, BF16 with bf16 gradient reduction,
// the distributed optimizer with its overlaps, TE's fused loss, no recompute, no CUDA graphs):
// 25.070 s a step, 10,456.348 tokens/s per GPU (its `checkpoint_resume` run of the same recipe,
// 10,487.602). Not judged, each for a stated reason (docs/sim.md): the MoE cards' natural routing
// (the model times balanced routing) and the fine-tuning cards' steps, whose time a micro-batch
// does not follow the GPU's work.
model::Spec BridgeCardQwen3Spec();
inline constexpr double kBridgeCardQwen3TokensPerGpu = 10456.348;
// The fine-tuning cards' runs (not judged; Bridge f3ae2767): Tulu 3 packed into 2,048-token
// sequences (the cards give the packing's efficiency, not its documents' lengths: 1,000 tokens
// are taken), 32 micro-batches of one a step, TP without sequence parallelism on `gpus` H100s of
// one node, full SFT or LoRA of rank 8 on QKV and the attention projection.
model::Spec BridgeCardQwen3FineTuningSpec(int gpus, int tp, bool lora);
// Judged too: qwen3-30b-a3b's `pretrain_weak_scaling` on GB300 (2026-08-15, Bridge fbb7570c: the
// 26.06 performance recipe, qwen3_30b_a3b_pretrain_8gpu_gb300_fp8mx_config, forced balance,
// whole-iteration CUDA graphs) at 32, 128 and 256 GPUs, the global batch 64 sequences a GPU.
// Its 8-GPU point (44,511.004) is the row "Qwen3 30B-A3B 26.06" on GB300 run again, not judged
// twice.
struct BridgeCardScalingPoint {
  int gpus;
  double tokens_per_gpu;
};
inline constexpr BridgeCardScalingPoint kBridgeCardQwen3MoeScaling[] = {
    {32, 45086.158}, {128, 44951.404}, {256, 45052.607}};
model::Spec BridgeCardQwen3MoeScalingSpec(const BridgeCardScalingPoint& p);

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
extern const MtNlgRow kMtNlg[3];
model::Spec MtNlgSpec(const MtNlgRow& r);

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
extern const TitanRow kTitan[10];
model::Spec TitanSpec(const TitanRow& r);

// Checked against, not fitted to (issue 13): IBM's fms-fsdp (foundation-model-stack/fms-fsdp
// README.md at 4ffb9bd, March 2024, the table before torch.compile): Llama 2 70B and 34B (Code
// Llama 34B's shape) pre-trained with PyTorch FSDP1 FULL_SHARD, the bf16 MixedPrecision policy
// (parameters and reductions in bf16), scaled_dot_product_attention, full activation
// checkpointing, PyTorch's cross_entropy, 2 sequences of 4,096 per GPU a step, "on 128 A100 GPUs
// as well as 96 H100 GPUs ... the exact same scripts and configurations": the A100s "with
// 400Gbps", the H100s "with 800 Gbps", read per node (AWS p4de's four 100 Gb/s EFA adapters is
// the A100 machine that rate describes; the repository's train.sh sets EFA's variables): 4 and 8
// x 100 Gb/s. Its 7B row shards inside a node (HSDP: `shard: 8`) without checkpointing; its 13B
// row's "Selective AC" (no value given) is read as every other block, selective_checkpointing 2
// (its HFU over MFU, 0.59/0.51 on A100, is what recomputing half the blocks gives): 20 of its 40
// layers. The A100 rows come first, then the H100 rows in the same order.
struct FmsRow {
  const char* name;
  const char* gpu;
  int gpus, layers, hidden, heads, kv_heads, ffn;
  int shard;              // 0: FULL_SHARD over every GPU; 8: HYBRID_SHARD in a node
  const char* recompute;  // activation_checkpointing
  int recompute_layers;   // activation_checkpointing_layers (0: all)
  double tokens_per_gpu;  // published
};
extern const FmsRow kFms[8];
model::Spec FmsSpec(const FmsRow& r);

// Checked against, not fitted to (issue 13): AI2's OLMo-core (allenai/OLMo-core README.md,
// "Official training scripts", as it stood from e27ba7455, 2024-11-05, to 2025-03-12): tokens per
// second per H100 of its official scripts, OLMo 2 ("OLMo-1124") 1B, 7B and 13B and a Llama 3 8B
// shape, BF16 and with torchao's Float8 linear layers, each number as the commit that set it ran
// it (the 1B's at e27ba7455, micro-batch 8; the 7B's and the 13B's BF16 at 8c03ca8a2, the 7B's FP8
// too; the 13B's FP8 at 310866e45; the 8B's at 41400c46f): FSDP2 (fully_shard per block, bf16
// parameters, fp32 gradient reduction, reduce-scatter every micro-batch), torch.compile per block
// (which also turns flash-attn off: scaled_dot_product_attention), no activation checkpointing, a
// Triton (OLMo-core's own) or compiled cross-entropy with z-loss (cross_entropy: fused; the Triton
// one reads the logits in fp32: docs/sim.md), sequences of 4,096, the dolma2 tokenizer's vocabulary
// padded to 100,352, untied; Float8Config's defaults: dynamic (current) tensorwise scaling of
// input, weight and gradient, the output layer left in BF16, and enable_fsdp_float8_all_gather (FP8
// parameters gathered). The table gives no GPU count; its launch commands (at 8c03ca8a2) name none,
// and the launcher's default is one node of 8 GPUs, which the specs take.
struct OlmoCoreRow {
  const char* name;
  int layers, hidden, heads, kv_heads, ffn;
  int micro_batch;   // sequences per GPU per micro-batch (rank_microbatch_size / 4,096)
  int global_batch;  // sequences per step
  bool fp8;
  double tokens_per_gpu;  // published
  // The trainer's loss: fused_loss, OLMo-core's Triton cross-entropy on the fp32 logits the model
  // returns (cross_entropy: fused-fp32; the 7B, 8B and 13B scripts), or compile_loss, the
  // compiled one (fused; the 1B's).
  bool triton_loss = true;
};
extern const OlmoCoreRow kOlmoCore[8];
model::Spec OlmoCoreSpec(const OlmoCoreRow& r);

// Checked against, not fitted to (issue 13): NVIDIA NeMo's long-sequence page
// (NVIDIA/NeMo docs/source/performance/performance_long_sequence.md): pre-training in FP8 at
// sequences of 4K to 1M tokens with context parallelism, model TFLOP/s per GPU by NeMo's count
// (NemoLongSequenceTokensPerGpu). Llama 2 7B on DGX H100 in the NeMo 24.03.01 container (the
// "With CP" layouts, 2024-10; their global batches from 9ee5c56f43, 2025-05), Llama 3 8B on DGX
// B200 in NeMo 25.04.rc2 (2025-04; the layouts of the page's first B200 table, 252fa890d8, whose
// GPU count is TP x CP x DP: the table that replaced it, 19fadb67b0, prints the sequence's length
// in thousands there, 4x the layout's product, which cannot hold 512K's and 1M's global batches
// of 8 and 4 sequences). Micro-batch 1, the distributed optimizer, sequence parallelism with TP,
// no TP communication overlap and no recomputation (every layout but the H100 4K one fits without
// it by the memory model). The H100 rows as NeMo's launcher of that container runs jobs (read, not
// stated) (NVIDIA/NeMo-Framework-Launcher, tag 24.03.01): cuDNN's fused attention turned off for
// every run (launcher_scripts/conf/config.yaml, NVTE_FUSED_ATTN: 0, "Disable cudnn FA until we've
// tested it more"), so Transformer Engine ran FlashAttention-2 (attention_kernel: mma-sync);
// llama2_7b.yaml's ub_tp_comm_overlap false and no fp8_params (FP8 with delayed scaling, bf16
// parameters). The B200 rows as NeMo 25.04's performance recipes: llama3_8b turns TP overlap off,
// the scripts default to delayed scaling and bf16_with_fp8_mixed sets fp8_param_gather.
struct NemoLongSequenceRow {
  const char* name;
  const char* gpu;
  int sequence_k;  // thousands of tokens (x 1,024)
  int tp, pp, dp, cp;
  int global_batch;       // sequences
  double tflops_per_gpu;  // published, NeMo's count
  // The memory model puts the run within its GPU; false where it puts it over (the H100 4K
  // layout, 1 %: docs/sim.md).
  bool fits = true;
};
extern const NemoLongSequenceRow kNemoLongSequence[17];
model::Spec NemoLongSequenceSpec(const NemoLongSequenceRow& r);
// NeMo's Llama FLOP count (nemo/utils/flops_formulas.py, llama2 and llama3): per token, 3 passes,
// L h^2 (12 + 12 g/a + 18 f/h + 12 s/h + 6 V/(L h)), attention over the whole square; term for
// term the model's own full count of the row's shape (plan::CountFlops, not causal), which it
// calls.
double NemoLongSequenceTokensPerGpu(const NemoLongSequenceRow& r);

// A published run as the cross-validation and the regime's quotes see it.
struct Sample {
  model::Spec spec;
  double published;        // tokens/s per GPU
  std::string label = {};  // the run, for the printouts: "H100 Llama3.1 405B"
};
// A Korthikanti row as tokens/s per GPU, on `stack`.
Sample KorthikantiSample(const KorthikantiRow& row, std::string_view stack = "megatron-core-2024");
// Every source the constants are fitted on, one list each, in LeaveOneSourceOut's order: the
// Megatron-Core table (as tokens/s with the model's own FLOP count), NeMo 25.11 FP8, Korthikanti
// 2022, LLM Foundry's 2,048-token tables, Megatron Bridge MoE, BLOOM-176B, MT-NLG 530B, IBM's
// fms-fsdp, DeepSpeed on Azure, MLPerf Training, AI2's OLMo-core and NeMo's long-sequence page.
std::vector<std::vector<Sample>> Sources();
// The LLM Foundry rows checked beside Sources() but not refitted: the sequence sweeps' rows that
// are not also rows of its main tables (InFoundryTable), then the FP8 table.
std::vector<Sample> FoundrySweepAndFp8Samples();
// One sample's prediction, tokens/s per GPU (0 when the model refuses the layout).
double Predicted(const AnalyticalStepModel& model, const Sample& x);
// The log error of a prediction against its published value (10 for a refused layout).
double LogErrorOf(double pred, double published);
// The compute time (forward and backward, with recomputation) of `spec`'s step on its own layout,
// failing the test where the step does not run.
double ComputeSeconds(const AnalyticalStepModel& model, const model::Spec& spec, int gpus);
// The attention's share of that compute time with the shipped constants (Eff()): what halves when
// the attention rate doubles.
double AttentionSeconds(const model::Spec& spec, int gpus);

}  // namespace gpufleet::sim::runs