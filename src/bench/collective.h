#pragma once
// `bench collective`: the size sweep of each operation on a data plane, every
// size verified, per-iteration times gathered to rank 0, and the expected bus
// bandwidth (expected.h) attached. docs/bench.md.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/data_plane.h"
#include "bench/mpi_world.h"
#include "bench/results.h"

namespace gpufleet::bench {

struct CollectiveOptions {
  std::vector<Op> ops = {Op::kAllReduce};
  DataType type = DataType::kFloat;
  RedOp redop = RedOp::kSum;
  int root = 0;
  std::vector<uint64_t> sizes;
  int warmup = 5;
  int iters = 20;
  int check = 1;          // verified operations per size; 0: none (#wrong "N/A")
  int corrupt_rank = -1;  // test-only: this rank's result gets one bad element per size
  bool progress = false;  // rank 0 writes progress to stderr
};

// Runs every op and size. On rank 0 the report holds the rows; elsewhere it is
// empty. Errors (a transport error, an unsupported type) are the same on every rank.
Result<CollectiveReport> RunCollectives(MpiWorld* world, DataPlane* plane,
                                        const CollectiveOptions& options);

}  // namespace gpufleet::bench
