// sbatch: a Slurm batch script running torchrun on every allocated node.
#include <fmt/format.h>

#include "emit/emit.h"

namespace gpufleet::emit {

std::string TrainingArgs(const model::Spec& spec);

Result<std::vector<GeneratedFile>> EmitSbatch(const model::Spec& spec, const EmitOptions& o) {
  const auto& n = spec.cluster.nodes;
  std::string job = o.job_name.empty() ? spec.cluster.name : o.job_name;
  // #SBATCH lines are not shell: keep the job name to a safe alphabet.
  for (char& c : job) {
    if (!SlurmSafe(std::string(1, c))) c = '_';
  }
  const int cpus = n.cpu.cores * n.sockets;
  std::string out = fmt::format(
      "#!/bin/bash\n"
      "# Slurm batch script for {} (gpufleet emit sbatch): {} nodes x {} GPUs, one torchrun per "
      "node.\n"
      "#SBATCH --job-name={}\n"
      "#SBATCH --nodes={}\n"
      "#SBATCH --ntasks-per-node=1\n"
      "#SBATCH --gpus-per-node={}\n",
      CommentSafe(spec.cluster.name), n.count, n.gpus_per_node, job, n.count, n.gpus_per_node);
  if (cpus > 0) out += fmt::format("#SBATCH --cpus-per-task={}\n", cpus);
  out +=
      "#SBATCH --exclusive\n"
      "# Requeue when a node fails; append so the log survives the requeue.\n"
      "#SBATCH --requeue\n"
      "#SBATCH --open-mode=append\n"
      "#SBATCH --output=%x-%j.out\n";
  if (!o.partition.empty() && SlurmSafe(o.partition)) {
    out += fmt::format("#SBATCH --partition={}\n", o.partition);
  }
  if (!o.time_limit.empty() && SlurmSafe(o.time_limit)) {
    out += fmt::format("#SBATCH --time={}\n", o.time_limit);
  }
  out += "set -euo pipefail\n\n";
  for (const auto& e : NcclEnvironment(spec, o)) {
    out += fmt::format("export {}={}  # {}\n", e.name, ShellQuote(e.value), e.why);
  }
  out += fmt::format(
      "\n# Prolog: every node checks its own health first and drains itself if unfit.\n"
      "srun --ntasks-per-node=1 --kill-on-bad-exit=1 gpufleet check --slurm\n\n"
      "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
      "export MASTER_ADDR MASTER_PORT={}\n"
      "TRAIN_ARGS=({})\n\n"
      "srun --ntasks-per-node=1 --kill-on-bad-exit=1 \\\n"
      "  torchrun --nnodes=\"$SLURM_NNODES\" --nproc-per-node={} \\\n"
      "  --rdzv-backend=c10d --rdzv-endpoint=\"${{MASTER_ADDR}}:${{MASTER_PORT}}\" \\\n"
      "  --rdzv-id=\"$SLURM_JOB_ID\" --max-restarts=3 \\\n"
      "  {} \"${{TRAIN_ARGS[@]}}\"\n",
      o.rdzv_port, TrainingArgs(spec), n.gpus_per_node, ShellQuote(o.script));
  return std::vector<GeneratedFile>{{"sbatch.sh", out}};
}

}  // namespace gpufleet::emit
