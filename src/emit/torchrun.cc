// torchrun: a launch script run once per node, with the NCCL environment and
// per-rank NUMA binding where the topology gives it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "emit/emit.h"
#include "topo/affinity.h"

namespace gpufleet::emit {

// The workload as flags for the user's training script: a template, named
// after what the spec says, to map onto the script's own arguments.
std::string TrainingArgs(const model::Spec& spec) {
  const auto& w = spec.workload;
  // The pipeline's shape beyond its size, where the spec gives one: interleaving, the
  // embedding and the loss in the split (Megatron's --account-for-*-in-pipeline-split), experts.
  std::string pipeline_shape;
  if (w.virtual_stages > 1) pipeline_shape += fmt::format(" --virtual-stages {}", w.virtual_stages);
  if (w.pipeline_split.embedding) pipeline_shape += " --embedding-in-pipeline-split";
  if (w.pipeline_split.loss) pipeline_shape += " --loss-in-pipeline-split";
  if (w.expert > 1) pipeline_shape += fmt::format(" --expert-parallel {}", w.expert);
  return fmt::format(
      "--strategy {} --tensor-parallel {} --pipeline-parallel {} --context-parallel {}{}{} "
      "--micro-batch-size {} --gradient-accumulation {} --global-batch-size {} --seq-length {} "
      "--precision {} --activation-checkpointing {}{}{}{}",
      model::StrategyName(w.strategy), w.tensor, w.pipeline, w.context, pipeline_shape,
      w.sequence_parallel ? " --sequence-parallel" : "", w.micro_batch, w.accumulation,
      w.global_batch, w.model.sequence, model::PrecisionName(w.precision),
      model::RecomputeName(w.recompute),
      w.recompute_layers > 0
          ? fmt::format(" --activation-checkpointing-layers {}", w.recompute_layers)
          : "",
      w.recompute == model::Recompute::kSelective &&
              w.recompute_modules != model::Workload::RecomputeModules{}
          ? fmt::format(" --activation-checkpointing-modules {}",
                        fmt::join(w.recompute_modules.Names(), ","))
          : "",
      w.shard > 0 ? fmt::format(" --shard-group {}", w.shard) : "");
}

// torchrun starts `bash -c CASE script args` per rank; CASE binds by LOCAL_RANK.
std::string BindingCase(const EmitOptions& o) {
  if (o.topology == nullptr) return "";
  std::string cases;
  for (const auto& g : topo::AffinityOf(*o.topology)) {
    if (g.numa < 0) continue;
    cases += fmt::format("{}) exec numactl --cpunodebind={} --membind={} python \"$0\" \"$@\";; ",
                         g.gpu, g.numa, g.numa);
  }
  if (cases.empty()) return "";
  return "case $LOCAL_RANK in " + cases + "*) exec python \"$0\" \"$@\";; esac";
}

Result<std::vector<GeneratedFile>> EmitTorchrun(const model::Spec& spec, const EmitOptions& o) {
  const auto& n = spec.cluster.nodes;
  std::string job = o.job_name.empty() ? spec.cluster.name : o.job_name;
  for (char& c : job) {
    if (!SlurmSafe(std::string(1, c))) c = '_';  // the rendezvous id: a plain token
  }
  std::string out = fmt::format(
      "#!/usr/bin/env bash\n"
      "# Multi-node launch for {}: {} nodes x {} GPUs (gpufleet emit torchrun).\n"
      "# Run on every node, e.g. from sbatch or pdsh, with MASTER_ADDR set to one node's address.\n"
      "set -euo pipefail\n"
      ": \"${{MASTER_ADDR:?set MASTER_ADDR to the rendezvous node}}\"\n"
      "MASTER_PORT=\"${{MASTER_PORT:-{}}}\"\n\n",
      CommentSafe(spec.cluster.name), n.count, n.gpus_per_node, o.rdzv_port);
  for (const auto& e : NcclEnvironment(spec, o)) {
    out += fmt::format("export {}={}  # {}\n", e.name, ShellQuote(e.value), e.why);
  }
  const std::string bind = BindingCase(o);
  out += fmt::format(
      "\n# Workload flags from the spec: a template to map onto your script's arguments.\n"
      "TRAIN_ARGS=({})\n\n",
      TrainingArgs(spec));
  out += fmt::format(
      "exec torchrun \\\n"
      "  --nnodes={} --nproc-per-node={} \\\n"
      "  --rdzv-backend=c10d --rdzv-endpoint=\"${{MASTER_ADDR}}:${{MASTER_PORT}}\" \\\n"
      "  --rdzv-id={} --max-restarts=3 \\\n",
      n.count, n.gpus_per_node, ShellQuote(job));
  if (!bind.empty()) {
    out += fmt::format("  --no-python bash -c {} \\\n  {} \"${{TRAIN_ARGS[@]}}\"\n",
                       ShellQuote("# each local rank on its GPU's NUMA node\n" + bind),
                       ShellQuote(o.script));
  } else {
    out += fmt::format("  {} \"${{TRAIN_ARGS[@]}}\"\n", ShellQuote(o.script));
  }
  return std::vector<GeneratedFile>{{"torchrun.sh", out}};
}

}  // namespace gpufleet::emit
