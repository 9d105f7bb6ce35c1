#include "topo/nccl_gen.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures.h"
#include "test_node.h"
#include "topo/discover.h"
#include "topo/lint.h"
#include "topo/nccl_xml.h"
#include "topo/topo_json.h"

namespace gpufleet::topo {
namespace {

TEST(NcclGenTest, SmallNodeInNcclsLayout) {
  NodeTopology t = testing::SmallNode();
  EXPECT_EQ(WriteNcclXml(NcclXmlOf(t)),
            R"(<system version="1">
  <cpu numaid="0" affinity="0000000f" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:01:00.0" class="0x060400" vendor="0x8086" device="0x0000" subsystem_vendor="0x0000" subsystem_device="0x0000" link_speed="16.0 GT/s PCIe" link_width="16">
      <pci busid="0000:03:00.0" class="0x030200" vendor="0x10de" device="0x0000" subsystem_vendor="0x0000" subsystem_device="0x0000" link_speed="16.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="80" rank="0">
          <nvlink target="fffffff:ff:ff" count="12" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:04:00.0" class="0x020700" vendor="0x15b3" device="0x0000" subsystem_vendor="0x0000" subsystem_device="0x0000" link_speed="16.0 GT/s PCIe" link_width="16">
        <nic>
          <net name="mlx5_0" dev="0" speed="200000" port="1"/>
        </nic>
      </pci>
    </pci>
  </cpu>
  <cpu numaid="1" affinity="000000f0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:81:00.0" class="0x060400" vendor="0x8086" device="0x0000" subsystem_vendor="0x0000" subsystem_device="0x0000" link_speed="16.0 GT/s PCIe" link_width="16">
      <pci busid="0000:83:00.0" class="0x030200" vendor="0x10de" device="0x0000" subsystem_vendor="0x0000" subsystem_device="0x0000" link_speed="16.0 GT/s PCIe" link_width="16">
        <gpu dev="1" sm="80" rank="1">
          <nvlink target="fffffff:ff:ff" count="12" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:84:00.0" class="0x020700" vendor="0x15b3" device="0x0000" subsystem_vendor="0x0000" subsystem_device="0x0000" link_speed="16.0 GT/s PCIe" link_width="16">
        <nic>
          <net name="mlx5_1" dev="1" speed="200000" port="1"/>
        </nic>
      </pci>
    </pci>
    <pci busid="0000:91:00.0" class="0x020700" vendor="0x15b3" device="0x0000" subsystem_vendor="0x0000" subsystem_device="0x0000" link_speed="16.0 GT/s PCIe" link_width="16">
      <nic>
        <net name="mlx5_2" dev="2" speed="200000" port="1"/>
      </nic>
    </pci>
  </cpu>
</system>
)");
}

// A Grace-attached GPU (GH200, GB200): NVLink-C2C to its CPU as NCCL writes it, <c2c count bw>
// with bw in MB/s per link, and the file lints clean on arm64.
TEST(NcclGenTest, GraceGpuCarriesItsC2cLinks) {
  NodeTopology t = testing::SmallNode();
  t.arch = "aarch64";
  t.cpu_vendor.clear();
  t.gpus[0].c2c_links = 10;
  t.gpus[0].c2c_mbps = 45000;
  const std::string xml = WriteNcclXml(NcclXmlOf(t));
  EXPECT_THAT(xml, ::testing::HasSubstr("<c2c count=\"10\" bw=\"45000\"/>"));
  EXPECT_THAT(xml, ::testing::HasSubstr("arch=\"arm64\""));
  auto back = ReadNcclXml(xml, "grace.xml");
  ASSERT_TRUE(back);
  const LintReport r = LintNcclXml(*back);
  EXPECT_EQ(r.Errors() + r.Warnings(), 0) << (r.findings.empty() ? "" : r.findings[0].message);
  auto json = TopologyFromJson(nlohmann::json::parse(ToJson(t).dump()));
  ASSERT_TRUE(json) << json.error().message;
  EXPECT_EQ(json->gpus[0].c2c_links, 10);
  EXPECT_DOUBLE_EQ(json->gpus[0].c2c_mbps, 45000);
}

TEST(NcclGenTest, AmdFamilyUsesNcclsCpuidArithmetic) {
  NodeTopology t = testing::SmallNode();
  t.cpu_vendor = "AuthenticAMD";
  t.cpu_family = 25;  // Zen 3/4 in /proc/cpuinfo -> 15 + (10 << 4) = 175 in NCCL files
  EXPECT_EQ(NcclXmlOf(t).children[0].GetOr("familyid", ""), "175");
}

TEST(NcclGenTest, DgxTwoFileIsCleanAndReadsBack) {
  GPUFLEET_REQUIRE_FIXTURES();
  DiscoverOptions o;
  o.hwloc_xml = fixtures::Fixture("hwloc/nvidiaDGX2.xml");
  auto t = Discover(o);
  ASSERT_TRUE(t);
  const std::string text = WriteNcclXml(NcclXmlOf(*t));
  auto d = ReadNcclXml(text, "dgx2.xml");
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_TRUE(d->syntax.empty());
  LintReport r = LintNcclXml(*d);
  EXPECT_EQ(r.Errors(), 0);
  EXPECT_EQ(r.Warnings(), 0);
  // NCCL's walk keeps switch upstream ports only: GPU 34:00.0 sits under 2c:00.0 > 32:00.0
  // (root port 2b:00.0 and downstream ports 2d:04.0, 33:00.0 do not appear).
  EXPECT_EQ(text.find("0000:2b:00.0"), std::string::npos);
  EXPECT_EQ(text.find("0000:33:00.0"), std::string::npos);
  const XmlElement& cpu0 = d->root.children[0];
  ASSERT_FALSE(cpu0.children.empty());
  EXPECT_EQ(cpu0.children[0].GetOr("busid", ""), "0000:2c:00.0");
  EXPECT_EQ(cpu0.children[0].children[0].GetOr("busid", ""), "0000:32:00.0");
  EXPECT_EQ(cpu0.children[0].children[0].GetOr("link_speed", ""), "8.0 GT/s PCIe");  // 15.75 GB/s
  EXPECT_EQ(d->root.children.size(), 2u);
}

}  // namespace
}  // namespace gpufleet::topo
