#pragma once
// Compute: FLOPs per token and per step, ideal and expected step time at a
// stated utilisation. Pure functions; thread-safe.

#include "model/spec.h"

namespace gpufleet::plan {

struct FlopsPerToken {
  double forward = 0;            // one forward pass, matmuls + attention + logits
  double attention_forward = 0;  // the s-dependent part of `forward`
  double adapters_forward = 0;   // LoRA's adapters, within `forward`
  double model = 0;              // training: forward + backward (3 x forward); MFU counts this
  double hardware = 0;           // what the GPU executes, with recomputation; HFU counts this
};

// Forward FLOPs per token = 2 x (matmul parameters per layer) x L + attention
// 4 s h L (QK^T and AV; halved with `causal`) + logits 2 h V (Narayanan et al.
// SC21 Appendix; PaLM App. B writes the same as 6N + 12 L h s for training).
// Training = 3 x forward (with LoRA the frozen matmuls and the logits 2 x, no weight gradient);
// full recompute adds one forward of the layers, selective
// recompute what its modules re-run of their matmuls: attention's score part (core_attn) and the
// dense layers' MLP GEMMs (mlp); the others re-run element-wise work alone. Causally counted, a
// sliding window bounds the keys of its layers' queries (ModelShape::sliding_window), and packed
// documents every query's to its own document's (ModelShape::document_length).
// `recomputed` is the share of the layers full recompute re-runs (activation_checkpointing_layers).
FlopsPerToken CountFlops(const model::ModelShape& m, bool causal, model::Recompute r,
                         double recomputed = 1,
                         const model::Workload::RecomputeModules& modules = {});
// The keys a causal query of a windowed layer meets on average, n - n(n-1)/(2s) for a window of
// n (the sequence where n is longer), never more than the unwindowed s/2; s is the document's
// length in packed sequences.
double CausalWindowKeys(const model::ModelShape& m);

struct ComputePlan {
  FlopsPerToken per_token;
  double peak_flop_per_s = 0;       // per GPU, dense, at the workload's precision
  double tokens_per_step = 0;       // global batch x sequence
  double model_flops_per_step = 0;  // all GPUs
  double ideal_step_s = 0;          // model FLOPs at 100 % of peak on every GPU
  // The MFU the compute phases run at: the stated one, or the default 45 % held to what the
  // GPU's measured matmul ceiling allows at this precision (NVFP4 on Blackwell Ultra: below it).
  double mfu = 0;
  double compute_step_s = 0;  // at that MFU, no communication or bubble
  double micro_batch_s = 0;   // one micro-batch's compute on one GPU, at the MFU
  double hfu = 0;             // hardware FLOPs utilisation implied by the MFU
  double hfu_ceiling = 0;     // the GPU's measured achievable matmul fraction
};

ComputePlan PlanCompute(const model::Spec& spec);

}  // namespace gpufleet::plan
