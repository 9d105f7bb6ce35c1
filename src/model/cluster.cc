#include "model/cluster.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/workload.h"

namespace gpufleet::model {

std::string_view NicRoleName(NicRole r) { return r == NicRole::kCompute ? "compute" : "storage"; }

std::string_view FabricTypeName(FabricType t) {
  switch (t) {
    case FabricType::kInfiniBand:
      return "infiniband";
    case FabricType::kRoCE:
      return "roce";
    case FabricType::kEthernet:
      return "ethernet";
  }
  return "?";
}

std::string_view TierKindName(TierKind k) {
  switch (k) {
    case TierKind::kHot:
      return "hot";
    case TierKind::kWarm:
      return "warm";
    case TierKind::kCold:
      return "cold";
  }
  return "?";
}

std::string_view StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kDdp:
      return "ddp";
    case Strategy::kZero1:
      return "zero1";
    case Strategy::kZero2:
      return "zero2";
    case Strategy::kZero3:
      return "zero3";
    case Strategy::kFsdp:
      return "fsdp";
  }
  return "?";
}

std::string RecomputeLabel(Recompute r, const Workload::RecomputeModules& modules) {
  if (r != Recompute::kSelective || modules == Workload::RecomputeModules{}) {
    return std::string(RecomputeName(r));
  }
  const std::vector<std::string_view> names = modules.Names();
  return fmt::format("selective ({})",
                     names.empty() ? "nothing" : fmt::to_string(fmt::join(names, ", ")));
}

std::string_view RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

int Node::Ports(NicRole role) const {
  int ports = 0;
  for (const auto& n : nics) {
    if (n.role == role) ports += n.Ports();
  }
  return ports;
}

double Node::Bandwidth(NicRole role) const {
  double bw = 0;
  for (const auto& n : nics) {
    if (n.role == role) bw += n.NodeBandwidth();
  }
  return bw;
}

const StorageTier* Cluster::FindTier(std::string_view tier_name) const {
  for (const auto& t : storage) {
    if (t.name == tier_name) return &t;
  }
  return nullptr;
}

}  // namespace gpufleet::model
