#pragma once
// NodeTopology <-> JSON (schema "gpufleet.topology/v1", docs/schemas/topology-v1.md):
// what `topo show --format json` prints and what `topo capture` stores, so a
// capture keeps the NVML facts hwloc cannot record. Pure.

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "topo/affinity.h"
#include "topo/lint.h"
#include "topo/node_topology.h"
#include "topo/smi_matrix.h"

namespace gpufleet::topo {

inline constexpr const char* kTopologySchema = "gpufleet.topology/v1";

nlohmann::ordered_json ToJson(const NodeTopology& t);
// Reads what ToJson wrote; kInvalidArgument names the first bad field.
Result<NodeTopology> TopologyFromJson(const nlohmann::json& j);

nlohmann::ordered_json ToJson(const SmiMatrix& m);
nlohmann::ordered_json ToJson(const LintReport& r);
nlohmann::ordered_json ToJson(const std::vector<GpuAffinity>& a);

}  // namespace gpufleet::topo
