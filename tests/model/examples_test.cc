// Every spec in examples/ loads; the reference example is byte-for-byte the embedded one.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/embedded.h"
#include "model/spec.h"

namespace gpufleet::model {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples";

TEST(ExamplesTest, EveryExampleLoads) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kExamples)) {
    if (entry.path().extension() != ".yaml") continue;
    Result<Spec> s = LoadSpecFile(entry.path().string());
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    ++count;
  }
  EXPECT_GE(count, 4);
}

TEST(ExamplesTest, ExamplesHaveTheGpuCountsTheirNamesClaim) {
  for (auto [file, gpus] : {std::pair{"reference-32gpu.yaml", 32},
                            {"h100-8gpu-box.yaml", 8},
                            {"h100-1024gpu.yaml", 1024},
                            {"h100-16384gpu.yaml", 16384}}) {
    Result<Spec> s = LoadSpecFile((kExamples / file).string());
    ASSERT_TRUE(s) << file;
    EXPECT_EQ(s->TotalGpus(), gpus) << file;
  }
}

TEST(ExamplesTest, ShippedReferenceIsTheEmbeddedOne) {
  std::ifstream in(kExamples / "reference-32gpu.yaml");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), embedded::ReferenceSpecYaml());
}

}  // namespace
}  // namespace gpufleet::model
