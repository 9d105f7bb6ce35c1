// slurm-conf: gres.conf (each node's GPUs with device files and the cores
// nearest to them) and topology.conf (the switch tree of the compute fabric,
// for TopologyPlugin=topology/tree, so jobs land on as few leaves as possible).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "emit/emit.h"
#include "plan/fabric.h"
#include "topo/affinity.h"

namespace gpufleet::emit {

namespace {

std::string GresType(const std::string& gpu_name) {
  std::string t;
  for (char c : gpu_name) {
    if (c == '-' || c == ' ') break;
    if (std::isalnum(static_cast<unsigned char>(c))) t += static_cast<char>(std::tolower(c));
  }
  return t.empty() ? "gpu" : t;
}

std::string Names(const std::string& prefix, int first, int last, int width) {
  if (first == last) return fmt::format("{}{:0{}}", prefix, first, width);
  return fmt::format("{}[{:0{}}-{:0{}}]", prefix, first, width, last, width);
}

}  // namespace

Result<std::vector<GeneratedFile>> EmitSlurmConf(const model::Spec& spec, const EmitOptions& o) {
  const auto& n = spec.cluster.nodes;
  const std::vector<std::string> nodes = NodeNames(spec, o);
  for (const auto& name : nodes) {
    if (!SlurmSafe(name)) {
      return InvalidArgument(fmt::format(
          "node name '{}' is not a valid Slurm name: use letters, digits, '.', '_' and '-'", name));
    }
  }
  if (static_cast<int>(nodes.size()) != n.count) {
    return InvalidArgument(
        fmt::format("--nodes lists {} names but the spec has {} nodes", nodes.size(), n.count));
  }
  const std::string all = HostList(nodes);
  const std::string type = GresType(n.gpu.name);

  // Cores nearest each GPU: its NUMA node's share of the node's cores.
  const int cores = n.cpu.cores * n.sockets;
  std::vector<int> gpu_numa(static_cast<size_t>(n.gpus_per_node), -1);
  int numa_nodes = std::max(1, n.sockets);
  std::string how = "GPUs assumed split evenly over the sockets in index order (no --topology)";
  if (o.topology != nullptr && !o.topology->numa.empty()) {
    numa_nodes = static_cast<int>(o.topology->numa.size());
    for (const auto& a : topo::AffinityOf(*o.topology)) {
      if (a.gpu < n.gpus_per_node) gpu_numa[static_cast<size_t>(a.gpu)] = std::max(0, a.numa);
    }
    how = "GPU NUMA nodes from the node's topology";
  } else {
    for (int g = 0; g < n.gpus_per_node; ++g) {
      gpu_numa[static_cast<size_t>(g)] = g * numa_nodes / std::max(1, n.gpus_per_node);
    }
  }
  std::string gres = fmt::format(
      "# GPUs of every node of {} (gpufleet emit slurm-conf).\n"
      "# Cores= are each GPU's NUMA node's cores ({}).\n"
      "# slurm.conf needs: GresTypes=gpu, and Gres=gpu:{}:{} on NodeName={}\n"
      "AutoDetect=off\n",
      CommentSafe(spec.cluster.name), how, type, n.gpus_per_node, all);
  for (int g = 0; g < n.gpus_per_node; ++g) {
    std::string line =
        fmt::format("NodeName={} Name=gpu Type={} File={}{}", all, type, o.gpu_device_prefix, g);
    const int numa = gpu_numa[static_cast<size_t>(g)];
    if (cores > 0 && numa >= 0) {
      const int per = cores / numa_nodes;
      line += fmt::format(" Cores={}-{}", numa * per, numa * per + per - 1);
    }
    gres += line + "\n";
  }

  // topology.conf from the compute fabric.
  std::string topology = fmt::format(
      "# Switch tree of {}'s compute fabric (gpufleet emit slurm-conf).\n"
      "# slurm.conf needs: TopologyPlugin=topology/tree\n",
      CommentSafe(spec.cluster.name));
  const model::Fabric& f = spec.cluster.compute_fabric;
  const int ports = std::max(1, n.Ports(model::NicRole::kCompute));
  if (!f.present || n.count == 1) {
    topology += fmt::format("SwitchName=leaf01 Nodes={}\n", all);
  } else {
    plan::FabricSize size = plan::SizeFabric(n.count, ports, f.switch_model.radix,
                                             f.oversubscription, f.rail_optimized);
    // Nodes that share their leaf switches form one group.
    const int per_group =
        f.rail_optimized ? std::max(1, size.down_ports) : std::max(1, size.down_ports / ports);
    const int groups = (n.count + per_group - 1) / per_group;
    if (size.tiers <= 1 || groups == 1) {
      topology += fmt::format("SwitchName=leaf01 Nodes={}\n", all);
    } else {
      const int w = std::max(2, static_cast<int>(std::to_string(groups).size()));
      for (int g = 0; g < groups; ++g) {
        std::vector<std::string> members(
            nodes.begin() + g * per_group,
            nodes.begin() + std::min<long>(static_cast<long>(nodes.size()), (g + 1L) * per_group));
        if (f.rail_optimized) {
          topology += fmt::format("# group {}: one leaf per rail ({} rails), as one Slurm switch\n",
                                  g + 1, ports);
        }
        topology += fmt::format("SwitchName=leaf{:0{}} Nodes={}\n", g + 1, w, HostList(members));
      }
      if (size.tiers == 2) {
        topology += fmt::format("SwitchName=spine Switches={}\n", Names("leaf", 1, groups, w));
      } else {
        const int per_pod = std::max(1, f.switch_model.radix / 2 / (f.rail_optimized ? ports : 1));
        const int pods = (groups + per_pod - 1) / per_pod;
        const int pw = std::max(2, static_cast<int>(std::to_string(pods).size()));
        for (int p = 0; p < pods; ++p) {
          topology +=
              fmt::format("SwitchName=pod{:0{}} Switches={}\n", p + 1, pw,
                          Names("leaf", p * per_pod + 1, std::min(groups, (p + 1) * per_pod), w));
        }
        topology += fmt::format("SwitchName=core Switches={}\n", Names("pod", 1, pods, pw));
      }
    }
  }
  return std::vector<GeneratedFile>{{"gres.conf", gres}, {"topology.conf", topology}};
}

}  // namespace gpufleet::emit
