// gpufleet-bench: the MPI (and, when built with CUDA, NCCL and GPU) side of
// `gpufleet bench`. `gpufleet bench collective|pairs|gpu ...` executes this
// binary in place, so mpirun and srun launch `gpufleet bench ...` directly and
// the main tool never links MPI or CUDA. docs/bench.md.

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/files.h"
#include "base/json.h"
#include "base/units.h"
#include "bench/collective.h"
#include "bench/expected.h"
#include "bench/gpu.h"
#include "bench/pairs.h"
#include "cli/bench_flags.h"
#include "cli/exit_codes.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "model/spec.h"
#include "report/bench_report.h"

namespace gpufleet::cli {
namespace {

Result<std::unique_ptr<bench::DataPlane>> MakePlane(const std::string& backend,
                                                    bench::MpiWorld* world) {
  if (backend == "mpi") return bench::MakeMpiPlane(world);
  if (backend == "nccl") return bench::MakeNcclPlane(world);
  // auto: NCCL where it is built in and every rank has a GPU, else MPI.
  auto nccl = bench::MakeNcclPlane(world);
  if (nccl) return nccl;
  return bench::MakeMpiPlane(world);
}

// Everything each rank validates identically before any collective, so a bad
// flag fails every rank the same way (one message from rank 0, exit 2).
Result<bench::CollectiveOptions> CollectiveSettings(const CollectiveFlags& f) {
  bench::CollectiveOptions o;
  GPUFLEET_ASSIGN_OR_RETURN(o.ops, bench::ParseOps(f.ops));
  GPUFLEET_ASSIGN_OR_RETURN(o.type, bench::ParseDataType(f.dtype));
  GPUFLEET_ASSIGN_OR_RETURN(o.redop, bench::ParseRedOp(f.redop));
  GPUFLEET_ASSIGN_OR_RETURN(const uint64_t lo, bench::ParseSize(f.minbytes));
  GPUFLEET_ASSIGN_OR_RETURN(const uint64_t hi, bench::ParseSize(f.maxbytes));
  GPUFLEET_ASSIGN_OR_RETURN(const uint64_t step, bench::ParseSize(f.stepbytes));
  GPUFLEET_ASSIGN_OR_RETURN(o.sizes, bench::SizeSweep(lo, hi, f.stepfactor, step));
  if (hi > (64ull << 30)) {
    return InvalidArgument(fmt::format("-e/--maxbytes {}: above 64 GiB per buffer", f.maxbytes));
  }
  o.warmup = f.warmup;
  o.iters = f.iters;
  o.check = f.check;
  o.root = f.root;
  o.corrupt_rank = f.corrupt_rank;
  o.progress = isatty(STDERR_FILENO) != 0;
  return o;
}

// The first of `vars` the launcher set, as a number; 0 when not launched by one.
int FromLauncher(std::initializer_list<const char*> vars) {
  for (const char* var : vars) {
    if (const char* v = std::getenv(var); v != nullptr && *v) return std::atoi(v);
  }
  return 0;
}
// The rank mpirun (OpenMPI, PMIx) or srun gave this process, and its index on its node.
int LauncherRank() {
  return FromLauncher({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"});
}
int LauncherLocalRank() {
  return FromLauncher({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
}

// MPI start-up (MPI_Init and the plugin's first gathers) waits for every rank, and the run's
// watchdog does not exist yet: a rank that never starts, hangs, or dies inside MPI_Init where the
// launcher does not notice (Open MPI's start-up race, open-mpi/ompi#12495) would leave the others
// blocked there for good. This thread bounds it (--startup-timeout): past it the first rank of
// each node says so in one line, and every waiting rank exits 3, which ends the job.
class StartupWatchdog {
 public:
  // The line is written now, before MPI_Init runs (it may set the environment the launcher
  // variables are read from), and only by the first rank of each node.
  explicit StartupWatchdog(double timeout_s)
      : line_(LauncherLocalRank() != 0
                  ? ""
                  : fmt::format("gpufleet-bench: MPI start-up: no progress for {:g} s on {} (rank "
                                "{}): a rank did not start, or hung or died inside MPI_Init\n",
                                timeout_s, HostName(), LauncherRank())),
        thread_([this, timeout_s] {
          std::unique_lock lock(mu_);
          const auto limit =
              std::chrono::duration<double>(std::min(timeout_s, 1e7));  // no overflow
          if (done_cv_.wait_for(lock, limit, [this] { return done_; })) return;
          std::fputs(line_.c_str(), stderr);
          std::fflush(stderr);
          std::_Exit(kExitEnvironment);
        }) {}
  ~StartupWatchdog() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    done_cv_.notify_one();
    thread_.join();
  }
  StartupWatchdog(const StartupWatchdog&) = delete;
  StartupWatchdog& operator=(const StartupWatchdog&) = delete;

 private:
  const std::string line_;  // empty off the first rank of a node
  std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;   // guarded by mu_
  std::thread thread_;  // last: starts once the members it uses exist
};

int Finish(const bench::MpiWorld& world, const BenchCommon& c, const std::string& text,
           bool passed) {
  if (world.rank() != 0) return passed ? kExitOk : kExitFailed;
  if (Status s = WriteOutput(c.output, text); !s) return ReportError(s.error());
  return passed ? kExitOk : kExitFailed;
}

int RunCollective(bench::MpiWorld* world, const BenchCommon& c, const CollectiveFlags& f) {
  auto settings = CollectiveSettings(f);
  if (!settings) return world->rank() == 0 ? ReportError(settings.error()) : kExitBadInput;
  std::optional<bench::Expectation> expect;
  if (!f.expect_busbw.empty()) {
    auto bw = units::Parse(f.expect_busbw, units::Dimension::kBandwidth);
    if (!bw) return world->rank() == 0 ? ReportError(bw.error()) : kExitBadInput;
    expect = bench::Expectation::Flat(*bw);
  }
  auto judge_from = bench::ParseSize(f.judge_from);
  if (!judge_from) return world->rank() == 0 ? ReportError(judge_from.error()) : kExitBadInput;
  world->StartWatchdog(c.timeout_s);
  auto plane = MakePlane(c.backend, world);
  if (!plane)
    return world->rank() == 0 ? ReportError(plane.error()) : ExitCodeFor(plane.error().code);
  if (!f.spec.empty() && !expect) {
    auto spec = model::LoadSpec(f.spec, f.set);
    if (!spec) return world->rank() == 0 ? ReportError(spec.error()) : kExitBadInput;
    if ((*plane)->name() == "nccl") {
      expect = bench::Expectation::FromPlan(*spec, world->max_ranks_per_node(), world->nodes());
    } else if (world->rank() == 0) {
      std::fprintf(stderr,
                   "gpufleet: note: the plan's bus bandwidth is for GPU buffers moved by NCCL; "
                   "the mpi backend is not judged against it (use --expect-busbw)\n");
    }
  }
  auto report = bench::RunCollectives(world, plane->get(), *settings);
  if (!report)
    return world->rank() == 0 ? ReportError(report.error()) : ExitCodeFor(report.error().code);
  if (world->rank() != 0) return kExitOk;
  report->threshold = f.threshold;
  report->judge_from_bytes = *judge_from;
  if (expect) {
    for (auto& row : report->rows) {
      if (auto bw = expect->BusBw(row.op, row.bytes)) {
        row.expected_busbw_bytes_per_s = *bw;
        row.expected_from = expect->source();
      }
    }
  }
  bench::Judge(&*report);
  std::string text;
  if (c.format == "json") {
    text = DumpJson(bench::CollectiveJson(*report));
  } else if (c.format == "html") {
    text = report::BenchCollectiveHtml(*report);
  } else {
    text = bench::CollectiveText(*report);
  }
  return Finish(*world, c, text, report->passed());
}

int RunPairs(bench::MpiWorld* world, const BenchCommon& c, const PairsFlags& f) {
  auto bytes = bench::ParseSize(f.size);
  if (!bytes) return world->rank() == 0 ? ReportError(bytes.error()) : kExitBadInput;
  bench::PairsOptions o;
  o.bytes = *bytes;
  o.iters = f.iters;
  o.warmup = f.warmup;
  o.budget = f.budget;
  o.fraction = f.fraction;
  o.slow_rank = f.slow_rank;
  if (!f.slow_link.empty() &&
      std::sscanf(f.slow_link.c_str(), "%d:%d", &o.slow_link.first, &o.slow_link.second) != 2) {
    return world->rank() == 0 ? ReportError(InvalidArgument("--inject-slow-link: want A:B"))
                              : kExitBadInput;
  }
  o.progress = isatty(STDERR_FILENO) != 0;
  world->StartWatchdog(c.timeout_s);
  auto plane = MakePlane(c.backend, world);
  if (!plane)
    return world->rank() == 0 ? ReportError(plane.error()) : ExitCodeFor(plane.error().code);
  auto report = bench::RunPairs(world, plane->get(), o);
  if (!report)
    return world->rank() == 0 ? ReportError(report.error()) : ExitCodeFor(report.error().code);
  std::string text;
  if (world->rank() == 0) {
    text = c.format == "json"   ? DumpJson(bench::PairsJson(*report))
           : c.format == "html" ? report::BenchPairsHtml(*report)
                                : bench::PairsText(*report);
  }
  return Finish(*world, c, text, report->passed());
}

int RunGpu(const BenchCommon& c, const GpuFlags& f) {
  bench::GpuBenchOptions o;
  o.dtypes = f.dtypes;
  o.gemm_size = f.size;
  o.iters = f.iters;
  o.devices = f.devices;
  auto m = bench::RunGpuBench(o);
  if (!m) return ReportError(m.error());
  const std::string text = c.format == "json"   ? DumpJson(bench::GpuJson(*m))
                           : c.format == "html" ? report::BenchGpuHtml(*m)
                                                : bench::GpuText(*m);
  if (Status s = WriteOutput(c.output, text); !s) return ReportError(s.error());
  bool ok = true;
  for (const auto& x : *m) ok = ok && x.passed();
  return ok ? kExitOk : kExitFailed;
}

}  // namespace
}  // namespace gpufleet::cli

int main(int argc, char** argv) {
  using namespace gpufleet;
  using namespace gpufleet::cli;
  CLI::App app{"gpufleet bench: collectives, node pairs and GPUs, judged against the plan",
               "gpufleet bench"};
  app.require_subcommand(1);
  BenchFlags flags;
  const BenchCommands cmds = AddBenchCommands(&app, &flags);
  const BenchCommon& common = flags.common;

  try {
    gpufleet::cli::RequireFiniteNumbers(&app);
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Before MPI_Init the rank is only in the launcher's environment: one line, from rank 0.
    if (LauncherRank() == 0) {
      std::fprintf(stderr, "gpufleet: %s (see gpufleet bench --help)\n", e.what());
    }
    return kExitBadInput;
  }
  if (cmds.gpu->parsed()) return RunGpu(common, flags.gpu);

  auto world = [&] {
    const StartupWatchdog watchdog(common.startup_timeout_s);
    return bench::MpiWorld::Init(&argc, &argv);
  }();
  if (!world) {
    // The plugin or MPI did not load or start. Nodes may differ (one without the site's MPI on
    // its library path), ranks on a node do not: the first rank of each node says so, naming it.
    if (LauncherLocalRank() != 0) return ExitCodeFor(world.error().code);
    return ReportError(
        Error{world.error().code, fmt::format("{}: {}", HostName(), world.error().message)});
  }
  int rc = kExitOk;
  if (cmds.collective->parsed()) rc = RunCollective(world->get(), common, flags.collective);
  if (cmds.pairs->parsed()) rc = RunPairs(world->get(), common, flags.pairs);
  world->reset();
  return rc;
}
