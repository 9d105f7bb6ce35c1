#include "topo/nccl_xml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "fixtures.h"

namespace gpufleet::topo {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Ids(const NcclXml& d) {
  std::vector<std::string> ids;
  for (const auto& s : d.syntax) ids.push_back(s.id + "@" + std::to_string(s.line));
  return ids;
}

TEST(NcclXmlTest, ReadsNestingAttributesAndLines) {
  auto d = ReadNcclXml(
      "<!-- header -->\n<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"x86_64\">\n"
      "    <pci busid=\"0000:07:00.0\" class=\"0x030200\"/>  <!-- GPU -->\n  </cpu>\n</system>\n",
      "t.xml");
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_TRUE(d->syntax.empty());
  EXPECT_EQ(d->element_count, 3);
  ASSERT_EQ(d->root.children.size(), 1u);
  const XmlElement& cpu = d->root.children[0];
  EXPECT_EQ(cpu.line, 3);
  EXPECT_EQ(cpu.GetOr("arch", ""), "x86_64");
  ASSERT_EQ(cpu.children.size(), 1u);
  EXPECT_EQ(cpu.children[0].line, 4);
  EXPECT_EQ(*cpu.children[0].Get("busid"), "0000:07:00.0");
}

TEST(NcclXmlTest, RecordsWhatNcclsReaderRejects) {
  auto d = ReadNcclXml(
      "<?xml version=\"1.0\"?>\n<system version=\"1\">\n\t<cpu numaid=\"0\"\n     "
      "arch=\"x86_64\">\n"
      "  <pci busid=0000:07:00.0 class='0x030200'/>\n  </cpu>\n</system>\n",
      "t.xml");
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_THAT(Ids(*d), ::testing::ElementsAre("nccl.xml-declaration@1", "nccl.whitespace@3",
                                              "nccl.attribute-line-break@4",
                                              "nccl.unquoted-value@5", "nccl.single-quote@5"));
  EXPECT_FALSE(d->syntax.back().fatal_in_nccl);  // single quotes: accepted since 2.27.3
  EXPECT_EQ(d->root.children[0].children[0].GetOr("busid", ""), "0000:07:00.0");
}

TEST(NcclXmlTest, RejectsWhatIsNotATopologyFile) {
  auto err = [](std::string_view text) {
    auto d = ReadNcclXml(text, "t.xml");
    EXPECT_FALSE(d);
    return d ? std::string() : d.error().message;
  };
  EXPECT_EQ(err("{\"json\": 1}"), "t.xml:1:1: not an NCCL topology file: expected '<', found '{'");
  EXPECT_EQ(err(""), "t.xml:1:1: not an NCCL topology file: no element found");
  EXPECT_EQ(err("<system version=\"1\">\n  <cpu numaid=\"0\">\n"),
            "t.xml:2:3: truncated: <cpu> opened here is never closed");
  EXPECT_EQ(err("<system version=\"1\">\n  <cpu>\n  </pci>\n</system>\n"),
            "t.xml:3:3: </pci> closes <cpu> opened at line 2: NCCL fails with \"XML Mismatch\"");
  EXPECT_EQ(
      err("<system version=\"2\">\n</system>\n"),
      "t.xml:1:1: <system version=\"2\">: NCCL fails with \"XML Topology has wrong version\"; "
      "only version=\"1\" exists");
  EXPECT_THAT(err("<graphs version=\"1\"></graphs>"), HasSubstr("an NCCL graph file"));
  EXPECT_THAT(err("<topology version=\"2.0\"></topology>"), HasSubstr("root element <topology>"));
  EXPECT_THAT(err("<system version=\"1\"><cpu numaid=\"0"), HasSubstr("truncated"));
}

TEST(NcclXmlTest, ReportsMissingFilesAndDirectories) {
  auto missing = ReadNcclXmlFile("/nonexistent/topo.xml");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto dir = ReadNcclXmlFile("/tmp");
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message, "/tmp: is a directory, expected an NCCL topology file");
}

TEST(NcclXmlTest, WritesNcclsOwnFormat) {
  XmlElement root{"system", {{"version", "1", 0}}, {}, 0, 0};
  XmlElement cpu{"cpu", {{"numaid", "0", 0}}, {}, 0, 0};
  cpu.children.push_back(
      {"pci", {{"busid", "0000:07:00.0", 0}, {"class", "0x030200", 0}}, {}, 0, 0});
  root.children.push_back(cpu);
  EXPECT_EQ(WriteNcclXml(root),
            "<system version=\"1\">\n  <cpu numaid=\"0\">\n"
            "    <pci busid=\"0000:07:00.0\" class=\"0x030200\"/>\n  </cpu>\n</system>\n");
}

TEST(NcclXmlTest, CanonicalBusIds) {
  EXPECT_TRUE(IsCanonicalBusId("0000:3b:00.0"));
  EXPECT_FALSE(IsCanonicalBusId("0000:3B:00.0"));
  EXPECT_FALSE(IsCanonicalBusId("00000000:3b:00.0"));
  EXPECT_EQ(CanonicalBusId("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(CanonicalBusId("3b:00.1"), "0000:3b:00.1");
  EXPECT_EQ(CanonicalBusId("fffffff:ff:ff.0"), "");
  EXPECT_EQ(CanonicalBusId("banana"), "");
}

TEST(NcclXmlTest, EveryVendorFileSurvivesReadWriteRead) {
  GPUFLEET_REQUIRE_FIXTURES();
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(fixtures::Fixture("nccl-topo"))) {
    if (e.path().extension() != ".xml" ||
        e.path().filename().string().find("graph") != std::string::npos) {
      continue;
    }
    auto first = ReadNcclXmlFile(e.path().string());
    ASSERT_TRUE(first) << first.error().message;
    const std::string written = WriteNcclXml(first->root);
    auto second = ReadNcclXml(written, "written");
    ASSERT_TRUE(second) << e.path() << ": " << second.error().message;
    EXPECT_TRUE(second->syntax.empty()) << e.path();
    EXPECT_EQ(second->element_count, first->element_count) << e.path();
    EXPECT_EQ(WriteNcclXml(second->root), written) << e.path();
    ++files;
  }
  EXPECT_GE(files, 10);
}

TEST(NcclXmlTest, GraphFixtureIsRecognisedAsAGraphFile) {
  GPUFLEET_REQUIRE_FIXTURES();
  auto d = ReadNcclXmlFile(fixtures::Fixture("nccl-topo/azure-ncv4-a100-pcie-4gpu-graph.xml"));
  ASSERT_FALSE(d);
  EXPECT_THAT(d.error().message, HasSubstr("NCCL graph file"));
}

}  // namespace
}  // namespace gpufleet::topo
