#include "topo/node_topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "base/strings.h"

namespace gpufleet::topo {

std::string_view DeviceKindName(DeviceKind k) {
  switch (k) {
    case DeviceKind::kBridge:
      return "bridge";
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kNic:
      return "nic";
    case DeviceKind::kNvSwitch:
      return "nvswitch";
    case DeviceKind::kNvme:
      return "nvme";
    case DeviceKind::kOther:
      return "other";
  }
  return "?";
}

double PciLink::BytesPerS() const {
  // Gen1/2 use 8b/10b encoding, Gen3+ 128b/130b (PCI-SIG base specifications);
  // Gen6 (64 GT/s PAM4, FLIT) is ~1/8 per lane per GT/s like Gen5.
  const double per_lane = speed_gt_per_s <= 5 ? speed_gt_per_s * 1e9 * 8 / 10 / 8
                                              : speed_gt_per_s * 1e9 * 128 / 130 / 8;
  return per_lane * width;
}

int Gpu::NvLinkCount() const {
  int n = 0;
  for (const auto& l : nvlinks) n += l.count;
  return n;
}

int Gpu::NvSwitchLinkCount() const {
  int n = 0;
  for (const auto& l : nvlinks) n += l.to == NvLink::To::kNvSwitch ? l.count : 0;
  return n;
}

int NodeTopology::FindPci(std::string_view busid) const {
  for (size_t i = 0; i < pci.size(); ++i) {
    if (pci[i].busid == busid) return static_cast<int>(i);
  }
  return -1;
}

const NumaNode* NodeTopology::FindNuma(int id) const {
  for (const auto& n : numa) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

int NodeTopology::NumaOf(int i) const { return i < 0 ? -1 : pci[static_cast<size_t>(i)].numa; }

std::string_view NcclPathName(NcclPath p) {
  switch (p) {
    case NcclPath::kLoc:
      return "LOC";
    case NcclPath::kNvl:
      return "NVL";
    case NcclPath::kPix:
      return "PIX";
    case NcclPath::kPxb:
      return "PXB";
    case NcclPath::kPhb:
      return "PHB";
    case NcclPath::kSys:
      return "SYS";
  }
  return "?";
}

std::string Path::Label() const {
  switch (smi) {
    case SmiPath::kSelf:
      return "X";
    case SmiPath::kNvLink:
      return fmt::format("NV{}", nvlinks);
    case SmiPath::kPix:
      return "PIX";
    case SmiPath::kPxb:
      return "PXB";
    case SmiPath::kPhb:
      return "PHB";
    case SmiPath::kNode:
      return "NODE";
    case SmiPath::kSys:
      return "SYS";
  }
  return "?";
}

namespace {

std::vector<int> Ancestors(const NodeTopology& t, int i) {
  std::vector<int> chain;  // nearest first
  for (int p = t.pci[static_cast<size_t>(i)].parent; p >= 0;
       p = t.pci[static_cast<size_t>(p)].parent) {
    chain.push_back(p);
  }
  return chain;
}

const Gpu* GpuAt(const NodeTopology& t, int pci) {
  for (const auto& g : t.gpus) {
    if (g.pci == pci) return &g;
  }
  return nullptr;
}

int NvLinksBetween(const NodeTopology& t, const Gpu& a, const Gpu& b) {
  int direct = 0;
  for (const auto& l : a.nvlinks) {
    if (l.to == NvLink::To::kGpu && l.target == t.pci[static_cast<size_t>(b.pci)].busid) {
      direct += l.count;
    }
  }
  if (direct > 0) return direct;
  // Through NVSwitches every GPU reaches every other with all its switch links;
  // nvidia-smi prints that total (NV12 on A100, NV18 on H100) for each pair.
  const int a_sw = a.NvSwitchLinkCount();
  const int b_sw = b.NvSwitchLinkCount();
  return (a_sw > 0 && b_sw > 0) ? std::min(a_sw, b_sw) : 0;
}

}  // namespace

Path PathBetween(const NodeTopology& t, int a, int b) {
  Path p;
  if (a == b) {
    p.smi = SmiPath::kSelf;
    p.nccl = NcclPath::kLoc;
    return p;
  }
  const Gpu* ga = GpuAt(t, a);
  const Gpu* gb = GpuAt(t, b);
  if (ga && gb) {
    if (int n = NvLinksBetween(t, *ga, *gb); n > 0) {
      p.smi = SmiPath::kNvLink;
      p.nvlinks = n;
      p.nccl = NcclPath::kNvl;
      return p;
    }
  }
  const auto& da = t.pci[static_cast<size_t>(a)];
  const auto& db = t.pci[static_cast<size_t>(b)];
  if (da.host_bridge != db.host_bridge || da.host_bridge < 0) {
    const bool same_numa = da.numa >= 0 && da.numa == db.numa;
    p.smi = same_numa ? SmiPath::kNode : SmiPath::kSys;
    // NCCL has no NODE level: both become PHB within a NUMA node.
    p.nccl = same_numa ? NcclPath::kPhb : NcclPath::kSys;
    return p;
  }
  const std::vector<int> up_a = Ancestors(t, a);
  const std::vector<int> up_b = Ancestors(t, b);
  // Lowest common bridge and how many levels each side climbs to reach it.
  for (size_t i = 0; i < up_a.size(); ++i) {
    auto it = std::find(up_b.begin(), up_b.end(), up_a[i]);
    if (it == up_b.end()) continue;
    const size_t j = static_cast<size_t>(it - up_b.begin());
    // Through one switch: device -> downstream port -> upstream port (the LCA)
    // on each side, i.e. at most two levels up ("a single PCIe bridge" in
    // nvidia-smi's legend counts the switch, not its internal ports).
    const bool one_switch = i <= 1 && j <= 1;
    p.smi = one_switch ? SmiPath::kPix : SmiPath::kPxb;
    p.nccl = one_switch ? NcclPath::kPix : NcclPath::kPxb;
    return p;
  }
  p.smi = SmiPath::kPhb;
  p.nccl = NcclPath::kPhb;
  return p;
}

std::vector<int> ParseCpuList(std::string_view list) {
  std::vector<int> cpus;
  for (const std::string& part : strings::Split(strings::Trim(list), ',')) {
    std::string_view r = strings::Trim(part);
    if (r.empty()) continue;
    size_t dash = r.find('-');
    int lo = 0, hi = 0;
    std::from_chars(r.data(), r.data() + (dash == std::string_view::npos ? r.size() : dash), lo);
    hi = lo;
    if (dash != std::string_view::npos)
      std::from_chars(r.data() + dash + 1, r.data() + r.size(), hi);
    for (int c = lo; c <= hi && c - lo < 65536; ++c) cpus.push_back(c);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string CpuMask(const std::vector<int>& cpus, int min_words) {
  int max_cpu = cpus.empty() ? 0 : *std::max_element(cpus.begin(), cpus.end());
  const int words = std::max(min_words, max_cpu / 32 + 1);
  std::vector<uint32_t> w(static_cast<size_t>(words), 0);
  for (int c : cpus) w[static_cast<size_t>(c / 32)] |= 1u << (c % 32);
  std::string out;
  for (int i = words - 1; i >= 0; --i) {
    if (!out.empty()) out += ',';
    out += fmt::format("{:08x}", w[static_cast<size_t>(i)]);
  }
  return out;
}

std::optional<std::vector<int>> ParseCpuMask(std::string_view mask) {
  std::vector<std::string> words = strings::Split(strings::Trim(mask), ',');
  std::vector<int> cpus;
  const int n = static_cast<int>(words.size());
  for (int i = 0; i < n; ++i) {
    const std::string& word = words[static_cast<size_t>(i)];
    if (word.empty() || word.size() > 8) return std::nullopt;
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v, 16);
    if (ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
    const int base = (n - 1 - i) * 32;
    for (int bit = 0; bit < 32; ++bit) {
      if (v & (1u << bit)) cpus.push_back(base + bit);
    }
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

std::optional<double> NvLinkMBpsPerLink(uint16_t device_id) {
  struct Range {
    uint16_t from, to;
    double mbps;
  };
  static constexpr Range kRanges[] = {
      {0x15f0, 0x15ff, 20000},  // Pascal GP100 (P100 SXM2), NVLink 1
      {0x1db0, 0x1dff, 25000},  // Volta GV100, NVLink 2
      {0x20b0, 0x20ff, 25000},  // Ampere GA100, NVLink 3
      {0x2300, 0x234f, 25000},  // Hopper GH100 (H100, H200, H800, GH200), NVLink 4
      {0x2900, 0x29ff, 50000},  // Blackwell GB100/GB200 (B100, B200, GB200), NVLink 5
  };
  for (const auto& r : kRanges) {
    if (device_id >= r.from && device_id <= r.to) return r.mbps;
  }
  return std::nullopt;
}

}  // namespace gpufleet::topo
