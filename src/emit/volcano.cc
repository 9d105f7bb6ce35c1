// volcano: a batch.volcano.sh/v1alpha1 Job, gang-scheduled (minAvailable =
// every pod), with Volcano's pytorch plugin (MASTER_ADDR, WORLD_SIZE, RANK)
// and svc plugin (pod DNS), GPU and RDMA resources, the NCCL environment, and
// policies that restart the whole job when a pod is evicted or fails.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>

#include "emit/emit.h"

namespace gpufleet::emit {

std::string TrainingArgs(const model::Spec& spec);

namespace {

void Task(YAML::Emitter& y, const model::Spec& spec, const EmitOptions& o, const char* name,
          int replicas) {
  const auto& n = spec.cluster.nodes;
  y << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << name;
  y << YAML::Key << "replicas" << YAML::Value << replicas;
  y << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "restartPolicy" << YAML::Value << "OnFailure";
  y << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "trainer";
  y << YAML::Key << "image" << YAML::Value << YAML::DoubleQuoted << o.image;
  y << YAML::Key << "command" << YAML::Value << YAML::BeginSeq << "bash"
    << "-c";
  // The pytorch plugin exports MASTER_ADDR, MASTER_PORT, WORLD_SIZE (pods) and RANK.
  y << YAML::DoubleQuoted
    << fmt::format(
           "exec torchrun --nnodes=\"$WORLD_SIZE\" --node-rank=\"$RANK\" "
           "--nproc-per-node={} --master-addr=\"$MASTER_ADDR\" "
           "--master-port=\"$MASTER_PORT\" {} {}",
           n.gpus_per_node, ShellQuote(o.script), TrainingArgs(spec));
  y << YAML::EndSeq;
  y << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
  for (const auto& e : NcclEnvironment(spec, o)) {
    y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << e.name << YAML::Key << "value"
      << YAML::Value << YAML::DoubleQuoted << e.value << YAML::EndMap;
  }
  y << YAML::EndSeq;
  // Requests equal to limits for every resource: Guaranteed QoS, which the kubelet's static
  // CPU and memory managers (gpufleet emit kubelet) need to pin the pod's CPUs and memory.
  const PodShare share = TrainingPodShare(spec, o);
  y << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
  for (const char* kind : {"requests", "limits"}) {
    y << YAML::Key << kind << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "cpu" << YAML::Value << YAML::DoubleQuoted << std::to_string(share.pod_cpus);
    y << YAML::Key << "memory" << YAML::Value << fmt::format("{}Gi", share.pod_memory_gib);
    y << YAML::Key << "nvidia.com/gpu" << YAML::Value << n.gpus_per_node;
    if (n.Ports(model::NicRole::kCompute) > 0 &&
        spec.cluster.compute_fabric.type != model::FabricType::kEthernet) {
      y << YAML::Key << o.rdma_resource << YAML::Value << 1;
    }
    y << YAML::EndMap;
  }
  y << YAML::EndMap;
  // RDMA needs locked memory; NCCL needs a large /dev/shm.
  y << YAML::Key << "securityContext" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "capabilities" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "add" << YAML::Value << YAML::Flow << YAML::BeginSeq << "IPC_LOCK"
    << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap;
  y << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "dshm" << YAML::Key << "mountPath" << YAML::Value
    << "/dev/shm";
  y << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndSeq;  // containers
  y << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "dshm";
  y << YAML::Key << "emptyDir" << YAML::Value << YAML::BeginMap << YAML::Key << "medium"
    << YAML::Value << "Memory" << YAML::EndMap;
  y << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap;  // spec, template
  y << YAML::EndMap;
}

}  // namespace

Result<std::vector<GeneratedFile>> EmitVolcano(const model::Spec& spec, const EmitOptions& o) {
  const int nodes = spec.cluster.nodes.count;
  const std::string name = Dns1123(o.job_name.empty() ? spec.cluster.name : o.job_name);
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "batch.volcano.sh/v1alpha1";
  y << YAML::Key << "kind" << YAML::Value << "Job";
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << name;
  y << YAML::Key << "namespace" << YAML::Value << Dns1123(o.namespace_name);
  y << YAML::EndMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "schedulerName" << YAML::Value << "volcano";
  y << YAML::Key << "queue" << YAML::Value << Dns1123(o.queue);
  // Gang scheduling: no pod starts until every one of them can.
  y << YAML::Key << "minAvailable" << YAML::Value << nodes;
  y << YAML::Key << "maxRetry" << YAML::Value << 3;
  y << YAML::Key << "plugins" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "pytorch" << YAML::Value << YAML::Flow << YAML::BeginSeq << "--master=master"
    << "--worker=worker" << fmt::format("--port={}", o.rdzv_port) << YAML::EndSeq;
  y << YAML::Key << "svc" << YAML::Value << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
  y << YAML::EndMap;
  // A synchronous job cannot lose a member: restart all of it.
  y << YAML::Key << "policies" << YAML::Value << YAML::BeginSeq;
  for (const char* event : {"PodEvicted", "PodFailed"}) {
    y << YAML::BeginMap << YAML::Key << "event" << YAML::Value << event << YAML::Key << "action"
      << YAML::Value << "RestartJob" << YAML::EndMap;
  }
  y << YAML::EndSeq;
  y << YAML::Key << "tasks" << YAML::Value << YAML::BeginSeq;
  Task(y, spec, o, "master", 1);
  if (nodes > 1) Task(y, spec, o, "worker", nodes - 1);
  y << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap;
  if (!y.good()) return Error{ErrorCode::kInternal, "YAML emitter: " + y.GetLastError()};
  return std::vector<GeneratedFile>{
      {"volcano-job.yaml",
       fmt::format(
           "# Volcano Job for {} (gpufleet emit volcano): {} pods x {} GPUs, gang-scheduled.\n"
           "{}\n",
           name, nodes, spec.cluster.nodes.gpus_per_node, y.c_str())}};
}

}  // namespace gpufleet::emit
