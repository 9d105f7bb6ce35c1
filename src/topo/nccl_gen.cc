#include "topo/nccl_gen.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace gpufleet::topo {

std::string NcclLinkSpeed(double gt) {
  for (double g : {2.5, 5.0, 8.0, 16.0, 32.0, 64.0}) {
    if (std::fabs(gt - g) < 0.01) return fmt::format("{:.1f} GT/s PCIe", g);
  }
  return "";
}

namespace {

// hwloc XML gives only the link's bandwidth in GB/s (width x per-lane rate);
// recover generation and width where they are unambiguous.
PciLink LinkFromBandwidth(double bytes_per_s) {
  PciLink best;
  double best_err = 0.03;
  for (double gen : {2.5, 5.0, 8.0, 16.0, 32.0, 64.0}) {
    for (int width : {16, 8, 4, 2, 1}) {
      PciLink l{gen, width};
      const double err = std::fabs(l.BytesPerS() - bytes_per_s) / bytes_per_s;
      if (err < best_err) {
        best_err = err;
        best = l;
      }
    }
  }
  return best;
}

// NCCL's CPUID arithmetic: family = base + (extended << 4) (reference/topology.md §1.3).
int NcclFamily(const NodeTopology& t) {
  if (t.cpu_vendor == "AuthenticAMD" && t.cpu_family > 15) return 15 + ((t.cpu_family - 15) << 4);
  return t.cpu_family;
}

class Generator {
 public:
  Generator(const NodeTopology& t, const NcclGenOptions& o) : t_(t), o_(o) {}

  XmlElement Run() {
    XmlElement root;
    root.name = "system";
    root.Set("version", "1");
    // Endpoints NCCL places: GPUs and NICs (not NVSwitches, not drives).
    std::vector<int> endpoints;
    for (const auto& g : t_.gpus) endpoints.push_back(g.pci);
    if (o_.include_nics) {
      for (const auto& n : t_.nics) endpoints.push_back(n.pci);
    }
    std::map<int, XmlElement> cpus;  // by NUMA id
    for (int e : endpoints) {
      const int numa = t_.NumaOf(e);
      auto [it, inserted] = cpus.try_emplace(numa);
      if (inserted) it->second = Cpu(numa);
      Place(e, &it->second);
    }
    for (auto& [numa, cpu] : cpus) {
      Sort(&cpu);
      root.children.push_back(std::move(cpu));
    }
    return root;
  }

 private:
  XmlElement Cpu(int numa) const {
    XmlElement c;
    c.name = "cpu";
    c.Set("numaid", std::to_string(numa));
    if (const NumaNode* n = t_.FindNuma(numa)) {
      int max_cpu = 0;
      for (const auto& m : t_.numa) {
        for (int cpu : m.cpus) max_cpu = std::max(max_cpu, cpu);
      }
      c.Set("affinity", CpuMask(n->cpus, max_cpu / 32 + 1));
    }
    const std::string arch = t_.arch.empty() ? "x86_64" : t_.arch;
    c.Set("arch", arch == "aarch64" ? "arm64" : arch.rfind("ppc64", 0) == 0 ? "ppc64" : arch);
    if (!t_.cpu_vendor.empty()) c.Set("vendor", t_.cpu_vendor);
    if (t_.cpu_family > 0) {
      c.Set("familyid", std::to_string(NcclFamily(t_)));
      c.Set("modelid", std::to_string(t_.cpu_model_number));
    }
    return c;
  }

  XmlElement PciElement(int i) const {
    const PciDevice& d = t_.pci[static_cast<size_t>(i)];
    XmlElement p;
    p.name = "pci";
    p.Set("busid", d.busid);
    p.Set("class", fmt::format("0x{:06x}", d.class_code));
    p.Set("vendor", fmt::format("0x{:04x}", d.vendor));
    p.Set("device", fmt::format("0x{:04x}", d.device));
    p.Set("subsystem_vendor", fmt::format("0x{:04x}", d.subsystem_vendor));
    p.Set("subsystem_device", fmt::format("0x{:04x}", d.subsystem_device));
    // NCCL uses the maximum the link supports (min of device and upstream port).
    PciLink link = d.max;
    if (link.speed_gt_per_s == 0 && d.link_bytes_per_s > 0)
      link = LinkFromBandwidth(d.link_bytes_per_s);
    p.Set("link_speed", NcclLinkSpeed(link.speed_gt_per_s));
    p.Set("link_width", std::to_string(link.width));
    return p;
  }

  // Puts endpoint `e` under `cpu`, creating the switch levels NCCL would see.
  void Place(int e, XmlElement* cpu) {
    std::vector<int> chain;  // ancestors, nearest first
    for (int p = t_.pci[static_cast<size_t>(e)].parent; p >= 0;
         p = t_.pci[static_cast<size_t>(p)].parent) {
      chain.push_back(p);
    }
    // NCCL keeps every second level: switch upstream ports, not downstream or root ports.
    std::vector<int> levels;
    for (size_t k = 1; k < chain.size(); k += 2) levels.push_back(chain[k]);
    XmlElement* at = cpu;
    for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
      const std::string& busid = t_.pci[static_cast<size_t>(*it)].busid;
      auto child = std::find_if(at->children.begin(), at->children.end(), [&](const XmlElement& c) {
        return c.name == "pci" && c.GetOr("busid", "") == busid;
      });
      if (child == at->children.end()) {
        at->children.push_back(PciElement(*it));
        child = at->children.end() - 1;
      }
      at = &*child;
    }
    XmlElement dev = PciElement(e);
    for (const auto& g : t_.gpus) {
      if (g.pci == e) dev.children.push_back(GpuElement(g));
    }
    for (size_t k = 0; k < t_.nics.size(); ++k) {
      if (t_.nics[k].pci == e) dev.children.push_back(NicElement(t_.nics[k], static_cast<int>(k)));
    }
    at->children.push_back(std::move(dev));
  }

  XmlElement GpuElement(const Gpu& g) const {
    XmlElement e;
    e.name = "gpu";
    e.Set("dev", std::to_string(g.index));
    if (g.sm > 0) e.Set("sm", std::to_string(g.sm));
    e.Set("rank", std::to_string(g.index));
    if (!o_.include_nvlinks) return e;
    for (const auto& l : g.nvlinks) {
      XmlElement n;
      n.name = "nvlink";
      n.Set("target", l.target.empty() ? "fffffff:ff:ff" : l.target);
      n.Set("count", std::to_string(l.count));
      n.Set("tclass", l.to == NvLink::To::kGpu        ? "0x030200"
                      : l.to == NvLink::To::kNvSwitch ? "0x068000"
                                                      : "0x068001");
      e.children.push_back(std::move(n));
    }
    if (g.c2c_links > 0 && g.c2c_mbps > 0) {  // NCCL: <c2c count bw(MB/s per link)>
      XmlElement c;
      c.name = "c2c";
      c.Set("count", std::to_string(g.c2c_links));
      c.Set("bw", fmt::format("{:.0f}", g.c2c_mbps));
      e.children.push_back(std::move(c));
    }
    return e;
  }

  XmlElement NicElement(const Nic& n, int dev) const {
    XmlElement nic;
    nic.name = "nic";
    if (n.ports.empty()) {
      XmlElement net;
      net.name = "net";
      net.Set("name", n.name);
      net.Set("dev", std::to_string(dev));
      nic.children.push_back(std::move(net));
      return nic;
    }
    for (const auto& p : n.ports) {
      XmlElement net;
      net.name = "net";
      net.Set("name", n.name);
      net.Set("dev", std::to_string(dev));
      if (p.rate_bytes_per_s > 0) {
        net.Set("speed", std::to_string(static_cast<long>(p.rate_bytes_per_s * 8 / 1e6)));
      }
      net.Set("port", std::to_string(p.number));
      nic.children.push_back(std::move(net));
    }
    return nic;
  }

  // NCCL keeps <cpu> children sorted by bus id (nccl #820).
  static void Sort(XmlElement* e) {
    std::stable_sort(e->children.begin(), e->children.end(),
                     [](const XmlElement& a, const XmlElement& b) {
                       return a.GetOr("busid", "") < b.GetOr("busid", "");
                     });
    for (auto& c : e->children) Sort(&c);
  }

  const NodeTopology& t_;
  const NcclGenOptions& o_;
};

}  // namespace

XmlElement NcclXmlOf(const NodeTopology& t, const NcclGenOptions& options) {
  return Generator(t, options).Run();
}

}  // namespace gpufleet::topo
