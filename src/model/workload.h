#pragma once
// The workload half of a spec: model shape, precision, parallel layout, batch,
// recomputation, data and checkpoint policy. Plain structs; built by LoadSpec().

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/catalog.h"

namespace gpufleet::model {

enum class Strategy { kDdp, kZero1, kZero2, kZero3, kFsdp };
std::string_view StrategyName(Strategy s);

enum class Recompute { kNone, kSelective, kFull };
std::string_view RecomputeName(Recompute r);

// The MLP's activation: GELU on one input projection, or gated on two (a gate and an up
// projection): SwiGLU (silu(gate) * up), or GPT-OSS's gated quick-GELU (gate * sigmoid(1.702
// gate) * (up + 1); Megatron-Core's quick_gelu with glu_linear_offset 1).
enum class Mlp { kGelu, kSwiglu, kQuickGeglu };

// Scaling of rotary position embeddings beyond their trained length: none, or YaRN (Peng et al.
// 2023, arXiv 2309.00071; GPT-OSS's rope_scaling), whose attention factor (0.1 ln s + 1 for a
// scale s > 1) multiplies the rotation's sine and cosine.
enum class RopeScaling { kNone, kYarn };

// The attention kernel (workload.software.attention_kernel): one written for the GPU's own
// instructions (cuDNN, FlashAttention-3 on Hopper, FlashAttention-2 on Ampere), one written for
// Ampere's warp-level MMA (mma.sync: FlashAttention 1/2 on Hopper), or the 2022 Triton flash
// attention (flash_attn_triton.py, LLM Foundry v0.3's `attn_impl: triton`), also mma.sync, with
// its own measured rate.
enum class AttentionKernel { kNative, kMmaSync, kTriton2022 };

// The layers' memory-bound kernels (workload.software.elementwise): fused as Megatron-Core and
// Transformer Engine (or torch.compile) run them, or PyTorch eager, one kernel per operation,
// with RMSNorm and rotary embeddings computed on fp32 copies (ibm-fms's LLaMA, which IBM's
// fms-fsdp trains; Hugging Face's LlamaRMSNorm upcasts the same way).
enum class Elementwise { kFused, kEager };

// The data-parallel sharding implementation a stack runs (from workload.software.stack): what it
// moves through HBM per micro-batch outside its collectives (the step model's sharding copies).
// Megatron's distributed optimizer accumulates gradients in its fp32 buffer inside the weight-
// gradient GEMM and reduces once per step; PyTorch FSDP1 (FlatParameter), FSDP2 (per-parameter
// DTensor) and DeepSpeed ZeRO cast, divide and copy gradients and parameters per micro-batch.
enum class ShardingImpl { kMegatron, kFsdp1, kFsdp2, kDeepSpeed };

// PyTorch FSDP (1 and 2) runs ZeRO-2 as SHARD_GRAD_OP: per unit, gathering each unit again in
// every micro-batch's forward, where Megatron and DeepSpeed gather once a step. The step model
// and the plan's traffic view both ask this.
inline bool Zero2GathersPerMicroBatch(ShardingImpl s) {
  return s == ShardingImpl::kFsdp1 || s == ShardingImpl::kFsdp2;
}

// How FP8 GEMM operands are scaled (workload.software.fp8_recipe), which decides the casts that
// Transformer Engine runs beside the GEMMs: per-tensor delayed scaling (the scale from the amax
// history), per-tensor current scaling (an amax pass first) and MXFP8 (1 x 32 blocks, Blackwell).
enum class Fp8Recipe { kDelayed, kCurrent, kMxfp8 };

// Mixture of experts (workload.model.moe): each MoE layer's MLP is `experts` expert MLPs of
// `ffn_hidden`, of which a router sends each token to `top_k`, plus `shared_experts` that every
// token goes through; the first `dense_layers` layers keep the dense MLP (DeepSeek-V3: 3).
struct Moe {
  int experts = 0;  // 0: a dense model
  int top_k = 0;
  int ffn_hidden = 0;
  int shared_experts = 0;
  int dense_layers = 0;
  // Tokens an expert takes, over the balanced share (GShard's capacity factor); 0 = dropless.
  // Expert compute is padded to it.
  double capacity_factor = 0;
  // The expert copies a token's compute and activations count: top_k, padded to the capacity.
  double PaddedTopK() const { return top_k * std::max(1.0, capacity_factor); }
  // Group-limited routing (DeepSeek-V3's node-limited routing; Megatron-Core's
  // moe_router_num_groups and moe_router_group_topk): the experts are `groups` consecutive
  // groups, and a token's top_k experts come from `group_top_k` of them (0: all of them). 1 and
  // 0: no limit.
  int groups = 1;
  int group_top_k = 0;
  // How the router assigns tokens (model.moe.routing): balanced, every expert its share, as
  // benchmarks force it (Megatron-Core's moe_router_force_load_balancing, which every published
  // MoE run the model is judged on sets), or natural, the router's own choice, which loads some
  // experts and ranks more than others: the step model times balanced routing alone.
  bool natural_routing = false;
};

// When the distributed optimizer gathers the first model chunk's parameters after its optimizer
// step (software.overlap_param_gather_with_optimizer_step).
enum class OptimizerStepGather { kNever, kAlways, kWithVirtualStages };

// LoRA (workload.model.lora; Hu et al. 2021, arXiv 2106.09685): every base weight frozen, the
// embedding and the output layer too (Megatron Bridge's PEFT, Hugging Face PEFT), and beside each
// named linear layer of every transformer layer a trained low-rank pair, A (in x rank) and B
// (rank x out), in BF16. Megatron-Core's names: linear_qkv, linear_proj, linear_fc1, linear_fc2
// (Megatron Bridge's LoRA targets all four by default, dim 32).
struct Lora {
  int rank = 0;  // 0: no adapters, every weight trained
  bool qkv = true, proj = true, fc1 = true, fc2 = true;
  bool Enabled() const { return rank > 0; }
  bool operator==(const Lora&) const = default;
  // The adapted layers in Megatron-Core's names and order.
  std::vector<std::string_view> Names() const {
    std::vector<std::string_view> names;
    if (qkv) names.emplace_back("linear_qkv");
    if (proj) names.emplace_back("linear_proj");
    if (fc1) names.emplace_back("linear_fc1");
    if (fc2) names.emplace_back("linear_fc2");
    return names;
  }
};

struct ModelShape {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;    // = heads without GQA
  int ffn_hidden = 0;  // 4 x hidden for GPT-style MLPs
  int head_dim = 0;    // per attention head; hidden / heads unless the model says otherwise
  // Sliding-window attention (GPT-OSS, Gemma, Mistral): `sliding_window` keys a query attends
  // to, itself included, on `sliding_window_layers` of the layers (spread through the stack, as
  // GPT-OSS alternates them; 0 = all of them); the others attend to the whole causal prefix.
  // sliding_window 0 = none.
  int sliding_window = 0;
  int sliding_window_layers = 0;
  // Packed sequences (Megatron's THD packing with cu_seqlens, Llama 3's document mask): documents
  // of `document_length` tokens, the length-weighted mean sum(d^2)/sum(d), packed into each
  // sequence with attention masked at their boundaries, so a causal query meets the keys of its
  // own document only. 0 = one document fills the sequence.
  int document_length = 0;
  // QK-norm (OLMo 2, Qwen3, Gemma 3): a norm on each layer's queries and keys before attention
  // (over each head, or the whole projection): element-wise work and a saved input beside them.
  bool qk_norm = false;
  Lora lora;  // low-rank adapters over a frozen model; rank 0 trains every weight
  Mlp mlp = Mlp::kGelu;
  // GPT-OSS's clamp of the gated MLP's inputs before its activation (the gate at most this, the up
  // projection within +-this; Hugging Face's swiglu_limit, Megatron-Core's
  // activation_func_clamp_value); 0 = none.
  double activation_clamp = 0;
  // Biases on the linear layers (Megatron-Core's add_bias_linear; GPT-OSS's attention, router and
  // experts): a bias vector beside each weight.
  bool linear_bias = false;
  RopeScaling rope_scaling = RopeScaling::kNone;
  Moe moe;
  int vocab = 0;
  int sequence = 0;
  bool tied_embeddings = false;
  double dropout = 0.1;      // hidden and attention dropout (Megatron-LM's default); 0 = none
  double stated_params = 0;  // "parameters:" in the spec, checked against the shape

  bool IsMoe() const { return moe.experts > 0; }
  int MoeLayers() const { return IsMoe() ? layers - moe.dense_layers : 0; }
  int HeadDim() const { return head_dim > 0 ? head_dim : hidden / heads; }
  int WindowedLayers() const {
    if (sliding_window <= 0) return 0;
    return sliding_window_layers > 0 ? sliding_window_layers : layers;
  }
  // The tokens a query's attention can span: its document's where sequences are packed.
  double AttentionSpan() const {
    return document_length > 0 ? std::min(document_length, sequence) : sequence;
  }
  double QueryWidth() const { return static_cast<double>(heads) * HeadDim(); }
  double KvWidth() const { return static_cast<double>(kv_heads) * HeadDim(); }
  // The MLP's input projections, each hidden x ffn_hidden: SwiGLU's gate and up, GELU's up.
  bool GatedMlp() const { return mlp != Mlp::kGelu; }
  double MlpInputProjections() const { return GatedMlp() ? 2 : 1; }
  // The share of the layers with a mixture of experts, and of those with a dense MLP.
  double MoeShare() const { return static_cast<double>(MoeLayers()) / layers; }
  double DenseShare() const { return 1 - MoeShare(); }
  // A linear layer's GEMM passes: forward, the input's gradient and the weight's; LoRA's frozen
  // weights skip the weight's (Transformer Engine runs no wgrad GEMM for a weight that needs no
  // gradient).
  double LinearPasses() const { return lora.Enabled() ? 2 : 3; }
  // LoRA's adapted linear layers, each with its A (in x rank) and B (rank x out) and the layers it
  // sits in: attention's in every layer, the MLP's in the dense ones (the spec refuses the
  // experts'). Empty without LoRA.
  struct AdaptedLinear {
    double in = 0, out = 0;
    int layers = 0;
  };
  std::vector<AdaptedLinear> AdaptedLinears() const {
    std::vector<AdaptedLinear> a;
    if (!lora.Enabled()) return a;
    const int dense_layers = layers - MoeLayers();
    if (lora.qkv) a.push_back({double(hidden), QueryWidth() + 2 * KvWidth(), layers});
    if (lora.proj) a.push_back({QueryWidth(), double(hidden), layers});
    if (lora.fc1) a.push_back({double(hidden), MlpInputProjections() * ffn_hidden, dense_layers});
    if (lora.fc2) a.push_back({double(ffn_hidden), double(hidden), dense_layers});
    return a;
  }
};

// Megatron-Core's account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split:
// the embedding, the loss (the output layer and the cross-entropy), each taking a layer's place
// in the pipeline split (PipelineStageLayers).
struct PipelineSplit {
  bool embedding = false;
  bool loss = false;
  int Counted() const { return (embedding ? 1 : 0) + (loss ? 1 : 0); }  // slots beside the layers
};

struct Workload {
  ModelShape model;
  Precision precision = Precision::kBf16;
  Strategy strategy = Strategy::kFsdp;
  int tensor = 1;
  int pipeline = 1;
  int context = 1;
  int virtual_stages = 1;  // interleaved 1F1B chunks per pipeline rank
  // The embedding and the loss counted as a layer each in the pipeline split
  // (workload.parallel.embedding_in_pipeline_split, loss_in_pipeline_split).
  PipelineSplit pipeline_split;
  int expert = 1;  // expert parallel: ranks of the data-parallel group the experts split over
  // Hybrid sharding (workload.parallel.shard): the DP x CP ranks one shard group spans, the
  // parameters, gradients and optimizer states sharded over them and replicated across the
  // groups (PyTorch FSDP's HYBRID_SHARD, torchtitan's data_parallel_shard_degree); 0 = the whole
  // group (plain FSDP / ZeRO-3).
  int shard = 0;
  bool sequence_parallel = false;
  int micro_batch = 1;
  int accumulation = 1;
  int global_batch = 0;  // sequences; derived when not given
  Recompute recompute = Recompute::kNone;
  // With full recompute, the layers of each pipeline stage recomputed (activation_checkpointing_
  // layers: Megatron's recompute_num_layers with the block method, fms-fsdp's every k-th block);
  // the others keep their activations. 0 = all of them.
  int recompute_layers = 0;
  // With selective recompute, what it re-runs (activation_checkpointing_modules: Megatron-Core's
  // recompute_modules, whose default is the attention core alone). Each module's output is
  // dropped after its forward and rebuilt in backward from the input its neighbours keep anyway.
  struct RecomputeModules {
    bool core_attn = true;  // the attention core (its scores, without flash attention)
    // The norm before a MoE layer (Transformer Engine's GPT layers fuse the other norms into the
    // next linear, where Megatron-Core has none to recompute): its output, the router's input.
    bool layernorm = false;
    bool mlp = false;      // a dense layer's MLP whole, from the norm's input
    bool moe_act = false;  // the routed experts' activation: the second expert GEMM's input
    bool operator==(const RecomputeModules&) const = default;
    // Megatron-Core's names of the modules listed, in its order.
    std::vector<std::string_view> Names() const {
      std::vector<std::string_view> names;
      if (core_attn) names.emplace_back("core_attn");
      if (moe_act) names.emplace_back("moe_act");
      if (layernorm) names.emplace_back("layernorm");
      if (mlp) names.emplace_back("mlp");
      return names;
    }
  };
  RecomputeModules recompute_modules;
  // Activations of this many layers kept in host memory between their forward and backward
  // (Megatron-Core's cpu_offloading_num_layers, Transformer Engine's CPU offload): layers 0..n-1
  // of the model, copied out while the later layers run forward and back while they run backward.
  int activation_offload = 0;
  bool flash_attention = true;
  // The software stack (workload.software): its generation's communication behaviour, which
  // the step time follows. `stack` names the preset the words below default from.
  std::string stack = "megatron-core-2024";
  // Megatron-Core's own stacks, on Transformer Engine: FP8 parameters, FP8 attention, NVFP4, the
  // gather after the optimizer step and TE's asynchronous dgrad collectives are theirs alone.
  bool RunsMegatronCore() const { return stack == "megatron-core-2024" || stack == "nemo-2025"; }
  // Megatron-Core's per-expert path clamps a quick-GeGLU's inputs in PyTorch eager before its
  // fused activation (the fused grouped MLP takes the clamp into its own op): what the step
  // model's eager bytes and the memory model's clamped copy both follow.
  bool ClampsExpertsInEager() const {
    return RunsMegatronCore() && !moe_fused_grouped_mlp && model.IsMoe() &&
           model.mlp == Mlp::kQuickGeglu && model.activation_clamp > 0;
  }
  bool tp_comm_overlap = true;  // TP collectives overlapped with GEMMs (Megatron-Core + TE)
  bool dp_comm_overlap = true;  // DP reduce-scatter / all-gather overlapped with compute
  // Interleaved pipeline sends overlapped with the next chunk's compute (Megatron-Core's
  // overlap_p2p_comm); plain 1F1B waits for its sends whatever this says.
  bool pp_comm_overlap = true;
  double grad_reduce_bytes = 2;  // bytes per gradient in the DP reduction (bf16 2, fp32 4)
  // Kernels written for Ampere's warp-level MMA (mma.sync) run on Hopper at that instruction's
  // share of the tensor peak; the 2022 Triton kernel at its own rate, measured on A100, times
  // what such kernels gain from A100 to H100.
  AttentionKernel attention_kernel = AttentionKernel::kNative;
  Elementwise elementwise = Elementwise::kFused;
  ShardingImpl sharding_impl = ShardingImpl::kMegatron;  // from the stack, not a word
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;            // with precision fp8
  // FP8 parameters (software.fp8_param_gather: Megatron-Core's --fp8-param-gather, NeMo's
  // fp8_params, Transformer Engine's fp8_model_init; with precision fp4 NVFP4 parameters,
  // --fp4-param-gather, Megatron Bridge's fp4_param_gather): the transformer layers' linear weights
  // are stored quantized (plan::TeQuantizedWeightBytes), the optimizer's fp32 master copy cast to
  // them after each step, with no bf16 copy beside them; per-tensor scaling's data-parallel gather
  // moves 1 byte per linear parameter instead of bf16's 2.
  // As the spec asks for them (stated, or the stack's preset); Fp8ParamsFor says where a layout
  // runs them.
  bool fp8_param_gather = false;
  // Whether a layout with `layout`'s strategy keeps FP8 (or FP4) parameters: a sharded optimizer
  // gathers them, and MXFP8's and NVFP4's are modelled with the distributed optimizer alone. The
  // spec refuses them stated elsewhere; the preset's, and a search's or the plan's other
  // strategies, go without them there.
  // On FSDP2 (torchao's float8 all-gather) they are the per-unit gathers of a fully sharded
  // layout, per-tensor scaled; the shards stay fp32.
  bool Fp8ParamsFor(Strategy layout) const {
    if (!fp8_param_gather || !NarrowPrecision() || layout == Strategy::kDdp) return false;
    const bool fully_sharded = layout == Strategy::kFsdp || layout == Strategy::kZero3;
    if (sharding_impl == ShardingImpl::kFsdp2) return fully_sharded && !BlockScaled();
    return !(BlockScaled() && fully_sharded);
  }
  // An FP8 or FP4 (NVFP4) recipe: Transformer Engine quantizes the linear layers' GEMMs.
  bool NarrowPrecision() const {
    return precision == Precision::kFp8 || precision == Precision::kFp4;
  }
  // Block-scaled quantization: NVFP4, or FP8 under MXFP8 (both layouts stored apart).
  bool BlockScaled() const {
    return precision == Precision::kFp4 || fp8_recipe == Fp8Recipe::kMxfp8;
  }
  // Bytes a linear weight takes in the data-parallel parameter gather of a layout with `layout`'s
  // strategy: bf16's 2; with FP8 parameters per-tensor scaling's 1, NVFP4's row-wise 4 bits and an
  // E4M3 scale a 16-element block (its column-wise copy is transposed from it after the gather:
  // Transformer Engine's post_all_gather_processing); MXFP8's parameters are gathered in bf16
  // through the gradient buffer (Megatron-Core's reuse_grad_buf_for_mxfp8_param_ag) and quantized
  // again after it.
  double GatheredLinearWeightBytes(Strategy layout) const {
    if (!Fp8ParamsFor(layout)) return 2;
    if (precision == Precision::kFp4) return 0.5 + 1.0 / 16;
    return fp8_recipe == Fp8Recipe::kMxfp8 ? 2 : 1;
  }
  // FP8 attention (software.fp8_attention: Transformer Engine's fp8_dot_product_attention,
  // Megatron-Core's --fp8-dot-product-attention, MLPerf's FP8_DPA): the fused (cuDNN) attention
  // kernel takes FP8 inputs, per-tensor scaled or, under MXFP8, block-scaled, forward and
  // backward. Off by default everywhere: Transformer Engine's recipes keep attention in BF16.
  bool fp8_attention = false;
  // Megatron-Core's overlap_param_gather_with_optimizer_step (software.
  // overlap_param_gather_with_optimizer_step; NeMo's comm-overlap callback, MLPerf's
  // OVERLAP_PARAM_GATHER_WITH_OPTIM_STEP): the distributed optimizer dispatches the first model
  // chunk's whole parameter all-gather after that chunk's optimizer step, to run beside the other
  // chunks' steps, instead of bucket by bucket ahead of the forward; without virtual stages
  // nothing runs beside it and the forward waits for all of it. Stated, on or off for every
  // layout; by nemo-2025's preset, on where the layout has virtual stages (Megatron Bridge's
  // performance scripts), except with MXFP8.
  OptimizerStepGather optimizer_step_gather = OptimizerStepGather::kNever;
  // On a layout of strategy `layout` with `chunks` virtual stages: the distributed optimizer's
  // (zero1), with its gathers overlapped.
  bool GathersAfterOptimizerStep(Strategy layout, int chunks) const {
    if (layout != Strategy::kZero1 || !dp_comm_overlap) return false;
    return optimizer_step_gather == OptimizerStepGather::kAlways ||
           (optimizer_step_gather == OptimizerStepGather::kWithVirtualStages && chunks > 1);
  }
  // The MoE token dispatcher (software.moe_dispatcher): Megatron-Core's all-to-all over NCCL,
  // one copy per routed expert, sorted by local expert after it arrives and back before the
  // combine; or its flex dispatcher (HybridEP, DeepEP), which sends a token once to each rank
  // holding any of its experts (once to each other node, fanned out over NVLink there) and
  // expands it into the experts' copies on arrival.
  bool moe_dedup = false;
  // Megatron-Core's EP communication overlap (software.moe_comm_overlap; the config's
  // overlap_moe_expert_parallel_comm): the steady 1F1B runs one micro-batch's forward beside
  // another's backward, layer by layer, each one's dispatch and combine on a communication
  // stream beside the other's attention and expert compute.
  bool moe_comm_overlap = false;
  // How the routed experts' GEMMs run (software.moe_expert_gemm): Transformer Engine's
  // GroupedLinear launches one cuBLAS GEMM per local expert, round-robin over its compute streams
  // (nvte_multi_tensor_gemm's cuBLAS path: every GPU but Hopper with CUTLASS asked for), each
  // paying its own launch, prologue and tail; its fused grouped MLP (te.ops, Megatron Bridge's
  // cutedsl_fused_grouped_mlp: cuDNN's grouped GEMM with the SwiGLU and the quantize in its
  // epilogue, Blackwell with MXFP8 or NVFP4) runs all of a rank's experts as one kernel.
  bool moe_fused_grouped_mlp = false;
  // Bytes per output logit the loss holds at its backward (software.cross_entropy):
  // vocab-parallel (Megatron: fp32 softmax, gradient in place) 4, fused 2, fused-fp32 (a fused
  // kernel on fp32 logits: them and their gradient) 8, unfused 12.
  double bytes_per_logit = 4;
  // Bytes of HBM traffic per output logit per micro-batch, forward and backward, for the loss and
  // the training metrics computed beside it: memory-bound work over s b V / t logits, which no
  // per-layer constant covers (docs/sim.md, "The loss and the training metrics"). Counted from
  // the kernels: vocab-parallel 52, fused 8, fused-fp32 44, unfused 48; Composer's training
  // metrics 28 more (16 under its amp_fp8).
  double loss_traffic_per_logit = 52;
  // Bytes per output logit the training metrics allocate while they run, after each
  // micro-batch's backward, beside the bf16 logits the trainer keeps for them: a metric's
  // cross-entropy holds log_softmax's bf16 output and, under autocast, nll_loss's fp32 copy of
  // it (6); under Composer's amp_fp8, no autocast, the bf16 output alone (2); 0 without them.
  double metrics_bytes_per_logit = 0;
  // With sequence parallelism, what the column-parallel layers (QKV, the MLP's input
  // projections, the output layer) save for backward (software.sp_saved_input): the
  // sequence-sharded input, which Megatron gathers again in backward (Korthikanti et al. 2022
  // §4.2.2), or the gathered one, which PyTorch's DTensor tensor parallelism keeps (autograd
  // saves the matmul's input, the all-gather's output).
  bool sp_saves_gathered_input = false;
  // The software words the spec sets against its stack's defaults ("tp_comm_overlap false"):
  // the step is then extrapolated from the stack's published runs, and the regime names them.
  std::vector<std::string> software_departures;
  bool causal_attention_flops = false;  // count attention FLOPs as causal (Megatron HEAD) or full
  double bytes_per_token = 2;           // dataset bytes per training token (uint16 ids = 2)
  double bytes_per_sample = 0;          // overrides bytes_per_token x sequence when set
  double checkpoint_interval_s = 3600;
  bool checkpoint_async = true;
  std::string checkpoint_tier;       // a storage tier name
  int keep_checkpoints = 2;          // copies kept on the hot tier
  double mfu = 0.45;                 // model FLOPs utilisation of the compute phases
  bool mfu_stated = false;           // the spec says `mfu:` (else 0.45, for the traffic view)
  double memory_reserved_bytes = 0;  // CUDA context, NCCL buffers, workspaces
  double fragmentation = 0.10;       // allocator overhead over live tensors
  double train_tokens = 0;           // 0 = not given

  int ModelParallel() const { return tensor * pipeline * context; }
};

// The recomputation a layout runs, in words: its name, and with selective recompute of other
// modules than the attention core alone (Megatron-Core's default) the modules, "selective
// (moe_act, layernorm)".
std::string RecomputeLabel(Recompute r, const Workload::RecomputeModules& modules);

// The transformer layers of the pipeline ranks (Megatron-Core's get_num_layers_to_build).
// Without the embedding or the loss counted in the split, the largest stage holds ceil(L/pp)
// layers, taken to be the last, beside the output layer (uneven stages when pp does not divide
// L: Megatron-Core's --decoder-first/last-pipeline-num-layers). With them counted
// (account_for_embedding_in_pipeline_split, account_for_loss_in_pipeline_split), L + e + l
// slots split evenly over the ranks, and the first rank holds the embedding in place of a layer,
// the last the output layer and the loss: pp 8 over Llama 3.1 405B's 126 layers is 16 a middle
// rank, 15 the first and the last.
struct StageLayerCounts {
  int most = 0;   // the rank with the most
  int last = 0;   // the last rank, which also runs the output layer and the loss
  int first = 0;  // the first rank, which also holds the embedding
  int slots = 0;  // a rank's share of the split: its layers with the embedding or loss counted
};
inline StageLayerCounts PipelineStageLayers(int layers, int pipeline, PipelineSplit split) {
  if (pipeline <= 1) return {layers, layers, layers, layers};
  const int per_rank = (layers + split.Counted() + pipeline - 1) / pipeline;
  if (split.Counted() == 0) return {per_rank, per_rank, per_rank, per_rank};
  const int first = per_rank - (split.embedding ? 1 : 0);
  const int last = per_rank - (split.loss ? 1 : 0);
  return {pipeline > 2 ? per_rank : std::max(first, last), last, first, per_rank};
}
// Of the model's first `dense` layers (moe.dense_layers: a mixture of experts' dense layers come
// first), those pipeline rank `rank` builds. The L + e + l slots of the split fall into pp x v
// chunks in order, chunk j of rank r the (j pp + r)-th (Megatron-Core's layer offsets: the
// interleaved schedule's chunk j of every rank after chunk j - 1 of all), the embedding in slot 0
// where the split counts it; where the chunks are uneven (no split, pp x v not dividing L) their
// boundaries are spread over the slots, so that the ranks' counts always add up to `dense`.
inline int DenseLayersOnRank(int layers, int dense, int pipeline, int virtual_stages,
                             PipelineSplit split, int rank) {
  if (dense <= 0) return 0;
  if (pipeline <= 1) return std::min(dense, layers);
  const long chunks = static_cast<long>(pipeline) * std::max(1, virtual_stages);
  const long slots = layers + split.Counted();
  const int e = split.embedding ? 1 : 0;
  int n = 0;
  for (long k = rank; k < chunks; k += pipeline) {
    const long begin = k * slots / chunks - e, end = (k + 1) * slots / chunks - e;
    n += static_cast<int>(std::max(0L, std::min<long>(end, dense) - std::max(begin, 0L)));
  }
  return n;
}

// Whether Megatron-Core accepts the split (its TransformerConfig checks): with the embedding or
// the loss counted, the L + e + l slots divide over pp and each rank's over the virtual stages,
// and (the model's own limit) every rank keeps a layer; without, at least one layer a chunk (the
// stages may be uneven).
inline bool PipelineSplitFits(int layers, int pipeline, int virtual_stages, PipelineSplit split) {
  const int slots = layers + split.Counted();
  if (slots == layers || pipeline == 1) return layers >= pipeline * virtual_stages;
  // A rank left only the embedding or the loss (slots == pp), which Megatron-Core builds, is
  // refused here: the step model runs each rank's transformer layers.
  return slots % pipeline == 0 && slots / pipeline >= 2 && slots / pipeline % virtual_stages == 0;
}
// Whether `virtual_stages` chunks split every rank's share evenly (Megatron-Core's rule for the
// interleaved schedule without hand-set first and last stages: the L + e + l slots divide over
// the pipeline and each rank's over the chunks); stricter than PipelineSplitFits, which lets
// uneven stages through.
inline bool InterleavingEven(int layers, int pipeline, int virtual_stages, PipelineSplit split) {
  const int slots = layers + split.Counted();
  return slots % pipeline == 0 && slots / pipeline % virtual_stages == 0 &&
         PipelineSplitFits(layers, pipeline, virtual_stages, split);
}
// Whether Megatron-Core runs an interleaved schedule (virtual_stages > 1) with this many
// micro-batches a step: it takes them in groups of at least the pipeline's size and refuses
// fewer (schedules.py: the group must lie in [PP, M]). Plain 1F1B runs with any.
inline bool InterleavingRuns(int virtual_stages, int pipeline, int micro_batches) {
  return virtual_stages <= 1 || micro_batches >= pipeline;
}
// The largest pipeline stage's layers (and their share of the model's).
inline int StageLayers(int layers, int pipeline, PipelineSplit split = {}) {
  return PipelineStageLayers(layers, pipeline, split).most;
}
inline double StageShare(int layers, int pipeline, PipelineSplit split = {}) {
  return static_cast<double>(StageLayers(layers, pipeline, split)) / layers;
}

// The layers of a stage of `stage_layers` that full recompute re-runs whole: `recompute_layers`
// of them (0: all); none without full recompute.
inline int RecomputedLayers(Recompute r, int recompute_layers, int stage_layers) {
  if (r != Recompute::kFull) return 0;
  return recompute_layers > 0 && recompute_layers < stage_layers ? recompute_layers : stage_layers;
}
inline double RecomputedShare(Recompute r, int recompute_layers, int stage_layers) {
  return stage_layers > 0
             ? static_cast<double>(RecomputedLayers(r, recompute_layers, stage_layers)) /
                   stage_layers
             : 0;
}

// The ranks the model states are sharded over: the shard group with hybrid sharding, else all
// DP x CP ranks.
inline int ShardGroup(int shard, int data_x_context) {
  return shard > 0 && shard < data_x_context ? shard : data_x_context;
}
// Whether a hybrid shard group of `shard` fits DP x CP ranks placed `tensor` apart on scale-up
// domains of `domain` GPUs: it divides the ranks, and it either fits in a domain's share of them
// (domain / tensor) evenly or spans whole domains, so that no group straddles a boundary.
inline bool ShardGroupFits(int shard, int data_x_context, int tensor, int domain) {
  if (shard <= 0 || shard >= data_x_context) return shard >= 0;
  const int per_domain = std::max(1, domain / tensor);
  return data_x_context % shard == 0 && (shard % per_domain == 0 || per_domain % shard == 0);
}
// The same for a strategy: only fsdp and zero3 shard in groups; the others over every rank.
inline int StateShardRanks(Strategy s, int shard, int data_x_context) {
  return s == Strategy::kFsdp || s == Strategy::kZero3 ? ShardGroup(shard, data_x_context)
                                                       : data_x_context;
}

// Expert tensor parallelism (Megatron-Core's expert_tensor_parallel_size): the experts keep the
// layout's TP when the expert-parallel ranks fit in data x context parallel, and are not split
// (ETP 1) when EP spans the TP ranks too.
inline int ExpertTensor(int tensor, int data_x_context, int expert) {
  return data_x_context % expert == 0 ? tensor : 1;
}

// Whether `expert` expert-parallel ranks fit the layout: they divide the experts, and come out
// of data x context parallel, or of data x context x tensor with expert TP 1.
inline bool ExpertParallelFits(int experts, int expert, int tensor, int data_x_context) {
  return experts % expert == 0 && (static_cast<int64_t>(data_x_context) * tensor) % expert == 0 &&
         (data_x_context % expert == 0 || expert % tensor == 0);
}

// The expert-data-parallel group: the ranks that hold the same experts and reduce their
// gradients (and shard their optimizer states), DP x CP x TP / (EP x ETP).
inline int ExpertDataParallel(int tensor, int data_x_context, int expert) {
  const int etp = ExpertTensor(tensor, data_x_context, expert);
  return std::max(1, data_x_context * tensor / (expert * etp));
}

// Whether a hybrid shard group holds whole expert-parallel groups (EP x ETP ranks of its
// shard x TP), as torchtitan's HSDP mesh takes EP from dp_shard x cp: the experts are then
// sharded inside each group and replicated across the groups like the dense parameters.
inline bool ExpertsFitShardGroup(int shard, int tensor, int data_x_context, int expert) {
  if (shard <= 0 || shard >= data_x_context || expert <= 1) return true;
  const int etp = ExpertTensor(tensor, data_x_context, expert);
  return (static_cast<int64_t>(shard) * tensor) % (static_cast<int64_t>(expert) * etp) == 0;
}

// The ranks the routed experts' states are sharded over: their expert-data-parallel group, and
// with hybrid sharding (fsdp, zero3 with a shard group) its share of one shard group, the groups
// replicas of each other as the dense parameters' are (torchtitan shards the experts of each
// replica over dp_shard x cp / EP ranks; Megatron-FSDP over the expert-data-parallel group).
inline int ExpertStateShardRanks(Strategy s, int shard, int tensor, int data_x_context,
                                 int expert) {
  const int replicas = data_x_context / StateShardRanks(s, shard, data_x_context);
  return std::max(1, ExpertDataParallel(tensor, data_x_context, expert) / replicas);
}

}  // namespace gpufleet::model
