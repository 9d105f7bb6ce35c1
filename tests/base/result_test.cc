#include "base/result.h"

#include <gtest/gtest.h>

namespace gpufleet {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  GPUFLEET_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

Status CheckEven(int x) {
  GPUFLEET_RETURN_IF_ERROR(Half(x));
  return OkStatus();
}

TEST(ResultTest, CarriesAValueOrAnError) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message, "odd");
  EXPECT_TRUE(CheckEven(4));
  EXPECT_FALSE(CheckEven(3));
}

TEST(ResultDeathTest, AbortsOnAccessToTheWrongAlternative) {
  EXPECT_DEATH({ (void)Half(3).value(); }, "Result misuse");
}

}  // namespace
}  // namespace gpufleet
