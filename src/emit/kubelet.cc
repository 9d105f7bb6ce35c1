// kubelet: a kubelet.config.k8s.io/v1beta1 KubeletConfiguration for the GPU
// nodes: static CPU and memory managers and a topology manager, so a
// training pod's CPUs, memory and GPUs line up on NUMA nodes, with system
// reservations sized from the spec.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "emit/emit.h"

namespace gpufleet::emit {

PodShare TrainingPodShare(const model::Spec& spec, const EmitOptions& o) {
  const auto& n = spec.cluster.nodes;
  PodShare p;
  p.numa_nodes = std::max(1, n.sockets);
  if (o.topology != nullptr && !o.topology->numa.empty()) {
    p.numa_nodes = static_cast<int>(o.topology->numa.size());
    for (const auto& node : o.topology->numa) {
      for (size_t i = 0; i < node.cpus.size() && i < 2; ++i)
        p.reserved_cpus.push_back(node.cpus[i]);
    }
  } else {
    const int per = std::max(1, n.cpu.cores);
    for (int s = 0; s < p.numa_nodes; ++s) {
      p.reserved_cpus.push_back(s * per);
      if (per > 1) p.reserved_cpus.push_back(s * per + 1);
    }
  }
  std::sort(p.reserved_cpus.begin(), p.reserved_cpus.end());
  // System reservation: 2 % of host memory, at least 2 GiB; kubelet 1 GiB; eviction at 1 GiB.
  const double gib = 1024.0 * 1024 * 1024;
  p.system_gib = std::max(2, static_cast<int>(std::ceil(n.memory_bytes * 0.02 / gib)));
  p.reserved_gib = p.system_gib + 1 + 1;
  // What the node's DaemonSets need beside the training pod (GPU device plugin, network
  // operator, DCGM or gpufleet agent, CNI, kube-proxy): an allowance, not a measurement.
  constexpr int kDaemonSetCpus = 2;
  constexpr int kDaemonSetGib = 8;
  const int cpus =
      n.cpu.cores * n.sockets - static_cast<int>(p.reserved_cpus.size()) - kDaemonSetCpus;
  // full-pcpus-only takes whole cores: an even count fits with SMT on or off.
  p.pod_cpus = std::max(2, cpus - cpus % 2);
  p.pod_memory_gib = std::max(
      1, static_cast<int>(std::floor(n.memory_bytes / gib)) - p.reserved_gib - kDaemonSetGib);
  return p;
}

Result<std::vector<GeneratedFile>> EmitKubelet(const model::Spec& spec, const EmitOptions& o) {
  const PodShare share = TrainingPodShare(spec, o);
  const int numa = share.numa_nodes;
  std::string reserved_cpus;
  for (int c : share.reserved_cpus) {
    reserved_cpus += (reserved_cpus.empty() ? "" : ",") + std::to_string(c);
  }
  const int system_gib = share.system_gib;
  const int total_gib = share.reserved_gib;
  const bool single_numa_gpus = numa == 1;
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "kubelet.config.k8s.io/v1beta1";
  y << YAML::Key << "kind" << YAML::Value << "KubeletConfiguration";
  y << YAML::Key << "cpuManagerPolicy" << YAML::Value << "static";
  y << YAML::Key << "cpuManagerPolicyOptions" << YAML::Value << YAML::BeginMap << YAML::Key
    << "full-pcpus-only" << YAML::Value << YAML::DoubleQuoted << "true" << YAML::EndMap;
  y << YAML::Key << "memoryManagerPolicy" << YAML::Value << "Static";
  // A whole-node training pod spans every NUMA node: single-numa-node would refuse it.
  y << YAML::Key << "topologyManagerPolicy" << YAML::Value
    << (single_numa_gpus ? "single-numa-node" : "restricted");
  y << YAML::Key << "topologyManagerScope" << YAML::Value << "pod";
  y << YAML::Key << "reservedSystemCPUs" << YAML::Value << YAML::DoubleQuoted << reserved_cpus;
  y << YAML::Key << "systemReserved" << YAML::Value << YAML::BeginMap << YAML::Key << "memory"
    << YAML::Value << fmt::format("{}Gi", system_gib) << YAML::EndMap;
  y << YAML::Key << "kubeReserved" << YAML::Value << YAML::BeginMap << YAML::Key << "memory"
    << YAML::Value << "1Gi" << YAML::EndMap;
  y << YAML::Key << "evictionHard" << YAML::Value << YAML::BeginMap << YAML::Key
    << "memory.available" << YAML::Value << "1Gi" << YAML::EndMap;
  // The Static memory manager requires reservedMemory to add up to system + kube reserved +
  // the hard eviction threshold; spread it over the NUMA nodes.
  y << YAML::Key << "reservedMemory" << YAML::Value << YAML::BeginSeq;
  int left = total_gib * 1024;
  for (int i = 0; i < numa; ++i) {
    const int mib = i + 1 == numa ? left : total_gib * 1024 / numa;
    left -= mib;
    y << YAML::BeginMap << YAML::Key << "numaNode" << YAML::Value << i << YAML::Key << "limits"
      << YAML::Value << YAML::BeginMap << YAML::Key << "memory" << YAML::Value
      << fmt::format("{}Mi", mib) << YAML::EndMap << YAML::EndMap;
  }
  y << YAML::EndSeq;
  y << YAML::EndMap;
  if (!y.good()) return Error{ErrorCode::kInternal, "YAML emitter: " + y.GetLastError()};
  return std::vector<GeneratedFile>{
      {"kubelet-config.yaml",
       fmt::format("# KubeletConfiguration for the GPU nodes of {} (gpufleet emit kubelet).\n{}\n",
                   CommentSafe(spec.cluster.name), y.c_str())}};
}

}  // namespace gpufleet::emit
