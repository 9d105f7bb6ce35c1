#pragma once
// Tests that plant one mistake in a known-good text replace one piece of it.

#include <gtest/gtest.h>

#include <string>

namespace gpufleet::test {

// `text` with the first `from` replaced by `to`; a `from` that is not there fails the test.
inline std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

}  // namespace gpufleet::test
