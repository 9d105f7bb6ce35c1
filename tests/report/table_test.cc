#include "report/table.h"

#include <gtest/gtest.h>

namespace gpufleet::report {
namespace {

TEST(TableTest, AlignsTextColumnsAndRightAlignsNumbers) {
  Table t({"name", "size"});
  t.AddRow({"a", "1.0 GiB"});
  t.AddRow({"longer", "12.5 GiB"});
  EXPECT_EQ(t.Text(0),
            "name    size\n"
            "a        1.0 GiB\n"
            "longer  12.5 GiB\n");
}

TEST(TableTest, KeyValueTablesHaveNoHeaderAndLeftAlignedValues) {
  Table t = Table::KeyValue();
  t.AddRow({"step", "81.46 s"});
  t.AddRow({"throughput", "51486 tokens/s"});
  EXPECT_EQ(t.Text(2),
            "  step        81.46 s\n"
            "  throughput  51486 tokens/s\n");
}

TEST(TableTest, RendersMarkdownAndEscapesPipes) {
  Table t({"a", "b"});
  t.AddRow({"x|y", "2"});
  EXPECT_EQ(t.Markdown(), "| a | b |\n| --- | ---: |\n| x\\|y | 2 |\n");
}

TEST(TableTest, CountsUtf8CodePointsForWidth) { EXPECT_EQ(DisplayWidth("12.3 µs"), 7u); }

}  // namespace
}  // namespace gpufleet::report
