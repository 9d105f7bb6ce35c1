#pragma once
// Discovery: builds a NodeTopology from hwloc (CPUs, NUMA, the PCI tree and
// OS devices), sysfs (InfiniBand ports, PCIe link state now vs max) and NVML
// loaded with dlopen (GPU identity and NVLink). The same code reads a live
// node, an hwloc XML export, or a captured tree (hwloc-gather-topology, or
// `gpufleet topo capture`), so every test and any remote diagnosis runs on
// any machine. Not thread-safe (hwloc's fsroot is process-wide).

#include <string>

#include "base/result.h"
#include "topo/node_topology.h"

namespace gpufleet::sys {
class Nvml;
}

namespace gpufleet::topo {

struct DiscoverOptions {
  std::string hwloc_xml;  // read this hwloc XML instead of the live node
  std::string root;       // read this captured tree (with sys/ and proc/) instead of "/"
  bool nvml = true;       // ask NVML for GPU details and NVLink (live node only)
  // An NVML already open (check's and the agent's), asked instead of loading and
  // initialising the library a second time; null: discovery opens its own.
  sys::Nvml* nvml_handle = nullptr;
};

// Options for a topology named by one path, as `--topology` and `--against`
// take it: a folder is a captured tree (--root), a file an hwloc XML.
DiscoverOptions DiscoverOptionsFor(const std::string& path);

// kInvalidArgument for an unreadable or malformed input file or folder,
// kUnavailable when hwloc cannot read the live node. A node without GPUs is
// not an error: the result says so in `notes`.
Result<NodeTopology> Discover(const DiscoverOptions& options);

// Sets hwloc's environment for one topology load and restores it: PCI comes
// from the Linux backend's sysfs reader (the libpciaccess plugin adds nothing
// on Linux and leaks on unload), no GL/OpenCL plugins, and for a captured tree
// no CPUID (that would describe this machine). A user's own
// HWLOC_COMPONENTS is left alone.
class ScopedHwlocEnv {
 public:
  explicit ScopedHwlocEnv(const std::string& fsroot = "");
  ~ScopedHwlocEnv();
  ScopedHwlocEnv(const ScopedHwlocEnv&) = delete;
  ScopedHwlocEnv& operator=(const ScopedHwlocEnv&) = delete;

 private:
  bool set_components_ = false;
  bool set_fsroot_ = false;
};

}  // namespace gpufleet::topo
