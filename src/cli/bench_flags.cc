#include "cli/bench_flags.h"

namespace gpufleet::cli {
namespace {

void AddCommon(CLI::App* c, BenchCommon* o) {
  c->add_option("--backend", o->backend, "Transport: mpi (host buffers), nccl (one GPU per rank)")
      ->check(CLI::IsMember({"auto", "mpi", "nccl"}))
      ->capture_default_str();
  c->add_option("--timeout", o->timeout_s,
                "Seconds any rank may wait in one network operation before the run stops, "
                "naming the rank that did not answer (exit 3)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--startup-timeout", o->startup_timeout_s,
                "Seconds MPI start-up may wait for every rank (one that never starts, or hangs "
                "or dies inside MPI_Init) before the run stops (exit 3)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "html"}))
      ->capture_default_str();
  c->add_option("-o,--output", o->output, "Write the report to this file (rank 0)");
}

CLI::App* AddPairsCommand(CLI::App* app, BenchCommon* c, PairsFlags* f) {
  CLI::App* cmd = app->add_subcommand(
      "pairs", "Bandwidth and latency between node pairs; tells a slow node from a slow link");
  AddCommon(cmd, c);
  cmd->add_option("--size", f->size, "Bytes sent each way per exchange")->capture_default_str();
  cmd->add_option("-n,--iters", f->iters, "Timed exchanges per pair")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("-w,--warmup_iters", f->warmup, "Warm-up exchanges per pair")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--budget", f->budget, "Rounds to run (0: all n-1; fewer for large clusters)")
      ->check(CLI::Range(0, 10000000));
  cmd->add_option("--fraction", f->fraction,
                  "A pair below this fraction of the median is a suspect")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  // Test-only: make a rank, or the link between two ranks (A:B), slow (docs/bench.md).
  cmd->add_option("--inject-slow-rank", f->slow_rank)->group("");
  cmd->add_option("--inject-slow-link", f->slow_link)->group("");
  return cmd;
}

CLI::App* AddGpuCommand(CLI::App* app, BenchCommon* c, GpuFlags* f) {
  CLI::App* cmd = app->add_subcommand(
      "gpu", "GEMM TFLOP/s per type, HBM and host<->device bandwidth against the catalog (CUDA)");
  cmd->add_option("--format", c->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "html"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", c->output, "Write the report to this file");
  cmd->add_option("--dtype", f->dtypes, "GEMM types: bf16, fp16, tf32, fp32")->delimiter(',');
  cmd->add_option("--gemm-size", f->size, "M = N = K")
      ->check(CLI::Range(256, 65536))
      ->capture_default_str();
  cmd->add_option("-n,--iters", f->iters, "Timed repetitions")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--device", f->devices, "GPUs to test (default: every visible one)")
      ->delimiter(',');
  return cmd;
}

}  // namespace

BenchCommands AddBenchCommands(CLI::App* app, BenchFlags* f) {
  CollectiveFlags& cf = f->collective;
  CLI::App* coll = app->add_subcommand(
      "collective", "Collective bandwidth, latency and correctness over a size sweep");
  AddCommon(coll, &f->common);
  coll->add_option("OPS", cf.ops,
                   "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv, "
                   "or all (default all_reduce)");
  coll->add_option("-b,--minbytes", cf.minbytes, "Smallest size (K/M/G)")->capture_default_str();
  coll->add_option("-e,--maxbytes", cf.maxbytes, "Largest size (K/M/G)")->capture_default_str();
  coll->add_option("-i,--stepbytes", cf.stepbytes, "Linear step")->capture_default_str();
  coll->add_option("-f,--stepfactor", cf.stepfactor, "Multiplicative step (wins over -i)");
  coll->add_option("-w,--warmup_iters", cf.warmup, "Warm-up operations per size")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  coll->add_option("-n,--iters", cf.iters, "Timed operations per size")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  coll->add_option("-c,--check", cf.check, "Verified operations per size (0: none)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  coll->add_option("-d,--datatype,--dtype", cf.dtype, "Element type")->capture_default_str();
  coll->add_option("--redop", cf.redop, "Reduction: sum, prod, min, max, avg (nccl)")
      ->capture_default_str();
  coll->add_option("-r,--root", cf.root, "Root of broadcast and reduce")->capture_default_str();
  coll->add_option("--spec", cf.spec, "Cluster spec: judge busbw against the plan (nccl backend)");
  coll->add_option("--set", cf.set, "Change a spec value, PATH=VALUE");
  coll->add_option("--threshold", cf.threshold, "Fail below this fraction of the expected busbw")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  coll->add_option("--expect-busbw", cf.expect_busbw,
                   "A busbw floor for every op, e.g. '150 GB/s' (instead of the plan)");
  coll->add_option("--judge-from", cf.judge_from, "Judge busbw from this size up")
      ->capture_default_str();
  // Test-only: plants one corrupted element per size on this rank (docs/bench.md).
  coll->add_option("--inject-corruption-rank", cf.corrupt_rank)->group("");
  return {coll, AddPairsCommand(app, &f->common, &f->pairs),
          AddGpuCommand(app, &f->common, &f->gpu)};
}

}  // namespace gpufleet::cli
