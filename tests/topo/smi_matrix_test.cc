#include "topo/smi_matrix.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fixtures.h"
#include "test_node.h"

namespace gpufleet::topo {
namespace {

using ::testing::HasSubstr;

SmiMatrix Parse(const std::string& fixture) {
  auto m = ParseSmiMatrix(fixtures::ReadFixture("nvidia-smi-topo/" + fixture), fixture);
  EXPECT_TRUE(m) << fixture << ": " << (m ? "" : m.error().message);
  return m ? *m : SmiMatrix{};
}

TEST(SmiMatrixTest, RawH200OutputWithAnsiTabsAndNicLegend) {
  GPUFLEET_REQUIRE_FIXTURES();
  SmiMatrix m = Parse("hgx-h200-8gpu-nv18-10nic-2socket.txt");
  EXPECT_EQ(m.gpus, 8);
  EXPECT_EQ(m.devices.size(), 18u);
  EXPECT_EQ(m.Cell("GPU0", "GPU7"), "NV18");
  EXPECT_EQ(m.Cell("GPU3", "NIC0"), "PIX");
  EXPECT_EQ(m.Cell("GPU3", "NIC2"), "PIX");  // three PIX NICs on GPU3
  EXPECT_EQ(m.NicName("NIC0"), "mlx5_0");
  EXPECT_EQ(m.cpu_affinity[4], "64-127,192-255");
  EXPECT_EQ(m.numa_affinity[4], "1");
  EXPECT_EQ(m.gpu_numa_id[0], "N/A");
}

TEST(SmiMatrixTest, EveryDriverVariantParses) {
  GPUFLEET_REQUIRE_FIXTURES();
  SmiMatrix a800 = Parse("a800-sxm4-8gpu-4nic-nv8.txt");  // CRLF, spaces
  EXPECT_EQ(a800.Cell("GPU7", "NIC3"), "PIX");
  EXPECT_EQ(a800.Cell("GPU0", "NIC0"), "NODE");
  SmiMatrix dgx1 = Parse("dgx1-v100-8gpu-4mlx5-hybrid-cube-mesh.txt");  // mlx5 columns
  EXPECT_EQ(dgx1.Cell("GPU0", "GPU3"), "NV2");
  EXPECT_EQ(dgx1.Cell("GPU0", "GPU5"), "SYS");
  EXPECT_EQ(dgx1.Cell("GPU0", "mlx5_0"), "PIX");
  EXPECT_EQ(dgx1.NicName("mlx5_2"), "mlx5_2");
  EXPECT_EQ(dgx1.numa_affinity[0], "");  // no NUMA column on that driver
  SmiMatrix asus = Parse("asus-esc8000a-e12-4x-rtx6000ada-pcie-2socket-4x-cx7.txt");
  EXPECT_EQ(asus.Cell("GPU0", "GPU1"), "NODE");
  EXPECT_EQ(asus.Cell("NIC0", "NIC1"), "PIX");
  EXPECT_EQ(Parse("hgx-h100-8gpu-nv18-no-nics-spaces.txt").cpu_affinity[7], "52-103,156-207");
  EXPECT_EQ(Parse("a100-sxm-8gpu-nv12-no-nics-reformatted.txt").Cell("GPU2", "GPU5"), "NV12");
}

// One GB200 NVL72 compute tray (tests/topo/data/SOURCES.md): NV18 between all four GPUs (through
// the rack's NVLink switch trays), SYS to every NIC (the GPUs hang off Grace over NVLink-C2C, not
// PCIe), PIX only between the two ports of a BlueField-3, a NUMA affinity that lists the CPU's
// node and the GPUs' memory-only nodes, and a GPU NUMA ID per GPU (its coherent HBM).
TEST(SmiMatrixTest, Gb200TrayWithNumaListsAndNicLegend) {
  const std::string file =
      std::string(GPUFLEET_SOURCE_DIR) + "/tests/topo/data/gb200-tray-4gpu-8nic-smi-topo.txt";
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  auto m = ParseSmiMatrix(text.str(), file);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->gpus, 4);
  EXPECT_EQ(m->devices.size(), 12u);
  for (const char* a : {"GPU0", "GPU1", "GPU2", "GPU3"}) {
    for (const char* b : {"GPU0", "GPU1", "GPU2", "GPU3"}) {
      EXPECT_EQ(m->Cell(a, b), std::string(a) == b ? "X" : "NV18") << a << "/" << b;
    }
    EXPECT_EQ(m->Cell(a, "NIC0"), "SYS");
  }
  EXPECT_EQ(m->Cell("NIC2", "NIC3"), "PIX");
  EXPECT_EQ(m->Cell("NIC6", "NIC7"), "PIX");
  EXPECT_EQ(m->NicName("NIC7"), "mlx5_7");
  EXPECT_EQ(m->cpu_affinity[2], "72-143");
  EXPECT_EQ(m->numa_affinity[0], "0,3-9,11-17");
  EXPECT_EQ(m->numa_affinity[3], "1,19-25,27-33");
  EXPECT_EQ(m->gpu_numa_id[3], "26");
  // Our rendering of it reads back the same.
  auto again = ParseSmiMatrix(RenderSmiMatrix(*m), "rendered");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_THAT(CompareMatrices(*m, *again), ::testing::IsEmpty());
}

TEST(SmiMatrixTest, RejectsTheDamagedPaste) {
  GPUFLEET_REQUIRE_FIXTURES();
  auto m = ParseSmiMatrix(
      fixtures::ReadFixture("nvidia-smi-topo/h800-8gpu-nv8-4nic-DAMAGED-truncated-paste.txt"),
      "h800.txt");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message,
            "h800.txt:2: not usable `nvidia-smi topo -m` output: row 'GPU0': CPU affinity "
            "'-31,64-95' is not a CPU list (truncated paste?)");
}

TEST(SmiMatrixTest, RejectsOtherDamage) {
  auto err = [](const std::string& text) {
    auto m = ParseSmiMatrix(text, "x.txt");
    EXPECT_FALSE(m);
    return m ? std::string() : m.error().message;
  };
  EXPECT_THAT(err("hello\n"), HasSubstr("no header line starting with GPU0"));
  EXPECT_THAT(err("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV2\t X \n"), HasSubstr("asymmetric"));
  EXPECT_THAT(err("\tGPU0\tGPU1\nGPU0\t X \tNV4\n"), HasSubstr("no row for column 'GPU1'"));
  EXPECT_THAT(err("\tGPU0\tGPU1\nGPU0\t X \tFAST\nGPU1\tFAST\t X \n"),
              HasSubstr("not a path code"));
  EXPECT_THAT(err("\tGPU0\nGPU0\t X \nNIC0\tPIX\n"), HasSubstr("row 'NIC0' has no column"));
}

// A GPU row cut after its CPU list (issue 14) used to leave its NUMA affinity empty: refused now,
// naming the row, the missing column and the line.
TEST(SmiMatrixTest, RefusesAGpuRowCutAfterItsCpuList) {
  auto m = ParseSmiMatrix(
      "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tNV12\t0-3\t0\n"
      "GPU1\tNV12\t X \t4-7\n",
      "cut.txt");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message.rfind("cut.txt:3: ", 0), 0u) << m.error().message;
  EXPECT_THAT(m.error().message,
              HasSubstr("row 'GPU1' has no NUMA Affinity cell (the header has it)"));
}

TEST(SmiMatrixTest, OurRenderingParsesBackToTheSameMatrix) {
  SmiMatrix m = MatrixOf(testing::SmallNode());
  ASSERT_EQ(m.devices, (std::vector<std::string>{"GPU0", "GPU1", "NIC0", "NIC1", "NIC2"}));
  EXPECT_EQ(m.Cell("GPU0", "NIC0"), "PIX");
  EXPECT_EQ(m.cpu_affinity[1], "4-7");
  auto back = ParseSmiMatrix(RenderSmiMatrix(m), "ours");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->cells, m.cells);
  EXPECT_EQ(back->nic_legend, m.nic_legend);
  EXPECT_EQ(back->cpu_affinity, m.cpu_affinity);
}

}  // namespace
}  // namespace gpufleet::topo

namespace gpufleet::topo {
namespace {

TEST(SmiMatrixCompareTest, MatchesNicsByNameAndReportsEachDifferentCell) {
  SmiMatrix ours = MatrixOf(testing::SmallNode());
  EXPECT_TRUE(CompareMatrices(ours, ours).empty());
  // The same node as nvidia-smi prints it on an old driver: mlx5 columns, in another order.
  auto theirs = ParseSmiMatrix(
      "\tGPU0\tGPU1\tmlx5_1\tmlx5_0\tmlx5_2\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tNV12\tSYS\tPIX\tSYS\t0-3\t0\n"
      "GPU1\tNV12\t X \tPIX\tSYS\tNODE\t4-7\t0\n"
      "mlx5_1\tSYS\tPIX\t X \tSYS\tNODE\n"
      "mlx5_0\tPIX\tSYS\tSYS\t X \tSYS\n"
      "mlx5_2\tSYS\tNODE\tNODE\tSYS\t X \n",
      "smi.txt");
  ASSERT_TRUE(theirs) << theirs.error().message;
  auto d = CompareMatrices(ours, *theirs);
  ASSERT_EQ(d.size(), 1u);  // only GPU1's NUMA affinity differs
  EXPECT_EQ(d[0].row, "GPU1");
  EXPECT_EQ(d[0].column, "NUMA Affinity");
  EXPECT_EQ(d[0].ours, "1");
  EXPECT_EQ(d[0].theirs, "0");
}

}  // namespace
}  // namespace gpufleet::topo
