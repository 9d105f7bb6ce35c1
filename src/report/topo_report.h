#pragma once
// Text renderings for `gpufleet topo`: the node as a tree, lint findings, and
// affinity advice. JSON lives in topo/topo_json.h. Pure; thread-safe.

#include <string>
#include <vector>

#include "topo/affinity.h"
#include "topo/lint.h"
#include "topo/node_topology.h"

namespace gpufleet::report {

std::string TopologyText(const topo::NodeTopology& t);
std::string LintText(const topo::LintReport& r);
std::string AffinityText(const std::vector<topo::GpuAffinity>& a);

}  // namespace gpufleet::report
