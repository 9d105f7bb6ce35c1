#include "bench/collective_def.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/strings.h"

namespace gpufleet::bench {
namespace {

struct OpInfo {
  Op op;
  std::string_view name;
};
constexpr OpInfo kOps[] = {
    {Op::kAllReduce, "all_reduce"},
    {Op::kAllGather, "all_gather"},
    {Op::kReduceScatter, "reduce_scatter"},
    {Op::kBroadcast, "broadcast"},
    {Op::kReduce, "reduce"},
    {Op::kAllToAll, "alltoall"},
    {Op::kSendRecv, "sendrecv"},
};

struct TypeInfo {
  DataType type;
  std::string_view name;
  size_t size;
};
constexpr TypeInfo kTypes[] = {
    {DataType::kInt8, "int8", 1},     {DataType::kUint8, "uint8", 1},
    {DataType::kInt32, "int32", 4},   {DataType::kUint32, "uint32", 4},
    {DataType::kInt64, "int64", 8},   {DataType::kUint64, "uint64", 8},
    {DataType::kHalf, "half", 2},     {DataType::kFloat, "float", 4},
    {DataType::kDouble, "double", 8}, {DataType::kBf16, "bfloat16", 2},
};

constexpr std::string_view kRedOps[] = {"sum", "prod", "min", "max", "avg"};

// "All-Reduce", "allreduce" -> "all_reduce" for lookup.
std::string Canonical(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-') c = '_';
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

// IEEE half and bfloat16 from and to float. Our values are small integers, so
// both directions are exact; rounding is to nearest even all the same.
uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int exp = static_cast<int>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const int shift = 14 - exp;
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(half);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  int exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      exp = 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      x = sign | (static_cast<uint32_t>(exp - 15 + 127) << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000 | (mant << 13);
  } else {
    x = sign | (static_cast<uint32_t>(exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

float Bf16ToFloat(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

template <typename T>
void FillTyped(RedOp redop, int rank, uint64_t seed, uint64_t count, T* out) {
  for (uint64_t i = 0; i < count; ++i) out[i] = static_cast<T>(InputValue(redop, rank, i, seed));
}

double Load(DataType t, const void* buf, uint64_t i) {
  switch (t) {
    case DataType::kInt8:
      return static_cast<const int8_t*>(buf)[i];
    case DataType::kUint8:
      return static_cast<const uint8_t*>(buf)[i];
    case DataType::kInt32:
      return static_cast<const int32_t*>(buf)[i];
    case DataType::kUint32:
      return static_cast<const uint32_t*>(buf)[i];
    case DataType::kInt64:
      return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case DataType::kUint64:
      return static_cast<double>(static_cast<const uint64_t*>(buf)[i]);
    case DataType::kHalf:
      return HalfToFloat(static_cast<const uint16_t*>(buf)[i]);
    case DataType::kFloat:
      return static_cast<const float*>(buf)[i];
    case DataType::kDouble:
      return static_cast<const double*>(buf)[i];
    case DataType::kBf16:
      return Bf16ToFloat(static_cast<const uint16_t*>(buf)[i]);
  }
  return 0;
}

// The result the type can hold: integer types wrap as the transport's
// arithmetic does (two's complement), so a sum over many ranks still matches.
double Representable(DataType t, double v) {
  switch (t) {
    case DataType::kInt8:
      return static_cast<int8_t>(static_cast<int64_t>(v));
    case DataType::kUint8:
      return static_cast<uint8_t>(static_cast<int64_t>(v));
    case DataType::kInt32:
      return static_cast<int32_t>(static_cast<int64_t>(v));
    case DataType::kUint32:
      return static_cast<uint32_t>(static_cast<int64_t>(v));
    default:
      return v;
  }
}

// Reduction of the ranks' inputs at one index, in double (exact for our values).
double Reduced(RedOp redop, int ranks, uint64_t index, uint64_t seed) {
  double acc = InputValue(redop, 0, index, seed);
  for (int r = 1; r < ranks; ++r) {
    const double v = InputValue(redop, r, index, seed);
    switch (redop) {
      case RedOp::kSum:
      case RedOp::kAvg:
        acc += v;
        break;
      case RedOp::kProd:
        acc *= v;
        break;
      case RedOp::kMin:
        acc = std::min(acc, v);
        break;
      case RedOp::kMax:
        acc = std::max(acc, v);
        break;
    }
  }
  return redop == RedOp::kAvg ? acc / ranks : acc;
}

bool Matches(DataType t, RedOp redop, double got, double want) {
  if (t == DataType::kHalf || t == DataType::kBf16 || redop == RedOp::kAvg) {
    // Reduced precision or a division: within the type's rounding.
    const double eps = t == DataType::kBf16 ? 1.0 / 128 : t == DataType::kHalf ? 1.0 / 1024 : 1e-6;
    return std::fabs(got - want) <= eps * std::max(1.0, std::fabs(want)) * 2;
  }
  return got == Representable(t, want);
}

}  // namespace

std::string_view OpName(Op op) {
  for (const auto& o : kOps) {
    if (o.op == op) return o.name;
  }
  return "?";
}
std::string_view DataTypeName(DataType t) { return kTypes[static_cast<int>(t)].name; }
size_t DataTypeSize(DataType t) { return kTypes[static_cast<int>(t)].size; }
std::string_view RedOpName(RedOp op) { return kRedOps[static_cast<int>(op)]; }
bool IsReduction(Op op) {
  return op == Op::kAllReduce || op == Op::kReduceScatter || op == Op::kReduce;
}
bool IsRooted(Op op) { return op == Op::kBroadcast || op == Op::kReduce; }

const std::vector<Op>& AllOps() {
  static const std::vector<Op> kAll = [] {
    std::vector<Op> v;
    for (const auto& o : kOps) v.push_back(o.op);
    return v;
  }();
  return kAll;
}

Result<std::vector<Op>> ParseOps(const std::vector<std::string>& names) {
  std::vector<Op> out;
  for (const auto& raw : names) {
    for (const auto& part : strings::Split(raw, ',')) {
      const std::string n = Canonical(strings::Trim(part));
      if (n == "all") return AllOps();
      bool found = false;
      for (const auto& o : kOps) {
        std::string plain(o.name);
        plain.erase(std::remove(plain.begin(), plain.end(), '_'), plain.end());
        if (n == o.name || n == plain) {
          if (std::find(out.begin(), out.end(), o.op) == out.end()) out.push_back(o.op);
          found = true;
        }
      }
      if (!found) {
        return InvalidArgument(fmt::format(
            "unknown collective '{}'; one of all_reduce, all_gather, reduce_scatter, broadcast, "
            "reduce, alltoall, sendrecv, all",
            part));
      }
    }
  }
  if (out.empty()) out.push_back(Op::kAllReduce);
  return out;
}

Result<DataType> ParseDataType(std::string_view name) {
  const std::string n = Canonical(name);
  const std::pair<std::string_view, DataType> aliases[] = {
      {"float32", DataType::kFloat}, {"fp32", DataType::kFloat},   {"float64", DataType::kDouble},
      {"fp64", DataType::kDouble},   {"float16", DataType::kHalf}, {"fp16", DataType::kHalf},
      {"bf16", DataType::kBf16},     {"char", DataType::kInt8},    {"int", DataType::kInt32},
  };
  for (const auto& t : kTypes) {
    if (n == t.name) return t.type;
  }
  for (const auto& [alias, type] : aliases) {
    if (n == alias) return type;
  }
  return InvalidArgument(fmt::format(
      "--dtype {}: unknown type; one of int8, uint8, int32, uint32, int64, uint64, half, float, "
      "double, bfloat16",
      name));
}

Result<RedOp> ParseRedOp(std::string_view name) {
  const std::string n = Canonical(name);
  for (size_t i = 0; i < std::size(kRedOps); ++i) {
    if (n == kRedOps[i]) return static_cast<RedOp>(i);
  }
  return InvalidArgument(fmt::format("--redop {}: one of sum, prod, min, max, avg", name));
}

Result<uint64_t> ParseSize(std::string_view text) {
  std::string s(strings::Trim(text));
  if (!s.empty() && (s.back() == 'B' || s.back() == 'b')) s.pop_back();
  uint64_t mult = 1;
  if (!s.empty()) {
    switch (std::toupper(static_cast<unsigned char>(s.back()))) {
      case 'K':
        mult = 1ull << 10;
        break;
      case 'M':
        mult = 1ull << 20;
        break;
      case 'G':
        mult = 1ull << 30;
        break;
      case 'T':
        mult = 1ull << 40;
        break;
      default:
        break;
    }
    if (mult != 1) s.pop_back();
  }
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str() || *end != 0 || !(v >= 0) || v * mult > 1e15) {
    return InvalidArgument(
        fmt::format("'{}' is not a size; want bytes such as 8, 128K, 4M or 1G", text));
  }
  return static_cast<uint64_t>(v * static_cast<double>(mult));
}

Result<std::vector<uint64_t>> SizeSweep(uint64_t min, uint64_t max, double factor, uint64_t step) {
  if (min == 0) return InvalidArgument("-b/--minbytes: want at least 1 byte");
  if (max < min) {
    return InvalidArgument(fmt::format("-e/--maxbytes {} is below -b/--minbytes {}", max, min));
  }
  if (factor != 0 && !(factor > 1)) return InvalidArgument("-f/--stepfactor: want more than 1");
  if (factor == 0 && step == 0) return InvalidArgument("-i/--stepbytes: want more than 0");
  std::vector<uint64_t> sizes;
  for (double s = static_cast<double>(min); s <= static_cast<double>(max);) {
    sizes.push_back(static_cast<uint64_t>(s));
    s = factor != 0 ? s * factor : s + static_cast<double>(step);
    if (sizes.size() > 10000) {
      return InvalidArgument("the size sweep has more than 10,000 sizes; raise -f or -i");
    }
  }
  return sizes;
}

Shape ShapeFor(Op op, DataType t, uint64_t requested_bytes, int ranks) {
  const uint64_t ts = DataTypeSize(t);
  const uint64_t n = static_cast<uint64_t>(std::max(ranks, 1));
  Shape s;
  switch (op) {
    case Op::kAllReduce:
    case Op::kBroadcast:
    case Op::kReduce:
    case Op::kSendRecv:
      s.count = requested_bytes / ts;
      s.send_count = s.recv_count = s.count;
      s.bytes = s.count * ts;
      break;
    case Op::kAllGather:  // the size is the whole gathered array
      s.count = requested_bytes / (ts * n);
      s.send_count = s.count;
      s.recv_count = s.count * n;
      s.bytes = s.recv_count * ts;
      break;
    case Op::kReduceScatter:  // the size is the whole array before scattering
      s.count = requested_bytes / (ts * n);
      s.send_count = s.count * n;
      s.recv_count = s.count;
      s.bytes = s.send_count * ts;
      break;
    case Op::kAllToAll:  // n blocks of count/n elements each way
      s.count = requested_bytes / (ts * n) * n;
      s.send_count = s.recv_count = s.count;
      s.bytes = s.count * ts;
      break;
  }
  return s;
}

double BusBwFactor(Op op, int ranks) {
  const double n = std::max(ranks, 1);
  switch (op) {
    case Op::kAllReduce:
      return 2 * (n - 1) / n;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll:
      return (n - 1) / n;
    case Op::kBroadcast:
    case Op::kReduce:
    case Op::kSendRecv:
      return 1;
  }
  return 1;
}

double InputValue(RedOp redop, int rank, uint64_t index, uint64_t seed) {
  const uint64_t h = (static_cast<uint64_t>(rank) * 131 + index * 7 + seed * 17) % 13;
  if (redop == RedOp::kProd) return h % 5 == 0 ? 2 : 1;  // a few twos: products stay small
  return static_cast<double>(h);
}

void FillInput(DataType type, RedOp redop, int rank, uint64_t seed, uint64_t count, void* buffer) {
  switch (type) {
    case DataType::kInt8:
      FillTyped(redop, rank, seed, count, static_cast<int8_t*>(buffer));
      break;
    case DataType::kUint8:
      FillTyped(redop, rank, seed, count, static_cast<uint8_t*>(buffer));
      break;
    case DataType::kInt32:
      FillTyped(redop, rank, seed, count, static_cast<int32_t*>(buffer));
      break;
    case DataType::kUint32:
      FillTyped(redop, rank, seed, count, static_cast<uint32_t*>(buffer));
      break;
    case DataType::kInt64:
      FillTyped(redop, rank, seed, count, static_cast<int64_t*>(buffer));
      break;
    case DataType::kUint64:
      FillTyped(redop, rank, seed, count, static_cast<uint64_t*>(buffer));
      break;
    case DataType::kFloat:
      FillTyped(redop, rank, seed, count, static_cast<float*>(buffer));
      break;
    case DataType::kDouble:
      FillTyped(redop, rank, seed, count, static_cast<double*>(buffer));
      break;
    case DataType::kHalf:
    case DataType::kBf16: {
      auto* out = static_cast<uint16_t*>(buffer);
      for (uint64_t i = 0; i < count; ++i) {
        const auto v = static_cast<float>(InputValue(redop, rank, i, seed));
        out[i] = type == DataType::kHalf ? FloatToHalf(v) : FloatToBf16(v);
      }
      break;
    }
  }
}

void FillSentinel(DataType type, uint64_t count, void* buffer) {
  // NaN for floating types (it equals nothing, within any tolerance); 0xA5
  // bytes for integers (-91 as int8, a large or negative value otherwise) --
  // never a correct result of our small non-negative inputs at these rank counts.
  auto fill = [&](auto nan) {
    auto* p = static_cast<decltype(nan)*>(buffer);
    for (uint64_t i = 0; i < count; ++i) p[i] = nan;
  };
  switch (type) {
    case DataType::kHalf:
      fill(uint16_t{0x7e00});
      break;
    case DataType::kBf16:
      fill(uint16_t{0x7fc0});
      break;
    case DataType::kFloat:
      fill(std::numeric_limits<float>::quiet_NaN());
      break;
    case DataType::kDouble:
      fill(std::numeric_limits<double>::quiet_NaN());
      break;
    default:
      std::memset(buffer, 0xA5, count * DataTypeSize(type));
      break;
  }
}

uint64_t CountWrong(const VerifySetup& v, const void* recv) {
  const Shape& s = v.shape;
  const int n = v.ranks;
  uint64_t wrong = 0;
  auto check = [&](uint64_t i, double want) {
    if (!Matches(v.type, v.redop, Load(v.type, recv, i), want)) ++wrong;
  };
  switch (v.op) {
    case Op::kAllReduce:
      for (uint64_t i = 0; i < s.recv_count; ++i) check(i, Reduced(v.redop, n, i, v.seed));
      break;
    case Op::kReduce:
      if (v.rank != v.root) return 0;
      for (uint64_t i = 0; i < s.recv_count; ++i) check(i, Reduced(v.redop, n, i, v.seed));
      break;
    case Op::kAllGather:
      for (int q = 0; q < n; ++q) {
        for (uint64_t i = 0; i < s.count; ++i) {
          check(static_cast<uint64_t>(q) * s.count + i, InputValue(v.redop, q, i, v.seed));
        }
      }
      break;
    case Op::kReduceScatter: {
      const uint64_t base = static_cast<uint64_t>(v.rank) * s.count;
      for (uint64_t i = 0; i < s.count; ++i) check(i, Reduced(v.redop, n, base + i, v.seed));
      break;
    }
    case Op::kBroadcast:
      for (uint64_t i = 0; i < s.recv_count; ++i) check(i, InputValue(v.redop, v.root, i, v.seed));
      break;
    case Op::kAllToAll: {
      const uint64_t block = s.count / static_cast<uint64_t>(n);
      for (int q = 0; q < n; ++q) {
        for (uint64_t i = 0; i < block; ++i) {
          check(static_cast<uint64_t>(q) * block + i,
                InputValue(v.redop, q, static_cast<uint64_t>(v.rank) * block + i, v.seed));
        }
      }
      break;
    }
    case Op::kSendRecv: {
      const int from = (v.rank - 1 + n) % n;
      for (uint64_t i = 0; i < s.recv_count; ++i) check(i, InputValue(v.redop, from, i, v.seed));
      break;
    }
  }
  return wrong;
}

}  // namespace gpufleet::bench
