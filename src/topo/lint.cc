#include "topo/lint.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "base/strings.h"

namespace gpufleet::topo {

std::string_view LintSeverityName(LintSeverity s) {
  switch (s) {
    case LintSeverity::kInfo:
      return "info";
    case LintSeverity::kWarning:
      return "warning";
    case LintSeverity::kError:
      return "error";
  }
  return "?";
}

int LintReport::Errors() const {
  return omitted_errors +
         static_cast<int>(std::count_if(findings.begin(), findings.end(), [](const LintFinding& f) {
           return f.severity == LintSeverity::kError;
         }));
}
int LintReport::Warnings() const {
  return omitted_warnings +
         static_cast<int>(std::count_if(findings.begin(), findings.end(), [](const LintFinding& f) {
           return f.severity == LintSeverity::kWarning;
         }));
}

void LintReport::Add(LintFinding f) {
  size_t same = 0;
  if (findings.size() < kMaxFindings) {
    for (const auto& g : findings) same += g.id == f.id ? 1 : 0;
  }
  if (findings.size() >= kMaxFindings || same >= kMaxPerId) {
    (f.severity == LintSeverity::kError     ? omitted_errors
     : f.severity == LintSeverity::kWarning ? omitted_warnings
                                            : omitted_notes) += 1;
    return;
  }
  findings.push_back(std::move(f));
}

namespace {

constexpr const char* kClassGpu = "0x030200";
constexpr const char* kClassNvSwitch = "0x068000";
constexpr const char* kClassCpu = "0x068001";

// NCCL's link_speed dictionary (topo.cc kvDictPciGen), matched by prefix.
bool KnownLinkSpeed(const std::string& s) {
  static constexpr const char* kKnown[] = {
      "2.5 GT/s", "5 GT/s",         "5.0 GT/s", "8 GT/s",         "8.0 GT/s",
      "16 GT/s",  "16.0 GT/s PCIe", "32 GT/s",  "32.0 GT/s PCIe", "64.0 GT/s PCIe"};
  for (const char* k : kKnown) {
    if (s.rfind(k, 0) == 0) {
      // NCCL's own NVML fallback "16.0 GT/s" (no "PCIe") is NOT in its dictionary.
      if (s == "16.0 GT/s") return false;
      return true;
    }
  }
  return false;
}

bool IsNvlinkSentinel(const std::string& t) { return t.rfind("fffffff:ff:ff", 0) == 0; }

// The attributes NCCL's topology reader and writer know per element (src/graph/xml.cc,
// topo.cc; NCCL 2.2x), with `keep`, its internal marker, linted on its own.
const std::vector<std::string>& NcclAttributes(const std::string& element) {
  static const std::map<std::string, std::vector<std::string>> kAttrs = {
      {"system", {"version"}},
      {"cpu", {"numaid", "affinity", "arch", "vendor", "familyid", "modelid", "host_hash"}},
      {"pci",
       {"busid", "class", "vendor", "device", "subsystem_vendor", "subsystem_device", "link_speed",
        "link_width"}},
      {"gpu", {"dev", "sm", "rank", "gdr"}},
      {"nvlink", {"target", "count", "tclass"}},
      {"c2c", {"count", "bw"}},
      {"pcilink", {"class", "target"}},
      {"nic", {}},
      {"net",
       {"name", "dev", "speed", "port", "latency", "guid", "maxconn", "gdr", "coll", "gin", "net"}},
  };
  static const std::vector<std::string> kNone;
  auto it = kAttrs.find(element);
  return it == kAttrs.end() ? kNone : it->second;
}

// NCCL reads PCI ids and classes as hexadecimal (strtol base 16, "0x" optional): anything else
// reads as 0 or as the digits before the first non-hex character.
bool IsHexId(const std::string& v) {
  static const std::regex kHex(R"((0[xX])?[0-9a-fA-F]+)");
  return std::regex_match(v, kHex);
}

class Linter {
 public:
  explicit Linter(const NcclXml& doc) : doc_(doc) { report_.file = doc.file; }

  LintReport Run() {
    for (const auto& s : doc_.syntax) {
      Add(s.fatal_in_nccl ? LintSeverity::kError : LintSeverity::kWarning, s.id, s.line, s.message,
          s.fatal_in_nccl ? "NCCL init fails while parsing the file" : "accepted by recent NCCL",
          "rewrite the file in NCCL's own format: gpufleet topo nccl-xml, or fix this line");
    }
    if (doc_.element_count > kMaxTopoNodes) {
      Add(LintSeverity::kError, "nccl.too-many-nodes", doc_.root.line,
          fmt::format("{} elements; NCCL's topology XML holds at most {}", doc_.element_count,
                      kMaxTopoNodes),
          "init fails with \"too many XML nodes (max 256)\" (nccl #2160)",
          "drop devices the job does not use, or upgrade NCCL past the fix (PR #2386)");
    }
    for (const auto& a : doc_.root.attrs) {
      if (a.key != "version" && a.key != "name") UnknownAttr(doc_.root, a);
    }
    Walk(doc_.root);
    CheckCpus();
    CheckNvlinks();
    std::stable_sort(report_.findings.begin(), report_.findings.end(),
                     [](const LintFinding& a, const LintFinding& b) { return a.line < b.line; });
    return report_;
  }

 private:
  void Add(LintSeverity sev, std::string id, int line, std::string msg, std::string nccl,
           std::string fix) {
    report_.Add({sev, std::move(id), line, std::move(msg), std::move(nccl), std::move(fix)});
  }

  void UnknownAttr(const XmlElement& e, const XmlAttr& a) {
    if (a.key == "keep") {
      Add(LintSeverity::kWarning, "nccl.keep-attribute", a.line,
          fmt::format("<{}> carries keep=\"{}\", NCCL's internal marker", e.name, a.value),
          "NCCL sets and strips it itself; a stale one can keep unused devices alive",
          "delete the keep attribute");
      return;
    }
    const auto& known = NcclAttributes(e.name);
    if (std::find(known.begin(), known.end(), a.key) != known.end()) return;
    // What the author probably meant: the closest NCCL attribute, or one it abbreviates
    // (`numa` for numaid, `bus` for busid).
    std::string meant = strings::ClosestMatch(a.key, known);
    for (const auto& k : known) {
      if (meant.empty() && a.key.size() >= 3 && k.rfind(a.key, 0) == 0) meant = k;
    }
    if (!meant.empty() && e.Get(meant)) meant.clear();  // the real one is there too
    Add(meant.empty() ? LintSeverity::kInfo : LintSeverity::kWarning, "nccl.unknown-attribute",
        a.line,
        meant.empty()
            ? fmt::format("<{} {}=...>: {} is not an NCCL attribute", e.name, a.key, a.key)
            : fmt::format("<{} {}=...>: {} is not an NCCL attribute; did you mean {}?", e.name,
                          a.key, a.key, meant),
        "NCCL ignores it silently", meant.empty() ? "delete it" : "rename it to " + meant);
  }

  // " (it has numa=\"0\": not an NCCL attribute)" when `e` carries an attribute that reads
  // like the missing `key`: what the author wrote, named.
  static std::string Written(const XmlElement& e, const std::string& key) {
    for (const auto& a : e.attrs) {
      if (a.key != key && (key.rfind(a.key, 0) == 0 || strings::EditDistance(a.key, key) <= 2)) {
        return fmt::format(" (it has {}=\"{}\", which NCCL does not read: rename it)", a.key,
                           a.value);
      }
    }
    return "";
  }

  // PCI ids and classes in hex.
  void CheckHex(const XmlElement& e, const char* key, LintSeverity sev) {
    const std::string* v = e.Get(key);
    if (!v || IsHexId(*v)) return;
    Add(sev, "nccl.hex-id", e.line,
        fmt::format("<{} {}=\"{}\">: not a hexadecimal id", e.name, key, *v),
        "NCCL reads it as hex (strtol base 16): this value reads as 0 or as its leading hex "
        "digits, and the device is misidentified",
        fmt::format("write the PCI {} as hex, as lspci -n prints it (e.g. {}=\"0x10de\")", key,
                    key));
  }

  static bool Allowed(const std::string& parent, const std::string& child) {
    static const std::map<std::string, std::set<std::string>> kNesting = {
        {"system", {"cpu"}},
        {"cpu", {"pci", "nic"}},
        {"pci", {"pci", "gpu", "nic", "pcilink"}},
        {"gpu", {"nvlink", "c2c"}},
        {"nic", {"net"}},
    };
    auto it = kNesting.find(parent);
    return it != kNesting.end() && it->second.count(child) > 0;
  }

  // "-007" -> "-7", "000" -> "0": text, so a value of any length has its fix.
  static std::string DecimalWithoutLeadingZeros(std::string_view v) {
    const bool negative = !v.empty() && v[0] == '-';
    if (negative) v.remove_prefix(1);
    const size_t first = v.find_first_not_of('0');
    if (first == std::string_view::npos) return "0";
    return (negative ? "-" : "") + std::string(v.substr(first));
  }

  // Numbers are read with strtol(..., 0): a leading 0 means octal.
  void CheckNumber(const XmlElement& e, const char* key) {
    const std::string* v = e.Get(key);
    if (!v || v->empty()) return;
    static const std::regex kOctalTrap(R"(-?0[0-9]+)");
    if (std::regex_match(*v, kOctalTrap)) {
      Add(LintSeverity::kError, "nccl.octal-number", e.line,
          fmt::format("<{} {}=\"{}\">: a leading zero makes NCCL read it as octal", e.name, key,
                      *v),
          v->find_first_of("89") != std::string::npos
              ? "strtol stops at the first 8 or 9: the value is wrong"
              : "the value is read in base 8",
          fmt::format("write {}=\"{}\"", key, DecimalWithoutLeadingZeros(*v)));
    }
  }

  void Walk(const XmlElement& e) {
    for (const auto& c : e.children) {
      if (!Allowed(e.name, c.name)) {
        const bool known = c.name == "cpu" || c.name == "pci" || c.name == "gpu" ||
                           c.name == "nic" || c.name == "net" || c.name == "nvlink" ||
                           c.name == "c2c" || c.name == "pcilink";
        std::string fix = "move it: system > cpu > pci > gpu|nic > net (nvlink, c2c inside gpu)";
        if (c.name == "net") fix = "wrap it: <nic><net .../></nic> under the NIC's <pci>";
        if (c.name == "gpu") fix = "put it inside the GPU's <pci busid=...> element";
        Add(known ? LintSeverity::kError : LintSeverity::kWarning,
            known ? "nccl.misplaced-element" : "nccl.unknown-element", c.line,
            fmt::format("<{}> inside <{}>", c.name, e.name),
            "ignored silently with its whole subtree (\"Ignoring element\"): the file does not do "
            "what it says",
            fix);
        continue;  // NCCL drops the subtree; do not lint inside it
      }
      Element(c, e);
      Walk(c);
    }
  }

  void Element(const XmlElement& e, const XmlElement& parent) {
    for (const auto& a : e.attrs) UnknownAttr(e, a);
    if (e.name == "cpu") {
      cpus_.push_back(&e);
      CheckNumber(e, "numaid");
    } else if (e.name == "pci") {
      Pci(e);
    } else if (e.name == "gpu") {
      Gpu(e, parent);
    } else if (e.name == "nvlink") {
      nvlinks_.push_back({&e, &parent});
    } else if (e.name == "nic") {
      if (parent.name == "cpu") {
        Add(LintSeverity::kInfo, "nccl.virtual-nic", e.line, "<nic> directly under <cpu>",
            "treated as a NIC without a PCI device (virtual or non-PCI)",
            "put it under its <pci busid> if it is a PCI NIC");
      }
      if (e.children.empty()) {
        Add(LintSeverity::kWarning, "nccl.empty-nic", e.line, "<nic> without <net>",
            "kept only if a network plugin later attaches a device here", "add <net name dev>");
      }
    } else if (e.name == "net") {
      Net(e);
    }
  }

  void Pci(const XmlElement& e) {
    const std::string* busid = e.Get("busid");
    CheckHex(e, "class", LintSeverity::kError);
    CheckHex(e, "vendor", LintSeverity::kError);
    CheckHex(e, "device", LintSeverity::kError);
    CheckHex(e, "subsystem_vendor", LintSeverity::kWarning);
    CheckHex(e, "subsystem_device", LintSeverity::kWarning);
    if (!busid) {
      Add(LintSeverity::kError, "nccl.missing-attribute", e.line,
          "<pci> without busid" + Written(e, "busid"),
          "init fails: \"Attribute busid of node pci not found\"", "add busid=\"dddd:bb:dd.f\"");
    } else if (!IsCanonicalBusId(*busid)) {
      const std::string canon = CanonicalBusId(*busid);
      Add(LintSeverity::kError, "nccl.busid-format", e.line,
          fmt::format("busid \"{}\" is not NCCL's lower-case dddd:bb:dd.f form", *busid),
          "no match with the detected device: a duplicate, unattached node",
          canon.empty() ? "write the bus id as dddd:bb:dd.f in lower case"
                        : fmt::format("write busid=\"{}\"", canon));
    } else {
      if (auto [it, inserted] = busids_.emplace(*busid, e.line); !inserted) {
        Add(LintSeverity::kError, "nccl.duplicate-busid", e.line,
            fmt::format("busid {} also at line {}", *busid, it->second),
            "the first match wins; the other subtree is orphaned", "keep one element per device");
      }
    }
    const std::string cls = e.GetOr("class", "");
    // Minimal cloud files leave class and link values to auto-detection, which
    // reads sysfs; a made-up bus id (ffff:...) has no sysfs entry to read.
    const bool made_up = busid && busid->rfind("ffff:", 0) == 0;
    if (cls.empty()) {
      // Auto-detection fills class from sysfs, through the bus id: without one, or with a
      // made-up one, there is nothing to read.
      const bool unreadable = made_up || !busid;
      Add(unreadable ? LintSeverity::kError : LintSeverity::kInfo, "nccl.missing-attribute", e.line,
          "<pci> without class" + Written(e, "class"),
          !busid ? "no busid either: NCCL cannot find the device in sysfs to fill class"
          : made_up
              ? "a made-up bus id has no sysfs entry: \"Attribute class of node pci not found\""
              : "filled from sysfs when the device exists on the node",
          "add class=\"0x060400\" (switch), 0x030200 (GPU) or 0x020700/0x020000 (NIC)");
    }
    if (cls.rfind("0x03", 0) == 0) pci_gpus_.insert(busid ? *busid : "");
    const std::string* speed = e.Get("link_speed");
    if (!speed) {
      Add(made_up ? LintSeverity::kError : LintSeverity::kInfo, "nccl.missing-attribute", e.line,
          "<pci> without link_speed",
          made_up ? "a made-up bus id has no sysfs entry: \"Attribute link_speed of node pci not "
                    "found\""
                  : "filled from sysfs when the device exists on the node",
          "add link_speed=\"32.0 GT/s PCIe\" (Gen5) or \"16.0 GT/s PCIe\" (Gen4)");
    } else if (!KnownLinkSpeed(*speed)) {
      Add(LintSeverity::kWarning, "nccl.link-speed-unknown", e.line,
          fmt::format("link_speed=\"{}\" is not in NCCL's dictionary", *speed),
          "treated as PCIe Gen3 (8 GT/s): the PCIe bandwidth NCCL assumes is halved or worse",
          "use \"16.0 GT/s PCIe\", \"32.0 GT/s PCIe\" or \"64.0 GT/s PCIe\"");
    }
    if (e.GetOr("link_width", "") == "0") {
      Add(LintSeverity::kInfo, "nccl.link-width-zero", e.line, "link_width=\"0\"",
          "NCCL treats 0 (or empty) as x16, so this is fine as it is",
          "nothing to fix: \"correcting\" it changes nothing; check link_speed instead");
    }
    CheckNumber(e, "link_width");
    if (made_up && (!e.Get("vendor") || !e.Get("device"))) {
      Add(LintSeverity::kWarning, "nccl.fake-switch-ids", e.line,
          fmt::format("made-up switch {} without vendor/device", *busid),
          "NCCL 2.9.6 tried to read them from sysfs and failed (fixed in 2.9.8)",
          "add vendor=\"0xffff\" device=\"0xffff\" subsystem_vendor/device like the vendor files");
    }
  }

  void Gpu(const XmlElement& e, const XmlElement& parent) {
    gpus_.push_back({&e, parent.GetOr("busid", "")});
    for (const char* key : {"dev", "sm", "gdr"}) {
      if (!e.Get(key)) {
        Add(LintSeverity::kInfo, "nccl.gpu-attribute-missing", e.line,
            fmt::format("<gpu> without {}", key), "filled by auto-detection from NVML",
            "nothing, unless this GPU is not on the node");
      }
      CheckNumber(e, key);
    }
    if (!e.Get("rank")) {
      Add(LintSeverity::kInfo, "nccl.gpu-no-rank", e.line, "<gpu> without rank",
          "NCCL sets rank for the local GPU; a <gpu> no rank claims is skipped", "nothing");
    }
  }

  void Net(const XmlElement& e) {
    if (!e.Get("name")) {
      Add(LintSeverity::kError, "nccl.missing-attribute", e.line, "<net> without name",
          "no plugin device can match it", "add name=\"mlx5_0\"");
    }
    if (!e.Get("dev")) {
      Add(LintSeverity::kWarning, "nccl.net-no-dev", e.line, "<net> without dev",
          "ignored until a network plugin fills dev for a device of that name",
          "let NCCL fill it, or add dev=\"N\"");
    }
    CheckNumber(e, "dev");
    if (const std::string* s = e.Get("speed")) {
      if (std::atol(s->c_str()) <= 0) {
        Add(LintSeverity::kWarning, "nccl.net-speed", e.line, fmt::format("speed=\"{}\"", *s),
            "a speed <= 0 becomes 10000 Mb/s (10 Gb/s)",
            "write the port speed in Mb/s, e.g. 400000");
      }
    }
  }

  void CheckCpus() {
    std::map<std::string, int> numaids;
    std::map<std::string, const XmlElement*> masks;
    std::vector<std::pair<const XmlElement*, std::vector<int>>> parsed;
    for (const XmlElement* c : cpus_) {
      const std::string* numa = c->Get("numaid");
      if (!numa) {
        Add(LintSeverity::kError, "nccl.missing-attribute", c->line,
            "<cpu> without numaid" + Written(*c, "numaid"),
            "init fails: \"Attribute numaid of node cpu not found\"", "add numaid=\"N\"");
      } else if (*numa == "-1") {
        Add(LintSeverity::kWarning, "nccl.numa-unknown", c->line, "<cpu numaid=\"-1\">",
            "devices under it have no NUMA home: GPUs may get no path to its NICs (crash in path "
            "computation, nccl #1547, #1674)",
            "put the devices under the <cpu> of their real NUMA node");
      } else if (auto [it, inserted] = numaids.emplace(*numa, c->line); !inserted) {
        Add(LintSeverity::kError, "nccl.duplicate-numa", c->line,
            fmt::format("numaid {} also at line {}", *numa, it->second),
            "two CPU nodes for one NUMA domain split its devices", "merge them");
      }
      const std::string arch = c->GetOr("arch", "");
      // NCCL's CPU architectures match by prefix: x86_64, arm64, ppc64.
      if (!arch.empty() && arch.rfind("x86_64", 0) != 0 && arch.rfind("arm64", 0) != 0 &&
          arch.rfind("ppc64", 0) != 0) {
        Add(LintSeverity::kWarning, "nccl.cpu-arch", c->line, fmt::format("arch=\"{}\"", arch),
            "not an architecture NCCL knows (x86_64, arm64, ppc64, by prefix): it falls back to "
            "none and takes the link between sockets as free (LOC_BW), routing across them as if "
            "it cost nothing",
            arch == "aarch64" ? "write arch=\"arm64\" (NCCL's name for aarch64)"
                              : "write arch=\"x86_64\", \"arm64\" or \"ppc64\"");
      }
      // NCCL reads vendor, familyid and modelid for x86 only (arm64 and ppc64 have none).
      const bool x86 = arch.empty() || arch == "x86_64";
      if (arch.empty() || (x86 && c->GetOr("vendor", "").empty())) {
        Add(LintSeverity::kWarning, "nccl.cpu-attributes", c->line,
            fmt::format("<cpu> without {}", arch.empty() ? "arch" : "vendor"),
            "filled only if a GPU or NIC the job uses hangs below it; otherwise (and always on "
            "NCCL < 2.8) init fails: \"Attribute arch of node cpu not found\" (nccl #379, #1726)",
            "add arch=\"x86_64\" vendor=\"GenuineIntel\"|\"AuthenticAMD\" (and familyid, modelid "
            "for Intel)");
      } else if (c->GetOr("vendor", "") == "GenuineIntel" &&
                 (!c->Get("familyid") || !c->Get("modelid"))) {
        Add(LintSeverity::kWarning, "nccl.cpu-attributes", c->line,
            "Intel <cpu> without familyid/modelid",
            "required for Intel: NCCL picks the inter-socket bandwidth from the model",
            "add familyid=\"6\" modelid=\"143\" (Sapphire Rapids) as /proc/cpuinfo says");
      }
      if (const std::string* aff = c->Get("affinity")) {
        auto cpus = ParseCpuMask(*aff);
        if (!cpus) {
          Add(LintSeverity::kError, "nccl.affinity-format", c->line,
              fmt::format("affinity=\"{}\" is not a cpumap mask", *aff),
              "the CPU binding NCCL computes is wrong",
              "use the format of /sys/devices/system/node/nodeN/cpumap: 32-bit hex words, comma "
              "separated, most significant first");
          continue;
        }
        if (auto [it, inserted] = masks.emplace(*aff, c); !inserted) {
          Add(LintSeverity::kError, "nccl.affinity-copied", c->line,
              fmt::format("the same affinity mask as the <cpu> at line {}", it->second->line),
              "both NUMA domains claim the same cores: threads bind to the wrong socket "
              "(Azure/azhpc-images PR #393)",
              "copy each node's mask from /sys/devices/system/node/nodeN/cpumap");
        } else {
          for (const auto& [other, other_cpus] : parsed) {
            std::vector<int> both;
            std::set_intersection(cpus->begin(), cpus->end(), other_cpus.begin(), other_cpus.end(),
                                  std::back_inserter(both));
            if (!both.empty()) {
              Add(LintSeverity::kError, "nccl.affinity-overlap", c->line,
                  fmt::format("affinity shares {} cores with the <cpu> at line {}", both.size(),
                              other->line),
                  "NUMA domains overlap: CPU binding is wrong for some ranks",
                  "copy each node's mask from /sys/devices/system/node/nodeN/cpumap");
              break;
            }
          }
        }
        parsed.emplace_back(c, *cpus);
      }
    }
  }

  void CheckNvlinks() {
    std::map<const XmlElement*, int> switch_links;  // per <gpu>
    std::set<std::string> gpu_busids;
    for (const auto& [g, busid] : gpus_) gpu_busids.insert(busid);
    gpu_busids.insert(pci_gpus_.begin(), pci_gpus_.end());
    std::map<const XmlElement*, std::vector<const XmlElement*>> fanout;
    for (const auto& [link, gpu] : nvlinks_) {
      const std::string target = link->GetOr("target", "");
      const std::string tclass = link->GetOr("tclass", "");
      const std::string count = link->GetOr("count", "");
      CheckNumber(*link, "count");
      if (tclass.empty() || count.empty()) {
        Add(LintSeverity::kError, "nccl.missing-attribute", link->line,
            fmt::format("<nvlink> without {}", tclass.empty() ? "tclass" : "count"),
            "init fails: \"Attribute ... of node nvlink not found\"",
            "add tclass=\"0x068000\" (NVSwitch) or \"0x030200\" (GPU) and count=\"N\"");
        continue;
      }
      if (tclass != kClassGpu && tclass != kClassNvSwitch && tclass != kClassCpu) {
        Add(LintSeverity::kError, "nccl.nvlink-tclass", link->line,
            fmt::format("tclass=\"{}\"", tclass), "the link connects to nothing NCCL knows",
            "use 0x068000 (NVSwitch), 0x030200 (GPU) or 0x068001 (CPU)");
        continue;
      }
      const bool busid_like = IsCanonicalBusId(target) || IsNvlinkSentinel(target);
      if (tclass == kClassGpu) {
        if (!busid_like) {
          Add(LintSeverity::kError, "nccl.nvlink-target", link->line,
              fmt::format("target=\"{}\" is not a bus id", target),
              "no GPU matches: the NVLink is dropped",
              "write the peer GPU's bus id, e.g. target=\"0000:07:00.0\"");
        }
        const std::string* own = nullptr;
        for (const auto& [g, b] : gpus_) {
          if (g == gpu) own = &b;
        }
        if (own && *own == target) {
          Add(LintSeverity::kWarning, "nccl.nvlink-self", link->line,
              "an NVLink whose target is the GPU itself",
              "a self-loop: NCCL builds no peer path from it", "list the peer GPU's bus id");
        } else if (busid_like && !gpu_busids.count(target) && !IsNvlinkSentinel(target)) {
          Add(LintSeverity::kWarning, "nccl.nvlink-unknown-peer", link->line,
              fmt::format("NVLink to {}, which is no GPU in this file", target),
              "kept only if auto-detection finds that GPU", "check the bus id");
        }
      } else if (tclass == kClassNvSwitch) {
        switch_links[gpu] += std::atoi(count.c_str());
        if (gpu_busids.count(target)) fanout[gpu].push_back(link);
      }
    }
    // Mistake 10: NVSwitch links written once per peer GPU.
    for (const auto& [gpu, links] : fanout) {
      if (links.size() < 2) continue;
      int total = 0;
      for (const auto* l : links) total += std::atoi(l->GetOr("count", "0").c_str());
      const int per = std::atoi(links.front()->GetOr("count", "0").c_str());
      Add(LintSeverity::kError, "nccl.nvswitch-fanout", links.front()->line,
          fmt::format("{} <nvlink tclass=\"0x068000\"> entries target peer GPUs instead of "
                      "NVSwitches",
                      links.size()),
          fmt::format("NCCL ignores target for NVSwitch links and adds them all to one NVS node: "
                      "{} links instead of {} ({}x the real NVLink bandwidth)",
                      total, per, links.size()),
          "one entry per NVSwitch (or a single target=\"fffffff:ff:ff\" entry with the GPU's "
          "total count)");
    }
    // NVLink totals must agree between the GPUs of one NVSwitch system.
    std::map<int, std::vector<const XmlElement*>> by_total;
    for (const auto& [g, n] : switch_links) by_total[n].push_back(g);
    if (by_total.size() > 1) {
      const auto& common =
          *std::max_element(by_total.begin(), by_total.end(), [](const auto& a, const auto& b) {
            return a.second.size() < b.second.size() ||
                   (a.second.size() == b.second.size() && a.first < b.first);
          });
      for (const auto& [n, gpus] : by_total) {
        if (n == common.first) continue;
        for (const auto* g : gpus) {
          Add(LintSeverity::kWarning, "nccl.nvlink-count-mismatch", g->line,
              fmt::format("{} NVSwitch links where the other GPUs have {}", n, common.first),
              "NCCL sizes NVLink bandwidth per GPU: one GPU with fewer links slows every ring "
              "(nccl #1182)",
              "check `nvidia-smi nvlink -s` on that GPU: a link may be down");
        }
      }
    }
  }

  const NcclXml& doc_;
  LintReport report_;
  std::vector<const XmlElement*> cpus_;
  std::vector<std::pair<const XmlElement*, std::string>> gpus_;  // <gpu>, parent busid
  std::vector<std::pair<const XmlElement*, const XmlElement*>> nvlinks_;
  std::set<std::string> pci_gpus_;
  std::map<std::string, int> busids_;
};

// Collects every <pci> with its <cpu> ancestor's numaid and its line.
void CollectPci(const XmlElement& e, const std::string& numa,
                std::vector<std::tuple<const XmlElement*, std::string>>* out) {
  for (const auto& c : e.children) {
    std::string n = numa;
    if (c.name == "cpu") n = c.GetOr("numaid", "");
    if (c.name == "pci") out->emplace_back(&c, n);
    CollectPci(c, n, out);
  }
}

}  // namespace

LintReport LintNcclXml(const NcclXml& doc) { return Linter(doc).Run(); }

void LintAgainstNode(const NcclXml& doc, const NodeTopology& node, LintReport* report) {
  auto add = [&](LintSeverity s, std::string id, int line, std::string msg, std::string nccl,
                 std::string fix) {
    report->Add({s, std::move(id), line, std::move(msg), std::move(nccl), std::move(fix)});
  };
  std::vector<std::tuple<const XmlElement*, std::string>> pcis;
  CollectPci(doc.root, "", &pcis);
  std::set<std::string> in_file;
  for (const auto& [e, numa] : pcis) {
    const std::string busid = e->GetOr("busid", "");
    in_file.insert(busid);
    const int idx = node.FindPci(busid);
    const bool fake = busid.rfind("ffff:", 0) == 0;
    const std::string cls = e->GetOr("class", "");
    const bool endpoint = cls.rfind("0x03", 0) == 0 || cls.rfind("0x02", 0) == 0;
    if (idx < 0) {
      if (!fake && endpoint) {
        add(LintSeverity::kError, "node.busid-missing", e->line,
            fmt::format("{} is not a PCI device of this node", busid),
            "\"Could not find real path of /sys/class/pci_bus/...\" (a host dump used in a VM, "
            "nccl #977)",
            "dump the topology on this node (NCCL_TOPO_DUMP_FILE) or fix the bus ids");
      }
      continue;
    }
    const int real_numa = node.NumaOf(idx);
    if (!numa.empty() && numa != "-1" && real_numa >= 0 && std::to_string(real_numa) != numa) {
      add(LintSeverity::kError, "node.wrong-numa", e->line,
          fmt::format("{} is under <cpu numaid=\"{}\"> but sits on NUMA node {}", busid, numa,
                      real_numa),
          "NCCL binds threads and picks NICs for the wrong socket (azhpc-images PR #314)",
          fmt::format("move it under <cpu numaid=\"{}\">", real_numa));
    }
  }
  // Every GPU and NIC of the node should be in the file.
  for (const auto& g : node.gpus) {
    const std::string& b = node.pci[static_cast<size_t>(g.pci)].busid;
    if (!in_file.count(b)) {
      add(LintSeverity::kWarning, "node.gpu-not-in-file", 0,
          fmt::format("GPU{} ({}) is not in the file", g.index, b),
          "auto-detected and attached where sysfs says: the file has no effect on it",
          "add it, or accept auto-detection");
    }
  }
  for (const auto& n : node.nics) {
    const std::string& b = node.pci[static_cast<size_t>(n.pci)].busid;
    if (!in_file.count(b) && !n.ports.empty()) {
      add(LintSeverity::kWarning, "node.nic-not-in-file", 0,
          fmt::format("NIC {} ({}) is not in the file", n.name, b),
          "auto-detected and attached where sysfs says", "add it, or accept auto-detection");
    }
  }
  // Affinity masks against the NUMA cpusets.
  for (const auto& c : doc.root.children) {
    if (c.name != "cpu") continue;
    const NumaNode* real = node.FindNuma(std::atoi(c.GetOr("numaid", "-1").c_str()));
    const std::string* aff = c.Get("affinity");
    if (!real || !aff) continue;
    auto cpus = ParseCpuMask(*aff);
    if (cpus && *cpus != real->cpus) {
      add(LintSeverity::kError, "node.affinity-mismatch", c.line,
          fmt::format("affinity {} is CPUs {}, but NUMA node {} has CPUs {}", *aff,
                      FormatCpuList(*cpus), real->id, real->cpulist),
          "NCCL binds its threads to the wrong cores",
          fmt::format("affinity=\"{}\"",
                      CpuMask(real->cpus,
                              static_cast<int>(std::count(aff->begin(), aff->end(), ',') + 1))));
    }
  }
  // A NIC that is PHB/SYS from every GPU: GPUDirect RDMA stays off (NCCL's default level PXB).
  for (const auto& n : node.nics) {
    if (node.gpus.empty() || n.ports.empty()) continue;
    bool near = false;
    for (const auto& g : node.gpus) {
      const NcclPath p = PathBetween(node, g.pci, n.pci).nccl;
      near = near || p == NcclPath::kPix || p == NcclPath::kPxb;
    }
    if (!near) {
      add(LintSeverity::kWarning, "node.nic-far-from-gpus", 0,
          fmt::format("NIC {} is PHB or SYS from every GPU", n.name),
          "GPUDirect RDMA is off for it (NCCL_NET_GDR_LEVEL defaults to PXB): traffic bounces "
          "through host memory",
          "use a NIC behind the GPUs' PCIe switch, or raise NCCL_NET_GDR_LEVEL knowingly");
    }
  }
  // PCIe links trained below their maximum.
  for (const auto& d : node.pci) {
    if (d.kind != DeviceKind::kGpu && d.kind != DeviceKind::kNic) continue;
    if (d.max.speed_gt_per_s > 0 && d.current.speed_gt_per_s > 0 &&
        (d.current.speed_gt_per_s < d.max.speed_gt_per_s || d.current.width < d.max.width)) {
      add(LintSeverity::kWarning, "node.pcie-downtrained", 0,
          fmt::format("{} {} runs at {} GT/s x{} of {} GT/s x{}", DeviceKindName(d.kind), d.busid,
                      d.current.speed_gt_per_s, d.current.width, d.max.speed_gt_per_s, d.max.width),
          "NCCL reads the max link values: it will overestimate this path",
          "reseat or check the riser; an idle GPU may downtrain until loaded");
    }
  }
  // NVLink counts that differ between GPUs of one NVSwitch system.
  std::map<int, std::vector<int>> totals;
  for (const auto& g : node.gpus) {
    if (const int sw = g.NvSwitchLinkCount(); sw > 0) totals[sw].push_back(g.index);
  }
  if (totals.size() > 1) {
    add(LintSeverity::kError, "node.nvlink-count-mismatch", 0,
        fmt::format("GPUs disagree on NVSwitch link counts ({} distinct totals)", totals.size()),
        "NCCL sizes every ring to the slowest GPU",
        "find the GPU with links down: nvidia-smi nvlink -s");
  }
  std::stable_sort(report->findings.begin(), report->findings.end(),
                   [](const LintFinding& a, const LintFinding& b) { return a.line < b.line; });
}

}  // namespace gpufleet::topo
