#include "base/strings.h"

#include <gtest/gtest.h>

namespace gpufleet::strings {
namespace {

TEST(StringsTest, TrimsAndSplits) {
  EXPECT_EQ(Trim("  a b \t\n"), "a b");
  EXPECT_EQ(Split("a,b,,c", ','), (std::vector<std::string>{"a", "b", "", "c"}));
}

TEST(StringsTest, SuggestsTheClosestKey) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(ClosestMatch("acumulation", {"micro", "accumulation", "global"}), "accumulation");
  EXPECT_EQ(ClosestMatch("zzzz", {"micro", "accumulation"}), "");
}

TEST(StringsTest, CanonicalIgnoresCaseAndPunctuation) {
  EXPECT_EQ(Canonical("A100-SXM4 80GB"), "a100sxm480gb");
}

}  // namespace
}  // namespace gpufleet::strings
