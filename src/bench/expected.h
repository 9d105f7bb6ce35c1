#pragma once
// What a collective of this run should reach: the plan's model of NCCL's
// algorithm and protocol choice on the spec's hardware (plan/comm.h) for the
// run's shape (ranks per node x nodes), or a flat floor given by the user (--expect-busbw, like
// nccl-tests' NCCL_TESTS_MIN_BW). Pure; thread-safe.

#include <optional>
#include <string>

#include "bench/collective_def.h"
#include "model/spec.h"
#include "plan/comm.h"

namespace gpufleet::bench {

class Expectation {
 public:
  // The plan's numbers are for GPU buffers moved by NCCL; `ranks_per_node` x
  // `nodes` is the shape of this run.
  static Expectation FromPlan(const model::Spec& spec, int ranks_per_node, int nodes);
  static Expectation Flat(double busbw_bytes_per_s);

  // Expected busbw of `op` over a buffer of `bytes`; nullopt where there is no
  // model (alltoall from the plan).
  std::optional<double> BusBw(Op op, uint64_t bytes) const;
  const std::string& source() const { return source_; }

 private:
  std::optional<plan::NetworkModel> net_;
  int ranks_per_node_ = 1, nodes_ = 1;
  double flat_ = 0;
  std::string source_;
};

}  // namespace gpufleet::bench
