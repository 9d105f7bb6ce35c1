#include "base/units.h"

#include <gtest/gtest.h>

namespace gpufleet::units {
namespace {

TEST(UnitsTest, ParsesBitRatesAsBytesPerSecond) {
  EXPECT_DOUBLE_EQ(*Parse("400 Gb/s", Dimension::kBandwidth), 50e9);  // 400e9 / 8
  EXPECT_DOUBLE_EQ(*Parse("400Gbps", Dimension::kBandwidth), 50e9);
  EXPECT_DOUBLE_EQ(*Parse("50 GB/s", Dimension::kBandwidth), 50e9);
  EXPECT_DOUBLE_EQ(*Parse("1 GiB/s", Dimension::kBandwidth), 1073741824.0);
}

TEST(UnitsTest, ParsesSizesDecimalAndBinary) {
  EXPECT_DOUBLE_EQ(*Parse("80 GiB", Dimension::kBytes), 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*Parse("3.84 TB", Dimension::kBytes), 3.84e12);
  EXPECT_DOUBLE_EQ(*Parse(" 2 B ", Dimension::kBytes), 2);
}

TEST(UnitsTest, ParsesTimePowerAndElectricalUnits) {
  EXPECT_DOUBLE_EQ(*Parse("2 min", Dimension::kTime), 120);
  EXPECT_DOUBLE_EQ(*Parse("1 h", Dimension::kTime), 3600);
  EXPECT_DOUBLE_EQ(*Parse("250 ms", Dimension::kTime), 0.25);
  EXPECT_DOUBLE_EQ(*Parse("6.5 kW", Dimension::kPower), 6500);
  EXPECT_DOUBLE_EQ(*Parse("208 V", Dimension::kVoltage), 208);
  EXPECT_DOUBLE_EQ(*Parse("30 A", Dimension::kCurrent), 30);
  EXPECT_DOUBLE_EQ(*Parse("312 TFLOPS", Dimension::kFlops), 312e12);
}

TEST(UnitsTest, ParsesCountsWithSuffixesAndFractions) {
  EXPECT_DOUBLE_EQ(*Parse("13B", Dimension::kCount), 13e9);
  EXPECT_DOUBLE_EQ(*Parse("400K", Dimension::kCount), 400e3);
  EXPECT_DOUBLE_EQ(*Parse("4096", Dimension::kCount), 4096);
  EXPECT_DOUBLE_EQ(*Parse("80 %", Dimension::kFraction), 0.8);
  EXPECT_DOUBLE_EQ(*Parse("0.45", Dimension::kFraction), 0.45);
}

TEST(UnitsTest, NamesTheDimensionOfAWrongUnit) {
  Result<double> r = Parse("400 GB", Dimension::kBandwidth);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "'400 GB' is a size, expected a bandwidth such as '400 Gb/s' or '50 GB/s'");
}

TEST(UnitsTest, RejectsMissingUnitsUnknownUnitsAndNonNumbers) {
  EXPECT_EQ(Parse("400", Dimension::kBandwidth).error().message,
            "'400' has no unit; expected a bandwidth such as '400 Gb/s'");
  EXPECT_EQ(Parse("400 furlongs", Dimension::kBytes).error().message,
            "unknown unit 'furlongs' in '400 furlongs'; expected a size such as '80 GiB'");
  EXPECT_EQ(Parse("fast", Dimension::kPower).error().message,
            "'fast' is not a number; expected a power such as '700 W'");
  EXPECT_FALSE(Parse("1.5", Dimension::kFraction));  // a ratio above 1 must be written as %
  EXPECT_FALSE(Parse("", Dimension::kTime));
}

TEST(UnitsTest, FormatsForPeople) {
  EXPECT_EQ(FormatBytes(80.0 * 1024 * 1024 * 1024), "80.0 GiB");
  EXPECT_EQ(FormatBitRate(50e9), "400 Gb/s");
  EXPECT_EQ(FormatBitRate(200e9), "1.6 Tb/s");
  EXPECT_EQ(FormatByteRate(234.89e9), "234.9 GB/s");
  EXPECT_EQ(FormatPower(6500), "6.50 kW");
  EXPECT_EQ(FormatTime(150), "2.5 min");
  EXPECT_EQ(FormatTime(0.030), "30.00 ms");
  EXPECT_EQ(FormatTime(0), "0 s");
  EXPECT_EQ(FormatUsd(1121280), "$1,121,280");
  EXPECT_EQ(FormatPercent(0.45), "45.0 %");
}

}  // namespace
}  // namespace gpufleet::units
