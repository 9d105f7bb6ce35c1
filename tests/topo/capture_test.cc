#include "topo/capture.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../common/tree.h"
#include "base/tar.h"
#include "topo/discover.h"
#include "topo/topo_json.h"

namespace gpufleet::topo {
namespace {

// Unpacks `archive` into the test's scratch tree (per process, removed with it) and returns the
// folder it unpacked into.
std::string Unpack(const std::string& archive, const testing::Tree& tree) {
  const std::string gz = tree.Write("archive.tar.gz", archive);
  const std::string dir = tree.Dir("out");
  const std::string cmd = "tar -xzf '" + gz + "' -C '" + dir + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return dir;
}

TEST(TarTest, GnuTarReadsOurArchive) {
  TarBuilder tar;
  tar.AddFile("top/a.txt", "hello\n");
  tar.AddFile("top/" + std::string(120, 'd') + "/b.txt", std::string(1000, 'x'));
  tar.AddSymlink("top/link", "a.txt");
  auto gz = tar.Finish();
  ASSERT_TRUE(gz) << gz.error().message;
  EXPECT_EQ(static_cast<unsigned char>((*gz)[0]), 0x1f);  // gzip magic
  const testing::Tree tree("tar-test");
  const std::string dir = Unpack(*gz, tree);
  std::ifstream a(dir + "/top/a.txt");
  std::string line;
  std::getline(a, line);
  EXPECT_EQ(line, "hello");
  EXPECT_EQ(std::filesystem::file_size(dir + "/top/" + std::string(120, 'd') + "/b.txt"), 1000u);
  EXPECT_EQ(std::filesystem::read_symlink(dir + "/top/link").string(), "a.txt");
}

TEST(CaptureTest, LiveCaptureReadsBackAsTheSameNode) {
  DiscoverOptions live;
  live.nvml = true;
  auto t = Discover(live);
  ASSERT_TRUE(t) << t.error().message;
  auto c = Capture(*t);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_GT(c->files, 3);
  const testing::Tree tree("capture-test");
  const std::string dir = Unpack(c->archive, tree);
  DiscoverOptions from;
  from.root = dir + "/" + c->folder;
  auto back = Discover(from);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->source, "capture " + from.root);
  back->source = t->source;
  EXPECT_EQ(ToJson(*back).dump(), ToJson(*t).dump());
  EXPECT_TRUE(std::filesystem::exists(from.root + "/hwloc.xml"));
}

}  // namespace
}  // namespace gpufleet::topo
