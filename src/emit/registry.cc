#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "base/strings.h"
#include "emit/emit.h"
#include "topo/affinity.h"

namespace gpufleet::emit {

const std::vector<Target>& Targets() {
  static const std::vector<Target> kTargets = {
      {"nccl-env", "NCCL and PyTorch environment, each line with why and its range", &EmitNcclEnv},
      {"torchrun", "multi-node torchrun launch script with per-rank NUMA binding", &EmitTorchrun},
      {"sbatch", "Slurm batch script running torchrun on every node", &EmitSbatch},
      {"slurm-conf", "gres.conf (GPUs, device files, cores) and topology.conf (switch tree)",
       &EmitSlurmConf},
      {"volcano", "Volcano batch.volcano.sh/v1alpha1 Job with gang scheduling", &EmitVolcano},
      {"kubelet", "KubeletConfiguration with CPU, memory and topology managers", &EmitKubelet},
      {"prometheus-scrape", "Prometheus config scraping every node's gpufleet agent",
       &EmitPrometheusScrape},
      {"prometheus-rules",
       "Prometheus alerting rules on the agent's metrics, thresholds from the spec",
       &EmitPrometheusRules},
      {"dcgm-rules",
       "Prometheus recording rules publishing the agent's series under the DCGM exporter's "
       "names, for DCGM dashboards",
       &EmitDcgmRules},
      {"grafana", "Grafana dashboard over the agent's metrics", &EmitGrafana},
      {"daemonset", "Kubernetes DaemonSet, Service and ServiceMonitor running the agent",
       &EmitDaemonSet},
  };
  return kTargets;
}

const Target* FindTarget(std::string_view name) {
  for (const auto& t : Targets()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string CommentSafe(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

std::string Dns1123(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(c));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 50) out.resize(50);
  return out.empty() ? "job" : out;
}

Result<double> AgentScrapeSeconds(const EmitOptions& o) {
  if (o.agent_scheme != "http" && o.agent_scheme != "https") {
    return InvalidArgument(fmt::format("--agent-scheme {}: want http or https", o.agent_scheme));
  }
  // A Prometheus duration such as 15s, 1m, 500ms: digits then a unit.
  const std::string& d = o.scrape_interval;
  size_t digits = 0;
  while (digits < d.size() && std::isdigit(static_cast<unsigned char>(d[digits]))) ++digits;
  const std::string unit = d.substr(digits);
  if (digits == 0 || digits > 9 || d.find_first_not_of('0') == digits ||
      (unit != "ms" && unit != "s" && unit != "m" && unit != "h")) {
    return InvalidArgument(fmt::format(
        "--scrape-interval {}: want a Prometheus duration such as 15s, 1m or 500ms", d));
  }
  if (o.agent_port < 1 || o.agent_port > 65535) {
    return InvalidArgument(fmt::format("--agent-port {}: want 1 to 65535", o.agent_port));
  }
  const double scale = unit == "ms" ? 1e-3 : unit == "s" ? 1 : unit == "m" ? 60 : 3600;
  return std::strtod(d.substr(0, digits).c_str(), nullptr) * scale;
}

bool SlurmSafe(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

std::vector<std::string> NodeNames(const model::Spec& spec, const EmitOptions& o) {
  std::vector<std::string> names;
  if (!o.nodes.empty()) {
    // "a,b" or "prefix[001-004]" (one range), as Slurm writes them.
    size_t lb = o.nodes.find('[');
    if (lb != std::string::npos && o.nodes.back() == ']') {
      const std::string prefix = o.nodes.substr(0, lb);
      const std::string range = o.nodes.substr(lb + 1, o.nodes.size() - lb - 2);
      size_t dash = range.find('-');
      const std::string lo = range.substr(0, dash);
      const std::string hi = dash == std::string::npos ? lo : range.substr(dash + 1);
      const int a = std::atoi(lo.c_str()), b = std::atoi(hi.c_str());
      for (int i = a; i <= b && i - a < 1000000; ++i) {
        names.push_back(fmt::format("{}{:0{}}", prefix, i, lo.size()));
      }
      return names;
    }
    size_t start = 0;
    while (start <= o.nodes.size()) {
      size_t comma = o.nodes.find(',', start);
      if (comma == std::string::npos) comma = o.nodes.size();
      if (comma > start) names.push_back(o.nodes.substr(start, comma - start));
      start = comma + 1;
    }
    return names;
  }
  const int n = spec.cluster.nodes.count;
  const int width = std::max(3, static_cast<int>(std::to_string(n).size()));
  for (int i = 1; i <= n; ++i) names.push_back(fmt::format("{}{:0{}}", o.node_prefix, i, width));
  return names;
}

std::string HostList(const std::vector<std::string>& names) {
  // Group by prefix and digit width; compress consecutive numbers into ranges.
  std::string out;
  size_t i = 0;
  while (i < names.size()) {
    const std::string& n = names[i];
    size_t d = n.size();
    while (d > 0 && std::isdigit(static_cast<unsigned char>(n[d - 1]))) --d;
    if (d == n.size()) {
      out += (out.empty() ? "" : ",") + n;
      ++i;
      continue;
    }
    const std::string prefix = n.substr(0, d);
    const size_t width = n.size() - d;
    std::vector<long> nums;
    size_t j = i;
    while (j < names.size() && names[j].size() == prefix.size() + width &&
           names[j].compare(0, prefix.size(), prefix) == 0 &&
           strings::ParseInteger(std::string_view(names[j]).substr(prefix.size()))) {
      nums.push_back(static_cast<long>(
          *strings::ParseInteger(std::string_view(names[j]).substr(prefix.size()))));
      ++j;
    }
    if (nums.size() == 1) {
      out += (out.empty() ? "" : ",") + n;
    } else {
      std::string ranges;
      for (size_t k = 0; k < nums.size();) {
        size_t e = k;
        while (e + 1 < nums.size() && nums[e + 1] == nums[e] + 1) ++e;
        ranges += (ranges.empty() ? "" : ",") + fmt::format("{:0{}}", nums[k], width);
        if (e > k) ranges += fmt::format("-{:0{}}", nums[e], width);
        k = e + 1;
      }
      if (!out.empty()) out += ",";
      out += prefix;
      out += "[" + ranges + "]";
    }
    i = j;
  }
  return out;
}

std::vector<EnvLine> NcclEnvironment(const model::Spec& spec, const EmitOptions& o) {
  std::vector<EnvLine> env;
  const model::Fabric& f = spec.cluster.compute_fabric;
  const bool multi = spec.cluster.nodes.count > 1;
  if (o.topology != nullptr) {
    const std::string hca = topo::NcclIbHca(topo::AffinityOf(*o.topology));
    if (!hca.empty()) {
      env.push_back({"NCCL_IB_HCA", hca,
                     "RDMA ports NCCL may use, each GPU's nearest first (from the node's "
                     "topology); '=' matches names exactly (mlx5_1 would also match mlx5_10-19)"});
    }
  }
  if (multi && f.present && f.type == model::FabricType::kEthernet) {
    env.push_back({"NCCL_IB_DISABLE", "1",
                   "the compute fabric is plain Ethernet: use the socket transport (0|1)"});
  }
  env.push_back({"NCCL_SOCKET_IFNAME", o.socket_ifname,
                 "bootstrap and socket traffic on the control network; comma list of prefixes, "
                 "'^' excludes, '=' exact names"});
  if (f.type != model::FabricType::kEthernet) {
    env.push_back({"NCCL_IB_TIMEOUT", "20",
                   "per-try timeout 4.096 us x 2^value (20 = 4.3 s); range 0-31, NCCL's default "
                   "since 2.23"});
    env.push_back({"NCCL_IB_RETRY_CNT", "7",
                   "retries before a transport error (0-7); timeout x retries = ~30 s to give up"});
  }
  if (f.present && f.type == model::FabricType::kRoCE) {
    env.push_back({"NCCL_IB_GID_INDEX", "3",
                   "RoCE v2 over IPv4 is index 3 on mlx5 ports (check with show_gids); -1 lets "
                   "NCCL >= 2.21 choose by NCCL_IB_ADDR_FAMILY"});
  }
  if (spec.cluster.ScaleUpDomain() > spec.cluster.nodes.gpus_per_node) {
    env.push_back({"NCCL_MNNVL_ENABLE", "2",
                   "multi-node NVLink between the domain's trays when every GPU's fabric "
                   "registration is completed in one clique (2 = auto, NCCL's default; 0 off); "
                   "init fails when IMEX cannot share memory: gpufleet check's fabric and imex "
                   "checks say why"});
  }
  if (!o.topo_file.empty()) {
    env.push_back(
        {"NCCL_TOPO_FILE", o.topo_file,
         "NCCL topology file (gpufleet topo nccl-xml; check it with gpufleet topo lint)"});
  }
  env.push_back({"NCCL_DEBUG", "WARN", "VERSION, WARN, INFO, TRACE; INFO to debug topology"});
  env.push_back({"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1",
                 "tear the process group down on NCCL errors and timeouts instead of hanging "
                 "(0-3; 1 = abort communicators and the process)"});
  env.push_back({"TORCH_NCCL_ENABLE_MONITORING", "1",
                 "the watchdog's heartbeat monitor kills a rank whose watchdog stalls (0|1)"});
  env.push_back({"TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "600",
                 "seconds without a watchdog heartbeat before the monitor aborts the rank"});
  return env;
}

}  // namespace gpufleet::emit
