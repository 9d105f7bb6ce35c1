// Malformed specs never crash the loader: every truncation and every single-line deletion of
// the reference spec either loads or fails with one line naming the file (regression guard for
// "bad input gets a clear one-line error").

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "model/embedded.h"
#include "model/spec.h"

namespace gpufleet::model {
namespace {

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void ExpectValueOrOneLineError(const std::string& text, const std::string& what) {
  Result<Spec> s = ParseSpec(text, "cut.yaml");
  if (s) return;
  const std::string& m = s.error().message;
  EXPECT_EQ(m.find('\n'), std::string::npos) << what << ": " << m;
  EXPECT_EQ(m.rfind("cut.yaml", 0), 0u) << what << ": " << m;
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument) << what;
}

TEST(SpecRobustnessTest, EveryTruncationLoadsOrFailsInOneLine) {
  const std::string_view text = embedded::ReferenceSpecYaml();
  for (size_t n = 0; n < text.size(); n += 7) {
    ExpectValueOrOneLineError(std::string(text.substr(0, n)), "prefix " + std::to_string(n));
  }
}

TEST(SpecRobustnessTest, EveryDeletedLineLoadsOrFailsInOneLine) {
  const std::vector<std::string> lines = Lines(embedded::ReferenceSpecYaml());
  for (size_t skip = 0; skip < lines.size(); ++skip) {
    std::string text;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i != skip) text += lines[i] + "\n";
    }
    ExpectValueOrOneLineError(text, "without line " + std::to_string(skip + 1));
  }
}

TEST(SpecRobustnessTest, ScalarsWhereMapsBelongAndViceVersa) {
  for (const char* text : {"name: x\nnodes: 3\nworkload: {}\n", "name: [a]\nnodes: {}\n",
                           "name: x\nnodes: {count: {a: 1}}\n", "", "42", "name: x\nstorage: 7\n",
                           "name: x\nnodes:\n  nics: {role: compute}\n"}) {
    ExpectValueOrOneLineError(text, text);
  }
}

}  // namespace
}  // namespace gpufleet::model
