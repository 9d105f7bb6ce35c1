#include "cli/cmd_emit.h"

#include <fmt/format.h>
#include <limits.h>
#include <sys/stat.h>

#include <cstdlib>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "model/spec.h"
#include "topo/discover.h"

namespace gpufleet::cli {

CLI::App* AddEmitCommand(CLI::App& app, EmitCliOptions* o) {
  std::vector<std::string> names;
  std::string help = "Target:";
  for (const auto& t : emit::Targets()) {
    names.push_back(t.name);
    help += fmt::format("\n  {:<18} {}", t.name, t.description);
  }
  CLI::App* cmd = app.add_subcommand("emit", "Launch and scheduler configs from the cluster spec");
  cmd->add_option("TARGET", o->target, help)->required()->check(CLI::IsMember(names));
  cmd->add_option("SPEC", o->spec, "Cluster spec (YAML); default: the embedded reference cluster");
  cmd->add_option("-o,--output", o->output,
                  "Write to this file (one output) or folder (several) instead of stdout");
  cmd->add_option("--topology", o->topology,
                  "The node's topology (a topo capture folder or an hwloc XML): NCCL_IB_HCA order "
                  "and NUMA binding");
  cmd->add_option("--set", o->set, "Change a spec value, PATH=VALUE (see gpufleet plan --set)");
  auto& e = o->emit;
  cmd->add_option("--job-name", e.job_name, "Job name (default: the cluster's name)");
  cmd->add_option("--script", e.script, "Training entry point")->capture_default_str();
  cmd->add_option("--nodes", e.nodes, "Slurm hostlist of the nodes, e.g. gpu[001-032]");
  cmd->add_option("--node-prefix", e.node_prefix, "Node name prefix when --nodes is not given")
      ->capture_default_str();
  cmd->add_option("--partition", e.partition, "sbatch partition, or a comma list of them");
  cmd->add_option("--time", e.time_limit,
                  "sbatch time limit: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, UNLIMITED");
  cmd->add_option("--cpus-per-task", e.cpus_per_task,
                  "sbatch and srun --cpus-per-task (default: from the spec's cores per GPU)");
  cmd->add_flag("--bench", e.bench,
                "sbatch: run gpufleet bench collective on every GPU instead of torchrun");
  cmd->add_option("--node-spec", e.node_spec,
                  "sbatch: the spec's path on the nodes, for the prolog check (default: the SPEC "
                  "given here, made absolute; without one, the nodes' own default)");
  cmd->add_option("--gpufleet", e.gpufleet, "sbatch: the gpufleet binary on the nodes")
      ->capture_default_str();
  cmd->add_option("--rdzv-port", e.rdzv_port, "Rendezvous port")->capture_default_str();
  cmd->add_option("--socket-ifname", e.socket_ifname, "NCCL_SOCKET_IFNAME")->capture_default_str();
  cmd->add_option("--topo-file", e.topo_file, "NCCL_TOPO_FILE path on the nodes");
  cmd->add_option("--gpu-device-prefix", e.gpu_device_prefix, "gres.conf File= prefix")
      ->capture_default_str();
  cmd->add_option("--namespace", e.namespace_name, "Kubernetes namespace")->capture_default_str();
  cmd->add_option("--queue", e.queue, "Volcano queue")->capture_default_str();
  cmd->add_option("--image", e.image, "Container image")->capture_default_str();
  cmd->add_option("--rdma-resource", e.rdma_resource, "RDMA device-plugin resource name")
      ->capture_default_str();
  cmd->add_option("--agent-port", e.agent_port, "gpufleet agent port")->capture_default_str();
  cmd->add_option("--agent-image", e.agent_image,
                  "daemonset: the agent's image (default: gpufleet:VERSION, as scripts/package.sh "
                  "names it)");
  cmd->add_option("--agent-scheme", e.agent_scheme,
                  "prometheus-scrape: http, or https for agents with tls_server_config")
      ->capture_default_str();
  cmd->add_option("--agent-ca-file", e.agent_ca_file,
                  "prometheus-scrape: CA file that signed the agents' certificates");
  cmd->add_option("--agent-user", e.agent_user,
                  "prometheus-scrape: basic auth user the agents' web-config lists");
  cmd->add_option("--agent-password-file", e.agent_password_file,
                  "prometheus-scrape: file holding that user's password");
  cmd->add_option("--scrape-interval", e.scrape_interval,
                  "prometheus-scrape: how often to scrape and evaluate rules")
      ->capture_default_str();
  cmd->add_option("--alertmanager", e.alertmanager,
                  "prometheus-scrape: HOST:PORT of Alertmanager for the alerting section");
  return cmd;
}

int RunEmit(const EmitCliOptions& o) {
  Result<model::Spec> spec = model::LoadSpec(o.spec, o.set);
  if (!spec) return ReportError(spec.error());
  emit::EmitOptions e = o.emit;
  if (e.node_spec.empty() && !o.spec.empty()) {
    // The prolog judges each node against the spec this job was made from.
    char resolved[PATH_MAX];
    e.node_spec = ::realpath(o.spec.c_str(), resolved) != nullptr ? resolved : o.spec;
  }
  Result<topo::NodeTopology> topology = InvalidArgument("unused");
  if (!o.topology.empty()) {
    topology = topo::Discover(topo::DiscoverOptionsFor(o.topology));
    if (!topology) return ReportError(topology.error());
    const int found = static_cast<int>(topology->gpus.size());
    if (found != spec->cluster.nodes.gpus_per_node) {
      return ReportError(InvalidArgument(fmt::format(
          "{}: the topology has {} GPUs but the spec's nodes have {}: give this cluster's node",
          o.topology, found, spec->cluster.nodes.gpus_per_node)));
    }
    e.topology = &*topology;
  }
  const emit::Target* target = emit::FindTarget(o.target);
  if (target == nullptr) return ReportError(InvalidArgument("unknown emit target " + o.target));
  auto files = target->generate(*spec, e);
  if (!files) return ReportError(files.error());
  if (files->size() == 1) {
    if (Status s = WriteOutput(o.output, files->front().content); !s) return ReportError(s.error());
    return kExitOk;
  }
  if (o.output.empty()) {
    std::string all;
    for (const auto& f : *files) all += fmt::format("==> {} <==\n{}\n", f.name, f.content);
    if (Status s = WriteOutput("", all); !s) return ReportError(s.error());
    return kExitOk;
  }
  struct stat st {};
  if (::stat(o.output.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return ReportError(
        InvalidArgument(fmt::format("{}: {} writes {} files: -o must name an existing folder",
                                    o.output, o.target, files->size())));
  }
  for (const auto& f : *files) {
    if (Status s = WriteOutput(o.output + "/" + f.name, f.content); !s)
      return ReportError(s.error());
  }
  return kExitOk;
}

}  // namespace gpufleet::cli
