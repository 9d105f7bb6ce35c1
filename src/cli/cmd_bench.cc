#include "cli/cmd_bench.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "base/files.h"
#include "base/json.h"
#include "base/strings.h"
#include "bench/collective_def.h"
#include "bench/storage.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "model/spec.h"
#include "plan/plan.h"
#include "report/bench_report.h"

namespace gpufleet::cli {

CLI::App* AddBenchCommand(CLI::App& app, BenchOptions* o) {
  CLI::App* cmd = app.add_subcommand(
      "bench", "Measure collectives, node pairs, storage and GPUs; judge them against the plan");
  cmd->require_subcommand(1);
  const std::pair<const char*, const char*> forwarded[] = {
      {"collective", "Collective bandwidth, latency and correctness (run under mpirun or srun)"},
      {"pairs", "Bandwidth between node pairs; a slow node told from a slow link (mpirun/srun)"},
      {"gpu", "GEMM, HBM and host<->device bandwidth per GPU (CUDA)"},
  };
  for (const auto& [name, help] : forwarded) {
    CLI::App* sub = cmd->add_subcommand(name, help);
    // Everything after the subcommand, --help included, is gpufleet-bench's to parse.
    sub->prefix_command();
    sub->set_help_flag();
    sub->callback([o, sub, n = std::string(name)] {
      o->forward = n;
      o->forward_args = sub->remaining();
    });
  }
  CLI::App* st = cmd->add_subcommand(
      "storage", "Sequential, fsync, random-read, metadata and checkpoint tests in --path DIR");
  st->add_option("--path", o->path, "Folder to test (a folder of ours is made inside it)")
      ->required();
  st->add_option("--size", o->size, "Sequential test file (K/M/G)")->capture_default_str();
  st->add_option("--block-size", o->block, "I/O size of sequential tests")->capture_default_str();
  st->add_option("--fsyncs", o->fsyncs, "fsync calls timed")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  st->add_option("--jobs", o->jobs, "Random-read threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  st->add_option("--random-seconds", o->random_seconds, "Random-read duration")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  st->add_option("--metadata-files", o->metadata_files, "Files created, stat'ed and removed")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  st->add_option("--checkpoint-size", o->checkpoint_size,
                 "Checkpoint bytes this node writes (default: the spec's share per node; "
                 "none without a spec)");
  st->add_option("--shards", o->shards, "Checkpoint files written in parallel")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  st->add_option("--budget", o->budget_s, "Checkpoint time budget in seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  st->add_option("--direct", o->direct, "O_DIRECT: auto (fall back to buffered), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  st->add_option("--spec", o->spec, "Cluster spec: checkpoint share and input rate per node");
  st->add_option("--set", o->set, "Change a spec value, PATH=VALUE");
  st->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "html"}))
      ->capture_default_str();
  st->add_option("-o,--output", o->output, "Write the report to this file");
  st->callback([o] { o->storage_cmd = true; });
  return cmd;
}

namespace {

// Whether the forwarded command needs CUDA: `bench gpu`, or `--backend nccl`.
bool NeedsCuda(const BenchOptions& o) {
  if (o.forward == "gpu") return true;
  for (size_t i = 0; i < o.forward_args.size(); ++i) {
    const std::string& a = o.forward_args[i];
    if (a == "--backend=nccl") return true;
    if (a == "--backend" && i + 1 < o.forward_args.size() && o.forward_args[i + 1] == "nccl") {
      return true;
    }
  }
  return false;
}

// The first of `libs` (colon-separated sonames) that does not load, or "" when all do.
std::string MissingLibrary(const std::string& libs) {
  for (const std::string& lib : strings::Split(libs, ':')) {
    if (lib.empty()) continue;
    void* h = dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (h == nullptr) return lib;
    dlclose(h);
  }
  return "";
}

// gpufleet-bench-cuda where it was built and its libraries load; else gpufleet-bench (MPI only).
// A command that needs CUDA without it, or a distributed one (collective, pairs) without MPI's
// library, is exit 3 naming what is missing (the loader's own message would come from every
// rank); `bench gpu` needs no MPI (the helpers load it as a plugin, bench/mpi_plugin.h).
// GPUFLEET_BENCH_BINARY overrides the choice.
Result<std::string> HelperPath(const BenchOptions& o) {
  if (const char* env = std::getenv("GPUFLEET_BENCH_BINARY"); env != nullptr && *env) {
    return std::string(env);
  }
  if (const std::string mpi = o.forward == "gpu" ? "" : MissingLibrary(GPUFLEET_BENCH_MPI_LIB);
      !mpi.empty()) {
    return Unavailable(fmt::format(
        "bench {}: {} is not installed or not on the library path (gpufleet-bench needs the "
        "site's MPI, the one mpirun or srun launches with: Open MPI 4 or later)",
        o.forward, mpi));
  }
  const std::string dir = ExecutableDir();
  const std::string cuda = dir + "/gpufleet-bench-cuda";
  if (access(cuda.c_str(), X_OK) == 0) {
    const std::string missing = MissingLibrary(GPUFLEET_BENCH_CUDA_LIBS);
    if (missing.empty()) return cuda;
    if (NeedsCuda(o)) {
      return Unavailable(fmt::format(
          "bench {}: {} is not installed or not on the library path (gpufleet-bench-cuda needs "
          "the CUDA runtime, cuBLAS and NCCL from the host; install them or set LD_LIBRARY_PATH)",
          o.forward, missing));
    }
  }
  return dir + "/gpufleet-bench";
}

int Forward(const BenchOptions& o) {
  const Result<std::string> helper = HelperPath(o);
  if (!helper) return ReportError(helper.error());
  std::vector<std::string> args = {"gpufleet-bench", o.forward};
  args.insert(args.end(), o.forward_args.begin(), o.forward_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  execv(helper->c_str(), argv.data());
  return ReportError(Unavailable(
      fmt::format("bench {}: cannot run {}: {} (it is built and installed beside gpufleet)",
                  o.forward, *helper, std::strerror(errno))));
}

int RunStorage(const BenchOptions& o) {
  bench::StorageOptions s;
  s.path = o.path;
  // A size flag's value, its error naming the flag.
  auto size_flag = [](const char* flag, const std::string& text) -> Result<uint64_t> {
    auto v = bench::ParseSize(text);
    if (!v) return Error{v.error().code, std::string(flag) + ": " + v.error().message};
    return v;
  };
  auto size = size_flag("--size", o.size);
  if (!size) return ReportError(size.error());
  auto block = size_flag("--block-size", o.block);
  if (!block) return ReportError(block.error());
  s.file_bytes = *size;
  s.block_bytes = *block;
  s.fsyncs = o.fsyncs;
  s.jobs = o.jobs;
  s.random_seconds = o.random_seconds;
  s.metadata_files = o.metadata_files;
  s.shards = o.shards;
  s.checkpoint_budget_s = o.budget_s;
  s.direct = o.direct;
  s.progress = isatty(STDERR_FILENO) != 0;
  if (!o.spec.empty()) {
    auto spec = model::LoadSpec(o.spec, o.set);
    if (!spec) return ReportError(spec.error());
    auto plan = plan::MakePlan(*spec);
    if (!plan) return ReportError(plan.error());
    const double nodes = std::max(1, spec->cluster.nodes.count);
    s.checkpoint_bytes = static_cast<uint64_t>(plan->storage.checkpoint_bytes / nodes);
    s.read_needed_bytes_per_s = plan->storage.input_bytes_per_s_per_node;
  }
  if (!o.checkpoint_size.empty()) {
    auto c = size_flag("--checkpoint-size", o.checkpoint_size);
    if (!c) return ReportError(c.error());
    s.checkpoint_bytes = *c;
  }
  bench::InstallStorageSignalHandlers();
  auto r = bench::RunStorage(s);
  if (const int sig = bench::StorageInterruptSignal(); sig != 0) {
    std::fprintf(stderr,
                 "gpufleet: bench storage: interrupted by signal %d; its files are removed\n", sig);
    return 128 + sig;
  }
  if (!r) return ReportError(r.error());
  const std::string text = o.format == "json"   ? DumpJson(bench::StorageJson(*r))
                           : o.format == "html" ? report::BenchStorageHtml(*r)
                                                : bench::StorageText(*r);
  if (Status st = WriteOutput(o.output, text); !st) return ReportError(st.error());
  return r->passed() ? kExitOk : kExitFailed;
}

}  // namespace

int RunBench(const BenchOptions& o) {
  if (o.storage_cmd) return RunStorage(o);
  return Forward(o);
}

}  // namespace gpufleet::cli
