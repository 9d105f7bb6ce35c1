#pragma once
// Memory per GPU: parameter counts, model states per sharding strategy (ZeRO
// paper), activations (Korthikanti et al. 2022 / Megatron-LM), and whether a
// layout fits. Pure functions; thread-safe.

#include <optional>
#include <string_view>
#include <vector>

#include "model/spec.h"

namespace gpufleet::plan {

struct ParamCounts {
  double total = 0;         // all parameters
  double per_layer = 0;     // one transformer layer (attention + MLP + norms)
  double embedding = 0;     // input embedding (V x h)
  double output = 0;        // untied output projection (V x h), 0 when tied
  double largest_unit = 0;  // largest FSDP/ZeRO-3 unit: max(layer, embedding)
  // The largest module's own parameters (DeepSpeed ZeRO-3's unit: it gathers module by module):
  // the embedding, the QKV projection or the MLP's input projection, fused as Megatron-DeepSpeed
  // builds them (gate and up together for SwiGLU; one expert's in a mixture of experts). A
  // Hugging Face model's separate projections make smaller modules (h x f): an upper bound there.
  double largest_module = 0;
  // Mixture of experts: one MoE layer (attention, router, shared and routed experts), every
  // routed expert's parameters in the model (what expert parallelism divides), and the matmul
  // parameters one token goes through in all layers (what its FLOPs follow).
  double moe_layer = 0;
  double experts = 0;
  double active_matmul = 0;
  // The transformer layers' linear weights outside the routed experts (attention's projections,
  // the MLP's, shared experts'): with the routed experts, what Transformer Engine's FP8
  // parameters store in FP8; the embedding, the output layer, the norms and the router stay in
  // higher precision.
  double linear = 0;
  // One layer's linear weights, dense and MoE (the MoE layer's shared experts and this model's
  // routed experts, without the router): what FSDP gathers of a unit in FP8 with FP8 parameters.
  double layer_linear = 0;
  double moe_layer_linear = 0;
  // Of `experts`, the routed experts' biases (model.linear_bias), which are not linear weights.
  double expert_biases = 0;
  // One MoE layer's routed experts' linear weights (their share of moe_layer_linear).
  double LayerExpertWeights(int moe_layers) const { return (experts - expert_biases) / moe_layers; }
  // LoRA (model.lora): the adapters' parameters, rank x (in + out) for each adapted linear layer
  // of every layer, beside `total` (the frozen model's); 0 without LoRA.
  double adapters = 0;
  // What the optimizer trains: the adapters with LoRA, else every parameter.
  double Trainable() const { return adapters > 0 ? adapters : total; }
};

// Exact count for a decoder transformer with GQA, a GELU or SwiGLU MLP, and mixture-of-experts
// layers where the model has them.
ParamCounts CountParams(const model::ModelShape& m);

// Mixed-precision Adam model states, bytes per GPU, for `params` parameters on
// the GPU's model-parallel shard and `dp` data-parallel ranks (ZeRO paper,
// Rajbhandari et al. SC20 §3.1, K = 12): DDP 16P; ZeRO-1 4P + 12P/dp;
// ZeRO-2 2P + 14P/dp; ZeRO-3/FSDP 16P/dp.
struct ModelStates {
  double weights_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double Total() const { return weights_bytes + grads_bytes + optimizer_bytes; }
};
ModelStates ModelStateBytes(model::Strategy s, double params, int dp);
// Bytes a parameter's gradient takes in the buffer `s` keeps whole (ddp, zero1) on `w`'s stack:
// Megatron's DDP accumulates in the reduction's dtype (DistributedDataParallelConfig's
// grad_reduce_in_fp32; Megatron-LM turns it on under --bf16 unless --grad-reduce-in-bf16), 4 with
// an fp32 reduction (the "18 bytes" of its DDP); every other case bf16's 2.
double GradientBufferBytes(const model::Workload& w, model::Strategy s);

// Parameters on one GPU: the dense ones (all but the routed experts) and the routed experts.
struct LocalParams {
  double dense = 0;
  double experts = 0;
  double dense_linear = 0;  // of the dense ones, the linear weights (ParamCounts::linear's share)
  double Total() const { return dense + experts; }
  // Bytes of the working parameters the data-parallel gather moves: 2 each, the linear weights
  // (the dense ones and every routed expert's) `linear` each
  // (model::Workload::GatheredLinearWeightBytes: fewer with FP8 or FP4 parameters).
  double WeightBytes(double linear) const {
    return DenseWeightBytes(linear) + ExpertWeightBytes(linear);
  }
  // The two parts, gathered over different groups (the routed experts over their
  // expert-data-parallel ranks).
  double DenseWeightBytes(double linear) const { return 2 * dense - (2 - linear) * dense_linear; }
  double ExpertWeightBytes(double linear) const { return linear * experts; }
};
// A pipeline rank's transformer layers: how many (model::PipelineStageLayers), how many of them
// keep the dense MLP (a mixture of experts' first moe.dense_layers: model::DenseLayersOnRank), and
// whether it is the first rank (the embedding beside them) or the last (the output layer and the
// final norm). One stage is both.
struct RankLayers {
  int layers = 0;
  int dense = 0;
  bool first = true;
  bool last = true;
};
RankLayers LayersOnPipelineRank(const model::ModelShape& m, int pipeline, int virtual_stages,
                                model::PipelineSplit split, int rank);
// Parameters on one GPU of a pipeline rank: its layers' (a dense layer's or a MoE layer's each,
// the routed experts over ETP x EP), with the embedding on the first rank and the output layer and
// the final norm on the last (with tied weights and pipeline stages the last holds its own copy of
// the embedding, as Megatron builds it), the dense ones over TP. `trained` is what carries
// gradients and optimizer states: with LoRA the rank's layers' adapters, else `local`.
struct StageParams {
  LocalParams local;
  LocalParams trained;
};
StageParams ParamsOnPipelineRank(const ParamCounts& pc, const model::ModelShape& m, int tensor,
                                 int data_x_context, int expert, const RankLayers& rank);
// The parameters whose data-parallel reduction and optimizer step set the step's tail, which the
// step model and the plan's traffic table take: the first pipeline rank's, whose backward ends
// last. Where a mixture of experts' dense layers leave it fewer parameters than a middle rank,
// whose backward ends earlier (a micro-batch's backward for each rank between), the largest of
// the middle ranks' (a bound: that gap is not timed; the last rank's, with the output layer,
// ends earliest and is left out). With one stage, the whole model's split.
StageParams ParamsOnTailPipelineRank(const ParamCounts& pc, const model::ModelShape& m, int tensor,
                                     int pipeline, int virtual_stages, model::PipelineSplit split,
                                     int data_x_context, int expert);

struct ActivationInputs {
  double sequence = 0;  // tokens per sample on this GPU (sequence / context parallel)
  double micro_batch = 1;
  double hidden = 0;
  double heads = 0;
  // A layer's tensors inside the tensor-parallel region, in bytes per token per hidden element:
  // attention's query, key, value and output, 2 bytes each over its width (8 with as many KV
  // heads as query heads of hidden / heads, less with grouped-query attention), and the MLP's
  // inner activations, 2 bytes each over its input projections' outputs and the activation's
  // output (4 f/h for GELU, 6 f/h gated; a MoE layer's routed and shared copies over the expert
  // width, and each routed copy's dispatched input and combined output, 4 per copy), averaged over
  // the rank's layers (a mixture of experts' dense and MoE layers as the rank holds them: the
  // dense ones come first). Korthikanti's GPT-3 setting (a 4h GELU MLP) is the default: 8 + 16 of
  // its 34. With QK-norm (model.qk_norm) the queries and keys before the norm, 2 bytes each, too.
  double attention_split = 8;
  // The same with the attention core recomputed (selective recompute's core_attn): Megatron-Core's
  // checkpoint keeps Q, K and V in BF16, its inputs, and the output projection its own input, O
  // (gemm_input_bytes); what the kernel saves is rebuilt a layer at a time in the backward.
  double attention_split_recomputed = 8;
  double mlp_split = 16;
  // Bytes a linear layer keeps of each element of its input for the weight's gradient: 2 in
  // BF16, 1 where Transformer Engine runs an FP8 recipe (it keeps the quantized copy). The QKV
  // projection's and the MLP's inputs here; the callers count the others in the parts above.
  double gemm_input_bytes = 2;
  // The MLP's input the layer keeps (the norm's output), averaged over the rank's layers: a dense
  // MLP's input projection keeps gemm_input_bytes; a MoE layer's router keeps it in BF16 (2), and
  // its shared experts their own quantized copy beside it in FP8.
  double mlp_input_bytes = 2;
  double vocab = 0;
  int layers_per_stage = 0;  // the busiest rank's
  // With the embedding or the loss counted in the pipeline split (model::PipelineStageLayers)
  // the first and the last rank build fewer layers than the busiest: 0 means layers_per_stage.
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  // Slots a rank's share of the split holds (layers, with the embedding and the loss counted in
  // it): each of its virtual stages holds a v-th of them, less the embedding on the first rank's
  // first chunk and the loss on the last rank's last. 0 means layers_per_stage.
  int stage_slots = 0;
  int tensor = 1;
  int pipeline = 1;
  int virtual_stages = 1;
  int micro_batches = 1;  // per step (accumulation), for pipeline in-flight counts
  bool sequence_parallel = false;
  bool flash_attention = true;
  bool dropout = true;  // dropout masks stored (1 byte per element after attention and MLP)
  // Bytes per output logit held at the loss's backward (docs/plan.md, "Activations"):
  // Megatron's vocab-parallel loss 4, a fused kernel 2, PyTorch's cross_entropy on fp32 12.
  double bytes_per_logit = 4;
  // With sequence parallelism: the column-parallel layers' inputs kept gathered (full sequence)
  // rather than sharded (software.sp_saved_input).
  bool sp_gathered_input = false;
  model::Recompute recompute = model::Recompute::kNone;
  int recompute_layers = 0;  // with full recompute, the stage's layers recomputed; 0 = all
  // With selective recompute: whether it re-runs the attention core (whose scores, without flash
  // attention, it then does not keep), and the bytes per token per hidden element, averaged over
  // the layers, that its other modules drop (SelectiveRecomputeDrops): of the part every TP rank
  // keeps whole without sequence parallelism, and of the part TP splits.
  bool recompute_core_attn = true;
  double dropped_replicated = 0;
  double dropped_split = 0;
  // With LoRA, what the frozen linear layers do not save, in the same units, whatever the
  // recomputation (FrozenInputDrops).
  double frozen_replicated = 0;
  double frozen_split = 0;
  // With LoRA and sequence parallelism, bytes per token per hidden element (averaged over the
  // layers) the adapters beside QKV and the MLP's input projection save of the whole sequence:
  // their A's input, gathered, beside the norm's sharded output the layer keeps (2 each).
  double adapter_gathered = 0;
  int offloaded_layers = 0;  // layers whose activations wait in host memory (no recompute)
  // The middle rank PipelineRank::kSecond or kMiddle stands for: 1, the second, or past it one
  // with its own count of a mixture of experts' dense layers (EstimateMemory sets it).
  int middle_rank = 1;
};

// What selective recompute's modules other than the attention core drop from a layer's stored
// activations, in bytes per token per hidden element averaged over a rank's layers (Megatron-Core's
// recompute_modules; each module's output is discarded after its forward and rebuilt in backward):
// layernorm the norm before each MoE layer's router (its output, 2 bytes); moe_act the routed
// experts' activation, the second expert GEMM's input (2 bytes a copy over the expert width,
// padded to the capacity); mlp a dense layer's MLP whole from the norm's input: its input (2) and
// the MLP's inner activations (4 f/h, gated 6 f/h: ActivationInputs::mlp_split).
struct SelectiveDrops {
  double replicated = 0;  // outside the tensor-parallel region (whole on every rank without SP)
  double split = 0;       // inside it
};
// `dense_share` is the share of the layers averaged over that keep the dense MLP: a pipeline
// rank's own (RankLayers), or where not given the model's (ModelShape::DenseShare).
SelectiveDrops SelectiveRecomputeDrops(const model::ModelShape& m,
                                       const model::Workload::RecomputeModules& mods,
                                       double gemm_input_bytes = 2,
                                       std::optional<double> dense_share = std::nullopt);
// With LoRA (model.lora), what the frozen linear layers do not save, in the same units: a frozen
// layer's backward computes its input's gradient alone, which needs the weight and not the input,
// and Transformer Engine saves the input only for a weight gradient. Not adapted, the QKV
// projection drops its input (the norm's output, 2, outside the TP region), the MLP's input
// projection its input (2, outside), the MLP's output projection its input (the activation's
// output, 2 f/h, inside), and the attention's output projection its input (2, inside) only
// without flash attention, whose kernel keeps that tensor, its output, for its own backward. An
// adapter's A needs its layer's input, which is then kept. The MLPs are the dense layers' (LoRA on
// routed experts is refused); where selective recompute drops a dense MLP whole
// (`mlp_recomputed`) its inputs are SelectiveRecomputeDrops'.
SelectiveDrops FrozenInputDrops(const model::ModelShape& m, bool flash_attention,
                                bool mlp_recomputed, double gemm_input_bytes = 2,
                                std::optional<double> dense_share = std::nullopt);

// The layers whose activations a layout keeps in host memory: the spec's activation_offload,
// which Megatron-Core runs only without pipeline stages or recomputation (the spec refuses both;
// a searched layout that adds either runs without the offload).
inline int OffloadedLayers(const model::Workload& w, int pipeline, model::Recompute recompute) {
  return pipeline == 1 && recompute == model::Recompute::kNone ? w.activation_offload : 0;
}

// Activation bytes of ONE transformer layer for one micro-batch, 16-bit
// activations (Korthikanti et al. 2022 Table 2; its constant 34 = 10 + 8 + 16 counted tensor by
// tensor for the layer's attention widths and MLP: ActivationInputs).
double LayerActivationBytes(const ActivationInputs& a);
// The pipeline ranks whose memory can be the largest: the first (the most micro-batches in
// flight, and the embedding), the second where the first gives the embedding a layer's slot,
// and the last (the logits, the output layer). Middle ranks with the same layers hold no more than
// the lowest of them. Of a mixture of experts with dense layers first, EstimateMemory adds, of each
// count of dense layers among the middle ranks, the lowest rank holding it: the second, and
// those past it (kMiddle, its index ActivationInputs::middle_rank). With one stage, the one rank
// (kFirst).
enum class PipelineRank { kFirst, kSecond, kMiddle, kLast };
std::string_view PipelineRankName(PipelineRank r);  // "first", "second", "middle", "last"
std::vector<PipelineRank> PeakCandidates(const ActivationInputs& a);
// Activation bytes held at its peak by a GPU of pipeline rank `rank`: all layers of its stage,
// micro-batches in flight (1F1B), recompute working set, and on the last rank the output logits.
double ActivationBytesOnRank(const ActivationInputs& a, PipelineRank rank);
// The largest of them.
double ActivationBytes(const ActivationInputs& a);

struct MemoryBreakdown {
  model::Strategy strategy = model::Strategy::kFsdp;
  int micro_batch = 1;
  ModelStates states;
  double gathered_bytes = 0;  // ZeRO-3/FSDP: unsharded units in flight
  double activation_bytes = 0;
  double offloaded_bytes = 0;  // activations kept in host memory (activation_offload), not here
  double reserved_bytes = 0;   // CUDA context, NCCL buffers, workspaces
  double fragmentation_bytes = 0;
  double total_bytes = 0;
  double capacity_bytes = 0;
  bool fits = false;
  // The pipeline rank these bytes are of: the one that holds the most (PeakCandidates).
  PipelineRank pipeline_rank = PipelineRank::kFirst;
  int pipeline_rank_index = 0;  // its index, from 0
};

// Bytes a linear parameter of the quantized weight Transformer Engine's GEMMs read under the
// workload's FP8 or FP4 recipe on a GPU of `architecture` (its row-wise and column-wise copies):
// the cast copy it keeps across micro-batches (Megatron-Core passes is_first_microbatch, so
// the first micro-batch's cast serves the step), or with FP8 parameters the stored weight itself.
// 0 off Megatron-Core's stacks and in BF16.
double TeQuantizedWeightBytes(const model::Workload& w, std::string_view architecture);

// Memory of `spec` run with `strategy` and `micro_batch` (other settings as in the spec), over
// `data_parallel` ranks (0: the spec's, its GPUs over its model-parallel size; a layout on fewer
// GPUs than a node passes its own).
MemoryBreakdown EstimateMemory(const model::Spec& spec, model::Strategy strategy, int micro_batch,
                               model::Recompute recompute, int data_parallel = 0);

struct MemoryPlan {
  ParamCounts params;
  MemoryBreakdown configured;
  int max_micro_batch = 0;                          // with the configured strategy; 0 = none fits
  std::vector<MemoryBreakdown> strategies;          // each strategy at the configured micro-batch
  std::optional<model::Strategy> cheapest_fitting;  // least communication that fits
  MemoryBreakdown minimum;  // ZeRO-3, full recompute, micro-batch 1: the floor
};

MemoryPlan PlanMemory(const model::Spec& spec);

// The fewest nodes (doubling from the spec's count) on which the model fits at the floor: fsdp,
// micro-batch 1, full recompute, the spec's tensor and pipeline sizes (the sharded states
// shrink with more GPUs, the activations do not); 0 when no count up to 2^20 nodes does.
int MinimumNodes(const model::Spec& spec);

}  // namespace gpufleet::plan
