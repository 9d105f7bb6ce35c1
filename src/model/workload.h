#pragma once
// The workload half of a spec: model shape, precision, parallel layout, batch,
// recomputation, data and checkpoint policy. Plain structs; built by LoadSpec().

#include <string>

#include "model/catalog.h"

namespace gpufleet::model {

enum class Strategy { kDdp, kZero1, kZero2, kZero3, kFsdp };
std::string_view StrategyName(Strategy s);

enum class Recompute { kNone, kSelective, kFull };
std::string_view RecomputeName(Recompute r);

enum class Mlp { kGelu, kSwiglu };

struct ModelShape {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;    // = heads without GQA
  int ffn_hidden = 0;  // 4 x hidden for GPT-style MLPs
  Mlp mlp = Mlp::kGelu;
  int vocab = 0;
  int sequence = 0;
  bool tied_embeddings = false;
  double stated_params = 0;  // "parameters:" in the spec, checked against the shape
};

struct Workload {
  ModelShape model;
  Precision precision = Precision::kBf16;
  Strategy strategy = Strategy::kFsdp;
  int tensor = 1;
  int pipeline = 1;
  int context = 1;
  int virtual_stages = 1;  // interleaved 1F1B chunks per pipeline rank
  bool sequence_parallel = false;
  int micro_batch = 1;
  int accumulation = 1;
  int global_batch = 0;  // sequences; derived when not given
  Recompute recompute = Recompute::kNone;
  bool flash_attention = true;
  // The software stack (workload.software): its generation's communication behaviour, which
  // the step time follows. `stack` names the preset the three below default from.
  std::string stack = "megatron-core-2024";
  bool tp_comm_overlap = true;          // TP collectives overlapped with GEMMs (Megatron-Core + TE)
  bool dp_comm_overlap = true;          // DP reduce-scatter / all-gather overlapped with compute
  double grad_reduce_bytes = 2;         // bytes per gradient in the DP reduction (bf16 2, fp32 4)
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

}  // namespace gpufleet::model
