#include "plan/compute.h"

#include <algorithm>

#include "plan/memory.h"

namespace gpufleet::plan {

double CausalWindowKeys(const model::ModelShape& m) {
  // A window longer than the sequence is the sequence (Mistral's 4,096 on 2,048 tokens); held
  // to s/2, since for k just below s the exact average, (s+1)/2 at k = s, passes the causal
  // count's s/2, and a window never costs more than no window. In packed documents s is the
  // document's length, which the window meets the same way.
  const double s = m.AttentionSpan();
  const double k = std::min(static_cast<double>(m.sliding_window), s);
  return std::min(k - k * (k - 1) / (2 * s), s / 2);
}

FlopsPerToken CountFlops(const model::ModelShape& m, bool causal, model::Recompute r,
                         double recomputed, const model::Workload::RecomputeModules& modules) {
  const ParamCounts p = CountParams(m);
  const double h = m.hidden;
  // Attention scores QK^T (2 k w per token for the k keys a query meets, w = heads x head size)
  // and AV (2 k w): 4 k w per layer. Counted whole, every query meets all s keys; causally, s/2
  // of them on average (Megatron-LM's current code). A sliding window of n keys bounds what a
  // causal query meets to n, n - n(n-1)/(2s) on average over the sequence (Megatron Bridge's
  // flop_utils counts it so); the whole count, Megatron-LM's, knows no window, and neither does
  // attention without flash attention, which computes the whole s x s square and masks it.
  // Packed documents bound a causal query the same way, to its own document's d/2 keys on
  // average, d = sum(d^2)/sum(d) (Megatron Bridge's flop_utils counted sum(d^2) from the packed
  // batches' cu_seqlens for a while, #3839, reverted in 2026-06; its LoRA count still does); the
  // whole count and unfused attention know no documents either. With a window the count is the
  // window's over a document of the mean length, exact only where the documents are alike.
  const double s = m.sequence;
  const double full_keys = causal ? m.AttentionSpan() / 2 : s;
  const double window_keys = causal ? CausalWindowKeys(m) : s;
  const double windowed = m.WindowedLayers();
  FlopsPerToken f;
  f.attention_forward =
      4 * m.QueryWidth() * ((m.layers - windowed) * full_keys + windowed * window_keys);
  // Matmuls: every layer's active parameters (a mixture of experts' routed top-k and shared
  // experts, not all of them), 2 FLOPs each, and the logits.
  // LoRA's adapters are matmuls too (2 FLOPs a parameter forward). Over frozen weights the
  // backward computes the input's gradient alone, 2 FLOPs a parameter, not also the weight's:
  // the frozen linear layers and the output layer count twice their forward, the adapters and
  // attention three times (Megatron Bridge counts LoRA's model FLOPs the same way, the frozen
  // matmuls at two thirds, without the adapters').
  f.adapters_forward = 2 * p.adapters;
  f.forward = 2 * p.active_matmul + f.attention_forward + 2 * h * m.vocab + f.adapters_forward;
  f.model = 3 * f.forward - (m.lora.Enabled() ? 2 * p.active_matmul + 2 * h * m.vocab : 0);
  switch (r) {
    case model::Recompute::kNone:
      f.hardware = f.model;
      break;
    // Full recompute re-runs every layer's forward but not the logit layer: Narayanan SC21's
    // 96 B s L h^2 (1 + s/(6h) + V/(16 L h)) = 4 x layers + 3 x logits.
    case model::Recompute::kFull:
      f.hardware = f.model + recomputed * (f.forward - 2 * h * m.vocab);
      break;
    case model::Recompute::kSelective: {
      const double dense_mlp =
          2 * (m.MlpInputProjections() + 1) * h * m.ffn_hidden * (m.layers - m.MoeLayers());
      f.hardware =
          f.model + (modules.core_attn ? f.attention_forward : 0) + (modules.mlp ? dense_mlp : 0);
      break;
    }
  }
  // A capacity factor above 1 pads each expert's tokens to its capacity: the GPU multiplies the
  // padded slots too (the step model runs them), which the model's FLOPs do not count and HFU
  // does, every pass and the recomputed forward.
  if (m.IsMoe() && m.moe.PaddedTopK() > m.moe.top_k) {
    const double padded_forward =
        2 * (m.moe.PaddedTopK() - m.moe.top_k) * p.experts / m.moe.experts;
    f.hardware +=
        padded_forward * (m.LinearPasses() + (r == model::Recompute::kFull ? recomputed : 0));
  }
  return f;
}

ComputePlan PlanCompute(const model::Spec& spec) {
  const model::Workload& w = spec.workload;
  const model::GpuSpec& gpu = spec.cluster.nodes.gpu;
  ComputePlan c;
  c.per_token = CountFlops(
      w.model, w.causal_attention_flops, w.recompute,
      model::RecomputedShare(w.recompute, w.recompute_layers,
                             model::StageLayers(w.model.layers, w.pipeline, w.pipeline_split)),
      w.recompute_modules);
  c.peak_flop_per_s = gpu.PeakFlops(w.precision);
  c.tokens_per_step = static_cast<double>(w.global_batch) * w.model.sequence;
  c.model_flops_per_step = c.tokens_per_step * c.per_token.model;
  const double n = spec.TotalGpus();
  // MFU definition (PaLM; Korthikanti): achieved model FLOP/s / (n x peak).
  c.ideal_step_s = c.model_flops_per_step / (n * c.peak_flop_per_s);
  // MAMF, measured at the workload's precision where published (FP8 on H100, H200, B200),
  // else BF16's: the best available ceiling.
  c.hfu_ceiling = gpu.MatmulEfficiency(w.precision);
  // The default 45 % is BF16-class: of NVFP4's printed peak on Blackwell Ultra its HFU would
  // exceed the 46 % ceiling with recomputation. A stated MFU is the user's, and the findings
  // hold it to the ceiling (compute.mfu-above-ceiling).
  c.mfu = w.mfu_stated ? w.mfu
                       : std::min(w.mfu, c.hfu_ceiling * c.per_token.model / c.per_token.hardware);
  c.compute_step_s = c.ideal_step_s / c.mfu;
  c.micro_batch_s = c.compute_step_s / w.accumulation;
  c.hfu = c.mfu * c.per_token.hardware / c.per_token.model;
  return c;
}

}  // namespace gpufleet::plan
