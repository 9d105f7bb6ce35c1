#include "topo/capture.h"

#include <fmt/format.h>
#include <hwloc.h>

#include <cstdio>
#include <cstdlib>

#include "base/json.h"
#include "base/sysroot.h"
#include "base/tar.h"
#include "topo/discover.h"
#include "topo/topo_json.h"

namespace gpufleet::topo {

Result<std::string> ExportLiveHwlocXml() {
  ScopedHwlocEnv env;
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) return Unavailable("hwloc_topology_init failed");
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    return Unavailable("hwloc could not read this node");
  }
  char* buf = nullptr;
  int len = 0;
  const int rc = hwloc_topology_export_xmlbuffer(t, &buf, &len, 0);
  std::string xml =
      rc == 0 && buf ? std::string(buf, static_cast<size_t>(len > 0 ? len - 1 : 0)) : "";
  if (buf) hwloc_free_xmlbuffer(t, buf);
  hwloc_topology_destroy(t);
  if (rc != 0) return Unavailable("hwloc could not export XML");
  return xml;
}

namespace {

// Runs a read-only diagnostic command with a deadline; "" when it is absent or fails.
std::string RunTool(const std::string& command) {
  std::string out;
  FILE* p = popen(("timeout 60 " + command + " 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  return pclose(p) == 0 ? out : "";
}

}  // namespace

Result<CaptureResult> Capture(const NodeTopology& t) {
  CaptureResult r;
  r.folder = "gpufleet-capture-" + (t.hostname.empty() ? std::string("node") : t.hostname);
  TarBuilder tar;
  const std::string top = r.folder + "/";
  tar.AddFile(top + "gpufleet-topology.json", DumpJson(ToJson(t)));
  if (auto xml = ExportLiveHwlocXml()) {
    tar.AddFile(top + "hwloc.xml", *xml);
  } else {
    r.notes.push_back(xml.error().message);
  }
  SysRoot sys;
  auto copy = [&](const std::string& path) {
    if (auto v = sys.Read(path)) tar.AddFile(top + path.substr(1), *v + "\n");
  };
  for (const auto& d : t.pci) {
    const std::string dir = "/sys/bus/pci/devices/" + d.busid + "/";
    for (const char* f : {"class", "vendor", "device", "subsystem_vendor", "subsystem_device",
                          "numa_node", "local_cpulist", "current_link_speed", "current_link_width",
                          "max_link_speed", "max_link_width"}) {
      copy(dir + f);
    }
  }
  copy("/proc/cpuinfo");  // the CPU's identity, read back under --root
  for (const auto& n : t.numa) {
    const std::string dir = fmt::format("/sys/devices/system/node/node{}/", n.id);
    copy(dir + "cpulist");
    copy(dir + "cpumap");
    copy(dir + "distance");
  }
  if (auto hcas = sys.List("/sys/class/infiniband")) {
    for (const auto& hca : *hcas) {
      const std::string base = "/sys/class/infiniband/" + hca;
      if (auto real = sys.RealPath(base + "/device")) {
        tar.AddSymlink(top + base.substr(1) + "/device",
                       "../../../bus/pci/devices/" + real->substr(real->rfind('/') + 1));
      }
      for (const char* f : {"node_guid", "sys_image_guid", "fw_ver", "node_type"})
        copy(base + "/" + f);
      if (auto ports = sys.List(base + "/ports")) {
        for (const auto& p : *ports) {
          for (const char* f : {"state", "phys_state", "rate", "link_layer"}) {
            copy(base + "/ports/" + p + "/" + f);
          }
        }
      }
    }
  }
  if (auto nets = sys.List("/sys/class/net")) {
    for (const auto& n : *nets) {
      copy("/sys/class/net/" + n + "/speed");
      copy("/sys/class/net/" + n + "/operstate");
    }
  }
  if (std::string topo_m = RunTool("nvidia-smi topo -m"); !topo_m.empty()) {
    tar.AddFile(top + "nvidia-smi-topo-m.txt", topo_m);
    tar.AddFile(top + "nvidia-smi-q.txt", RunTool("nvidia-smi -q"));
    tar.AddFile(top + "nvidia-smi-nvlink-s.txt", RunTool("nvidia-smi nvlink -s"));
  } else {
    r.notes.push_back("nvidia-smi not available: no nvidia-smi outputs captured");
  }
  tar.AddFile(
      top + "README.txt",
      "Captured by `gpufleet topo capture`. Unpack and analyse with:\n"
      "  gpufleet topo show --root " +
          r.folder +
          "\n"
          "  gpufleet topo lint FILE.xml --against " +
          r.folder +
          "\n"
          "gpufleet-topology.json is the full discovery (schema gpufleet.topology/v1);\n"
          "hwloc.xml opens with `lstopo --input hwloc.xml`; sys/ holds the sysfs facts read.\n");
  r.files = static_cast<int>(tar.entries());
  GPUFLEET_ASSIGN_OR_RETURN(r.archive, tar.Finish());
  return r;
}

}  // namespace gpufleet::topo
