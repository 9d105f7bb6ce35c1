#include "topo/smi_matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>

#include "base/strings.h"

namespace gpufleet::topo {

std::string SmiMatrix::NicName(const std::string& column) const {
  auto it = nic_legend.find(column);
  return it == nic_legend.end() ? column : it->second;
}

const std::string& SmiMatrix::Cell(const std::string& row, const std::string& column) const {
  static const std::string kNone;
  auto r = std::find(devices.begin(), devices.end(), row);
  auto c = std::find(devices.begin(), devices.end(), column);
  if (r == devices.end() || c == devices.end()) return kNone;
  return cells[static_cast<size_t>(r - devices.begin())][static_cast<size_t>(c - devices.begin())];
}

namespace {

std::string StripAnsiAndCr(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
      continue;
    }
    if (text[i] == '\r') continue;
    out += text[i];
  }
  return out;
}

std::vector<std::string> Tokens(std::string_view line) {
  std::vector<std::string> t;
  std::string cur;
  for (char c : line) {
    if (c == ' ' || c == '\t') {
      if (!cur.empty()) t.push_back(cur), cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) t.push_back(cur);
  return t;
}

// Joins the multi-word header names nvidia-smi prints.
std::vector<std::string> HeaderTokens(std::string_view line) {
  std::vector<std::string> raw = Tokens(line), out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == "CPU" && i + 1 < raw.size() && raw[i + 1] == "Affinity") {
      out.push_back("CPU Affinity"), ++i;
    } else if (raw[i] == "NUMA" && i + 1 < raw.size() && raw[i + 1] == "Affinity") {
      out.push_back("NUMA Affinity"), ++i;
    } else if (raw[i] == "GPU" && i + 2 < raw.size() && raw[i + 1] == "NUMA" &&
               raw[i + 2] == "ID") {
      out.push_back("GPU NUMA ID"), i += 2;
    } else {
      out.push_back(raw[i]);
    }
  }
  return out;
}

bool IsPathCode(const std::string& c) {
  static const std::regex kCode(R"(X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)");
  return std::regex_match(c, kCode);
}

bool IsCpuList(const std::string& c) {
  static const std::regex kList(R"(\d+(-\d+)?(,\d+(-\d+)?)*)");
  return c == "N/A" || std::regex_match(c, kList);
}

// One node, N/A, -1, or (Grace: GH200, GB200) a list of nodes: the CPU's node and the
// memory-only nodes of the GPUs' coherent memory, "0,3-9,11-17".
bool IsNumaId(const std::string& c) {
  static const std::regex kId(R"(N/A|-1|\d+(-\d+)?(,\d+(-\d+)?)*)");
  return std::regex_match(c, kId);
}

}  // namespace

Result<SmiMatrix> ParseSmiMatrix(std::string_view raw, const std::string& file) {
  const std::string text = StripAnsiAndCr(raw);
  const std::vector<std::string> lines = strings::Split(text, '\n');
  auto fail = [&](size_t line, const std::string& why) -> Error {
    return InvalidArgument(
        fmt::format("{}:{}: not usable `nvidia-smi topo -m` output: {}", file, line + 1, why));
  };
  size_t header = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<std::string> t = Tokens(lines[i]);
    if (!t.empty() && t[0] == "GPU0") {
      header = i;
      break;
    }
  }
  if (header == lines.size()) {
    return InvalidArgument(fmt::format(
        "{}: not `nvidia-smi topo -m` output: no header line starting with GPU0", file));
  }
  SmiMatrix m;
  std::vector<std::string> extra;  // trailing attribute columns, in order
  for (const std::string& h : HeaderTokens(lines[header])) {
    if (h == "CPU Affinity" || h == "NUMA Affinity" || h == "GPU NUMA ID") {
      extra.push_back(h);
    } else if (!extra.empty()) {
      return fail(header, fmt::format("column '{}' after '{}'", h, extra.back()));
    } else {
      m.devices.push_back(h);
    }
  }
  for (const auto& d : m.devices) {
    if (d.rfind("GPU", 0) == 0) ++m.gpus;
  }
  std::vector<bool> seen(m.devices.size(), false);
  m.cells.assign(m.devices.size(), {});
  m.cpu_affinity.assign(static_cast<size_t>(m.gpus), "");
  m.numa_affinity.assign(static_cast<size_t>(m.gpus), "");
  m.gpu_numa_id.assign(static_cast<size_t>(m.gpus), "");
  size_t i = header + 1;
  for (; i < lines.size(); ++i) {
    std::vector<std::string> t = Tokens(lines[i]);
    if (t.empty()) break;  // the blank line before the legend
    if (t[0] == "Legend:") break;
    auto it = std::find(m.devices.begin(), m.devices.end(), t[0]);
    if (it == m.devices.end()) {
      return fail(i, fmt::format("row '{}' has no column in the header (columns lost in a "
                                 "copy?)",
                                 t[0]));
    }
    const size_t r = static_cast<size_t>(it - m.devices.begin());
    if (seen[r]) return fail(i, fmt::format("row '{}' appears twice", t[0]));
    seen[r] = true;
    if (t.size() < m.devices.size() + 1) {
      return fail(i, fmt::format("row '{}' has {} path cells, the header has {} devices", t[0],
                                 t.size() - 1, m.devices.size()));
    }
    for (size_t c = 0; c < m.devices.size(); ++c) {
      const std::string& cell = t[c + 1];
      if (!IsPathCode(cell)) {
        return fail(i, fmt::format("row '{}', column '{}': '{}' is not a path code (X, NV#, PIX, "
                                   "PXB, PHB, NODE, SYS)",
                                   t[0], m.devices[c], cell));
      }
      m.cells[r].push_back(cell);
    }
    std::vector<std::string> rest(t.begin() + static_cast<long>(m.devices.size()) + 1, t.end());
    const bool gpu_row = r < static_cast<size_t>(m.gpus);
    if (!gpu_row) {
      if (!rest.empty()) return fail(i, fmt::format("row '{}' has extra cells", t[0]));
      continue;
    }
    if (rest.size() > extra.size()) return fail(i, fmt::format("row '{}' has extra cells", t[0]));
    // A GPU row cut short (a wrapped or truncated paste) would leave its NUMA placement empty.
    if (rest.size() < extra.size()) {
      return fail(i, fmt::format("row '{}' has no {} cell (the header has it): truncated paste?",
                                 t[0], extra[rest.size()]));
    }
    for (size_t k = 0; k < rest.size(); ++k) {
      if (extra[k] == "CPU Affinity") {
        if (!IsCpuList(rest[k])) {
          return fail(i, fmt::format("row '{}': CPU affinity '{}' is not a CPU list (truncated "
                                     "paste?)",
                                     t[0], rest[k]));
        }
        m.cpu_affinity[r] = rest[k];
      } else if (extra[k] == "NUMA Affinity") {
        if (!IsNumaId(rest[k])) {
          return fail(i, fmt::format("row '{}': NUMA affinity '{}' is not a node id or list", t[0],
                                     rest[k]));
        }
        m.numa_affinity[r] = rest[k];
      } else {
        m.gpu_numa_id[r] = rest[k];
      }
    }
  }
  for (size_t r = 0; r < m.devices.size(); ++r) {
    if (!seen[r]) return fail(i, fmt::format("no row for column '{}'", m.devices[r]));
  }
  for (size_t r = 0; r < m.devices.size(); ++r) {
    for (size_t c = 0; c < m.devices.size(); ++c) {
      if ((r == c) != (m.cells[r][c] == "X")) {
        return fail(header,
                    fmt::format("'X' off the diagonal at {}/{}", m.devices[r], m.devices[c]));
      }
      if (m.cells[r][c] != m.cells[c][r]) {
        return fail(header, fmt::format("asymmetric: {}/{} is {} but {}/{} is {}", m.devices[r],
                                        m.devices[c], m.cells[r][c], m.devices[c], m.devices[r],
                                        m.cells[c][r]));
      }
    }
  }
  // NIC legend: "  NIC0: mlx5_0".
  static const std::regex kLegend(R"(\s*(NIC\d+):\s*(\S+)\s*)");
  for (; i < lines.size(); ++i) {
    std::smatch s;
    if (std::regex_match(lines[i], s, kLegend)) m.nic_legend[s[1]] = s[2];
  }
  for (const auto& d : m.devices) {
    if (d.rfind("NIC", 0) == 0 && !m.nic_legend.empty() && !m.nic_legend.count(d)) {
      return InvalidArgument(fmt::format("{}: the NIC legend has no entry for {}", file, d));
    }
  }
  return m;
}

SmiMatrix MatrixOf(const NodeTopology& t, bool pcie_only) {
  SmiMatrix m;
  std::vector<int> pci;
  for (const auto& g : t.gpus) {
    m.devices.push_back(fmt::format("GPU{}", g.index));
    pci.push_back(g.pci);
  }
  m.gpus = static_cast<int>(t.gpus.size());
  for (size_t k = 0; k < t.nics.size(); ++k) {
    const std::string col = fmt::format("NIC{}", k);
    m.devices.push_back(col);
    m.nic_legend[col] = t.nics[k].name;
    pci.push_back(t.nics[k].pci);
  }
  // PCIe only: the same node without NVLinks, like `nvidia-smi topo -mp`.
  NodeTopology pcie;
  if (pcie_only) {
    pcie = t;
    for (auto& g : pcie.gpus) g.nvlinks.clear();
  }
  const NodeTopology& paths = pcie_only ? pcie : t;
  for (size_t r = 0; r < pci.size(); ++r) {
    std::vector<std::string> row;
    for (size_t c = 0; c < pci.size(); ++c)
      row.push_back(PathBetween(paths, pci[r], pci[c]).Label());
    m.cells.push_back(row);
  }
  std::vector<int> all;
  for (const auto& n : t.numa) all.insert(all.end(), n.cpus.begin(), n.cpus.end());
  std::sort(all.begin(), all.end());
  for (const auto& g : t.gpus) {
    const int numa = t.NumaOf(g.pci);
    const NumaNode* node = t.FindNuma(numa);
    m.cpu_affinity.push_back(node ? node->cpulist : (all.empty() ? "N/A" : FormatCpuList(all)));
    m.numa_affinity.push_back(numa >= 0 ? std::to_string(numa) : "N/A");
    m.gpu_numa_id.push_back("N/A");
  }
  return m;
}

std::string RenderSmiMatrix(const SmiMatrix& m) {
  std::string out = "\t";
  for (const auto& d : m.devices) out += d + "\t";
  out += "CPU Affinity\tNUMA Affinity\tGPU NUMA ID\n";
  for (size_t r = 0; r < m.devices.size(); ++r) {
    out += m.devices[r];
    for (const auto& c : m.cells[r]) out += "\t" + (c == "X" ? std::string(" X ") : c);
    if (r < static_cast<size_t>(m.gpus)) {
      out += fmt::format("\t{}\t{}\t\t{}", m.cpu_affinity[r], m.numa_affinity[r], m.gpu_numa_id[r]);
    }
    out += "\n";
  }
  out +=
      "\nLegend:\n\n"
      "  X    = Self\n"
      "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
      "(e.g., QPI/UPI)\n"
      "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
      "within a NUMA node\n"
      "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
      "Bridge)\n"
      "  PIX  = Connection traversing at most a single PCIe bridge\n"
      "  NV#  = Connection traversing a bonded set of # NVLinks\n";
  if (!m.nic_legend.empty()) {
    out += "\nNIC Legend:\n\n";
    for (const auto& d : m.devices) {
      auto it = m.nic_legend.find(d);
      if (it != m.nic_legend.end()) out += fmt::format("  {}: {}\n", d, it->second);
    }
  }
  return out;
}

std::vector<MatrixDifference> CompareMatrices(const SmiMatrix& ours, const SmiMatrix& theirs) {
  // Devices by their real names: GPUn as is, NIC columns through the legend.
  auto names = [](const SmiMatrix& m) {
    std::map<std::string, std::string> by_name;  // real name -> column
    for (const auto& d : m.devices) by_name[d.rfind("GPU", 0) == 0 ? d : m.NicName(d)] = d;
    return by_name;
  };
  const auto a = names(ours);
  const auto b = names(theirs);
  std::vector<std::string> all;
  for (const auto& [n, c] : a) all.push_back(n);
  for (const auto& [n, c] : b) {
    if (!a.count(n)) all.push_back(n);
  }
  std::vector<MatrixDifference> out;
  for (const auto& r : all) {
    for (const auto& c : all) {
      if (r > c) continue;  // the matrix is symmetric
      auto cell = [&](const SmiMatrix& m, const std::map<std::string, std::string>& idx) {
        auto ri = idx.find(r), ci = idx.find(c);
        return ri == idx.end() || ci == idx.end() ? std::string() : m.Cell(ri->second, ci->second);
      };
      const std::string x = cell(ours, a), y = cell(theirs, b);
      if (x != y) out.push_back({r, c, x, y});
    }
  }
  for (int g = 0; g < std::min(ours.gpus, theirs.gpus); ++g) {
    const std::string& x = ours.numa_affinity[static_cast<size_t>(g)];
    const std::string& y = theirs.numa_affinity[static_cast<size_t>(g)];
    if (!x.empty() && !y.empty() && x != y) {
      out.push_back({fmt::format("GPU{}", g), "NUMA Affinity", x, y});
    }
  }
  return out;
}

}  // namespace gpufleet::topo
