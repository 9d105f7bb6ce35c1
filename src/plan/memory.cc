#include "plan/memory.h"

#include <algorithm>

namespace gpufleet::plan {

using model::Recompute;
using model::Strategy;

ParamCounts CountParams(const model::ModelShape& m) {
  const double h = m.hidden;
  // Attention: Q and output projections h x (heads x head size) each, K and V h x (KV heads x
  // head size) each (hidden = heads x head size unless the model says otherwise).
  const double attention = 2 * h * m.QueryWidth() + 2 * h * m.KvWidth();
  // MLP: GELU has up and down (2hf); SwiGLU has gate, up and down (3hf).
  auto mlp = [&](double f) { return (m.MlpInputProjections() + 1) * h * f; };
  const double norms = 2 * h;  // two RMSNorm/LayerNorm weight vectors
  // With linear biases (model.linear_bias) a vector beside each weight, its output's width: Q, K
  // and V's and the output projection's, the MLP's input projections' and its output's, the
  // router's; none in the GEMMs' FLOPs.
  const double bias = m.linear_bias ? 1 : 0;
  const double attention_bias = bias * (m.QueryWidth() + 2 * m.KvWidth() + h);
  auto mlp_bias = [&](double f) { return bias * (m.MlpInputProjections() * f + h); };
  ParamCounts p;
  p.layer_linear = attention + mlp(m.ffn_hidden);
  p.per_layer = p.layer_linear + norms + attention_bias + mlp_bias(m.ffn_hidden);
  p.embedding = static_cast<double>(m.vocab) * h;
  p.output = m.tied_embeddings ? 0 : p.embedding;
  const int moe_layers = m.MoeLayers();
  const int dense_layers = m.layers - moe_layers;
  p.active_matmul = dense_layers * (attention + mlp(m.ffn_hidden));
  p.linear = p.active_matmul;
  if (m.IsMoe()) {
    const double expert = mlp(m.moe.ffn_hidden);
    const double router = h * m.moe.experts;
    const double expert_bias = mlp_bias(m.moe.ffn_hidden);
    p.moe_layer_linear = attention + (m.moe.experts + m.moe.shared_experts) * expert;
    p.moe_layer = p.moe_layer_linear + router + norms + attention_bias + bias * m.moe.experts +
                  (m.moe.experts + m.moe.shared_experts) * expert_bias;
    p.expert_biases = moe_layers * m.moe.experts * expert_bias;
    p.experts = moe_layers * m.moe.experts * expert + p.expert_biases;
    p.active_matmul +=
        moe_layers * (attention + router + (m.moe.top_k + m.moe.shared_experts) * expert);
    p.linear += moe_layers * (attention + m.moe.shared_experts * expert);
  }
  // LoRA's A and B beside each adapted linear layer: rank x (in + out).
  for (const auto& a : m.AdaptedLinears()) p.adapters += m.lora.rank * (a.in + a.out) * a.layers;
  p.total = dense_layers * p.per_layer + moe_layers * p.moe_layer + p.embedding + p.output +
            h;  // + final norm
  p.largest_unit = std::max({dense_layers > 0 ? p.per_layer : 0.0, p.moe_layer, p.embedding});
  auto mlp_in = [&](double f) { return m.MlpInputProjections() * h * f; };
  p.largest_module =
      std::max({p.embedding, h * (m.QueryWidth() + 2 * m.KvWidth()),
                dense_layers > 0 ? mlp_in(m.ffn_hidden) : 0.0,
                m.IsMoe() ? std::max(mlp_in(m.moe.ffn_hidden), h * m.moe.experts) : 0.0});
  return p;
}

ModelStates ModelStateBytes(Strategy s, double params, int dp) {
  // ZeRO paper §3.1: 2 B bf16 weights + 2 B bf16 grads + K = 12 B optimizer
  // (fp32 master 4 + Adam m 4 + v 4). Which of them are divided by dp is the stage.
  const double n = dp;
  ModelStates st;
  switch (s) {
    case Strategy::kDdp:
      st = {2 * params, 2 * params, 12 * params};
      break;
    case Strategy::kZero1:
      st = {2 * params, 2 * params, 12 * params / n};
      break;
    case Strategy::kZero2:
      st = {2 * params, 2 * params / n, 12 * params / n};
      break;
    case Strategy::kZero3:
    case Strategy::kFsdp:
      st = {2 * params / n, 2 * params / n, 12 * params / n};
      break;
  }
  return st;
}

double GradientBufferBytes(const model::Workload& w, Strategy s) {
  const bool whole = s == Strategy::kDdp || s == Strategy::kZero1;
  return whole && w.sharding_impl == model::ShardingImpl::kMegatron ? w.grad_reduce_bytes : 2;
}

RankLayers LayersOnPipelineRank(const model::ModelShape& m, int pipeline, int virtual_stages,
                                model::PipelineSplit split, int rank) {
  const model::StageLayerCounts stages = model::PipelineStageLayers(m.layers, pipeline, split);
  RankLayers r;
  r.first = rank == 0;
  r.last = rank == pipeline - 1;
  r.layers = r.first ? stages.first : r.last ? stages.last : stages.most;
  r.dense = m.IsMoe() ? std::min(r.layers,
                                 model::DenseLayersOnRank(m.layers, m.moe.dense_layers, pipeline,
                                                          virtual_stages, split, rank))
                      : r.layers;
  return r;
}

StageParams ParamsOnPipelineRank(const ParamCounts& pc, const model::ModelShape& m, int tensor,
                                 int data_x_context, int expert, const RankLayers& rank) {
  const double t = tensor;
  const int etp = model::ExpertTensor(tensor, data_x_context, expert);
  // The rank's layers, each a dense layer's parameters or a MoE layer's (its routed experts apart):
  // a mixture of experts' dense layers come first, so the first rank holds them, not an average.
  const int moe = m.IsMoe() ? rank.layers - rank.dense : 0;
  const int dense_layers = rank.layers - moe;
  const double layer_experts = m.IsMoe() ? pc.experts / m.MoeLayers() : 0;
  StageParams s;
  double dense = dense_layers * pc.per_layer + moe * (pc.moe_layer - layer_experts);
  if (rank.first) dense += pc.embedding;
  if (rank.last) {
    // Tied weights across pipeline stages: Megatron builds the output layer's copy of the word
    // embedding on the last stage (share_embeddings_and_output_weights; its gradient all-reduced
    // with the first stage's), with its own gradient and optimizer states.
    dense += (pc.output > 0 || rank.first ? pc.output : pc.embedding) + m.hidden;
  }
  s.local.dense = dense / t;
  s.local.experts = moe * layer_experts / (static_cast<double>(etp) * expert);
  // The linear weights among the dense ones: a dense layer's, and a MoE layer's attention and
  // shared experts.
  s.local.dense_linear =
      (dense_layers * pc.layer_linear +
       moe * (pc.moe_layer_linear - (m.IsMoe() ? pc.LayerExpertWeights(m.MoeLayers()) : 0))) /
      t;
  // LoRA's adapters sit beside the layers' linear weights: the rank's layers' share of them.
  const double share = static_cast<double>(rank.layers) / m.layers;
  s.trained = pc.adapters > 0 ? LocalParams{pc.adapters * share / t, 0, 0} : s.local;
  return s;
}

double LayerActivationBytes(const ActivationInputs& a) {
  const double sbh = a.sequence * a.micro_batch * a.hidden;
  const double t = a.tensor;
  // Korthikanti Table 2 writes 34 = 10 (LayerNorms, dropout masks, QKV input) + 24
  // (tensor-parallel parts: 8 of attention's, 16 of a 4h GELU MLP's); Megatron-LM
  // theoretical_memory_usage.py generalises 34 to 18 + 4 f/h, which counts K and V as wide as
  // Q and a gated MLP's two input projections as one. The tensor-parallel parts here are the
  // layer's own (attention_split, mlp_split): Llama 3 70B's 4.5 + 21 where 18 + 4 f/h says 8 + 14.
  // Without dropout (Llama, Qwen, MPT train with none) the two masks after the attention and
  // the MLP, one byte per element each, are not kept: 2 of the 10.
  // Selective recompute's modules beyond the attention core drop their outputs.
  const bool selective = a.recompute == Recompute::kSelective;
  const double dropped_replicated = selective ? a.dropped_replicated : 0;
  const double dropped_split = selective ? a.dropped_split : 0;
  // Outside the tensor-parallel region: the two norms' inputs (2 each), the QKV projection's and
  // the MLP's input (the norms' outputs: gemm_input_bytes, mlp_input_bytes) and the dropout masks
  // (1 each).
  const double base_replicated = 4 + a.gemm_input_bytes + a.mlp_input_bytes + (a.dropout ? 2 : 0);
  const double attention =
      selective && a.recompute_core_attn ? a.attention_split_recomputed : a.attention_split;
  const double c = base_replicated + attention + a.mlp_split - dropped_replicated - dropped_split -
                   a.frozen_replicated - a.frozen_split;
  // 5 a s / h: the s x s attention scores, softmax and dropout. FlashAttention
  // (or selective recompute of the attention core) does not store them.
  const bool keep_scores = !a.flash_attention && !(selective && a.recompute_core_attn) &&
                           a.recompute != Recompute::kFull;
  // Without dropout only the softmax output (2 of the 5) is kept: no mask, no dropped copy.
  const double scores = keep_scores ? (a.dropout ? 5 : 2) * a.heads * a.sequence / a.hidden : 0;
  // LayerNorm inputs, QKV input, dropout masks
  const double replicated = base_replicated - dropped_replicated - a.frozen_replicated;
  if (a.sequence_parallel && a.tensor > 1) {  // TP + SP
    // The QKV input and the MLP's input (2 bytes each, within c) are sequence-sharded, unless
    // the framework keeps them gathered for backward (PyTorch DTensor: whole sequence).
    const double gathered = a.sp_gathered_input ? 4 * sbh * (1 - 1 / t) : 0;
    return sbh / t * (c + scores) + gathered + a.adapter_gathered * sbh;
  }
  return sbh * (replicated + (c - replicated) / t + scores / t);  // TP only
}

SelectiveDrops SelectiveRecomputeDrops(const model::ModelShape& m,
                                       const model::Workload::RecomputeModules& mods,
                                       double gemm_input_bytes, std::optional<double> dense_share) {
  SelectiveDrops d;
  const double moe_share = 1 - dense_share.value_or(m.DenseShare());
  const double h = m.hidden, g = gemm_input_bytes;
  if (mods.layernorm) d.replicated += 2 * moe_share;
  if (mods.moe_act) d.split += g * m.moe.PaddedTopK() * m.moe.ffn_hidden / h * moe_share;
  if (mods.mlp) {
    d.replicated += g * (1 - moe_share);
    d.split += (2 * m.MlpInputProjections() + g) * m.ffn_hidden / h * (1 - moe_share);
  }
  return d;
}

SelectiveDrops FrozenInputDrops(const model::ModelShape& m, bool flash_attention,
                                bool mlp_recomputed, double gemm_input_bytes,
                                std::optional<double> rank_dense_share) {
  SelectiveDrops d;
  if (!m.lora.Enabled()) return d;
  const double dense_share = rank_dense_share.value_or(m.DenseShare()), g = gemm_input_bytes;
  if (!m.lora.qkv) d.replicated += g;
  // The output projection's input is the attention's output, which flash attention keeps for
  // its own backward in BF16: what the frozen projection does not save is its own copy, the
  // whole tensor without flash attention, the FP8 one beside it with.
  const double proj = !flash_attention ? 2 : g < 2 ? g : 0;
  if (!m.lora.proj) d.split += proj * m.QueryWidth() / m.hidden;
  if (!mlp_recomputed) {
    if (!m.lora.fc1) d.replicated += g * dense_share;
    if (!m.lora.fc2) d.split += g * m.ffn_hidden / m.hidden * dense_share;
  }
  return d;
}

StageParams ParamsOnTailPipelineRank(const ParamCounts& pc, const model::ModelShape& m, int tensor,
                                     int pipeline, int virtual_stages, model::PipelineSplit split,
                                     int data_x_context, int expert) {
  auto on = [&](int rank) {
    return ParamsOnPipelineRank(pc, m, tensor, data_x_context, expert,
                                LayersOnPipelineRank(m, pipeline, virtual_stages, split, rank));
  };
  StageParams tail = on(0);
  if (pipeline == 1 || !m.IsMoe() || m.moe.dense_layers == 0) return tail;
  for (int rank = 1; rank < pipeline - 1; ++rank) {
    if (const StageParams p = on(rank); p.trained.Total() > tail.trained.Total()) tail = p;
  }
  return tail;
}

std::string_view PipelineRankName(PipelineRank r) {
  switch (r) {
    case PipelineRank::kFirst:
      return "first";
    case PipelineRank::kSecond:
      return "second";
    case PipelineRank::kMiddle:
      return "middle";
    case PipelineRank::kLast:
      return "last";
  }
  return "first";
}

std::vector<PipelineRank> PeakCandidates(const ActivationInputs& a) {
  if (a.pipeline == 1) return {PipelineRank::kFirst};
  const int first = a.first_stage_layers > 0 ? a.first_stage_layers : a.layers_per_stage;
  // The second rank, a layer more than the first with one micro-batch fewer in flight, can
  // hold more where the embedding takes the first rank's slot; else the first holds more.
  if (first < a.layers_per_stage && a.pipeline > 2) {
    return {PipelineRank::kFirst, PipelineRank::kSecond, PipelineRank::kLast};
  }
  return {PipelineRank::kFirst, PipelineRank::kLast};
}

double ActivationBytes(const ActivationInputs& a) {
  double peak = 0;
  for (PipelineRank r : PeakCandidates(a)) peak = std::max(peak, ActivationBytesOnRank(a, r));
  return peak;
}

double ActivationBytesOnRank(const ActivationInputs& a, PipelineRank which) {
  const double sbh = a.sequence * a.micro_batch * a.hidden;
  const double t = a.tensor;
  const bool sp = a.sequence_parallel && a.tensor > 1;
  const double sp_div = sp ? t : 1;
  ActivationInputs one = a;  // a layer that keeps its activations
  one.recompute = Recompute::kNone;
  // One micro-batch's activations on a rank of `layers` layers.
  auto stage_bytes = [&](int layers) {
    if (a.recompute == Recompute::kFull) {
      // Full recompute keeps each recomputed layer's input (2 s b h bytes, / t with SP) and
      // rebuilds one layer's activations at a time in backward; the layers it does not
      // recompute (activation_checkpointing_layers) keep theirs.
      const int recomputed = model::RecomputedLayers(a.recompute, a.recompute_layers, layers);
      return recomputed * 2 * sbh / sp_div + (layers - recomputed) * LayerActivationBytes(one);
    }
    // Offloaded layers' activations leave the GPU as later layers run forward and come back as
    // they run backward; Transformer Engine times both so that at most the other layers'
    // activations are resident ((layers - offloaded) x one layer, its cpu_offload.py).
    return (layers - a.offloaded_layers) * LayerActivationBytes(a);
  };
  // Micro-batches in flight on pipeline rank r at its peak, in units of the rank's whole stage,
  // from the schedule's order (Megatron-Core's get_pp_rank_microbatches and its interleaved
  // forward/backward order): rank r runs W = 2(p - r - 1) + (v - 1)p warm-up forwards (p - r - 1
  // without interleaving; at most all m v), then one forward and one backward in turn, then the
  // cool-down's backwards. The k-th forward runs chunk (k / p) mod v, the k-th backward chunk
  // v - 1 - (k / p) mod v; a chunk holds a v-th of the rank's slots, the first rank's first a
  // layer fewer with the embedding in the split, the last rank's last a layer fewer with the
  // loss. 1F1B keeps min(p - r, m); the first rank interleaved p (1 + (p-1)/(p v)) (Narayanan
  // SC21 §2.2; Megatron-LM theoretical_memory_usage.py) where its chunks are whole.
  const int p = a.pipeline, v = a.virtual_stages;
  const int busiest = a.layers_per_stage;
  const int first_layers = a.first_stage_layers > 0 ? a.first_stage_layers : busiest;
  const int last_layers = a.last_stage_layers > 0 ? a.last_stage_layers : busiest;
  const double slots = a.stage_slots > 0 ? a.stage_slots : busiest;
  auto in_flight = [&](int rank, int layers) {
    if (p == 1) return 1.0;
    const int m = std::max(1, a.micro_batches);
    auto chunk_layers = [&](int chunk) {
      double c = slots / v;
      if (rank == 0 && chunk == 0) c -= slots - first_layers;
      if (rank == p - 1 && chunk == v - 1) c -= slots - last_layers;
      return c;
    };
    const long total = static_cast<long>(m) * v;
    const long warmup = std::min(
        total, static_cast<long>(v == 1 ? p - rank - 1 : 2 * (p - rank - 1) + (v - 1) * p));
    double held = 0, peak = 0;
    long forwards = 0, backwards = 0;
    auto forward = [&] {
      held += chunk_layers(static_cast<int>((forwards++ / p) % v));
      peak = std::max(peak, held);
    };
    auto backward = [&] { held -= chunk_layers(v - 1 - static_cast<int>((backwards++ / p) % v)); };
    while (forwards < warmup) forward();
    while (forwards < total) {
      forward();
      backward();
    }
    return layers > 0 ? peak / layers : 0.0;
  };
  // Full recompute rebuilds one layer's activations at a time in backward.
  const double rebuilt = a.recompute == Recompute::kFull ? LayerActivationBytes(one) : 0;
  // Output layer and cross-entropy: 4 s b h / t of the final norm and the output layer's input,
  // and the logits, s b V / t of them at `bytes_per_logit` each (Megatron-LM's
  // 4 s b h (1 + V/h) / t has 4: its vocab-parallel loss keeps the fp32 softmax and writes its
  // gradient in place).
  // With sequence parallelism kept gathered, the output layer's input (2 of the 4) is whole.
  const double gathered_out = sp && a.sp_gathered_input ? 2 * sbh * (1 - 1 / t) : 0;
  const double logits = (4 * sbh + a.bytes_per_logit * sbh * a.vocab / a.hidden) / t + gathered_out;
  if (p == 1) return stage_bytes(busiest) + rebuilt + logits;
  // The first rank holds the most micro-batches; with the embedding in the split it builds a
  // layer fewer, and the second, a layer more with one micro-batch fewer (two chunks
  // interleaved), can hold more. The last rank holds the fewest beside one micro-batch's
  // logits (a large vocabulary at 12 bytes per logit can make it the peak).
  switch (which) {
    case PipelineRank::kFirst:
      return stage_bytes(first_layers) * in_flight(0, first_layers) + rebuilt;
    case PipelineRank::kSecond:
    case PipelineRank::kMiddle:
      return stage_bytes(busiest) * in_flight(a.middle_rank, busiest) + rebuilt;
    case PipelineRank::kLast:
      break;
  }
  return stage_bytes(last_layers) * in_flight(p - 1, last_layers) + logits + rebuilt;
}

double TeQuantizedWeightBytes(const model::Workload& w, std::string_view architecture) {
  if (!w.RunsMegatronCore() || !w.NarrowPrecision()) return 0;
  // A quantized weight has a row-wise copy (the forward's GEMM) and a column-wise one (the input
  // gradient's): quantizer.cpp creates both while gradients are on. NVFP4 (4 bits and an E4M3
  // scale a 16-element block) and MXFP8 (1 byte and an E8M0 scale a 32-element block) store both
  // in full; per-tensor FP8 stores its data once where the GPU's FP8 GEMMs take any layout
  // (Blackwell: is_non_tn_fp8_gemm_supported) and a transpose beside it where they take only TN
  // (Hopper, Ada).
  if (w.precision == model::Precision::kFp4) return 2 * (0.5 + 1.0 / 16);
  if (w.fp8_recipe == model::Fp8Recipe::kMxfp8) return 2 * (1 + 1.0 / 32);
  return architecture.rfind("Blackwell", 0) == 0 ? 1 : 2;
}

MemoryBreakdown EstimateMemory(const model::Spec& spec, Strategy strategy, int micro_batch,
                               Recompute recompute, int data_parallel) {
  const model::Workload& w = spec.workload;
  const model::ModelShape& m = w.model;
  const ParamCounts pc = CountParams(m);
  const int dp = data_parallel > 0 ? data_parallel : spec.DataParallel();
  // Each GPU holds 1/(t p) of the weights (Megatron-LM dist_optimizer.md: divide
  // parameters by TP x PP first); a mixture of experts' routed experts are divided over the
  // expert-parallel ranks too, and their optimizer states over the rest of the data-parallel
  // group (Megatron-Core's expert-data-parallel group: DP x CP x TP / (EP x expert TP) ranks).
  // The parameters are those of the pipeline rank whose memory is counted (ParamsOnPipelineRank:
  // its layers, the embedding on the first, the output layer on the last); what carries
  // gradients and optimizer states is the same, or with LoRA the adapters alone.
  MemoryBreakdown b;
  b.strategy = strategy;
  b.micro_batch = micro_batch;
  const bool fully_sharded = strategy == Strategy::kZero3 || strategy == Strategy::kFsdp;
  const bool fp8_params = w.Fp8ParamsFor(strategy);
  // Sharded FP8 parameters (FSDP, ZeRO-3) in 1 byte a linear weight: per-tensor scaling's (the
  // spec takes MXFP8's and NVFP4's with the distributed optimizer alone). Megatron-FSDP's; FSDP2's
  // shards stay the fp32 parameters torchao casts before each gather (its gathered units are 1
  // byte a linear weight all the same, below).
  const bool fp8_gathered = fp8_params && w.GatheredLinearWeightBytes(strategy) == 1;
  const bool fp8_shards = fp8_gathered && w.sharding_impl == model::ShardingImpl::kMegatron;
  // Transformer Engine's quantized weights (Megatron-Core's stacks, an FP8 or FP4 recipe): bytes a
  // linear parameter of the copy its GEMMs read, with FP8 parameters the stored weight itself
  // (TeQuantizedWeightBytes). Weights a sharded strategy keeps whole (ddp, zero1, zero2) only:
  // FSDP's gathered units are counted below as before.
  const double quantized =
      fully_sharded ? 0 : TeQuantizedWeightBytes(w, spec.cluster.nodes.gpu.architecture);
  // What a linear parameter's weight takes: bf16's 2 and, beside it, the cast copy Transformer
  // Engine keeps across micro-batches; with FP8 parameters the quantized weight alone.
  const double linear_weight_bytes = fp8_params ? quantized : 2 + quantized;
  // The model states and FSDP's gathered units on a rank holding `local` (`trained`).
  auto states_on = [&](const LocalParams& local, const LocalParams& trained,
                       MemoryBreakdown& into) {
    // Context-parallel ranks hold the same weights, and Megatron's distributed optimizer shards
    // the states over the data-parallel group with context parallelism (DP x CP ranks): without
    // it 405B on 128 B200 at TP4 PP8 CP2, which NeMo 25.11 runs, did not fit.
    // With hybrid sharding (workload.parallel.shard) FSDP and ZeRO-3 shard them over the shard
    // group alone and replicate them across the groups.
    into.states = ModelStateBytes(strategy, local.dense,
                                  model::StateShardRanks(strategy, w.shard, dp * w.context));
    // The linear weights as Transformer Engine holds them (linear_weight_bytes; the dense part's
    // linear share here, the routed experts' below); gradients and the optimizer's fp32 master
    // copy are as before. Sharded (FSDP, ZeRO-3), FP8 parameters store a linear weight's shard in
    // 1 byte where bf16 takes 2. The plan's DDP row keeps bf16 weights: FP8 parameters come with a
    // sharded optimizer's gather (Megatron refuses them without the distributed optimizer; the
    // spec, too).
    if (!fully_sharded) {
      into.states.weights_bytes += (linear_weight_bytes - 2) * local.dense_linear;
    } else if (fp8_shards && local.dense > 0) {
      into.states.weights_bytes *= 1 - 0.5 * local.dense_linear / local.dense;
    }
    if (local.experts > 0) {
      const ModelStates e = ModelStateBytes(
          strategy, local.experts,
          model::ExpertStateShardRanks(strategy, w.shard, w.tensor, dp * w.context, w.expert));
      into.states.weights_bytes += fully_sharded ? e.weights_bytes * (fp8_shards ? 0.5 : 1)
                                                 : linear_weight_bytes * local.experts;
      into.states.grads_bytes += e.grads_bytes;
      into.states.optimizer_bytes += e.optimizer_bytes;
    }
    if (pc.adapters > 0) {
      // LoRA: the frozen weights keep their working copy alone (no gradient, no fp32 master, no
      // Adam moments: Megatron's DDP and distributed optimizer build their buffers for the
      // parameters that require a gradient); the adapters carry all of the states, as the strategy
      // shards them.
      const ModelStates adapters = ModelStateBytes(
          strategy, trained.dense, model::StateShardRanks(strategy, w.shard, dp * w.context));
      into.states.weights_bytes += adapters.weights_bytes;
      into.states.grads_bytes = adapters.grads_bytes;
      into.states.optimizer_bytes = adapters.optimizer_bytes;
    }
    // ModelStateBytes counts bf16 gradients; Megatron's buffer may be fp32.
    into.states.grads_bytes *= GradientBufferBytes(w, strategy) / 2;
    if (fully_sharded) {
      // Unsharded bf16 parameters of the current and the prefetched unit, plus
      // the current unit's unsharded bf16 gradients before reduce-scatter:
      // 3 x 2 B x largest unit (DeepSpeed's estimator uses 4 B x largest layer
      // for params + grads; PyTorch FSDP's backward prefetch adds one unit).
      // With FP8 parameters a unit's linear weights are gathered in 1 byte: a layer's all but its
      // norms (and a MoE layer's router), the embedding none of it.
      // Each candidate unit's share on this rank, the largest of them: the embedding and a dense
      // layer split over TP; a MoE layer's attention, router and shared experts over TP and its
      // routed experts E/EP of them, each split over the expert TP (1 where EP takes TP's ranks:
      // ExpertTensor), so an expert-TP-1 unit can be the largest though its layer is not.
      const double t = w.tensor;
      double unit = pc.embedding / t, unit_linear = 0;
      if (m.MoeLayers() < m.layers && pc.per_layer / t > unit) {
        unit = pc.per_layer / t;
        unit_linear = pc.layer_linear / t;
      }
      if (m.IsMoe()) {
        const double layer_experts = pc.experts / m.MoeLayers();
        const double experts =
            layer_experts / w.expert / model::ExpertTensor(w.tensor, dp * w.context, w.expert);
        const double moe_unit = (pc.moe_layer - layer_experts) / t + experts;
        if (moe_unit > unit) {
          unit = moe_unit;
          unit_linear = (pc.moe_layer_linear - pc.LayerExpertWeights(m.MoeLayers())) / t + experts;
        }
      }
      // DeepSpeed's ZeRO-3 hooks every module and gathers each one's own parameters as it runs
      // (its estimator, estimate_zero3_model_states_mem_needs, takes the largest module's, 4 B each
      // for the fp16 parameters and gradients): the current module, the prefetched one and the
      // current one's gradient, at that granularity. What its reuse window
      // (stage3_max_reuse_distance, 1e9 parameters by default) keeps gathered beyond that is not
      // counted: with full recompute a block that fits the window stays gathered from its
      // recomputed forward through its backward.
      if (w.sharding_impl == model::ShardingImpl::kDeepSpeed) {
        unit = pc.largest_module / t;  // FP8 parameters are refused on DeepSpeed's stack (spec.cc)
        unit_linear = 0;
      }
      const double unit_weight_bytes = 2 * unit - (fp8_gathered ? unit_linear : 0);
      // With LoRA the frozen unit has no gradient to hold (its adapters' are negligible).
      const double unit_grad_bytes = pc.adapters > 0 ? 0 : 2 * unit;
      into.gathered_bytes = 2 * unit_weight_bytes + unit_grad_bytes;
      if (w.pipeline > 1) {
        // With pipeline parallelism FSDP does not reshard after the forward (torchtitan's
        // apply_fsdp: "to avoid per-microbatch all-gathers") and the schedule turns gradient sync
        // off until the last micro-batch: the whole stage's parameters stay gathered in bf16 and
        // its gradients accumulate unsharded in the reduce dtype (fp32 for FSDP2: 6 bytes per
        // local parameter, which published 405B runs at PP 8 show; tests/sim/calibration_test.cc).
        // DeepSpeed's ZeRO-3 does not run with pipeline parallelism; FSDP is what does.
        into.gathered_bytes =
            std::max(into.gathered_bytes, local.WeightBytes(fp8_gathered ? 1 : 2) +
                                              w.grad_reduce_bytes * trained.Total());
      }
    }
  };
  ActivationInputs a;
  a.sequence = static_cast<double>(m.sequence) / w.context;
  a.micro_batch = micro_batch;
  a.hidden = m.hidden;
  a.heads = m.heads;
  // Transformer Engine runs an FP8 recipe's GEMMs on inputs it quantizes, and keeps the quantized
  // copy for the weight's gradient: Megatron-Core's stacks. 1 byte an element, MXFP8's with an
  // E8M0 scale a 32-element block; NVFP4's column-wise copy (linear.py keeps it alone) 4 bits and
  // an E4M3 scale a 16-element block. The attention, the norms and the activations stay in BF16.
  // Composer's amp_fp8 is Transformer Engine's fp8_autocast over its te.Linear layers too;
  // PyTorch's own FP8 (torchao's float8 training) keeps its inputs in BF16.
  const bool te = w.RunsMegatronCore() || w.stack == "composer-2023";
  const bool fp8_inputs = te && w.NarrowPrecision();
  a.gemm_input_bytes = !fp8_inputs                                ? 2
                       : w.precision == model::Precision::kFp4    ? 0.5 + 1.0 / 16
                       : w.fp8_recipe == model::Fp8Recipe::kMxfp8 ? 1 + 1.0 / 32
                                                                  : 1;
  const double g = a.gemm_input_bytes;
  // Flash attention keeps Q, K and V (after the rotary embedding) and its output, the output
  // projection's input: 2 bytes each over their widths (Korthikanti's 8 with K and V as wide as
  // Q); in FP8 the projection keeps its own quantized copy beside it. FP8 attention
  // (software.fp8_attention) keeps what its fused kernel saves instead (Transformer Engine's
  // FusedAttnFunc, which Megatron-Core hands BF16 Q, K and V and takes BF16 O from): Q, K and V
  // quantized together, 1 byte each (per-tensor, row-wise only), or under MXFP8 both layouts with
  // their block scales; O in FP8 under delayed scaling, in BF16 under current scaling
  // (NVTE_DPA_FP8CS_O_in_F16, on by default) and MXFP8.
  const model::Fp8Recipe attention_recipe =
      w.precision == model::Precision::kFp4 ? model::Fp8Recipe::kCurrent : w.fp8_recipe;
  // (Context parallelism's ring, Megatron-Core's default p2p, keeps them in BF16 under MXFP8:
  // context_parallel.py.)
  const double qkv_bytes = !w.fp8_attention ? 2
                           : attention_recipe == model::Fp8Recipe::kMxfp8
                               ? (w.context > 1 ? 2 : 2 * (1 + 1.0 / 32))
                               : 1;
  const double out_bytes =
      w.fp8_attention && attention_recipe == model::Fp8Recipe::kDelayed ? 1 : 2;
  a.attention_split = (qkv_bytes + out_bytes + (g < 2 ? g : 0)) * m.QueryWidth() / m.hidden +
                      2 * qkv_bytes * m.KvWidth() / m.hidden;
  a.attention_split_recomputed =
      (2 + (g < 2 ? g : 2)) * m.QueryWidth() / m.hidden + 4 * m.KvWidth() / m.hidden;
  // QK-norm keeps its inputs, the projected queries and keys before the norm, in BF16 for its
  // backward, beside the normed ones attention keeps: Transformer Engine's RMSNorm saves its input;
  // under torch.compile the partitioner keeps the projection's output (a GEMM's, not recomputed)
  // and rebuilds the norm from it. Recomputing the attention core does not drop them.
  if (m.qk_norm) {
    const double qk = 2.0 * (m.QueryWidth() + m.KvWidth()) / m.hidden;
    a.attention_split += qk;
    a.attention_split_recomputed += qk;
  }
  // The MLP's input projections' outputs (the activation's input, 2 bytes) and the activation's
  // output (the output projection's input, gemm_input_bytes) over the width: 4 f/h for GELU, 6 f/h
  // for a gated MLP's gate and up projections, in BF16.
  const double inner = (2 * m.MlpInputProjections() + g) / m.hidden;
  // What depends on a layer's MLP, averaged over layers of which `dense_share` keep the dense one
  // (a pipeline rank's own mix: a mixture of experts' dense layers come first).
  auto set_layer_mix = [&](ActivationInputs& in, double dense_share) {
    in.mlp_split = inner * m.ffn_hidden;
    in.mlp_input_bytes = g;
    if (m.IsMoe()) {
      // A MoE layer keeps each routed copy's expert activations (top_k x the expert width,
      // padded to the capacity), the shared experts', and the dispatched input (the experts'
      // GEMM input) and combined output (2) of each copy. Megatron-Core has not kept that output
      // since it applies the routing probabilities in the experts' activation (2025-04); the
      // term stays because the one published MoE peak is met with it and missed by 10 % without
      // (docs/sim.md, "Mixture of experts").
      const double k = m.moe.PaddedTopK();
      double moe = inner * (k + m.moe.shared_experts) * m.moe.ffn_hidden + (g + 2) * k;
      // Megatron-Core's per-expert path clamps a quick-GeGLU's inputs in eager before its fused
      // activation (the step model's MegatronEagerBytes), which then keeps the clamped copy of
      // the first GEMM's output beside the output the clamps keep: 4 bytes an element of the
      // expert's width more, each routed copy; recomputing moe_act keeps neither.
      if (w.ClampsExpertsInEager() &&
          !(recompute == Recompute::kSelective && w.recompute_modules.moe_act)) {
        moe += 4.0 * k * m.moe.ffn_hidden / m.hidden;
      }
      in.mlp_split = dense_share * in.mlp_split + (1 - dense_share) * moe;
      // A MoE layer's input (its norm's output) is the router's, kept in BF16; in FP8 the shared
      // experts keep their quantized copy beside it.
      const double moe_input = 2 + (m.moe.shared_experts > 0 && g < 2 ? g : 0);
      in.mlp_input_bytes = dense_share * g + (1 - dense_share) * moe_input;
    }
    const SelectiveDrops drops = SelectiveRecomputeDrops(m, w.recompute_modules, g, dense_share);
    in.dropped_replicated = drops.replicated;
    in.dropped_split = drops.split;
    const SelectiveDrops frozen = FrozenInputDrops(
        m, w.flash_attention, recompute == Recompute::kSelective && w.recompute_modules.mlp, g,
        dense_share);
    in.frozen_replicated = frozen.replicated;
    in.frozen_split = frozen.split;
    in.adapter_gathered =
        m.lora.Enabled() ? 2 * ((m.lora.qkv ? 1 : 0) + (m.lora.fc1 ? dense_share : 0)) : 0;
  };
  set_layer_mix(a, m.DenseShare());
  a.vocab = m.vocab;
  const model::StageLayerCounts stages =
      model::PipelineStageLayers(m.layers, w.pipeline, w.pipeline_split);
  a.layers_per_stage = stages.most;
  a.first_stage_layers = stages.first;
  a.stage_slots = stages.slots;
  a.last_stage_layers = stages.last;
  a.tensor = w.tensor;
  a.pipeline = w.pipeline;
  a.virtual_stages = w.virtual_stages;
  a.micro_batches = w.accumulation;
  a.sequence_parallel = w.sequence_parallel;
  a.flash_attention = w.flash_attention;
  a.dropout = m.dropout > 0;
  a.bytes_per_logit = w.bytes_per_logit;
  a.sp_gathered_input = w.sp_saves_gathered_input;
  a.recompute = recompute;
  a.recompute_layers = recompute == w.recompute ? w.recompute_layers : 0;
  a.recompute_core_attn = w.recompute_modules.core_attn;
  a.offloaded_layers = OffloadedLayers(w, w.pipeline, recompute);
  b.offloaded_bytes = a.offloaded_layers * LayerActivationBytes(a);
  b.reserved_bytes = w.memory_reserved_bytes;
  b.capacity_bytes = spec.cluster.nodes.gpu.memory_bytes;
  // Each pipeline rank that can hold the most (PeakCandidates), with its own parameters and its
  // own activations; the largest is the GPU's memory. Before, every rank held an even 1/(t p) of
  // the whole model beside the busiest rank's activations: Llama 3 8B at PP8 put 1.00 B
  // parameters on the first rank, which holds 1.40 B (its 4 layers and the 0.53 B embedding).
  // A mixture of experts' dense layers, first in the model, make the first ranks' layers unlike
  // the others'. Middle ranks with the same layers hold the same parameters and, the lower the
  // rank, more micro-batches in flight; so of each count of dense layers among the middle ranks
  // the lowest rank is a candidate: the second (kSecond) and those past it (kMiddle).
  const int p = w.pipeline;
  auto layers_on = [&](int rank) {
    return LayersOnPipelineRank(m, p, w.virtual_stages, w.pipeline_split, rank);
  };
  struct Candidate {
    PipelineRank kind;
    int index;
  };
  std::vector<Candidate> candidates;
  for (PipelineRank rank : PeakCandidates(a)) {
    candidates.push_back({rank, rank == PipelineRank::kFirst    ? 0
                                : rank == PipelineRank::kSecond ? 1
                                                                : p - 1});
  }
  if (p > 2 && m.IsMoe() && m.moe.dense_layers > 0) {
    std::vector<int> mixes;  // the middle ranks' counts of dense layers seen so far
    for (int rank = 1; rank < p - 1; ++rank) {
      const int dense = layers_on(rank).dense;
      if (std::find(mixes.begin(), mixes.end(), dense) != mixes.end()) continue;
      mixes.push_back(dense);
      const bool listed = std::any_of(candidates.begin(), candidates.end(),
                                      [&](const Candidate& c) { return c.index == rank; });
      if (!listed) {
        candidates.insert(candidates.end() - 1,
                          {rank == 1 ? PipelineRank::kSecond : PipelineRank::kMiddle, rank});
      }
    }
  }
  for (const auto& [rank, index] : candidates) {
    const RankLayers layers = layers_on(index);
    const StageParams sp = ParamsOnPipelineRank(pc, m, w.tensor, dp * w.context, w.expert, layers);
    MemoryBreakdown r = b;
    r.pipeline_rank = rank;
    r.pipeline_rank_index = index;
    states_on(sp.local, sp.trained, r);
    ActivationInputs on_rank = a;
    on_rank.middle_rank = index;
    if (m.IsMoe()) set_layer_mix(on_rank, static_cast<double>(layers.dense) / layers.layers);
    r.activation_bytes = ActivationBytesOnRank(on_rank, rank);
    // Composer evaluates the training metrics after each micro-batch's backward
    // (Trainer._eval_train_metrics): the activations are freed by then, and the last stage holds
    // the bf16 logits the trainer kept for them (state.outputs) and what one metric allocates
    // beside them. Where that phase is larger than the forward's end it is the peak: the larger
    // of the two is counted, less the gathered units FSDP has resharded after the backward (with
    // pipeline stages the stage stays gathered, and counts).
    if (w.metrics_bytes_per_logit > 0 && layers.last) {
      const double metrics =
          (2 + w.metrics_bytes_per_logit) * a.sequence * micro_batch * m.vocab / w.tensor;
      const double resharded = p == 1 ? r.gathered_bytes : 0;
      r.activation_bytes = std::max(r.activation_bytes, metrics - resharded);
    }
    const double live = r.states.Total() + r.gathered_bytes + r.activation_bytes;
    r.fragmentation_bytes = live * w.fragmentation;
    r.total_bytes = live + r.fragmentation_bytes + r.reserved_bytes;
    if (r.total_bytes > b.total_bytes) b = r;
  }
  b.fits = b.total_bytes <= b.capacity_bytes;
  return b;
}

MemoryPlan PlanMemory(const model::Spec& spec) {
  const model::Workload& w = spec.workload;
  MemoryPlan plan;
  plan.params = CountParams(w.model);
  plan.configured = EstimateMemory(spec, w.strategy, w.micro_batch, w.recompute);

  // Memory grows with the micro-batch, piecewise linearly (the larger of the first and the last
  // stage, of the forward's end and the training metrics), not along one line through micro-batches
  // 1 and 2: the largest that fits, by doubling and then bisection.
  auto fits = [&](int mb) { return EstimateMemory(spec, w.strategy, mb, w.recompute).fits; };
  if (fits(1)) {
    constexpr int kLimit = 1 << 20;
    int lo = 1, hi = 2;
    while (hi <= kLimit && fits(hi)) lo = hi, hi *= 2;
    while (hi - lo > 1 && lo < kLimit) {
      const int mid = lo + (hi - lo) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    plan.max_micro_batch = lo;
  }
  // Cheapest first: DDP moves the least data per step, ZeRO-3/FSDP the most.
  for (Strategy s : {Strategy::kDdp, Strategy::kZero1, Strategy::kZero2, Strategy::kFsdp}) {
    if (s == Strategy::kFsdp && w.strategy == Strategy::kZero3) s = Strategy::kZero3;
    MemoryBreakdown b = EstimateMemory(spec, s, w.micro_batch, w.recompute);
    if (b.fits && !plan.cheapest_fitting) plan.cheapest_fitting = s;
    plan.strategies.push_back(b);
  }
  // The floor shards over every rank and recomputes every layer, whatever the spec runs.
  model::Spec full = spec;
  full.workload.shard = 0;
  full.workload.recompute_layers = 0;
  plan.minimum = EstimateMemory(full, Strategy::kZero3, 1, Recompute::kFull);
  return plan;
}

int MinimumNodes(const model::Spec& spec) {
  model::Spec s = spec;
  s.workload.shard = 0;  // the floor: sharded over every rank, every layer recomputed
  s.workload.recompute_layers = 0;
  for (int nodes = std::max(1, spec.cluster.nodes.count); nodes <= (1 << 20); nodes *= 2) {
    s.cluster.nodes.count = nodes;
    if (EstimateMemory(s, Strategy::kFsdp, 1, Recompute::kFull).fits) return nodes;
  }
  return 0;
}

}  // namespace gpufleet::plan
