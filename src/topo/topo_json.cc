#include "topo/topo_json.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>

#include "base/strings.h"

namespace gpufleet::topo {

using J = nlohmann::ordered_json;

namespace {
std::string_view NvLinkToName(NvLink::To to) {
  return to == NvLink::To::kGpu ? "gpu" : to == NvLink::To::kNvSwitch ? "nvswitch" : "cpu";
}
}  // namespace

J ToJson(const NodeTopology& t) {
  J j;
  j["schema"] = kTopologySchema;
  j["source"] = t.source;
  j["hostname"] = t.hostname;
  j["cpu"] = {{"arch", t.arch},
              {"vendor", t.cpu_vendor},
              {"model", t.cpu_model},
              {"family", t.cpu_family},
              {"model_number", t.cpu_model_number},
              {"packages", t.packages}};
  J numa = J::array();
  for (const auto& n : t.numa) {
    numa.push_back({{"id", n.id},
                    {"cpulist", n.cpulist},
                    {"threads", n.cpus.size()},
                    {"cores", n.cores},
                    {"memory_bytes", n.memory_bytes}});
  }
  j["numa"] = numa;
  J pci = J::array();
  for (const auto& d : t.pci) {
    pci.push_back(
        {{"busid", d.busid},
         {"class", fmt::format("0x{:06x}", d.class_code)},
         {"vendor", fmt::format("0x{:04x}", d.vendor)},
         {"device", fmt::format("0x{:04x}", d.device)},
         {"subsystem_vendor", fmt::format("0x{:04x}", d.subsystem_vendor)},
         {"subsystem_device", fmt::format("0x{:04x}", d.subsystem_device)},
         {"kind", DeviceKindName(d.kind)},
         {"parent", d.parent >= 0 ? J(t.pci[static_cast<size_t>(d.parent)].busid) : J(nullptr)},
         {"host_bridge", d.host_bridge},
         {"numa", d.numa},
         {"link_current",
          {{"speed_gt_per_s", d.current.speed_gt_per_s}, {"width", d.current.width}}},
         {"link_max", {{"speed_gt_per_s", d.max.speed_gt_per_s}, {"width", d.max.width}}},
         {"link_bytes_per_s", d.link_bytes_per_s}});
  }
  j["pci"] = pci;
  j["host_bridge_numa"] = t.host_bridge_numa;
  J gpus = J::array();
  for (const auto& g : t.gpus) {
    J links = J::array();
    for (const auto& l : g.nvlinks) {
      links.push_back({{"to", NvLinkToName(l.to)}, {"target", l.target}, {"count", l.count}});
    }
    gpus.push_back({{"index", g.index},
                    {"busid", t.pci[static_cast<size_t>(g.pci)].busid},
                    {"model", g.model},
                    {"uuid", g.uuid},
                    {"sm", g.sm},
                    {"numa", t.NumaOf(g.pci)},
                    {"nvlinks", links},
                    {"c2c", {{"links", g.c2c_links}, {"bytes_per_s_per_link", g.c2c_mbps * 1e6}}}});
  }
  j["gpus"] = gpus;
  J nics = J::array();
  for (const auto& n : t.nics) {
    J ports = J::array();
    for (const auto& p : n.ports) {
      ports.push_back({{"port", p.number},
                       {"state", p.state},
                       {"phys_state", p.phys_state},
                       {"rate_bytes_per_s", p.rate_bytes_per_s},
                       {"link_layer", p.link_layer}});
    }
    nics.push_back({{"name", n.name},
                    {"netdev", n.netdev},
                    {"busid", t.pci[static_cast<size_t>(n.pci)].busid},
                    {"numa", t.NumaOf(n.pci)},
                    {"ports", ports}});
  }
  j["nics"] = nics;
  J nvme = J::array();
  for (const auto& n : t.nvme) {
    nvme.push_back({{"name", n.name}, {"busid", t.pci[static_cast<size_t>(n.pci)].busid}});
  }
  j["nvme"] = nvme;
  J fabric = J::array();
  for (const auto& f : t.fabric) {
    fabric.push_back({{"index", f.index},
                      {"busid", f.busid},
                      {"model", f.model},
                      {"links", f.links},
                      {"links_active", f.links_active},
                      {"nvlink_version", f.nvlink_version},
                      {"link_bytes_per_s", f.link_mbps * 1e6},
                      {"c2c_links", f.c2c_links},
                      {"c2c_bytes_per_s_per_link", f.c2c_mbps * 1e6},
                      {"state", f.state},
                      {"status", f.status},
                      {"cluster_uuid", f.cluster_uuid},
                      {"clique", f.clique},
                      {"health_mask", f.health_mask},
                      {"problems", f.problems}});
  }
  j["fabric"] = fabric;
  // Path types between every GPU and NIC, in nvidia-smi's legend and NCCL's.
  std::vector<std::pair<std::string, int>> devs;
  for (const auto& g : t.gpus) devs.emplace_back(fmt::format("GPU{}", g.index), g.pci);
  for (const auto& n : t.nics) devs.emplace_back(n.name, n.pci);
  J paths = J::object();
  for (const auto& [a, pa] : devs) {
    J row = J::object();
    for (const auto& [b, pb] : devs) {
      const Path p = PathBetween(t, pa, pb);
      row[b] = {{"smi", p.Label()}, {"nccl", NcclPathName(p.nccl)}};
    }
    paths[a] = row;
  }
  j["paths"] = paths;
  j["notes"] = t.notes;
  return j;
}

Result<NodeTopology> TopologyFromJson(const nlohmann::json& j) {
  try {
    if (j.value("schema", "") != kTopologySchema) {
      return InvalidArgument(
          fmt::format("schema is '{}', expected '{}'", j.value("schema", ""), kTopologySchema));
    }
    // An int field must hold an integer that fits: get<int>() casts a double such as 1e308 (UB,
    // the fuzzer found it) and wraps a large unsigned one.
    auto integer = [](const nlohmann::json& v) {
      if (!v.is_number_integer()) {
        throw nlohmann::json::type_error::create(302, "not an integer: " + v.dump(), &v);
      }
      const bool fits = v.is_number_unsigned()
                            ? v.get<uint64_t>() <= uint64_t{std::numeric_limits<int>::max()}
                            : v.get<int64_t>() >= std::numeric_limits<int>::min() &&
                                  v.get<int64_t>() <= std::numeric_limits<int>::max();
      if (!fits) {
        throw nlohmann::json::type_error::create(302, "integer out of range: " + v.dump(), &v);
      }
      return static_cast<int>(v.get<int64_t>());
    };
    NodeTopology t;
    t.source = j.at("source").get<std::string>();
    t.hostname = j.at("hostname").get<std::string>();
    const auto& cpu = j.at("cpu");
    t.arch = cpu.at("arch").get<std::string>();
    t.cpu_vendor = cpu.at("vendor").get<std::string>();
    t.cpu_model = cpu.at("model").get<std::string>();
    t.cpu_family = integer(cpu.at("family"));
    t.cpu_model_number = integer(cpu.at("model_number"));
    t.packages = integer(cpu.at("packages"));
    for (const auto& n : j.at("numa")) {
      NumaNode node;
      node.id = integer(n.at("id"));
      node.cpulist = n.at("cpulist").get<std::string>();
      node.cpus = ParseCpuList(node.cpulist);
      if (n.contains("cores")) node.cores = integer(n.at("cores"));  // older captures lack it
      node.memory_bytes = n.at("memory_bytes").get<double>();
      t.numa.push_back(node);
    }
    // A hex field that is not hex is a bad field (it used to escape as std::invalid_argument
    // from std::stoul and abort `check --root`; the fuzzer found it).
    auto hex = [](const nlohmann::json& v) {
      const auto n = strings::ParseInteger(v.get<std::string>(), 16);
      if (!n || *n > 0xffffffff) {
        throw nlohmann::json::type_error::create(302, "not a hex number: " + v.get<std::string>(),
                                                 &v);
      }
      return static_cast<uint32_t>(*n);
    };
    for (const auto& p : j.at("pci")) {
      PciDevice d;
      d.busid = p.at("busid").get<std::string>();
      d.class_code = hex(p.at("class"));
      d.vendor = static_cast<uint16_t>(hex(p.at("vendor")));
      d.device = static_cast<uint16_t>(hex(p.at("device")));
      d.subsystem_vendor = static_cast<uint16_t>(hex(p.at("subsystem_vendor")));
      d.subsystem_device = static_cast<uint16_t>(hex(p.at("subsystem_device")));
      const std::string kind = p.at("kind").get<std::string>();
      for (DeviceKind k : {DeviceKind::kBridge, DeviceKind::kGpu, DeviceKind::kNic,
                           DeviceKind::kNvSwitch, DeviceKind::kNvme, DeviceKind::kOther}) {
        if (DeviceKindName(k) == kind) d.kind = k;
      }
      d.host_bridge = integer(p.at("host_bridge"));
      d.numa = integer(p.at("numa"));
      d.current = {p.at("link_current").at("speed_gt_per_s").get<double>(),
                   integer(p.at("link_current").at("width"))};
      d.max = {p.at("link_max").at("speed_gt_per_s").get<double>(),
               integer(p.at("link_max").at("width"))};
      d.link_bytes_per_s = p.at("link_bytes_per_s").get<double>();
      t.pci.push_back(d);
    }
    size_t k = 0;
    for (const auto& p : j.at("pci")) {
      if (!p.at("parent").is_null()) t.pci[k].parent = t.FindPci(p.at("parent").get<std::string>());
      ++k;
    }
    for (const auto& v : j.at("host_bridge_numa")) t.host_bridge_numa.push_back(integer(v));
    for (const auto& g : j.at("gpus")) {
      Gpu gpu;
      gpu.index = integer(g.at("index"));
      gpu.pci = t.FindPci(g.at("busid").get<std::string>());
      gpu.model = g.at("model").get<std::string>();
      gpu.uuid = g.at("uuid").get<std::string>();
      gpu.sm = integer(g.at("sm"));
      for (const auto& l : g.at("nvlinks")) {
        const std::string to = l.at("to").get<std::string>();
        gpu.nvlinks.push_back({to == "gpu"   ? NvLink::To::kGpu
                               : to == "cpu" ? NvLink::To::kCpu
                                             : NvLink::To::kNvSwitch,
                               l.at("target").get<std::string>(), integer(l.at("count"))});
      }
      if (g.contains("c2c")) {  // absent before gpufleet 0.2
        gpu.c2c_links = integer(g.at("c2c").at("links"));
        gpu.c2c_mbps = g.at("c2c").at("bytes_per_s_per_link").get<double>() / 1e6;
      }
      if (gpu.pci < 0) return InvalidArgument("a GPU's busid is not in pci[]");
      t.gpus.push_back(gpu);
    }
    for (const auto& n : j.at("nics")) {
      Nic nic;
      nic.name = n.at("name").get<std::string>();
      nic.netdev = n.at("netdev").get<std::string>();
      nic.pci = t.FindPci(n.at("busid").get<std::string>());
      for (const auto& p : n.at("ports")) {
        nic.ports.push_back({integer(p.at("port")), p.at("state").get<std::string>(),
                             p.at("phys_state").get<std::string>(),
                             p.at("rate_bytes_per_s").get<double>(),
                             p.at("link_layer").get<std::string>()});
      }
      if (nic.pci < 0) return InvalidArgument("a NIC's busid is not in pci[]");
      t.nics.push_back(nic);
    }
    for (const auto& n : j.at("nvme")) {
      t.nvme.push_back(
          {t.FindPci(n.at("busid").get<std::string>()), n.at("name").get<std::string>()});
    }
    auto uint32 = [](const nlohmann::json& v) {
      if (!v.is_number_unsigned() || v.get<uint64_t>() > std::numeric_limits<uint32_t>::max()) {
        throw nlohmann::json::type_error::create(302, "not a 32-bit unsigned: " + v.dump(), &v);
      }
      return static_cast<uint32_t>(v.get<uint64_t>());
    };
    for (const auto& f : j.value("fabric", nlohmann::json::array())) {  // absent before 0.2
      GpuFabricView v;
      v.index = integer(f.at("index"));
      v.busid = f.at("busid").get<std::string>();
      v.model = f.at("model").get<std::string>();
      v.links = integer(f.at("links"));
      v.links_active = integer(f.at("links_active"));
      v.nvlink_version = integer(f.at("nvlink_version"));
      v.link_mbps = f.at("link_bytes_per_s").get<double>() / 1e6;
      v.c2c_links = integer(f.at("c2c_links"));
      v.c2c_mbps = f.at("c2c_bytes_per_s_per_link").get<double>() / 1e6;
      v.state = f.at("state").get<std::string>();
      v.status = integer(f.at("status"));
      v.cluster_uuid = f.at("cluster_uuid").get<std::string>();
      v.clique = uint32(f.at("clique"));
      v.health_mask = uint32(f.at("health_mask"));
      v.problems = f.at("problems").get<std::vector<std::string>>();
      t.fabric.push_back(std::move(v));
    }
    t.notes = j.at("notes").get<std::vector<std::string>>();
    return t;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(fmt::format("not a gpufleet topology: {}", e.what()));
  }
}

J ToJson(const SmiMatrix& m) {
  J rows = J::object();
  for (size_t r = 0; r < m.devices.size(); ++r) {
    J row = J::object();
    for (size_t c = 0; c < m.devices.size(); ++c) row[m.devices[c]] = m.cells[r][c];
    rows[m.devices[r]] = row;
  }
  J gpus = J::array();
  for (int g = 0; g < m.gpus; ++g) {
    gpus.push_back({{"gpu", m.devices[static_cast<size_t>(g)]},
                    {"cpu_affinity", m.cpu_affinity[static_cast<size_t>(g)]},
                    {"numa_affinity", m.numa_affinity[static_cast<size_t>(g)]},
                    {"gpu_numa_id", m.gpu_numa_id[static_cast<size_t>(g)]}});
  }
  return {{"schema", "gpufleet.smi-matrix/v1"},
          {"devices", m.devices},
          {"nic_legend", m.nic_legend},
          {"matrix", rows},
          {"gpus", gpus}};
}

J ToJson(const LintReport& r) {
  J f = J::array();
  for (const auto& x : r.findings) {
    f.push_back({{"severity", LintSeverityName(x.severity)},
                 {"id", x.id},
                 {"line", x.line},
                 {"message", x.message},
                 {"nccl_does", x.nccl_does},
                 {"fix", x.fix}});
  }
  return {{"schema", "gpufleet.topo-lint/v1"}, {"file", r.file},         {"errors", r.Errors()},
          {"warnings", r.Warnings()},          {"omitted", r.Omitted()}, {"findings", f}};
}

J ToJson(const std::vector<GpuAffinity>& a) {
  J gpus = J::array();
  for (const auto& g : a) {
    gpus.push_back({{"gpu", g.gpu},
                    {"busid", g.busid},
                    {"numa", g.numa},
                    {"cpulist", g.cpulist},
                    {"nics", g.nics},
                    {"nearest_path", g.nearest_path},
                    {"numactl", g.numactl}});
  }
  return {{"schema", "gpufleet.affinity/v1"}, {"nccl_ib_hca", NcclIbHca(a)}, {"gpus", gpus}};
}

}  // namespace gpufleet::topo
