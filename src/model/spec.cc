#include "model/spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <span>
#include <sstream>

#include "base/files.h"
#include "base/strings.h"
#include "model/catalog_fields.h"
#include "model/embedded.h"

namespace gpufleet::model {

namespace {
// Ten million GPUs: a hundred times the largest cluster announced (2026); the step and goodput
// models are not meant past it, and it keeps every count inside an int.
constexpr int kMaxGpus = 10'000'000;
}  // namespace

using units::Dimension;

std::string Spec::Where(std::string_view path, std::string_view message) const {
  std::string p(path);
  while (true) {
    auto it = locations.find(p);
    if (it != locations.end() && !it->second.set.empty()) {
      return fmt::format("{} (--set {}): {}: {}", file, it->second.set, path, message);
    }
    if (it != locations.end() && it->second.line > 0) {
      return fmt::format("{}:{}:{}: {}: {}", file, it->second.line, it->second.column, path,
                         message);
    }
    size_t dot = p.rfind('.');
    if (dot == std::string::npos) break;
    p.resize(dot);
  }
  return fmt::format("{}: {}: {}", file, path, message);
}

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

class SpecLoader {
 public:
  SpecLoader(std::string file, const Catalog& catalog) : r_(std::move(file)), catalog_(catalog) {}

  Result<Spec> Load(std::string_view text, const std::vector<SpecOverride>& overrides) {
    YAML::Node doc = r_.Load(text);
    for (const auto& o : overrides) r_.Override(doc, o.path, o.value);
    if (r_.failed()) return r_.error();
    r_.Keys(doc, "",
            {"name", "description", "nodes", "fabrics", "racks", "storage", "facility", "costs",
             "reliability", "workload"});
    spec_.file = r_.file();
    Cluster& c = spec_.cluster;
    c.name = r_.String(doc, "", "name");
    ReadNodes(Required(doc, "nodes"));
    ReadFabrics(r_.Child(doc, "fabrics"));
    ReadRacks(r_.Child(doc, "racks"));
    ReadStorage(r_.Child(doc, "storage"));
    ReadFacility(r_.Child(doc, "facility"));
    ReadCosts(r_.Child(doc, "costs"));
    ReadReliability(r_.Child(doc, "reliability"));
    ReadWorkload(Required(doc, "workload"));
    if (r_.failed()) return r_.error();
    spec_.locations = r_.locations();
    GPUFLEET_RETURN_IF_ERROR(Validate());
    return std::move(spec_);
  }

 private:
  YAML::Node Required(const YAML::Node& map, std::string_view key) {
    YAML::Node n = r_.Child(map, key);
    if (!r_.failed() && !n.IsDefined()) {
      r_.Fail(map, key, fmt::format("missing required section '{}'", key));
    }
    return n;
  }

  template <typename T>
  void Unknown(const YAML::Node& node, std::string_view path, std::string_view what,
               std::string_view name, const std::vector<T>& entries) {
    std::string hint = strings::ClosestMatch(name, NamesOf(entries));
    r_.Fail(node, path,
            fmt::format("unknown {} '{}'; {}", what, name,
                        hint.empty() ? fmt::format("known: {}; or add it to data/catalog",
                                                   fmt::join(NamesOf(entries), ", "))
                                     : fmt::format("did you mean '{}'?", hint)));
  }

  void ReadNodes(const YAML::Node& n) {
    if (r_.failed()) return;
    Node& node = spec_.cluster.nodes;
    r_.Keys(n, "nodes", {"count", "gpu", "cpu", "memory", "nics", "nvme", "power"});
    node.count = r_.Integer(n, "nodes", "count", std::nullopt, 1, 1'000'000);

    YAML::Node g = Required(n, "gpu");
    if (r_.failed()) return;
    std::vector<std::string_view> gpu_keys = {"model", "count"};
    gpu_keys.insert(gpu_keys.end(), std::begin(kGpuOverrideKeys), std::end(kGpuOverrideKeys));
    r_.Keys(g, "nodes.gpu", gpu_keys);
    std::string gpu_model = r_.String(g, "nodes.gpu", "model");
    node.gpus_per_node = r_.Integer(g, "nodes.gpu", "count", std::nullopt, 1, 1024);
    if (r_.failed()) return;
    const GpuSpec* gpu = catalog_.FindGpu(gpu_model);
    if (gpu == nullptr) {
      Unknown(r_.Child(g, "model"), "nodes.gpu.model", "GPU model", gpu_model, catalog_.gpus());
      return;
    }
    node.gpu = *gpu;
    ReadGpuFields(r_, g, "nodes.gpu", /*required=*/false, &node.gpu);

    YAML::Node cpu = r_.Child(n, "cpu");
    if (cpu.IsDefined()) {
      r_.Keys(cpu, "nodes.cpu", {"model", "sockets", "cores", "tdp"});
      std::string model = r_.String(cpu, "nodes.cpu", "model");
      if (r_.failed()) return;
      if (const CpuSpec* spec = catalog_.FindCpu(model)) {
        node.cpu = *spec;
      } else if (!r_.Has(cpu, "tdp")) {
        Unknown(r_.Child(cpu, "model"), "nodes.cpu.model", "CPU model (or give its tdp)", model,
                catalog_.cpus());
        return;
      } else {
        node.cpu.name = model;
      }
      node.sockets = r_.Integer(cpu, "nodes.cpu", "sockets", 1, 1, 64);
      node.cpu.cores = r_.Integer(cpu, "nodes.cpu", "cores", node.cpu.cores, 1, 4096);
      node.cpu.tdp_w = r_.Quantity(cpu, "nodes.cpu", "tdp", Dimension::kPower, node.cpu.tdp_w);
    }
    node.memory_bytes = r_.Quantity(n, "nodes", "memory", Dimension::kBytes, 0);

    YAML::Node nics = r_.Child(n, "nics");
    if (nics.IsDefined() && !r_.failed()) {
      if (!nics.IsSequence()) {
        r_.Fail(nics, "nodes.nics", "expected a list of NIC groups");
        return;
      }
      for (size_t i = 0; i < nics.size() && !r_.failed(); ++i) {
        ReadNic(nics[i], fmt::format("nodes.nics[{}]", i));
      }
    }
    YAML::Node nvme = r_.Child(n, "nvme");
    if (nvme.IsDefined()) {
      r_.Keys(nvme, "nodes.nvme", {"count", "capacity", "write", "read"});
      node.nvme.count = r_.Integer(nvme, "nodes.nvme", "count", std::nullopt, 0, 1024);
      node.nvme.capacity_bytes = r_.Quantity(nvme, "nodes.nvme", "capacity", Dimension::kBytes);
      node.nvme.write_bytes_per_s = r_.Quantity(nvme, "nodes.nvme", "write", Dimension::kBandwidth);
      node.nvme.read_bytes_per_s = r_.Quantity(nvme, "nodes.nvme", "read", Dimension::kBandwidth);
    }
    YAML::Node power = r_.Child(n, "power");
    if (power.IsDefined()) {
      r_.Keys(power, "nodes.power", {"max", "idle"});
      node.max_power_w = r_.Quantity(power, "nodes.power", "max", Dimension::kPower, 0);
      node.idle_power_w = r_.Quantity(power, "nodes.power", "idle", Dimension::kPower, 0);
    }
  }

  void ReadNic(const YAML::Node& m, const std::string& path) {
    r_.Keys(m, path, {"role", "model", "count", "ports", "speed"});
    NicGroup nic;
    std::string role = r_.Enum(m, path, "role", {"compute", "storage"});
    nic.role = role == "compute" ? NicRole::kCompute : NicRole::kStorage;
    nic.model = r_.String(m, path, "model");
    if (r_.failed()) return;
    const NicSpec* spec = catalog_.FindNic(nic.model);
    if (spec == nullptr) {
      Unknown(r_.Child(m, "model"), path + ".model", "NIC model", nic.model, catalog_.nics());
      return;
    }
    nic.model = spec->name;
    nic.count = r_.Integer(m, path, "count", 1, 1, 256);
    nic.ports = r_.Integer(m, path, "ports", spec->ports, 1, 64);
    nic.port_speed_bytes_per_s =
        r_.Quantity(m, path, "speed", Dimension::kBandwidth, spec->speed_bytes_per_s);
    if (!r_.failed() && nic.ports > spec->ports) {
      r_.Fail(r_.Child(m, "ports"), path + ".ports",
              fmt::format("{} has {} ports, not {}", spec->name, spec->ports, nic.ports));
    }
    if (!r_.failed() && nic.port_speed_bytes_per_s > spec->speed_bytes_per_s * 1.0001) {
      r_.Fail(r_.Child(m, "speed"), path + ".speed",
              fmt::format("{} ports run at most {}; lower the speed or change the model",
                          spec->name, units::FormatBitRate(spec->speed_bytes_per_s)));
    }
    spec_.cluster.nodes.nics.push_back(nic);
  }

  void ReadFabric(const YAML::Node& m, const std::string& path, Fabric* f) {
    r_.Keys(m, path,
            {"type", "speed", "topology", "oversubscription", "rail_optimized", "switch",
             "switch_power"});
    f->present = true;
    std::string type = r_.Enum(m, path, "type", {"infiniband", "roce", "ethernet"});
    f->type = type == "infiniband" ? FabricType::kInfiniBand
              : type == "roce"     ? FabricType::kRoCE
                                   : FabricType::kEthernet;
    f->speed_bytes_per_s = r_.Quantity(m, path, "speed", Dimension::kBandwidth);
    f->topology = r_.Enum(m, path, "topology", {"fat-tree", "spine-leaf"}, "fat-tree");
    f->oversubscription = r_.Number(m, path, "oversubscription", 1.0);
    if (!r_.failed() && (f->oversubscription < 1 || f->oversubscription > 16)) {
      r_.Fail(r_.Child(m, "oversubscription"), path + ".oversubscription",
              "must be between 1 (non-blocking, 1:1) and 16 (16:1)");
    }
    f->rail_optimized = r_.Bool(m, path, "rail_optimized", false);
    std::string sw = r_.String(m, path, "switch");
    if (r_.failed()) return;
    const SwitchSpec* spec = catalog_.FindSwitch(sw);
    if (spec == nullptr) {
      Unknown(r_.Child(m, "switch"), path + ".switch", "switch model", sw, catalog_.switches());
      return;
    }
    f->switch_model = *spec;
    if (r_.Has(m, "switch_power")) {
      f->switch_model.power_w = r_.Quantity(m, path, "switch_power", Dimension::kPower);
      f->switch_model.verify = false;
    }
    bool ib_switch = spec->link_layer == "infiniband";
    if (!r_.failed() && ib_switch != (f->type == FabricType::kInfiniBand)) {
      r_.Fail(r_.Child(m, "switch"), path + ".switch",
              fmt::format("{} is an {} switch but the fabric type is {}", spec->name,
                          spec->link_layer, type));
    }
    if (!r_.failed() && f->speed_bytes_per_s > spec->port_speed_bytes_per_s * 1.0001) {
      r_.Fail(r_.Child(m, "speed"), path + ".speed",
              fmt::format("{} ports run at most {}", spec->name,
                          units::FormatBitRate(spec->port_speed_bytes_per_s)));
    }
  }

  void ReadFabrics(const YAML::Node& f) {
    if (r_.failed()) return;
    Cluster& c = spec_.cluster;
    // The GPU's own scale-up network, whether or not the spec has a fabrics: section (a
    // one-node spec without one planned an infinite step on a zero-bandwidth NVLink).
    c.scale_up.type = c.nodes.gpu.scale_up_type;
    c.scale_up.bandwidth_bytes_per_s = c.nodes.gpu.scale_up_bandwidth_bytes_per_s;
    c.scale_up.switched = c.scale_up.type != "pcie";
    if (!f.IsDefined()) return;
    r_.Keys(f, "fabrics", {"scale_up", "compute", "storage"});
    YAML::Node su = r_.Child(f, "scale_up");
    if (su.IsDefined()) {
      r_.Keys(su, "fabrics.scale_up", {"type", "bandwidth", "switched", "domain"});
      c.scale_up.type = r_.Enum(
          su, "fabrics.scale_up", "type",
          {"nvlink2", "nvlink3", "nvlink4", "nvlink5", "infinity-fabric", "pcie"}, c.scale_up.type);
      c.scale_up.bandwidth_bytes_per_s =
          r_.Quantity(su, "fabrics.scale_up", "bandwidth", Dimension::kBandwidth,
                      c.scale_up.bandwidth_bytes_per_s);
      c.scale_up.switched = r_.Bool(su, "fabrics.scale_up", "switched", c.scale_up.switched);
      c.scale_up.domain = r_.Integer(su, "fabrics.scale_up", "domain", 0, 0, 1'000'000);
      const int gpn = c.nodes.gpus_per_node;
      if (!r_.failed() && c.scale_up.domain > 0 &&
          (c.scale_up.domain % gpn != 0 || !c.scale_up.switched)) {
        r_.Fail(r_.Child(su, "domain"), "fabrics.scale_up.domain",
                c.scale_up.switched
                    ? fmt::format("{} GPUs is not a whole number of {}-GPU nodes (trays)",
                                  c.scale_up.domain, gpn)
                    : "an NVLink domain across nodes needs NVLink switches (switched: true)");
      }
    }
    if (r_.Has(f, "compute"))
      ReadFabric(r_.Child(f, "compute"), "fabrics.compute", &c.compute_fabric);
    if (r_.Has(f, "storage"))
      ReadFabric(r_.Child(f, "storage"), "fabrics.storage", &c.storage_fabric);
  }

  void ReadRacks(const YAML::Node& n) {
    if (r_.failed()) return;
    Cluster& c = spec_.cluster;
    Rack& k = c.rack;
    const int gpn = c.nodes.gpus_per_node;
    if (n.IsDefined()) {
      const char* p = "racks";
      r_.Keys(n, p,
              {"nodes", "switch_trays", "switches_per_tray", "switch_tray_power", "power",
               "cooling", "liquid_fraction"});
      k.nodes = r_.Integer(n, p, "nodes", std::nullopt, 1, 1024);
      k.switch_trays = r_.Integer(n, p, "switch_trays", 0, 0, 1024);
      k.switches_per_tray = r_.Integer(n, p, "switches_per_tray", 0, 0, 64);
      k.switch_tray_w = r_.Quantity(n, p, "switch_tray_power", Dimension::kPower, 0);
      k.power_w = r_.Quantity(n, p, "power", Dimension::kPower, 0);
      k.liquid = r_.Enum(n, p, "cooling", {"air", "liquid"}, "air") == "liquid";
      k.liquid_fraction = r_.Quantity(n, p, "liquid_fraction", Dimension::kFraction, 0);
      if (!r_.failed() && k.liquid_fraction > 1) {
        r_.Fail(r_.Child(n, "liquid_fraction"), "racks.liquid_fraction", "at most 100 %");
      }
      if (!r_.failed() && !k.liquid && k.liquid_fraction > 0) {
        r_.Fail(r_.Child(n, "liquid_fraction"), "racks.liquid_fraction",
                "an air-cooled rack has no liquid loop: set cooling: liquid");
      }
      // An NVLink domain of several nodes must not be split over racks its copper cannot reach.
      const int domain = c.ScaleUpDomain();
      if (!r_.failed() && domain > gpn && k.nodes * gpn < domain && (domain / gpn) % k.nodes != 0) {
        r_.Fail(r_.Child(n, "nodes"), "racks.nodes",
                fmt::format("{} nodes per rack does not divide the {}-GPU NVLink domain's {} "
                            "nodes",
                            k.nodes, domain, domain / gpn));
      }
    } else if (c.ScaleUpDomain() > gpn) {
      k.nodes = c.ScaleUpDomain() / gpn;  // one NVLink domain per rack
    }
  }

  void ReadStorage(const YAML::Node& s) {
    if (r_.failed() || !s.IsDefined()) return;
    if (!s.IsSequence()) {
      r_.Fail(s, "storage", "expected a list of storage tiers");
      return;
    }
    const Node& node = spec_.cluster.nodes;
    for (size_t i = 0; i < s.size() && !r_.failed(); ++i) {
      std::string path = fmt::format("storage[{}]", i);
      const YAML::Node& m = s[i];
      r_.Keys(m, path, {"name", "tier", "local", "capacity", "write", "read"});
      StorageTier t;
      t.name = r_.String(m, path, "name");
      std::string kind = r_.Enum(m, path, "tier", {"hot", "warm", "cold"});
      t.kind = kind == "hot" ? TierKind::kHot : kind == "warm" ? TierKind::kWarm : TierKind::kCold;
      t.local = r_.Bool(m, path, "local", false);
      if (t.local && !r_.failed() && node.nvme.count == 0) {
        r_.Fail(m, path + ".local", "a local tier needs nodes.nvme (count, capacity, write, read)");
        return;
      }
      // A local tier defaults to the node's NVMe drives, striped.
      double n = node.nvme.count;
      auto dflt = [&](double v) { return t.local ? std::optional<double>(v) : std::nullopt; };
      // Capacity 0 = not stated (an object store is treated as unbounded).
      t.capacity_bytes = r_.Quantity(m, path, "capacity", Dimension::kBytes,
                                     t.local ? n * node.nvme.capacity_bytes : 0.0);
      t.write_bytes_per_s = r_.Quantity(m, path, "write", Dimension::kBandwidth,
                                        dflt(n * node.nvme.write_bytes_per_s));
      t.read_bytes_per_s =
          r_.Quantity(m, path, "read", Dimension::kBandwidth, dflt(n * node.nvme.read_bytes_per_s));
      if (!r_.failed() && spec_.cluster.FindTier(t.name) != nullptr) {
        r_.Fail(r_.Child(m, "name"), path + ".name",
                fmt::format("tier '{}' is named twice; give each tier its own name", t.name));
      }
      spec_.cluster.storage.push_back(t);
    }
  }

  void ReadFacility(const YAML::Node& f) {
    if (r_.failed() || !f.IsDefined()) return;
    Facility& fa = spec_.cluster.facility;
    const char* p = "facility";
    r_.Keys(f, p,
            {"voltage", "current", "phases", "derating", "power_factor", "feeds", "pue",
             "inlet_temperature", "electricity_usd_per_kwh"});
    fa.voltage_v = r_.Quantity(f, p, "voltage", Dimension::kVoltage, fa.voltage_v);
    fa.current_a = r_.Quantity(f, p, "current", Dimension::kCurrent, fa.current_a);
    fa.phases = r_.Integer(f, p, "phases", fa.phases, 1, 3);
    if (!r_.failed() && fa.phases != 1 && fa.phases != 3) {
      r_.Fail(r_.Child(f, "phases"), "facility.phases", "must be 1 or 3");
    }
    fa.derating = r_.Quantity(f, p, "derating", Dimension::kFraction, fa.derating);
    fa.power_factor = r_.Quantity(f, p, "power_factor", Dimension::kFraction, fa.power_factor);
    fa.feeds = r_.Integer(f, p, "feeds", fa.feeds, 1, 64);
    fa.pue = r_.Number(f, p, "pue", fa.pue);
    if (!r_.failed() && (fa.pue < 1.0 || fa.pue > 3.0)) {
      r_.Fail(r_.Child(f, "pue"), "facility.pue",
              "PUE is facility power over IT power: between 1.0 and 3.0");
    }
    fa.inlet_temperature_c =
        r_.Quantity(f, p, "inlet_temperature", Dimension::kTemperature, fa.inlet_temperature_c);
    fa.electricity_usd_per_kwh =
        r_.Number(f, p, "electricity_usd_per_kwh", fa.electricity_usd_per_kwh);
    // A circuit of 0 V or 0 A holds no node: the power plan would divide by it (the fuzz smoke
    // found `voltage: 000 V`).
    if (!r_.failed() && fa.voltage_v <= 0) {
      r_.Fail(r_.Child(f, "voltage"), "facility.voltage", "must be above 0 V");
    }
    if (!r_.failed() && fa.current_a <= 0) {
      r_.Fail(r_.Child(f, "current"), "facility.current", "must be above 0 A");
    }
    if (!r_.failed() && fa.derating <= 0) {
      r_.Fail(r_.Child(f, "derating"), "facility.derating", "must be above 0 %");
    }
    if (!r_.failed() && fa.power_factor <= 0) {
      r_.Fail(r_.Child(f, "power_factor"), "facility.power_factor", "must be above 0");
    }
  }

  void ReadCosts(const YAML::Node& c) {
    if (r_.failed() || !c.IsDefined()) return;
    Costs& co = spec_.cluster.costs;
    const char* p = "costs";
    r_.Keys(c, p,
            {"capex_usd", "node_usd", "opex_usd_per_year", "cloud_usd_per_gpu_hour", "utilization",
             "depreciation", "switch_usd", "transceiver_usd", "cable_usd"});
    auto range = [&](const char* key) {
      auto [lo, hi] = r_.Range(c, p, key, Dimension::kCount, 0);
      return Range{lo, hi};
    };
    co.capex_usd = range("capex_usd");
    co.node_usd = range("node_usd");
    co.cloud_usd_per_gpu_hour = range("cloud_usd_per_gpu_hour");
    co.opex_usd_per_year = r_.Quantity(c, p, "opex_usd_per_year", Dimension::kCount, 0);
    co.utilization = r_.Quantity(c, p, "utilization", Dimension::kFraction, 1.0);
    co.depreciation_years =
        r_.Quantity(c, p, "depreciation", Dimension::kTime, 4 * 31536000.0) / 31536000.0;
    co.switch_usd = r_.Quantity(c, p, "switch_usd", Dimension::kCount, 0);
    co.transceiver_usd = r_.Quantity(c, p, "transceiver_usd", Dimension::kCount, 0);
    co.cable_usd = r_.Quantity(c, p, "cable_usd", Dimension::kCount, 0);
    if (!r_.failed() && co.depreciation_years <= 0) {
      r_.Fail(r_.Child(c, "depreciation"), "costs.depreciation", "must be above zero");
    }
  }

  void ReadReliability(const YAML::Node& n) {
    if (r_.failed() || !n.IsDefined()) return;
    Reliability& re = spec_.cluster.reliability;
    const char* p = "reliability";
    r_.Keys(n, p,
            {"failures_per_node_per_day", "spares", "detect", "reschedule",
             "reschedule_without_spare", "init", "warmup", "repair", "stragglers_per_node_per_day",
             "straggler_slowdown", "straggler_detection"});
    const YAML::Node rates = r_.Child(n, "failures_per_node_per_day");
    if (rates.IsDefined()) {
      if (!rates.IsMap()) {
        r_.Fail(rates, "reliability.failures_per_node_per_day",
                "want a map of failure class to rate, e.g. {gpu: 0.0018, hbm: 0.00065}");
        return;
      }
      const std::string rp = "reliability.failures_per_node_per_day";
      for (const auto& kv : rates) {
        const std::string name = kv.first.as<std::string>();
        const double rate = r_.Number(rates, rp, name);
        if (!r_.failed() && rate < 0) {
          r_.Fail(kv.second, rp + "." + name, "a rate cannot be negative");
        }
        re.failures_per_node_per_day.emplace_back(name, rate);
      }
    }
    const YAML::Node spares = r_.Child(n, "spares");
    if (!(spares.IsDefined() && spares.IsScalar() && spares.Scalar() == "auto")) {
      re.spares = r_.Integer(n, p, "spares", re.spares, 0, 1'000'000);
    }
    auto time = [&](const char* key, double* v) {
      *v = r_.Quantity(n, p, key, Dimension::kTime, *v);
    };
    time("detect", &re.detect_s);
    time("reschedule", &re.reschedule_s);
    time("reschedule_without_spare", &re.reschedule_no_spare_s);
    time("init", &re.init_s);
    time("warmup", &re.warmup_s);
    time("repair", &re.repair_s);
    time("straggler_detection", &re.straggler_detect_s);
    re.stragglers_per_node_per_day =
        r_.Number(n, p, "stragglers_per_node_per_day", re.stragglers_per_node_per_day);
    re.straggler_slowdown =
        r_.Quantity(n, p, "straggler_slowdown", Dimension::kFraction, re.straggler_slowdown);
    if (!r_.failed() && (re.straggler_slowdown < 0 || re.straggler_slowdown >= 1)) {
      r_.Fail(r_.Child(n, "straggler_slowdown"), "reliability.straggler_slowdown",
              "must be 0 % to under 100 %");
    }
  }

  // workload.software: a preset per framework generation (docs/sim.md has each one's source),
  // and the words it sets, each of which may be given on its own.
  void ReadSoftware(const YAML::Node& n) {
    if (r_.failed() || !n.IsDefined()) return;
    Workload& wl = spec_.workload;
    const char* p = "workload.software";
    r_.Keys(n, p,
            {"stack", "tp_comm_overlap", "dp_comm_overlap", "grad_reduce", "attention_kernel",
             "cross_entropy", "train_metrics", "sp_saved_input", "fp8_recipe", "moe_dispatcher",
             "moe_comm_overlap", "moe_expert_gemm", "elementwise", "fp8_param_gather",
             "fp8_attention", "overlap_param_gather_with_optimizer_step", "pp_comm_overlap"});
    wl.stack = r_.Enum(n, p, "stack",
                       {"megatron-2021", "megatron-core-2024", "nemo-2025", "deepspeed-zero3",
                        "pytorch-fsdp1", "pytorch-fsdp2", "composer-2023"},
                       "megatron-core-2024");
    // megatron-2021 (Narayanan et al. SC21): no TP overlap (it came with Transformer Engine's
    // userbuffers in 2023); deepspeed-zero3 and pytorch-fsdp2: no TP overlap (Megatron-DeepSpeed
    // has none; torchtitan's AsyncTP is opt-in, enable_async_tensor_parallel, off by default),
    // FSDP2 as torchtitan runs it reduces gradients in fp32; composer-2023 (MosaicML Composer
    // 0.16 with LLM Foundry v0.3: PyTorch FSDP, fp32 gradient reduction, the Triton flash
    // attention written for Ampere); pytorch-fsdp1 (PyTorch's FullyShardedDataParallel with the
    // bf16 MixedPrecision policy, parameters and gradient reduction in bf16, attention through
    // scaled_dot_product_attention, PyTorch's cross_entropy: IBM's fms-fsdp of 2024, which
    // took the policy from Meta's llama-recipes).
    const bool old_megatron = wl.stack == "megatron-2021";
    const bool composer = wl.stack == "composer-2023";
    const bool megatron_core = wl.RunsMegatronCore();
    // Each word defaults from the stack; one set against it is a departure the regime names.
    auto departs = [&](std::string_view word, std::string_view value, std::string_view preset) {
      if (value != preset) wl.software_departures.push_back(fmt::format("{} {}", word, value));
    };
    auto span_word = [&](std::string_view word, std::span<const std::string_view> choices,
                         const std::string& preset) {
      std::string value = r_.Enum(n, p, word, choices, preset);
      departs(word, value, preset);
      return value;
    };
    auto enum_word = [&](std::string_view word, std::initializer_list<std::string_view> choices,
                         const std::string& preset) {
      return span_word(word, std::span(choices.begin(), choices.size()), preset);
    };
    auto bool_word = [&](std::string_view word, bool preset) {
      const bool value = r_.Bool(n, p, word, preset);
      departs(word, value ? "true" : "false", preset ? "true" : "false");
      return value;
    };
    // The stacks on PyTorch's own layers (not Megatron's): no TP overlap, SDPA or
    // FlashAttention-2 for attention, PyTorch's cross_entropy for the loss.
    const bool pytorch_fsdp = wl.stack == "pytorch-fsdp1" || wl.stack == "pytorch-fsdp2";
    const bool pytorch = pytorch_fsdp || wl.stack == "deepspeed-zero3";
    wl.tp_comm_overlap = bool_word("tp_comm_overlap", !old_megatron && !pytorch);
    wl.dp_comm_overlap = bool_word("dp_comm_overlap", true);
    // Megatron-Core's interleaved schedule overlaps its sends with the next chunk
    // (overlap_p2p_comm, 2023); the 2021-22 schedule waited for them, and synchronized the device
    // after each batch of them.
    wl.pp_comm_overlap = bool_word("pp_comm_overlap", !old_megatron);
    const std::string reduce =
        enum_word("grad_reduce", {"bf16", "fp16", "fp32"},
                  wl.stack == "pytorch-fsdp2" || old_megatron || composer ? "fp32" : "bf16");
    wl.grad_reduce_bytes = reduce == "fp32" ? 4 : 2;
    // PyTorch's scaled_dot_product_attention runs FlashAttention-2, written for mma.sync, on
    // Hopper: its cuDNN backend was made opt-in after the 2.5 release's bugs (pytorch/pytorch
    // #138522) and is preferred again only with cuDNN 9.15 and later (torch 2.10's
    // check_prefer_cudnn_attention); torchtitan turned cuDNN on for B200 alone (torchtitan #1209,
    // 2025). DeepSpeed's models call the same FlashAttention-2 (flash_attn or SDPA). Unfused
    // attention runs as cuBLAS GEMMs, which use Hopper's own instructions.
    const bool hopper = spec_.cluster.nodes.gpu.architecture == "Hopper";
    const std::string kernel = enum_word("attention_kernel", {"native", "mma-sync", "triton-2022"},
                                         composer                                  ? "triton-2022"
                                         : pytorch && hopper && wl.flash_attention ? "mma-sync"
                                                                                   : "native");
    wl.attention_kernel = kernel == "mma-sync"      ? AttentionKernel::kMmaSync
                          : kernel == "triton-2022" ? AttentionKernel::kTriton2022
                                                    : AttentionKernel::kNative;
    // The layers' element-wise kernels: fused on the Megatron stacks, Composer's MPT (one
    // LayerNorm kernel, GELU) and torchtitan (torch.compile); eager, with fp32 RMSNorm and rotary
    // embeddings, in fms-fsdp's ibm-fms LLaMA, which pytorch-fsdp1 describes.
    wl.elementwise = enum_word("elementwise", {"fused", "eager"},
                               wl.stack == "pytorch-fsdp1" ? "eager" : "fused") == "eager"
                         ? Elementwise::kEager
                         : Elementwise::kFused;
    // The sharding implementation follows the stack alone: MosaicML Composer 0.16 wraps PyTorch
    // 2.1's FSDP (FSDP1), as fms-fsdp does, torchtitan runs FSDP2's fully_shard, DeepSpeed its
    // own ZeRO, and the Megatron stacks their distributed optimizer.
    wl.sharding_impl = composer || wl.stack == "pytorch-fsdp1" ? ShardingImpl::kFsdp1
                       : wl.stack == "pytorch-fsdp2"           ? ShardingImpl::kFsdp2
                       : wl.stack == "deepspeed-zero3"         ? ShardingImpl::kDeepSpeed
                                                               : ShardingImpl::kMegatron;
    // FP8 scaling: Megatron-Core's 2024 default is delayed scaling, and so was Composer's
    // `amp_fp8` (Transformer Engine v0.10, whose only recipe it was); NeMo's 2025 performance
    // recipes and PyTorch's tensorwise Float8 scale by the current amax. MXFP8 is stated.
    const std::string recipe = enum_word(
        "fp8_recipe", {"delayed", "current", "mxfp8"},
        wl.stack == "megatron-core-2024" || old_megatron || composer ? "delayed" : "current");
    const std::string& arch = spec_.cluster.nodes.gpu.architecture;
    if (wl.precision == Precision::kFp4 && r_.Has(n, "fp8_recipe")) {
      r_.Fail(r_.Child(n, "fp8_recipe"), "workload.software.fp8_recipe",
              "fp4 is NVFP4's own recipe; drop fp8_recipe, or use precision fp8 with it");
      return;
    }
    if (recipe == "mxfp8" && arch.rfind("Blackwell", 0) != 0) {
      r_.Fail(r_.Child(n, "fp8_recipe"), "workload.software.fp8_recipe",
              fmt::format("MXFP8 needs Blackwell's block-scaled tensor cores; {} is {}",
                          spec_.cluster.nodes.gpu.name, arch));
      return;
    }
    wl.fp8_recipe = recipe == "mxfp8"     ? Fp8Recipe::kMxfp8
                    : recipe == "current" ? Fp8Recipe::kCurrent
                                          : Fp8Recipe::kDelayed;
    // FP8 parameters: on in nemo-2025 under an FP8 or FP4 recipe. Megatron Bridge's mixed-precision
    // configs (training/mixed_precision.py from v0.2.0, NeMo 25.11, on:
    // bf16_with_fp8_current_scaling_mixed, bf16_with_fp8_delayed_scaling_mixed and
    // bf16_with_mxfp8_mixed set fp8_param_gather, bf16_with_nvfp4_mixed fp4_param_gather) and its
    // performance scripts pass them through to every published Llama, Qwen3 and GPT-OSS 120B run
    // (utils/precision.py's get_precision_config; the one override, GPT-OSS 20B's, is not a
    // published row). Megatron-LM's --fp8-param-gather is off by default (megatron-core-2024);
    // MLPerf's configs state it (FP8_PARAMS, FP8_PARAM_GATHER). MXFP8's and NVFP4's parameters
    // are modelled with the distributed optimizer alone (MXFP8's gathered in bf16 through its
    // gradient buffer, reuse_grad_buf_for_mxfp8_param_ag; NVFP4's row-wise copy, its column-wise
    // one transposed from it after the gather).
    // On pytorch-fsdp2 they are torchao's float8 all-gather (Float8LinearConfig's
    // enable_fsdp_float8_all_gather, off in torchtitan's config, on in AI2's OLMo-core's
    // Float8Config): each unit's fp32 shards cast to per-tensor FP8 before FSDP2 gathers them, the
    // gathered weights used as they arrive; off in the preset.
    // The preset asks for them whatever the strategy; a layout without a sharded optimizer, or
    // MXFP8's and NVFP4's on FSDP or ZeRO-3, goes without them (Workload::Fp8ParamsFor). Stated,
    // they must mean something for the spec's own strategy.
    const bool narrow = wl.NarrowPrecision();
    wl.fp8_param_gather = bool_word("fp8_param_gather", wl.stack == "nemo-2025" && narrow);
    if (wl.fp8_param_gather && r_.Has(n, "fp8_param_gather")) {
      auto fail = [&](std::string why) {
        r_.Fail(r_.Child(n, "fp8_param_gather"), "workload.software.fp8_param_gather", why);
      };
      const bool fsdp2 = wl.sharding_impl == ShardingImpl::kFsdp2;
      if (!megatron_core && !fsdp2) {
        fail(
            fmt::format("FP8 parameters are Megatron-Core's and NeMo's (megatron-core-2024, "
                        "nemo-2025) and torchao's float8 all-gather under FSDP2 "
                        "(pytorch-fsdp2); the {} stack's are not modelled",
                        wl.stack));
      } else if (!narrow) {
        fail(fmt::format("FP8 parameters need precision fp8 or fp4 (the spec says {})",
                         PrecisionName(wl.precision)));
      } else if (wl.strategy == Strategy::kDdp) {
        fail(
            "FP8 parameters are gathered by a sharded optimizer (zero1, zero2, zero3, fsdp); "
            "ddp has no parameter gather");
      } else if (fsdp2 && !wl.Fp8ParamsFor(wl.strategy)) {
        fail(fmt::format(
            "FP8 parameters on pytorch-fsdp2 (torchao's float8 all-gather) are modelled for fsdp "
            "and zero3 with per-tensor scaling, fp8_recipe current or delayed (the spec says "
            "{}{})",
            StrategyName(wl.strategy), wl.BlockScaled() ? ", block-scaled" : ""));
      } else if (fsdp2 && wl.model.IsMoe()) {
        fail(
            "FP8 parameters on pytorch-fsdp2 are torchao's Float8Linear weights; a mixture of "
            "experts' grouped experts are not nn.Linear layers, and are not modelled");
      } else if (!wl.Fp8ParamsFor(wl.strategy)) {
        fail(
            fmt::format("{} parameters are modelled with the distributed optimizer (zero1, zero2); "
                        "Megatron-FSDP's are not",
                        wl.precision == Precision::kFp4 ? "NVFP4" : "MXFP8"));
      }
      if (r_.failed()) return;
    }
    // FP8 attention: off in every preset (Transformer Engine's fp8_dot_product_attention
    // defaults to False; Megatron Bridge's and MLPerf's configs state it). Transformer Engine's
    // fused attention only: the stacks that run it, FP8 precision, the native kernel.
    wl.fp8_attention = bool_word("fp8_attention", false);
    if (wl.fp8_attention) {
      auto fail = [&](std::string why) {
        r_.Fail(r_.Child(n, "fp8_attention"), "workload.software.fp8_attention", why);
      };
      if (!megatron_core) {
        fail(fmt::format(
            "FP8 attention is Transformer Engine's fused attention as Megatron-Core and NeMo run "
            "it (megatron-core-2024, nemo-2025); the {} stack's attention is not",
            wl.stack));
      } else if (wl.precision != Precision::kFp8 && wl.precision != Precision::kFp4) {
        fail(fmt::format("FP8 attention needs precision fp8 or fp4 (the spec says {})",
                         PrecisionName(wl.precision)));
      } else if (!wl.flash_attention || wl.attention_kernel != AttentionKernel::kNative) {
        fail(
            "FP8 attention is a fused attention kernel: it needs flash_attention: true and "
            "attention_kernel: native");
      } else if (wl.model.WindowedLayers() > 0 &&
                 spec_.cluster.nodes.gpu.architecture.rfind("Blackwell", 0) != 0) {
        // Transformer Engine's fused attention takes a sliding window in FP8 from compute
        // capability 10 and cuDNN 9.21 on (dot_product_attention/utils.py).
        fail(
            fmt::format("FP8 attention with a sliding window needs Blackwell (cuDNN's FP8 "
                        "kernels take windows from compute capability 10); {} is {}",
                        spec_.cluster.nodes.gpu.name, spec_.cluster.nodes.gpu.architecture));
      }
      if (r_.failed()) return;
    }
    // The first chunk's parameter all-gather dispatched after its optimizer step. Megatron-LM
    // leaves it off and refuses it without virtual stages; Megatron-Core and NeMo run it there,
    // and the whole gather is exposed (the step model). Megatron Bridge's performance scripts
    // turn it on wherever data, pipeline and virtual-pipeline parallelism are all above 1
    // (set_post_overrides, from October 2025), and since January 2026 not with MXFP8 ("causes
    // NaN grad norm for fp8_mx"), nor with NVFP4 (overrides.py, Megatron Bridge v0.5.0):
    // nemo-2025's preset, per layout, for the distributed optimizer
    // with its gathers overlapped; every other preset leaves it off. Stated, it holds for every
    // layout, a departure where the preset says otherwise for the spec's own.
    constexpr std::string_view kGatherWord = "overlap_param_gather_with_optimizer_step";
    const bool nemo_preset = wl.stack == "nemo-2025" && recipe != "mxfp8" &&
                             wl.precision != Precision::kFp4 && wl.strategy == Strategy::kZero1 &&
                             wl.dp_comm_overlap;
    const bool stated = r_.Has(n, kGatherWord) && !r_.Child(n, kGatherWord).IsNull();
    const bool gather_after_step = bool_word(kGatherWord, nemo_preset && wl.virtual_stages > 1);
    wl.optimizer_step_gather =
        stated ? (gather_after_step ? OptimizerStepGather::kAlways : OptimizerStepGather::kNever)
        : nemo_preset ? OptimizerStepGather::kWithVirtualStages
                      : OptimizerStepGather::kNever;
    if (stated && gather_after_step) {
      auto fail = [&](std::string why) {
        r_.Fail(r_.Child(n, kGatherWord), fmt::format("workload.software.{}", kGatherWord), why);
      };
      if (!megatron_core) {
        fail(fmt::format(
            "overlapping the parameter gather with the optimizer step is Megatron-Core's "
            "(megatron-core-2024, nemo-2025), not the {} stack's",
            wl.stack));
      } else if (wl.strategy != Strategy::kZero1) {
        fail(
            "overlapping the parameter gather with the optimizer step is the distributed "
            "optimizer's (strategy zero1)");
      } else if (!wl.dp_comm_overlap) {
        fail(
            "overlapping the parameter gather with the optimizer step needs dp_comm_overlap "
            "(Megatron-Core's overlap_param_gather)");
      }
      if (r_.failed()) return;
    }
    // The MoE dispatcher: Megatron-Core's default all-to-all, or its flex dispatcher's HybridEP
    // and DeepEP backends, which deduplicate a token's copies per destination rank and node.
    wl.moe_dedup =
        enum_word("moe_dispatcher", {"alltoall", "hybridep", "deepep"}, "alltoall") != "alltoall";
    // EP overlap is opt-in in Megatron-Core (overlap_moe_expert_parallel_comm, off by default;
    // Megatron Bridge's performance recipes turn it on per model).
    wl.moe_comm_overlap = bool_word("moe_comm_overlap", false);
    // The experts' GEMMs: Transformer Engine's GroupedLinear (one GEMM per local expert) in every
    // preset; its fused grouped MLP is opt-in (Megatron Bridge's cutedsl_fused_grouped_mlp, which
    // its 26.06 Blackwell MXFP8 recipes turn on).
    wl.moe_fused_grouped_mlp =
        enum_word("moe_expert_gemm", {"per-expert", "fused"}, "per-expert") == "fused";
    // The loss: Megatron's vocab-parallel cross-entropy (fp32 softmax kept, gradient written in
    // place); a fused kernel (LLM Foundry's fused_crossentropy, Megatron Bridge's recipes'
    // cross_entropy_loss_fusion with the TE implementation); PyTorch's cross_entropy on an fp32
    // copy of the logits (torchtitan, DeepSpeed's Hugging Face models); a fused kernel on an fp32
    // copy (fused-fp32: AI2's OLMo-core, whose model returns its logits in fp32 and whose trainer
    // hands a shifted copy of them to its Triton cross-entropy, adapted from flash-attn's, which
    // keeps it and writes an fp32 gradient beside it: 4 + 4 at its backward).
    // Each word's bytes per logit: held for the backward, and moved through HBM forward and
    // backward (bf16 logits, fp32 math):
    // - vocab-parallel (Megatron-Core r0.8's VocabParallelCrossEntropy): the fp32 copy (read 2,
    //   write 4), max (4), subtract, exp and divide in place (8 each), sum (4); backward the
    //   in-place multiply (8) and the cast back to bf16 (4 + 2): 52;
    // - fused: flash-attn 1.0's xentropy (LLM Foundry's October 2023 campaign) reads the bf16
    //   logits twice forward and reads and writes them once backward: 8 (flash-attn 2.3's
    //   Triton kernel and Transformer Engine's move 6 to 10);
    // - unfused (PyTorch's cross_entropy on an fp32 copy): the copy (6), log_softmax (three
    //   reads and a write of fp32: 16); backward the zeroed NLL gradient (4), log_softmax's
    //   backward (three reads and a write: 16), the cast back (6): 48;
    // - fused-fp32 (OLMo-core: the model's `self.w_out(h).float()`, the trainer's
    //   `logits[..., :-1, :].contiguous()`, then the Triton kernel, not in place): the copy (6),
    //   the shifted copy (8), the kernel's read (4); backward the kernel's read and its fp32
    //   gradient's write (8), the slice's backward into a zeroed full-size fp32 gradient (4 + 8),
    //   the cast back (6): 44.
    struct LossKernel {
      std::string_view word;
      double held, moved;
    };
    static constexpr LossKernel kLosses[] = {
        {"vocab-parallel", 4, 52}, {"fused", 2, 8}, {"fused-fp32", 8, 44}, {"unfused", 12, 48}};
    static constexpr auto kLossWords = [] {
      std::array<std::string_view, std::size(kLosses)> words{};
      for (size_t i = 0; i < words.size(); ++i) words[i] = kLosses[i].word;
      return words;
    }();
    const bool fused = composer || wl.stack == "nemo-2025";
    const std::string ce = span_word("cross_entropy", kLossWords,
                                     fused     ? "fused"
                                     : pytorch ? "unfused"
                                               : "vocab-parallel");
    const LossKernel& loss = *std::find_if(std::begin(kLosses), std::end(kLosses),
                                           [&](const LossKernel& k) { return k.word == ce; });
    wl.bytes_per_logit = loss.held;
    // Composer computes the model's training metrics after every micro-batch's backward
    // (Trainer._eval_train_metrics, 0.13 to 0.17 at least): LLM Foundry's are
    // LanguageCrossEntropy and LanguagePerplexity, each PyTorch's cross_entropy on the bf16
    // logits. cross_entropy is not on CUDA autocast's fp32 list, its parts are: log_softmax keeps
    // the bf16 dtype cross_entropy passes it (fp32_set_opt_dtype; three reads and a write of
    // bf16: 8) and nll_loss copies that output to fp32 (read 2, write 4: 6), 14 bytes, twice,
    // under amp_bf16 and amp_fp16 alike. Composer's amp_fp8 is Transformer Engine's fp8_autocast
    // alone, so there nll_loss reads the bf16 output itself: 8, twice. LLM Foundry turns the
    // metrics off with `use_train_metrics: false` (llm-foundry #642, October 2023; in
    // modeling_mpt.py from b2a43a1 on, default true), which its benchmark yamls never set. Every
    // count is HBM traffic: the row-wise kernels' second and third passes over a 100-200 KB row
    // may partly hit L2 instead, so they are upper bounds (not profiled).
    const bool metrics = bool_word("train_metrics", composer);
    const double metric_bytes = wl.precision == Precision::kFp8 ? 8 : 14;
    wl.loss_traffic_per_logit = loss.moved + (metrics ? 2 * metric_bytes : 0);
    // What a metric holds while it runs (one at a time): log_softmax's bf16 output and, under
    // autocast, nll_loss's fp32 copy of it.
    wl.metrics_bytes_per_logit = !metrics ? 0 : wl.precision == Precision::kFp8 ? 2 : 6;
    // Sequence parallelism's saved inputs: Megatron (and the stacks built on it) keep the shard
    // and gather it again in backward; PyTorch's DTensor TP (torchtitan) keeps the gathered one.
    // Memory only, so not a departure that makes the step extrapolated.
    wl.sp_saves_gathered_input = r_.Enum(n, p, "sp_saved_input", {"sharded", "gathered"},
                                         pytorch_fsdp ? "gathered" : "sharded") == "gathered";
  }

  void ReadWorkload(const YAML::Node& w) {
    if (r_.failed()) return;
    Workload& wl = spec_.workload;
    const char* p = "workload";
    r_.Keys(w, p,
            {"model", "precision", "parallel", "batch", "activation_checkpointing",
             "activation_checkpointing_layers", "activation_checkpointing_modules",
             "activation_offload", "flash_attention", "attention_flops", "data", "checkpoint",
             "mfu", "memory", "train_tokens", "software"});
    ReadModel(Required(w, "model"));
    std::string prec =
        r_.Enum(w, p, "precision", {"bf16", "fp16", "fp8", "fp4", "tf32", "fp32"}, "bf16");
    wl.precision = prec == "bf16"   ? Precision::kBf16
                   : prec == "fp16" ? Precision::kFp16
                   : prec == "fp8"  ? Precision::kFp8
                   : prec == "fp4"  ? Precision::kFp4
                   : prec == "tf32" ? Precision::kTf32
                                    : Precision::kFp32;

    YAML::Node par = Required(w, "parallel");
    const char* pp = "workload.parallel";
    r_.Keys(par, pp,
            {"strategy", "tensor", "pipeline", "context", "virtual_stages", "sequence_parallel",
             "expert", "shard", "embedding_in_pipeline_split", "loss_in_pipeline_split"});
    std::string strat = r_.Enum(par, pp, "strategy", {"ddp", "zero1", "zero2", "zero3", "fsdp"});
    wl.strategy = strat == "ddp"     ? Strategy::kDdp
                  : strat == "zero1" ? Strategy::kZero1
                  : strat == "zero2" ? Strategy::kZero2
                  : strat == "zero3" ? Strategy::kZero3
                                     : Strategy::kFsdp;
    wl.tensor = r_.Integer(par, pp, "tensor", 1, 1, 1'000'000);
    wl.pipeline = r_.Integer(par, pp, "pipeline", 1, 1, 1'000'000);
    wl.context = r_.Integer(par, pp, "context", 1, 1, 1'000'000);
    wl.virtual_stages = r_.Integer(par, pp, "virtual_stages", 1, 1, 10'000);
    wl.sequence_parallel = r_.Bool(par, pp, "sequence_parallel", false);
    wl.expert = r_.Integer(par, pp, "expert", 1, 1, 1'000'000);
    wl.shard = r_.Integer(par, pp, "shard", 0, 2, 1'000'000);
    wl.pipeline_split.embedding = r_.Bool(par, pp, "embedding_in_pipeline_split", false);
    wl.pipeline_split.loss = r_.Bool(par, pp, "loss_in_pipeline_split", false);

    YAML::Node b = Required(w, "batch");
    const char* bp = "workload.batch";
    r_.Keys(b, bp, {"micro", "accumulation", "global"});
    wl.micro_batch = r_.Integer(b, bp, "micro", std::nullopt, 1, 1'000'000);
    wl.accumulation = r_.Integer(b, bp, "accumulation", 1, 1, 1'000'000);
    accumulation_stated_ = r_.Child(b, "accumulation").IsDefined();
    wl.global_batch = r_.Integer(b, bp, "global", 0, 1);

    std::string ac = r_.Enum(w, p, "activation_checkpointing",
                             {"none", "selective", "full", "true", "false"}, "none");
    wl.recompute = (ac == "full" || ac == "true") ? Recompute::kFull
                   : ac == "selective"            ? Recompute::kSelective
                                                  : Recompute::kNone;
    wl.recompute_layers = r_.Integer(w, p, "activation_checkpointing_layers", 0, 1, 1'000'000);
    ReadRecomputeModules(w);
    wl.activation_offload = r_.Integer(w, p, "activation_offload", 0, 0, 1'000'000);
    wl.flash_attention = r_.Bool(w, p, "flash_attention", true);
    ReadSoftware(r_.Child(w, "software"));
    wl.causal_attention_flops =
        r_.Enum(w, p, "attention_flops", {"full", "causal"}, "full") == "causal";

    YAML::Node d = r_.Child(w, "data");
    if (d.IsDefined()) {
      r_.Keys(d, "workload.data", {"bytes_per_token", "bytes_per_sample"});
      wl.bytes_per_token = r_.Quantity(d, "workload.data", "bytes_per_token", Dimension::kBytes, 2);
      wl.bytes_per_sample =
          r_.Quantity(d, "workload.data", "bytes_per_sample", Dimension::kBytes, 0);
    }
    YAML::Node ck = r_.Child(w, "checkpoint");
    if (ck.IsDefined()) {
      const char* cp = "workload.checkpoint";
      r_.Keys(ck, cp, {"interval", "mode", "tier", "keep"});
      wl.checkpoint_interval_s = r_.Quantity(ck, cp, "interval", Dimension::kTime, 3600);
      wl.checkpoint_async = r_.Enum(ck, cp, "mode", {"sync", "async"}, "async") == "async";
      wl.checkpoint_tier = r_.String(ck, cp, "tier", "");
      wl.keep_checkpoints = r_.Integer(ck, cp, "keep", 2, 1, 10'000);
      if (!r_.failed() && wl.checkpoint_interval_s <= 0) {
        r_.Fail(r_.Child(ck, "interval"), "workload.checkpoint.interval", "must be above zero");
      }
    }
    wl.mfu = r_.Quantity(w, p, "mfu", Dimension::kFraction, 0.45);
    wl.mfu_stated = r_.Child(w, "mfu").IsDefined();
    if (!r_.failed() && wl.mfu <= 0) {
      r_.Fail(r_.Child(w, "mfu"), "workload.mfu", "must be above 0 %, e.g. '45 %'");
    }
    YAML::Node mem = r_.Child(w, "memory");
    wl.memory_reserved_bytes = 3 * kGiB;
    if (mem.IsDefined()) {
      r_.Keys(mem, "workload.memory", {"reserved", "fragmentation"});
      wl.memory_reserved_bytes =
          r_.Quantity(mem, "workload.memory", "reserved", Dimension::kBytes, 3 * kGiB);
      wl.fragmentation =
          r_.Quantity(mem, "workload.memory", "fragmentation", Dimension::kFraction, 0.10);
    }
    wl.train_tokens = r_.Quantity(w, p, "train_tokens", Dimension::kCount, 0);
  }

  // activation_checkpointing_modules: Megatron-Core's recompute_modules, the parts selective
  // recompute re-runs. Its other modules belong to parts the step model does not have (multi-
  // latent attention, gated delta nets, hyper-connections) or re-run what it does not (a MoE
  // layer's dispatch, router and experts whole; shared experts): refused by name.
  void ReadRecomputeModules(const YAML::Node& w) {
    const char* path = "workload.activation_checkpointing_modules";
    const YAML::Node node = r_.Child(w, "activation_checkpointing_modules");
    if (r_.failed() || !node.IsDefined()) return;
    modules_stated_ = true;
    Workload::RecomputeModules& mods = spec_.workload.recompute_modules;
    mods = {.core_attn = false};
    for (const std::string& name :
         r_.StringList(w, "workload", "activation_checkpointing_modules")) {
      if (name == "core_attn") {
        mods.core_attn = true;
      } else if (name == "layernorm") {
        mods.layernorm = true;
      } else if (name == "mlp") {
        mods.mlp = true;
      } else if (name == "moe_act") {
        mods.moe_act = true;
      } else if (name == "moe" || name == "shared_experts" || name == "mla_up_proj" ||
                 name == "gdn_norm_out" || name == "gdp_in_proj" || name == "gdp_qkv" ||
                 name == "mhc") {
        r_.Fail(node, path,
                fmt::format("'{}' is a Megatron-Core module the step model does not recompute "
                            "(it models core_attn, layernorm, mlp and moe_act)",
                            name));
        return;
      } else {
        r_.Fail(node, path,
                fmt::format("unknown module '{}': core_attn, layernorm, mlp or moe_act "
                            "(Megatron-Core's recompute_modules)",
                            name));
        return;
      }
    }
  }

  void ReadModel(const YAML::Node& m) {
    if (r_.failed()) return;
    ModelShape& s = spec_.workload.model;
    const char* p = "workload.model";
    r_.Keys(m, p,
            {"name",
             "parameters",
             "layers",
             "hidden",
             "heads",
             "kv_heads",
             "head_dim",
             "ffn_hidden",
             "mlp",
             "activation_clamp",
             "linear_bias",
             "rope_scaling",
             "vocab",
             "sequence",
             "tied_embeddings",
             "dropout",
             "moe",
             "sliding_window",
             "sliding_window_layers",
             "document_length",
             "qk_norm",
             "lora"});
    s.name = r_.String(m, p, "name", "");
    s.stated_params = r_.Quantity(m, p, "parameters", Dimension::kCount, 0);
    s.layers = r_.Integer(m, p, "layers", std::nullopt, 1, 100'000);
    s.hidden = r_.Integer(m, p, "hidden", std::nullopt, 1, 10'000'000);
    s.heads = r_.Integer(m, p, "heads", std::nullopt, 1, 1'000'000);
    s.kv_heads = r_.Integer(m, p, "kv_heads", s.heads, 1, 1'000'000);
    const std::string mlp = r_.Enum(m, p, "mlp", {"gelu", "swiglu", "quick-geglu"}, "gelu");
    s.mlp = mlp == "swiglu" ? Mlp::kSwiglu : mlp == "quick-geglu" ? Mlp::kQuickGeglu : Mlp::kGelu;
    s.activation_clamp = r_.Number(m, p, "activation_clamp", 0);
    s.linear_bias = r_.Bool(m, p, "linear_bias", false);
    s.rope_scaling = r_.Enum(m, p, "rope_scaling", {"none", "yarn"}, "none") == "yarn"
                         ? RopeScaling::kYarn
                         : RopeScaling::kNone;
    s.ffn_hidden = r_.Integer(m, p, "ffn_hidden", 4 * s.hidden, 1, 100'000'000);
    s.vocab = r_.Integer(m, p, "vocab", std::nullopt, 1, 100'000'000);
    s.sequence = r_.Integer(m, p, "sequence", std::nullopt, 1);
    s.tied_embeddings = r_.Bool(m, p, "tied_embeddings", false);
    s.head_dim = r_.Integer(m, p, "head_dim", 0, 0, 1'000'000);
    s.sliding_window = r_.Integer(m, p, "sliding_window", 0, 0, 100'000'000);
    s.sliding_window_layers = r_.Integer(m, p, "sliding_window_layers", s.layers, 1, 100'000);
    s.document_length = r_.Integer(m, p, "document_length", 0, 0, 100'000'000);
    s.qk_norm = r_.Bool(m, p, "qk_norm", false);
    if (r_.failed()) return;
    if (s.document_length > s.sequence) {
      r_.Fail(r_.Child(m, "document_length"), "workload.model.document_length",
              fmt::format("documents of {} tokens do not pack into sequences of {}: give the "
                          "packed documents' length, at most the sequence, or drop "
                          "document_length where each sequence is one document",
                          s.document_length, s.sequence));
      return;
    }
    if (s.activation_clamp < 0) {
      r_.Fail(r_.Child(m, "activation_clamp"), "workload.model.activation_clamp",
              fmt::format("{} is negative: give the clamp's bound (GPT-OSS's swiglu_limit, 7), "
                          "or 0 for none",
                          s.activation_clamp));
      return;
    }
    if (s.activation_clamp > 0 && !s.GatedMlp()) {
      r_.Fail(r_.Child(m, "activation_clamp"), "workload.model.activation_clamp",
              "clamps a gated MLP's gate and up projections: set mlp to swiglu or quick-geglu, "
              "or drop activation_clamp");
      return;
    }
    if (r_.Has(m, "sliding_window_layers") && s.sliding_window == 0) {
      r_.Fail(r_.Child(m, "sliding_window_layers"), "workload.model.sliding_window_layers",
              "needs model.sliding_window, the keys a windowed layer's query attends to: give it "
              "or drop sliding_window_layers");
      return;
    }
    if (s.sliding_window_layers > s.layers) {
      r_.Fail(r_.Child(m, "sliding_window_layers"), "workload.model.sliding_window_layers",
              fmt::format("{} windowed layers is more than the model's {}; use at most {}",
                          s.sliding_window_layers, s.layers, s.layers));
      return;
    }
    s.dropout = r_.Number(m, p, "dropout", 0.1);
    if (YAML::Node e = r_.Child(m, "moe"); e.IsDefined()) {
      const char* ep = "workload.model.moe";
      r_.Keys(e, ep,
              {"experts", "top_k", "ffn_hidden", "shared_experts", "dense_layers",
               "capacity_factor", "groups", "group_top_k", "routing"});
      s.moe.experts = r_.Integer(e, ep, "experts", std::nullopt, 1, 1'000'000);
      s.moe.top_k = r_.Integer(e, ep, "top_k", std::nullopt, 1, 1'000'000);
      s.moe.ffn_hidden = r_.Integer(e, ep, "ffn_hidden", s.ffn_hidden, 1, 100'000'000);
      s.moe.shared_experts = r_.Integer(e, ep, "shared_experts", 0, 0, 1'000'000);
      s.moe.dense_layers = r_.Integer(e, ep, "dense_layers", 0, 0, 100'000);
      s.moe.capacity_factor = r_.Number(e, ep, "capacity_factor", 0);
      s.moe.groups = r_.Integer(e, ep, "groups", 1, 1, 1'000'000);
      s.moe.group_top_k = r_.Integer(e, ep, "group_top_k", s.moe.groups, 1, 1'000'000);
      s.moe.natural_routing =
          r_.Enum(e, ep, "routing", {"balanced", "natural"}, "balanced") == "natural";
    }
    ReadLora(m);
  }

  // workload.model.lora: {rank, modules}, Megatron Bridge's LoRA defaults (dim 32, all four
  // linear layers) where unsaid.
  void ReadLora(const YAML::Node& m) {
    const YAML::Node node = r_.Child(m, "lora");
    if (r_.failed() || !node.IsDefined()) return;
    const char* p = "workload.model.lora";
    r_.Keys(node, p, {"rank", "modules"});
    ModelShape& s = spec_.workload.model;
    s.lora.rank = r_.Integer(node, p, "rank", 32, 1, 1'000'000);
    if (r_.failed() || !r_.Has(node, "modules")) return;
    const YAML::Node list = r_.Child(node, "modules");
    s.lora.qkv = s.lora.proj = s.lora.fc1 = s.lora.fc2 = false;
    for (const std::string& name : r_.StringList(node, p, "modules")) {
      bool* flag = name == "linear_qkv"    ? &s.lora.qkv
                   : name == "linear_proj" ? &s.lora.proj
                   : name == "linear_fc1"  ? &s.lora.fc1
                   : name == "linear_fc2"  ? &s.lora.fc2
                                           : nullptr;
      if (flag == nullptr) {
        r_.Fail(list, "workload.model.lora.modules",
                fmt::format("'{}' is not a linear layer LoRA adapts here: name linear_qkv, "
                            "linear_proj, linear_fc1 or linear_fc2 (Megatron-Core's names)",
                            name));
        return;
      }
      *flag = true;
    }
    if (r_.failed()) return;
    if (s.lora.Names().empty()) {
      r_.Fail(list, "workload.model.lora.modules",
              "names no layer: list at least one of linear_qkv, linear_proj, linear_fc1, "
              "linear_fc2, or drop lora to train every weight");
    }
  }

  // Cross-field rules; each error names the field to change and how.
  Status Validate() {
    const Cluster& c = spec_.cluster;
    Workload& w = spec_.workload;
    const ModelShape& m = w.model;
    int gpus = c.nodes.TotalGpus();
    auto fail = [&](std::string_view path, const std::string& message) -> Status {
      return InvalidArgument(spec_.Where(path, message));
    };
    if (static_cast<int64_t>(c.nodes.count) * c.nodes.gpus_per_node > kMaxGpus) {
      return fail("nodes.count",
                  fmt::format("{} nodes x {} GPUs is more than the {} GPUs gpufleet models",
                              c.nodes.count, c.nodes.gpus_per_node, kMaxGpus));
    }
    if (!(m.dropout >= 0 && m.dropout < 1)) {
      return fail("workload.model.dropout",
                  fmt::format("{} is not a probability in [0, 1)", m.dropout));
    }
    if (m.lora.Enabled() && m.lora.rank >= m.hidden) {
      return fail("workload.model.lora.rank",
                  fmt::format("rank {} is not low: an adapter's rank must be below the hidden "
                              "size {} (Megatron Bridge's LoRA: 8 to 32)",
                              m.lora.rank, m.hidden));
    }
    if (m.lora.Enabled() && (m.lora.qkv || m.lora.fc1) && m.lora.rank % w.tensor != 0) {
      return fail("workload.model.lora.rank",
                  fmt::format("rank {} does not split over tensor parallel {}: Megatron splits "
                              "the adapter beside QKV and the MLP's input projection by its rank; "
                              "use a multiple of {}",
                              m.lora.rank, w.tensor, w.tensor));
    }
    if (m.lora.Enabled() && m.IsMoe() && (m.lora.fc1 || m.lora.fc2)) {
      return fail("workload.model.lora.modules",
                  "LoRA on a mixture of experts' MLPs (its routed experts) is not modelled: "
                  "name attention's layers alone (linear_qkv, linear_proj)");
    }
    // The product in 64 bits: tensor x pipeline x context up to 10^18 would overflow an int.
    if (static_cast<int64_t>(w.tensor) * w.pipeline * w.context > gpus) {
      return fail(
          "workload.parallel",
          fmt::format("tensor {} x pipeline {} x context {} is more than the {} GPUs "
                      "({} nodes x {})",
                      w.tensor, w.pipeline, w.context, gpus, c.nodes.count, c.nodes.gpus_per_node));
    }
    int mp = w.ModelParallel();
    if (gpus % mp != 0) {
      std::vector<int> ok;
      for (int d = 1; d <= gpus; ++d) {
        if (gpus % d == 0) ok.push_back(d);
      }
      return fail("workload.parallel",
                  fmt::format("tensor {} x pipeline {} x context {} = {} does not divide the {} "
                              "GPUs ({} nodes x {}); make the product one of {}",
                              w.tensor, w.pipeline, w.context, mp, gpus, c.nodes.count,
                              c.nodes.gpus_per_node, fmt::join(ok, ", ")));
    }
    if (m.head_dim == 0 && m.hidden % m.heads != 0) {
      return fail("workload.model.heads", fmt::format("{} heads do not divide hidden {}; the head "
                                                      "size must be a whole number (or give "
                                                      "head_dim)",
                                                      m.heads, m.hidden));
    }
    if (m.heads % m.kv_heads != 0) {
      return fail("workload.model.kv_heads",
                  fmt::format("{} KV heads do not divide {} attention heads", m.kv_heads, m.heads));
    }
    if (m.heads % w.tensor != 0 || m.kv_heads % w.tensor != 0) {
      return fail("workload.parallel.tensor",
                  fmt::format("tensor parallel {} must divide the {} heads and {} KV heads",
                              w.tensor, m.heads, m.kv_heads));
    }
    // Uneven stages are allowed (Megatron-Core's --decoder-first/last-pipeline-num-layers): the
    // largest stage, ceil(L / pipeline) layers, sets the step and the memory. With the embedding
    // or the loss counted in the split, Megatron-Core's rules: the L + e + l slots divide over
    // the pipeline and each rank's over its virtual stages.
    const PipelineSplit& split = w.pipeline_split;
    const int slots = m.layers + split.Counted();
    if (slots > m.layers && w.pipeline > 1 &&
        !PipelineSplitFits(m.layers, w.pipeline, w.virtual_stages, split)) {
      const std::string counted = split.embedding && split.loss ? "embedding and loss"
                                  : split.embedding             ? "embedding"
                                                                : "loss";
      const std::string words = split.embedding && split.loss
                                    ? "embedding_in_pipeline_split, loss_in_pipeline_split"
                                : split.embedding ? "embedding_in_pipeline_split"
                                                  : "loss_in_pipeline_split";
      if (slots % w.pipeline != 0) {
        return fail("workload.parallel.pipeline",
                    fmt::format("{} layers with the {} counted ({}) are {} slots, which pipeline "
                                "{} does not divide",
                                m.layers, counted, words, slots, w.pipeline));
      }
      if (slots / w.pipeline < 2) {
        return fail("workload.parallel.pipeline",
                    fmt::format("{} slots over pipeline {} leave a rank only the {} ({}); the "
                                "step model runs each rank's layers",
                                slots, w.pipeline, counted, words));
      }
      return fail("workload.parallel.virtual_stages",
                  fmt::format("{} slots per pipeline rank ({}) do not divide into {} virtual "
                              "stages",
                              slots / w.pipeline, words, w.virtual_stages));
    }
    if (!PipelineSplitFits(m.layers, w.pipeline, w.virtual_stages, split)) {
      return fail("workload.parallel.pipeline",
                  fmt::format("{} layers cannot fill pipeline {} x virtual stages {}", m.layers,
                              w.pipeline, w.virtual_stages));
    }
    if (w.virtual_stages > 1 && w.pipeline == 1) {
      return fail("workload.parallel.virtual_stages",
                  "virtual stages (interleaved 1F1B) need pipeline parallel above 1");
    }
    if (m.sequence % w.context != 0) {
      return fail(
          "workload.parallel.context",
          fmt::format("context parallel {} does not divide sequence {}", w.context, m.sequence));
    }
    if (c.scale_up.domain > 0 && gpus > c.scale_up.domain && gpus % c.scale_up.domain != 0) {
      return fail("fabrics.scale_up.domain",
                  fmt::format("{} GPUs are not a whole number of {}-GPU NVLink domains", gpus,
                              c.scale_up.domain));
    }
    int dp = gpus / mp;
    if (m.IsMoe()) {
      if (m.moe.top_k > m.moe.experts) {
        return fail("workload.model.moe.top_k", fmt::format("top_k {} is more than the {} experts",
                                                            m.moe.top_k, m.moe.experts));
      }
      if (m.moe.dense_layers >= m.layers) {
        return fail(
            "workload.model.moe.dense_layers",
            fmt::format("{} dense layers leave no MoE layer of {}", m.moe.dense_layers, m.layers));
      }
      if (m.moe.capacity_factor != 0 &&
          !(m.moe.capacity_factor >= 1 && m.moe.capacity_factor <= 64)) {
        return fail("workload.model.moe.capacity_factor",
                    "must be 1 to 64 (or 0: dropless, no capacity)");
      }
      if (m.moe.experts % m.moe.groups != 0) {
        return fail(
            "workload.model.moe.groups",
            fmt::format("{} groups do not divide the {} experts", m.moe.groups, m.moe.experts));
      }
      if (m.moe.group_top_k > m.moe.groups) {
        return fail("workload.model.moe.group_top_k",
                    fmt::format("group_top_k {} is more than the {} group{} (set "
                                "workload.model.moe.groups)",
                                m.moe.group_top_k, m.moe.groups, m.moe.groups == 1 ? "" : "s"));
      }
      if (m.moe.group_top_k < m.moe.groups && m.moe.group_top_k > m.moe.top_k) {
        return fail("workload.model.moe.group_top_k",
                    fmt::format("group_top_k {} is more than top_k {}: a group is scored by its "
                                "best top_k / group_top_k experts",
                                m.moe.group_top_k, m.moe.top_k));
      }
      if (m.moe.top_k > m.moe.group_top_k * (m.moe.experts / m.moe.groups)) {
        return fail(
            "workload.model.moe.group_top_k",
            fmt::format("top_k {} is more than the {} experts of {} groups", m.moe.top_k,
                        m.moe.group_top_k * (m.moe.experts / m.moe.groups), m.moe.group_top_k));
      }
    }
    if (w.expert > 1) {
      if (!m.IsMoe()) {
        return fail("workload.parallel.expert",
                    "expert parallelism needs a mixture-of-experts model (workload.model.moe)");
      }
      // Megatron-Core takes the expert-parallel ranks from data x context parallel, and from
      // the tensor-parallel ranks too when it needs more (expert TP 1).
      if (!ExpertParallelFits(m.moe.experts, w.expert, w.tensor, dp * w.context)) {
        return fail("workload.parallel.expert",
                    fmt::format("expert parallel {} must divide the {} experts and data parallel "
                                "{} x context {} (x tensor {})",
                                w.expert, m.moe.experts, dp, w.context, w.tensor));
      }
    }
    // Hybrid sharding: shard groups of `shard` DP x CP ranks, replicated across the groups, as
    // PyTorch FSDP's HYBRID_SHARD and torchtitan's HSDP mesh run it (fully sharded inside a
    // group; with expert parallelism the EP ranks inside a group, the experts sharded over the
    // group's share of their expert-data-parallel ranks); ZeRO-1/2's hybrid forms (ZeRO++'s hpZ,
    // FSDP's _HYBRID_SHARD_ZERO2) are not modelled.
    if (w.shard > 0) {
      const int dpc = dp * w.context;
      if (w.strategy != Strategy::kFsdp && w.strategy != Strategy::kZero3) {
        return fail("workload.parallel.shard",
                    fmt::format("hybrid sharding needs strategy fsdp or zero3, not {}",
                                StrategyName(w.strategy)));
      }
      if (dpc % w.shard != 0) {
        return fail("workload.parallel.shard",
                    fmt::format("shard group {} does not divide data parallel {} x context {} = "
                                "{} ranks",
                                w.shard, dp, w.context, dpc));
      }
      const int per_domain = std::max(1, c.ScaleUpDomain() / w.tensor);
      if (!ShardGroupFits(w.shard, dpc, w.tensor, c.ScaleUpDomain())) {
        return fail("workload.parallel.shard",
                    fmt::format("shard group {} would straddle NVLink domains, which hold {} of "
                                "its ranks each ({} GPUs / tensor {}): use a divisor or a "
                                "multiple of {}",
                                w.shard, per_domain, c.ScaleUpDomain(), w.tensor, per_domain));
      }
      if (w.sharding_impl == ShardingImpl::kDeepSpeed) {
        return fail("workload.parallel.shard",
                    "hybrid sharding on the deepspeed-zero3 stack (DeepSpeed's MiCS, one "
                    "all-reduce at the accumulation boundary) is not modelled");
      }
      if (!ExpertsFitShardGroup(w.shard, w.tensor, dpc, w.expert)) {
        const int etp = ExpertTensor(w.tensor, dpc, w.expert);
        return fail("workload.parallel.shard",
                    fmt::format("shard group {} x tensor {} does not hold whole expert-parallel "
                                "groups of {} x expert tensor {} ranks: the experts shard inside "
                                "a group",
                                w.shard, w.tensor, w.expert, etp));
      }
    }
    // `global` alone: the accumulation follows from it.
    if (w.global_batch != 0 && !accumulation_stated_) {
      if (w.global_batch % (w.micro_batch * dp) != 0) {
        return fail("workload.batch.global",
                    fmt::format("global batch {} is not a multiple of micro {} x data parallel {} "
                                "= {}",
                                w.global_batch, w.micro_batch, dp, w.micro_batch * dp));
      }
      w.accumulation = w.global_batch / (w.micro_batch * dp);
    }
    int derived = w.micro_batch * w.accumulation * dp;
    if (w.global_batch != 0 && w.global_batch != derived) {
      return fail("workload.batch.global",
                  fmt::format("global batch {} != micro {} x accumulation {} x data parallel {} "
                              "= {}; drop 'global' or change micro/accumulation",
                              w.global_batch, w.micro_batch, w.accumulation, dp, derived));
    }
    w.global_batch = derived;
    if (!InterleavingRuns(w.virtual_stages, w.pipeline, w.accumulation)) {
      return fail(
          "workload.parallel.virtual_stages",
          fmt::format("virtual stages (interleaved 1F1B) need at least {} micro-batches "
                      "a step (pipeline {}), and global batch {} over micro {} x data "
                      "parallel {} gives {} (Megatron-Core refuses it); raise the batch "
                      "or drop virtual_stages",
                      w.pipeline, w.pipeline, w.global_batch, w.micro_batch, dp, w.accumulation));
    }
    // Checkpointing some of the layers: full recomputation of that many of each stage's layers
    // (Megatron's --recompute-method block --recompute-num-layers).
    if (w.recompute_layers > 0) {
      const int stage_layers = StageLayers(m.layers, w.pipeline, w.pipeline_split);
      if (w.recompute != Recompute::kFull) {
        return fail("workload.activation_checkpointing_layers",
                    "needs activation_checkpointing: full (the layers it recomputes whole)");
      }
      if (w.recompute_layers > stage_layers) {
        return fail("workload.activation_checkpointing_layers",
                    fmt::format("{} layers recomputed of {} per pipeline stage", w.recompute_layers,
                                stage_layers));
      }
    }
    // Megatron-Core's rules for recompute_modules (TransformerConfig), and the parts each one
    // needs in the model to re-run anything.
    if (modules_stated_) {
      const char* path = "workload.activation_checkpointing_modules";
      const Workload::RecomputeModules& mods = w.recompute_modules;
      if (w.recompute != Recompute::kSelective) {
        return fail(path, "needs activation_checkpointing: selective (the modules it recomputes)");
      }
      if (!w.RunsMegatronCore()) {
        return fail(path, fmt::format("is Megatron-Core's recompute_modules, and the {} stack has "
                                      "none (software.stack megatron-core-2024 or nemo-2025)",
                                      w.stack));
      }
      if (mods.Names().empty()) {
        return fail(path, "an empty list recomputes nothing: write activation_checkpointing: none");
      }
      if ((mods.moe_act || mods.layernorm) && !m.IsMoe()) {
        return fail(path, fmt::format("{} re-runs part of a MoE layer (the {}), and the model has "
                                      "none (workload.model.moe)",
                                      mods.moe_act ? "moe_act" : "layernorm",
                                      mods.moe_act ? "routed experts' activation"
                                                   : "norm before its router; Transformer "
                                                     "Engine fuses the other norms into the "
                                                     "next linear"));
      }
      if (mods.mlp && m.MoeLayers() == m.layers) {
        return fail(path,
                    "mlp re-runs a dense layer's MLP, and every layer of the model is a "
                    "MoE layer");
      }
      if ((mods.moe_act || mods.layernorm) && w.precision == Precision::kFp8 &&
          w.fp8_recipe == Fp8Recipe::kDelayed) {
        return fail(path,
                    "moe_act and layernorm do not recompute under FP8 delayed scaling "
                    "(Megatron-Core refuses them); use software.fp8_recipe current or "
                    "mxfp8");
      }
    }
    // Megatron-Core's rules for cpu_offloading (TransformerConfig): fewer layers than the model
    // has, no pipeline parallelism, no activation recomputation.
    if (w.activation_offload > 0) {
      if (w.activation_offload >= m.layers) {
        return fail(
            "workload.activation_offload",
            fmt::format("{} layers offloaded of {}: at most {} (one layer stays on the GPU)",
                        w.activation_offload, m.layers, m.layers - 1));
      }
      if (w.pipeline > 1) {
        return fail("workload.activation_offload",
                    "does not run with pipeline parallelism (Megatron-Core refuses "
                    "cpu_offloading with pipeline stages)");
      }
      if (w.recompute != Recompute::kNone) {
        return fail("workload.activation_offload",
                    "does not combine with activation_checkpointing (Megatron-Core refuses "
                    "cpu_offloading with recomputation); drop one of them");
      }
    }
    // Megatron-Core's rules for overlap_moe_expert_parallel_comm (TransformerConfig, Megatron
    // Bridge's CommOverlapConfig): expert parallelism to overlap, 16-bit base precision, no full
    // recomputation, and with pipeline stages the interleaved schedule.
    if (w.moe_comm_overlap) {
      const char* word = "workload.software.moe_comm_overlap";
      if (w.expert < 2) {
        return fail(word, "needs expert parallelism (workload.parallel.expert 2 or more)");
      }
      if (w.precision == Precision::kFp32 || w.precision == Precision::kTf32) {
        return fail(word, fmt::format("needs a BF16 or FP16 base precision, not {}",
                                      PrecisionName(w.precision)));
      }
      if (w.recompute == Recompute::kFull) {
        return fail(word,
                    "does not run with full activation checkpointing (Megatron-Core "
                    "refuses it); use selective or none");
      }
      if (w.pipeline > 1 && w.virtual_stages < 2) {
        return fail(word,
                    "with pipeline parallelism needs virtual stages (interleaved 1F1B: "
                    "workload.parallel.virtual_stages 2 or more)");
      }
    }
    // ZeRO-2 with pipeline parallelism is what Llama 3 ran (gradients and optimizer states
    // sharded, weights kept); DeepSpeed's ZeRO-3 does not run with its pipeline engine: FSDP does.
    if (w.pipeline > 1 && w.strategy == Strategy::kZero3) {
      return fail("workload.parallel.strategy",
                  "zero3 (DeepSpeed) does not run with pipeline parallelism; use fsdp (PyTorch "
                  "FSDP with pipeline stages) or zero2 (sharded gradients, as Llama 3 ran)");
    }
    if (!w.checkpoint_tier.empty() && c.FindTier(w.checkpoint_tier) == nullptr) {
      std::vector<std::string> names;
      for (const auto& t : c.storage) names.push_back(t.name);
      return fail("workload.checkpoint.tier",
                  fmt::format("no storage tier named '{}'; tiers: {}", w.checkpoint_tier,
                              names.empty() ? "none (add a storage: list)"
                                            : fmt::format("{}", fmt::join(names, ", "))));
    }
    if (w.checkpoint_tier.empty() && !c.storage.empty()) {
      // Default: the warm tier if any, else the first one.
      w.checkpoint_tier = c.storage.front().name;
      for (const auto& t : c.storage) {
        if (t.kind == TierKind::kWarm) {
          w.checkpoint_tier = t.name;
          break;
        }
      }
    }
    if (c.nodes.count > 1) {
      if (c.nodes.Ports(NicRole::kCompute) == 0) {
        return fail("nodes.nics", "a cluster of more than one node needs a NIC with role compute");
      }
      if (!c.compute_fabric.present) {
        return fail("fabrics", "a cluster of more than one node needs fabrics.compute");
      }
    }
    if (w.precision == Precision::kFp8 && c.nodes.gpu.fp8_flop_per_s <= 0) {
      return fail("workload.precision",
                  fmt::format("{} has no FP8 tensor cores; use bf16", c.nodes.gpu.name));
    }
    if (w.precision == Precision::kFp4) {
      // NVFP4 as Transformer Engine runs it for Megatron-Core (Megatron Bridge's bf16_with_nvfp4
      // mixed precision): the only FP4 training recipe the model has.
      if (c.nodes.gpu.fp4_flop_per_s <= 0 || c.nodes.gpu.architecture.rfind("Blackwell", 0) != 0) {
        return fail(
            "workload.precision",
            fmt::format("{} has no FP4 tensor cores (NVFP4 needs Blackwell); use fp8 or bf16",
                        c.nodes.gpu.name));
      }
      // NVFP4's GEMM rate is measured as a speed-up over FP8's (model::kNvfp4OverFp8Gemm).
      if (c.nodes.gpu.fp8_flop_per_s <= 0) {
        return fail("workload.precision",
                    fmt::format("NVFP4's rate is modelled from FP8's, and {} has no FP8 peak "
                                "(fp8: 0); state it or use bf16",
                                c.nodes.gpu.name));
      }
      if (!w.RunsMegatronCore()) {
        return fail(
            "workload.precision",
            fmt::format("FP4 is Transformer Engine's NVFP4 recipe as Megatron-Core and NeMo "
                        "run it (megatron-core-2024, nemo-2025); the {} stack's is not "
                        "modelled",
                        w.stack));
      }
    }
    // After the precision's own rules, so that a precision the GPU cannot run is named first.
    if (w.moe_fused_grouped_mlp) {
      if (std::string why = FusedGroupedMlpRefusal(w, c.nodes.gpu); !why.empty()) {
        return fail("workload.software.moe_expert_gemm", why);
      }
    }
    return OkStatus();
  }

  SpecReader r_;
  const Catalog& catalog_;
  Spec spec_;
  bool accumulation_stated_ = false;
  bool modules_stated_ = false;  // activation_checkpointing_modules was written
};

}  // namespace

Result<SpecOverride> ParseOverride(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return InvalidArgument(
        fmt::format("--set {}: expected PATH=VALUE, e.g. --set nodes.count=64", text));
  }
  return SpecOverride{std::string(strings::Trim(text.substr(0, eq))),
                      std::string(text.substr(eq + 1))};
}

Result<Spec> ParseSpec(std::string_view text, std::string file,
                       const std::vector<SpecOverride>& overrides, const Catalog& catalog) {
  return SpecLoader(std::move(file), catalog).Load(text, overrides);
}

Result<Spec> LoadSpecFile(const std::string& path, const std::vector<SpecOverride>& overrides,
                          const Catalog& catalog) {
  // A regular file of bounded size: `plan /dev/zero` read until bad_alloc, `plan FIFO` hung.
  Result<std::string> text = ReadWholeFile(path, "a cluster spec (YAML)");
  if (!text) {
    std::string m = text.error().message;
    if (const size_t at = m.find(": cannot read: "); at != std::string::npos) {
      m.replace(at, 15, ": cannot read spec: ");
    }
    return Error{text.error().code, m};
  }
  return ParseSpec(*text, path, overrides, catalog);
}

Result<Spec> LoadSpec(const std::string& path, const std::vector<std::string>& set) {
  std::vector<SpecOverride> overrides;
  for (const auto& text : set) {
    GPUFLEET_ASSIGN_OR_RETURN(SpecOverride o, ParseOverride(text));
    overrides.push_back(std::move(o));
  }
  return path.empty() ? ReferenceSpec(overrides) : LoadSpecFile(path, overrides);
}

// Transformer Engine's fused grouped MLP (te.ops' fusion, ops/fused/grouped_mlp.py): cuDNN's
// grouped GEMM kernels for compute capability 10 (Blackwell), under an MXFP8 or NVFP4 recipe, with
// a gated activation fused between the two GEMMs; Megatron-Core builds it
// (use_transformer_engine_op_fuser).
std::string FusedGroupedMlpRefusal(const Workload& w, const GpuSpec& gpu) {
  if (!w.model.IsMoe()) {
    return "fused is the routed experts' kernel; the model has no experts (workload.model.moe)";
  }
  if (!w.RunsMegatronCore()) {
    return fmt::format(
        "fused is Transformer Engine's grouped MLP as Megatron-Core and NeMo run it "
        "(megatron-core-2024, nemo-2025), not the {} stack's",
        w.stack);
  }
  if (gpu.architecture.rfind("Blackwell", 0) != 0) {
    return fmt::format("fused needs Blackwell's grouped GEMM kernels; {} is {}", gpu.name,
                       gpu.architecture);
  }
  if (w.precision != Precision::kFp4 &&
      !(w.precision == Precision::kFp8 && w.fp8_recipe == Fp8Recipe::kMxfp8)) {
    return "fused runs under MXFP8 or NVFP4 (precision fp8 with fp8_recipe: mxfp8, or precision "
           "fp4)";
  }
  if (!w.model.GatedMlp()) {
    return "fused runs a gated MLP (SwiGLU or quick-GeGLU) between its GEMMs; the model's is GELU";
  }
  return "";
}

Result<Spec> ReferenceSpec(const std::vector<SpecOverride>& overrides, const Catalog& catalog) {
  return ParseSpec(embedded::ReferenceSpecYaml(), "<reference>", overrides, catalog);
}

}  // namespace gpufleet::model
