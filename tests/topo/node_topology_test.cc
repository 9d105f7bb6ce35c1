#include "topo/node_topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_node.h"
#include "topo/affinity.h"
#include "topo/topo_json.h"

namespace gpufleet::topo {
namespace {

TEST(NodeTopologyTest, PathTypesFollowTheNvidiaSmiLegend) {
  NodeTopology t = testing::SmallNode();
  const int gpu0 = t.gpus[0].pci, gpu1 = t.gpus[1].pci;
  const int nic0 = t.nics[0].pci, nic1 = t.nics[1].pci, far = t.nics[2].pci;
  EXPECT_EQ(PathBetween(t, gpu0, gpu0).Label(), "X");
  EXPECT_EQ(PathBetween(t, gpu0, gpu1).Label(), "NV12");      // both on NVSwitches: 12 links each
  EXPECT_EQ(PathBetween(t, gpu0, nic0).Label(), "PIX");       // one switch
  EXPECT_EQ(PathBetween(t, gpu0, nic1).Label(), "SYS");       // across sockets
  EXPECT_EQ(PathBetween(t, gpu1, far).Label(), "NODE");       // same NUMA, other host bridge
  EXPECT_EQ(PathBetween(t, gpu1, far).nccl, NcclPath::kPhb);  // NCCL has no NODE
  t.gpus[1].nvlinks.clear();
  EXPECT_EQ(PathBetween(t, gpu0, gpu1).Label(), "SYS");
}

TEST(NodeTopologyTest, CpuListsAndNcclMasks) {
  EXPECT_EQ(ParseCpuList("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  // 96 CPUs, node 0 = 0-23,48-71: words most significant first.
  std::vector<int> cpus = ParseCpuList("0-23,48-71");
  EXPECT_EQ(CpuMask(cpus, 3), "000000ff,ffff0000,00ffffff");
  EXPECT_EQ(*ParseCpuMask("000000ff,ffff0000,00ffffff"), cpus);
  EXPECT_FALSE(ParseCpuMask("0-15").has_value());
}

// NVLink per-link bandwidth by generation, from the PCI device id, never from the model name.
TEST(NodeTopologyTest, NvLinkBandwidthPerLinkByGeneration) {
  EXPECT_EQ(NvLinkMBpsPerLink(0x1db1), 25000);         // V100 SXM2: NVLink 2
  EXPECT_EQ(NvLinkMBpsPerLink(0x20b2), 25000);         // A100 SXM4 80 GB: NVLink 3
  EXPECT_EQ(NvLinkMBpsPerLink(0x2330), 25000);         // H100 SXM5: NVLink 4
  EXPECT_EQ(NvLinkMBpsPerLink(0x2335), 25000);         // H200: NVLink 4
  EXPECT_EQ(NvLinkMBpsPerLink(0x2901), 50000);         // B200: NVLink 5
  EXPECT_EQ(NvLinkMBpsPerLink(0x26b9), std::nullopt);  // L40S: no NVLink
}

TEST(NodeTopologyTest, PcieBandwidthByGeneration) {
  EXPECT_NEAR((PciLink{16, 16}.BytesPerS()), 31.5e9, 0.1e9);  // Gen4 x16, 128b/130b
  EXPECT_NEAR((PciLink{8, 16}.BytesPerS()), 15.75e9, 0.01e9);
  EXPECT_NEAR((PciLink{2.5, 1}.BytesPerS()), 0.25e9, 1e6);  // Gen1, 8b/10b
}

TEST(AffinityTest, NearestNicsFirstAndTheHcaOrder) {
  NodeTopology t = testing::SmallNode();
  auto a = AffinityOf(t);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].nics, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
  EXPECT_EQ(a[0].nearest_path, "PIX");
  EXPECT_EQ(a[0].cpulist, "0-3");
  EXPECT_EQ(a[0].numactl, "numactl --cpunodebind=0 --membind=0");
  EXPECT_EQ(a[1].nics, (std::vector<std::string>{"mlx5_1", "mlx5_2", "mlx5_0"}));  // PIX, PHB, SYS
  EXPECT_EQ(NcclIbHca(a), "=mlx5_0,mlx5_1");
  t.nics[0].ports[0].state = "DOWN";  // a dead port is not advised
  EXPECT_EQ(AffinityOf(t)[0].nics.front(), "mlx5_1");
}

TEST(TopologyJsonTest, RoundTrips) {
  NodeTopology t = testing::SmallNode();
  auto back = TopologyFromJson(ToJson(t));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(ToJson(*back).dump(), ToJson(t).dump());
  EXPECT_FALSE(TopologyFromJson(nlohmann::json{{"schema", "other"}}));
  EXPECT_FALSE(TopologyFromJson(nlohmann::json{{"schema", kTopologySchema}}));
}

// Found by the capture_json fuzzer: "packages": 1e308 was cast to int (undefined behaviour).
TEST(TopologyJsonTest, AnIntFieldMustBeAnIntegerThatFits) {
  const nlohmann::json good = nlohmann::json::parse(ToJson(testing::SmallNode()).dump());
  for (const nlohmann::json& bad :
       {nlohmann::json(1e308), nlohmann::json(2.5), nlohmann::json(uint64_t{1} << 40),
        nlohmann::json(-(int64_t{1} << 40))}) {
    nlohmann::json j = good;
    j["cpu"]["packages"] = bad;
    auto t = TopologyFromJson(j);
    ASSERT_FALSE(t) << bad.dump();
    EXPECT_THAT(t.error().message, ::testing::HasSubstr("not a gpufleet topology"));
  }
  nlohmann::json j = good;
  j["host_bridge_numa"] = {0, 1e300};
  EXPECT_FALSE(TopologyFromJson(j));
}

}  // namespace
}  // namespace gpufleet::topo
