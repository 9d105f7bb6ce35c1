// topo lint: every vendor file, the known-bad file, and one planted mistake per detectable row of
// the mistakes table in ../shared/reference/topology.md §5.1 (row numbers in the test names).

#include "topo/lint.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "../common/replace.h"
#include "fixtures.h"
#include "test_node.h"
#include "topo/discover.h"
#include "topo/nccl_gen.h"

namespace gpufleet::topo {
namespace {

// A small, clean file; tests replace one line. Line numbers matter.
constexpr const char* kGood = R"(<system version="1">
  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="AuthenticAMD">
    <pci busid="0000:01:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="16">
      <pci busid="0000:07:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="80" rank="0" gdr="1">
          <nvlink target="fffffff:ff:ff" count="12" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:08:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16">
        <nic>
          <net name="mlx5_0" dev="0" speed="200000" port="1"/>
        </nic>
      </pci>
    </pci>
  </cpu>
  <cpu numaid="1" affinity="ffff0000" arch="x86_64" vendor="AuthenticAMD">
    <pci busid="0000:81:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="1" sm="80" rank="1" gdr="1">
        <nvlink target="fffffff:ff:ff" count="12" tclass="0x068000"/>
      </gpu>
    </pci>
  </cpu>
</system>
)";

using test::Replace;

LintReport Lint(const std::string& text) {
  auto d = ReadNcclXml(text, "t.xml");
  EXPECT_TRUE(d) << (d ? "" : d.error().message);
  return d ? LintNcclXml(*d) : LintReport{};
}

// "id@line:severity" of every finding that is not info.
std::vector<std::string> Problems(const LintReport& r) {
  std::vector<std::string> out;
  for (const auto& f : r.findings) {
    if (f.severity == LintSeverity::kInfo) continue;
    out.push_back(f.id + "@" + std::to_string(f.line) + ":" +
                  std::string(LintSeverityName(f.severity)));
  }
  return out;
}

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(LintTest, CleanFileHasNoProblems) { EXPECT_THAT(Problems(Lint(kGood)), IsEmpty()); }

TEST(LintTest, Row1GpuAndNetInTheWrongPlace) {
  auto r = Lint(Replace(kGood, "    <pci busid=\"0000:01:00.0\"",
                        "    <gpu dev=\"5\"/>\n    <net name=\"mlx5_9\" dev=\"9\"/>\n    <pci "
                        "busid=\"0000:01:00.0\""));
  EXPECT_THAT(Problems(r),
              ElementsAre("nccl.misplaced-element@3:error", "nccl.misplaced-element@4:error"));
}

TEST(LintTest, Row2SyntaxNcclRejects) {
  auto r = Lint(Replace(
      Replace(kGood, "<system version=\"1\">", "<?xml version=\"1.0\"?>\n<system version=\"1\">"),
      "  <cpu numaid=\"1\"", "\t<cpu numaid=\"1\""));
  EXPECT_THAT(Problems(r), ElementsAre("nccl.xml-declaration@1:error", "nccl.whitespace@17:error"));
}

TEST(LintTest, Row4CpuWithoutArchOrVendor) {
  auto r = Lint(Replace(kGood, "affinity=\"ffff0000\" arch=\"x86_64\" vendor=\"AuthenticAMD\"",
                        "affinity=\"ffff0000\""));
  EXPECT_THAT(Problems(r), ElementsAre("nccl.cpu-attributes@16:warning"));
}

TEST(LintTest, Row5MadeUpSwitchWithoutIdsOrClass) {
  auto r = Lint(
      Replace(kGood, "<pci busid=\"0000:01:00.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\"",
              "<pci busid=\"ffff:ff:01.0\""));
  EXPECT_THAT(Problems(r),
              ElementsAre("nccl.missing-attribute@3:error", "nccl.missing-attribute@3:error",
                          "nccl.fake-switch-ids@3:warning"));
}

TEST(LintTest, Row6AffinityMasksCopiedOrOverlapping) {
  EXPECT_THAT(Problems(Lint(Replace(kGood, "affinity=\"ffff0000\"", "affinity=\"0000ffff\""))),
              ElementsAre("nccl.affinity-copied@16:error"));
  EXPECT_THAT(Problems(Lint(Replace(kGood, "affinity=\"ffff0000\"", "affinity=\"ffff8000\""))),
              ElementsAre("nccl.affinity-overlap@16:error"));
  EXPECT_THAT(Problems(Lint(Replace(kGood, "affinity=\"ffff0000\"", "affinity=\"0-15\""))),
              ElementsAre("nccl.affinity-format@16:error"));
}

TEST(LintTest, Row7NumaMinusOne) {
  EXPECT_THAT(Problems(Lint(Replace(kGood, "numaid=\"1\"", "numaid=\"-1\""))),
              ElementsAre("nccl.numa-unknown@16:warning"));
}

TEST(LintTest, Row10NvSwitchLinksWrittenPerPeer) {
  auto r =
      Lint(Replace(kGood,
                   "<nvlink target=\"fffffff:ff:ff\" count=\"12\" tclass=\"0x068000\"/>\n        "
                   "</gpu>\n      </pci>\n      <pci busid=\"0000:08",
                   "<nvlink target=\"0000:81:00.0\" count=\"12\" tclass=\"0x068000\"/>\n"
                   "          <nvlink target=\"0000:07:00.0\" count=\"12\" tclass=\"0x068000\"/>\n"
                   "        </gpu>\n      </pci>\n      <pci busid=\"0000:08"));
  ASSERT_THAT(Problems(r), Contains("nccl.nvswitch-fanout@6:error"));
  for (const auto& f : r.findings) {
    if (f.id == "nccl.nvswitch-fanout") {
      EXPECT_THAT(f.nccl_does, ::testing::HasSubstr("24 links instead of 12 (2x"));
    }
  }
}

TEST(LintTest, Row11UnknownLinkSpeedIsGen3AndWidthZeroIsFine) {
  auto r = Lint(Replace(
      kGood,
      "<pci busid=\"0000:81:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
      "link_width=\"16\"",
      "<pci busid=\"0000:81:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s\" link_width=\"0\""));
  EXPECT_THAT(Problems(r),
              ElementsAre("nccl.link-speed-unknown@17:warning"));  // NCCL's own fallback string
  bool width_note = false;
  for (const auto& f : r.findings)
    width_note = width_note || (f.id == "nccl.link-width-zero" && f.line == 17);
  EXPECT_TRUE(width_note);
}

TEST(LintTest, Row13TooManyElements) {
  std::string many;
  for (int i = 0; i < 260; ++i)
    many += "      <pci busid=\"0000:09:00." + std::to_string(i % 8) +
            "\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"/>\n";
  auto d = ReadNcclXml(Replace(kGood, "    </pci>\n  </cpu>\n  <cpu numaid=\"1\"",
                               many + "    </pci>\n  </cpu>\n  <cpu numaid=\"1\""),
                       "t.xml");
  ASSERT_TRUE(d);
  EXPECT_THAT(Problems(LintNcclXml(*d)), Contains("nccl.too-many-nodes@1:error"));
}

TEST(LintTest, Row15UpperCaseOrLongDomainBusIds) {
  auto r = Lint(Replace(kGood, "busid=\"0000:81:00.0\"", "busid=\"00000000:81:00.0\""));
  ASSERT_THAT(Problems(r), ElementsAre("nccl.busid-format@17:error"));
  EXPECT_EQ(r.findings.front().fix, "write busid=\"0000:81:00.0\"");
}

TEST(LintTest, OctalNumbersAndBadNvLinkTargets) {
  auto octal = Lint(Replace(kGood, "<gpu dev=\"1\"", "<gpu dev=\"08\""));
  EXPECT_THAT(Problems(octal), ElementsAre("nccl.octal-number@18:error"));
  EXPECT_EQ(octal.findings.front().fix, "write dev=\"8\"");
  // Longer than any integer (std::stol threw out_of_range and aborted lint): the fix is text.
  auto long_octal = Lint(Replace(kGood, "<gpu dev=\"1\"", "<gpu dev=\"-0099999999999999999999\""));
  ASSERT_THAT(Problems(long_octal), Contains("nccl.octal-number@18:error"));
  EXPECT_EQ(long_octal.findings.front().fix, "write dev=\"-99999999999999999999\"");
  EXPECT_THAT(
      Problems(Lint(Replace(
          kGood,
          "<nvlink target=\"fffffff:ff:ff\" count=\"12\" tclass=\"0x068000\"/>\n      </gpu>",
          "<nvlink target=\"1\" count=\"12\" tclass=\"0x030200\"/>\n      </gpu>"))),
      ElementsAre("nccl.nvlink-target@19:error"));
}

// What a hand-written file says, named (issue 14): attributes NCCL does not read, with the one
// they were meant to be; PCI ids that are not hex; a <pci> NCCL cannot find at all.
TEST(LintTest, NamesWhatTheFileWrote) {
  const std::string text = R"(<system version="1">
  <cpu numa="0" affinity="0000ffff" arch="x86_64" vendor="AuthenticAMD">
    <pci bus="0000:07:00.0" class="0x030200" device="NVIDIA A100 80GB" link_speed="16.0 GT/s PCIe">
      <gpu dev="0" sm="80" rank="0" gdr="1" pci="0000:07:00.0"/>
    </pci>
    <pci link_speed="16.0 GT/s PCIe"/>
  </cpu>
</system>
)";
  const LintReport r = Lint(text);
  auto message = [&](const std::string& id, int line) {
    std::string all;
    for (const auto& f : r.findings) {
      if (f.id == id && f.line == line) all += f.message + " | " + f.fix + "\n";
    }
    return all;
  };
  EXPECT_THAT(message("nccl.unknown-attribute", 2),
              HasSubstr("numa is not an NCCL attribute; did you mean numaid?"));
  EXPECT_THAT(message("nccl.missing-attribute", 2),
              HasSubstr("<cpu> without numaid (it has numa=\"0\", which NCCL does not read"));
  EXPECT_THAT(message("nccl.unknown-attribute", 3),
              HasSubstr("bus is not an NCCL attribute; did you mean busid?"));
  EXPECT_THAT(message("nccl.missing-attribute", 3), HasSubstr("<pci> without busid (it has bus="));
  EXPECT_THAT(message("nccl.hex-id", 3),
              HasSubstr("<pci device=\"NVIDIA A100 80GB\">: not a hexadecimal id"));
  // An attribute with no NCCL counterpart is a note, not a guess.
  EXPECT_THAT(message("nccl.unknown-attribute", 4), HasSubstr("pci is not an NCCL attribute"));
  // Neither class nor busid: nothing for auto-detection to read, an error.
  bool unreadable = false;
  for (const auto& f : r.findings) {
    if (f.line == 6 && f.message == "<pci> without class") {
      unreadable = f.severity == LintSeverity::kError;
      EXPECT_THAT(f.nccl_does, HasSubstr("no busid either"));
    }
  }
  EXPECT_TRUE(unreadable);
}

// NCCL reads vendor, familyid and modelid for x86 only: a Grace (arm64) or POWER (ppc64) <cpu>
// without them is complete, and gpufleet's own file for an ARM host lints clean.
TEST(LintTest, CpuVendorIsAskedOfX86Only) {
  for (const char* arch : {"arm64", "ppc64"}) {
    const std::string text =
        Replace(Replace(kGood, "arch=\"x86_64\" vendor=\"AuthenticAMD\">",
                        fmt::format("arch=\"{}\">", arch)),
                "arch=\"x86_64\" vendor=\"AuthenticAMD\">", fmt::format("arch=\"{}\">", arch));
    EXPECT_THAT(Problems(Lint(text)), IsEmpty()) << arch;
  }
  // x86 without vendor is still a warning, and one without arch names arch.
  EXPECT_THAT(Problems(Lint(
                  Replace(kGood, "arch=\"x86_64\" vendor=\"AuthenticAMD\">", "arch=\"x86_64\">"))),
              ElementsAre("nccl.cpu-attributes@2:warning"));
  NodeTopology grace = testing::SmallNode();
  grace.arch = "aarch64";
  grace.cpu_vendor.clear();
  auto own = ReadNcclXml(WriteNcclXml(NcclXmlOf(grace)), "grace.xml");
  ASSERT_TRUE(own);
  const LintReport r = LintNcclXml(*own);
  EXPECT_EQ(r.Warnings(), 0) << (r.findings.empty() ? "" : r.findings[0].message);
  EXPECT_EQ(r.Errors(), 0);
}

// NCCL knows x86_64, arm64 and ppc64 by prefix: "aarch64" (what uname says) is none of them, and
// NCCL then takes the inter-socket link as free; "ppc64le" matches ppc64.
TEST(LintTest, AnArchNcclDoesNotKnowIsNamed) {
  const std::string aarch64 =
      Replace(kGood, "arch=\"x86_64\" vendor=\"AuthenticAMD\">", "arch=\"aarch64\">");
  const LintReport r = Lint(aarch64);
  EXPECT_THAT(Problems(r), ElementsAre("nccl.cpu-arch@2:warning"));
  EXPECT_EQ(r.findings[0].fix, "write arch=\"arm64\" (NCCL's name for aarch64)");
  EXPECT_THAT(Problems(Lint(
                  Replace(kGood, "arch=\"x86_64\" vendor=\"AuthenticAMD\">", "arch=\"ppc64le\">"))),
              IsEmpty());
}

TEST(LintTest, VendorFilesHaveNoErrors) {
  GPUFLEET_REQUIRE_FIXTURES();
  for (const auto& e : std::filesystem::directory_iterator(fixtures::Fixture("nccl-topo"))) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".xml" || name.find("graph") != std::string::npos) continue;
    auto d = ReadNcclXmlFile(e.path().string());
    ASSERT_TRUE(d) << d.error().message;
    LintReport r = LintNcclXml(*d);
    EXPECT_EQ(r.Errors(), 0) << name << ": " << (r.findings.empty() ? "" : r.findings[0].message);
  }
}

TEST(LintTest, KnownBadFanoutFileIsCaughtOnEveryGpu) {
  GPUFLEET_REQUIRE_FIXTURES();
  auto d = ReadNcclXmlFile(fixtures::Fixture(
      "nccl-topo/known-bad/modal-gvisor-b200-8gpu-vm-topo-nvlink-fanout-mistake.xml"));
  ASSERT_TRUE(d);
  LintReport r = LintNcclXml(*d);
  std::vector<int> lines;
  for (const auto& f : r.findings) {
    if (f.id == "nccl.nvswitch-fanout") {
      lines.push_back(f.line);
      EXPECT_THAT(f.nccl_does, ::testing::HasSubstr("126 links instead of 18 (7x"));
    }
  }
  // The first <nvlink> of each GPU's block of seven.
  EXPECT_THAT(lines, ElementsAre(22, 33, 44, 55, 76, 87, 98, 109));
}

TEST(LintAgainstNodeTest, Row8And6FileForAnotherNode) {
  GPUFLEET_REQUIRE_FIXTURES();
  DiscoverOptions o;
  o.hwloc_xml = fixtures::Fixture("hwloc/nvidiaDGX2.xml");
  auto node = Discover(o);
  ASSERT_TRUE(node) << node.error().message;
  // Generated for this node: clean against it.
  auto own = ReadNcclXml(WriteNcclXml(NcclXmlOf(*node)), "dgx2.xml");
  ASSERT_TRUE(own);
  LintReport clean = LintNcclXml(*own);
  LintAgainstNode(*own, *node, &clean);
  EXPECT_EQ(clean.Errors(), 0) << (clean.findings.empty() ? "" : clean.findings[0].message);
  // A file from another machine (row 8), with a GPU under the wrong NUMA node (row 6).
  std::string text = WriteNcclXml(own->root);
  text = Replace(text, "busid=\"0000:b7:00.0\"", "busid=\"0000:f1:00.0\"");
  auto moved = ReadNcclXml(Replace(text, "<cpu numaid=\"1\"", "<cpu numaid=\"0\""), "other.xml");
  ASSERT_TRUE(moved) << moved.error().message;
  LintReport r = LintNcclXml(*moved);
  LintAgainstNode(*moved, *node, &r);
  std::set<std::string> ids;
  for (const auto& f : r.findings) ids.insert(f.id);
  EXPECT_TRUE(ids.count("node.busid-missing"));
  EXPECT_TRUE(ids.count("node.wrong-numa"));
  EXPECT_TRUE(ids.count("node.gpu-not-in-file"));
  EXPECT_TRUE(ids.count("node.affinity-mismatch"));
}

}  // namespace
}  // namespace gpufleet::topo

#include "test_node.h"

namespace gpufleet::topo {
namespace {

TEST(LintAgainstNodeTest, Row9NicFarFromEveryGpuAndDowntrainedLinks) {
  NodeTopology node = testing::SmallNode();
  node.pci[static_cast<size_t>(node.gpus[1].pci)].current = {8, 16};  // trained at Gen3
  node.gpus[1].nvlinks[0].count = 10;                                 // two links down
  auto doc = ReadNcclXml(WriteNcclXml(NcclXmlOf(node)), "small.xml");
  ASSERT_TRUE(doc);
  LintReport r = LintNcclXml(*doc);
  LintAgainstNode(*doc, node, &r);
  std::vector<std::string> ids;
  for (const auto& f : r.findings) {
    if (f.severity != LintSeverity::kInfo) ids.push_back(f.id);
  }
  EXPECT_THAT(
      ids, ::testing::UnorderedElementsAre("nccl.nvlink-count-mismatch", "node.nic-far-from-gpus",
                                           "node.pcie-downtrained", "node.nvlink-count-mismatch"));
}

}  // namespace
}  // namespace gpufleet::topo
