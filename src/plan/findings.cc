#include "plan/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "base/strings.h"
#include "base/units.h"
#include "plan/plan.h"
#include "plan/step_model.h"

namespace gpufleet::plan {

using model::NicRole;
using model::Strategy;
using units::FormatBytes;
using units::FormatPercent;
using units::FormatPower;
using units::FormatTime;

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "?";
}

namespace {

// The GPU count a cluster name claims ("reference-32gpu", "h100-1024-gpus",
// "16K-GPU"), if any.
std::optional<long> ClaimedGpus(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t pos = lower.find("gpu");
  while (pos != std::string::npos) {
    size_t end = pos;
    while (end > 0 && (lower[end - 1] == '-' || lower[end - 1] == '_' || lower[end - 1] == ' ' ||
                       lower[end - 1] == 'x')) {
      --end;
    }
    long mult = 1;
    if (end > 0 && lower[end - 1] == 'k') {
      mult = 1000;
      --end;
    }
    size_t start = end;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(lower[start - 1]))) --start;
    if (start < end) {
      if (auto n = strings::ParseInteger(std::string_view(lower).substr(start, end - start));
          n && *n < 1'000'000'000) {
        return static_cast<long>(*n) * mult;
      }
    }
    pos = lower.find("gpu", pos + 3);
  }
  return std::nullopt;
}

// What shortens an exposed expert all-to-all, without what the spec already does. HybridEP only
// where EP crosses nodes: there it sends a token over the fabric once per node; inside a node its
// measured rate and NCCL's come out close (docs/sim.md, "The dispatchers inside a node").
std::string AllToAllAdvice(const model::Workload& w, bool ep_across_nodes) {
  std::vector<std::string> ways = {"keep expert parallelism inside a node (NVLink)"};
  if (!w.moe_dedup && ep_across_nodes) {
    ways.emplace_back(
        "send a token once per rank and node holding its experts (software.moe_dispatcher: "
        "hybridep)");
  }
  if (!w.moe_comm_overlap) {
    ways.emplace_back("hide it behind the other micro-batch (software.moe_comm_overlap: true)");
  }
  return fmt::format("most of it is the experts' all-to-all: {}, or add fabric bandwidth per GPU",
                     fmt::join(ways, ", "));
}

// What shortens a pipeline bubble: more micro-batches, or more interleaved chunks per rank
// (the bubble is (p-1)/v micro-batch times), naming the virtual_stages values that split each
// rank's share evenly into chunks (Megatron-Core's rule without hand-set first and last stages;
// the spec's own check, model::PipelineSplitFits, also lets uneven stages through) and, where
// only counting the embedding, the loss or both in the split lets the layers interleave (126
// over 8 ranks: both), those words. Megatron-Core's interleaved schedule also wants at least p
// micro-batches a step. `more` is the first remedy, which interleaving is offered beside; the
// pipeline's blocking sends (plain 1F1B) have none but interleaving.
std::string InterleaveAdvice(const model::Workload& w, std::string_view more) {
  const int layers = w.model.layers, pp = w.pipeline, v = std::max(1, w.virtual_stages);
  auto fitting = [&](model::PipelineSplit split) {
    std::vector<int> values;
    const int slots = layers + split.Counted();
    for (int c = v + 1; c <= slots / pp && values.size() < 3; ++c) {
      if (model::InterleavingEven(layers, pp, c, split)) values.push_back(c);
    }
    return values;
  };
  auto list = [&](const std::vector<int>& values) {
    return fmt::format("virtual_stages {} fit (the bubble shrinks in proportion: {:.3g}x at {}){}",
                       fmt::join(values, ", "), static_cast<double>(values.back()) / v,
                       values.back(),
                       w.accumulation < pp
                           ? fmt::format("; interleaving needs {} micro-batches a step or more", pp)
                           : std::string());
  };
  if (const auto own = fitting(w.pipeline_split); !own.empty()) {
    return fmt::format("{}, or interleave: {}", more, list(own));
  }
  // The split's words the spec does not set yet, one at a time before both.
  const model::PipelineSplit& has = w.pipeline_split;
  for (const model::PipelineSplit split :
       {model::PipelineSplit{.embedding = true, .loss = has.loss},
        model::PipelineSplit{.embedding = has.embedding, .loss = true},
        model::PipelineSplit{.embedding = true, .loss = true}}) {
    if (split.Counted() == has.Counted()) continue;
    const auto counted = fitting(split);
    if (counted.empty()) continue;
    std::vector<std::string_view> named, keys;
    if (split.embedding && !has.embedding) {
      named.push_back("the embedding");
      keys.push_back("embedding_in_pipeline_split");
    }
    if (split.loss && !has.loss) {
      named.push_back("the loss");
      keys.push_back("loss_in_pipeline_split");
    }
    return fmt::format(
        "{}; {} layers interleave over pipeline {} only with {} counted in the split "
        "(workload.parallel.{}: true, Megatron-Core's account_for_*_in_pipeline_split), then {}",
        more, layers, pp, fmt::join(named, " and "), fmt::join(keys, ", "), list(counted));
  }
  return fmt::format("{}; no virtual_stages above {} divides {} layers over pipeline {}", more, v,
                     layers, pp);
}
std::string BubbleAdvice(const model::Workload& w) {
  return InterleaveAdvice(w, "raise gradient accumulation (more micro-batches)");
}

// Data moved per step: DDP and ZeRO-1 move one all-reduce's worth, ZeRO-2
// reduce-scatters every micro-batch, ZeRO-3/FSDP moves 1.5x per micro-batch.
int CommunicationRank(Strategy s) {
  switch (s) {
    case Strategy::kDdp:
    case Strategy::kZero1:
      return 0;
    case Strategy::kZero2:
      return 1;
    case Strategy::kZero3:
    case Strategy::kFsdp:
      return 2;
  }
  return 2;
}

class Rules {
 public:
  Rules(const model::Spec& spec, const Plan& plan) : s_(spec), p_(plan) {}

  std::vector<Finding> Run() {
    Spec();
    Memory();
    Compute();
    Network();
    Storage();
    Power();
    Fabric();
    Cost();
    std::stable_sort(out_.begin(), out_.end(), [](const Finding& a, const Finding& b) {
      return static_cast<int>(a.severity) > static_cast<int>(b.severity);
    });
    return out_;
  }

 private:
  void Add(Severity sev, std::string id, std::string component, std::string message, double value,
           double limit, std::string unit, std::string action) {
    out_.push_back({sev, std::move(id), std::move(component), std::move(message), value, limit,
                    std::move(unit), std::move(action)});
  }

  void Spec() {
    const auto& w = s_.workload;
    const int gpus = s_.TotalGpus();
    if (auto claimed = ClaimedGpus(s_.cluster.name); claimed && *claimed != gpus) {
      Add(Severity::kWarning, "spec.name-gpu-count", "spec",
          fmt::format("the name '{}' claims {} GPUs but the spec has {} ({} nodes x {})",
                      s_.cluster.name, *claimed, gpus, s_.cluster.nodes.count,
                      s_.cluster.nodes.gpus_per_node),
          gpus, static_cast<double>(*claimed), "count",
          "fix nodes.count / nodes.gpu.count or the name");
    }
    if (w.sequence_parallel && w.tensor == 1) {
      Add(Severity::kWarning, "spec.sequence-parallel-without-tp", "spec",
          "sequence_parallel is set but tensor parallel is 1: Megatron sequence parallelism "
          "splits the tensor-parallel group's LayerNorm and dropout work, so it changes nothing "
          "here",
          w.tensor, 2, "count",
          "set workload.parallel.tensor >= 2, or use context parallel for long sequences");
    }
    const double params = p_.memory.params.total;
    if (w.model.stated_params > 0 &&
        std::fabs(params - w.model.stated_params) / w.model.stated_params > 0.05) {
      Add(Severity::kWarning, "spec.parameter-count", "spec",
          fmt::format("the model is called {} parameters but its shape gives {}",
                      units::FormatCount(w.model.stated_params), units::FormatCount(params)),
          params, w.model.stated_params, "count", "check layers, hidden, ffn_hidden and vocab");
    }
  }

  void Memory() {
    const auto& m = p_.memory;
    const auto& c = m.configured;
    const auto& w = s_.workload;
    // The strategy table shards over every rank; a hybrid spec changing strategy drops its
    // shard group (spec.cc refuses one with zero1 or zero2).
    const std::string drop_shard = w.shard > 0 ? " and drop workload.parallel.shard" : "";
    if (!c.fits) {
      std::string fix;
      if (m.max_micro_batch > 0) {
        fix = fmt::format("micro-batch {} fits; lower workload.batch.micro", m.max_micro_batch);
      } else if (m.cheapest_fitting) {
        fix =
            fmt::format("use strategy {}{}", model::StrategyName(*m.cheapest_fitting), drop_shard);
      } else {
        // MakePlan refused the spec if even the floor (fsdp over every rank, full recompute,
        // micro-batch 1) did not fit, so the floor fits here.
        fix = w.shard > 0 ? "shard over every rank (drop workload.parallel.shard) and enable full "
                            "activation checkpointing: that fits"
                          : "shard further (fsdp) and enable full activation checkpointing: that "
                            "fits";
      }
      Add(Severity::kCritical, "memory.does-not-fit", "memory",
          fmt::format("{} at micro-batch {} needs {} per GPU; the {} has {}",
                      model::StrategyName(c.strategy), c.micro_batch, FormatBytes(c.total_bytes),
                      s_.cluster.nodes.gpu.name, FormatBytes(c.capacity_bytes)),
          c.total_bytes, c.capacity_bytes, "B", fix);
    } else if (m.cheapest_fitting &&
               CommunicationRank(*m.cheapest_fitting) < CommunicationRank(w.strategy)) {
      Add(Severity::kInfo, "memory.cheaper-strategy-fits", "memory",
          fmt::format("{} also fits ({} per GPU) and moves less data than {}",
                      model::StrategyName(*m.cheapest_fitting),
                      FormatBytes(std::find_if(m.strategies.begin(), m.strategies.end(),
                                               [&](const MemoryBreakdown& b) {
                                                 return b.strategy == *m.cheapest_fitting;
                                               })
                                      ->total_bytes),
                      model::StrategyName(w.strategy)),
          0, 0, "", "consider the cheaper strategy if communication is exposed" + drop_shard);
    }
    // Offloaded activations live in the node's host memory, beside everything else there.
    const double host = c.offloaded_bytes * s_.cluster.nodes.gpus_per_node;
    if (host > 0 && s_.cluster.nodes.memory_bytes > 0 && host > s_.cluster.nodes.memory_bytes) {
      Add(Severity::kCritical, "memory.offload-exceeds-host", "memory",
          fmt::format("activation offload keeps {} per node in host memory; the node has {}",
                      FormatBytes(host), FormatBytes(s_.cluster.nodes.memory_bytes)),
          host, s_.cluster.nodes.memory_bytes, "B",
          "offload fewer layers (workload.activation_offload) or add host memory");
    }
    // Transformer Engine's quantized copy of each linear weight beside bf16's, where FP8 (or
    // NVFP4) parameters would keep the quantized weight alone: Megatron-Core's
    // --fp8-param-gather, off by default, which the model has for this strategy.
    if (!w.Fp8ParamsFor(w.strategy) &&
        TeQuantizedWeightBytes(w, s_.cluster.nodes.gpu.architecture) > 0) {
      model::Spec with = s_;
      with.workload.fp8_param_gather = true;
      if (with.workload.Fp8ParamsFor(w.strategy)) {
        // Beside the configured layout's memory (c, the spec as it is).
        const MemoryBreakdown on = EstimateMemory(with, w.strategy, w.micro_batch, w.recompute);
        const double saved = c.total_bytes - on.total_bytes;
        const bool fp4 = w.precision == model::Precision::kFp4;
        const bool sharded = w.strategy == Strategy::kFsdp || w.strategy == Strategy::kZero3;
        if (saved > 0) {
          Add(!c.fits && on.fits ? Severity::kWarning : Severity::kInfo, "memory.fp8-parameters",
              "memory",
              fmt::format("{}; {} parameters would {} and save {} per GPU ({} to {}{})",
                          sharded
                              ? "the linear weights are sharded and gathered in bf16"
                              : "Transformer Engine keeps a quantized copy of each linear weight "
                                "beside its bf16 one",
                          fp4 ? "NVFP4" : "FP8",
                          sharded ? "keep them in 1 byte" : "keep the quantized weight alone",
                          FormatBytes(saved), FormatBytes(c.total_bytes),
                          FormatBytes(on.total_bytes), !c.fits && on.fits ? ", which fits" : ""),
              saved, 0, "B",
              fmt::format("set workload.software.fp8_param_gather: true (Megatron-Core's {}; "
                          "NeMo's recipes set it)",
                          fp4 ? "--fp4-param-gather" : "--fp8-param-gather"));
        }
      }
    }
    // "DDP up to ~7B parameters, FSDP above": compute where DDP really stops.
    // DDP keeps 16 B per parameter on every GPU (18 with Megatron's fp32 gradient buffer) plus
    // activations and overheads.
    const auto& ddp = m.strategies.front();
    const double other = ddp.activation_bytes * (1 + w.fragmentation) + ddp.reserved_bytes;
    const double state_bytes = 14 + GradientBufferBytes(w, Strategy::kDdp);
    const double ddp_max_params =
        std::max(0.0, (c.capacity_bytes - other) / (state_bytes * (1 + w.fragmentation)));
    const double rule = 7e9;
    // With LoRA the frozen weights hold 2 B each and nothing else: the rule is about states.
    if (w.strategy == Strategy::kDdp && !w.model.lora.Enabled() && p_.memory.params.total > rule) {
      Add(Severity::kWarning, "strategy.ddp-above-7b", "memory",
          fmt::format("DDP for a {} model: practice switches to FSDP/ZeRO above ~7B",
                      units::FormatCount(p_.memory.params.total)),
          p_.memory.params.total, rule, "count", "use fsdp or zero1/zero2");
    }
    // The rule speaks of plain data parallelism; with tensor or pipeline
    // parallelism the comparison means nothing.
    if (w.tensor * w.pipeline == 1 && !w.model.lora.Enabled() && ddp_max_params > 0 &&
        std::fabs(ddp_max_params - rule) / rule > 0.25) {
      Add(Severity::kInfo, "rule.ddp-limit", "memory",
          fmt::format("the rule of thumb 'DDP up to ~7B' does not hold here: with {:.0f} B of "
                      "mixed-precision Adam state per parameter, DDP fits at most {} "
                      "parameters on a {} at this micro-batch",
                      state_bytes, units::FormatCount(ddp_max_params),
                      FormatBytes(c.capacity_bytes)),
          ddp_max_params, rule, "count", "size the strategy with this number, not the rule");
    }
  }

  void Compute() {
    const auto& c = p_.compute;
    // Only an MFU the spec states: the default (the traffic view's) is held to the ceiling.
    if (s_.workload.mfu_stated && c.hfu > c.hfu_ceiling) {
      Add(Severity::kCritical, "compute.mfu-above-ceiling", "compute",
          fmt::format("MFU {} implies hardware FLOPs utilisation {}, above the {}'s measured "
                      "matmul ceiling of {} (MAMF)",
                      FormatPercent(s_.workload.mfu), FormatPercent(c.hfu),
                      s_.cluster.nodes.gpu.name, FormatPercent(c.hfu_ceiling)),
          c.hfu, c.hfu_ceiling, "fraction",
          "lower workload.mfu; 35-50 % is what large runs report");
    }
    if (!p_.step_model_error.empty()) {
      Add(Severity::kWarning, "compute.step-model", "compute",
          fmt::format("the step model cannot evaluate this layout ({}): the step is the stated "
                      "MFU's",
                      p_.step_model_error),
          0, 1, "count", "check the layout against the model's shape");
    } else if (s_.workload.mfu_stated) {
      // The spec's MFU against the model's: a gap is a question to ask, not an error (the
      // stated MFU may be measured on this very cluster).
      const double gap = s_.workload.mfu / p_.step.mfu - 1;
      if (std::abs(gap) > 0.15) {
        Add(Severity::kInfo, "compute.stated-mfu-differs", "compute",
            fmt::format("the spec states MFU {}; the step model predicts {} for this layout ({} "
                        "{}); the plan expects the model's step",
                        FormatPercent(s_.workload.mfu), FormatPercent(p_.step.mfu),
                        FormatPercent(std::abs(gap)), gap > 0 ? "above" : "below"),
            s_.workload.mfu, p_.step.mfu, "fraction",
            "if the stated MFU is measured, the model misses this run: report it (docs/sim.md)");
      }
    }
    // FP8 attention where cuDNN's measured FP8 kernel is slower than its BF16 one (the step
    // model's factor on the plan's layout): per-tensor on Blackwell below about 2,300 tokens a
    // kernel, block-scaled below about 8,600 (Blackwell) and 5,700 (Blackwell Ultra), Hopper
    // from about 5,500.
    const auto& w = s_.workload;
    const std::string& arch = s_.cluster.nodes.gpu.architecture;
    // On a sliding window's layers cuDNN's FP8 backward runs the whole square (the step model's
    // windowed backward): the step the model gives with BF16 attention, when 2 % shorter, whatever
    // the kernel's speed-up elsewhere.
    std::optional<double> bf16_step;
    if (w.fp8_attention && w.model.WindowedLayers() > 0 &&
        w.model.sliding_window < w.model.AttentionSpan() && p_.step_model_error.empty()) {
      model::Spec bf16 = s_;
      bf16.workload.fp8_attention = false;
      if (const auto alt = AnalyticalStepModel().Step(bf16, p_.step.layout, s_.TotalGpus())) {
        bf16_step = alt->step_s;
      }
    }
    if (bf16_step && *bf16_step < 0.98 * p_.step.step_s) {
      Add(Severity::kWarning, "compute.fp8-attention-slower", "compute",
          fmt::format("FP8 attention's backward runs the whole {:.0f}-token square on the {} "
                      "windowed layers (cuDNN's FP8 kernel skips no tile outside the window): "
                      "step {} where BF16 attention gives {}",
                      w.model.AttentionSpan(), w.model.WindowedLayers(), FormatTime(p_.step.step_s),
                      FormatTime(*bf16_step)),
          *bf16_step / p_.step.step_s, 0.98, "fraction",
          "drop software.fp8_attention: keep a windowed model's attention in BF16");
    } else if (const double speed = Fp8AttentionStepSpeed(w, arch, p_.step.layout.cp); speed < 1) {
      const bool mx = w.fp8_recipe == model::Fp8Recipe::kMxfp8;
      const int d = w.model.HeadDim();
      // Kernels shorter than any cuDNN's benchmark times (packed documents) take its shortest's.
      const double kernel = w.model.AttentionSpan() / p_.step.layout.cp;
      Add(Severity::kWarning, "compute.fp8-attention-slower", "compute",
          fmt::format(
              "FP8 attention runs at {:.2f}x BF16 attention's speed on {} at {:.0f} tokens per "
              "kernel (cuDNN's measured forward + backward{}{}{}): it slows the step",
              speed, arch, kernel,
              kernel < kShortestMeasuredAttentionLength
                  ? fmt::format(", at {:.0f}, the shortest it times",
                                kShortestMeasuredAttentionLength)
                  : "",
              mx ? ", block-scaled under MXFP8" : "",
              d != 128 ? fmt::format(", at heads of {} its forward's exponentials against "
                                     "FP8's faster matmuls",
                                     d)
                       : ""),
          speed, 1, "fraction",
          mx ? "drop software.fp8_attention, or scale attention per tensor "
               "(NVTE_DPA_FP8_RECIPE=Float8CurrentScaling), which cuDNN runs faster"
             : "drop software.fp8_attention and keep attention in BF16");
    }
    // A mixture of experts whose routed GEMMs run one kernel per expert where Transformer
    // Engine's fused grouped MLP would run a rank's experts as one: the step the model predicts
    // with it, when that is more than 5 % shorter.
    const int local_experts = w.model.IsMoe() ? w.model.moe.experts / p_.step.layout.ep : 0;
    if (local_experts > 1 && !w.moe_fused_grouped_mlp && p_.step_model_error.empty() &&
        model::FusedGroupedMlpRefusal(w, s_.cluster.nodes.gpu).empty()) {
      model::Spec fused = s_;
      fused.workload.moe_fused_grouped_mlp = true;
      const auto alt = AnalyticalStepModel().Step(fused, p_.step.layout, s_.TotalGpus());
      if (alt && alt->step_s < 0.95 * p_.step.step_s) {
        Add(Severity::kInfo, "compute.moe-expert-gemms", "compute",
            fmt::format("the routed experts run one GEMM per expert ({} a rank); Transformer "
                        "Engine's fused grouped MLP runs them as one kernel: step {} instead of {}",
                        local_experts, FormatTime(alt->step_s), FormatTime(p_.step.step_s)),
            alt->step_s / p_.step.step_s, 0.95, "fraction",
            "set software.moe_expert_gemm: fused (Megatron Bridge's cutedsl_fused_grouped_mlp)");
      }
    }
    const auto& st = p_.step;
    if (st.bubble_s > 0.10 * st.step_s) {
      Add(Severity::kWarning, "compute.pipeline-bubble", "compute",
          fmt::format("the pipeline bubble is {} of the step ({} of {})",
                      FormatPercent(st.bubble_s / st.step_s), FormatTime(st.bubble_s),
                      FormatTime(st.step_s)),
          st.bubble_s / st.step_s, 0.10, "fraction", BubbleAdvice(s_.workload));
    }
  }

  void Network() {
    const auto& c = s_.cluster;
    const int gpus = s_.TotalGpus();
    const auto& f = c.compute_fabric;
    // The scale-up fabric the spec states against the GPU's: one NVLink generation (or
    // Infinity Fabric) per GPU, PCIe always possible. A what-if that changes only the GPU model
    // keeps the old fabric; the model uses what the spec says, so say it.
    {
      const std::string& own = c.nodes.gpu.scale_up_type;
      const std::string& said = c.scale_up.type;
      const bool link = said.rfind("nvlink", 0) == 0 || said == "infinity-fabric";
      if (link && !own.empty() && said != own) {
        Add(Severity::kCritical, "fabric.scale-up-mismatch", "network",
            own == "pcie" ? fmt::format("the {} is a PCIe card, but fabrics.scale_up says {}",
                                        c.nodes.gpu.name, said)
                          : fmt::format("the {} speaks {}, but fabrics.scale_up says {}",
                                        c.nodes.gpu.name, own, said),
            0, 0, "",
            fmt::format("write fabrics.scale_up.type: {} (and its bandwidth), or drop the "
                        "scale_up entry to take the GPU's",
                        own));
      }
    }
    // Each adapter's ports against its PCIe x16 slot, at the lower of the adapter's and the
    // platform's (the GPU's) PCIe generation: per direction a Gen3 lane carries 0.985 GB/s
    // (8 GT/s, 128b/130b), doubling per generation (PCI-SIG).
    for (const auto& g : c.nodes.nics) {
      const model::NicSpec* nic = model::Catalog::Builtin().FindNic(g.model);
      const int platform = c.nodes.gpu.pcie_gen;
      const int gen =
          nic && nic->pcie_gen > 0 && platform > 0 ? std::min(nic->pcie_gen, platform) : 0;
      if (gen < 3) continue;
      const double slot = 16 * 0.985e9 * (1 << (gen - 3));  // bytes/s per direction
      const double ports = g.ports * g.port_speed_bytes_per_s;
      if (ports > 1.05 * slot) {
        Add(Severity::kWarning, "network.nic-exceeds-pcie", "network",
            fmt::format("{} {} x {} = {} per adapter on a PCIe Gen{} x16 slot, which carries {} "
                        "per direction",
                        g.model, g.ports, units::FormatBitRate(g.port_speed_bytes_per_s),
                        units::FormatBitRate(ports), gen, units::FormatBitRate(slot)),
            ports, slot, "B/s",
            fmt::format("count {} per adapter for the fabric, or use one port per adapter; a "
                        "Gen{} host cannot feed both ports at line rate",
                        units::FormatBitRate(slot), gen));
      }
    }
    if (c.nodes.count > 1 && f.present) {
      if (f.type == model::FabricType::kEthernet) {
        Add(Severity::kWarning, "network.tcp-ethernet", "network",
            fmt::format("the compute fabric is plain Ethernet: NCCL falls back to TCP sockets "
                        "(~80 % of wire rate, {} per ring step)",
                        FormatTime(p_.comm.network.inter_alpha_s)),
            gpus, 1, "count", "use RoCE v2 or InfiniBand with GPUDirect RDMA");
      } else if (f.type == model::FabricType::kRoCE && gpus > 128) {
        Add(Severity::kWarning, "network.roce-at-scale", "network",
            fmt::format("RoCE for {} GPUs: practice uses InfiniBand above ~128 GPUs unless the "
                        "Ethernet fabric is tuned for AI (ECMP entropy, PFC/ECN, deep buffers)",
                        gpus),
            gpus, 128, "count",
            "plan InfiniBand, or budget for a tuned RoCE fabric (Llama 3: 16 flows per pair, "
            "E-ECMP)");
      }
    }
    const auto& st = p_.step;
    const double exposed = st.ExposedCommS();
    if (exposed > 0.10 * st.step_s) {
      Add(Severity::kWarning, "network.exposed-communication", "network",
          fmt::format("communication not hidden by compute is {} of the step ({})",
                      FormatPercent(exposed / st.step_s), FormatTime(exposed)),
          exposed / st.step_s, 0.10, "fraction",
          st.ep_comm_s > 0.5 * exposed ? AllToAllAdvice(s_.workload, ExpertGroupNodes() > 1)
          // Plain 1F1B waits for each micro-batch's sends; the interleaved schedule overlaps them.
          : st.pp_comm_s > 0.5 * exposed && s_.workload.virtual_stages <= 1
              ? InterleaveAdvice(
                    s_.workload,
                    "most of it is the pipeline's sends, which plain 1F1B waits for "
                    "(Megatron-Core overlaps them only in its interleaved schedule, whose v "
                    "chunks send v times as often): "
                    "add fabric bandwidth")
              : "raise micro-batch or accumulation, use a cheaper strategy, or add fabric "
                "bandwidth");
    }
    // Megatron-Core dispatches the first chunk's whole gather after its optimizer step, the
    // bucket the forward needs first dispatched last: without other chunks' steps beside it,
    // the forward waits for all of it (the step model).
    const auto& w = s_.workload;
    if (w.optimizer_step_gather == model::OptimizerStepGather::kAlways && w.virtual_stages <= 1 &&
        st.dp_comm_total_s > 0) {
      Add(Severity::kWarning, "network.param-gather-after-optimizer", "network",
          fmt::format("overlap_param_gather_with_optimizer_step without virtual stages: the "
                      "forward waits for the whole parameter all-gather after every optimizer "
                      "step ({} of data-parallel communication exposed a step, the gradients' "
                      "last reduce-scatter with it)",
                      FormatTime(st.dp_comm_s)),
          st.dp_comm_s, 0, "s",
          "turn it off (NVIDIA's MLPerf Llama 3.1 8B config does) and let the gathers overlap "
          "the forward bucket by bucket; it pays only with interleaved pipeline stages, the "
          "only layouts Megatron-LM allows it on");
    }
    if (p_.comm.allreduce_4mib_s > 0.030) {
      Add(Severity::kCritical, "network.allreduce-4mib", "network",
          fmt::format("a 4 MiB all-reduce over all {} GPUs is expected to take {} (> 30 ms)", gpus,
                      FormatTime(p_.comm.allreduce_4mib_s)),
          p_.comm.allreduce_4mib_s, 0.030, "s",
          "the fabric is too slow or too latent for this size: use RDMA and more bandwidth");
    }
    if (c.nodes.count > 1 && c.nodes.Ports(NicRole::kStorage) == 0) {
      Add(Severity::kWarning, "network.no-storage-network", "network",
          "no NIC has role storage: checkpoints and data loading share the compute fabric with "
          "NCCL traffic",
          0, 1, "count", "add a separate storage/control NIC and network (Selene: 2 storage HCAs)");
    }
    // A rack-scale NVLink domain (GB200 NVL72) keeps tensor parallelism on NVLink across trays.
    if (const int domain = c.ScaleUpDomain(); s_.workload.tensor > domain) {
      const bool trays = domain > c.nodes.gpus_per_node;
      Add(Severity::kWarning, "network.tensor-parallel-across-nodes", "network",
          fmt::format("tensor parallel {} spans {} of {} GPUs: its per-layer all-reduces "
                      "leave NVLink",
                      s_.workload.tensor, trays ? "NVLink domains" : "nodes", domain),
          s_.workload.tensor, domain, "count",
          trays ? "keep tensor parallel within an NVLink domain; use pipeline parallel across "
                  "domains"
                : "keep tensor parallel within a node; use pipeline parallel across nodes");
    }
    if (!p_.comm.scaling.empty()) {
      const auto& last = p_.comm.scaling.back();
      if (last.efficiency < 0.90 && p_.comm.scaling.size() > 1) {
        Add(Severity::kWarning, "network.scaling-efficiency", "network",
            fmt::format("weak-scaling efficiency from {} to {} nodes is {}",
                        p_.comm.scaling.front().nodes, last.nodes, FormatPercent(last.efficiency)),
            last.efficiency, 0.90, "fraction",
            "more fabric bandwidth, a less chatty strategy, or a larger per-GPU batch");
      }
    }
  }

  void Storage() {
    const auto& st = p_.storage;
    const auto& w = s_.workload;
    if (s_.cluster.storage.empty()) {
      Add(Severity::kWarning, "storage.none", "storage",
          "no storage tiers: checkpoint and data-loading times are not planned", 0, 1, "count",
          "add storage: hot (local NVMe), warm (parallel filesystem), cold (object store)");
      return;
    }
    if (!st.target_tier.empty() && st.target_write_s > 120) {
      Add(w.checkpoint_async ? Severity::kWarning : Severity::kCritical,
          "storage.checkpoint-over-2min", "storage",
          fmt::format("a {} checkpoint to {} takes {} (practice: under 2 min){}",
                      units::FormatBytesDecimal(st.checkpoint_bytes), st.target_tier,
                      FormatTime(st.target_write_s),
                      w.checkpoint_async ? "; async, so training continues meanwhile"
                                         : "; sync, so training stops meanwhile"),
          st.target_write_s, 120, "s",
          "write to the hot tier first and drain asynchronously, or add storage bandwidth");
    }
    if (!st.async_keeps_up) {
      Add(Severity::kCritical, "storage.async-backlog", "storage",
          fmt::format("an async checkpoint takes {} to write but one starts every {}: "
                      "uploads pile up and the latest checkpoint is never complete",
                      FormatTime(st.target_write_s), FormatTime(w.checkpoint_interval_s)),
          st.target_write_s, w.checkpoint_interval_s, "s",
          "lengthen the interval or write to a faster tier");
    }
    if (st.stall_fraction > 0.05) {
      Add(Severity::kWarning, "storage.checkpoint-stall", "storage",
          fmt::format("checkpoints stop training for {} every {} ({})", FormatTime(st.stall_s),
                      FormatTime(w.checkpoint_interval_s), FormatPercent(st.stall_fraction)),
          st.stall_fraction, 0.05, "fraction", "use async checkpointing or a faster tier");
    }
    if (st.hot_bytes_needed_per_node > st.hot_bytes_available_per_node &&
        st.hot_bytes_available_per_node > 0) {
      Add(Severity::kWarning, "storage.hot-tier-capacity", "storage",
          fmt::format("keeping {} checkpoints needs {} of local NVMe per node; nodes have {}",
                      w.keep_checkpoints, units::FormatBytesDecimal(st.hot_bytes_needed_per_node),
                      units::FormatBytesDecimal(st.hot_bytes_available_per_node)),
          st.hot_bytes_needed_per_node, st.hot_bytes_available_per_node, "B",
          "keep fewer local copies or add drives");
    }
    for (const auto& t : s_.cluster.storage) {
      if (t.kind != model::TierKind::kWarm || t.local) continue;
      if (st.input_bytes_per_s > 0.5 * t.read_bytes_per_s) {
        Add(Severity::kWarning, "storage.input-rate", "storage",
            fmt::format("training reads {} from {} (more than half of its {})",
                        units::FormatByteRate(st.input_bytes_per_s), t.name,
                        units::FormatByteRate(t.read_bytes_per_s)),
            st.input_bytes_per_s, 0.5 * t.read_bytes_per_s, "B/s",
            "stage the dataset on the hot tier or add read bandwidth");
      }
    }
  }

  void Power() {
    const auto& pw = p_.power;
    const auto& f = s_.cluster.facility;
    if (pw.nodes_per_circuit == 0) {
      Add(Severity::kCritical, "power.node-exceeds-circuit", "power",
          fmt::format("one node draws up to {} but a {:.0f} V {:.0f} A {}-phase circuit carries "
                      "{} continuous ({:.1f} A per phase needed)",
                      FormatPower(pw.node.max_w), f.voltage_v, f.current_a, f.phases,
                      FormatPower(pw.circuit_capacity_w), pw.node_current_per_phase_a),
          pw.node.max_w, pw.circuit_capacity_w, "W",
          "feed each node from several circuits or use 415 V three-phase");
    }
    // "A node of 8 x 400 W GPUs draws ~4.5 kW and must not share a 20 A circuit."
    std::vector<std::string> too_small;
    std::string smallest_ok;
    for (const auto& o : pw.common_circuits) {
      if (o.name.find(" 20 A ") == std::string::npos) continue;
      if (o.nodes_per_circuit == 0) {
        too_small.push_back(o.name);
      } else if (smallest_ok.empty()) {
        smallest_ok = fmt::format("{} carries {} ({} node(s))", o.name, FormatPower(o.capacity_w),
                                  o.nodes_per_circuit);
      }
    }
    if (!too_small.empty()) {
      Add(Severity::kInfo, "rule.20a-circuit", "power",
          fmt::format("the rule 'a GPU node must not share a 20 A circuit' holds only for "
                      "some circuits: at {} max, a node exceeds {}{}",
                      FormatPower(pw.node.max_w), fmt::join(too_small, ", "),
                      smallest_ok.empty() ? "" : fmt::format("; {}", smallest_ok)),
          pw.node.max_w, 0, "W", "size circuits to the nameplate maximum, not the typical draw");
    }
    // "Cooling for ~12.8 kW per 32 GPUs" counts GPU boards only.
    const double per32 = pw.it_load_w / s_.TotalGpus() * 32;
    const double rule = 32 * 400;
    if (per32 > 1.25 * rule) {
      Add(Severity::kWarning, "rule.cooling-12.8kw", "power",
          fmt::format("the rule 'cool ~12.8 kW per 32 GPUs' counts 32 x 400 W GPU boards only; "
                      "this cluster's IT load is {} per 32 GPUs ({:.1f}x), {:.1f} tons of cooling "
                      "in all",
                      FormatPower(per32), per32 / rule, pw.cooling_tons),
          per32, rule, "W", "size cooling to the whole IT load, plus PUE overheads");
    }
    if (const RackPower& r = pw.rack; r.racks > 0 && r.budget_w > 0 && r.max_w > r.budget_w) {
      const bool load_too = r.load_w > r.budget_w;
      Add(load_too ? Severity::kCritical : Severity::kWarning, "power.rack-exceeds-budget", "power",
          fmt::format("a full rack ({} nodes{}) draws {} training and {} at the nameplate "
                      "maximum, over its {} budget{}",
                      r.nodes_per_rack,
                      s_.cluster.rack.switch_trays > 0
                          ? fmt::format(", {} NVLink switch trays", s_.cluster.rack.switch_trays)
                          : "",
                      FormatPower(r.load_w), FormatPower(r.max_w), FormatPower(r.budget_w),
                      load_too ? "" : " (training fits; a power excursion trips it)"),
          r.max_w, r.budget_w, "W",
          load_too ? "fewer nodes per rack, a lower GPU power limit, or more power per rack"
                   : "cap GPU power (nvidia-smi -pl) or size the rack's shelves to the maximum");
    }
    if (const RackPower& r = pw.rack;
        r.racks > 0 && s_.cluster.rack.switch_trays > 0 && s_.cluster.rack.switch_tray_w == 0) {
      Add(Severity::kInfo, "power.switch-trays-not-counted", "power",
          fmt::format("{} NVLink switch trays are not in the power figures: their draw is not "
                      "given",
                      r.switch_trays),
          r.switch_trays, 0, "trays", "set racks.switch_tray_power from the rack's data sheet");
    }
    if (f.inlet_temperature_c > 27) {
      Add(Severity::kWarning, "power.inlet-temperature", "power",
          fmt::format("inlet temperature {:.0f} C is above ASHRAE's recommended 18-27 C "
                      "envelope: GPUs will throttle sooner",
                      f.inlet_temperature_c),
          f.inlet_temperature_c, 27, "C", "lower the supply-air temperature");
    }
    if (pw.node.gpu_idle_assumed || !pw.node.max_from_spec) {
      Add(Severity::kInfo, "power.estimated", "power",
          fmt::format("node power is {} ({} max, {} training, {} idle){}",
                      pw.node.max_from_spec ? "estimated from the stated maximum" : "estimated",
                      FormatPower(pw.node.max_w), FormatPower(pw.node.load_w),
                      FormatPower(pw.node.idle_w),
                      pw.node.gpu_idle_assumed ? "; GPU idle assumed 15 % of TDP" : ""),
          pw.node.max_w, 0, "W",
          "set nodes.power.max and nodes.power.idle from the vendor's "
          "nameplate and a measured idle node");
    }
  }

  void Fabric() {
    const auto& fb = p_.fabric;
    if (fb.compute_present && !fb.compute.fits) {
      Add(Severity::kCritical, "fabric.too-large", "fabric",
          fmt::format("{} endpoints exceed a three-tier fat tree of radix-{} switches ({} max)",
                      fb.compute.endpoints, fb.compute.radix, fb.compute.max_endpoints),
          fb.compute.endpoints, fb.compute.max_endpoints, "count",
          "use higher-radix switches or oversubscribe the top tier");
    }
    if (fb.power_unverified) {
      Add(Severity::kInfo, "fabric.power-unverified", "fabric",
          "switch power comes from second-hand catalog figures", fb.power_w, 0, "W",
          "set fabrics.<name>.switch_power from your switch's datasheet");
    }
  }

  void Cost() {
    const auto& c = p_.cost;
    if (c.has_capex && c.has_cloud && !c.breaks_even) {
      Add(Severity::kInfo, "cost.no-break-even", "cost",
          "renting is cheaper than the stated opex alone: building never pays back", 0, 0, "",
          "check opex, utilisation and cloud price");
    }
  }

  // The nodes the expert-parallel group spans (the traffic table's row; 1 without one).
  int ExpertGroupNodes() const {
    for (const auto& t : p_.comm.step.traffic) {
      if (t.kind == "expert-parallel") return t.group_nodes;
    }
    return 1;
  }

  const model::Spec& s_;
  const Plan& p_;
  std::vector<Finding> out_;
};

}  // namespace

std::vector<Finding> Evaluate(const model::Spec& spec, const Plan& plan) {
  return Rules(spec, plan).Run();
}

}  // namespace gpufleet::plan
