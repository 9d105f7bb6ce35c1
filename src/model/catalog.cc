#include "model/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "model/catalog_fields.h"
#include "model/embedded.h"

namespace gpufleet::model {

using units::Dimension;

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp32:
      return "fp32";
    case Precision::kFp4:
      return "fp4";
  }
  return "?";
}

double GpuSpec::PeakFlops(Precision p) const {
  switch (p) {
    case Precision::kBf16:
      return bf16_flop_per_s;
    case Precision::kFp16:
      return fp16_flop_per_s;
    case Precision::kFp8:
      return fp8_flop_per_s;
    case Precision::kTf32:
      return tf32_flop_per_s;
    case Precision::kFp32:
      return fp32_flop_per_s;
    case Precision::kFp4:
      return fp4_flop_per_s;
  }
  return 0;
}

double GpuSpec::MatmulEfficiency(Precision p) const {
  if (p == Precision::kFp4) {
    if (fp4_flop_per_s <= 0 || fp8_flop_per_s <= 0) return 0;
    const double fp8 = MatmulEfficiency(Precision::kFp8);
    // Never above FP8's own share of its peak.
    return std::min(fp8, fp8 * fp8_flop_per_s * kNvfp4OverFp8Gemm / fp4_flop_per_s);
  }
  return p == Precision::kFp8 && fp8_matmul_efficiency > 0 ? fp8_matmul_efficiency
                                                           : matmul_efficiency;
}

double GpuSpec::HostLinkBytesPerS() const {
  // NVIDIA's Grace Blackwell pages: NVLink-C2C, 900 GB/s bidirectional between the Grace CPU and
  // its two Blackwell GPUs.
  if (form_factor == "Superchip") return 900e9 / 2 / 2;
  // PCIe x16 per direction: 2 GB/s per lane at Gen4 (16 GT/s), doubling per generation; a pinned
  // copy measures 54.8 GB/s on Gen5, 87 % of its 63 GB/s (docs/sim.md, "Activation offload").
  const int gen = std::clamp(pcie_gen, 3, 6);
  return 0.87 * 16 * 0.985e9 * (1 << (gen - 3));
}

void ReadGpuFields(SpecReader& r, const YAML::Node& m, std::string_view path, bool required,
                   GpuSpec* g) {
  auto opt = [&](double current) -> std::optional<double> {
    if (required) return std::nullopt;
    return current;
  };
  g->memory_bytes = r.Quantity(m, path, "memory", Dimension::kBytes, opt(g->memory_bytes));
  g->memory_bandwidth_bytes_per_s = r.Quantity(m, path, "memory_bandwidth", Dimension::kBandwidth,
                                               opt(g->memory_bandwidth_bytes_per_s));
  g->bf16_flop_per_s = r.Quantity(m, path, "bf16", Dimension::kFlops, opt(g->bf16_flop_per_s));
  g->fp16_flop_per_s = r.Quantity(m, path, "fp16", Dimension::kFlops, opt(g->fp16_flop_per_s));
  g->tf32_flop_per_s = r.Quantity(m, path, "tf32", Dimension::kFlops, opt(g->tf32_flop_per_s));
  g->fp8_flop_per_s = r.Quantity(m, path, "fp8", Dimension::kFlops, g->fp8_flop_per_s);
  g->fp32_flop_per_s = r.Quantity(m, path, "fp32", Dimension::kFlops, opt(g->fp32_flop_per_s));
  g->fp4_flop_per_s = r.Quantity(m, path, "fp4", Dimension::kFlops, g->fp4_flop_per_s);
  g->tdp_w = r.Quantity(m, path, "tdp", Dimension::kPower, opt(g->tdp_w));
  g->idle_w = r.Quantity(m, path, "idle", Dimension::kPower, g->idle_w);
  g->pcie_gen =
      r.Integer(m, path, "pcie_gen", required ? std::nullopt : std::optional(g->pcie_gen), 1);
  g->matmul_efficiency =
      r.Quantity(m, path, "matmul_efficiency", Dimension::kFraction, opt(g->matmul_efficiency));
  g->fp8_matmul_efficiency =
      r.Quantity(m, path, "fp8_matmul_efficiency", Dimension::kFraction, g->fp8_matmul_efficiency);
  g->sustained_clock =
      r.Quantity(m, path, "sustained_clock", Dimension::kFraction, g->sustained_clock);
  g->memory_efficiency =
      r.Quantity(m, path, "memory_efficiency", Dimension::kFraction, opt(g->memory_efficiency));
  if (!r.failed() && (g->memory_efficiency <= 0 || g->memory_efficiency > 1)) {
    r.Fail(r.Child(m, "memory_efficiency"), fmt::format("{}.memory_efficiency", path),
           "must be above 0 % and at most 100 % (the share of memory_bandwidth a copy reaches)");
  }
  if (g->sustained_clock == 0 && r.Has(m, "sustained_clock")) {
    r.Fail(r.Child(m, "sustained_clock"), fmt::format("{}.sustained_clock", path),
           "must be above 0 % (the share of the printed peaks the GPU sustains)");
  }
  if (r.Has(m, "scale_up") || required) {
    YAML::Node su = r.Child(m, "scale_up");
    std::string su_path = fmt::format("{}.scale_up", path);
    if (!su.IsDefined()) {
      r.Fail(m, su_path, "missing required key 'scale_up'");
      return;
    }
    r.Keys(su, su_path, {"type", "bandwidth"});
    g->scale_up_type =
        r.Enum(su, su_path, "type",
               {"nvlink2", "nvlink3", "nvlink4", "nvlink5", "infinity-fabric", "pcie"},
               required ? std::nullopt : std::optional(g->scale_up_type));
    g->scale_up_bandwidth_bytes_per_s = r.Quantity(su, su_path, "bandwidth", Dimension::kBandwidth,
                                                   opt(g->scale_up_bandwidth_bytes_per_s));
  }
  if (!r.failed() && g->bf16_flop_per_s <= 0) r.Fail(m, path, "bf16 peak must be above zero");
  if (!r.failed() && g->memory_bytes <= 0) r.Fail(m, path, "memory must be above zero");
}

void ReadSwitchFields(SpecReader& r, const YAML::Node& m, std::string_view path, bool required,
                      SwitchSpec* s) {
  s->link_layer = r.Enum(m, path, "link_layer", {"infiniband", "ethernet"},
                         required ? std::nullopt : std::optional(s->link_layer));
  s->radix = r.Integer(m, path, "radix", required ? std::nullopt : std::optional(s->radix), 2);
  s->port_speed_bytes_per_s =
      r.Quantity(m, path, "port_speed", Dimension::kBandwidth,
                 required ? std::nullopt : std::optional(s->port_speed_bytes_per_s));
  if (r.Has(m, "power")) s->verify = false;  // a stated power is the user's own number
  s->power_w = r.Quantity(m, path, "power", Dimension::kPower,
                          required ? std::nullopt : std::optional(s->power_w));
  s->verify = r.Bool(m, path, "verify", s->verify);
}

class CatalogParser {
 public:
  static Result<Catalog> Parse(std::string_view gpus, std::string_view nics,
                               std::string_view switches, std::string_view cpus) {
    Catalog c;
    GPUFLEET_RETURN_IF_ERROR(ParseList(gpus, "data/catalog/gpus.yaml", "gpus", &c.gpus_, ReadGpu));
    GPUFLEET_RETURN_IF_ERROR(ParseList(nics, "data/catalog/nics.yaml", "nics", &c.nics_, ReadNic));
    GPUFLEET_RETURN_IF_ERROR(
        ParseList(switches, "data/catalog/switches.yaml", "switches", &c.switches_, ReadSwitch));
    GPUFLEET_RETURN_IF_ERROR(ParseList(cpus, "data/catalog/cpus.yaml", "cpus", &c.cpus_, ReadCpu));
    return c;
  }

 private:
  template <typename T, typename F>
  static Status ParseList(std::string_view text, const char* file, const char* key,
                          std::vector<T>* out, F read) {
    SpecReader r(file);
    YAML::Node doc = r.Load(text);
    r.Keys(doc, "", {key});
    YAML::Node list = r.Child(doc, key);
    if (!r.failed() && !list.IsSequence()) r.Fail(doc, key, "expected a list");
    if (r.failed()) return r.error();
    for (size_t i = 0; i < list.size(); ++i) {
      T entry;
      std::string path = fmt::format("{}[{}]", key, i);
      read(r, list[i], path, &entry);
      if (!r.failed() && entry.source.empty()) r.Fail(list[i], path, "every entry needs a source");
      if (r.failed()) return r.error();
      out->push_back(std::move(entry));
    }
    return OkStatus();
  }

  static void ReadGpu(SpecReader& r, const YAML::Node& m, const std::string& path, GpuSpec* g) {
    // The entry's own keys and every field a spec may override.
    std::vector<std::string_view> keys = {"name",         "aliases",     "vendor",
                                          "architecture", "form_factor", "source"};
    keys.insert(keys.end(), std::begin(kGpuOverrideKeys), std::end(kGpuOverrideKeys));
    r.Keys(m, path, keys);
    g->name = r.String(m, path, "name");
    g->aliases = r.StringList(m, path, "aliases");
    g->vendor = r.String(m, path, "vendor");
    g->architecture = r.String(m, path, "architecture", "");
    g->form_factor = r.String(m, path, "form_factor");
    g->source = r.String(m, path, "source", "");
    ReadGpuFields(r, m, path, /*required=*/true, g);
  }
  static void ReadNic(SpecReader& r, const YAML::Node& m, const std::string& path, NicSpec* n) {
    r.Keys(m, path, {"name", "aliases", "speed", "ports", "pcie_gen", "link_layers", "source"});
    n->name = r.String(m, path, "name");
    n->aliases = r.StringList(m, path, "aliases");
    n->speed_bytes_per_s = r.Quantity(m, path, "speed", Dimension::kBandwidth);
    n->ports = r.Integer(m, path, "ports", std::nullopt, 1);
    n->pcie_gen = r.Integer(m, path, "pcie_gen", std::nullopt, 1);
    n->link_layers = r.StringList(m, path, "link_layers");
    n->source = r.String(m, path, "source", "");
  }
  static void ReadSwitch(SpecReader& r, const YAML::Node& m, const std::string& path,
                         SwitchSpec* s) {
    r.Keys(m, path,
           {"name", "aliases", "link_layer", "radix", "port_speed", "power", "verify", "source"});
    s->name = r.String(m, path, "name");
    s->aliases = r.StringList(m, path, "aliases");
    s->source = r.String(m, path, "source", "");
    ReadSwitchFields(r, m, path, /*required=*/true, s);
    s->verify = r.Bool(m, path, "verify", false);
  }
  static void ReadCpu(SpecReader& r, const YAML::Node& m, const std::string& path, CpuSpec* c) {
    r.Keys(m, path, {"name", "aliases", "cores", "tdp", "source"});
    c->name = r.String(m, path, "name");
    c->aliases = r.StringList(m, path, "aliases");
    c->cores = r.Integer(m, path, "cores", std::nullopt, 1);
    c->tdp_w = r.Quantity(m, path, "tdp", Dimension::kPower);
    c->source = r.String(m, path, "source", "");
  }
};

Result<Catalog> Catalog::Parse(std::string_view gpus_yaml, std::string_view nics_yaml,
                               std::string_view switches_yaml, std::string_view cpus_yaml) {
  return CatalogParser::Parse(gpus_yaml, nics_yaml, switches_yaml, cpus_yaml);
}

const Catalog& Catalog::Builtin() {
  static const Catalog* catalog = [] {
    Result<Catalog> c = Parse(embedded::GpusYaml(), embedded::NicsYaml(), embedded::SwitchesYaml(),
                              embedded::CpusYaml());
    if (!c) {
      std::fprintf(stderr, "gpufleet: built-in catalog is broken: %s\n", c.error().message.c_str());
      std::abort();
    }
    return new Catalog(std::move(c).value());
  }();
  return *catalog;
}

namespace {
template <typename T>
const T* Find(const std::vector<T>& entries, std::string_view name) {
  std::string want = strings::Canonical(name);
  for (const auto& e : entries) {
    if (strings::Canonical(e.name) == want) return &e;
    for (const auto& a : e.aliases) {
      if (strings::Canonical(a) == want) return &e;
    }
  }
  return nullptr;
}
}  // namespace

const GpuSpec* Catalog::FindGpu(std::string_view name) const { return Find(gpus_, name); }
const NicSpec* Catalog::FindNic(std::string_view name) const { return Find(nics_, name); }
const SwitchSpec* Catalog::FindSwitch(std::string_view name) const { return Find(switches_, name); }
const CpuSpec* Catalog::FindCpu(std::string_view name) const { return Find(cpus_, name); }

}  // namespace gpufleet::model
