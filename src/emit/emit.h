#pragma once
// `gpufleet emit`: launch and scheduler configs generated from the cluster
// spec (and, where given, the node's discovered topology), one pure generator
// per target, listed in one table (registry.cc). Generators never touch the
// filesystem; cli/ writes what they return. Every value that reaches a shell
// or YAML is quoted (ShellQuote, yaml-cpp's emitter) or restricted to a safe
// alphabet (Slurm names), so hostile names stay inert. Pure; thread-safe.

#include <string>
#include <vector>

#include "base/result.h"
#include "model/spec.h"
#include "topo/node_topology.h"

namespace gpufleet::emit {

struct EmitOptions {
  std::string job_name;             // default: the cluster's name
  std::string script = "train.py";  // the training entry point
  std::string nodes;                // Slurm hostlist; default "<prefix>[001-NNN]"
  std::string node_prefix = "gpu";
  std::string partition;   // sbatch --partition, a comma list ("" = cluster default)
  std::string time_limit;  // sbatch --time ("" = partition default)
  int cpus_per_task = 0;   // sbatch/srun --cpus-per-task (0 = the spec's cores per GPU)
  bool bench = false;      // sbatch: run gpufleet bench collective instead of torchrun
  std::string node_spec;   // the spec's path on the nodes, for the prolog ("" = nodes' default)
  std::string gpufleet = "gpufleet";  // the gpufleet binary on the nodes
  int rdzv_port = 29500;
  std::string socket_ifname = "^lo,docker";  // NCCL_SOCKET_IFNAME: control network
  std::string topo_file;                     // NCCL_TOPO_FILE path on the nodes
  std::string gpu_device_prefix = "/dev/nvidia";
  std::string namespace_name = "default";
  std::string queue = "default";
  std::string image = "nvcr.io/nvidia/pytorch:24.05-py3";
  std::string rdma_resource = "rdma/rdma_shared_device_a";
  int agent_port = 9401;    // gpufleet agent's /metrics
  std::string agent_image;  // daemonset: the agent's image ("" = gpufleet:VERSION)
  // How Prometheus reaches the agents (prometheus-scrape); must match the agents' web-config.
  std::string agent_scheme = "http";    // "https" when the agents have tls_server_config
  std::string agent_ca_file;            // CA that signed the agents' certificates
  std::string agent_user;               // basic auth user ("" = none)
  std::string agent_password_file;      // file holding that user's password
  std::string alertmanager;             // HOST:PORT of Alertmanager ("" = no alerting section)
  std::string scrape_interval = "15s";  // Prometheus duration: scrape and rule evaluation
  const topo::NodeTopology* topology = nullptr;  // NIC order and NUMA binding, when known
};

struct GeneratedFile {
  std::string name;  // suggested file name ("sbatch.sh", "gres.conf")
  std::string content;
};

using Generator = Result<std::vector<GeneratedFile>> (*)(const model::Spec&, const EmitOptions&);

struct Target {
  const char* name;
  const char* description;
  Generator generate;
};

// Every target, in one table.
const std::vector<Target>& Targets();
const Target* FindTarget(std::string_view name);

// Slurm's --time forms (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, UNLIMITED) and
// partition lists ("gpu,gpu-long"); kInvalidArgument says what sbatch would refuse.
Status CheckSlurmTime(std::string_view time);
Status CheckPartitions(std::string_view partitions);

// Helpers shared by the generators.
// POSIX shell single-quoting: safe for any bytes ('...' with ' as '\'').
std::string ShellQuote(std::string_view s);
// Node names: the explicit hostlist, or prefix + zero-padded index.
std::vector<std::string> NodeNames(const model::Spec& spec, const EmitOptions& o);
// Compresses names into a Slurm hostlist ("gpu[001-004,007]"); names must be SlurmSafe.
std::string HostList(const std::vector<std::string>& names);
// For text placed in a comment: control characters (a newline would end the
// comment and start a line of config) become spaces.
std::string CommentSafe(std::string_view s);
// Kubernetes object names: DNS-1123 labels (lower-case alphanumerics and '-', at most 50 here
// so that suffixes fit); "job" when nothing is left.
std::string Dns1123(const std::string& s);
// How Prometheus reaches the agents (prometheus-scrape, daemonset): --agent-scheme http or https,
// --agent-port 1..65535, --scrape-interval a Prometheus duration; the interval in seconds, or
// kInvalidArgument naming the flag.
Result<double> AgentScrapeSeconds(const EmitOptions& o);
// Slurm names and gres types allow [A-Za-z0-9._-] only.
bool SlurmSafe(std::string_view s);
// The NCCL/PyTorch environment as (name, value, comment) lines.
struct EnvLine {
  std::string name;
  std::string value;
  std::string why;
};
std::vector<EnvLine> NcclEnvironment(const model::Spec& spec, const EmitOptions& o);

// One training pod per node (Volcano) beside the kubelet's reservations (kubelet): whole CPUs
// and memory left after the system, kubelet, eviction and DaemonSet shares, so the pod can ask
// for requests equal to limits (Guaranteed QoS) and the static CPU and memory managers pin it.
struct PodShare {
  int numa_nodes = 1;
  std::vector<int> reserved_cpus;  // reservedSystemCPUs: two per NUMA node
  int system_gib = 0;              // systemReserved memory
  int reserved_gib = 0;            // system + kube reserved + hard eviction
  int pod_cpus = 0;
  int pod_memory_gib = 0;
};
PodShare TrainingPodShare(const model::Spec& spec, const EmitOptions& o);

// The generators (one file each).
Result<std::vector<GeneratedFile>> EmitNcclEnv(const model::Spec&, const EmitOptions&);
Result<std::vector<GeneratedFile>> EmitTorchrun(const model::Spec&, const EmitOptions&);
Result<std::vector<GeneratedFile>> EmitSbatch(const model::Spec&, const EmitOptions&);
Result<std::vector<GeneratedFile>> EmitSlurmConf(const model::Spec&, const EmitOptions&);
Result<std::vector<GeneratedFile>> EmitVolcano(const model::Spec&, const EmitOptions&);
Result<std::vector<GeneratedFile>> EmitKubelet(const model::Spec&, const EmitOptions&);
Result<std::vector<GeneratedFile>> EmitPrometheusRules(const model::Spec&, const EmitOptions&);
Result<std::vector<GeneratedFile>> EmitDcgmRules(const model::Spec&, const EmitOptions&);
// The DCGM exporter series names dcgm-rules records.
std::vector<std::string> DcgmSeriesNames();
Result<std::vector<GeneratedFile>> EmitGrafana(const model::Spec&, const EmitOptions&);
Result<std::vector<GeneratedFile>> EmitPrometheusScrape(const model::Spec&, const EmitOptions&);
Result<std::vector<GeneratedFile>> EmitDaemonSet(const model::Spec&, const EmitOptions&);

}  // namespace gpufleet::emit
