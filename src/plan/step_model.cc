#include "plan/step_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <span>
#include <string>
#include <utility>

#include "plan/comm.h"
#include "plan/compute.h"
#include "plan/memory.h"

namespace gpufleet::plan {

namespace {

constexpr double kH100Bf16Peak = 989.4e12;
// What a kernel written for Ampere's warp-level MMA (mma.sync) reaches of what a native one does.
// Hopper's tensor cores reach their peak only through warpgroup MMA (wgmma): mma.sync averages
// 62.9 % of the dense peak where wgmma reaches 96.4 % (Luo et al. 2024, "Benchmarking and
// Dissecting the Nvidia Hopper GPU Architecture", arXiv 2402.13499, H800, Tables VII and
// VIII); FlashAttention-2, written so, tops out at 335 TFLOP/s (34 %) on H100 (Dao 2023,
// §4.1). On Ampere and Ada it is the native instruction. Blackwell's share is not published.
constexpr double kHopperMmaSyncOfPeak = 0.629;
constexpr double kHopperWgmmaOfPeak = 0.964;
double MmaSyncShare(std::string_view architecture) {
  return architecture == "Hopper" ? kHopperMmaSyncOfPeak / kHopperWgmmaOfPeak : 1.0;
}
// What an attention kernel written for mma.sync gains from A100 to H100, measured on whole
// kernels: FlashAttention and FlashAttention-2, forward + backward in one benchmark on A100 80GB
// SXM4 and H100 80GB SXM5 (Dao 2023, arXiv 2307.08691; Dao-AILab/flash-attention
// assets/flash2_a100_fwd_bwd_benchmark.png and flash2_h100_fwd_bwd_benchmark.png), causal, head
// dimensions 64 and 128, 512 to 16k tokens: 1.57x to 1.79x over the 24 pairs, geometric mean
// 1.674 (FlashAttention 1.684, FlashAttention-2 1.665). mma.sync's share of the GEMM peak would
// give 0.6525 x 989.4 / 312 = 2.07x: attention kernels gain less than the instruction, since
// their exponentials (16 a clock per SM on both) and shared-memory traffic scale with SMs x
// clock (1.59x). A kernel whose rate was measured on A100 alone (the 2022 Triton one) is carried
// to Hopper so: this over the two peaks, 0.528 of the A100 share, per unit of the GPU's peak.
constexpr double kA100ToH100MmaSyncAttention = 1.674;
constexpr double kA100Bf16Peak = 312e12;
double AmpereAttentionOnHopper(std::string_view architecture) {
  return architecture == "Hopper" ? kA100ToH100MmaSyncAttention * kA100Bf16Peak / kH100Bf16Peak
                                  : 1.0;
}
// NVIDIA's cuDNN SDPA training benchmark (NVIDIA/cudnn-frontend
// benchmark/sdpa_benchmark_training/results): Llama 3.1's attention (64 query and 8 KV heads of
// 128, causal, non-deterministic backward), forward + backward milliseconds at each length, in
// BF16 (forward and backward apart), per-tensor FP8 (`fp8`) and block-scaled FP8 (`mxfp8`). GB200
// and GB300: the llama3.1 runs
// of 2026-07-24 (the same cuDNN 9.26, batch 2); H200: h200_919_only_cudnn of 2026-02-27 (cuDNN
// 9.19, batch 1, no MXFP8 on Hopper), the only Hopper run published.
constexpr double kSdpaLengths[] = {kShortestMeasuredAttentionLength, 4096, 8192, 16384, 32768};
struct SdpaRun {
  double bf16_fwd[5], bf16_bwd[5], fp8[5], mxfp8[5];
  double Bf16(size_t i) const { return bf16_fwd[i] + bf16_bwd[i]; }
};
constexpr SdpaRun kGb200Sdpa = {
    {0.125, 0.391, 1.336, 5.091, 22.428},
    {0.382, 1.173, 4.090, 16.573, 73.209},
    {0.096 + 0.417, 0.309 + 1.167, 1.093 + 3.802, 4.166 + 13.471, 16.482 + 52.660},
    {0.101 + 0.467, 0.321 + 1.333, 1.125 + 4.336, 4.265 + 15.670, 16.915 + 62.926},
};
constexpr SdpaRun kGb300Sdpa = {
    {0.094, 0.303, 1.105, 4.260, 16.716},
    {0.354, 1.096, 3.797, 14.507, 62.100},
    {0.071 + 0.364, 0.218 + 0.986, 0.760 + 3.095, 2.861 + 10.794, 11.228 + 41.482},
    {0.077 + 0.424, 0.238 + 1.203, 0.833 + 3.920, 3.126 + 14.142, 12.087 + 54.730},
};
constexpr SdpaRun kH200Sdpa = {
    {0.142, 0.465, 1.708, 6.531, 25.566},
    {0.464, 1.450, 5.083, 19.002, 75.688},
    {0.098 + 0.437, 0.322 + 1.459, 1.141 + 6.392, 4.357 + 29.422, 16.884 + 118.729},
    {},
};
// A ratio measured at each of kSdpaLengths (`at(i)`), at `sequence`: linear in log2 of the
// length between the measured ones, the end values beyond them.
template <typename At>
double AlongSdpaLengths(double sequence, At at) {
  const auto& t = kSdpaLengths;
  const size_t last = std::size(t) - 1;
  const double s = std::clamp(sequence, t[0], t[last]);
  size_t i = 1;
  while (i < last && s > t[i]) ++i;
  const double f = std::log2(s / t[i - 1]) / std::log2(t[i] / t[i - 1]);
  return at(i - 1) + f * (at(i) - at(i - 1));
}
// How much faster attention runs on Blackwell Ultra (B300, GB300) than on Blackwell at the same
// clock: Blackwell Ultra doubles the special-function units' exponential throughput that
// softmax needs (GB300 and GB200 print the same BF16 peak). GB200's BF16 forward + backward time
// over GB300's (1.132 at 2,048 tokens, 1.118, 1.107, 1.154, 1.213 at 32,768). The forward, where
// the exponentials weigh most, gains 1.20-1.34x, the backward 1.07-1.18x: a clock lifts both
// alike, the softmax the forward most. The clock is in the peaks: GB200 sustains 93.2 % of its
// printed peak (catalog `sustained_clock`, against B200), GB300 its printed one, 1/0.932 =
// 1.073x GB200's, which is what the backward gains at 2,048-8,192 tokens (1.070-1.079x). The
// rest is Blackwell Ultra's own: the measured ratio over that clock lead; 1 for every other
// architecture.
constexpr double kGb200SustainedClock = 0.932;  // data/catalog/gpus.yaml, GB200-NVL72
double AttentionArchitectureSpeedup(std::string_view architecture, double sequence) {
  if (architecture != "Blackwell Ultra") return 1.0;
  return AlongSdpaLengths(sequence,
                          [](size_t i) { return kGb200Sdpa.Bf16(i) / kGb300Sdpa.Bf16(i); }) *
         kGb200SustainedClock;
}
// A sliding window's attention kernel (GPT-OSS's windowed layers) over a causal one's: time,
// forward and backward, from the tiles each computes. A flash kernel runs a block of 128 queries
// against the 128-key blocks it must see: the causal one j + 1 of them for the j-th block, on
// average (n + 1) / 2 of n = L / 128; a window of w the diagonal block and the ceil((w - 1) / 128)
// behind it (fewer near the start). The causal kernel's own per-block costs are in the fitted
// rate; a windowed block meets so few key blocks that a fixed cost per query block, k key blocks'
// time, weighs: (tiles_w + n k) / tiles_c of the causal kernel's time. k is measured: cuDNN's
// SDPA training benchmark times GPT-OSS's windowed kernel (heads of 64, a window of 128, 128 query
// heads, batch 2) beside Llama 3.1's causal one (64 query heads of 128, batch 2) on GB300 and
// GB200 (the gpt_oss and llama3.1 runs of 2026-07-24, cuDNN 9.26), and a window of 1,024 (64 query
// heads of 64, batch 2) beside Llama's (batch 1) on H200 (h200_919_only_cudnn, 2026-02-27, cuDNN
// 9.19, the only Hopper windowed run); per head and batch, the forward at the head sizes' ratio
// (ForwardExponentialFactor), the backward at 128's rate per FLOP, as the step model runs them.
// The windowed kernels run 2.5-4.4x the causal kernel's time per tile they compute at a window of
// 128 on Blackwell, 1.1-2.0x at 1,024; GB300's run of cuDNN 9.19 at a window of 1,024, not used
// here, is met within 3 % forward and 21 % backward from 4,096 tokens (at 2,048 it runs 1.24x and
// 1.16x the causal kernel's time, where the share stops at 1). The 9.26 runs' GPT-OSS shape has as
// many KV heads as query heads (128 of 64), GPT-OSS's own 8; H200's k comes from a window of 1,024,
// whose backward k on GB300 is up to 1.7x the one at 128. Causal kernels pay a smaller cost per
// block: GB300's k would make their forward about 1.3x faster from 4,096 to 32,768 tokens, where
// cuDNN's is 1.16x.
struct WindowedSdpaRun {
  double window;
  double windowed_heads, causal_heads;      // query heads x batch
  double windowed_fwd[5], windowed_bwd[5];  // ms, kSdpaLengths
  const SdpaRun* causal;                    // Llama 3.1's run beside it
};
constexpr WindowedSdpaRun kGb300WindowedSdpa = {
    128,
    128 * 2,
    64 * 2,
    {0.100, 0.194, 0.382, 0.758, 1.509},
    {0.228, 0.441, 0.862, 1.719, 3.450},
    &kGb300Sdpa,
};
constexpr WindowedSdpaRun kGb200WindowedSdpa = {
    128,
    128 * 2,
    64 * 2,
    {0.108, 0.209, 0.412, 0.818, 1.630},
    {0.234, 0.461, 0.903, 1.820, 3.663},
    &kGb200Sdpa,
};
constexpr WindowedSdpaRun kH200WindowedSdpa = {
    1024,
    64 * 2,
    64 * 1,
    {0.166, 0.358, 0.738, 1.499, 3.021},
    {0.488, 1.042, 2.149, 4.392, 9.045},
    &kH200Sdpa,
};
constexpr double kAttentionTile = 128;
// The 128 x 128 tiles a causal kernel of `length` computes, and a window of `window`'s.
double CausalTiles(double length) {
  const double n = length / kAttentionTile;
  return n * (n + 1) / 2;
}
double WindowedTiles(double length, double window) {
  const double n = length / kAttentionTile;
  const double behind = std::ceil((window - 1) / kAttentionTile);
  const double start = std::min(behind, n);  // query blocks whose window reaches the first key
  return start * (start + 1) / 2 + (n - start) * (behind + 1);
}

// Where mma.sync is the native instruction (the share is then 1 by construction).
bool MmaSyncNative(std::string_view architecture) {
  return architecture == "Ampere" || architecture == "Ada Lovelace";
}

// Whether a layout runs the spec's EP overlap: Megatron-Core's rules (the spec refuses a stated
// layout that breaks them; a searched one runs without the overlap).
bool EpOverlapRuns(const model::Workload& w, const Layout& l) {
  return w.moe_comm_overlap && l.ep > 1 && l.recompute != model::Recompute::kFull &&
         (l.pp == 1 || l.virtual_stages > 1);
}

// What a sharding implementation moves through HBM per unsharded parameter of this rank per
// micro-batch, outside its collectives: `reduce` bytes per gradient in the reduction, `gathers`
// parameter all-gathers per micro-batch that copy out of the gather buffer, `gathered` bytes a
// parameter in each (bf16's 2; less with FP8 parameters). Each term is a
// memory-bound kernel reading and writing the unsharded tensor once (read from the code, not
// profiled; the 1/N terms on shards are left out):
// - FSDP1 (PyTorch 2.0-2.6; Composer 0.16 runs 2.1): the FlatParameter's gradient is the
//   backward of its split into the parameters' views, a cat of their gradients (2 B read, 2
//   written); _post_backward_hook casts it to the reduction dtype (`.to`: 2 + 4 for fp32) and the
//   reduce-scatter hook divides it in place by the pre-division factor (`div_`: 2 x `reduce`),
//   which is above 1 from 2 ranks. The all-gather writes into the FlatParameter: no copy.
// - FSDP2 (PyTorch 2.6, _fsdp_collectives.py): each all-gather is copied out into the parameters
//   (split_with_sizes_copy, 2 + 2; with torchao's float8 all-gather the FP8 bytes, 1 + 1 a
//   linear weight); the reduce-scatter input is a chunk_cat of the gradients
//   cast to the reduction dtype (2 + `reduce`); no division kernel (NCCL's AVG for fp32, bf16).
// - DeepSpeed ZeRO-3 (v0.16.1, stage3.py, coalesced_collectives.py): gradients copied into the
//   bucket (2 + 2), cast to the communication dtype when it is not bf16 (2 + 4), interleaved
//   into the rank-ordered flat buffer (torch.cat, 2 x `reduce`) and divided by the world size
//   there (2 x `reduce`); each all-gather copied out into the parameter (torch.cat, 2 + 2).
// - Megatron's distributed optimizer: the weight-gradient GEMM accumulates into its gradient buffer
//   and the reduction runs once per step: nothing per micro-batch.
double ShardingCopyBytes(model::ShardingImpl impl, double reduce, int gathers,
                         double gathered = 2) {
  const double cast = reduce != 2 ? 2 + reduce : 0;
  switch (impl) {
    case model::ShardingImpl::kFsdp1:
      return 4 + cast + 2 * reduce;
    case model::ShardingImpl::kFsdp2:
      return 2 * gathered * gathers + 2 + reduce;
    case model::ShardingImpl::kDeepSpeed:
      return 2 * gathered * gathers + 4 + cast + 4 * reduce;
    case model::ShardingImpl::kMegatron:
      return 0;
  }
  return 0;
}

// PyTorch eager's element-wise kernels in one Llama block (software.elementwise: eager), bytes of
// HBM traffic per token, forward and backward, counted from ibm-fms at 6440fee (March 2024, what
// fms-fsdp's 4ffb9bd trained; the count agrees within 0.1 B per hidden element with a trace of
// every aten op's bytes through that code, 7B's shape), one kernel per operation, each reading
// and writing HBM, broadcast operands once:
// - each RMSNorm (fms LayerNormParameterized): x.float() (2 + 4), pow (8), mean (4), x * rsqrt
//   (8), the cast back (4 + 2), the weight (4): 36 per hidden element forward; backward the
//   weight's two products and its sum (12), the cast (6), the rsqrt product's two and its sum
//   (24), mean's expand (4), pow's copy, scale and product (28), the two gradients' sum (12),
//   the cast back (6): 92;
// - rotary embeddings on q and k (positions.py): each is copied to fp32 (6), multiplied by the
//   fp32 frequencies broadcast to (..., 2, 2) (12.25), summed over the pair (12) and cast back
//   (6): 36.25 per element of its width either way (backward: the cast, the product, the
//   broadcast's sum, the cast back), and the frequencies' gather (0.4 per hidden element);
// - the MLP: SwiGLU's silu (4) and product (6) per MLP element forward, three backward kernels
//   of 6 each (GELU: 4 forward, 6 backward);
// - the residual adds (6 each, two forward) and backward the gradient sums where a tensor fans
//   out (the MLP's two inputs, q, k and v, the two residual branches: five of 6);
// - grouped-query attention expands K and V to the query heads with a copy (attention.py), read
//   at the KV width and written at the query width, forward, and summed back backward.
// Nothing is copied around scaled_dot_product_attention (its layout is the kernel's). Upper
// bounds where a tensor still sits in L2 (a 7B layer's bf16 activation at 8,192 tokens is 64 MB,
// H100's L2 50 MB). It is a Llama block's count (RMSNorm, rotary embeddings, a dense MLP) for
// any model the spec names, and the frequencies' share (their broadcast, 0.25 of the 36.25, and
// their gather, 0.4) is 7B's head size's: within 0.1 B per hidden element on fms-fsdp's shapes.
// The hidden stream's share (the norms, the frequencies' gather and broadcast read, the residual
// adds and the gradient sums, all h wide or per position) runs whole on every tensor-parallel
// rank without sequence parallelism; the rest of rotary embeddings, the MLP's activation and the
// K/V expand work on the rank's own heads and MLP columns.
struct ElementwiseBytes {
  double forward_bytes = 0, backward_bytes = 0;
  double replicated_forward_bytes = 0, replicated_backward_bytes = 0;  // of those
};
ElementwiseBytes EagerLlamaBytes(const model::ModelShape& m) {
  const double h = m.hidden, q = m.QueryWidth(), kv = m.KvWidth(), f = m.ffn_hidden;
  const bool swiglu = m.mlp == model::Mlp::kSwiglu;
  const double expand = kv < q ? 2 * (2 * kv + 2 * q) : 0;  // K and V
  ElementwiseBytes e;
  // The frequencies' broadcast read (0.25 of rotary's 36.25) is per position, whatever heads a
  // rank holds: replicated with the hidden stream.
  e.replicated_forward_bytes = 2 * 36 * h + 0.4 * h + 2 * 6 * h + 0.25 * (q + kv);
  e.replicated_backward_bytes = 2 * 92 * h + 5 * 6 * h + 0.25 * (q + kv);
  e.forward_bytes = e.replicated_forward_bytes + 36 * (q + kv) + (swiglu ? 10 : 4) * f + expand;
  e.backward_bytes = e.replicated_backward_bytes + 36 * (q + kv) + (swiglu ? 18 : 6) * f + expand;
  return e;
}

// The FP8 casts of one token through one layer, in bytes read and written, as Transformer Engine
// 2.8 runs them for the layer Megatron-Core builds (LayerNormLinear for QKV and the MLP's input
// projection, Linear for the attention's output projection and the MLP's output projection, the
// activation in BF16 between them, GroupedLinear for routed experts). A standalone quantize
// reads the BF16 tensor and writes the FP8 copies the GEMMs need: a cast-transpose, 4 B per
// element, with delayed scaling; 6 with current scaling (an amax pass first); 4.0625 for MXFP8
// (row- and column-wise copies, 1/32 B of scale each). The norm before QKV and the MLP writes
// FP8 itself under delayed scaling (then a transpose: net 1 B), and its amax with current
// scaling (then the cast-transpose: 4). Quantized: forward, the four GEMM inputs; backward,
// the four output gradients (QKV's d = q + 2 kv wide, the MLP's input projection's 2 f with
// SwiGLU). Routed experts quantize their inputs and output gradients alone, per token copy.
// Weights are quantized once per step (Megatron passes is_first_microbatch): not counted. MXFP8's
// scale swizzles (1/16 B per operand element per GEMM) are in its measured GEMM ceiling.
// NVFP4 (Transformer Engine's NVFP4BlockScaling) quantizes a BF16 tensor in two passes: its amax
// (read 2 B an element; the per-tensor FP32 scale above the blocks' E4M3 ones), then the
// quantize, which reads it again (2) and writes a row-wise copy (4 bits and an E4M3 scale per 16
// elements: 0.5625 B) and a column-wise one for the weight gradient (0.5625; through the random
// Hadamard transform, in the same kernel): 5.125 B an element, counted like MXFP8's (the norm
// writes BF16 and a quantize follows). Weights, 16 x 16 blocks, once per step: not counted.
constexpr double kNvfp4QuantizeBytes = 2 + 2 + 2 * (0.5 + 1.0 / 16);
struct Fp8Casts {
  double forward = 0, backward = 0;  // per token, one dense layer or one MoE layer
};
Fp8Casts Fp8CastBytes(const model::ModelShape& m, model::Fp8Recipe recipe, bool nvfp4,
                      bool moe_layer) {
  // A standalone quantize (q) and the one after a norm that writes FP8 or its amax (norm).
  double q = 4.0625, norm = 4.0625;  // MXFP8: the norm writes BF16, a quantize follows
  if (recipe == model::Fp8Recipe::kDelayed) q = 4, norm = 1;
  if (recipe == model::Fp8Recipe::kCurrent) q = 6, norm = 4;
  if (nvfp4) q = norm = kNvfp4QuantizeBytes;
  const double h = m.hidden, qw = m.QueryWidth(), d = qw + 2 * m.KvWidth();
  const double gate = m.MlpInputProjections();
  Fp8Casts c;
  c.forward = norm * h + q * qw;
  c.backward = q * h + q * d;
  if (!moe_layer) {
    c.forward += norm * h + q * m.ffn_hidden;
    c.backward += q * h + q * gate * m.ffn_hidden;
    return c;
  }
  // The router reads the norm's BF16 output, so the experts quantize their inputs alone.
  const double copies = m.moe.top_k + m.moe.shared_experts;
  c.forward += copies * q * (h + m.moe.ffn_hidden);
  c.backward += copies * q * (h + gate * m.moe.ffn_hidden);
  return c;
}

// What Megatron-Core runs in PyTorch eager where its fused kernels cannot, in bytes of HBM
// traffic per token, forward and backward, traced on CPU through its code (every ATen op's
// tensors read and written, views free; PyTorch 1.13's autograd) at Megatron-LM 2edffadb (May
// 2026, what Megatron Bridge v0.4.2 and the 26.04.01 container run) and unchanged at addc601f
// (26.06's). Each is GPT-OSS's; none has a published kernel time.
// - YaRN's rotary embeddings (rope_utils.apply_rotary_pos_emb): Transformer Engine's fused RoPE
//   takes no attention factor, so with YaRN's (0.1 ln 32 + 1 = 1.35 for GPT-OSS's scale of 32)
//   Megatron-Core warns and runs _apply_rotary_pos_emb_bshd on the queries and the keys: t * cos
//   (4), rotate_half's negation of half (2) and torch.cat (4), * sin (4), the sum (6) and a
//   torch.cat onto an empty pass-through slice (4): 24 bytes an element forward; backward the
//   two products (4 each), the negation and the concatenation of rotate_half (2 + 4), the sum of
//   the two branches (6), the empty slice's zero-filled gradient (2) and its sum (6): 28. Counted
//   beyond TE's fused kernel, which reads and writes each element once each way (8), the cost of
//   the fused path it replaces: 20 forward, 24 backward. Packed sequences (cu_seqlens) take TE's
//   fused THD kernel before that check, so they run fused.
// - A clamped quick-GeGLU on the routed experts' per-expert path (weighted_bias_quick_geglu_impl):
//   the clamp runs before the fused activation, on chunks of the first GEMM's output, as two
//   clamps (4 + 4 per element of the expert's width) and torch.cat (8); backward each clamp's
//   mask and where (ge, le, logical_and, where: 14; le, where: 8) and the chunks' gradients
//   concatenated (8): 16 forward, 30 backward, per routed copy per element of the expert's width.
//   The fused grouped MLP clamps inside its kernel; Megatron-Core's fused SwiGLU takes no clamp
//   at 2edffadb (later ones clamp inside its jit-fused kernel): neither is an eager path.
// - The experts' second bias on the per-expert path (TEGroupedMLP._apply_bias, the first is in
//   the GEMM's epilogue): per local expert bias * probs (2) and its sum with the output (6), then
//   torch.cat (4): 12 forward per routed copy per hidden element; backward the two products'
//   gradients (4 + 4) and their reductions (2 + 2) over each expert's split, the split's
//   concatenation (4): 16.
struct MegatronEager {
  double forward = 0, backward = 0;          // per token, each layer (this rank's heads)
  double moe_forward = 0, moe_backward = 0;  // per token, each MoE layer (this rank's copies)
  double moe_act_forward = 0;                // of moe_forward: what recomputing moe_act re-runs
};
MegatronEager MegatronEagerBytes(const model::ModelShape& m, const model::Workload& w, int tp,
                                 int etp) {
  MegatronEager e;
  if (!w.RunsMegatronCore()) return e;
  if (m.rope_scaling == model::RopeScaling::kYarn && w.elementwise == model::Elementwise::kFused &&
      m.document_length == 0) {
    const double qk = (m.QueryWidth() + m.KvWidth()) / tp;
    e.forward = 20 * qk;
    e.backward = 24 * qk;
  }
  if (!m.IsMoe() || w.moe_fused_grouped_mlp) return e;
  const double copies = m.moe.PaddedTopK() * etp / tp;  // routed copies a token on this rank
  const double width = static_cast<double>(m.moe.ffn_hidden) / etp;
  if (w.ClampsExpertsInEager()) {
    e.moe_act_forward = 16 * width * copies;
    e.moe_forward += e.moe_act_forward;
    e.moe_backward += 30 * width * copies;
  }
  if (m.linear_bias) {
    e.moe_forward += 12 * m.hidden * copies;
    e.moe_backward += 16 * m.hidden * copies;
  }
  return e;
}

// The spec with `l` on `gpus` GPUs and `accumulation` micro-batches per step: what
// the plan's memory model reads.
model::Spec WithLayout(const model::Spec& spec, const Layout& l, int gpus, int accumulation) {
  model::Spec s = spec;
  auto& w = s.workload;
  w.tensor = l.tp;
  w.pipeline = l.pp;
  w.context = l.cp;
  w.virtual_stages = l.virtual_stages;
  w.micro_batch = l.micro_batch;
  w.accumulation = accumulation;
  w.global_batch = l.micro_batch * accumulation * l.dp;
  w.recompute = l.recompute;
  w.strategy = l.strategy;
  w.expert = l.ep;
  w.shard = l.shard;
  w.recompute_layers = l.recompute_layers;
  const int gpn = spec.cluster.nodes.gpus_per_node;
  s.cluster.nodes.count = std::max(1, (gpus + gpn - 1) / gpn);
  return s;
}

// FP8 attention's speed over BF16 attention's on a GPU of `architecture` at a kernel's length:
// cuDNN's measured forward + backward, per-tensor or, under MXFP8, block-scaled (Transformer
// Engine's MXFP8 attention); 1 where nothing was measured.
double Fp8AttentionSpeedup(std::string_view architecture, model::Fp8Recipe recipe,
                           double sequence) {
  // Each GPU's BF16 time over its FP8 one. The forward gains 1.2-1.5x; the backward, three
  // quarters of the time, runs slower at 2,048-4,096 tokens block-scaled (0.82-0.91x) and gains
  // little per-tensor there, and on Hopper cuDNN 9.19's FP8 backward is slower than its BF16 one
  // from 4,096 tokens on; so the whole runs at 0.75-1.50x BF16's speed.
  const SdpaRun* run = architecture == "Hopper"            ? &kH200Sdpa
                       : architecture == "Blackwell"       ? &kGb200Sdpa
                       : architecture == "Blackwell Ultra" ? &kGb300Sdpa
                                                           : nullptr;
  if (run == nullptr) return 1.0;  // not measured: BF16's rate
  const bool mx = recipe == model::Fp8Recipe::kMxfp8 && architecture != "Hopper";
  return AlongSdpaLengths(
      sequence, [&](size_t i) { return run->Bf16(i) / (mx ? run->mxfp8[i] : run->fp8[i]); });
}

// One pipeline rank's micro-batch: its transformer layers (and MoE layers among them), the share
// of them fully recomputed, and the times of its compute phases (t_logits and t_loss zero on a
// rank without the output layer).
struct StageWork {
  double layers = 0, moe_layers = 0, recomputed = 0;
  double t_gemm = 0, t_logits = 0, t_routed = 0, t_attn = 0, t_attn_fwd = 0;
  double t_rec_gemm = 0, t_rec = 0, t_loss = 0, t_mb = 0;
  double t_attn_bwd_extra = 0;  // FP8 attention's windowed backward over the whole square
  // Layers whose attention core recompute re-runs (every layer with selective recompute of it,
  // the fully recomputed share otherwise), and the share whose MLP's forward TP collectives
  // selective recompute of the dense MLP runs again.
  double attn_again = 0, mlp_again = 0;
};

}  // namespace

namespace {
// Whether the attention kernels run in FP8: FP8 attention asked for, an FP8 or NVFP4 precision,
// the native kernel.
bool Fp8AttentionRuns(const model::Workload& w) {
  return w.fp8_attention && w.NarrowPrecision() &&
         w.attention_kernel == model::AttentionKernel::kNative;
}
}  // namespace

double Fp8AttentionFactor(const model::Workload& w, std::string_view architecture, int cp) {
  if (!Fp8AttentionRuns(w)) return 1.0;
  const bool fp4 = w.precision == model::Precision::kFp4;
  // Beside NVFP4's GEMMs, FP8 attention scales per tensor (NVFP4BlockScaling's fp8_dpa, with
  // NVTE_DPA_FP8_RECIPE=Float8CurrentScaling as MLPerf v5.1's 8B NVFP4 configs set it).
  return Fp8AttentionSpeedup(architecture, fp4 ? model::Fp8Recipe::kCurrent : w.fp8_recipe,
                             w.model.AttentionSpan() / cp);
}

namespace {
double TensorFlopsPerExponential(std::string_view architecture) {
  // Dense BF16 tensor FLOPs a clock per SM over MUFU.EX2 results a clock per SM (16 on Ampere,
  // Hopper and Blackwell; CUDA C++ Programming Guide, arithmetic instruction throughput): A100
  // 2,048 (312 TFLOP/s over 108 SMs at 1.41 GHz), H100 4,096 (989.4 over 132 at 1.83; "989
  // TFLOPS of matmul but only 3.9 TFLOPS of special functions", FlashAttention-3 §3), B200 8,192
  // (FlashAttention-4: tensor cores 2.25x Hopper's, the exponential unit unchanged), Blackwell
  // Ultra the same tensor cores with twice the exponentials (NVIDIA, "Making Softmax More
  // Efficient with NVIDIA Blackwell Ultra").
  if (architecture == "Ampere") return 2048.0 / 16;
  if (architecture == "Hopper") return 4096.0 / 16;
  if (architecture == "Blackwell") return 8192.0 / 16;
  if (architecture == "Blackwell Ultra") return 8192.0 / 32;
  return 0;
}
}  // namespace

double ForwardExponentialFactor(std::string_view architecture, int head_dim, bool fp8) {
  constexpr double kFittedHeadDim = 128;
  // FP8 matmuls run twice BF16's FLOPs a clock beside the same exponentials.
  const double x = TensorFlopsPerExponential(architecture) * (fp8 ? 2 : 1);
  if (x <= 0 || head_dim <= 0) return 1.0;
  auto time_per_flop = [x](double d) { return (4 * d + x) / (4 * d); };
  return time_per_flop(head_dim) / time_per_flop(kFittedHeadDim);
}

WindowedAttentionTime WindowedAttentionShare(std::string_view architecture, double length,
                                             double window) {
  if (window <= 0 || window >= length || length <= 0) return {};
  // Blackwell and Blackwell Ultra their own runs; Hopper's for the rest (no other is published).
  const bool blackwell = architecture == "Blackwell" || architecture == "Blackwell Ultra";
  const std::string_view measured = blackwell ? architecture : "Hopper";
  const WindowedSdpaRun& run = architecture == "Blackwell Ultra" ? kGb300WindowedSdpa
                               : architecture == "Blackwell"     ? kGb200WindowedSdpa
                                                                 : kH200WindowedSdpa;
  // The fixed cost a query block, in key blocks, at the i-th measured length: the windowed
  // kernel's time a head over the causal one's (the windowed heads of 64 do half the FLOPs of
  // Llama's 128 a tile, the forward at its exponentials' rate), less the windowed tiles, over the
  // query blocks.
  auto fixed = [&](const double* windowed, const double* causal, double flop_time) {
    return [&run, windowed, causal, flop_time](size_t i) {
      const double l = kSdpaLengths[i];
      const double ratio =
          (windowed[i] / run.windowed_heads) / (0.5 * flop_time * causal[i] / run.causal_heads);
      return (ratio * CausalTiles(l) - WindowedTiles(l, run.window)) / (l / kAttentionTile);
    };
  };
  // Never more than the causal kernel's time: the costs are measured from 2,048 tokens, and
  // shorter spans, where a fixed cost of k blocks would outweigh the few tiles, take 2,048's.
  auto share = [&](double k) {
    return std::min(
        1.0, (WindowedTiles(length, window) + length / kAttentionTile * k) / CausalTiles(length));
  };
  const double fwd_time = ForwardExponentialFactor(measured, 64, false);
  return {
      share(AlongSdpaLengths(length, fixed(run.windowed_fwd, run.causal->bf16_fwd, fwd_time))),
      share(AlongSdpaLengths(length, fixed(run.windowed_bwd, run.causal->bf16_bwd, 1.0))),
  };
}

double Fp8AttentionStepSpeed(const model::Workload& w, std::string_view architecture, int cp) {
  if (!Fp8AttentionRuns(w)) return 1.0;
  const int d = w.model.HeadDim();
  return Fp8AttentionFactor(w, architecture, cp) *
         (2 + ForwardExponentialFactor(architecture, d, false)) /
         (2 + ForwardExponentialFactor(architecture, d, true));
}

std::string_view ConfidenceName(Confidence c) {
  switch (c) {
    case Confidence::kCalibrated:
      return "calibrated";
    case Confidence::kExtrapolated:
      return "extrapolated";
    case Confidence::kUnmodelled:
      return "unmodelled";
  }
  return "?";
}

std::string RegimeText(const Regime& r) {
  std::string out(ConfidenceName(r.level));
  for (size_t i = 0; i < r.reasons.size(); ++i) out += (i ? "; " : ": ") + r.reasons[i];
  return out;
}

namespace {
// docs/sim.md has the runs; the rows are tokens/s per GPU, the Korthikanti rows with the 2021
// stack as they ran (their calibrated megatron-core-2024 predictions are not counted here).
constexpr StackCheck kStackChecks[] = {
    {"composer-2023", "Ampere", "LLM Foundry PyTorch FSDP runs", 86, -0.184, 0.241},
    {"composer-2023", "Hopper", "LLM Foundry PyTorch FSDP runs", 59, -0.072, 0.156},
    {"megatron-2021", "Ampere", "Korthikanti 2022, BLOOM and MT-NLG runs", 8, -0.126, 0.080},
    {"pytorch-fsdp1", "Ampere", "IBM fms-fsdp runs", 4, -0.181, -0.061},
    {"pytorch-fsdp1", "Hopper", "IBM fms-fsdp runs", 4, -0.004, 0.133},
    // AI2's OLMo-core on one node (+1.7 % to +10.9 %, the 13B in FP8 +27.1 %) and torchtitan on
    // power-limited H100s (+8.9 % to +61.3 %: the catalog's peak is the 700 W part's; their
    // memory is within 10 %).
    {"pytorch-fsdp2", "Hopper",
     "OLMo-core and torchtitan runs (torchtitan's at a 500 W power limit)", 18, 0.017, 0.613},
    {"deepspeed-zero3", "Ampere", "DeepSpeed-on-Azure GPT-3 175B run", 1, -0.028, -0.028},
};
}  // namespace

// The share of a pipeline's steady-state sends left exposed. Plain 1F1B exchanges each
// micro-batch's activation and gradient with batched, blocking send/recv pairs
// (send_forward_recv_backward, send_backward_recv_forward wait before the next compute;
// Megatron-Core refuses overlap_p2p_comm there, "Non-interleaved pipeline parallelism does not
// support overlapping p2p communication", and Megatron Bridge sets batch_p2p_comm; DeepSpeed's
// pipeline engine sends blocking too): all of them. The interleaved schedule overlaps them with
// the next chunk (`software.pp_comm_overlap`) but for `pp_p2p_exposed`.
double PipelineSendsExposed(const model::Workload& w, int virtual_stages, const Efficiency& e) {
  return virtual_stages > 1 && w.pp_comm_overlap ? e.pp_p2p_exposed : 1.0;
}

std::span<const StackCheck> StackChecks() { return kStackChecks; }

bool IsCalibratedStack(std::string_view stack) {
  return stack == "megatron-core-2024" || stack == "nemo-2025";
}

Regime RegimeOf(const model::Spec& spec, const Layout& l, int gpus) {
  Regime r;
  auto outside = [&](Confidence c, std::string why) {
    r.level = std::max(r.level, c);
    r.reasons.push_back(std::move(why));
  };
  const auto& w = spec.workload;
  const auto& gpu = spec.cluster.nodes.gpu;
  const int gpn = spec.cluster.ScaleUpDomain();
  // What the spec states and the step model does not read.
  if (!IsCalibratedStack(w.stack)) {
    // Quote what the stack was checked on, on this architecture, with its measured bias.
    std::vector<std::string_view> elsewhere;
    const StackCheck* here = nullptr;
    for (const StackCheck& c : kStackChecks) {
      if (c.stack != w.stack) continue;
      if (c.architecture == gpu.architecture) {
        here = &c;
      } else {
        elsewhere.push_back(c.architecture);
      }
    }
    std::string checked;
    if (here && here->rows == 1) {
      checked = fmt::format("checked on one {} on {}: predicted throughput {:+.1f} % off it",
                            here->runs, here->architecture, 100 * here->low);
    } else if (here) {
      checked = fmt::format(
          "checked on {} {} on {}: predicted throughput {:+.1f} % to {:+.1f} % off the published",
          here->rows, here->runs, here->architecture, 100 * here->low, 100 * here->high);
    } else if (!elsewhere.empty()) {
      checked = fmt::format("checked on {} only", fmt::join(elsewhere, " and "));
    } else {  // no stack today: each has a StackChecks entry; kept for the next one
      checked = "no published run checked";
    }
    outside(Confidence::kExtrapolated,
            fmt::format("the {} stack ({}; calibrated: megatron-core-2024, nemo-2025)", w.stack,
                        checked));
  }
  if (!w.software_departures.empty()) {
    outside(Confidence::kExtrapolated,
            fmt::format("software set against the {} stack ({})", w.stack,
                        fmt::join(w.software_departures, ", ")));
  }
  // Packed documents: the examples' attention kernels, shorter than any cuDNN's benchmark times,
  // at its shortest length's rate; with CP, Transformer Engine pads each document to a multiple
  // of 2 x CP and splits it, which the exchange does not count.
  if (w.model.AttentionSpan() < w.model.sequence) {
    const double kernel = w.model.AttentionSpan() / l.cp;
    if (kernel < kShortestMeasuredAttentionLength) {
      outside(Confidence::kExtrapolated,
              fmt::format("attention over packed documents, {:.0f} tokens a kernel, at the rate "
                          "measured from {:.0f} (checked on Llama 3 70B fine-tuning at about 256)",
                          kernel, kShortestMeasuredAttentionLength));
    }
    if (l.cp > 1) {
      outside(Confidence::kExtrapolated,
              "context parallelism over packed documents (each padded to a multiple of 2 x CP; "
              "the K/V exchange counted as for whole sequences)");
    }
  }
  // LoRA: checked on Megatron Bridge's Llama 3 70B rows, rank 16 on linear_qkv alone, on the
  // nemo-2025 stack. Adapters on the other layers add GEMMs of the same kind and, with sequence
  // parallelism, the MLP's input adapter's exchange; what else differs was not measured.
  const model::Lora& lora = w.model.lora;
  if (lora.Enabled() && (lora.proj || lora.fc1 || lora.fc2 || !lora.qkv)) {
    outside(Confidence::kExtrapolated,
            fmt::format("LoRA on {} (checked on linear_qkv alone)", fmt::join(lora.Names(), ", ")));
  }
  // The adapters' exchanges and the frozen layers' saved inputs are Megatron Bridge's and
  // Transformer Engine's; PyTorch FSDP1 keeps full gradients for a FlatParameter that mixes
  // frozen and trained weights.
  if (lora.Enabled() && !w.RunsMegatronCore()) {
    outside(Confidence::kExtrapolated,
            fmt::format("LoRA on the {} stack (checked on Megatron Bridge's)", w.stack));
  }
  if (w.model.WindowedLayers() > 0) {
    outside(Confidence::kExtrapolated,
            "sliding-window attention (the windowed kernels' time from the tiles they compute "
            "and a cost per query block measured on cuDNN's, Hopper's and Blackwell's alone; "
            "checked on GPT-OSS alone)");
    if (l.cp > 1) {
      outside(Confidence::kExtrapolated,
              "context parallelism with sliding-window attention (the K/V exchange and FP8 "
              "attention's whole-square backward counted for every layer as without the window)");
    }
  }
  if (w.model.IsMoe()) {
    outside(Confidence::kExtrapolated,
            "a mixture of experts (checked on twenty-three Qwen3 runs, -13 % to +23 %, and eight "
            "GPT-OSS runs, +14 % to +50 %, every one with balanced routing; not calibrated)");
    // The step times every expert its balanced share; the router's own choice loads some ranks
    // more (Megatron Bridge's verification card for Qwen3 30B-A3B against its EP-overlap skill's
    // forced-balance run of the same shape, dispatcher and graphs: docs/sim.md, "Megatron
    // Bridge's verification cards, 2026").
    if (w.model.moe.natural_routing) {
      outside(Confidence::kUnmodelled,
              "natural routing (timed as balanced; in their first 100 steps Megatron Bridge's "
              "Qwen3 30B-A3B runs took 1.23x the step of a forced-balance run of the same shape "
              "on 16 H100s, 1.9x that of the performance recipe on 8 GB200s in MXFP8, where more "
              "differed)");
    }
  }
  if (w.moe_comm_overlap && l.ep > 1 && !EpOverlapRuns(w, l)) {
    outside(Confidence::kExtrapolated,
            fmt::format("EP overlap does not run with {} (Megatron-Core refuses it): predicted "
                        "without it",
                        l.recompute == model::Recompute::kFull
                            ? "full recompute"
                            : "pipeline stages and no virtual stages"));
  }
  if (!w.flash_attention) {
    outside(Confidence::kExtrapolated, "unfused attention (checked with flash attention)");
  }
  if (w.attention_kernel != model::AttentionKernel::kNative && gpu.architecture != "Hopper" &&
      !MmaSyncNative(gpu.architecture)) {
    const bool triton = w.attention_kernel == model::AttentionKernel::kTriton2022;
    outside(Confidence::kExtrapolated,
            fmt::format("{} attention on {} (mma.sync's share of its peak is not published; "
                        "taken as 1{})",
                        triton ? "the 2022 Triton" : "mma.sync", gpu.architecture,
                        triton ? ", and the kernel's rate was measured on A100" : ""));
  }
  if (!w.tp_comm_overlap && l.tp > 1) {
    outside(Confidence::kExtrapolated, "TP without communication overlap (checked with it)");
  }
  if (!w.dp_comm_overlap && l.dp * l.cp > 1) {
    outside(Confidence::kExtrapolated, "DP without communication overlap (checked with it)");
  }
  if (l.tp > 1 && !w.sequence_parallel) {
    outside(Confidence::kExtrapolated, "TP without sequence parallelism (checked with it)");
  }
  // The published runs' ranges.
  // Blackwell Ultra (GB300, B300) is Blackwell's tensor core with more memory, FP4 and a faster
  // softmax (AttentionArchitectureSpeedup).
  const bool hopper = gpu.architecture == "Hopper",
             blackwell = gpu.architecture.rfind("Blackwell", 0) == 0;
  if (!hopper && !blackwell && gpu.architecture != "Ampere") {
    outside(Confidence::kExtrapolated,
            fmt::format("{} (checked on A100, H100, B200, GB200 and GB300 only)", gpu.name));
  }
  const bool fp8 = w.precision == model::Precision::kFp8;
  if (w.precision == model::Precision::kFp4) {
    // NVFP4: its GEMM speed measured on B300 only, checked on nineteen rows (docs/sim.md).
    outside(Confidence::kExtrapolated,
            "NVFP4 (checked on NeMo's and MLPerf's Llama rows on B200, B300, GB200 and GB300)");
  } else if (!fp8 && w.precision != model::Precision::kBf16) {
    outside(Confidence::kExtrapolated, "precision other than BF16 or FP8");
  } else if (blackwell && !fp8) {
    outside(Confidence::kExtrapolated, "BF16 on Blackwell (checked in FP8)");
  }
  if (l.tp > gpn) {
    outside(Confidence::kExtrapolated, fmt::format("TP{} across nodes", l.tp));
  }
  // Rack-scale NVLink: checked on GB200 and GB300 NVL72 (NeMo's rows, to 64 GPUs in a domain).
  if (gpn > 72 && gpus > 72) {
    outside(Confidence::kExtrapolated,
            fmt::format("a {}-GPU NVLink domain (calibrated to NVL72's 72)", gpn));
  }
  if (OffloadedLayers(w, l.pp, l.recompute) > 0 && gpu.form_factor != "Superchip") {
    outside(Confidence::kExtrapolated,
            "activation offload over PCIe (checked over a Grace superchip's NVLink-C2C)");
  }
  if (l.tp > 8) outside(Confidence::kExtrapolated, fmt::format("TP{} (calibrated to 8)", l.tp));
  // Interleaving: the published runs go to 20 chunks a rank (Megatron Bridge's Llama 3 70B
  // fine-tuning: GB300 PP2 VP20, H100 PP4 VP20 at one layer a chunk; MLPerf's GPT-3 12, one
  // layer each; NeMo's 405B 8, GB300's 235B 12); the per-chunk sends beyond that are the model's
  // alone.
  constexpr int kMostCheckedVirtualStages = 20;
  if (l.virtual_stages > kMostCheckedVirtualStages) {
    outside(Confidence::kExtrapolated,
            fmt::format("{} virtual stages (checked to {}: Megatron Bridge's Llama 3 70B "
                        "fine-tuning)",
                        l.virtual_stages, kMostCheckedVirtualStages));
  }
  if (l.pp > 16) outside(Confidence::kExtrapolated, fmt::format("PP{} (calibrated to 16)", l.pp));
  // Context parallelism beyond 2: NeMo's long-sequence runs check it to 16 on B200 (+9 % to
  // +14 %) and to 32 on H100 (-8 % to -4 %).
  if (l.cp > 2) {
    outside(Confidence::kExtrapolated,
            fmt::format("CP{} (calibrated to 2; NeMo's long-sequence runs check it to 16 on B200 "
                        "and 32 on H100)",
                        l.cp));
  }
  if (l.micro_batch > 2) {
    outside(Confidence::kExtrapolated,
            fmt::format("micro-batch {} (calibrated to 2)", l.micro_batch));
  }
  if (l.recompute != model::Recompute::kNone) {
    outside(Confidence::kExtrapolated,
            fmt::format("{} recompute (calibrated without)",
                        model::RecomputeLabel(l.recompute, spec.workload.recompute_modules)));
  }
  switch (l.strategy) {
    case model::Strategy::kZero1:
      break;
    case model::Strategy::kFsdp:
    case model::Strategy::kZero3:
      // A shard group inside a scale-up domain gathers there; its replicas all-reduce across.
      if (gpus > gpn && !(l.shard > 0 && l.tp * l.shard <= gpn)) {
        outside(Confidence::kExtrapolated,
                fmt::format("{} beyond one node (calibrated inside one; LLM Foundry's runs "
                            "check it to 512 GPUs)",
                            model::StrategyName(l.strategy)));
      }
      if (l.shard > 0 && l.shard < l.dp * l.cp) {
        outside(Confidence::kExtrapolated,
                fmt::format("hybrid sharding in groups of {} (checked on one IBM fms-fsdp run on "
                            "A100 and one on H100)",
                            l.shard));
      }
      break;
    case model::Strategy::kZero2:
      outside(Confidence::kExtrapolated,
              "zero2 (LLM Foundry's runs check it to 512 GPUs; calibrated: distributed "
              "optimizer, FSDP)");
      break;
    default:
      outside(Confidence::kExtrapolated, fmt::format("{} (calibrated: distributed optimizer, FSDP)",
                                                     model::StrategyName(l.strategy)));
  }
  // The largest calibration run is Megatron-Core's 177B on 4,608 GPUs (within 15 % at both ends
  // of its strong scaling from 96); a step up to twice that count is still called calibrated, and
  // the reason says where the margin ends. The largest run checked, not fitted, is NVIDIA's
  // MLPerf Training GPT-3 175B on 11,616 H100s in FP8 (docs/sim.md): the reason names it, and
  // the level stays extrapolated (one benchmark, one precision, a stack's features the model
  // lacks).
  constexpr int kLargestCalibratedGpus = 4608;
  constexpr int kLargestCheckedGpus = 11616;
  if (gpus > 2 * kLargestCalibratedGpus) {
    outside(
        Confidence::kExtrapolated,
        fmt::format("{} GPUs (calibrated to {}, with a margin to {}; MLPerf's runs check it "
                    "to {})",
                    gpus, kLargestCalibratedGpus, 2 * kLargestCalibratedGpus, kLargestCheckedGpus));
  }
  return r;
}

double LoraTpAllReduces(const model::Workload& w, int tp, bool sequence_parallel) {
  const model::ModelShape& m = w.model;
  if (!m.lora.Enabled() || tp <= 1) return 0;
  // LoRA's adapters move activations over TP on their own, in BF16 over NCCL on the compute
  // stream (Megatron Bridge's ParallelLinearAdapter, peft/utils.py), per adapted layer:
  // - beside a column-parallel layer fed by the norm (QKV, the MLP's input projection): without
  //   sequence parallelism A's input gradient is all-reduced (1); with it and TP overlap the
  //   adapter gathers its input forward and reduce-scatters its gradient backward (1), and the
  //   layer's own gather loses userbuffers' overlap, since Transformer Engine turns it off for a
  //   norm whose output is returned (return_layernorm_output), and waits (0.5); with sequence
  //   parallelism without TP overlap the adapter takes Transformer Engine's gathered norm output
  //   (return_layernorm_output_gathered) and moves nothing;
  // - beside a row-parallel layer (the attention's and the MLP's output projections): B's output
  //   is gathered over TP forward (0.5) and, with sequence parallelism, scattered back to the
  //   sequence shards, whose backward gathers (0.5).
  const double column = sequence_parallel ? (w.tp_comm_overlap ? 1.5 : 0.0) : 1.0;
  const double row = sequence_parallel ? 1.0 : 0.5;
  const double dense = m.DenseShare();
  return (m.lora.qkv ? column : 0) + (m.lora.fc1 ? column * dense : 0) + (m.lora.proj ? row : 0) +
         (m.lora.fc2 ? row * dense : 0);
}

std::string Layout::Describe() const {
  const bool some = recompute == model::Recompute::kFull && recompute_layers > 0;
  return fmt::format("TP{} PP{} CP{} DP{} mb{} v{} {}{} {}{}{}", tp, pp, cp, dp, micro_batch,
                     virtual_stages, model::RecomputeName(recompute),
                     some ? fmt::format("({})", recompute_layers) : "",
                     model::StrategyName(strategy), ep > 1 ? fmt::format(" EP{}", ep) : "",
                     shard > 0 && shard < dp * cp ? fmt::format(" shard{}", shard) : "");
}

Layout LayoutOf(const model::Spec& spec) {
  const auto& w = spec.workload;
  Layout l;
  l.tp = w.tensor;
  l.pp = w.pipeline;
  l.cp = w.context;
  l.micro_batch = w.micro_batch;
  l.virtual_stages = w.virtual_stages;
  l.recompute = w.recompute;
  l.strategy = w.strategy;
  l.ep = w.expert;
  l.shard = w.shard;
  l.recompute_layers = w.recompute_layers;
  l.dp = spec.cluster.nodes.TotalGpus() / std::max(1, l.tp * l.pp * l.cp);
  return l;
}

Result<StepBreakdown> AnalyticalStepModel::Step(const model::Spec& spec, Layout l, int gpus) const {
  const auto& m = spec.workload.model;
  const auto& nodes = spec.cluster.nodes;
  const model::GpuSpec& gpu = nodes.gpu;
  // Communication places groups on scale-up domains: a node, or a rack-scale NVLink domain.
  const int gpn = spec.cluster.ScaleUpDomain();
  const int mp = l.tp * l.pp * l.cp;
  if (gpus < mp || gpus % mp != 0) {
    return InvalidArgument(
        fmt::format("{} GPUs do not hold TP{} x PP{} x CP{}", gpus, l.tp, l.pp, l.cp));
  }
  if (m.heads % l.tp != 0 ||
      !model::PipelineSplitFits(m.layers, l.pp, l.virtual_stages, spec.workload.pipeline_split) ||
      m.sequence % l.cp != 0) {
    return InvalidArgument(fmt::format("TP{} PP{} v{} CP{} does not divide the model", l.tp, l.pp,
                                       l.virtual_stages, l.cp));
  }
  // Megatron's ColumnParallelLinear splits an adapter's A beside QKV or the MLP's input
  // projection over TP by its rank.
  if (m.lora.Enabled() && (m.lora.qkv || m.lora.fc1) && m.lora.rank % l.tp != 0) {
    return InvalidArgument(fmt::format("TP{} does not divide LoRA's rank {}", l.tp, m.lora.rank));
  }
  l.dp = gpus / mp;
  const int global = spec.workload.global_batch;
  if (global % (l.dp * l.micro_batch) != 0) {
    return InvalidArgument(fmt::format("global batch {} is not a multiple of DP{} x micro-batch {}",
                                       global, l.dp, l.micro_batch));
  }
  const int accumulation = global / (l.dp * l.micro_batch);
  if (!model::InterleavingRuns(l.virtual_stages, l.pp, accumulation)) {
    return InvalidArgument(fmt::format("v{} needs at least PP{} micro-batches a step, not {}",
                                       l.virtual_stages, l.pp, accumulation));
  }
  if (l.ep > 1 &&
      (!m.IsMoe() || !model::ExpertParallelFits(m.moe.experts, l.ep, l.tp, l.dp * l.cp))) {
    return InvalidArgument(fmt::format("EP{} must divide the experts and DP{} x CP{} (x TP{})",
                                       l.ep, l.dp, l.cp, l.tp));
  }
  const int etp = model::ExpertTensor(l.tp, l.dp * l.cp, l.ep);
  const bool fully_sharded =
      l.strategy == model::Strategy::kZero3 || l.strategy == model::Strategy::kFsdp;
  if (l.shard > 0 && fully_sharded &&
      (!model::ShardGroupFits(l.shard, l.dp * l.cp, l.tp, spec.cluster.ScaleUpDomain()) ||
       !model::ExpertsFitShardGroup(l.shard, l.tp, l.dp * l.cp, l.ep))) {
    return InvalidArgument(fmt::format(
        "shard group {} must divide DP{} x CP{} without straddling a scale-up domain, and hold "
        "whole EP{} x ETP{} groups of its x TP{} ranks",
        l.shard, l.dp, l.cp, l.ep, etp, l.tp));
  }

  StepBreakdown r;
  r.layout = l;
  if (l.recompute == model::Recompute::kSelective) {
    r.recompute_modules = spec.workload.recompute_modules;
  }
  r.regime = RegimeOf(spec, l, gpus);
  r.micro_batches = accumulation;
  const model::Precision precision = spec.workload.precision;
  // The printed peak at the clocks this GPU sustains (GB200: below its datasheet's lead over
  // B200, whose measured ceilings it borrows; catalog `sustained_clock`).
  const double peak = gpu.SustainedPeakFlops(precision);
  auto ceiling_of = [&](model::Precision p) {
    const double e = gpu.MatmulEfficiency(p);
    return e > 0 ? e : 0.8;
  };
  // MXFP8's GEMMs run below per-tensor FP8's measured ceiling: the block scales enter the tensor
  // core's main loop, and Transformer Engine swizzles both operands' scales before each call.
  // Transformer Engine's GEMM profiling guide (B300, the twelve GEMMs of a 5B layer,
  // pre-quantized, scale swizzles inside the timed call): MXFP8 7.161 ms, FP8 with current
  // (per-tensor) scaling 6.812 ms.
  constexpr double kMxfp8OfPerTensorFp8 = 6.812 / 7.161;
  const bool mxfp8 =
      precision == model::Precision::kFp8 && spec.workload.fp8_recipe == model::Fp8Recipe::kMxfp8;
  const double ceiling = ceiling_of(precision) * (mxfp8 ? kMxfp8OfPerTensorFp8 : 1.0);
  // FP8 recipes (Transformer Engine, as Megatron-Core and NeMo run it) put the transformer
  // layers' linear GEMMs in FP8 and keep attention (DotProductAttention; FP8 attention is
  // opt-in, software.fp8_attention) and the output layer (a plain, not a TE, linear layer) in BF16,
  // each at its own measured ceiling (H100 FP8 70.9 %, BF16 80.3 % of their peaks). Before issue 13
  // the BF16 ceiling was applied to the FP8 peak and attention ran at twice its BF16 speed.
  // NVFP4 (precision fp4) the same way, its GEMMs at FP4's ceiling (GpuSpec::MatmulEfficiency).
  const bool fp8 = precision == model::Precision::kFp8, fp4 = precision == model::Precision::kFp4;
  const bool narrow = fp8 || fp4;
  const double bf16_peak = narrow ? gpu.SustainedPeakFlops(model::Precision::kBf16) : peak;
  const double bf16_ceiling = narrow ? ceiling_of(model::Precision::kBf16) : ceiling;
  const bool causal = convention_ == FlopConvention::kCausal;
  const FlopsPerToken model_flops = CountFlops(m, causal, model::Recompute::kNone);
  // What the GPU executes: attention as kernels run it (flash attention skips the masked
  // half whatever the counting convention), with the layout's recomputation.
  // Without flash attention (`flash_attention: false`) the kernels compute the whole s x s
  // square and the scores, their softmax and its dropout mask go through HBM.
  const auto& w = spec.workload;
  const FlopsPerToken exec = CountFlops(m, /*causal=*/w.flash_attention, l.recompute);
  // The software stack (workload.software): TP collectives exposed without TP overlap but for
  // what Transformer Engine runs asynchronously (below), DP collectives all exposed without DP
  // overlap.
  const double dp_overlap = w.dp_comm_overlap ? eff_.dp_overlap : 0.0;
  // A sliding window's layers (flash kernels, a window shorter than the span) and, on the native
  // kernels, where their own cost is measured (cuDNN's; FlashAttention-4's runs as slow), their
  // kernels' share of a causal layer's time; the others' windows keep their count at their rate.
  const bool windowed =
      w.flash_attention && m.WindowedLayers() > 0 && m.sliding_window < m.AttentionSpan();
  const bool native_window = windowed && w.attention_kernel == model::AttentionKernel::kNative;
  const WindowedAttentionTime window_share =
      native_window ? WindowedAttentionShare(gpu.architecture, m.AttentionSpan(), m.sliding_window)
                    : WindowedAttentionTime{};

  // One micro-batch on the slowest GPU: b x s/cp tokens, 1/tp of each GEMM. A pipeline rank
  // runs its transformer layers, and the last one also the output layer (2 h V per token) and
  // the loss; which rank is slowest depends on the split (model::PipelineStageLayers): without
  // the embedding and the loss counted in it, the largest stage's ceil(L/pp) layers are taken
  // to be on the last rank beside the output layer (uneven stages, as Megatron-Core's first/
  // last-stage layer counts allow); with them counted (Megatron-Core's
  // account_for_embedding/loss_in_pipeline_split), the last rank holds a layer fewer than the
  // middle ones, and the slower of the two sets the step; with a mixture of experts' dense layers
  // first, the first and the middle ranks hold other mixes of layers and are weighed too (below).
  const double tokens = static_cast<double>(l.micro_batch) * m.sequence / l.cp;
  const ParamCounts pc = CountParams(m);
  const double logits_fwd = 2.0 * m.hidden * m.vocab;
  const double layers_gemm_fwd =
      exec.forward - exec.attention_forward - logits_fwd - exec.adapters_forward;
  // The GEMM passes of a linear layer (the output layer's too): 2 with LoRA's frozen weights.
  const double passes = m.LinearPasses();
  // The typical GEMM of a layer: tokens x hidden x hidden/tp (QKV, projection, MLP).
  const double gemm_size = 2 * tokens * m.hidden * (static_cast<double>(m.hidden) / l.tp);
  // A GEMM of F FLOPs runs at F / (F + half) of the ceiling: half is the larger of a wave of
  // tiles' worth of FLOPs (about the same on A100 and H100: 108 and 132 SMs) and a fixed
  // per-kernel time's worth (launch, prologue, tail: ~13 us), which grows with the engine's
  // speed (FP8, Blackwell). Both are 12.5 GFLOP on H100 BF16, where it was fitted.
  // FP4's engine is not faster than its measured speed over FP8 (its printed peak is 2-3x FP8's).
  const double engine =
      fp4 ? gpu.SustainedPeakFlops(model::Precision::kFp8) * model::kNvfp4OverFp8Gemm : peak;
  const double half = std::max(eff_.gemm_half_flops, eff_.gemm_half_flops * engine / kH100Bf16Peak);
  const double size_factor = gemm_size / (gemm_size + half);
  const double gemm_rate = peak * ceiling * eff_.gemm_training * size_factor;
  // The output layer's GEMM is costed at the layer GEMM's size factor, though it is far larger
  // (tokens x hidden x vocabulary/tp). At its own size it would run faster, steps with large
  // vocabularies up to ~4 % shorter; the fitted constants were fitted with this factor, so the
  // change waits for their refit (docs/sim.md, "Where the model stands").
  const double logits_rate = bf16_peak * bf16_ceiling * eff_.gemm_training * size_factor;
  // Attention at the fitted rate of 2024's kernels, or the 2022 Triton kernel's measured one;
  // kernels written for mma.sync at that instruction's share of the peak on Hopper (which
  // FlashAttention-2's own H100 rates bear out), the Triton kernel, measured on A100 only, at
  // what such kernels gain from A100 to H100; native
  // kernels on Blackwell Ultra at its measured speed-up over Blackwell (its faster softmax), and
  // FP8 attention at its measured speed over BF16's, at the length each kernel sees (s/cp; in
  // packed sequences the document's, which the varlen kernels run one by one).
  const double kernel_sequence = m.AttentionSpan() / l.cp;
  const double attn_rate =
      bf16_peak *
      (w.attention_kernel == model::AttentionKernel::kTriton2022 ? kTriton2022AttentionOfPeak
                                                                 : eff_.attention) *
      (w.attention_kernel == model::AttentionKernel::kNative
           ? AttentionArchitectureSpeedup(gpu.architecture, kernel_sequence) *
                 Fp8AttentionFactor(w, gpu.architecture, l.cp)
       : w.attention_kernel == model::AttentionKernel::kTriton2022
           ? AmpereAttentionOnHopper(gpu.architecture)
           : MmaSyncShare(gpu.architecture));
  // The forward's exponentials at this head size (native flash kernels; the rate is 128's).
  const double fwd_exp =
      w.flash_attention && w.attention_kernel == model::AttentionKernel::kNative
          ? ForwardExponentialFactor(gpu.architecture, m.HeadDim(), Fp8AttentionRuns(w))
          : 1.0;
  // Element-wise work follows the activations it moves (Korthikanti et al. 2022 Table 2: 34
  // bytes per element, 10 of them outside the tensor-parallel region: the LayerNorms' inputs,
  // the QKV and MLP inputs, the dropout masks). Sequence parallelism splits all of it over TP;
  // without it those 10 are replicated on every TP rank and the other 24 are split, as with it
  // (the model replicated all 34 until issue 13's last change: Korthikanti's baseline rows paid
  // for the MLP's and attention's inner activations eight times).
  const bool sp = l.tp > 1 && spec.workload.sequence_parallel;
  constexpr double kReplicatedShare = 10.0 / 34;
  const double elem_share = sp ? 1.0 / l.tp : kReplicatedShare + (1 - kReplicatedShare) / l.tp;
  // PyTorch eager's unfused kernels move their own count (EagerLlamaBytes: 519 per hidden element
  // for Llama 2 7B, 3.8x the fused layers' 136), split over TP by its own hidden-stream share
  // without sequence parallelism (for 7B's shape 299.4 of the 518.7, where the fused count's
  // share is 10/34).
  const ElementwiseBytes eager = EagerLlamaBytes(m);
  const MegatronEager megatron_eager = MegatronEagerBytes(m, w, l.tp, etp);
  const bool fused = w.elementwise == model::Elementwise::kFused;
  auto eager_on_rank = [&](double all, double replicated) {
    return sp || l.tp == 1 ? all / l.tp : replicated + (all - replicated) / l.tp;
  };
  // QK-norm's kernels on this rank's queries and keys (split over TP with their heads). Fused
  // (Transformer Engine's RMSNorm, torch.compile): their saved input's 2 bytes an element, written
  // forward, read backward, with a gradient of the same size (4 x 2, as the fused count runs each
  // stored byte; Transformer Engine's norm kernels move about 10, a compiled norm folded into the
  // rotary embedding's kernel less). Eager: PyTorch's fp32 RMSNorm as EagerLlamaBytes counts it,
  // 36 bytes an element forward and 92 backward.
  const double qk_elements =
      m.qk_norm ? static_cast<double>(m.QueryWidth() + m.KvWidth()) / l.tp : 0.0;
  const double qk_norm_bytes = qk_elements * (fused ? 4 * 2 : 36 + 92);
  const double qk_norm_fwd_bytes = qk_elements * (fused ? 2 : 36);
  const double elem_bytes_per_token =
      qk_norm_bytes +
      (fused ? eff_.elementwise_bytes * m.hidden * elem_share
             : eager_on_rank(eager.forward_bytes + eager.backward_bytes,
                             eager.replicated_forward_bytes + eager.replicated_backward_bytes));
  const double adapter_rate = bf16_peak * bf16_ceiling * eff_.gemm_training;
  const double adapter_half =
      std::max(eff_.gemm_half_flops, eff_.gemm_half_flops * bf16_peak / kH100Bf16Peak);
  // The adapters' forward on a stage holding `stage` of the layers: each A and B a thin GEMM of
  // its own, at the size-scaled rate.
  auto adapters_fwd = [&](double stage) {
    double t = 0;
    for (const auto& a : m.AdaptedLinears()) {
      t += a.layers * stage *
           (2 * tokens * m.lora.rank * (a.in + a.out) / l.tp + 2 * adapter_half) / adapter_rate;
    }
    return t;
  };
  // A layer's GEMM FLOPs a token forward: a dense layer's (attention and MLP), a MoE layer's
  // (attention, router, the routed top-k and the shared experts).
  const double dense_layer_gemm_fwd = 2 * pc.layer_linear;
  const double moe_layer_gemm_fwd =
      m.IsMoe()
          ? (layers_gemm_fwd - (m.layers - m.MoeLayers()) * dense_layer_gemm_fwd) / m.MoeLayers()
          : 0.0;
  // A rank of `stage_layers` layers, `dense_layers` of them dense (a mixture of experts' dense
  // layers come first: RankLayers), with the output layer or not.
  auto stage_work = [&](int stage_layers, int dense_layers, bool output_layer) {
    const double stage = static_cast<double>(stage_layers) / m.layers;
    const double layers = stage_layers;
    // Full recompute re-runs this share of the stage's layers (all, or activation_checkpointing_
    // layers of them); the rest keep their activations.
    const double recomputed = model::RecomputedShare(l.recompute, l.recompute_layers, stage_layers);
    const double moe_layers = m.IsMoe() ? stage_layers - dense_layers : 0.0;
    const double gemm_fwd =
        ((layers - moe_layers) * dense_layer_gemm_fwd + moe_layers * moe_layer_gemm_fwd) * tokens /
        l.tp;
    const double logits_gemm_fwd = output_layer ? logits_fwd * tokens / l.tp : 0.0;
    const double attn_fwd = exec.attention_forward * tokens * stage / l.tp;
    const double elem_bytes = elem_bytes_per_token * tokens * layers;
    // What recomputing a layer's forward moves again: a quarter of the fused count (written
    // forward of four passes), the eager forward's own.
    const double elem_fwd_bytes =
        fused ? elem_bytes / 4
              : (eager_on_rank(eager.forward_bytes, eager.replicated_forward_bytes) +
                 qk_norm_fwd_bytes) *
                    tokens * layers;
    // Mixture of experts: the routed experts run as grouped GEMMs of the tokens each expert gets
    // (balanced: b s k EP / E rows from the EP ranks), padded to the capacity factor; their
    // tokens are permuted to the experts and back (memory-bound). Megatron-Core's all-to-all
    // dispatcher also sorts the copies it receives by local expert, and back before the combine
    // (token_dispatcher.py, sort_chunks_by_idxs, with more than one expert a rank, even without
    // EP): two more passes over every copy each way, as much again. The flex dispatcher's HybridEP
    // and DeepEP backends write what arrives in expert order (their permute is the copy out of the
    // receive buffer).
    double routed_fwd = 0, t_routed = 0, moe_elem_bytes = 0;
    if (m.IsMoe()) {
      const double expert_params =
          (m.MlpInputProjections() + 1) * m.hidden * static_cast<double>(m.moe.ffn_hidden);
      const double pad = std::max(1.0, m.moe.capacity_factor);
      routed_fwd = 2 * expert_params * m.moe.top_k * moe_layers * tokens / l.tp;
      // Each expert's GEMM: the rows its EP ranks send it, 1/etp of its width. It is one kernel
      // (its own launch, prologue and tail, its own partial last wave) under Transformer Engine's
      // GroupedLinear; the fused grouped MLP runs the rank's E/EP experts as one kernel, whose
      // tiles fill the SMs together.
      const double rows = tokens / (l.tp / etp) * m.moe.top_k * l.ep / m.moe.experts;
      const double kernel_experts =
          w.moe_fused_grouped_mlp ? static_cast<double>(m.moe.experts) / l.ep : 1.0;
      const double size =
          kernel_experts * 2 * rows * m.hidden * (static_cast<double>(m.moe.ffn_hidden) / etp);
      const double rate = peak * ceiling * eff_.gemm_training * size / (size + half);
      t_routed = passes * routed_fwd * pad / rate;
      const bool sorted = !w.moe_dedup && m.moe.experts > l.ep;  // more than one expert a rank
      moe_elem_bytes = (sorted ? 2 : 1) * eff_.moe_permute_bytes * m.moe.top_k * m.hidden * tokens *
                       moe_layers / (sp ? l.tp : 1);
    }
    const double t_logits = passes * logits_gemm_fwd / logits_rate;  // the output layer
    // LoRA's adapters: beside each adapted layer two thin BF16 GEMMs (A: in x rank, B: rank x
    // out, on this rank's 1/tp), each run forward, for its input's gradient and for its
    // weight's, and each at the size-scaled rate: a GEMM of F FLOPs takes (F + half) / the full
    // rate, its fixed per-kernel cost about all of it at rank 16. Recomputation re-runs their
    // forward with the layer's.
    const double t_adapters_fwd = adapters_fwd(stage);
    const double t_gemm =
        passes * (gemm_fwd - routed_fwd) / gemm_rate + t_routed + t_logits + 3 * t_adapters_fwd;
    // cuDNN's FP8 and MXFP8 attention backward with a sliding window runs the whole s x s
    // square, every tile outside the window too: cuDNN's SDPA training benchmark times GPT-OSS's
    // windowed layer (a window of 128) backward at 1.486 ms at 4,096 tokens on GB300, Llama's
    // unmasked backward of the same FLOPs at 1.495, and the windowed one grows with s^2 to
    // 74.9 ms at 32,768 where BF16's grows with s (cuDNN 9.22 to 9.26, 2026-04 to 2026-07; the
    // forward skips them). So a windowed layer's backward is the whole square's: 2 x 4 w s per
    // token instead of 2 x 4 w k, at the attention rate (which, fitted on causal kernels,
    // prices the unmasked square up to 1.3x slower than measured at 4,096 tokens).
    // (A window as long as the sequence, or the packed document, leaves no tile outside it.)
    double attn_bwd_extra = 0;
    if (windowed && Fp8AttentionRuns(w)) {
      attn_bwd_extra = m.WindowedLayers() * 8 * m.QueryWidth() *
                       (m.AttentionSpan() - CausalWindowKeys(m)) * tokens * stage / l.tp;
    }
    // The windowed layers' kernels (WindowedAttentionShare): their forward, and their backward
    // but where it runs the whole square (above), take that share of a causal layer's time (its
    // s/2 keys a query at the causal rate), where the count has the window's own keys at that
    // rate: what they take beyond the count, in the count's FLOPs.
    double window_fwd_extra = 0, window_bwd_extra = 0;
    if (native_window) {
      const double keys = CausalWindowKeys(m);
      const double per_key = 4 * m.QueryWidth() * m.WindowedLayers() * tokens * stage / l.tp;
      const double causal_keys = m.AttentionSpan() / 2;
      window_fwd_extra = per_key * (window_share.forward * causal_keys - keys);
      if (attn_bwd_extra == 0)
        window_bwd_extra = 2 * per_key * (window_share.backward * causal_keys - keys);
    }
    const double t_attn = ((2 + fwd_exp) * attn_fwd + fwd_exp * window_fwd_extra +
                           window_bwd_extra + attn_bwd_extra) /
                          attn_rate;
    // Unfused attention's HBM traffic: 5 a s^2 b bytes per layer stored (fp16 scores 2, softmax
    // 2, dropout mask 1; Korthikanti et al. 2022 §4.1), written forward and read backward, with
    // gradients of the same size: 4 x, on this rank's a/tp heads and s/cp queries.
    const double score_bytes = w.flash_attention ? 0
                                                 : 4 * 5.0 * m.heads / l.tp *
                                                       (static_cast<double>(m.sequence) / l.cp) *
                                                       m.sequence * l.micro_batch * layers;
    // FP8's casts beside its GEMMs (Fp8CastBytes), on this rank's 1/tp of each tensor; they are
    // memory-bound element-wise work like the rest.
    double fp8_fwd_bytes = 0, fp8_bwd_bytes = 0;
    if (narrow) {
      const Fp8Casts dense = Fp8CastBytes(m, w.fp8_recipe, fp4, false);
      const Fp8Casts moe = Fp8CastBytes(m, w.fp8_recipe, fp4, true);
      const double per_token = tokens / l.tp;
      fp8_fwd_bytes =
          per_token * ((layers - moe_layers) * dense.forward + moe_layers * moe.forward);
      fp8_bwd_bytes =
          per_token * ((layers - moe_layers) * dense.backward + moe_layers * moe.backward);
    }
    // Megatron-Core's eager paths (MegatronEagerBytes).
    const double eager_fwd_bytes =
        tokens * (layers * megatron_eager.forward + moe_layers * megatron_eager.moe_forward);
    const double eager_bytes =
        eager_fwd_bytes +
        tokens * (layers * megatron_eager.backward + moe_layers * megatron_eager.moe_backward);
    const double t_elem =
        (elem_bytes + score_bytes + moe_elem_bytes + fp8_fwd_bytes + fp8_bwd_bytes + eager_bytes) /
        gpu.StreamingBytesPerS();
    // Recomputation re-runs forward work at that work's own rate: full recompute every layer's
    // forward (its GEMMs, routed experts included, its attention and the activations it writes),
    // selective recompute its modules (below). Before, all of it ran at the GEMM rate: recomputed
    // attention at 32K tokens cost about a third of what it costs at attention's rate.
    // What recomputing re-runs.
    const double t_attn_fwd = fwd_exp * (attn_fwd + window_fwd_extra) / attn_rate;
    double t_rec_gemm = 0, t_rec = 0;
    const bool selective = l.recompute == model::Recompute::kSelective;
    if (l.recompute == model::Recompute::kFull) {
      t_rec_gemm =
          recomputed * ((gemm_fwd - routed_fwd) / gemm_rate + t_routed / passes + t_adapters_fwd);
      t_rec = t_rec_gemm +
              recomputed * (t_attn_fwd + (elem_fwd_bytes + score_bytes / 4 + moe_elem_bytes / 2 +
                                          fp8_fwd_bytes + eager_fwd_bytes) /
                                             gpu.StreamingBytesPerS());
    } else if (selective) {
      // Megatron-Core's recompute_modules, each re-run at its own rate: the attention core; the
      // norm before each MoE layer (its input read, its output written again); the routed
      // experts' activation (their first GEMM's outputs read, the activation written again); a
      // dense layer's MLP (its two GEMMs' forward, its norm and activation).
      const model::Workload::RecomputeModules& mods = w.recompute_modules;
      const double bw = gpu.StreamingBytesPerS();
      const double proj = m.MlpInputProjections();
      const double sp_div = sp ? l.tp : 1;
      if (mods.core_attn) t_rec += t_attn_fwd + score_bytes / 4 / bw;
      if (mods.layernorm) t_rec += 4 * m.hidden / sp_div * tokens * moe_layers / bw;
      if (mods.moe_act) {
        t_rec += (2 * (proj + 1) * m.moe.PaddedTopK() * m.moe.ffn_hidden / l.tp +
                  megatron_eager.moe_act_forward) *
                 tokens * moe_layers / bw;
      }
      if (mods.mlp) {
        const double dense = layers - moe_layers;
        t_rec_gemm = dense * tokens / l.tp * 2 * (proj + 1) * m.hidden * m.ffn_hidden / gemm_rate;
        t_rec += t_rec_gemm + dense * tokens *
                                  (4 * m.hidden / sp_div + 2 * (proj + 1) * m.ffn_hidden / l.tp) /
                                  bw;
      }
    }
    // The loss (and the training metrics beside it) over this rank's V/tp logits of each token,
    // on the last stage with the output layer: memory-bound, and not in any layer's share. Before,
    // it was missing; small models (125M: 31 % of the parameters in the 50K vocabulary) ran up to
    // 17 % faster than published, more so at short sequences and on H100, whose FLOPs outgrow its
    // HBM bandwidth (docs/sim.md, "The loss and the training metrics").
    const double t_loss =
        output_layer ? w.loss_traffic_per_logit * m.vocab / l.tp * tokens / gpu.StreamingBytesPerS()
                     : 0.0;
    return StageWork{
        .layers = layers,
        .moe_layers = moe_layers,
        .recomputed = recomputed,
        .t_gemm = t_gemm,
        .t_logits = t_logits,
        .t_routed = t_routed,
        .t_attn = t_attn,
        .t_attn_fwd = t_attn_fwd,
        .t_rec_gemm = t_rec_gemm,
        .t_rec = t_rec,
        .t_loss = t_loss,
        .t_mb = t_gemm + t_attn + t_elem + t_rec + t_loss,
        .t_attn_bwd_extra = attn_bwd_extra / attn_rate,
        .attn_again = selective ? (w.recompute_modules.core_attn ? 1.0 : 0.0) : recomputed,
        .mlp_again = selective && w.recompute_modules.mlp ? (layers - moe_layers) / layers : 0.0};
  };
  const NetworkModel net = BuildNetworkModel(spec.cluster);
  const double act_bytes = tokens * m.hidden * 2;  // bf16 activations of one micro-batch
  // Tensor parallel: 2 all-reduces forward and 2 backward per layer (reduce-scatter +
  // all-gather pairs of the same volume with sequence parallelism), 2 more with full
  // recompute; inside the node when TP fits in it.
  const double tp_ar = l.tp > 1
                           ? CollectiveTime(net, Collective::kAllReduce, Algorithm::kRing,
                                            act_bytes, std::min(l.tp, gpn), std::max(1, l.tp / gpn))
                           : 0.0;
  // Context parallel: K and V around the ring forward (an all-gather's bytes); backward K and V
  // around it again with their gradients beside them (Transformer Engine's AttnFuncWithCPAndKVP2P
  // backward sends each step's [kv, dkv] buffer: twice the forward's bytes); and K and V again
  // when the attention is recomputed (full recompute, or selective, whose checkpointed attention
  // core holds the exchange). Before, the backward moved the gradients alone.
  double cp_ag = 0;
  if (l.cp > 1) {
    const double kv = 2.0 * l.micro_batch * m.sequence * m.KvWidth() * 2 / l.tp;
    const int cp_local = std::clamp(gpn / l.tp, 1, l.cp);
    const int cp_nodes = (l.cp + cp_local - 1) / cp_local;
    // Every TP rank runs its own ring at once: across nodes each takes its share of the NICs.
    cp_ag = CollectiveTime(net, Collective::kAllGather, Algorithm::kRing, kv, cp_local, cp_nodes,
                           static_cast<double>(cp_local) / gpn);
  }
  // Without TP overlap, what Transformer Engine hides of a layer's TP collectives (below): each
  // column-parallel TE layer's dgrad collective (a reduce-scatter, half an all-reduce, with
  // sequence parallelism; an all-reduce without) behind its own wgrad GEMM (as long as its forward
  // GEMM): QKV's in every layer, the MLP's input projection's in a dense one (a MoE layer's experts
  // are not TE's tensor-parallel layers). A frozen layer (LoRA) runs no wgrad GEMM to hide it.
  const double gate = m.MlpInputProjections();
  const double dgrad_comm = sp ? 0.5 * tp_ar : tp_ar;
  auto wgrad_s = [&](double width) {
    return m.lora.Enabled() ? 0.0 : 2 * tokens * m.hidden * width / l.tp / gemm_rate;
  };
  const double lora_tp = LoraTpAllReduces(w, l.tp, sp) * tp_ar;
  // Per layer, on a rank whose layers are `dense_share` dense.
  auto te_hidden_tp = [&](double dense_share) {
    return std::min(dgrad_comm, wgrad_s(m.QueryWidth() + 2 * m.KvWidth())) +
           dense_share * std::min(dgrad_comm, wgrad_s(gate * m.ffn_hidden));
  };
  // What a rank's layers expose of their TP and CP collectives, per layer and micro-batch.
  struct LayerComm {
    double tp = 0, cp = 0;
    double tp_hidden = 0;  // hidden beside the GEMMs by NCCL (not userbuffers): it slows them
  };
  auto layer_comm = [&](const StageWork& s) {
    LayerComm c;
    // TP communication overlap (Transformer Engine's userbuffers, PyTorch's AsyncTP) splits
    // each collective into tp chunks pipelined with the GEMM's chunks: the chunk with no GEMM
    // left to hide behind is exposed, 1/tp of it, and whatever the layer's GEMMs cannot cover
    // (TP across nodes, thin layers). Before, a fitted 0.4 was exposed at any TP.
    // Without it, Transformer Engine (the megatron-core-2024 and nemo-2025 stacks) still runs
    // some of a layer's backward collectives asynchronously (module/linear.py, async_op=True):
    // each column-parallel layer's dgrad reduce-scatter beside its wgrad GEMM (te_hidden_tp),
    // and the re-gather of its saved input beside its dgrad GEMM (not counted here); the
    // forward's all-gathers and reduce-scatters and the backward's grad-output all-gathers wait.
    if (l.tp > 1) {
      // A dense MLP recomputed runs its forward pair again (one all-reduce, or all-gather and
      // reduce-scatter with sequence parallelism), full recompute both of the layer's.
      const double per_layer = (4 + 2 * s.recomputed + s.mlp_again) * tp_ar;
      const double layer_gemms = (s.t_gemm - s.t_logits + s.t_rec_gemm) / s.layers;
      if (w.tp_comm_overlap) {
        c.tp = std::max(per_layer / l.tp, per_layer - layer_gemms);
      } else if (w.RunsMegatronCore()) {
        c.tp_hidden = te_hidden_tp(1 - s.moe_layers / s.layers);
        c.tp = per_layer - c.tp_hidden;
      } else {
        c.tp = per_layer;
      }
      c.tp += lora_tp;
    }
    // The K/V ring runs cp steps beside attention's chunks, each step's exchange started before
    // the previous chunk's attention (Transformer Engine's P2P context parallelism; PyTorch's
    // _templated_ring_attention sends the next K/V before it computes, AsyncTP or not): one step
    // is exposed, and whatever the layer's attention cannot cover. Before, CP's overlap followed
    // tp_comm_overlap, which exposed all of it on stacks without TP overlap.
    if (l.cp > 1) {
      const double again = s.attn_again;
      const double per_layer = (3 + again) * cp_ag;
      const double attn_layer = (s.t_attn + again * s.t_attn_fwd) / s.layers;
      c.cp = std::max(per_layer / l.cp, per_layer - attn_layer);
    }
    return c;
  };
  // The slowest rank: the last, with the output layer, or another with more layers (with the
  // embedding and the loss in the split, a middle one holds a layer more) or, where a mixture of
  // experts' dense layers come first, another mix of dense and MoE layers (the first rank, and the
  // middle ones with the fewest and the most of them), its compute and its layers' exposed TP and
  // CP collectives together.
  const model::StageLayerCounts stages =
      model::PipelineStageLayers(m.layers, l.pp, w.pipeline_split);
  // Expert parallel's all-to-all, one dispatch or combine of a micro-batch's tokens (below).
  const double a2a = l.ep > 1
                         ? ExpertAllToAll(net, m.moe, w.moe_dedup, tokens / l.tp * m.hidden * 2,
                                          std::clamp(gpn / etp, 1, l.ep), l.ep)
                               .seconds
                         : 0.0;
  const bool ep_overlap = l.ep > 1 && EpOverlapRuns(w, l);
  // A rank's micro-batch: its compute, its layers' exposed TP and CP collectives, and without EP
  // overlap its MoE layers' all-to-alls (with it, mostly hidden, they are not weighed).
  auto rank_time = [&](const StageWork& s) {
    const LayerComm c = layer_comm(s);
    const double all_to_all = ep_overlap ? 0.0 : s.moe_layers * (4 + 2 * s.recomputed) * a2a;
    return s.t_mb + s.layers * (c.tp + c.cp) + all_to_all;
  };
  auto on_rank = [&](int rank) {
    return LayersOnPipelineRank(m, l.pp, l.virtual_stages, w.pipeline_split, rank);
  };
  const RankLayers last = on_rank(l.pp - 1);
  StageWork slowest = stage_work(last.layers, last.dense, /*output_layer=*/true);
  r.stage_layers = stages.most;
  r.last_stage_layers = stages.last;
  r.slowest_rank = l.pp - 1;
  if (m.IsMoe() && m.moe.dense_layers > 0) {
    r.dense_layers = m.moe.dense_layers;
    r.first_stage_dense_layers = on_rank(0).dense;
  }
  if (l.pp > 1) {
    // The ranks that can be slower than the last: the middle ones with the fewest and the most
    // dense layers, then the first.
    std::vector<int> others;
    if (l.pp > 2) {
      int fewest = 1, most = 1;
      int fewest_dense = on_rank(1).dense, most_dense = fewest_dense;
      for (int rank = 2; m.IsMoe() && rank < l.pp - 1; ++rank) {
        const int dense = on_rank(rank).dense;
        if (dense < fewest_dense) fewest = rank, fewest_dense = dense;
        if (dense > most_dense) most = rank, most_dense = dense;
      }
      others.push_back(fewest);
      if (most != fewest) others.push_back(most);
    }
    others.push_back(0);
    double slowest_s = rank_time(slowest);
    std::vector<RankLayers> seen;
    for (int rank : others) {
      const RankLayers o = on_rank(rank);
      const bool again = std::any_of(seen.begin(), seen.end(), [&](const RankLayers& e) {
        return e.layers == o.layers && e.dense == o.dense;
      });
      seen.push_back(o);
      if (again || (o.layers <= last.layers && (!m.IsMoe() || o.dense == last.dense))) continue;
      const StageWork work = stage_work(o.layers, o.dense, /*output_layer=*/false);
      if (const double t = rank_time(work); t > slowest_s) {
        slowest = work;
        slowest_s = t;
        r.slowest_rank = rank;
      }
    }
  }
  r.slowest_moe_layers = static_cast<int>(slowest.moe_layers);
  const double layers = slowest.layers, moe_layers = slowest.moe_layers;
  const double recomputed = slowest.recomputed;
  const double t_logits = slowest.t_logits, t_routed = slowest.t_routed;
  const double t_rec = slowest.t_rec, t_loss = slowest.t_loss;
  const double t_mb = slowest.t_mb;
  r.compute_s = accumulation * t_mb;
  r.recompute_s = accumulation * t_rec;
  const LayerComm comm = layer_comm(slowest);
  r.tp_comm_s = accumulation * layers * comm.tp;
  r.cp_comm_s = accumulation * layers * comm.cp;
  // Expert parallel: per MoE layer and micro-batch an all-to-all dispatches each token's k
  // copies to their experts and another combines them, forward and again backward (twice more
  // with full recompute); exposed but for what EP overlap hides (below). EP peers sit ETP
  // apart, Megatron-Core's expert rank order (tp = ETP, ep, dp; no cp: its expert rank
  // generator folds context parallelism into the expert data-parallel ranks), so with CP an EP
  // group spans CP ranks before DP ones, as the expert-data-parallel group (EP x ETP apart)
  // does: the ones on this node over NVLink, the rest over the node's fabric, which all its GPUs
  // use at once; what crosses each, and at what rate, is the dispatcher's (ExpertAllToAll).
  // (Before, they were put t x cp apart, the dense order, which disagreed with that group.)
  double ep_hidden_s = 0;  // the all-to-all time EP overlap hides
  // The slowest rank can hold none (a mixture of experts' dense layers first).
  if (l.ep > 1 && moe_layers > 0) {
    const double per_layer = 4 + 2 * recomputed;
    r.ep_comm_s = accumulation * moe_layers * per_layer * a2a;
    if (ep_overlap) {
      // Megatron-Core's EP overlap (combined 1F1B, model_chunk_schedule_plan.py): the steady
      // state runs micro-batch i+1's forward of a layer beside micro-batch i's backward of
      // another, in three phases, communication on its own stream beside the other pass's
      // compute, each phase as long as the longer side:
      //   comm: combine bwd   | dispatch fwd, then dispatch bwd     | combine fwd
      //   comp: attention fwd | MLP dgrad, MLP wgrad, then MLP fwd  | attention bwd
      // where "attention" is everything before the dispatch (norms, attention, router, TP and
      // CP collectives) and the MLP the routed experts (dgrad, wgrad and forward a third of
      // their time each). The MLP's dgrad must end before its dispatch backward starts, and its
      // forward waits for its dispatch. The first forward and the last backward of each chunk
      // (the pipeline's warm-up and cool-down: 2(p-1) + (v-1)p chunks on the first stage, one
      // without stages) have no partner and expose their all-to-alls.
      // With LoRA the frozen experts run no wgrad: their dgrad, then their forward.
      const double mlp = t_routed / moe_layers / passes;
      const double attn_total = (t_mb - t_routed - t_logits - t_loss) / layers +
                                (r.tp_comm_s + r.cp_comm_s) / accumulation / layers;
      // The attention core's forward is its own share (t_attn_fwd: the forward's exponentials
      // weigh more at small heads), the rest a third; FP8 attention's windowed backward over the
      // whole square is backward work alone.
      const double attn_f =
          (attn_total - (t_rec + slowest.t_attn) / layers) / passes + slowest.t_attn_fwd / layers;
      const double attn_b = attn_total - attn_f;
      const double phases =
          std::max(attn_f, a2a) +
          std::max(std::max((passes - 1) * mlp, a2a) + mlp, std::max(a2a, mlp) + a2a) +
          std::max(a2a, attn_b);
      const double paired_exposed = phases - (attn_total + passes * mlp);
      const double warmup = l.pp > 1 ? 2.0 * (l.pp - 1) + (l.virtual_stages - 1.0) * l.pp : 1.0;
      const double unpaired = std::min(1.0, warmup / (accumulation * l.virtual_stages));
      const double exposed = (1 - unpaired) * paired_exposed + unpaired * per_layer * a2a;
      ep_hidden_s = r.ep_comm_s - accumulation * moe_layers * exposed;
      r.ep_comm_s -= ep_hidden_s;
    }
  }
  double pp_hidden_s = 0;  // the pipeline sends hidden behind the next micro-batch
  // Pipeline: the bubble, (p-1)/v micro-batch times (Narayanan et al. SC21 §2.2), and the
  // activation sends between stages (scatter/gather: 1/tp of them per GPU). A stage's ranks sit
  // tp x cp x dp apart (Megatron's order: tp, cp, (ep,) dp, pp), so a pipeline spans the whole
  // job: inside one scale-up domain (a node, an NVL72 rack) its sends go over NVLink, one GPU to
  // another; otherwise some boundary crosses the fabric, and the stages, which send in
  // lockstep, wait for it: every GPU of a node sends at once over the node's NICs.
  if (l.pp > 1) {
    r.bubble_s = static_cast<double>(l.pp - 1) / l.virtual_stages * t_mb;
    const bool pipeline_in_domain = Place(l.pp, l.tp * l.cp * l.dp, gpn).nodes == 1;
    const double send =
        pipeline_in_domain
            ? act_bytes / l.tp / net.intra_busbw_bytes_per_s + net.intra_alpha_s
            : act_bytes / l.tp / (net.inter_busbw_bytes_per_s / gpn) + net.inter_alpha_s;
    // Steady state (PipelineSendsExposed): interleaved, the sends overlap the next chunk's
    // compute but for `pp_p2p_exposed`; plain 1F1B waits for each. The fill (p-1 forward sends)
    // and the drain (p-1 backward sends) are on the critical path either way. The hidden ones
    // slow the compute beside them as DP's do (below).
    const double steady = accumulation * 2 * l.virtual_stages * send;
    const double exposed_share = PipelineSendsExposed(w, l.virtual_stages, eff_);
    r.pp_comm_s = steady * exposed_share + 2.0 * (l.pp - 1) * send;
    pp_hidden_s = steady * (1 - exposed_share);
    // Tied input and output embeddings live on the first and the last stage: their gradients
    // are all-reduced between the two after the backward (Megatron's embedding group), V h / t
    // in the gradient dtype, across the fabric unless the pipeline lies in one domain. Frozen
    // under LoRA, they have none.
    if (m.tied_embeddings && !m.lora.Enabled()) {
      const double bytes = static_cast<double>(m.vocab) * m.hidden / l.tp * w.grad_reduce_bytes;
      const bool across = !pipeline_in_domain;
      r.pp_comm_s += CollectiveTime(net, Collective::kAllReduce, Algorithm::kRing, bytes,
                                    across ? 1 : 2, across ? 2 : 1, 1.0 / gpn);
    }
  }
  // Data parallel over the fabric. Context-parallel ranks hold the same weights, so gradients
  // are reduced, and the optimizer (ZeRO, FSDP) sharded, over DP x CP ranks (Megatron's data-
  // parallel group with context parallelism, torchtitan's dp_shard_cp mesh), as the memory
  // model shards them; before, the step reduced over DP alone, and CP8 x DP1 reduced nothing.
  // The group's ranks sit tp apart (Megatron's rank order: tp, cp, dp), so a node holds gpn/tp
  // of one group and every GPU's group shares the NICs. Expert parameters are divided over EP
  // too, and reduced over their expert-data-parallel group (DP x CP x TP / (EP x ETP) ranks:
  // `dp_time` below) by DDP, the distributed optimizer and ZeRO-2, and sharded there by FSDP and
  // ZeRO-3 (`per_unit`).
  const int dpc = l.dp * l.cp;
  // Hybrid sharding (fsdp, zero3 with workload.parallel.shard): the states are sharded over the
  // shard group and replicated across the groups.
  const int shard = model::StateShardRanks(l.strategy, l.shard, dpc);
  // The first pipeline rank's parameters, its layers and the embedding: its backward ends last
  // (the pipeline's cool-down ends there), so its gradients' reduction and the optimizer after it
  // set the step's tail (ParamsOnTailPipelineRank, which takes a middle rank's where a mixture of
  // experts' dense layers leave the first fewer; before, an even share of the whole model).
  const StageParams tail_rank =
      ParamsOnTailPipelineRank(pc, m, l.tp, l.pp, l.virtual_stages, w.pipeline_split, dpc, l.ep);
  const LocalParams local = tail_rank.local;
  const double params_local = local.Total();
  // What is trained: every parameter, or with LoRA the adapters alone, whose gradients are the
  // only ones reduced and whose states the only ones the optimizer steps and gathers (ZeRO-3 and
  // FSDP still gather the frozen weights, which the forward and the backward need).
  const LocalParams trained = tail_rank.trained;
  const double trained_local = trained.Total();
  // What the parameter gathers move: bf16, the linear weights in fewer bytes with FP8 or FP4
  // parameters (model::Workload::GatheredLinearWeightBytes, at the layout's strategy).
  const double gather_bytes = local.WeightBytes(w.GatheredLinearWeightBytes(l.strategy));
  // Adam: ~32 bytes read and written per parameter on this GPU (fp32 master, moments, grads).
  const bool sharded = l.strategy != model::Strategy::kDdp;
  const int expert_shard = model::ExpertStateShardRanks(l.strategy, l.shard, l.tp, dpc, l.ep);
  const double optimizer_params =
      sharded ? trained.dense / shard + trained.experts / expert_shard : trained_local;
  r.optimizer_s = optimizer_params * 32 / gpu.StreamingBytesPerS();
  if (dpc > 1) {
    // A ring over `ranks` ranks `stride` apart (Place: those on a node talk over NVLink), with
    // their node's share of its NICs, since every group on the node runs at once.
    auto ring = [&](Collective c, double bytes, int ranks, int stride) {
      const Placement p = Place(ranks, stride, gpn);
      return CollectiveTime(net, c, Algorithm::kRing, bytes, p.ranks_per_node, p.nodes,
                            static_cast<double>(p.ranks_per_node) / gpn);
    };
    auto time = [&](Collective c, double bytes) { return ring(c, bytes, dpc, l.tp); };
    // Megatron-Core reduces and gathers the routed experts' parameters in buffers of their own
    // over the expert-data-parallel group (DDP's expert_parallel_buffers), the ranks that hold
    // the same experts: EP x ETP apart in its rank order, so with EP filling a node one rank a
    // node, every group of the node on its NICs at once. With EP = DP nothing is reduced.
    // Before, the experts rode the dense parameters' ring over all DP x CP ranks, as fast as
    // theirs across nodes and where no expert is replicated. The ring is over the ranks their
    // states are sharded on (`expert_shard`): that whole group but with hybrid sharding, where
    // FSDP and ZeRO-3 take a shard group's share of it (`per_unit`).
    const int edp = model::ExpertDataParallel(l.tp, dpc, l.ep);
    auto expert_time = [&](Collective c, double bytes) {
      return expert_shard > 1 && bytes > 0 ? ring(c, bytes, expert_shard, l.ep * etp) : 0.0;
    };
    auto dp_time = [&](Collective c, double dense_bytes, double expert_bytes) {
      return time(c, dense_bytes) + expert_time(c, expert_bytes);
    };
    const double dense_gather_bytes =
        local.DenseWeightBytes(w.GatheredLinearWeightBytes(l.strategy));
    const double expert_gather_bytes =
        local.ExpertWeightBytes(w.GatheredLinearWeightBytes(l.strategy));
    // Hybrid sharding: gathers and reduce-scatters run in the shard group, whose ranks sit tp
    // apart as the whole group's do, and each reduced shard is then all-reduced across the
    // replicas, ranks tp x shard apart (a node holds gpn / (tp shard) of them, one when a group
    // fills it).
    const int replicas = dpc / shard;
    auto shard_time = [&](Collective c, double bytes) { return ring(c, bytes, shard, l.tp); };
    auto replica_time = [&](double bytes) {
      return replicas > 1 ? ring(Collective::kAllReduce, bytes, replicas, l.tp * shard) : 0.0;
    };
    // The routed experts' per-unit collectives run in their own groups after the dense
    // parameters': sharded over the expert-data-parallel ranks of a shard group (EP x ETP
    // apart), all-reduced across that group's replicas; with EP = DP x CP nothing (each rank
    // holds its experts whole). torchtitan wraps a block's experts in an FSDP module of their own
    // on that mesh, Megatron-FSDP and DeepSpeed-MoE shard them over the same group. Before, they
    // rode the dense parameters' collectives over the whole shard group.
    const int expert_replicas = edp / expert_shard;
    auto expert_replica_time = [&](double bytes) {
      return expert_replicas > 1 && bytes > 0
                 ? ring(Collective::kAllReduce, bytes, expert_replicas, l.ep * etp * expert_shard)
                 : 0.0;
    };
    // The forward is one of the micro-batch's GEMM passes (one of two with LoRA's frozen weights);
    // the recomputation runs inside the backward, beside its gathers and reductions.
    const double fwd_window = dp_overlap * (t_mb - t_rec) / passes;
    const double bwd_window = dp_overlap * (t_mb - (t_mb - t_rec) / passes);
    // Gradients are reduced in buckets as the backward produces them (Megatron: 40 M
    // parameters or 1 M x the group's size, whichever is larger): the last bucket's reduction
    // starts when the backward ends and the first bucket's gather must finish before the
    // forward starts, so one bucket of each is exposed even when the rest hides.
    const double bucket = std::min(trained_local, std::max(40e6, 1e6 * dpc));
    // The sharding framework's own memory-bound work (gradient casts, divisions, copies in and
    // out of its buffers: ShardingCopyBytes) on this rank's unsharded parameters, `calls` times
    // a step with `gathers` copied-out all-gathers each, beside its collectives below. It runs
    // on FSDP's side streams beside the next unit's compute and takes the SMs and HBM time it
    // would take alone from it: added, not hidden.
    // With LoRA the gradient's copies are the adapters' and the gathers' every parameter's; with
    // FP8 parameters the gathers copy their FP8 bytes.
    auto sharding_copies = [&](double calls, int gathers) {
      const double all = ShardingCopyBytes(w.sharding_impl, w.grad_reduce_bytes, gathers,
                                           params_local > 0 ? gather_bytes / params_local : 2);
      if (pc.adapters <= 0) return calls * all * params_local / gpu.StreamingBytesPerS();
      const double grads = ShardingCopyBytes(w.sharding_impl, w.grad_reduce_bytes, 0);
      return calls * ((all - grads) * params_local + grads * trained_local) /
             gpu.StreamingBytesPerS();
    };
    // Per micro-batch and per unit (FSDP wraps each transformer block; ZeRO-3 gathers per
    // module, in buckets of the same order): gather the unit's parameters in forward, again in
    // backward unless the unit stays gathered between them (SHARD_GRAD_OP), reduce-scatter its
    // gradients. Each unit is one collective with the ring's own latency, (n-1) steps: on 1,024
    // ranks milliseconds per unit, which do not shrink as DP grows (before issue 13 the whole
    // model was one collective, one latency). Prefetch depth 1: unit i+1's gather runs during
    // unit i's compute, so each unit exposes what its traffic exceeds its compute by, and the
    // first gather and the last reduce-scatter are exposed whole. `gathers` is how many of a
    // micro-batch's gathers the framework copies out (ShardingCopyBytes).
    // With hybrid sharding each unit's reduce-scatter is followed by its all-reduce across the
    // replicas on a stream of its own (FSDP1's _all_reduce_stream, PyTorch 2.1 on; FSDP2's
    // all-reduce stream): with the shard group inside a scale-up domain the two run on different
    // links and pipeline over the units, the slower one setting the pace; a group across domains
    // shares the NICs with the all-reduce, and their times add. The last unit's pair is exposed
    // end to end.
    const bool shard_in_domain = l.tp * shard <= gpn;
    auto pace = [&](double in_group, double across) {
      return shard_in_domain ? std::max(in_group, across) : in_group + across;
    };
    auto per_unit = [&](bool gather_in_backward, int gathers) {
      const double units = std::max(1.0, layers);
      const double grad = w.grad_reduce_bytes / units;  // a unit's share, bytes per parameter
      // Without EP the experts are the block's own parameters, in its collectives (torchtitan
      // wraps them apart only with EP).
      const bool apart = l.ep > 1;
      const double dense = apart ? trained.dense : trained_local;
      const double experts = apart ? trained.experts : 0;
      const double ag =
          shard_time(Collective::kAllGather, (apart ? dense_gather_bytes : gather_bytes) / units) +
          expert_time(Collective::kAllGather, apart ? expert_gather_bytes / units : 0);
      const double rs = shard_time(Collective::kReduceScatter, dense * grad) +
                        expert_time(Collective::kReduceScatter, experts * grad);
      const double ar =
          replica_time(dense * grad / shard) + expert_replica_time(experts * grad / expert_shard);
      const double fwd_unit = fwd_window / units;
      const double bwd_unit = bwd_window / units;
      const double fwd = ag + (units - 1) * std::max(0.0, ag - fwd_unit);
      if (l.pp > 1) {
        // With pipeline parallelism FSDP does not reshard after the forward and syncs
        // gradients on the last micro-batch only (torchtitan's apply_fsdp and pipeline
        // schedule; the memory model keeps the stage gathered to match): one gather of each
        // unit in the first micro-batch's forward, one reduce-scatter in the last's backward.
        const double bwd = rs + ar + (units - 1) * std::max(0.0, pace(rs, ar) - bwd_unit);
        r.dp_comm_total_s = units * (ag + rs + ar);
        r.dp_comm_s = fwd + bwd;
        r.sharding_copies_s = sharding_copies(1, gathers);
        return;
      }
      const double bwd_ag = gather_in_backward ? ag : 0;
      const double bwd =
          bwd_ag + rs + ar + (units - 1) * std::max(0.0, pace(bwd_ag + rs, ar) - bwd_unit);
      r.dp_comm_total_s = accumulation * units * (ag + bwd_ag + rs + ar);
      r.dp_comm_s = accumulation * (fwd + bwd);
      r.sharding_copies_s = sharding_copies(accumulation, gathers);
    };
    switch (l.strategy) {
      case model::Strategy::kDdp: {
        const double ar = dp_time(Collective::kAllReduce, trained.dense * w.grad_reduce_bytes,
                                  trained.experts * w.grad_reduce_bytes);
        const double tail = time(Collective::kAllReduce, bucket * w.grad_reduce_bytes);
        r.dp_comm_total_s = ar;
        r.dp_comm_s = std::max(tail, ar - bwd_window);
        break;
      }
      case model::Strategy::kZero2:
        // PyTorch FSDP's SHARD_GRAD_OP (FSDP2: reshard_after_forward=False) works per unit as
        // FULL_SHARD does, without the backward's gather (FSDP1 frees the parameters after the
        // backward when it syncs, _should_free_in_backward; Composer runs no no_sync under FSDP):
        // FSDP2 copies its one gather out, FSDP1 none.
        if (model::Zero2GathersPerMicroBatch(w.sharding_impl)) {
          per_unit(false, w.sharding_impl == model::ShardingImpl::kFsdp2 ? 1 : 0);
          break;
        }
        [[fallthrough]];
      case model::Strategy::kZero1: {  // gradients reduce-scattered, parameters gathered
        const double rs = dp_time(Collective::kReduceScatter, trained.dense * w.grad_reduce_bytes,
                                  trained.experts * w.grad_reduce_bytes);
        const double ag =
            dp_time(Collective::kAllGather,
                    trained.DenseWeightBytes(w.GatheredLinearWeightBytes(l.strategy)),
                    trained.ExpertWeightBytes(w.GatheredLinearWeightBytes(l.strategy)));
        // The last bucket may be an expert one, on the experts' slower ring: the larger of the
        // two (Megatron's expert buffers size their buckets by the expert group alike).
        const double expert_bucket = std::min(trained.experts, std::max(40e6, 1e6 * edp));
        const double rs_tail =
            std::max(time(Collective::kReduceScatter, bucket * w.grad_reduce_bytes),
                     expert_time(Collective::kReduceScatter, expert_bucket * w.grad_reduce_bytes));
        const double ag_head = std::max(
            time(Collective::kAllGather,
                 bucket * trained.WeightBytes(w.GatheredLinearWeightBytes(l.strategy)) /
                     trained_local),
            expert_bucket > 0 ? expert_time(Collective::kAllGather,
                                            expert_bucket * expert_gather_bytes / local.experts)
                              : 0.0);
        // ZeRO-2 keeps only its shard of the gradients, so it reduce-scatters them after every
        // micro-batch's backward (ZeRO-1 and the distributed optimizer accumulate them and
        // reduce once per step).
        const double rs_calls = l.strategy == model::Strategy::kZero2 ? accumulation : 1;
        r.dp_comm_total_s = rs_calls * rs + ag;
        double ag_exposed = std::max(dp_overlap > 0 ? ag_head : ag, ag - fwd_window);
        if (w.GathersAfterOptimizerStep(l.strategy, l.virtual_stages)) {
          // Megatron-Core's overlap_param_gather_with_optimizer_step (ChainedOptimizer._step):
          // the first model chunk's gather is dispatched after that chunk's optimizer step, all
          // its buckets back to back in the buffer's order, the model's end first, while the
          // forward's first module waits on the bucket at the model's start, the last one
          // dispatched. What runs beside it is the other chunks' optimizer steps, which follow
          // the first's; the other chunks gather beside the forward as before. Without virtual
          // stages nothing covers it: the forward waits for the whole gather (Megatron-LM
          // refuses the option there; Megatron-Core and NeMo run it).
          const double chunks = l.virtual_stages;
          const double first = ag / chunks;
          ag_exposed = std::max(0.0, first - r.optimizer_s * (chunks - 1) / chunks) +
                       std::max(0.0, ag - first - fwd_window);
        }
        r.dp_comm_s = rs_calls * std::max(rs_tail, rs - bwd_window) + ag_exposed;
        // With each reduce-scatter of ZeRO-2 (ZeRO-1 and the distributed optimizer handle
        // gradients once per step, in their own buffer): DeepSpeed's ZeRO-2 copies its gradients
        // into its bucket each time and gathers once per step into its flat buffer. (PyTorch
        // FSDP's SHARD_GRAD_OP took the per-unit path above.)
        if (l.strategy == model::Strategy::kZero2)
          r.sharding_copies_s = sharding_copies(rs_calls, 0);
        break;
      }
      case model::Strategy::kZero3:
      case model::Strategy::kFsdp:
        per_unit(true, 2);  // forward and backward gathers copied out
        break;
    }
  }
  // What DP communication, EP overlap and the pipeline's steady-state sends hide still costs:
  // while their NCCL kernels run, the compute beside them has fewer SMs and less HBM bandwidth.
  // So do the dgrad collectives Transformer Engine runs beside the wgrad GEMMs without TP overlap
  // (userbuffers' overlap is in the fitted GEMM rate).
  r.contention_s =
      eff_.overlap_slowdown * (std::max(0.0, r.dp_comm_total_s - r.dp_comm_s) + ep_hidden_s +
                               pp_hidden_s + accumulation * layers * comm.tp_hidden);
  r.overhead_s = eff_.step_overhead_s;
  // Over the layout's own DP ranks: the copied spec rounds its GPUs up to whole nodes.
  const MemoryBreakdown mem = EstimateMemory(WithLayout(spec, l, gpus, accumulation), l.strategy,
                                             l.micro_batch, l.recompute, l.dp);
  // Activation offload (Transformer Engine's CPU offload, as Megatron-Core runs it): the first n
  // layers' activations go to host memory on a copy stream while the later layers run forward,
  // and come back while they run backward. Layer i must be out before layer L - n + i starts
  // forward and back before its own backward, so each direction has the other L - 1 layers'
  // compute to hide n layers' copies behind; what does not fit is exposed. Copy engines, not
  // SMs, move the bytes.
  if (mem.offloaded_bytes > 0) {
    const double copies = mem.offloaded_bytes / gpu.HostLinkBytesPerS();
    const double layer_fwd = (t_mb - t_rec) / passes / layers;
    r.offload_s = accumulation * (std::max(0.0, copies - (layers - 1) * layer_fwd) +
                                  std::max(0.0, copies - (layers - 1) * 2 * layer_fwd));
  }
  r.step_s = r.compute_s + r.contention_s + r.sharding_copies_s + r.offload_s + r.ExposedCommS() +
             r.bubble_s + r.optimizer_s + r.overhead_s;

  const double tokens_per_step = static_cast<double>(global) * m.sequence;
  r.tokens_per_s = tokens_per_step / r.step_s;
  r.model_flops = model_flops.model * tokens_per_step;
  // MFU and HFU against the printed peak, as every published MFU is (not the sustained one).
  const double printed_peak = gpu.PeakFlops(precision);
  r.mfu = r.model_flops / (gpus * printed_peak * r.step_s);
  // HFU counts the recomputation, with the same attention convention as MFU.
  r.hfu = CountFlops(m, causal, l.recompute, recomputed, w.recompute_modules).hardware *
          tokens_per_step / (gpus * printed_peak * r.step_s);
  r.memory_bytes = mem.total_bytes;
  r.memory_capacity_bytes = mem.capacity_bytes;
  r.fits = mem.fits;
  return r;
}

}  // namespace gpufleet::plan
