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

// A class of interruption with its rate per node per day of wall-clock time (exponential):
// the way the published counts were taken (interruptions per elapsed day of a job of that size),
// so failures keep arriving while the job is down and recovering.
struct FailureClass {
  std::string name;
  double per_node_per_day = 0;
  bool needs_node = true;  // hardware: the job restarts on another node (a spare if there is one)
  // Planned (maintenance, configuration or dataset updates): the job saves a checkpoint and stops
  // on purpose: no detection and no lost work, but the save, the restart and the load.
  bool planned = false;
};

// Published defaults: the 466 interruptions of Llama 3 405B's 54-day pre-training
// snapshot on 16,384 H100s in 2,048 nodes (Dubey et al. 2024, §3.3.4, Table 5): the
// 419 unexpected ones grouped by component, and the 47 planned ones, per node per day.
// docs/sim.md lists the rows.
const std::vector<FailureClass>& DefaultFailureClasses();

// Time to get the job training again after an interruption, in seconds. The defaults are
// published figures from the large jobs that reported them (docs/sim.md names each).
struct RestartCosts {
  double detect_s = 600;                // MegaScale 2024: detection + diagnostic tests < 10 min
  double reschedule_spare_s = 120;      // a hot spare takes the failed node's place (assumed)
  double reschedule_no_spare_s = 3600;  // wait for a node to be repaired or replaced (assumed)
  double init_s = 30;                   // MegaScale 2024: initialisation < 30 s on > 10,000 GPUs
  double load_s = 0;                    // read the checkpoint back (the plan's restore time)
  double warmup_s = 0;                  // beyond init: MegaScale's init ends at the first step
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
  // Effective training time: useful training over elapsed time, the definition of Llama 3
  // ("the time spent on useful training over the elapsed time"), MegaScale and Gemini.
  double mean = 0;
  double ci95 = 0;  // half-width of the 95 % confidence interval of the mean
  double stdev = 0;
  double min = 0, max = 0;
  double checkpoint_overhead = 0;  // blocking time / wall time (mean)
  double straggler_loss = 0;       // training time lost to slow steps / wall time (mean)
  double mtbf_s = 0;               // of the whole job, from the unplanned rates
  double unexpected_per_day = 0;   // interruptions, mean over trials (during recovery too)
  double planned_per_day = 0;
  std::vector<CauseStats> causes;
  std::vector<TimelineEvent> timeline;  // of trial 0
};

GoodputResult SimulateGoodput(const GoodputInput& in);

// Spares when the spec says "auto": twice the nodes expected in repair at once (failures that
// need a node and stragglers swapped out, x nodes x repair time), at least one when any can fail.
// The large jobs that published their recovery keep such a pool (MegaScale replaces evicted nodes
// with healthy ones at once); its size is gpufleet's rule, not a published figure.
int AutoSpares(const GoodputInput& in);

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
  bool spec = false;  // the spec's own interval, so the headline and the scan compare
};
// Goodput over a geometric grid of intervals around Young's (0.25x to 4x), with
// common random numbers (the same seeds at every interval), plus the spec's own interval
// (marked), in increasing order.
std::vector<IntervalPoint> ScanIntervals(const GoodputInput& in, int points);

}  // namespace gpufleet::sim
