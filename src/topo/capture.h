#pragma once
// `topo capture`: everything a colleague needs to analyse this node offline,
// as one .tar.gz: our NodeTopology (with the NVML facts hwloc cannot record),
// hwloc's XML, the sysfs facts we read (PCIe links, NUMA CPU lists,
// InfiniBand ports), and nvidia-smi's `topo -m` and `-q` when it is installed.
// Unpack it and pass the folder as `--root DIR`. Not thread-safe (discovery).

#include <string>

#include "base/result.h"
#include "topo/node_topology.h"

namespace gpufleet::topo {

struct CaptureResult {
  std::string archive;  // .tar.gz bytes
  std::string folder;   // top-level folder inside ("gpufleet-capture-HOST")
  int files = 0;
  std::vector<std::string> notes;  // what was not captured, and why
};

// Captures the live node `t` (already discovered).
Result<CaptureResult> Capture(const NodeTopology& t);

// The live node as hwloc XML.
Result<std::string> ExportLiveHwlocXml();

}  // namespace gpufleet::topo
