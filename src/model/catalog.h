#pragma once
// The hardware catalog: GPUs, NICs, switches and CPUs with the public source of
// every number (data/catalog/*.yaml, compiled into the binary). A spec names a
// catalog entry and may override any field. Immutable after construction;
// safe to share between threads.

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace gpufleet::model {

enum class Precision { kBf16, kFp16, kFp8, kTf32, kFp32, kFp4 };
std::string_view PrecisionName(Precision p);

// NVFP4's GEMMs over FP8's with per-tensor current scaling, both pre-quantized: Transformer
// Engine's GEMM profiling guide (NVIDIA/TransformerEngine docs/examples/gemm_profiling/
// gemm_profiling.rst), the twelve GEMMs of a 5B layer on B300, 6.812 ms in FP8 and 3.764 ms in
// NVFP4 (1.81x, where B300's FP4 peak is 3x its FP8 peak). Measured on Blackwell Ultra only; the
// same speed-up over FP8 is taken on Blackwell (docs/sim.md, "NVFP4").
inline constexpr double kNvfp4OverFp8Gemm = 6.812 / 3.764;

struct GpuSpec {
  std::string name;
  std::vector<std::string> aliases;
  std::string vendor;
  std::string architecture;
  std::string form_factor;  // SXM, PCIe, OAM
  double memory_bytes = 0;
  double memory_bandwidth_bytes_per_s = 0;
  double bf16_flop_per_s = 0;  // dense tensor peaks
  double fp16_flop_per_s = 0;
  double tf32_flop_per_s = 0;
  double fp8_flop_per_s = 0;  // 0 = not supported
  double fp32_flop_per_s = 0;
  double fp4_flop_per_s = 0;  // 0 = not supported (Blackwell's NVFP4)
  std::string scale_up_type;  // nvlink3, nvlink4, nvlink5, infinity-fabric, pcie
  // Per-GPU scale-up bandwidth, both directions added (vendor convention).
  double scale_up_bandwidth_bytes_per_s = 0;
  double tdp_w = 0;
  double idle_w = 0;  // 0 = not published; the plan then assumes a fraction of TDP
  int pcie_gen = 0;
  double matmul_efficiency = 0;  // measured achievable / dense BF16 peak (MAMF)
  // Measured achievable FP8 / dense FP8 peak (MAMF); 0 = not published: the BF16 fraction.
  double fp8_matmul_efficiency = 0;
  // The share of the printed tensor peaks this GPU sustains against the GPU whose measured
  // ceilings it borrows (its clocks under load), from a kernel timed on both; 1 = as printed.
  // GB200: B200's MAMF, and cuDNN's attention runs 1.036x B200's where the peaks differ 1.111x.
  double sustained_clock = 1;
  // The share of `memory_bandwidth` a streaming kernel measures (one read and one write stream
  // per element: a copy, a scale, torch.clone, an RMSNorm), as `matmul_efficiency` is for GEMMs;
  // the step model's memory-bound work (element-wise layers, casts, the loss, the optimizer, the
  // sharding copies, MoE permutes, recomputed activations) runs at it. Every catalog entry has
  // one; 1 = the printed peak.
  double memory_efficiency = 1;
  std::string source;

  // Dense peak at `p`, 0 when the GPU has no such tensor path.
  double PeakFlops(Precision p) const;
  // That peak at the clocks the GPU sustains (`sustained_clock`): what the step model runs at.
  double SustainedPeakFlops(Precision p) const { return PeakFlops(p) * sustained_clock; }
  // The measured achievable matmul fraction of that peak: FP8's own where published (lower
  // than BF16's on Hopper: 70.9 % against 80.3 %), else BF16's. FP4 (NVFP4): FP8's achievable
  // rate times NVFP4's measured speed over FP8's (kNvfp4OverFp8Gemm), as a share of the FP4 peak.
  double MatmulEfficiency(Precision p) const;
  // Bytes per second memory-bound kernels move: the printed peak times `memory_efficiency`.
  double StreamingBytesPerS() const { return memory_bandwidth_bytes_per_s * memory_efficiency; }
  // Bytes per second one GPU moves to or from host memory, one direction: a Grace superchip's
  // NVLink-C2C (900 GB/s both directions, shared by the Grace's two GPUs on GB200/GB300), else
  // PCIe x16 at the generation's rate times the 87 % a pinned host-to-device copy reaches.
  double HostLinkBytesPerS() const;
};

struct NicSpec {
  std::string name;
  std::vector<std::string> aliases;
  double speed_bytes_per_s = 0;  // one port
  int ports = 1;
  int pcie_gen = 0;
  std::vector<std::string> link_layers;  // infiniband, ethernet
  std::string source;
};

struct SwitchSpec {
  std::string name;
  std::vector<std::string> aliases;
  std::string link_layer;  // infiniband or ethernet
  int radix = 0;           // logical ports at port_speed
  double port_speed_bytes_per_s = 0;
  double power_w = 0;
  bool verify = false;  // true when power_w is second-hand
  std::string source;
};

struct CpuSpec {
  std::string name;
  std::vector<std::string> aliases;
  int cores = 0;
  double tdp_w = 0;
  std::string source;
};

class Catalog {
 public:
  // Parses the four catalog documents. `*_name` name them in errors.
  static Result<Catalog> Parse(std::string_view gpus_yaml, std::string_view nics_yaml,
                               std::string_view switches_yaml, std::string_view cpus_yaml);
  // The catalog compiled into the binary, parsed once. Aborts if it does not
  // parse: that is a build defect, caught by the catalog tests.
  static const Catalog& Builtin();

  // Lookups by name or alias, ignoring case, spaces and punctuation. nullptr if absent.
  const GpuSpec* FindGpu(std::string_view name) const;
  const NicSpec* FindNic(std::string_view name) const;
  const SwitchSpec* FindSwitch(std::string_view name) const;
  const CpuSpec* FindCpu(std::string_view name) const;

  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  const std::vector<NicSpec>& nics() const { return nics_; }
  const std::vector<SwitchSpec>& switches() const { return switches_; }
  const std::vector<CpuSpec>& cpus() const { return cpus_; }

 private:
  friend class CatalogParser;
  std::vector<GpuSpec> gpus_;
  std::vector<NicSpec> nics_;
  std::vector<SwitchSpec> switches_;
  std::vector<CpuSpec> cpus_;
};

// Names of all entries (canonical names only), for "did you mean" hints.
template <typename T>
std::vector<std::string> NamesOf(const std::vector<T>& entries) {
  std::vector<std::string> names;
  for (const auto& e : entries) names.push_back(e.name);
  return names;
}

}  // namespace gpufleet::model
