#include "base/isolated.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

namespace gpufleet {
namespace {

IsolatedOptions Options() {
  IsolatedOptions o;
  o.what = "node.xml";
  o.library = "libhwloc";
  o.deadline = std::chrono::milliseconds(2000);
  return o;
}

TEST(RunIsolatedTest, ReturnsTheChildsAnswer) {
  auto r = RunIsolated(Options(), [] { return Result<std::string>(std::string("a\nb\0c", 5)); });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, std::string("a\nb\0c", 5));
}

TEST(RunIsolatedTest, LargeAnswersComeThroughWhole) {
  const std::string big(3 << 20, 'x');  // larger than a pipe's buffer
  auto r = RunIsolated(Options(), [&] { return Result<std::string>(big); });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->size(), big.size());
}

TEST(RunIsolatedTest, TheChildsErrorKeepsItsCodeAndMessage) {
  auto r = RunIsolated(Options(), [] { return Result<std::string>(NotFound("node.xml: gone")); });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().message, "node.xml: gone");
}

TEST(RunIsolatedTest, ACrashIsAnErrorNamingTheInput) {
  auto r = RunIsolated(Options(), []() -> Result<std::string> {
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
    return std::string("unreachable");
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message, "node.xml: libhwloc crashed reading it (SIGSEGV, signal 11)");
}

TEST(RunIsolatedTest, AnAbortIsAnErrorToo) {
  auto r = RunIsolated(Options(), []() -> Result<std::string> {
    std::signal(SIGABRT, SIG_DFL);
    std::abort();
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "node.xml: libhwloc crashed reading it (SIGABRT, signal 6)");
}

TEST(RunIsolatedTest, AChildPastTheDeadlineIsKilled) {
  IsolatedOptions o = Options();
  o.deadline = std::chrono::milliseconds(300);
  auto r = RunIsolated(o, []() -> Result<std::string> {
    for (;;) ::pause();
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "node.xml: libhwloc did not finish reading it in 0.3 s");
}

TEST(RunIsolatedTest, AnOversizedAnswerIsRefused) {
  IsolatedOptions o = Options();
  o.max_answer_bytes = 1000;
  auto r = RunIsolated(o, [] { return Result<std::string>(std::string(100000, 'x')); });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "node.xml: libhwloc answered more than 1000 bytes reading it");
}

}  // namespace
}  // namespace gpufleet
