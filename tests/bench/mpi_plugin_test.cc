// The MPI plugin as the helpers find it: lib/gpufleet/ beside the executable's folder (this
// test runs from BUILD/tests; the build writes the plugin to BUILD/lib/gpufleet). MPI itself is
// exercised under mpirun in tests/e2e/bench_mpi.sh and from the packages in tests/package.

#include "bench/mpi_plugin.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/files.h"

namespace gpufleet::bench {
namespace {

TEST(MpiPluginTest, LoadsFromTheLibFolderBesideTheExecutablesFolder) {
  const std::filesystem::path prefix = std::filesystem::path(ExecutableDir()).parent_path();
  EXPECT_EQ(MpiPluginPath(), (prefix / "lib/gpufleet/gpufleet-mpi.so").string());
  const Result<const MpiPlugin*> plugin = LoadMpiPlugin();
  ASSERT_TRUE(plugin) << plugin.error().message;
  EXPECT_STREQ((*plugin)->abi, kMpiPluginAbi);
  EXPECT_NE((*plugin)->init, nullptr);
  EXPECT_NE((*plugin)->make_plane, nullptr);
  const Result<const MpiPlugin*> again = LoadMpiPlugin();  // loaded once
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *plugin);
}

}  // namespace
}  // namespace gpufleet::bench
