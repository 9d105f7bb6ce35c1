#include "topo/capture.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/tar.h"
#include "topo/discover.h"
#include "topo/topo_json.h"

namespace gpufleet::topo {
namespace {

// Unpacks into a scratch folder named for the test and this process, so two runs of the suite
// on one machine (a CI run beside a developer's) never unpack into each other's.
std::string Unpack(const std::string& archive, const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + ".tar.gz", std::ios::binary) << archive;
  const std::string cmd = "tar -xzf '" + dir + ".tar.gz' -C '" + dir + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::filesystem::remove(dir + ".tar.gz");
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
  const std::string dir = Unpack(*gz, "tar-test");
  std::ifstream a(dir + "/top/a.txt");
  std::string line;
  std::getline(a, line);
  EXPECT_EQ(line, "hello");
  EXPECT_EQ(std::filesystem::file_size(dir + "/top/" + std::string(120, 'd') + "/b.txt"), 1000u);
  EXPECT_EQ(std::filesystem::read_symlink(dir + "/top/link").string(), "a.txt");
  std::filesystem::remove_all(dir);
}

TEST(CaptureTest, LiveCaptureReadsBackAsTheSameNode) {
  DiscoverOptions live;
  live.nvml = true;
  auto t = Discover(live);
  ASSERT_TRUE(t) << t.error().message;
  auto c = Capture(*t);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_GT(c->files, 3);
  const std::string dir = Unpack(c->archive, "capture-test");
  DiscoverOptions from;
  from.root = dir + "/" + c->folder;
  auto back = Discover(from);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->source, "capture " + from.root);
  back->source = t->source;
  EXPECT_EQ(ToJson(*back).dump(), ToJson(*t).dump());
  EXPECT_TRUE(std::filesystem::exists(from.root + "/hwloc.xml"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpufleet::topo
