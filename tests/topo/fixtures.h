#pragma once
// Access to ../shared/fixtures (real machine data, read in place, never copied).
// Where the folder is absent (a user's clone) tests skip and say why; in CI
// (CI=true) its absence is a failure, never a silent skip.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gpufleet::fixtures {

inline std::string FixturesDir() { return std::string(GPUFLEET_SHARED_DIR) + "/fixtures"; }

inline bool HaveFixtures() { return std::filesystem::is_directory(FixturesDir()); }

inline std::string Fixture(const std::string& relative) { return FixturesDir() + "/" + relative; }

inline std::string ReadFixture(const std::string& relative) {
  std::ifstream in(Fixture(relative), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace gpufleet::fixtures

#define GPUFLEET_REQUIRE_FIXTURES()                                                    \
  do {                                                                                 \
    if (!::gpufleet::fixtures::HaveFixtures()) {                                       \
      const char* ci = std::getenv("CI");                                              \
      if (ci && std::string(ci) == "true")                                             \
        FAIL() << "CI without " << ::gpufleet::fixtures::FixturesDir();                \
      GTEST_SKIP() << "skipped: " << ::gpufleet::fixtures::FixturesDir()               \
                   << " is absent (real-machine fixtures live beside the repository)"; \
    }                                                                                  \
  } while (0)
