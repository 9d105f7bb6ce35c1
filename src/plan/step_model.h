#pragma once
// Training step time at any scale, analytically (behind StepModel, so a finer
// model can replace it): per-micro-batch compute from FLOPs at calibrated
// achievable rates (GEMMs at the GPU's measured matmul ceiling, scaled down
// for small per-GPU GEMMs; attention; memory-bound element-wise work at HBM
// bandwidth); tensor-parallel collectives inside the NVLink domain, partly
// hidden by communication overlap; context-parallel K/V exchange; the pipeline
// bubble (1F1B and interleaved); data-parallel gradient reduce-scatter and
// parameter all-gather (distributed optimizer / ZeRO / FSDP) or all-reduce
// (DDP) over the fabric with NCCL's hierarchical algorithms, overlapped with
// the first forward and last backward, slowing the compute they hide behind;
// the optimizer step. Every constant is
// in one struct with its source or its fit (docs/sim.md). `plan` and `sim`
// both predict the step with it (one model: they agreed on no example before
// issue 13). Pure; thread-safe.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/spec.h"

namespace gpufleet::plan {

// How FLOPs are counted for MFU: Megatron's (attention as the full s x s
// square, Narayanan et al. SC21) or causal (half the square, current
// Megatron-LM code). Changes MFU by a few percent at long sequences.
enum class FlopConvention { kMegatron, kCausal };

// The 2022 Triton flash attention (flash_attn_triton.py, LLM Foundry v0.3's `attn_impl: triton`)
// on Ampere, where its mma.sync is native, as a share of the BF16 peak, counting 3 x the causal
// forward's FLOPs as the step model does. Measured from LLM Foundry's A100 80 GB tables without
// checkpointing (sequence 2,048 to 65,536): the time per token and layer grows linearly with the
// sequence, and the slope is attention's, 6 s w FLOPs per token and layer at this rate: 0.256
// to 0.267 of the peak over five models (125M to 3B), the median 0.263
// (tests/sim/foundry_test.cc, KernelRateFromTheSequenceSweep, recomputes it; docs/sim.md).
// On Hopper it runs at its A100 rate times what FlashAttention and FlashAttention-2, also
// mma.sync, gained from A100 to H100 in one benchmark (1.674x; step_model.cc).
inline constexpr double kTriton2022AttentionOfPeak = 0.263;

// What a workload's FP8 attention (software.fp8_attention) does to its attention rate on `cp`
// context-parallel ranks, each kernel on sequence / cp tokens: cuDNN's measured speed of FP8
// attention over BF16's where it runs (FP8 precision, the native fused kernel; per-tensor or,
// under MXFP8, block-scaled), 1 elsewhere (docs/sim.md).
double Fp8AttentionFactor(const model::Workload& w, std::string_view architecture, int cp);
// The shortest kernel length cuDNN's SDPA training benchmark times (step_model.cc's
// kSdpaLengths): shorter kernels (packed documents, long context split over CP) take its ratios.
inline constexpr double kShortestMeasuredAttentionLength = 2048;

// Softmax's exponentials in the attention forward, at head sizes other than 128. Per score
// element the forward runs 4 d FLOPs of matmul (Q K^T and P V at head size d) on the tensor cores
// and one exponential on the special-function units (MUFU.EX2), counted in series: time per
// element 4d / T + 1 / X, T tensor FLOPs and X exponentials a clock per SM (FlashAttention-3 and
// -4 overlap the two in part; the serial form is what fits their measured rates).
// Checked on published forward kernels (ratios to 128 within 3 %, rates within 6 %):
// FlashAttention-3 on H100 (Shah et al. 2024, arXiv 2407.08608, Fig. 5: BF16 at 16k, not causal,
// 497, 648 and 756 TFLOP/s at heads of 64, 128 and 256, where 989 x 4d / (4d + 256) gives 494, 660
// and 791; FP8 at 128, 1,008 against 990) and FlashAttention-4 on B200 (Dao-AILab/flash-attention
// PR 2605: causal, 4,096 tokens, 713 and 1,090 TFLOP/s at 64 and 128 against 750 and 1,125). The
// step model's attention rate is fitted at 128 (Llama's heads) and carries the rest, so this is the
// time per FLOP at `head_dim` over that at 128, 1 where the units are not known. The backward is
// left at 128's rate per FLOP: on Blackwell it is bound by shared memory, not the exponentials
// (FlashAttention-4's paper), and Blackwell Ultra's doubled units lift cuDNN's backward by little
// more than its clock at 2,048-8,192 tokens (AttentionArchitectureSpeedup); on Hopper
// FlashAttention-3's backward runs 0.845x as fast per FLOP at 64 as at 128, which this leaves out.
double ForwardExponentialFactor(std::string_view architecture, int head_dim, bool fp8);
// A sliding window's attention kernel against a causal one at the same `length` (the attention
// span; packed documents' own): the time of a windowed layer's kernel over a causal layer's,
// forward and backward, from the 128 x 128 tiles each computes and a fixed cost per block of 128
// queries measured on cuDNN's windowed kernels (Blackwell Ultra's, Blackwell's, and Hopper's for
// the rest; step_model.cc has the runs). {1, 1} where the window is no shorter than `length`.
struct WindowedAttentionTime {
  double forward = 1, backward = 1;
};
WindowedAttentionTime WindowedAttentionShare(std::string_view architecture, double length,
                                             double window);
// FP8 attention's speed over BF16 attention's in the step model: cuDNN's measured factor
// (Fp8AttentionFactor, at heads of 128) with each precision's forward exponentials at the model's
// head size (the backward two thirds at 128's rate); 1 where FP8 attention does not run.
double Fp8AttentionStepSpeed(const model::Workload& w, std::string_view architecture, int cp);

// The exchanges LoRA's adapters run over `tp` > 1 ranks on their own, per layer (averaged over
// the layers) in all-reduce volumes of the layer's activations, exposed; 0 without LoRA or TP
// (step_model.cc says which exchange each is).
double LoraTpAllReduces(const model::Workload& w, int tp, bool sequence_parallel);

struct Layout {
  int tp = 1, pp = 1, cp = 1, dp = 1;
  int micro_batch = 1;
  int virtual_stages = 1;  // interleaved 1F1B chunks per pipeline rank
  model::Recompute recompute = model::Recompute::kNone;
  model::Strategy strategy = model::Strategy::kZero1;
  int ep = 1;  // expert parallel, taken from DP x CP (mixture-of-experts models)
  // Hybrid sharding (fsdp, zero3): the DP x CP ranks of a shard group; 0 = all of them.
  int shard = 0;
  // With full recompute, the layers of each stage recomputed; 0 = all of them.
  int recompute_layers = 0;
  int Gpus() const { return tp * pp * cp * dp; }
  // "TP8 PP2 CP1 DP48 mb1 v1 none zero1" (+ " EP8", " shard8"; "full(20)" for 20 layers a stage)
  std::string Describe() const;
};

// The calibrated constants (docs/sim.md has each one's source or fit).
struct Efficiency {
  double gemm_half_flops = 12.5e9;  // a GEMM of F FLOPs runs at F/(F+this) of the matmul ceiling
  double gemm_training = 0.78;  // of the ceiling that GEMMs reach inside training (shapes, fusion)
  double attention = 0.40;      // flash attention fwd+bwd, of the dense peak
  double elementwise_bytes = 136;  // bytes moved per hidden element per token per layer, fwd+bwd
  double dp_overlap = 1.0;      // share of the first-forward / last-backward window DP comm can use
  double pp_p2p_exposed = 0.1;  // share of pipeline send/recv not hidden
  double step_overhead_s = 0.02;  // per step: data loading, logging, launch gaps
  // Compute beside a data-parallel NCCL collective runs this much slower: the collective's
  // kernels hold SMs (an H100 all-gather: 24 blocks of 132 SMs) and HBM bandwidth. Measured:
  // 18.9 % on average over GPT and Llama models on 4 A100s, H100s, MI250s and MI210s (Lee et al.
  // 2025, arXiv 2507.03114). Not fitted.
  double overlap_slowdown = 0.189;
  // Mixture of experts: bytes moved per routed token copy per hidden element per MoE layer,
  // forward and backward: permute and unpermute each read and write 2 B (8 B forward, 8 B
  // backward). Counted, not fitted.
  double moe_permute_bytes = 16;
};

// How far a prediction can be trusted: inside the published runs the model was fitted to or
// checked against (docs/sim.md), outside them on mechanisms it has, or on something the spec
// states that the model ignores.
enum class Confidence { kCalibrated, kExtrapolated, kUnmodelled };
std::string_view ConfidenceName(Confidence c);  // "calibrated", "extrapolated", "unmodelled"

struct Regime {
  Confidence level = Confidence::kCalibrated;
  std::vector<std::string> reasons;  // what is outside, one phrase each
};
// "calibrated" or "extrapolated: FSDP beyond one node (...); ..." (docs/sim.md lists the runs).
std::string RegimeText(const Regime& r);
// Published runs of a software stack other than the calibrated ones (megatron-core-2024,
// nemo-2025) that the model was checked against, not fitted to, on one GPU architecture, and
// the range of its throughput errors on them (predicted / published - 1): what the regime quotes,
// so that a plan on that stack carries the bias measured on it. The calibration tests count the
// rows and keep the range at their extremes (tests/sim/regime_test.cc, docs/sim.md).
struct StackCheck {
  std::string_view stack;         // workload.software.stack
  std::string_view architecture;  // GpuSpec::architecture: "Ampere", "Hopper"
  std::string_view runs;          // what was checked, in the regime's words
  int rows = 0;
  double low = 0, high = 0;  // predicted / published - 1, the rows' extremes
};
// The share of a pipeline's steady-state sends left exposed: all of them in plain 1F1B, which
// waits for each; `pp_p2p_exposed` of them interleaved with `software.pp_comm_overlap`.
double PipelineSendsExposed(const model::Workload& w, int virtual_stages, const Efficiency& e);
std::span<const StackCheck> StackChecks();
// megatron-core-2024 and nemo-2025: the stacks the published runs calibrate; any other is
// extrapolated, with its StackChecks quoted.
bool IsCalibratedStack(std::string_view stack);

// The regime of `layout` on `gpus` GPUs of `spec`'s cluster, against the runs in docs/sim.md:
// Megatron-Core BF16 on H100 (TP <= 8 inside a node, PP <= 16, distributed optimizer, no
// recompute, micro-batch 1, up to 4,608 GPUs, with a margin to twice that; MLPerf's runs check
// it to 11,616) and NeMo FP8 on H100, B200, GB200 and GB300 (CP <= 2, FSDP inside a node or an
// NVLink domain, micro-batch <= 2). Pure.
Regime RegimeOf(const model::Spec& spec, const Layout& layout, int gpus);

struct StepBreakdown {
  Layout layout;
  // What the layout's selective recompute re-runs (the spec's activation_checkpointing_modules);
  // the default (the attention core) where the layout recomputes otherwise.
  model::Workload::RecomputeModules recompute_modules;
  Regime regime;
  int micro_batches = 1;  // per step per pipeline (gradient accumulation)
  // The transformer layers a pipeline rank builds (model::PipelineStageLayers, with the spec's
  // split): the busiest rank's and the last rank's, which also runs the output layer and the
  // loss; and whether the last rank is the one that sets the step.
  int stage_layers = 0;
  int last_stage_layers = 0;
  bool LastStageSlowest() const { return slowest_rank == layout.pp - 1; }
  // The rank that sets the step (from 0) and its MoE layers; a mixture of experts' dense layers,
  // which come first (moe.dense_layers), and those of them on the first rank (RankLayers); 0
  // without them.
  int slowest_rank = 0;
  int slowest_moe_layers = 0;
  int dense_layers = 0;
  int first_stage_dense_layers = 0;
  double compute_s = 0;  // all micro-batches' forward+backward compute (incl. recompute)
  double recompute_s = 0;
  double tp_comm_s = 0;  // exposed
  double cp_comm_s = 0;  // exposed
  double ep_comm_s = 0;  // exposed (expert-parallel all-to-all)
  double pp_comm_s = 0;  // exposed
  double dp_comm_s = 0;  // exposed
  double dp_comm_total_s = 0;
  // Compute slowed by the NCCL collectives hidden beside it: DP's, the all-to-alls EP overlap
  // hides, the pipeline's steady-state sends, TE's asynchronous dgrad collectives (no TP overlap).
  double contention_s = 0;
  double sharding_copies_s = 0;  // the sharding framework's per-micro-batch casts and copies
  double offload_s = 0;          // activation offload's host copies that the layers cannot cover
  double bubble_s = 0;
  double optimizer_s = 0;
  double overhead_s = 0;
  double step_s = 0;
  double tokens_per_s = 0;
  double model_flops = 0;  // per step, all GPUs, by the convention
  double mfu = 0;
  double hfu = 0;
  double memory_bytes = 0;  // per GPU
  double memory_capacity_bytes = 0;
  bool fits = false;
  double ExposedCommS() const { return tp_comm_s + cp_comm_s + ep_comm_s + pp_comm_s + dp_comm_s; }
};

class StepModel {
 public:
  virtual ~StepModel() = default;
  // The step of `spec` on `gpus` GPUs with `layout` (layout.dp is derived from gpus).
  virtual Result<StepBreakdown> Step(const model::Spec& spec, Layout layout, int gpus) const = 0;
};

class AnalyticalStepModel : public StepModel {
 public:
  explicit AnalyticalStepModel(FlopConvention c = FlopConvention::kMegatron,
                               Efficiency e = Efficiency{})
      : convention_(c), eff_(e) {}
  Result<StepBreakdown> Step(const model::Spec& spec, Layout layout, int gpus) const override;

 private:
  FlopConvention convention_;
  Efficiency eff_;
};

// The layout the spec states.
Layout LayoutOf(const model::Spec& spec);

}  // namespace gpufleet::plan
