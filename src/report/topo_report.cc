#include "report/topo_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "base/units.h"
#include "report/table.h"

namespace gpufleet::report {

using topo::DeviceKind;

namespace {

std::string Describe(const topo::NodeTopology& t, int i) {
  const auto& d = t.pci[static_cast<size_t>(i)];
  std::string s =
      fmt::format("{} [{:04x}:{:04x}] class 0x{:06x}", d.busid, d.vendor, d.device, d.class_code);
  if (d.current.speed_gt_per_s > 0 || d.max.speed_gt_per_s > 0) {
    s += fmt::format(" link {:g} GT/s x{} (max {:g} GT/s x{})", d.current.speed_gt_per_s,
                     d.current.width, d.max.speed_gt_per_s, d.max.width);
  } else if (d.link_bytes_per_s > 0) {
    s += " link " + units::FormatByteRate(d.link_bytes_per_s);
  }
  for (const auto& g : t.gpus) {
    if (g.pci != i) continue;
    s += fmt::format("  GPU{} {}", g.index, g.model.empty() ? "(model unknown)" : g.model);
    if (!g.uuid.empty()) s += " " + g.uuid;
    if (g.NvLinkCount() > 0) {
      int to[3] = {0, 0, 0};  // GPU, NVSwitch, CPU
      for (const auto& l : g.nvlinks) to[static_cast<int>(l.to)] += l.count;
      std::vector<std::string> parts;
      if (to[0] > 0) parts.push_back(fmt::format("{} to GPUs", to[0]));
      if (to[1] > 0) parts.push_back(fmt::format("{} to NVSwitches", to[1]));
      if (to[2] > 0) parts.push_back(fmt::format("{} to the CPU", to[2]));
      s += fmt::format(" NVLinks {} ({})", g.NvLinkCount(), fmt::join(parts, ", "));
    }
    if (g.c2c_links > 0) {
      s += fmt::format(" NVLink-C2C {} x {}", g.c2c_links, units::FormatByteRate(g.c2c_mbps * 1e6));
    }
  }
  for (const auto& n : t.nics) {
    if (n.pci != i) continue;
    s += "  NIC " + n.name + (n.netdev.empty() || n.netdev == n.name ? "" : " (" + n.netdev + ")");
    for (const auto& p : n.ports) {
      s += fmt::format(" port{} {}", p.number, p.state);
      if (p.rate_bytes_per_s > 0) s += " " + units::FormatBitRate(p.rate_bytes_per_s);
      if (!p.link_layer.empty()) s += " " + p.link_layer;
    }
  }
  for (const auto& n : t.nvme) {
    if (n.pci == i) s += "  NVMe " + n.name;
  }
  if (d.kind == DeviceKind::kNvSwitch) s += "  NVSwitch";
  return s;
}

void Tree(const topo::NodeTopology& t, const std::multimap<int, int>& children, int parent,
          int depth, std::string* out) {
  auto [b, e] = children.equal_range(parent);
  for (auto it = b; it != e; ++it) {
    *out += std::string(static_cast<size_t>(depth) * 2, ' ') + Describe(t, it->second) + "\n";
    Tree(t, children, it->second, depth + 1, out);
  }
}

// NVML's view of the GPUs' NVLinks and multi-node NVLink fabric; "" when no GPU has NVLinks.
std::string FabricText(const std::vector<topo::GpuFabricView>& fabric) {
  bool any = false;
  for (const auto& f : fabric) any = any || f.links > 0 || f.state != "not_supported";
  if (!any) return "";
  Table table({"GPU", "bus id", "NVLinks", "version", "per link", "C2C to CPU", "fabric",
               "cluster UUID", "clique", "health"});
  for (const auto& f : fabric) {
    static constexpr const char* kVersions[] = {"-",   "1.0", "2.0", "2.2",
                                                "3.0", "3.1", "4.0", "5.0"};
    const bool in_fabric = f.state != "not_supported";
    std::string health = "-";
    if (in_fabric)
      health = f.problems.empty() ? "ok" : fmt::format("{}", fmt::join(f.problems, ", "));
    if (in_fabric && f.state == "completed" && f.status != 0) {
      health = fmt::format("registration error {}", f.status);
    }
    table.AddRow({fmt::format("GPU{}", f.index), f.busid,
                  fmt::format("{}/{} active", f.links_active, f.links),
                  f.nvlink_version >= 0 && f.nvlink_version <= 7 ? kVersions[f.nvlink_version]
                                                                 : std::to_string(f.nvlink_version),
                  f.link_mbps > 0 ? units::FormatByteRate(f.link_mbps * 1e6) : "-",
                  f.c2c_links > 0
                      ? fmt::format("{} x {}", f.c2c_links, units::FormatByteRate(f.c2c_mbps * 1e6))
                      : "-",
                  f.state == "not_supported" ? "-" : f.state,
                  in_fabric && !f.cluster_uuid.empty() ? f.cluster_uuid : "-",
                  in_fabric ? std::to_string(f.clique) : "-", health});
  }
  return "\nNVLink and fabric (NVML)\n" + table.Text(2);
}

}  // namespace

std::string TopologyText(const topo::NodeTopology& t) {
  std::string out = fmt::format("node {} ({})\n", t.hostname.empty() ? "-" : t.hostname, t.source);
  out += fmt::format("cpu: {} {} (family {}, model {}), {} package(s), {}\n",
                     t.cpu_vendor.empty() ? "-" : t.cpu_vendor, t.cpu_model, t.cpu_family,
                     t.cpu_model_number, t.packages, t.arch.empty() ? "-" : t.arch);
  out += fmt::format("GPUs {}, NICs {}, NVMe {}, PCI devices {}\n", t.gpus.size(), t.nics.size(),
                     t.nvme.size(), t.pci.size());
  std::multimap<int, int> children;  // parent index (or -2 - host bridge) -> child
  for (size_t i = 0; i < t.pci.size(); ++i) {
    const auto& d = t.pci[i];
    children.emplace(d.parent >= 0 ? d.parent : -2 - d.host_bridge, static_cast<int>(i));
  }
  for (const auto& n : t.numa) {
    const std::string count =
        n.cores > 0 ? fmt::format("{} cores, {} hardware threads", n.cores, n.cpus.size())
                    : fmt::format("{} hardware threads", n.cpus.size());
    out += fmt::format("\nNUMA node {}: CPUs {} ({}), {}\n", n.id, n.cpulist, count,
                       units::FormatBytes(n.memory_bytes));
    for (size_t hb = 0; hb < t.host_bridge_numa.size(); ++hb) {
      if (t.host_bridge_numa[hb] != n.id) continue;
      out += fmt::format("  host bridge {}\n", hb);
      Tree(t, children, -2 - static_cast<int>(hb), 2, &out);
    }
  }
  bool unplaced = false;
  for (size_t hb = 0; hb < t.host_bridge_numa.size(); ++hb) {
    if (t.FindNuma(t.host_bridge_numa[hb]) != nullptr) continue;
    if (!unplaced) out += "\nPCI not attached to one NUMA node\n";
    unplaced = true;
    out += fmt::format("  host bridge {}\n", hb);
    Tree(t, children, -2 - static_cast<int>(hb), 2, &out);
  }
  if (children.count(-1) > 0) Tree(t, children, -1, 1, &out);  // devices without a host bridge
  out += FabricText(t.fabric);
  for (const auto& n : t.notes) out += "note: " + n + "\n";
  return out;
}

std::string LintText(const topo::LintReport& r) {
  std::string out;
  for (const auto& f : r.findings) {
    const std::string where = f.line > 0 ? fmt::format("{}:{}", r.file, f.line) : r.file;
    out += fmt::format("{}: {}: {} [{}]\n    NCCL: {}\n    fix: {}\n", where,
                       topo::LintSeverityName(f.severity), f.message, f.id, f.nccl_does, f.fix);
  }
  if (r.Omitted() > 0) {
    out +=
        fmt::format("{}: {} more finding(s) not listed (at most {} are, {} of one kind)\n", r.file,
                    r.Omitted(), topo::LintReport::kMaxFindings, topo::LintReport::kMaxPerId);
  }
  const int notes = static_cast<int>(r.findings.size()) + r.Omitted() - r.Errors() - r.Warnings();
  out += fmt::format("{}: {} error(s), {} warning(s), {} note(s)\n", r.file, r.Errors(),
                     r.Warnings(), notes);
  return out;
}

std::string AffinityText(const std::vector<topo::GpuAffinity>& a) {
  Table t({"GPU", "bus id", "NUMA", "CPUs", "nearest NICs", "path", "bind"});
  for (const auto& g : a) {
    std::string nics;
    for (size_t i = 0; i < g.nics.size() && i < 3; ++i) nics += (i ? "," : "") + g.nics[i];
    if (g.nics.size() > 3) nics += ",...";
    t.AddRow({fmt::format("GPU{}", g.gpu), g.busid, g.numa >= 0 ? std::to_string(g.numa) : "-",
              g.cpulist.empty() ? "-" : g.cpulist, nics.empty() ? "-" : nics,
              g.nearest_path.empty() ? "-" : g.nearest_path, g.numactl.empty() ? "-" : g.numactl});
  }
  std::string out = t.Text(0);
  const std::string hca = topo::NcclIbHca(a);
  out += hca.empty() ? "NCCL_IB_HCA: no RDMA NIC found\n" : "NCCL_IB_HCA=" + hca + "\n";
  return out;
}

}  // namespace gpufleet::report
