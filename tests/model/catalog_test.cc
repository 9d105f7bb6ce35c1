#include "model/catalog.h"

#include <gtest/gtest.h>

namespace gpufleet::model {
namespace {

TEST(CatalogTest, BuiltinCatalogHasEveryRequiredPartWithASource) {
  const Catalog& c = Catalog::Builtin();
  for (const char* name :
       {"A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-40GB", "A100-PCIE-80GB", "H100-SXM5-80GB",
        "H100-PCIE-80GB", "H200-SXM-141GB", "B200-SXM-180GB", "L40S", "MI300X"}) {
    const GpuSpec* g = c.FindGpu(name);
    ASSERT_NE(g, nullptr) << name;
    EXPECT_FALSE(g->source.empty()) << name;
    EXPECT_GT(g->bf16_flop_per_s, 0) << name;
    EXPECT_GT(g->memory_bandwidth_bytes_per_s, 0) << name;
    EXPECT_GT(g->scale_up_bandwidth_bytes_per_s, 0) << name;
    EXPECT_GT(g->tdp_w, 0) << name;
    EXPECT_GT(g->pcie_gen, 0) << name;
    EXPECT_GT(g->matmul_efficiency, 0.3) << name;
    EXPECT_LE(g->matmul_efficiency, 1.0) << name;
    // A measured streaming kernel's share of the printed HBM bandwidth (no GPU reaches it).
    EXPECT_GT(g->memory_efficiency, 0.7) << name;
    EXPECT_LT(g->memory_efficiency, 0.95) << name;
  }
  for (const char* name : {"ConnectX-6", "ConnectX-7", "ConnectX-8", "BlueField-3"}) {
    ASSERT_NE(c.FindNic(name), nullptr) << name;
  }
  for (const char* name : {"QM8700", "QM9700", "Q3400-RA", "SN5600"}) {
    const SwitchSpec* s = c.FindSwitch(name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_FALSE(s->source.empty());
  }
}

TEST(CatalogTest, A100AndH100NumbersMatchTheDatasheets) {
  const Catalog& c = Catalog::Builtin();
  const GpuSpec* a100 = c.FindGpu("A100-SXM4-80GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_DOUBLE_EQ(a100->bf16_flop_per_s, 312e12);
  EXPECT_DOUBLE_EQ(a100->tdp_w, 400);
  EXPECT_DOUBLE_EQ(a100->scale_up_bandwidth_bytes_per_s, 600e9);
  EXPECT_DOUBLE_EQ(a100->fp8_flop_per_s, 0);  // Ampere has no FP8 tensor cores
  const GpuSpec* h100 = c.FindGpu("H100-SXM5-80GB");
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(h100->bf16_flop_per_s, 989e12);
  EXPECT_DOUBLE_EQ(h100->fp8_flop_per_s, 1979e12);
  EXPECT_DOUBLE_EQ(h100->PeakFlops(Precision::kFp8), 1979e12);
  const SwitchSpec* qm9700 = c.FindSwitch("QM9700");
  ASSERT_NE(qm9700, nullptr);
  EXPECT_EQ(qm9700->radix, 64);
  EXPECT_DOUBLE_EQ(qm9700->port_speed_bytes_per_s, 50e9);
}

// The 800 Gb/s generation B300 and GB300 ship with: ConnectX-8 (one XDR port, PCIe Gen6) and
// the Quantum-X800 Q3400-RA (144 XDR ports), its power second-hand and marked so.
TEST(CatalogTest, ConnectX8AndQuantumX800AreXdr) {
  const Catalog& c = Catalog::Builtin();
  const NicSpec* cx8 = c.FindNic("ConnectX-8");
  ASSERT_NE(cx8, nullptr);
  EXPECT_DOUBLE_EQ(cx8->speed_bytes_per_s, 100e9);
  EXPECT_EQ(cx8->ports, 1);
  EXPECT_EQ(cx8->pcie_gen, 6);
  const SwitchSpec* xdr = c.FindSwitch("Quantum-X800");
  ASSERT_NE(xdr, nullptr);
  EXPECT_EQ(xdr->name, "Q3400-RA");
  EXPECT_EQ(xdr->radix, 144);
  EXPECT_DOUBLE_EQ(xdr->port_speed_bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(xdr->power_w, 2900);
  EXPECT_TRUE(xdr->verify);
}

// NVFP4: Blackwell's dense FP4 peaks as NVIDIA prints them (sparse | dense), and its GEMM ceiling
// FP8's achievable rate times NVFP4's measured speed over FP8 (Transformer Engine's GEMM
// profiling guide on B300: 6.812 / 3.764 ms), as a share of the FP4 peak; no FP4 before Blackwell.
TEST(CatalogTest, Fp4IsBlackwellsAtItsMeasuredSpeedOverFp8) {
  const Catalog& c = Catalog::Builtin();
  const struct {
    const char* gpu;
    double fp4;
  } kPeaks[] = {{"B200-SXM-180GB", 9000e12},
                {"GB200-NVL72", 10000e12},
                {"B300-SXM-270GB", 13500e12},
                {"GB300-NVL72", 15000e12}};
  for (const auto& [name, fp4] : kPeaks) {
    const GpuSpec* g = c.FindGpu(name);
    ASSERT_NE(g, nullptr) << name;
    EXPECT_DOUBLE_EQ(g->PeakFlops(Precision::kFp4), fp4) << name;
    EXPECT_NEAR(
        g->PeakFlops(Precision::kFp4) * g->MatmulEfficiency(Precision::kFp4),
        g->PeakFlops(Precision::kFp8) * g->MatmulEfficiency(Precision::kFp8) * 6.812 / 3.764, 1e6)
        << name;
  }
  const GpuSpec* h100 = c.FindGpu("H100-SXM5-80GB");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->PeakFlops(Precision::kFp4), 0);
  EXPECT_EQ(h100->MatmulEfficiency(Precision::kFp4), 0);
  EXPECT_EQ(PrecisionName(Precision::kFp4), "fp4");
}

TEST(CatalogTest, GpuMemoryIsInOneUnit) {
  // Vendors' HBM and GDDR "GB" are binary: an H100's "80GB" and an H200's "141GB" are GiB
  // (nvidia-smi: 81,559 and 143,771 MiB), so every GPU's memory is read as GiB.
  const Catalog& c = Catalog::Builtin();
  const std::pair<const char*, double> kMemory[] = {
      {"A100-SXM4-80GB", 80},  {"H100-SXM5-80GB", 80}, {"H200-SXM-141GB", 141},
      {"B200-SXM-180GB", 180}, {"L40S", 48},           {"MI300X", 192}};
  for (const auto& [name, gib] : kMemory) {
    const GpuSpec* g = c.FindGpu(name);
    ASSERT_NE(g, nullptr) << name;
    EXPECT_DOUBLE_EQ(g->memory_bytes, gib * 1024 * 1024 * 1024) << name;
  }
}

TEST(CatalogTest, FindsByAliasIgnoringCaseAndPunctuation) {
  const Catalog& c = Catalog::Builtin();
  EXPECT_EQ(c.FindGpu("a100 80gb sxm"), c.FindGpu("A100-SXM4-80GB"));
  EXPECT_EQ(c.FindGpu("h200"), c.FindGpu("H200-SXM-141GB"));
  EXPECT_EQ(c.FindGpu("A999"), nullptr);
}

TEST(CatalogTest, RejectsAnEntryWithoutASource) {
  Result<Catalog> c = Catalog::Parse(R"(gpus:
  - name: X
    vendor: V
    form_factor: SXM
    memory: 1 GiB
    memory_bandwidth: 1 GB/s
    bf16: 1 TFLOPS
    fp16: 1 TFLOPS
    tf32: 1 TFLOPS
    fp32: 1 TFLOPS
    scale_up: {type: pcie, bandwidth: 64 GB/s}
    tdp: 100 W
    pcie_gen: 4
    matmul_efficiency: 50 %
    memory_efficiency: 90 %
)",
                                     "nics: []", "switches: []", "cpus: []");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message, "data/catalog/gpus.yaml:2:5: gpus[0]: every entry needs a source");
}

TEST(CatalogTest, RejectsAWrongUnitWithItsLocation) {
  Result<Catalog> c = Catalog::Parse(
      "gpus: []", "nics:\n  - {name: N, speed: 400 GB, ports: 1, pcie_gen: 5, source: s}\n",
      "switches: []", "cpus: []");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message,
            "data/catalog/nics.yaml:2:22: nics[0].speed: '400 GB' is a size, expected a "
            "bandwidth such as '400 Gb/s' or '50 GB/s'");
}

}  // namespace
}  // namespace gpufleet::model
