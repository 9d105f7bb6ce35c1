#include "sim/goodput.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <random>

namespace gpufleet::sim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDay = 86400;
constexpr size_t kTimelineMax = 20000;

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  double Uniform() { return static_cast<double>(g_() >> 11) * 0x1.0p-53; }
  double Exp(double rate) { return rate <= 0 ? kInf : -std::log1p(-Uniform()) / rate; }

 private:
  std::mt19937_64 g_;
};

// SplitMix64: independent, reproducible seeds for each trial from one seed.
uint64_t TrialSeed(uint64_t seed, int trial) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(trial + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The interruption rate of one node, per day: all classes, or the unplanned ones only.
double NodeFailuresPerDay(const GoodputInput& in, bool with_planned = true) {
  double rate = 0;
  for (const auto& c : in.classes) {
    if (with_planned || !c.planned) rate += c.per_node_per_day;
  }
  return rate;
}

struct TrialOut {
  double work = 0;  // useful training seconds reached by the horizon
  double blocked = 0;
  double straggle_lost = 0;
  std::vector<double> n, lost, down;  // per cause (the classes, then "straggler")
};

// One trial. Wall time t; `work` counts useful training seconds; `committed` is the
// work in the newest checkpoint that can be restored.
TrialOut RunTrial(const GoodputInput& in, uint64_t seed, std::vector<TimelineEvent>* timeline) {
  const size_t nc = in.classes.size();
  TrialOut out;
  out.n.assign(nc + 1, 0);
  out.lost.assign(nc + 1, 0);
  out.down.assign(nc + 1, 0);
  Rng rng(seed);
  const double total_rate = NodeFailuresPerDay(in);
  const double fail_rate = in.nodes * total_rate / kDay;
  const double strag_rate = in.nodes * in.straggler_per_node_per_day / kDay;
  const double H = in.horizon_s;
  const double interval = std::max(in.interval_s, 1.0);
  const RestartCosts& rc = in.restart;

  double t = 0, work = 0, committed = 0, since = 0;
  double pending_work = 0, pending_ready = kInf;  // async upload in flight
  // Stragglers in the job: those not yet found, each with the time it will be (in onset order),
  // and those found and waiting to be swapped out. The job runs at the slowest GPU's pace, so
  // one or several slow it alike.
  std::deque<double> finding;
  int found = 0;
  int spares = in.spares;
  std::vector<double> returns;  // when failed nodes come back to the spare pool
  double next_fail = rng.Exp(fail_rate);
  double next_strag = rng.Exp(strag_rate);
  auto upload_done = [&] {  // the in-flight upload is now restorable
    committed = pending_work;
    pending_ready = kInf;
  };
  auto log = [&](TimelineEvent e) {
    if (timeline && timeline->size() < kTimelineMax) timeline->push_back(std::move(e));
  };
  auto pick_cause = [&] {
    double u = rng.Uniform() * total_rate;
    for (size_t i = 0; i < nc; ++i) {
      u -= in.classes[i].per_node_per_day;
      if (u < 0) return i;
    }
    return nc - 1;
  };
  auto reschedule = [&](bool needs_node) {
    if (!needs_node) return 0.0;
    returns.erase(std::remove_if(returns.begin(), returns.end(),
                                 [&](double r) {
                                   if (r > t) return false;
                                   ++spares;
                                   return true;
                                 }),
                  returns.end());
    if (spares > 0) {
      --spares;
      returns.push_back(t + in.repair_s);
      return rc.reschedule_spare_s;
    }
    return rc.reschedule_no_spare_s;
  };
  // The stragglers whose detection has come by now (while the job was paused too) are found.
  auto note_found = [&] {
    while (!finding.empty() && finding.front() <= t) {
      finding.pop_front();
      ++found;
    }
  };
  // The found stragglers leave the job, each for a spare (or without one) and repair, as a failed
  // node does; the longest rescheduling.
  auto swap_found = [&] {
    note_found();
    double longest = 0;
    for (; found > 0; --found) longest = std::max(longest, reschedule(true));
    return longest;
  };
  auto recovery = [&](size_t cause) {
    const FailureClass& c = in.classes[cause];
    return (c.planned ? 0 : rc.detect_s) + reschedule(c.needs_node) + rc.init_s + rc.load_s +
           rc.warmup_s;
  };
  // The job restarts from `committed` after `down` seconds (cut at the horizon). Interruptions
  // keep arriving meanwhile (the sources count them per elapsed day): an unplanned one counts,
  // loses no work (none was done) and starts the recovery over with its own costs; a planned one
  // is done while the job is down anyway and only counted. Stragglers already found leave with
  // the restart (their spares taken; without a spare the restart waits for their rescheduling);
  // those not yet found stay.
  auto restart = [&](size_t cause, double down) {
    if (const double swap = swap_found(); swap > 0) {
      down = std::max(down, swap + rc.init_s + rc.load_s + rc.warmup_s);
    }
    double end = t + down;
    while (next_fail < std::min(end, H)) {
      out.down[cause] += next_fail - t;
      t = next_fail;
      next_fail = t + rng.Exp(fail_rate);
      const size_t again = pick_cause();
      out.n[again] += 1;
      if (in.classes[again].planned) continue;
      cause = again;
      down = recovery(cause);
      log({t, "failure", in.classes[cause].name, 0, down});
      end = t + down;
    }
    const double d = std::min(end, H) - t;
    out.down[cause] += d;
    t += d;
    work = committed;
    since = 0;
    pending_ready = kInf;  // an upload that had not finished is not there to restore from
  };
  auto fail = [&](double at) {
    t = at;
    next_fail = t + rng.Exp(fail_rate);
    const size_t cause = pick_cause();
    out.n[cause] += 1;
    if (in.classes[cause].planned) {  // save, stop, start again: nothing lost
      const double save = in.block_s + (in.async ? in.write_s : 0);
      committed = work;
      const double down = save + recovery(cause);
      log({t, "planned", in.classes[cause].name, 0, down});
      restart(cause, down);
      return;
    }
    const double lost = work - committed;
    out.lost[cause] += lost;
    const double down = recovery(cause);
    log({t, "failure", in.classes[cause].name, lost, down});
    restart(cause, down);
  };

  // Waits for the upload in flight, the wait charged to `into`, until it is restorable (true) or
  // the horizon or a failure comes first (false; the failure handled).
  auto await_upload = [&](double& into) {
    const double end = std::min({pending_ready, next_fail, H});
    into += end - t;
    t = end;
    if (t >= H) return false;
    if (t == next_fail) {
      fail(t);
      return false;
    }
    upload_done();
    return true;
  };

  while (t < H) {
    // What came due while the job was down or blocked (a restart, a checkpoint's block, a wait
    // for an upload) happens as it runs again: a straggler's onset, its detection, an upload's
    // end. Time never runs backwards (it once did, and took the work done with it).
    next_strag = std::max(next_strag, t);
    for (double& at : finding) at = std::max(at, t);
    pending_ready = std::max(pending_ready, t);
    const bool slow = !finding.empty() || found > 0;
    const double found_at = finding.empty() ? kInf : finding.front();
    const double speed = slow ? 1.0 - in.straggler_slowdown : 1.0;
    const double t_boundary = t + (interval - since) / speed;
    // The earliest event; ties go to the first in this order.
    const double when[] = {pending_ready, found_at, t_boundary, next_strag, next_fail, H};
    const int which =
        static_cast<int>(std::min_element(std::begin(when), std::end(when)) - std::begin(when));
    const double dt = when[which] - t;
    work += dt * speed;
    since += dt * speed;
    if (slow) out.straggle_lost += dt * (1 - speed);
    t = when[which];
    switch (which) {
      case 0:  // an async upload finished: restorable now
        upload_done();
        break;
      case 1:  // a straggler was found: swap it out at the next checkpoint
        note_found();
        break;
      case 2: {  // checkpoint
        since = 0;
        // The last upload has not finished: wait.
        if (in.async && pending_ready < kInf && !await_upload(out.blocked)) break;
        const double block = in.block_s;
        if (next_fail < t + block || H < t + block) {  // the checkpoint never completes
          const double end = std::min(next_fail, H);
          out.blocked += end - t;
          if (end == H) {
            t = H;
          } else {
            fail(end);
          }
          break;
        }
        t += block;
        out.blocked += block;
        log({t - block, "checkpoint", "", 0, block});
        if (!in.async || in.write_s <= 0) {
          committed = work;
        } else {
          pending_work = work;
          pending_ready = t + in.write_s;
        }
        // Fast-forward whole checkpoint cycles that nothing can interrupt: the cost of a
        // trial is then its failures, not its checkpoints (at a 30 s interval a 30-day
        // trial has 86,400 of them).
        if (!slow && (!in.async || in.write_s <= interval)) {
          const double cycle = interval + block;
          const double limit = std::min({next_fail, next_strag, H});
          const double k = std::floor((limit - t) / cycle) - 1;
          if (k >= 1) {
            t += k * cycle;
            work += k * interval;
            out.blocked += k * block;
            if (pending_ready < kInf) {  // async: the previous upload finished within the interval
              committed = work - interval;
              pending_work = work;
              pending_ready = t + in.write_s;
            } else {
              committed = work;
            }
          }
        }
        // Take the found stragglers out (those found during the block too): restart from this
        // checkpoint.
        note_found();
        if (found > 0) {
          if (pending_ready < kInf && !await_upload(out.down[nc])) break;
          const double down = swap_found() + rc.init_s + rc.load_s + rc.warmup_s;
          log({t, "restart", "straggler", 0, down});
          restart(nc, down);
        }
        break;
      }
      case 3:  // a GPU starts throttling: the job runs at its pace until every slow one is gone
        // (a second one while the first still slows the job adds no slowdown of its own, but is
        // counted, found after its own detection time and swapped out in turn; it was once
        // dropped, and the first one's swap took the job back to full speed)
        next_strag = t + rng.Exp(strag_rate);
        finding.push_back(t + in.straggler_detect_s);
        out.n[nc] += 1;
        log({t, "straggler", "straggler", 0, in.straggler_detect_s});
        break;
      case 4:
        fail(t);
        break;
      default:  // the horizon
        break;
    }
  }
  out.work = work;
  return out;
}

}  // namespace

const std::vector<FailureClass>& DefaultFailureClasses() {
  // Dubey et al. 2024 ("The Llama 3 Herd of Models", §3.3.4, Table 5): 466 interruptions, 419 of
  // them unexpected, in a 54-day snapshot on 2,048 nodes of 8 H100s = 110,592 node-days of
  // elapsed time. Table 5's counts (they sum to 419; its printed percentages do not: faulty GPU
  // 148 is printed 30.1 %, not 35.3 %). The paper says "up to 16K" GPUs and does not say the
  // snapshot's size: we take 2,048 nodes; on 1,024 every per-node rate would double.
  static const double kNodeDays = 2048.0 * 54;
  static const std::vector<FailureClass> kClasses = {
      // 47 planned: automated maintenance (firmware upgrades) and operator-initiated
      // configuration or dataset updates; in place, after a checkpoint.
      {"planned", 47 / kNodeDays, false, true},
      // faulty GPU 148, GPU SRAM 19, GPU system processor 17, thermal interface/sensor 6,
      // silent data corruption 6
      {"gpu", 196 / kNodeDays, true},
      {"hbm", 72 / kNodeDays, true},             // GPU HBM3 memory
      {"network", 35 / kNodeDays, true},         // network switch or cable
      {"nic", 7 / kNodeDays, true},              // NIC
      {"host-software", 63 / kNodeDays, false},  // software bug 54, NCCL watchdog 7, dependency 2
      // unplanned host maintenance 32, SSD 3, server chassis 2, IO expansion board 2, CPU 2,
      // system memory 2
      {"host-hardware", 43 / kNodeDays, true},
      {"psu", 3 / kNodeDays, true},  // power supply
  };
  return kClasses;
}

GoodputResult SimulateGoodput(const GoodputInput& in) {
  GoodputResult r;
  const int trials = std::max(1, in.trials);
  const size_t nc = in.classes.size();
  std::vector<double> g(static_cast<size_t>(trials));
  std::vector<double> n(nc + 1, 0), lost(nc + 1, 0), down(nc + 1, 0);
  double blocked = 0, strag = 0;
  for (int i = 0; i < trials; ++i) {
    TrialOut t = RunTrial(in, TrialSeed(in.seed, i), i == 0 ? &r.timeline : nullptr);
    g[static_cast<size_t>(i)] = t.work / in.horizon_s;
    blocked += t.blocked;
    strag += t.straggle_lost;
    for (size_t c = 0; c <= nc; ++c) {
      n[c] += t.n[c];
      lost[c] += t.lost[c];
      down[c] += t.down[c];
    }
  }
  double sum = 0;
  for (double x : g) sum += x;
  r.mean = sum / trials;
  double ss = 0;
  for (double x : g) ss += (x - r.mean) * (x - r.mean);
  r.stdev = trials > 1 ? std::sqrt(ss / (trials - 1)) : 0;
  r.ci95 = 1.96 * r.stdev / std::sqrt(static_cast<double>(trials));
  r.min = *std::min_element(g.begin(), g.end());
  r.max = *std::max_element(g.begin(), g.end());
  const double wall = in.horizon_s * trials;
  r.checkpoint_overhead = blocked / wall;
  r.straggler_loss = strag / wall;
  const double rate = NodeFailuresPerDay(in, false);
  r.mtbf_s = rate > 0 ? kDay / (in.nodes * rate) : kInf;
  const double days = wall / kDay;
  for (size_t c = 0; c <= nc; ++c) {
    if (c == nc && in.straggler_per_node_per_day <= 0) break;
    r.causes.push_back({c < nc ? in.classes[c].name : "straggler", n[c] / days,
                        lost[c] / 3600 / days, down[c] / 3600 / days});
    if (c < nc) (in.classes[c].planned ? r.planned_per_day : r.unexpected_per_day) += n[c] / days;
  }
  return r;
}

int AutoSpares(const GoodputInput& in) {
  // Every unplanned failure that needs a node, and every straggler swapped out, takes a spare and
  // sends its node to repair (the trial's reschedule).
  double rate = in.straggler_per_node_per_day;
  for (const auto& c : in.classes) {
    if (c.needs_node && !c.planned) rate += c.per_node_per_day;
  }
  if (rate <= 0) return 0;
  const double in_repair = in.nodes * rate * in.repair_s / kDay;
  return std::max(1, static_cast<int>(std::ceil(2 * in_repair)));
}

double YoungInterval(double delta_s, double mtbf_s) { return std::sqrt(2 * delta_s * mtbf_s); }

double DalyInterval(double delta_s, double mtbf_s) {
  if (delta_s >= 2 * mtbf_s) return mtbf_s;
  const double x = delta_s / (2 * mtbf_s);
  return std::sqrt(2 * delta_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - delta_s;
}

double FirstOrderWaste(double delta_s, double tau_s, double restart_s, double mtbf_s) {
  return delta_s / (tau_s + delta_s) + ((tau_s + delta_s) / 2 + restart_s) / mtbf_s;
}

std::vector<IntervalPoint> ScanIntervals(const GoodputInput& in, int points) {
  const double rate = NodeFailuresPerDay(in, false);
  const double mtbf = rate > 0 ? kDay / (in.nodes * rate) : 30 * kDay;
  const double delta = std::max(in.block_s, 1.0);
  const double young = YoungInterval(delta, mtbf);
  std::vector<IntervalPoint> out;
  points = std::max(points, 2);
  bool have_spec = false;
  for (int i = 0; i < points; ++i) {
    GoodputInput x = in;
    x.interval_s = young * std::pow(16.0, static_cast<double>(i) / (points - 1)) / 4;
    const bool spec = std::fabs(x.interval_s - in.interval_s) <= 0.005 * in.interval_s;
    if (spec) x.interval_s = in.interval_s;
    have_spec = have_spec || spec;
    GoodputResult r = SimulateGoodput(x);
    out.push_back({x.interval_s, r.mean, r.ci95, spec});
  }
  // The spec's own interval, wherever it falls, with the same random numbers.
  if (!have_spec && in.interval_s > 0) {
    GoodputResult r = SimulateGoodput(in);
    out.push_back({in.interval_s, r.mean, r.ci95, true});
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.interval_s < b.interval_s; });
  }
  return out;
}

}  // namespace gpufleet::sim
