#include "topo/discover.h"

#include <fmt/format.h>
#include <hwloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "base/files.h"
#include "base/isolated.h"
#include "base/strings.h"
#include "base/sysroot.h"
#include "sys/nvml.h"
#include "topo/infiniband.h"
#include "topo/nccl_xml.h"
#include "topo/topo_json.h"

namespace gpufleet::topo {
namespace {

// hwloc's C handles, released on every path.
struct Topology {
  hwloc_topology_t t = nullptr;
  ~Topology() {
    if (t) hwloc_topology_destroy(t);
  }
};

std::string Info(hwloc_obj_t o, const char* name) {
  const char* v = hwloc_obj_get_info_by_name(o, name);
  return v ? v : "";
}

DeviceKind KindOf(uint32_t class_code, hwloc_obj_t o) {
  const uint32_t base = class_code >> 16;
  const char* subtype = o->subtype;
  if (subtype && std::strcmp(subtype, "NVSwitch") == 0) return DeviceKind::kNvSwitch;
  if ((class_code >> 8) == 0x0680 && o->attr->pcidev.vendor_id == 0x10de) {
    return DeviceKind::kNvSwitch;
  }
  if (base == 0x03) return DeviceKind::kGpu;
  if (base == 0x02) return DeviceKind::kNic;
  if ((class_code >> 8) == 0x0108) return DeviceKind::kNvme;
  if ((class_code >> 8) == 0x0604) return DeviceKind::kBridge;
  return DeviceKind::kOther;
}

// sysfs: "16.0 GT/s PCIe", "8 GT/s", "Unknown" -> GT/s per lane (0 when unknown).
double ParseLinkSpeed(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

class Builder {
 public:
  Builder(const DiscoverOptions& o, NodeTopology* t)
      : opt_(o), t_(*t), sys_(o.root.empty() ? "/" : o.root) {}

  Status Run() {
    if (!opt_.hwloc_xml.empty()) {
      GPUFLEET_RETURN_IF_ERROR(CheckPath(opt_.hwloc_xml, false, "an hwloc XML file"));
    }
    if (!opt_.root.empty()) {
      GPUFLEET_RETURN_IF_ERROR(CheckPath(opt_.root, true, "a captured tree"));
      if (!sys_.Exists("/sys/devices")) {
        return InvalidArgument(fmt::format(
            "{}: no sys/devices inside: expected an unpacked hwloc-gather-topology or gpufleet "
            "topo capture tree",
            opt_.root));
      }
    }
    // hwloc's Linux backend reads /sys and /proc below HWLOC_FSROOT for a captured tree.
    ScopedHwlocEnv env(opt_.root);
    Topology topo;
    if (hwloc_topology_init(&topo.t) != 0) return Unavailable("hwloc_topology_init failed");
    hwloc_topology_set_io_types_filter(topo.t, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (!opt_.hwloc_xml.empty()) {
      if (hwloc_topology_set_xml(topo.t, opt_.hwloc_xml.c_str()) != 0) {
        return InvalidArgument(fmt::format("{}: hwloc cannot read it as hwloc XML: {}",
                                           opt_.hwloc_xml, std::strerror(errno)));
      }
      t_.source = "hwloc-xml " + opt_.hwloc_xml;
    } else if (!opt_.root.empty()) {
      t_.source = "root " + opt_.root;
    } else {
      t_.source = "live";
    }
    const int loaded = hwloc_topology_load(topo.t);
    if (loaded != 0) {
      return opt_.hwloc_xml.empty() ? Unavailable(fmt::format("hwloc could not read the node: {}",
                                                              std::strerror(errno)))
                                    : InvalidArgument(fmt::format(
                                          "{}: not a valid hwloc XML topology", opt_.hwloc_xml));
    }
    ReadMachine(topo.t);
    ReadNuma(topo.t);
    ReadPci(topo.t);
    ReadNvLinkDistances(topo.t);
    if (opt_.hwloc_xml.empty()) ReadSysfs();
    if (opt_.hwloc_xml.empty() && opt_.root.empty() && opt_.nvml) ReadNvml();
    if (t_.gpus.empty()) t_.notes.push_back("no GPU found");
    return OkStatus();
  }

 private:
  void ReadMachine(hwloc_topology_t topo) {
    hwloc_obj_t root = hwloc_get_root_obj(topo);
    t_.hostname = Info(root, "HostName");
    if (!opt_.root.empty()) {
      // uname() describes this machine, not the captured one.
      auto h = sys_.Read("/proc/sys/kernel/hostname");
      t_.hostname = h ? *h : "";
    }
    t_.arch = Info(root, "Architecture");
    if (t_.hostname.empty() && opt_.hwloc_xml.empty() && opt_.root.empty()) {
      t_.hostname = HostName();
    }
    t_.packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    if (hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0)) {
      t_.cpu_vendor = Info(pkg, "CPUVendor");
      t_.cpu_model = Info(pkg, "CPUModel");
      // hwloc 2.9 drops the trailing topology-level infos of a newer XML (Architecture among
      // them); a POWER package names itself ("POWER8NVL, altivec supported").
      if (t_.arch.empty() && t_.cpu_model.rfind("POWER", 0) == 0) t_.arch = "ppc64le";
      t_.cpu_family = std::atoi(Info(pkg, "CPUFamilyNumber").c_str());
      t_.cpu_model_number = std::atoi(Info(pkg, "CPUModelNumber").c_str());
    }
    // Under --root hwloc's x86 backend is off (it would read this machine's CPUID): the
    // captured node's identity is in its /proc/cpuinfo (the first processor's block).
    if (!opt_.root.empty() && (t_.cpu_vendor.empty() || t_.cpu_family == 0)) ReadCpuInfo();
  }

  void ReadCpuInfo() {
    auto text = sys_.Read("/proc/cpuinfo");
    if (!text) return;
    for (const auto& line : strings::Split(*text, '\n')) {
      if (line.empty()) break;  // the end of the first processor's block
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string key(strings::Trim(line.substr(0, colon)));
      const std::string value(strings::Trim(line.substr(colon + 1)));
      if (key == "vendor_id" && t_.cpu_vendor.empty()) t_.cpu_vendor = value;
      if (key == "cpu family" && t_.cpu_family == 0) t_.cpu_family = std::atoi(value.c_str());
      if (key == "model" && t_.cpu_model_number == 0)
        t_.cpu_model_number = std::atoi(value.c_str());
      if (key == "model name" && t_.cpu_model.empty()) t_.cpu_model = value;
      // ARM's /proc/cpuinfo has "CPU implementer" and no vendor_id.
      if (key == "CPU implementer" && t_.arch.empty()) t_.arch = "aarch64";
      if (key == "vendor_id" && t_.arch.empty()) t_.arch = "x86_64";
    }
  }

  void ReadNuma(hwloc_topology_t topo) {
    for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n));) {
      NumaNode node;
      node.id = static_cast<int>(n->os_index);
      char* list = nullptr;
      hwloc_bitmap_list_asprintf(&list, n->cpuset);
      node.cpulist = list ? list : "";
      std::free(list);
      node.cpus = ParseCpuList(node.cpulist);
      // Cores, not hardware threads: with SMT each core has two or more PUs.
      node.cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, n->cpuset, HWLOC_OBJ_CORE);
      node.memory_bytes = static_cast<double>(n->attr->numanode.local_memory);
      t_.numa.push_back(node);
    }
  }

  int NumaOfObj(hwloc_topology_t topo, hwloc_obj_t o) {
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, o);
    if (!anc || !anc->nodeset || hwloc_bitmap_iszero(anc->nodeset)) return -1;
    // A PCI tree attached above several NUMA nodes (e.g. the machine) has no single one.
    if (hwloc_bitmap_weight(anc->nodeset) != 1) return -1;
    return hwloc_bitmap_first(anc->nodeset);
  }

  void ReadPci(hwloc_topology_t topo) {
    std::map<hwloc_obj_t, int> host_bridges;
    std::map<hwloc_obj_t, int> index_of;
    // Bridges first (parents before children within each kind is not needed: we link after).
    std::vector<hwloc_obj_t> objs;
    for (hwloc_obj_t b = nullptr; (b = hwloc_get_next_bridge(topo, b));) {
      // The raw value, not the enum: an XML file may carry any number there, and loading an
      // enum outside its enumerators is undefined behaviour (UBSan found it on a hostile file).
      int upstream = -1;
      std::memcpy(&upstream, &b->attr->bridge.upstream_type, sizeof(upstream));
      if (upstream == HWLOC_OBJ_BRIDGE_HOST) {
        host_bridges[b] = static_cast<int>(t_.host_bridge_numa.size());
        t_.host_bridge_numa.push_back(NumaOfObj(topo, b));
      } else if (upstream == HWLOC_OBJ_BRIDGE_PCI) {
        objs.push_back(b);
      }
    }
    for (hwloc_obj_t d = nullptr; (d = hwloc_get_next_pcidev(topo, d));) objs.push_back(d);
    for (hwloc_obj_t o : objs) {
      PciDevice dev;
      const auto& pci =
          o->type == HWLOC_OBJ_BRIDGE ? o->attr->bridge.upstream.pci : o->attr->pcidev;
      dev.busid = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", pci.domain, pci.bus, pci.dev, pci.func);
      dev.class_code = static_cast<uint32_t>(pci.class_id) << 8;
      dev.vendor = pci.vendor_id;
      dev.device = pci.device_id;
      dev.subsystem_vendor = pci.subvendor_id;
      dev.subsystem_device = pci.subdevice_id;
      dev.link_bytes_per_s = static_cast<double>(pci.linkspeed) * 1e9;
      dev.kind = o->type == HWLOC_OBJ_BRIDGE ? DeviceKind::kBridge : KindOf(dev.class_code, o);
      if (dev.kind == DeviceKind::kOther && (dev.class_code >> 8) == 0x0604) {
        dev.kind = DeviceKind::kBridge;
      }
      dev.numa = NumaOfObj(topo, o);
      index_of[o] = static_cast<int>(t_.pci.size());
      t_.pci.push_back(dev);
    }
    // Parents and host bridges.
    for (auto& [o, i] : index_of) {
      PciDevice& dev = t_.pci[static_cast<size_t>(i)];
      for (hwloc_obj_t up = o->parent; up; up = up->parent) {
        if (auto hb = host_bridges.find(up); hb != host_bridges.end()) {
          dev.host_bridge = hb->second;
          break;
        }
        if (auto pi = index_of.find(up); pi != index_of.end()) {
          if (dev.parent < 0) dev.parent = pi->second;
          continue;
        }
        if (up->type != HWLOC_OBJ_BRIDGE && up->type != HWLOC_OBJ_PCI_DEVICE) break;
      }
      if (dev.host_bridge >= 0 && dev.numa < 0) {
        dev.numa = t_.host_bridge_numa[static_cast<size_t>(dev.host_bridge)];
      }
    }
    // OS devices: GPUs, NICs, drives.
    for (auto& [o, i] : index_of) {
      if (o->type != HWLOC_OBJ_PCI_DEVICE) continue;
      PciDevice& dev = t_.pci[static_cast<size_t>(i)];
      Gpu gpu;
      Nic nic;
      bool is_gpu = dev.kind == DeviceKind::kGpu && dev.vendor == 0x10de;
      bool is_nic = dev.kind == DeviceKind::kNic;
      gpu.pci = nic.pci = i;
      for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE) continue;
        const std::string name = c->name ? c->name : "";
        // hwloc 3.0 XML stores a bit mask (12) that is no valid enumerator of hwloc 2.x:
        // copy the raw value rather than load an invalid enum.
        int osdev_type = 0;
        std::memcpy(&osdev_type, &c->attr->osdev.type, sizeof(osdev_type));
        switch (osdev_type) {
          case HWLOC_OBJ_OSDEV_GPU:
          case HWLOC_OBJ_OSDEV_COPROC:
            if (gpu.model.empty()) gpu.model = Info(c, "GPUModel");
            if (gpu.uuid.empty()) gpu.uuid = Info(c, "NVIDIAUUID");
            is_gpu = is_gpu || dev.vendor == 0x10de;
            break;
          case HWLOC_OBJ_OSDEV_OPENFABRICS: {
            is_nic = true;
            nic.name = name;
            for (int port = 1; port <= 8; ++port) {
              std::string state = Info(c, fmt::format("Port{}State", port).c_str());
              if (state.empty()) break;
              NicPort p;
              p.number = port;
              p.state = IbStateName(state);
              nic.ports.push_back(p);
            }
            break;
          }
          case HWLOC_OBJ_OSDEV_NETWORK:
            if (nic.netdev.empty()) nic.netdev = name;
            break;
          case HWLOC_OBJ_OSDEV_BLOCK:
            if (dev.kind == DeviceKind::kNvme) t_.nvme.push_back({i, name});
            break;
          default:
            // hwloc 3.0 XML encodes osdev types as a bit mask (nvml0 = GPU|COPROC = 12),
            // which hwloc 2.x cannot map: recognise GPUs by their NVML/CUDA info instead.
            if (!Info(c, "GPUModel").empty() || !Info(c, "NVIDIAUUID").empty()) {
              if (gpu.model.empty()) gpu.model = Info(c, "GPUModel");
              if (gpu.uuid.empty()) gpu.uuid = Info(c, "NVIDIAUUID");
              is_gpu = true;
            }
            break;
        }
      }
      if (is_gpu && (dev.class_code >> 16) == 0x03) {
        dev.kind = DeviceKind::kGpu;
        t_.gpus.push_back(gpu);
      } else if (is_nic) {
        dev.kind = DeviceKind::kNic;
        if (nic.name.empty()) nic.name = nic.netdev.empty() ? dev.busid : nic.netdev;
        t_.nics.push_back(nic);
      }
    }
    // nvidia-smi numbers GPUs in PCI bus order, as NVML does.
    std::sort(t_.gpus.begin(), t_.gpus.end(), [&](const Gpu& a, const Gpu& b) {
      return t_.pci[static_cast<size_t>(a.pci)].busid < t_.pci[static_cast<size_t>(b.pci)].busid;
    });
    for (size_t k = 0; k < t_.gpus.size(); ++k) t_.gpus[k].index = static_cast<int>(k);
    std::sort(t_.nics.begin(), t_.nics.end(), [](const Nic& a, const Nic& b) {
      return strings::ToLower(a.name) < strings::ToLower(b.name);
    });
    index_of_ = std::move(index_of);
  }

  // hwloc's "NVLinkBandwidth" distances (MB/s per direction) -> NVLink counts.
  void ReadNvLinkDistances(hwloc_topology_t topo) {
    unsigned nr = 1;
    hwloc_distances_s* d = nullptr;
    if (hwloc_distances_get_by_name(topo, "NVLinkBandwidth", &nr, &d, 0) != 0 || nr == 0) return;
    auto pci_of = [&](hwloc_obj_t o) -> int {
      while (o && o->type == HWLOC_OBJ_OS_DEVICE) o = o->parent;
      auto it = index_of_.find(o);
      return it == index_of_.end() ? -1 : it->second;
    };
    for (unsigned i = 0; i < d->nbobjs; ++i) {
      const int from = pci_of(d->objs[i]);
      auto g =
          std::find_if(t_.gpus.begin(), t_.gpus.end(), [&](const Gpu& x) { return x.pci == from; });
      if (g == t_.gpus.end()) continue;
      // Per-link bandwidth per direction from the GPU's NVLink generation, known from its PCI
      // device id (not its name: a B300 is not a "B200"). For an id the table does not know, a
      // GPU with more than NVLink 4's 18 x 25 GB/s in all is NVLink 5 (50 GB/s per link).
      double total = 0;
      for (unsigned j = 0; j < d->nbobjs; ++j) {
        if (j != i) total += static_cast<double>(d->values[i * d->nbobjs + j]);
      }
      const double per_link = NvLinkMBpsPerLink(t_.pci[static_cast<size_t>(g->pci)].device)
                                  .value_or(total > 18 * 25000.0 ? 50000.0 : 25000.0);
      for (unsigned j = 0; j < d->nbobjs; ++j) {
        const uint64_t bw = d->values[i * d->nbobjs + j];
        if (i == j || bw == 0) continue;
        const int to = pci_of(d->objs[j]);
        if (to < 0) {
          // An NVLink into the CPU (POWER8/9 "NVLink ports", hwloc's Package in the matrix):
          // NCCL's tclass 0x068001, whose target it ignores (the GPU's local CPU is meant).
          const hwloc_obj_type_t type = d->objs[j]->type;
          if (type == HWLOC_OBJ_PACKAGE || type == HWLOC_OBJ_NUMANODE) {
            g->nvlinks.push_back(
                {NvLink::To::kCpu, "",
                 std::max(1, static_cast<int>(std::lround(static_cast<double>(bw) / per_link)))});
          }
          continue;
        }
        NvLink l;
        l.target = t_.pci[static_cast<size_t>(to)].busid;
        l.to = t_.pci[static_cast<size_t>(to)].kind == DeviceKind::kNvSwitch ? NvLink::To::kNvSwitch
                                                                             : NvLink::To::kGpu;
        l.count = std::max(1, static_cast<int>(std::lround(static_cast<double>(bw) / per_link)));
        g->nvlinks.push_back(l);
      }
    }
    hwloc_distances_release(topo, d);
  }

  // sysfs: PCIe link state now vs max, and InfiniBand ports.
  void ReadSysfs() {
    for (auto& dev : t_.pci) {
      const std::string dir = "/sys/bus/pci/devices/" + dev.busid + "/";
      if (auto s = sys_.Read(dir + "current_link_speed"))
        dev.current.speed_gt_per_s = ParseLinkSpeed(*s);
      if (auto s = sys_.Read(dir + "max_link_speed")) dev.max.speed_gt_per_s = ParseLinkSpeed(*s);
      if (auto s = sys_.Read(dir + "current_link_width")) dev.current.width = std::atoi(s->c_str());
      if (auto s = sys_.Read(dir + "max_link_width")) dev.max.width = std::atoi(s->c_str());
    }
    std::vector<IbPortReading> ports = ReadIbPorts(sys_, /*with_counters=*/false);
    for (size_t i = 0; i < ports.size();) {
      const std::string hca = ports[i].hca;
      auto real = sys_.RealPath("/sys/class/infiniband/" + hca + "/device");
      size_t end = i;
      while (end < ports.size() && ports[end].hca == hca) ++end;
      if (!real) {
        i = end;
        continue;
      }
      const std::string busid = CanonicalBusId(real->substr(real->rfind('/') + 1));
      const int pci = t_.FindPci(busid);
      auto nic = std::find_if(t_.nics.begin(), t_.nics.end(), [&](const Nic& n) {
        return n.name == hca || (pci >= 0 && n.pci == pci && n.name.empty());
      });
      if (nic == t_.nics.end()) {
        if (pci < 0) {
          i = end;
          continue;
        }
        t_.pci[static_cast<size_t>(pci)].kind = DeviceKind::kNic;
        t_.nics.push_back(Nic{pci, hca, "", {}});
        nic = t_.nics.end() - 1;
      }
      nic->ports.clear();
      for (; i < end; ++i) {
        const IbPortReading& r = ports[i];
        nic->ports.push_back(
            NicPort{r.port, r.state, r.phys_state, r.rate_bytes_per_s, r.link_layer});
      }
    }
  }

  void ReadNvml() {
    std::unique_ptr<sys::Nvml> owned;
    sys::Nvml* nvml = opt_.nvml_handle;
    if (nvml == nullptr) {
      auto opened = sys::Nvml::Open();
      if (!opened) {
        t_.notes.push_back(opened.error().message);
        return;
      }
      owned = std::move(*opened);
      nvml = owned.get();
    }
    auto gpus = nvml->Gpus();
    if (!gpus) {
      t_.notes.push_back(gpus.error().message);
      return;
    }
    for (const auto& n : *gpus) {
      GpuFabricView v;
      v.index = n.index;
      v.busid = n.busid;
      v.model = n.name;
      v.links = n.links;
      v.links_active = static_cast<int>(n.active_links.size());
      v.nvlink_version = n.nvlink_version;
      v.link_mbps = n.link_mbps;
      v.c2c_links = n.c2c_links;
      v.c2c_mbps = n.c2c_mbps;
      v.state = std::string(sys::FabricStateName(n.fabric.state));
      if (n.has_fabric) {
        v.status = n.fabric.status;
        v.cluster_uuid = n.fabric.cluster_uuid;
        v.clique = n.fabric.clique;
        v.health_mask = n.fabric.health_mask;
        v.problems = n.fabric.Problems();
      }
      t_.fabric.push_back(std::move(v));
      const int pci = t_.FindPci(n.busid);
      auto g =
          std::find_if(t_.gpus.begin(), t_.gpus.end(), [&](const Gpu& x) { return x.pci == pci; });
      if (pci < 0 || g == t_.gpus.end()) {
        t_.notes.push_back(
            fmt::format("NVML GPU {} ({}) is not in hwloc's PCI tree", n.index, n.busid));
        continue;
      }
      g->index = n.index;
      g->model = n.name;
      g->uuid = n.uuid;
      g->sm = n.sm;
      g->c2c_links = n.c2c_links;
      g->c2c_mbps = n.c2c_mbps;
      g->nvlinks.clear();
      std::map<std::pair<std::string, int>, int> links;  // (target, kind) -> count
      for (const auto& l : n.active_links) {
        int kind =
            l.remote == sys::NvmlNvLink::Remote::kGpu        ? 0
            : l.remote == sys::NvmlNvLink::Remote::kCpu      ? 2
            : l.remote == sys::NvmlNvLink::Remote::kNvSwitch ? 1
            // Unknown type: a remote that is one of our GPUs is a GPU, else a switch.
            : t_.FindPci(l.remote_busid) >= 0 &&
                    t_.pci[static_cast<size_t>(t_.FindPci(l.remote_busid))].kind == DeviceKind::kGpu
                ? 0
                : 1;
        links[{l.remote_busid, kind}]++;
      }
      for (const auto& [key, count] : links) {
        NvLink l;
        l.target = key.first;
        l.to = key.second == 0   ? NvLink::To::kGpu
               : key.second == 2 ? NvLink::To::kCpu
                                 : NvLink::To::kNvSwitch;
        l.count = count;
        g->nvlinks.push_back(l);
      }
    }
  }

  const DiscoverOptions& opt_;
  NodeTopology& t_;
  SysRoot sys_;
  std::map<hwloc_obj_t, int> index_of_;
};

}  // namespace

DiscoverOptions DiscoverOptionsFor(const std::string& path) {
  DiscoverOptions d;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    d.root = path;
  } else {
    d.hwloc_xml = path;
  }
  return d;
}

ScopedHwlocEnv::ScopedHwlocEnv(const std::string& fsroot) {
  if (std::getenv("HWLOC_COMPONENTS") == nullptr) {
    setenv("HWLOC_COMPONENTS", fsroot.empty() ? "-pci,-gl,-opencl" : "-pci,-gl,-opencl,-x86", 1);
    set_components_ = true;
  }
  if (!fsroot.empty()) {
    setenv("HWLOC_FSROOT", fsroot.c_str(), 1);
    set_fsroot_ = true;
  }
}

ScopedHwlocEnv::~ScopedHwlocEnv() {
  if (set_components_) unsetenv("HWLOC_COMPONENTS");
  if (set_fsroot_) unsetenv("HWLOC_FSROOT");
}

namespace {

Result<NodeTopology> DiscoverIsolated(const DiscoverOptions& options) {
  IsolatedOptions isolated;
  isolated.what = options.hwloc_xml.empty() ? options.root : options.hwloc_xml;
  isolated.library = "libhwloc";
  auto answer = RunIsolated(isolated, [&]() -> Result<std::string> {
    NodeTopology t;
    GPUFLEET_RETURN_IF_ERROR(Builder(options, &t).Run());
    return ToJson(t).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  });
  if (!answer) return answer.error();
  nlohmann::json j = nlohmann::json::parse(*answer, nullptr, false);
  if (j.is_discarded()) {
    return Error{ErrorCode::kInternal,
                 fmt::format("{}: the child's answer is not JSON", isolated.what)};
  }
  return TopologyFromJson(j);
}

}  // namespace

Result<NodeTopology> Discover(const DiscoverOptions& options) {
  NodeTopology t;
  if (!options.root.empty()) {
    // A `gpufleet topo capture` folder carries the whole discovery; an
    // hwloc-gather-topology tree is read through hwloc's fsroot instead.
    SysRoot capture(options.root);
    if (auto json = capture.Read("/gpufleet-topology.json")) {
      nlohmann::json j = nlohmann::json::parse(*json, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded()) {
        return InvalidArgument(
            fmt::format("{}/gpufleet-topology.json: not valid JSON", options.root));
      }
      auto parsed = TopologyFromJson(j);
      if (!parsed) {
        return InvalidArgument(
            fmt::format("{}/gpufleet-topology.json: {}", options.root, parsed.error().message));
      }
      parsed->source = "capture " + options.root;
      return parsed;
    }
  }
  // A file or tree from elsewhere goes through libhwloc in a child process: hostile hwloc XML
  // crashes libhwloc 2.9.0 (lstopo too, docs/reliability.md), and that must be exit 2 naming the
  // file, not the end of `check` or the agent. The live node is read in this process.
  if (!options.hwloc_xml.empty() || !options.root.empty()) return DiscoverIsolated(options);
  GPUFLEET_RETURN_IF_ERROR(Builder(options, &t).Run());
  return t;
}

}  // namespace gpufleet::topo
