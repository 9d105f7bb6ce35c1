#include "topo/discover.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "../common/tree.h"
#include "fixtures.h"
#include "topo/lint.h"
#include "topo/nccl_gen.h"
#include "topo/nccl_xml.h"
#include "topo/smi_matrix.h"
#include "topo/topo_json.h"

namespace gpufleet::topo {
namespace {

Result<NodeTopology> FromXml(const std::string& fixture) {
  DiscoverOptions o;
  o.hwloc_xml = fixtures::Fixture("hwloc/" + fixture);
  return Discover(o);
}

TEST(DiscoverTest, DgxTwoMatrixMatchesItsPcieStructure) {
  GPUFLEET_REQUIRE_FIXTURES();
  auto t = FromXml("nvidiaDGX2.xml");
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->gpus.size(), 16u);
  EXPECT_EQ(t->gpus[0].model, "Tesla V100-SXM3-32GB-H");
  EXPECT_EQ(t->cpu_vendor, "GenuineIntel");
  EXPECT_EQ(t->cpu_model_number, 85);
  // DGX-2: 8 GPUs per socket, in pairs under a PLX switch, two pairs per upper switch,
  // two upper switches per root port (host bridge).
  SmiMatrix m = MatrixOf(*t, /*pcie_only=*/true);
  EXPECT_EQ(m.Cell("GPU0", "GPU1"), "PIX");   // 0000:34 and 0000:36 under switch 0000:32
  EXPECT_EQ(m.Cell("GPU0", "GPU2"), "PXB");   // meet at switch 0000:2c
  EXPECT_EQ(m.Cell("GPU0", "GPU4"), "NODE");  // other host bridge, same socket
  EXPECT_EQ(m.Cell("GPU0", "GPU8"), "SYS");   // other socket
  for (int g = 0; g < 8; ++g) EXPECT_EQ(m.numa_affinity[static_cast<size_t>(g)], "0");
  for (int g = 8; g < 16; ++g) EXPECT_EQ(m.numa_affinity[static_cast<size_t>(g)], "1");
  // NVLink from hwloc's NVLinkBandwidth distances: 6 links per V100 into the NVSwitches.
  for (const auto& g : t->gpus) EXPECT_EQ(g.NvLinkCount(), 6) << g.index;
  EXPECT_EQ(MatrixOf(*t).Cell("GPU0", "GPU15"), "NV6");
  int nvswitches = 0;
  for (const auto& d : t->pci) nvswitches += d.kind == DeviceKind::kNvSwitch;
  EXPECT_EQ(nvswitches, 12);
}

// IBM S822LC "Minsky" (hwloc's own test capture, tests/topo/data/SOURCES.md): each P100 has two
// NVLink 1 links to its partner GPU and two to its POWER8 package, which hwloc lists as a
// Package in its NVLinkBandwidth matrix (40,000 MB/s = 2 x 20 GB/s). The CPU links reach
// NodeTopology, the JSON and the NCCL file (tclass 0x068001), and cores are not threads.
TEST(DiscoverTest, Power8CaptureHasGpuToCpuNvLinksAndRealCores) {
  DiscoverOptions o;
  o.hwloc_xml = std::string(GPUFLEET_SOURCE_DIR) + "/tests/topo/data/power8gpudistances.xml";
  auto t = Discover(o);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->arch, "ppc64le");
  ASSERT_EQ(t->numa.size(), 2u);
  for (const auto& n : t->numa) {
    EXPECT_EQ(n.cores, 4);
    EXPECT_EQ(n.cpus.size(), 8u);
  }
  ASSERT_EQ(t->gpus.size(), 4u);
  for (const auto& g : t->gpus) {
    ASSERT_EQ(g.nvlinks.size(), 2u) << g.index;
    int to_gpu = 0, to_cpu = 0;
    for (const auto& l : g.nvlinks) (l.to == NvLink::To::kCpu ? to_cpu : to_gpu) += l.count;
    EXPECT_EQ(to_gpu, 2) << g.index;
    EXPECT_EQ(to_cpu, 2) << g.index;
  }
  const std::string xml = WriteNcclXml(NcclXmlOf(*t));
  EXPECT_THAT(xml, ::testing::HasSubstr("arch=\"ppc64\""));
  EXPECT_THAT(xml, ::testing::HasSubstr(
                       "<nvlink target=\"fffffff:ff:ff\" count=\"2\" tclass=\"0x068001\"/>"));
  auto own = ReadNcclXml(xml, "power8.xml");
  ASSERT_TRUE(own);
  const LintReport r = LintNcclXml(*own);
  EXPECT_EQ(r.Errors() + r.Warnings(), 0) << (r.findings.empty() ? "" : r.findings[0].message);
  auto back = TopologyFromJson(nlohmann::json::parse(ToJson(*t).dump()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->gpus[0].nvlinks[1].to, NvLink::To::kCpu);
}

TEST(DiscoverTest, EveryHwlocFixtureLoads) {
  GPUFLEET_REQUIRE_FIXTURES();
  for (const auto& e : std::filesystem::directory_iterator(fixtures::Fixture("hwloc"))) {
    if (e.path().extension() != ".xml") continue;
    auto t = FromXml(e.path().filename().string());
    EXPECT_TRUE(t) << e.path() << ": " << (t ? "" : t.error().message);
    if (t) {
      EXPECT_FALSE(t->numa.empty()) << e.path();
    }
  }
  auto wholeio = FromXml("32em64t-2n8c2t-pci-wholeio.xml");
  ASSERT_TRUE(wholeio);
  EXPECT_EQ(wholeio->nics.size(), 3u);
  auto ib = std::find_if(wholeio->nics.begin(), wholeio->nics.end(),
                         [](const Nic& n) { return n.name == "mlx5_0"; });
  ASSERT_NE(ib, wholeio->nics.end());
  EXPECT_EQ(ib->netdev, "ib0");
  ASSERT_EQ(ib->ports.size(), 1u);
  EXPECT_EQ(ib->ports[0].state, "ACTIVE");  // hwloc's Port1State "4"
}

// Cores are not hardware threads (issue 14): hwloc's 24em64t-2n6c2t capture has 2 packages of
// 6 cores with 2 threads each, one package per NUMA node; the JSON keeps both counts.
TEST(DiscoverTest, CountsCoresAndHardwareThreadsApart) {
  GPUFLEET_REQUIRE_FIXTURES();
  auto t = FromXml("24em64t-2n6c2t-pci.xml");
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->numa.size(), 2u);
  for (const auto& n : t->numa) {
    EXPECT_EQ(n.cores, 6) << n.id;
    EXPECT_EQ(n.cpus.size(), 12u) << n.id;
  }
  auto back = TopologyFromJson(nlohmann::json::parse(ToJson(*t).dump()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->numa[1].cores, 6);
}

TEST(DiscoverTest, ReadsACapturedSysfsTree) {
  GPUFLEET_REQUIRE_FIXTURES();
  const testing::Tree tree("capture-test");
  const std::string dir = tree.path();
  const std::string cmd = "tar -xjf '" +
                          fixtures::Fixture("hwloc/40intel64-2g2n4c+pcilocality.tar.bz2") +
                          "' -C '" + dir + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  DiscoverOptions o;
  o.root = dir + "/40intel64-2g2n4c+pci";
  auto t = Discover(o);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->numa.size(), 4u);
  EXPECT_EQ(t->hostname, "");  // not this machine's name
  // The captured node's CPU, from its /proc/cpuinfo (issue 14: it was left empty).
  EXPECT_EQ(t->cpu_vendor, "GenuineIntel");
  EXPECT_EQ(t->cpu_family, 6);
  EXPECT_EQ(t->cpu_model_number, 47);
  EXPECT_THAT(t->notes, ::testing::Contains("no GPU found"));
  auto qib =
      std::find_if(t->nics.begin(), t->nics.end(), [](const Nic& n) { return n.name == "qib0"; });
  ASSERT_NE(qib, t->nics.end());
  ASSERT_FALSE(qib->ports.empty());  // from sys/class/infiniband in the capture
}

TEST(DiscoverTest, LiveNodeWithoutGpusSaysSoPlainly) {
  auto t = Discover({});
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->source, "live");
  EXPECT_FALSE(t->numa.empty());
  if (t->gpus.empty()) {
    EXPECT_THAT(t->notes, ::testing::Contains("no GPU found"));
  }
}

TEST(DiscoverTest, BadInputsAreOneLineErrors) {
  DiscoverOptions o;
  o.hwloc_xml = "/nonexistent.xml";
  auto missing = Discover(o);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  o.hwloc_xml = "/tmp";
  EXPECT_EQ(Discover(o).error().message, "/tmp: is a directory, expected an hwloc XML file");
  const testing::Tree tree("junk-xml");
  o.hwloc_xml = tree.Write("junk.xml", "this is not xml");
  auto bad = Discover(o);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  DiscoverOptions r;
  r.root = "/tmp";
  EXPECT_THAT(Discover(r).error().message, ::testing::HasSubstr("no sys/devices inside"));
}

}  // namespace
}  // namespace gpufleet::topo
