#include "bench/expected.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/units.h"

namespace gpufleet::bench {

Expectation Expectation::FromPlan(const model::Spec& spec, int ranks_per_node, int nodes) {
  Expectation e;
  e.net_ = plan::BuildNetworkModel(spec.cluster);
  const plan::UnitShape u = plan::UnitsOf(spec.cluster, ranks_per_node, nodes);
  e.ranks_per_node_ = u.ranks_per_unit;
  e.nodes_ = u.units;
  e.source_ = "plan";
  return e;
}

Expectation Expectation::Flat(double busbw_bytes_per_s) {
  Expectation e;
  e.flat_ = busbw_bytes_per_s;
  e.source_ = "--expect-busbw";
  return e;
}

std::optional<double> Expectation::BusBw(Op op, uint64_t bytes) const {
  if (!net_) return flat_ > 0 ? std::optional<double>(flat_) : std::nullopt;
  const double s = static_cast<double>(bytes);
  const int ranks = ranks_per_node_ * nodes_;
  if (ranks < 2 || s <= 0) return std::nullopt;
  switch (op) {
    case Op::kAllReduce: {
      const auto est =
          plan::EstimateCollective(*net_, plan::Collective::kAllReduce, s, ranks_per_node_, nodes_);
      return s * plan::BusBwFactor(plan::Collective::kAllReduce, ranks) / est.best_s;
    }
    case Op::kReduceScatter:
    case Op::kAllGather: {
      const auto c =
          op == Op::kAllGather ? plan::Collective::kAllGather : plan::Collective::kReduceScatter;
      const auto est = plan::EstimateCollective(*net_, c, s, ranks_per_node_, nodes_);
      return s * plan::BusBwFactor(c, ranks) / est.best_s;
    }
    case Op::kBroadcast:
    case Op::kReduce:
    case Op::kSendRecv: {
      // A pipelined chain moves S over each link once, as a ring all-gather of
      // the same buffer does: the all-gather's bus bandwidth.
      const auto est =
          plan::EstimateCollective(*net_, plan::Collective::kAllGather, s, ranks_per_node_, nodes_);
      return s * plan::BusBwFactor(plan::Collective::kAllGather, ranks) / est.best_s;
    }
    case Op::kAllToAll:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace gpufleet::bench
