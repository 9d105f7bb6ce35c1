// sbatch: a Slurm batch script for the cluster: every node checks its health against the spec
// first, then torchrun on every node (training), or `gpufleet bench collective` over every GPU
// (--bench: an acceptance run judged against the plan).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "emit/emit.h"

namespace gpufleet::emit {

std::string TrainingArgs(const model::Spec& spec);

namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

// Splits `s` at `sep` into exactly `n` all-digit fields.
bool DigitFields(std::string_view s, char sep, size_t n) {
  size_t fields = 0;
  while (true) {
    const size_t at = s.find(sep);
    if (!AllDigits(s.substr(0, at))) return false;
    ++fields;
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + 1);
  }
  return fields == n;
}

}  // namespace

Status CheckSlurmTime(std::string_view t) {
  std::string upper(t);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "INFINITE" || upper == "UNLIMITED") return OkStatus();
  bool ok = false;
  if (const size_t dash = t.find('-'); dash != std::string_view::npos) {
    // days-hours, days-hours:minutes, days-hours:minutes:seconds
    const std::string_view rest = t.substr(dash + 1);
    ok = AllDigits(t.substr(0, dash)) &&
         (DigitFields(rest, ':', 1) || DigitFields(rest, ':', 2) || DigitFields(rest, ':', 3));
  } else {
    // minutes, minutes:seconds, hours:minutes:seconds
    ok = DigitFields(t, ':', 1) || DigitFields(t, ':', 2) || DigitFields(t, ':', 3);
  }
  if (ok) return OkStatus();
  return InvalidArgument(fmt::format(
      "--time {}: not a Slurm time; use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or "
      "UNLIMITED",
      t));
}

Status CheckPartitions(std::string_view p) {
  size_t start = 0;
  while (start <= p.size()) {
    const size_t comma = std::min(p.find(',', start), p.size());
    if (!SlurmSafe(p.substr(start, comma - start))) {
      return InvalidArgument(fmt::format(
          "--partition {}: want partition names separated by commas (letters, digits, '.', '_', "
          "'-'), e.g. gpu,gpu-long",
          p));
    }
    start = comma + 1;
  }
  return OkStatus();
}

Result<std::vector<GeneratedFile>> EmitSbatch(const model::Spec& spec, const EmitOptions& o) {
  const auto& n = spec.cluster.nodes;
  if (!o.time_limit.empty()) GPUFLEET_RETURN_IF_ERROR(CheckSlurmTime(o.time_limit));
  if (!o.partition.empty()) GPUFLEET_RETURN_IF_ERROR(CheckPartitions(o.partition));
  if (o.cpus_per_task < 0) {
    return InvalidArgument(
        fmt::format("--cpus-per-task {}: want a whole number, 1 or more", o.cpus_per_task));
  }
  std::string job = o.job_name.empty() ? spec.cluster.name : o.job_name;
  // #SBATCH lines are not shell: keep the job name to a safe alphabet.
  for (char& c : job) {
    if (!SlurmSafe(std::string(1, c))) c = '_';
  }
  // One task per node running torchrun (which forks one rank per GPU), or one MPI rank per GPU.
  const int tasks_per_node = o.bench ? n.gpus_per_node : 1;
  const int cores = n.cpu.cores * n.sockets;
  const int cores_per_gpu = std::max(1, cores / std::max(1, n.gpus_per_node));
  const int cpus = o.cpus_per_task > 0
                       ? o.cpus_per_task
                       : (o.bench ? cores_per_gpu : cores_per_gpu * n.gpus_per_node);
  const std::string cpu_why =
      o.cpus_per_task > 0
          ? fmt::format("--cpus-per-task (the spec has {} cores per GPU)", cores_per_gpu)
      : o.bench ? fmt::format("the spec's {} cores per GPU", cores_per_gpu)
                : fmt::format("the spec's {} cores per GPU x {} GPUs (torchrun's ranks share them)",
                              cores_per_gpu, n.gpus_per_node);
  std::string out = fmt::format(
      "#!/bin/bash\n"
      "# Slurm batch script for {} (gpufleet emit sbatch{}): {} nodes x {} GPUs, {}.\n"
      "#SBATCH --job-name={}\n"
      "#SBATCH --nodes={}\n"
      "#SBATCH --ntasks-per-node={}\n"
      "#SBATCH --gpus-per-node={}\n"
      "# CPUs per task: {}.\n"
      "#SBATCH --cpus-per-task={}\n"
      "#SBATCH --exclusive\n"
      "# Requeue when a node fails; append so the log survives the requeue.\n"
      "#SBATCH --requeue\n"
      "#SBATCH --open-mode=append\n"
      "#SBATCH --output=%x-%j.out\n",
      CommentSafe(spec.cluster.name), o.bench ? " --bench" : "", n.count, n.gpus_per_node,
      o.bench ? "one gpufleet bench rank per GPU" : "one torchrun per node", job, n.count,
      tasks_per_node, n.gpus_per_node, cpu_why, cpus);
  if (!o.partition.empty()) out += fmt::format("#SBATCH --partition={}\n", o.partition);
  if (!o.time_limit.empty()) out += fmt::format("#SBATCH --time={}\n", o.time_limit);
  out +=
      "set -euo pipefail\n"
      "# Since Slurm 22.05 srun no longer takes --cpus-per-task from sbatch: without this every\n"
      "# step's task would get one CPU.\n"
      "export SRUN_CPUS_PER_TASK=\"$SLURM_CPUS_PER_TASK\"\n\n";
  for (const auto& e : NcclEnvironment(spec, o)) {
    out += fmt::format("export {}={}  # {}\n", e.name, ShellQuote(e.value), e.why);
  }
  // The spec the nodes judge themselves against: the one given to emit (it must be readable at
  // this path on the nodes), or the nodes' own default (GPUFLEET_SPEC, /etc/gpufleet/cluster.yaml).
  const std::string spec_flag =
      o.node_spec.empty() ? "" : fmt::format(" --spec {}", ShellQuote(o.node_spec));
  out += fmt::format(
      "\n# Prolog: every node checks its own health against the cluster spec before any rank "
      "runs.\n"
      "# As the job user it cannot drain a node (Slurm's HealthCheckProgram, as root, does); a\n"
      "# node that fails stops the job here, named in the output. --unknown-ok: a job user cannot\n"
      "# read the kernel log (kernel.dmesg_restrict), which alone is no reason to stop. One task\n"
      "# per node, whatever the job's own tasks per node.\n"
      "if ! srun --nodes=\"$SLURM_JOB_NUM_NODES\" --ntasks=\"$SLURM_JOB_NUM_NODES\" "
      "--ntasks-per-node=1 \\\n"
      "    --cpus-per-task=1 --kill-on-bad-exit=1 \\\n"
      "    {} check{} --slurm --unknown-ok; then\n"
      "  echo \"gpufleet: a node failed its health check (above): not starting the job\" >&2\n"
      "  exit 1\n"
      "fi\n\n",
      ShellQuote(o.gpufleet), spec_flag);
  if (o.bench) {
    out += fmt::format(
        "# Every GPU, one MPI rank each, judged against the plan's expected bus bandwidth; the\n"
        "# result goes where the node's gpufleet agent exports it (agent --bench-dir).\n"
        "BENCH_DIR=\"${{GPUFLEET_BENCH_DIR:-/var/lib/gpufleet/bench}}\"\n"
        "read -ra BENCH_ARGS <<< \"${{GPUFLEET_BENCH_ARGS:-all -b 1M -e 1G -f 2}}\"\n"
        "srun --mpi=pmix --kill-on-bad-exit=1 \\\n"
        "  {} bench collective \"${{BENCH_ARGS[@]}}\"{} --format json \\\n"
        "  -o \"$BENCH_DIR/collective-$SLURM_JOB_ID.json\"\n",
        ShellQuote(o.gpufleet), spec_flag);
    return std::vector<GeneratedFile>{{"sbatch.sh", out}};
  }
  out += fmt::format(
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
