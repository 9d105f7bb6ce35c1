#pragma once
// `bench pairs`: point-to-point bandwidth and latency between every pair of
// ranks (one rank per node), in rounds of disjoint pairs so no node serves two
// tests at once (n-1 rounds cover all pairs; --budget takes fewer), then a
// second pass that re-pairs each suspect with known-good nodes, so a slow node
// is told from a slow link. docs/bench.md.

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bench/data_plane.h"
#include "bench/mpi_world.h"
#include "bench/results.h"

namespace gpufleet::bench {

using Pair = std::pair<int, int>;  // first < second
using Round = std::vector<Pair>;

// The circle method: n-1 rounds (n even) or n rounds (n odd, one node idle
// each), every pair exactly once, no node twice in a round.
std::vector<Round> RoundRobin(int n);
// `budget` rounds spread evenly over the schedule (all when budget <= 0 or
// at least the schedule's length): every node is still tested in every round.
std::vector<Round> WithinBudget(const std::vector<Round>& rounds, int budget);
// Packs pairs into rounds with no node twice (greedy, in order).
std::vector<Round> PackRounds(const std::vector<Pair>& pairs);

struct PairResult {
  int a = 0, b = 0;
  double bandwidth_bytes_per_s = 0;  // per direction, both directions at once
  double latency_s = 0;              // half the median round trip of a small message
  bool retest = false;
};

struct PairsVerdict {
  std::string kind;  // "node", "link", "unresolved"
  std::vector<int> ranks;
  std::string message;
};

struct PairsReport {
  std::string backend;
  int ranks = 0;
  std::vector<std::string> hosts;
  uint64_t bytes = 0;
  int iters = 0;
  double fraction = 0.8;  // a pair below fraction x the reference is a suspect
  int rounds_run = 0, rounds_total = 0;
  double median_bandwidth_bytes_per_s = 0;     // of every first-pass pair (reported)
  double reference_bandwidth_bytes_per_s = 0;  // median over nodes of each node's median pair
  // What the second pass is judged by: the first pass's reference, or fraction x the lower
  // median of the second pass's control pairs (a suspect end with a good node) where that is
  // higher (the first pass held down as a whole).
  double retest_reference_bandwidth_bytes_per_s = 0;
  std::vector<PairResult> pairs;  // first pass then retests
  std::vector<Pair> suspects;
  std::vector<int> suspect_nodes;  // slow with most of their partners
  std::vector<int> good_nodes;     // in no suspect pair: the second pass's partners
  std::vector<Pair> transients;    // suspects that reached the floor when measured again
  std::vector<PairsVerdict> verdicts;
  bool passed() const { return verdicts.empty(); }
  bool IsSuspectNode(int rank) const {
    return std::find(suspect_nodes.begin(), suspect_nodes.end(), rank) != suspect_nodes.end();
  }
};

// From the first-pass results: the median, the suspect pairs (below
// fraction x median) and the retests: each suspect pair of unsuspected nodes
// measured again, and, to separate nodes from links, each
// suspect's ends paired with known-good nodes. Pure.
std::vector<Pair> PlanRetests(PairsReport* report);
// Reads the retests into verdicts: an end that is slow with a good partner is a
// slow node; a suspect pair fine when measured again is a transient (shown, not
// a failure); a pair whose ends are both fine elsewhere is a slow link. Each
// pass's pairs are held to that pass's floor (retest_reference). Pure.
void Conclude(PairsReport* report);

struct PairsOptions {
  uint64_t bytes = 64ull << 20;
  int iters = 10;
  int warmup = 2;
  int budget = 0;
  double fraction = 0.8;
  bool progress = false;
  // Test-only: a rank that delays every exchange, or a link (a, b) whose
  // exchanges are delayed, so the second pass has something to find.
  int slow_rank = -1;
  Pair slow_link = {-1, -1};
};

Result<PairsReport> RunPairs(MpiWorld* world, DataPlane* plane, const PairsOptions& options);

std::string PairsText(const PairsReport& r);
nlohmann::json PairsJson(const PairsReport& r);  // schema gpufleet.bench/v1, kind "pairs"

}  // namespace gpufleet::bench
