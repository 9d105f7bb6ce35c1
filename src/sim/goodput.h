#pragma once
// Goodput of one synchronous training job over a horizon (weeks), by
// discrete-event simulation: every failure stops the whole job, costs the
// detection and restart time and the work since the last checkpoint that can
// be restored; checkpoints cost their blocking time (the whole write when
// synchronous, the snapshot when asynchronous, whose upload must finish before
// it can be restored from); hot spares shorten the rescheduling; stragglers
// slow every step until they are found and swapped out. Seeded and
// reproducible: the same input and seed give the same result, on any machine.
// Pure; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

namespace gpufleet::sim {

// A class of interruption with its rate per node per day (exponential).
struct FailureClass {
  std::string name;
  double per_node_per_day = 0;
  bool needs_node = true;  // hardware: the job restarts on another node (a spare if there is one)
};

// Published defaults: the 419 unexpected interruptions of Llama 3 405B's 54-day
// pre-training on 16,384 H100s in 2,048 nodes (Dubey et al. 2024, §3.3.4,
// Table 5), grouped by component, per node per day. docs/sim.md lists the rows.
const std::vector<FailureClass>& DefaultFailureClasses();

// Time to get the job training again after an interruption, in seconds.
struct RestartCosts {
  double detect_s = 300;                // watchdog / health check notices (NCCL timeout order)
  double reschedule_spare_s = 120;      // a hot spare takes the failed node's place
  double reschedule_no_spare_s = 3600;  // wait for a node to be repaired or replaced
  double init_s = 120;                  // processes, NCCL / process-group init
  double load_s = 0;                    // read the checkpoint back
  double warmup_s = 300;                // data loader, compilation, first steps
};

struct GoodputInput {
  int nodes = 1;
  double horizon_s = 30 * 86400.0;
  std::vector<FailureClass> classes;  // empty = no failures
  double interval_s = 3600;           // training time between checkpoints
  bool async = true;
  double block_s = 0;  // training stops this long per checkpoint (sync: the whole write)
  double write_s = 0;  // async: the upload after the snapshot; restorable when it ends
  RestartCosts restart;
  int spares = 0;                 // hot spare nodes
  double repair_s = 3 * 86400.0;  // until a failed node is back in the spare pool
  double straggler_per_node_per_day = 0;
  double straggler_slowdown = 0.1;   // the whole job runs this much slower
  double straggler_detect_s = 3600;  // until it is found; then swapped at a restart
  int trials = 1000;
  uint64_t seed = 1;
};

struct CauseStats {
  std::string name;
  double interruptions_per_day = 0;  // mean over trials
  double lost_work_h_per_day = 0;    // training since the last restorable checkpoint
  double downtime_h_per_day = 0;     // detection + restart
};

struct TimelineEvent {
  double t_s = 0;
  std::string kind;  // "failure", "checkpoint", "straggler", "restart"
  std::string cause;
  double lost_s = 0;
  double duration_s = 0;
};

struct GoodputResult {
  double mean = 0;  // effective training time / wall time
  double ci95 = 0;  // half-width of the 95 % confidence interval of the mean
  double stdev = 0;
  double min = 0, max = 0;
  double checkpoint_overhead = 0;  // blocking time / wall time (mean)
  double straggler_loss = 0;       // training time lost to slow steps / wall time (mean)
  double mtbf_s = 0;               // of the whole job, from the rates
  std::vector<CauseStats> causes;
  std::vector<TimelineEvent> timeline;  // of trial 0
};

GoodputResult SimulateGoodput(const GoodputInput& in);

// Young (1974): tau = sqrt(2 delta M). Daly (2006, FGCS 22:303), higher order:
// tau = sqrt(2 delta M)[1 + sqrt(delta/(2M))/3 + (delta/(2M))/9] - delta for delta < 2M, else M.
double YoungInterval(double delta_s, double mtbf_s);
double DalyInterval(double delta_s, double mtbf_s);
// First-order waste (Daly-style): checkpoint cost delta/(tau+delta) plus, per unit time,
// the failure rate x (half a segment of lost work + restart R).
double FirstOrderWaste(double delta_s, double tau_s, double restart_s, double mtbf_s);

struct IntervalPoint {
  double interval_s = 0;
  double mean = 0;
  double ci95 = 0;
};
// Goodput over a geometric grid of intervals around Young's (0.25x to 4x), with
// common random numbers (the same seeds at every interval), and the best one.
std::vector<IntervalPoint> ScanIntervals(const GoodputInput& in, int points);

}  // namespace gpufleet::sim
