#include "bench/collective.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "bench/progress.h"

namespace gpufleet::bench {
Result<CollectiveReport> RunCollectives(MpiWorld* world, DataPlane* plane,
                                        const CollectiveOptions& o) {
  GPUFLEET_RETURN_IF_ERROR(plane->Supports(o.type, o.redop));
  const int n = world->size(), rank = world->rank();
  if (o.root < 0 || o.root >= n) {
    return InvalidArgument(fmt::format("--root {}: want 0 to {} (the ranks)", o.root, n - 1));
  }
  CollectiveReport report;
  report.backend = std::string(plane->name());
  report.device = plane->device();
  report.ranks = n;
  report.nodes = world->nodes();
  report.hosts = world->hosts();
  report.warmup = o.warmup;
  report.iters = o.iters;

  const size_t total = o.ops.size() * o.sizes.size();
  size_t done = 0;
  std::vector<unsigned char> host;
  for (Op op : o.ops) {
    for (size_t si = 0; si < o.sizes.size(); ++si) {
      ++done;
      Call call;
      call.op = op;
      call.type = o.type;
      call.redop = o.redop;
      call.root = o.root;
      call.shape = ShapeFor(op, o.type, o.sizes[si], n);
      if (call.shape.count == 0 ||
          (op == Op::kAllToAll && call.shape.count < static_cast<uint64_t>(n))) {
        continue;  // too small to give every rank an element (nccl-tests skips these too)
      }
      const size_t ts = DataTypeSize(o.type);
      const size_t send_bytes = call.shape.send_count * ts, recv_bytes = call.shape.recv_count * ts;
      const std::string label = fmt::format("{} {} B", OpName(op), call.shape.bytes);
      ShowProgress(o.progress && rank == 0, fmt::format("[{}/{}] {}", done, total, label));
      GPUFLEET_RETURN_IF_ERROR(plane->Reserve(send_bytes, recv_bytes));
      host.resize(std::max(send_bytes, recv_bytes));
      const uint64_t seed = si + 1;
      FillInput(o.type, o.redop, rank, seed, call.shape.send_count, host.data());
      GPUFLEET_RETURN_IF_ERROR(plane->SetSend(host.data(), send_bytes));

      world->Arm(label + " (warm-up)", 0);
      auto warm = plane->Run(call, o.warmup);
      world->Disarm();
      if (!warm) return warm.error();
      world->Arm(label, 0);
      auto times = plane->Run(call, o.iters);
      world->Disarm();
      if (!times) return times.error();

      uint64_t wrong = 0;
      for (int c = 0; c < o.check; ++c) {
        FillSentinel(o.type, call.shape.recv_count, host.data());
        GPUFLEET_RETURN_IF_ERROR(plane->SetRecv(host.data(), recv_bytes));
        world->Arm(label + " (check)", c);
        auto r = plane->Run(call, 1);
        world->Disarm();
        if (!r) return r.error();
        if (rank == o.corrupt_rank) GPUFLEET_RETURN_IF_ERROR(plane->Corrupt(call));
        GPUFLEET_RETURN_IF_ERROR(plane->GetResult(call, host.data(), recv_bytes));
        VerifySetup v{op, o.type, o.redop, o.root, rank, n, seed, call.shape};
        wrong += CountWrong(v, host.data());
      }

      const double mean =
          times->empty() ? 0 : std::accumulate(times->begin(), times->end(), 0.0) / times->size();
      world->Arm(label + " (gathering results)", 0);
      const std::vector<double> means = world->GatherToRoot(mean);
      const std::vector<double> iter_max = world->MaxToRoot(*times);
      const uint64_t wrong_all = world->SumToRoot(wrong);
      world->Disarm();
      if (rank != 0) continue;

      CollectiveRow row;
      row.op = op;
      row.type = o.type;
      row.redop = o.redop;
      row.root = IsRooted(op) ? o.root : -1;
      row.bytes = call.shape.bytes;
      row.count = call.shape.count;
      row.time_s = std::accumulate(means.begin(), means.end(), 0.0) / n;
      if (row.time_s > 0) {
        row.algbw_bytes_per_s = static_cast<double>(row.bytes) / row.time_s;
        row.busbw_bytes_per_s = row.algbw_bytes_per_s * BusBwFactor(op, n);
      }
      row.wrong = o.check > 0 ? static_cast<int64_t>(wrong_all) : -1;
      row.p50_s = Percentile(iter_max, 50);
      row.p99_s = Percentile(iter_max, 99);
      row.max_s = iter_max.empty() ? 0 : *std::max_element(iter_max.begin(), iter_max.end());
      const auto slow = std::max_element(means.begin(), means.end());
      row.slowest_rank = static_cast<int>(slow - means.begin());
      const double median = Percentile(means, 50);
      row.skew = median > 0 ? *slow / median - 1 : 0;
      report.rows.push_back(row);
    }
  }
  ClearProgress(o.progress && rank == 0);
  return report;
}

}  // namespace gpufleet::bench
