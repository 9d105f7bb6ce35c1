// What a collective benchmark measures: sizes, shapes, busbw factors, and the
// verification of every operation's result, checked against an independent
// host simulation of each collective.

#include "bench/collective_def.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace gpufleet::bench {
namespace {

TEST(SizeTest, ParsesNcclTestsSuffixes) {
  EXPECT_EQ(*ParseSize("8"), 8u);
  EXPECT_EQ(*ParseSize("128K"), 128u << 10);
  EXPECT_EQ(*ParseSize("4M"), 4u << 20);
  EXPECT_EQ(*ParseSize("1G"), 1ull << 30);
  EXPECT_EQ(*ParseSize("2MB"), 2u << 20);
  EXPECT_FALSE(ParseSize("lots"));
  EXPECT_FALSE(ParseSize("-1K"));
  EXPECT_FALSE(ParseSize(""));
}

TEST(SizeTest, SweepsByFactorOrStep) {
  EXPECT_EQ(*SizeSweep(8, 128, 2, 0), (std::vector<uint64_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(*SizeSweep(1024, 4096, 0, 1024), (std::vector<uint64_t>{1024, 2048, 3072, 4096}));
  EXPECT_EQ(*SizeSweep(32 << 20, 32 << 20, 0, 1 << 20), (std::vector<uint64_t>{32u << 20}));
  EXPECT_FALSE(SizeSweep(0, 8, 2, 0));
  EXPECT_FALSE(SizeSweep(64, 8, 2, 0));
  EXPECT_FALSE(SizeSweep(8, 64, 1, 0));
  EXPECT_FALSE(SizeSweep(1, 1ull << 40, 0, 1));  // too many sizes
}

TEST(OpTest, ParsesNamesAliasesAndAll) {
  EXPECT_EQ(ParseOps({})->size(), 1u);
  EXPECT_EQ(ParseOps({"all"})->size(), 7u);
  EXPECT_EQ(*ParseOps({"allreduce,all-gather", "reduce_scatter"}),
            (std::vector<Op>{Op::kAllReduce, Op::kAllGather, Op::kReduceScatter}));
  EXPECT_FALSE(ParseOps({"all_reduce,bogus"}));
  EXPECT_EQ(*ParseDataType("bf16"), DataType::kBf16);
  EXPECT_EQ(*ParseDataType("fp32"), DataType::kFloat);
  EXPECT_FALSE(ParseDataType("fp4"));
  EXPECT_EQ(*ParseRedOp("max"), RedOp::kMax);
  EXPECT_FALSE(ParseRedOp("xor"));
}

TEST(ShapeTest, MatchesNcclTestsCounts) {
  // all_reduce 1 MiB of float: 262144 elements each way; the size is the buffer.
  Shape s = ShapeFor(Op::kAllReduce, DataType::kFloat, 1 << 20, 4);
  EXPECT_EQ(s.count, 262144u);
  EXPECT_EQ(s.bytes, 1u << 20);
  // all_gather: the size is the gathered array; each rank sends a quarter.
  s = ShapeFor(Op::kAllGather, DataType::kFloat, 1 << 20, 4);
  EXPECT_EQ(s.count, 65536u);
  EXPECT_EQ(s.send_count, 65536u);
  EXPECT_EQ(s.recv_count, 262144u);
  EXPECT_EQ(s.bytes, 1u << 20);
  // reduce_scatter: the size is the array before scattering.
  s = ShapeFor(Op::kReduceScatter, DataType::kFloat, 1 << 20, 4);
  EXPECT_EQ(s.send_count, 262144u);
  EXPECT_EQ(s.recv_count, 65536u);
  // Rounded down to whole elements per rank: 1000 B over 3 ranks of float = 83 x 3 x 4.
  s = ShapeFor(Op::kAllGather, DataType::kFloat, 1000, 3);
  EXPECT_EQ(s.bytes, 996u);
  s = ShapeFor(Op::kAllToAll, DataType::kInt8, 10, 4);
  EXPECT_EQ(s.count, 8u);
}

TEST(BusBwTest, FactorsFromPerformanceMd) {
  EXPECT_DOUBLE_EQ(BusBwFactor(Op::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBwFactor(Op::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBwFactor(Op::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBwFactor(Op::kAllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBwFactor(Op::kBroadcast, 8), 1);
  EXPECT_DOUBLE_EQ(BusBwFactor(Op::kReduce, 8), 1);
  EXPECT_DOUBLE_EQ(BusBwFactor(Op::kSendRecv, 8), 1);
  EXPECT_DOUBLE_EQ(BusBwFactor(Op::kAllReduce, 1), 0);
}

// An independent host model of each collective over typed buffers.
template <typename T>
T Reduce(RedOp op, T a, T b) {
  switch (op) {
    case RedOp::kSum:
      return static_cast<T>(a + b);
    case RedOp::kProd:
      return static_cast<T>(a * b);
    case RedOp::kMin:
      return a < b ? a : b;
    case RedOp::kMax:
      return a > b ? a : b;
    case RedOp::kAvg:
      return static_cast<T>(a + b);
  }
  return a;
}

template <typename T>
std::vector<std::vector<T>> Simulate(Op op, DataType type, RedOp redop, int n, int root,
                                     const Shape& s, uint64_t seed) {
  std::vector<std::vector<T>> in(static_cast<size_t>(n), std::vector<T>(s.send_count));
  for (int r = 0; r < n; ++r)
    FillInput(type, redop, r, seed, s.send_count, in[static_cast<size_t>(r)].data());
  std::vector<std::vector<T>> out(static_cast<size_t>(n), std::vector<T>(s.recv_count));
  auto reduced = [&](uint64_t i) {
    T acc = in[0][i];
    for (int r = 1; r < n; ++r) acc = Reduce(redop, acc, in[static_cast<size_t>(r)][i]);
    return acc;
  };
  for (int r = 0; r < n; ++r) {
    auto& o = out[static_cast<size_t>(r)];
    const uint64_t block = s.count / static_cast<uint64_t>(n);
    for (uint64_t i = 0; i < s.recv_count; ++i) {
      switch (op) {
        case Op::kAllReduce:
          o[i] = reduced(i);
          break;
        case Op::kReduce:
          o[i] = r == root ? reduced(i) : T{};
          break;
        case Op::kBroadcast:
          o[i] = in[static_cast<size_t>(root)][i];
          break;
        case Op::kAllGather:
          o[i] = in[i / s.count][i % s.count];
          break;
        case Op::kReduceScatter:
          o[i] = reduced(static_cast<uint64_t>(r) * s.count + i);
          break;
        case Op::kAllToAll:
          o[i] = in[i / block][static_cast<uint64_t>(r) * block + i % block];
          break;
        case Op::kSendRecv:
          o[i] = in[static_cast<size_t>((r - 1 + n) % n)][i];
          break;
      }
    }
  }
  return out;
}

template <typename T>
void CheckAllOps(DataType type) {
  for (Op op : AllOps()) {
    for (int n : {1, 2, 3, 4, 7}) {
      for (RedOp redop : {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax}) {
        const Shape s = ShapeFor(op, type, 4096, n);
        if (s.count == 0) continue;
        const int root = n - 1;
        auto out = Simulate<T>(op, type, redop, n, root, s, 5);
        for (int r = 0; r < n; ++r) {
          VerifySetup v{op, type, redop, root, r, n, 5, s};
          auto& o = out[static_cast<size_t>(r)];
          ASSERT_EQ(CountWrong(v, o.data()), 0u)
              << OpName(op) << " n=" << n << " rank " << r << " " << RedOpName(redop);
          if (op == Op::kReduce && r != root) continue;
          // One flipped element is one wrong element.
          o[1] = static_cast<T>(o[1] + 1);
          EXPECT_EQ(CountWrong(v, o.data()), 1u) << OpName(op);
          if (redop != RedOp::kSum) continue;
          // A stale seed (the previous size's data) is wrong nearly everywhere.
          VerifySetup stale = v;
          stale.seed = 4;
          EXPECT_GT(CountWrong(stale, o.data()), s.recv_count / 2) << OpName(op);
        }
      }
    }
  }
}

TEST(VerifyTest, EveryOpFloat) { CheckAllOps<float>(DataType::kFloat); }
TEST(VerifyTest, EveryOpInt32) { CheckAllOps<int32_t>(DataType::kInt32); }
TEST(VerifyTest, EveryOpInt8WrapsLikeTheTransport) { CheckAllOps<int8_t>(DataType::kInt8); }
TEST(VerifyTest, EveryOpUint64) { CheckAllOps<uint64_t>(DataType::kUint64); }

TEST(VerifyTest, HalfAndBf16CopiesAreExact) {
  for (DataType t : {DataType::kHalf, DataType::kBf16}) {
    const Shape s = ShapeFor(Op::kBroadcast, t, 1024, 4);
    std::vector<uint16_t> buf(s.recv_count);
    FillInput(t, RedOp::kSum, 2, 9, s.recv_count, buf.data());
    VerifySetup v{Op::kBroadcast, t, RedOp::kSum, 2, 0, 4, 9, s};
    EXPECT_EQ(CountWrong(v, buf.data()), 0u) << DataTypeName(t);
    FillSentinel(t, s.recv_count, buf.data());
    EXPECT_EQ(CountWrong(v, buf.data()), s.recv_count) << DataTypeName(t);
  }
}

TEST(VerifyTest, SentinelIsNeverACorrectResult) {
  const Shape s = ShapeFor(Op::kAllReduce, DataType::kFloat, 4096, 4);
  std::vector<float> buf(s.recv_count);
  FillSentinel(DataType::kFloat, s.recv_count, buf.data());
  VerifySetup v{Op::kAllReduce, DataType::kFloat, RedOp::kSum, 0, 0, 4, 1, s};
  EXPECT_EQ(CountWrong(v, buf.data()), s.recv_count);
}

}  // namespace
}  // namespace gpufleet::bench
