// daemonset: the agent on every GPU node of a Kubernetes cluster, as node-problem-detector and
// dcgm-exporter run there: an apps/v1 DaemonSet on the host's PID and network namespaces (job
// attribution; the node's own interfaces and the agent port the scrape config expects), NVML
// from the NVIDIA container runtime, /dev/kmsg for XID errors, tolerating GPU and every
// NoSchedule taint (a drained node is the one to watch); a headless Service and a Prometheus
// Operator ServiceMonitor that labels each series with its node. docs/emit.md.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "emit/emit.h"

namespace gpufleet::emit {
namespace {

constexpr const char* kApp = "gpufleet-agent";

void Labels(YAML::Emitter& y) {
  y << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "app.kubernetes.io/name" << YAML::Value << kApp;
  y << YAML::Key << "app.kubernetes.io/part-of" << YAML::Value << "gpufleet";
  y << YAML::EndMap;
}

void Metadata(YAML::Emitter& y, const std::string& ns) {
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << kApp;
  y << YAML::Key << "namespace" << YAML::Value << ns;
  Labels(y);
  y << YAML::EndMap;
}

void Selector(YAML::Emitter& y) {
  y << YAML::Key << "selector" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "matchLabels" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "app.kubernetes.io/name" << YAML::Value << kApp;
  y << YAML::EndMap << YAML::EndMap;
}

void Container(YAML::Emitter& y, const EmitOptions& o, const std::string& image) {
  y << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "agent";
  y << YAML::Key << "image" << YAML::Value << YAML::DoubleQuoted << image;
  y << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq
    << "/opt/gpufleet/bin/gpufleet"
    << "agent" << YAML::EndSeq;
  y << YAML::Key << "args" << YAML::Value << YAML::Flow << YAML::BeginSeq << "--listen"
    << fmt::format(":{}", o.agent_port) << YAML::EndSeq;
  y << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
  // The NVIDIA container runtime mounts the driver's NVML for these (no GPU is allocated).
  for (const auto& [name, value] :
       {std::pair<const char*, const char*>{"NVIDIA_VISIBLE_DEVICES", "all"},
        {"NVIDIA_DRIVER_CAPABILITIES", "utility"}}) {
    y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name << YAML::Key << "value"
      << YAML::Value << YAML::DoubleQuoted << value << YAML::EndMap;
  }
  y << YAML::EndSeq;
  y << YAML::Key << "ports" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "metrics";
  y << YAML::Key << "containerPort" << YAML::Value << o.agent_port;
  y << YAML::Key << "protocol" << YAML::Value << "TCP";
  y << YAML::EndMap << YAML::EndSeq;
  // TCP probes: they hold whether or not the agent's web-config asks for TLS or basic auth.
  for (const char* probe : {"livenessProbe", "readinessProbe"}) {
    y << YAML::Key << probe << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "tcpSocket" << YAML::Value << YAML::BeginMap << YAML::Key << "port"
      << YAML::Value << "metrics" << YAML::EndMap;
    y << YAML::Key << "periodSeconds" << YAML::Value << 30;
    y << YAML::Key << "timeoutSeconds" << YAML::Value << 5;
    y << YAML::EndMap;
  }
  // Measured (docs/performance.md): 8.8 MiB resident and ~0.2 ms per scrape, collection every
  // 10 s. NVML's mapped driver library comes on top on a GPU node, hence the limit's headroom;
  // no CPU limit, so a burst of scrapes is never throttled into timeouts.
  y << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "requests" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "cpu" << YAML::Value << "20m" << YAML::Key << "memory" << YAML::Value << "32Mi";
  y << YAML::EndMap;
  y << YAML::Key << "limits" << YAML::Value << YAML::BeginMap << YAML::Key << "memory"
    << YAML::Value << "128Mi" << YAML::EndMap;
  y << YAML::EndMap;
  // Privileged for /dev/kmsg (a character device; node-problem-detector runs the same way), with
  // a read-only root file system.
  y << YAML::Key << "securityContext" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "privileged" << YAML::Value << true;
  y << YAML::Key << "readOnlyRootFilesystem" << YAML::Value << true;
  y << YAML::Key << "runAsUser" << YAML::Value << 0;
  y << YAML::EndMap;
  y << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "kmsg" << YAML::Key << "mountPath"
    << YAML::Value << "/dev/kmsg" << YAML::Key << "readOnly" << YAML::Value << true << YAML::EndMap;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "cluster-spec" << YAML::Key
    << "mountPath" << YAML::Value << "/etc/gpufleet" << YAML::Key << "readOnly" << YAML::Value
    << true << YAML::EndMap;
  y << YAML::EndSeq;
  y << YAML::EndMap;
}

std::string DaemonSet(const EmitOptions& o, const std::string& ns, const std::string& image) {
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "apps/v1";
  y << YAML::Key << "kind" << YAML::Value << "DaemonSet";
  Metadata(y, ns);
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  Selector(y);
  y << YAML::Key << "updateStrategy" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "type" << YAML::Value << "RollingUpdate";
  y << YAML::Key << "rollingUpdate" << YAML::Value << YAML::BeginMap << YAML::Key
    << "maxUnavailable" << YAML::Value << "10%" << YAML::EndMap;
  y << YAML::EndMap;
  y << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  Labels(y);
  y << YAML::EndMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "hostPID" << YAML::Value << true;
  y << YAML::Key << "hostNetwork" << YAML::Value << true;
  y << YAML::Key << "dnsPolicy" << YAML::Value << "ClusterFirstWithHostNet";
  y << YAML::Key << "priorityClassName" << YAML::Value << "system-node-critical";
  y << YAML::Key << "runtimeClassName" << YAML::Value << "nvidia";
  y << YAML::Key << "automountServiceAccountToken" << YAML::Value << false;
  y << YAML::Key << "terminationGracePeriodSeconds" << YAML::Value << 10;
  // GPU nodes as NVIDIA's GPU feature discovery labels them.
  y << YAML::Key << "nodeSelector" << YAML::Value << YAML::BeginMap << YAML::Key
    << "nvidia.com/gpu.present" << YAML::Value << YAML::DoubleQuoted << "true" << YAML::EndMap;
  y << YAML::Key << "tolerations" << YAML::Value << YAML::BeginSeq;
  y << YAML::BeginMap << YAML::Key << "key" << YAML::Value << "nvidia.com/gpu" << YAML::Key
    << "operator" << YAML::Value << "Exists" << YAML::EndMap;
  y << YAML::BeginMap << YAML::Key << "operator" << YAML::Value << "Exists" << YAML::Key << "effect"
    << YAML::Value << "NoSchedule" << YAML::EndMap;
  y << YAML::EndSeq;
  y << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq;
  Container(y, o, image);
  y << YAML::EndSeq;
  y << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "kmsg" << YAML::Key << "hostPath"
    << YAML::Value << YAML::BeginMap << YAML::Key << "path" << YAML::Value << "/dev/kmsg"
    << YAML::Key << "type" << YAML::Value << "CharDevice" << YAML::EndMap << YAML::EndMap;
  // Optional: without it the agent judges only what needs no spec.
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "cluster-spec" << YAML::Key
    << "configMap" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
    << "gpufleet-cluster-spec" << YAML::Key << "optional" << YAML::Value << true << YAML::EndMap
    << YAML::EndMap;
  y << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap;  // template spec, template
  y << YAML::EndMap << YAML::EndMap;  // spec, DaemonSet
  return y.good() ? std::string(y.c_str()) : std::string();
}

std::string Service(const EmitOptions& o, const std::string& ns) {
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "v1";
  y << YAML::Key << "kind" << YAML::Value << "Service";
  Metadata(y, ns);
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "clusterIP" << YAML::Value << "None";
  y << YAML::Key << "selector" << YAML::Value << YAML::BeginMap << YAML::Key
    << "app.kubernetes.io/name" << YAML::Value << kApp << YAML::EndMap;
  y << YAML::Key << "ports" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "metrics";
  y << YAML::Key << "port" << YAML::Value << o.agent_port;
  y << YAML::Key << "targetPort" << YAML::Value << "metrics";
  y << YAML::Key << "protocol" << YAML::Value << "TCP";
  y << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap;
  return y.good() ? std::string(y.c_str()) : std::string();
}

std::string ServiceMonitor(const EmitOptions& o, const std::string& ns) {
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "monitoring.coreos.com/v1";
  y << YAML::Key << "kind" << YAML::Value << "ServiceMonitor";
  Metadata(y, ns);
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  Selector(y);
  y << YAML::Key << "endpoints" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "port" << YAML::Value << "metrics";
  y << YAML::Key << "path" << YAML::Value << "/metrics";
  y << YAML::Key << "scheme" << YAML::Value << o.agent_scheme;
  y << YAML::Key << "interval" << YAML::Value << o.scrape_interval;
  // Agents with a web-config: the CA and the basic-auth password from Secrets the site makes
  // (docs/emit.md), as the Prometheus Operator reads them.
  if (o.agent_scheme == "https") {
    y << YAML::Key << "tlsConfig" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "ca" << YAML::Value << YAML::BeginMap << YAML::Key << "secret" << YAML::Value
      << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "gpufleet-agent-tls" << YAML::Key
      << "key" << YAML::Value << "ca.crt" << YAML::EndMap << YAML::EndMap;
    y << YAML::EndMap;
  }
  if (!o.agent_user.empty()) {
    y << YAML::Key << "basicAuth" << YAML::Value << YAML::BeginMap;
    for (const char* field : {"username", "password"}) {
      y << YAML::Key << field << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
        << "gpufleet-agent-auth" << YAML::Key << "key" << YAML::Value << field << YAML::EndMap;
    }
    y << YAML::EndMap;
  }
  // The rules and dashboards group by `node`, as the scrape config gpufleet emits labels it.
  y << YAML::Key << "relabelings" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "sourceLabels" << YAML::Value << YAML::Flow << YAML::BeginSeq
    << "__meta_kubernetes_pod_node_name" << YAML::EndSeq;
  y << YAML::Key << "targetLabel" << YAML::Value << "node";
  y << YAML::Key << "action" << YAML::Value << "replace";
  y << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap;
  return y.good() ? std::string(y.c_str()) : std::string();
}

}  // namespace

Result<std::vector<GeneratedFile>> EmitDaemonSet(const model::Spec& spec, const EmitOptions& o) {
  if (Result<double> interval = AgentScrapeSeconds(o); !interval) return interval.error();
  const std::string ns = Dns1123(o.namespace_name);
  const std::string image =
      o.agent_image.empty() ? std::string("gpufleet:") + GPUFLEET_VERSION : o.agent_image;
  const std::string parts[] = {DaemonSet(o, ns, image), Service(o, ns), ServiceMonitor(o, ns)};
  for (const auto& p : parts) {
    if (p.empty()) return Error{ErrorCode::kInternal, "YAML emitter failed"};
  }
  return std::vector<GeneratedFile>{
      {"gpufleet-agent.yaml",
       fmt::format(
           "# gpufleet agent on every GPU node of {} (gpufleet emit daemonset): DaemonSet,\n"
           "# headless Service, and a ServiceMonitor for the Prometheus Operator.\n"
           "# The image is the one scripts/package.sh builds (gpufleet-VERSION-oci.tar), pushed\n"
           "# to your registry: --agent-image REGISTRY/gpufleet:VERSION. The node spec the agent\n"
           "# judges against, optional:\n"
           "#   kubectl -n {} create configmap gpufleet-cluster-spec "
           "--from-file=cluster.yaml=SPEC\n"
           "# Needs the NVIDIA container runtime's RuntimeClass \"nvidia\" (GPU operator).\n"
           "{}\n---\n{}\n---\n{}\n",
           CommentSafe(spec.cluster.name), ns, parts[0], parts[1], parts[2])}};
}

}  // namespace gpufleet::emit
