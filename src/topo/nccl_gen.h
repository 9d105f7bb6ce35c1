#pragma once
// Writes a node's NCCL topology file from its NodeTopology, the way NCCL's own
// dump (NCCL_TOPO_DUMP_FILE) lays it out: one <cpu> per NUMA node with its
// affinity mask and CPUID identity, PCIe switches as nested <pci> (upstream
// ports only, as NCCL walks sysfs two levels at a time), GPUs with their
// NVLinks (one entry per NVSwitch), NICs as <nic><net/>. Pure.

#include "topo/nccl_xml.h"
#include "topo/node_topology.h"

namespace gpufleet::topo {

struct NcclGenOptions {
  bool include_nics = true;
  bool include_nvlinks = true;
};

XmlElement NcclXmlOf(const NodeTopology& t, const NcclGenOptions& options = {});

// "16.0 GT/s PCIe" for 16 GT/s; "" when unknown (NCCL then assumes Gen3).
std::string NcclLinkSpeed(double gt_per_s);

}  // namespace gpufleet::topo
