#pragma once
// What a collective benchmark measures, independent of the transport: the
// operations, data types and reduction ops, the size sweep (-b/-e/-f/-i as
// nccl-tests), per-rank element counts, nccl-tests' algbw and busbw
// definitions, and the deterministic input pattern with the expected output of
// every rank so each size's result is verified (#wrong). docs/bench.md.
// Pure; thread-safe.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace gpufleet::bench {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };
enum class DataType {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kHalf,
  kFloat,
  kDouble,
  kBf16
};
enum class RedOp { kSum, kProd, kMin, kMax, kAvg };

std::string_view OpName(Op op);             // "all_reduce", as nccl-tests names its binaries
std::string_view DataTypeName(DataType t);  // "float", "int32", "bfloat16", ...
std::string_view RedOpName(RedOp op);       // "sum", ...
size_t DataTypeSize(DataType t);
bool IsReduction(Op op);  // all_reduce, reduce_scatter, reduce
bool IsRooted(Op op);     // broadcast, reduce
const std::vector<Op>& AllOps();

// "all_reduce" (also "allreduce", "all-reduce"), or "all" for every op.
Result<std::vector<Op>> ParseOps(const std::vector<std::string>& names);
Result<DataType> ParseDataType(std::string_view name);
Result<RedOp> ParseRedOp(std::string_view name);
// nccl-tests sizes: "8", "128K", "4M", "1G" (binary multiples), optional "B".
Result<uint64_t> ParseSize(std::string_view text);

// The sizes of a sweep: from `min` to `max`, times `factor` (> 1) or plus
// `step` (> 0) each time; exactly one of factor/step is used (factor wins when
// both are set, as in nccl-tests). Errors name the flag.
Result<std::vector<uint64_t>> SizeSweep(uint64_t min, uint64_t max, double factor, uint64_t step);

// Element counts of one rank for a requested size, as nccl-tests computes them.
struct Shape {
  uint64_t bytes = 0;       // the size column (S for algbw), rounded down to a whole count
  uint64_t count = 0;       // the element count printed in the table
  uint64_t send_count = 0;  // elements in the send buffer
  uint64_t recv_count = 0;  // elements in the receive buffer
};
Shape ShapeFor(Op op, DataType t, uint64_t requested_bytes, int ranks);

// nccl-tests doc/PERFORMANCE.md: busbw = algbw x factor.
double BusBwFactor(Op op, int ranks);

// The value rank `rank` puts at element `index` of its send buffer for a
// given seed: small integers, so sums and products are exact in every type.
double InputValue(RedOp redop, int rank, uint64_t index, uint64_t seed);

// Fills `buffer` (send_count elements of `type`) with rank `rank`'s input.
void FillInput(DataType type, RedOp redop, int rank, uint64_t seed, uint64_t count, void* buffer);
// Fills a receive buffer with a value no correct result has.
void FillSentinel(DataType type, uint64_t count, void* buffer);

struct VerifySetup {
  Op op = Op::kAllReduce;
  DataType type = DataType::kFloat;
  RedOp redop = RedOp::kSum;
  int root = 0;
  int rank = 0;
  int ranks = 1;
  uint64_t seed = 0;
  Shape shape;
};
// The number of elements of `recv` (recv_count elements) that differ from what
// rank `setup.rank` must hold after the operation. Non-roots of reduce: 0.
uint64_t CountWrong(const VerifySetup& setup, const void* recv);

}  // namespace gpufleet::bench
