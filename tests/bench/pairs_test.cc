// The pairs schedule and the second pass's reasoning, on synthetic measurements.

#include "bench/pairs.h"

#include <gtest/gtest.h>

#include <set>

#include "report/bench_report.h"

namespace gpufleet::bench {
namespace {

TEST(RoundRobinTest, EveryPairOnceNoNodeTwicePerRound) {
  for (int n = 2; n <= 33; ++n) {
    const auto rounds = RoundRobin(n);
    EXPECT_EQ(static_cast<int>(rounds.size()), n % 2 == 0 ? n - 1 : n) << n;
    std::set<Pair> seen;
    for (const auto& round : rounds) {
      std::set<int> busy;
      for (const auto& p : round) {
        EXPECT_LT(p.first, p.second);
        EXPECT_TRUE(busy.insert(p.first).second) << n;
        EXPECT_TRUE(busy.insert(p.second).second) << n;
        EXPECT_TRUE(seen.insert(p).second) << n;
      }
      EXPECT_GE(static_cast<int>(busy.size()), n - 1);  // at most one idle node
    }
    EXPECT_EQ(static_cast<int>(seen.size()), n * (n - 1) / 2);
  }
  EXPECT_TRUE(RoundRobin(1).empty());
}

TEST(RoundRobinTest, BudgetKeepsWholeRounds) {
  const auto all = RoundRobin(64);
  const auto some = WithinBudget(all, 5);
  ASSERT_EQ(some.size(), 5u);
  for (const auto& r : some) EXPECT_EQ(r.size(), 32u);  // every node still tested each round
  EXPECT_EQ(WithinBudget(all, 0).size(), all.size());
  EXPECT_EQ(WithinBudget(all, 1000).size(), all.size());
}

TEST(RoundRobinTest, PackRoundsIsDisjoint) {
  const auto rounds = PackRounds({{0, 1}, {1, 2}, {2, 3}, {0, 3}, {4, 5}});
  for (const auto& r : rounds) {
    std::set<int> busy;
    for (const auto& p : r) {
      EXPECT_TRUE(busy.insert(p.first).second);
      EXPECT_TRUE(busy.insert(p.second).second);
    }
  }
  EXPECT_EQ(rounds.size(), 2u);
}

// Measured pairs: 10 GB/s except where `slow` says.
PairsReport Measured(int n, double (*bw)(int, int)) {
  PairsReport r;
  r.ranks = n;
  for (int i = 0; i < n; ++i) r.hosts.push_back("node" + std::to_string(i));
  for (const auto& round : RoundRobin(n)) {
    for (const auto& p : round)
      r.pairs.push_back({p.first, p.second, bw(p.first, p.second), 2e-6, false});
  }
  return r;
}

void RunRetests(PairsReport* r, double (*bw)(int, int)) {
  for (const auto& p : PlanRetests(r))
    r->pairs.push_back({p.first, p.second, bw(p.first, p.second), 2e-6, true});
  Conclude(r);
}

TEST(SecondPassTest, SlowLinkIsALink) {
  auto bw = [](int a, int b) { return a == 1 && b == 4 ? 2e9 : 10e9; };
  auto r = Measured(6, bw);
  RunRetests(&r, bw);
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].kind, "link");
  EXPECT_EQ(r.verdicts[0].ranks, (std::vector<int>{1, 4}));
  EXPECT_NE(r.verdicts[0].message.find("rank 1 (node1) and rank 4 (node4)"), std::string::npos);
}

TEST(SecondPassTest, SlowNodeIsANode) {
  auto bw = [](int a, int b) { return a == 2 || b == 2 ? 3e9 : 10e9; };
  auto r = Measured(8, bw);
  RunRetests(&r, bw);
  ASSERT_EQ(r.verdicts.size(), 1u) << r.verdicts[1].message;
  EXPECT_EQ(r.verdicts[0].kind, "node");
  EXPECT_EQ(r.verdicts[0].ranks, (std::vector<int>{2}));
}

// Issue 12: "Verdict: pass. No findings." beside two pairs below the floor. Node 3 is slow with
// two of its three partners, so it is a suspect node; its retest with a good node passes, and its
// slow pairs were then never judged again.
TEST(SecondPassTest, EveryPairBelowTheFloorIsAFinding) {
  auto bw = [](int a, int b) { return b == 3 && (a == 1 || a == 2) ? 2e9 : 10e9; };
  auto r = Measured(4, bw);
  RunRetests(&r, bw);
  EXPECT_EQ(r.suspect_nodes, (std::vector<int>{3}));
  EXPECT_FALSE(r.passed());
  ASSERT_EQ(r.suspects.size(), 2u);
  for (const auto& s : r.suspects) {
    bool found = false;
    for (const auto& v : r.verdicts) {
      found = found || v.ranks == std::vector<int>{s.first, s.second} ||
              (v.kind == "node" && (v.ranks[0] == s.first || v.ranks[0] == s.second));
    }
    EXPECT_TRUE(found) << s.first << "-" << s.second << " below the floor but in no verdict";
  }
  ASSERT_EQ(r.verdicts.size(), 2u);
  EXPECT_EQ(r.verdicts[0].kind, "link");
  EXPECT_EQ(r.verdicts[1].kind, "link");
}

// Found on the cluster in a box: on 4 nodes a slow node is in half the pairs, the median of all
// pairs was one of its slow pairs, and nothing fell below the floor ("verdict: pass").
TEST(SecondPassTest, SlowNodeOfFourIsFound) {
  auto bw = [](int a, int b) { return a == 2 || b == 2 ? 0.05e9 : 10e9; };
  auto r = Measured(4, bw);
  RunRetests(&r, bw);
  EXPECT_EQ(r.reference_bandwidth_bytes_per_s, 10e9);
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].kind, "node");
  EXPECT_EQ(r.verdicts[0].ranks, (std::vector<int>{2}));
}

// Seen in CI (5 ranks on 2 cores): rank 3 slow (injected), and pairs 1-2 and 0-4 dipped once from
// contention. With no good node left, the dips were judged slow links on one sample.
TEST(SecondPassTest, ADipThatDoesNotRepeatIsATransient) {
  auto first = [](int a, int b) {
    if (a == 3 || b == 3) return 0.4e9;
    if ((a == 1 && b == 2) || (a == 0 && b == 4)) return 0.19e9;
    return 5.5e9;
  };
  auto again = [](int a, int b) { return a == 3 || b == 3 ? 0.4e9 : 5.5e9; };
  auto r = Measured(5, first);
  RunRetests(&r, again);
  ASSERT_EQ(r.verdicts.size(), 1u) << r.verdicts[1].message;
  EXPECT_EQ(r.verdicts[0].kind, "node");
  EXPECT_EQ(r.verdicts[0].ranks, (std::vector<int>{3}));
  EXPECT_EQ(r.transients, (std::vector<Pair>{{0, 4}, {1, 2}}));
  const std::string text = PairsText(r);
  EXPECT_NE(text.find("# warn: rank 0 (node0) <-> rank 4 (node4) was below the floor once"),
            std::string::npos)
      << text;
  EXPECT_EQ(PairsJson(r)["transients"].size(), 2u);
}

// Seen on a loaded host (4 ranks on 2 cores beside a build): the injected slow link 0-2 and a
// dip of 2-3 made rank 2 slow with two of its three partners. Its retest met rank 0, the other
// end of the slow link, and rank 2 was named a slow node. Now it meets a node it was fine with,
// and its slow pairs are measured again: one link, one transient.
TEST(SecondPassTest, ASlowLinkBesideADipIsNotASlowNode) {
  auto first = [](int a, int b) {
    if (a == 0 && b == 2) return 0.43e9;
    if (a == 2 && b == 3) return 0.07e9;
    return 3e9;
  };
  auto again = [](int a, int b) { return a == 0 && b == 2 ? 0.43e9 : 3e9; };
  auto r = Measured(4, first);
  EXPECT_EQ(r.suspect_nodes, std::vector<int>{});  // (set by PlanRetests below)
  RunRetests(&r, again);
  EXPECT_EQ(r.suspect_nodes, std::vector<int>{2});
  ASSERT_EQ(r.verdicts.size(), 1u) << r.verdicts[0].message;
  EXPECT_EQ(r.verdicts[0].kind, "link");
  EXPECT_EQ(r.verdicts[0].ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(r.transients, (std::vector<Pair>{{2, 3}}));
}

// A slow link is slow every time: measured again, it stays a finding.
TEST(SecondPassTest, ASlowLinkMeasuredAgainStaysALink) {
  auto bw = [](int a, int b) { return a == 0 && b == 2 ? 1e9 : 10e9; };
  auto r = Measured(4, bw);
  const auto plan = PlanRetests(&r);
  EXPECT_NE(std::find(plan.begin(), plan.end(), Pair{0, 2}), plan.end());
  for (const auto& p : plan)
    r.pairs.push_back({p.first, p.second, bw(p.first, p.second), 2e-6, true});
  Conclude(&r);
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].kind, "link");
  EXPECT_TRUE(r.transients.empty());
}

// Seen in CI (4 ranks on 2 cores under AddressSanitizer, a busy host): the whole first pass was
// held down but for one pair, its reference 0.07 GB/s, and the injected slow link 0-2, at 0.02
// when measured again, reached that floor and was called a transient while its controls ran at
// 1.85 and 2.19. The second pass is held to its own controls.
TEST(SecondPassTest, ASlowFirstPassDoesNotExcuseASlowLink) {
  auto first = [](int a, int b) {
    const double gbs[4][4] = {{0, 2.47, 0.001, 0.03}, {0, 0, 0.03, 0.07}, {0, 0, 0, 0.09}};
    return gbs[a][b] * 1e9;
  };
  auto again = [](int a, int b) {
    return (a == 0 && b == 2 ? 0.022 : a == 0 && b == 1 ? 2.19 : 1.85) * 1e9;
  };
  auto r = Measured(4, first);
  r.fraction = 0.3;  // as the test ran
  RunRetests(&r, again);
  EXPECT_NEAR(r.reference_bandwidth_bytes_per_s, 0.07e9, 1);
  // 30 % of the lower of 1.85 and 2.19: the floor is 30 % of that, 0.17 GB/s.
  EXPECT_DOUBLE_EQ(r.retest_reference_bandwidth_bytes_per_s, 0.3 * 1.85e9);
  ASSERT_EQ(r.verdicts.size(), 1u) << PairsText(r);
  EXPECT_EQ(r.verdicts[0].kind, "link");
  EXPECT_EQ(r.verdicts[0].ranks, (std::vector<int>{0, 2}));
  EXPECT_TRUE(r.transients.empty()) << PairsText(r);
  EXPECT_NE(PairsText(r).find("# second pass judged by 0.5"), std::string::npos);
  EXPECT_DOUBLE_EQ(PairsJson(r)["retest_reference_bandwidth_bytes_per_s"].get<double>(),
                   0.3 * 1.85e9);
  EXPECT_NE(report::BenchPairsHtml(r).find("second pass 0.5"), std::string::npos);
}

// Where the controls are a slow node's pairs, the second pass keeps the first pass's reference:
// a slow node does not lower the bar for itself.
TEST(SecondPassTest, ASlowNodesControlsDoNotLowerTheFloor) {
  auto bw = [](int a, int b) { return a == 2 || b == 2 ? 0.05e9 : 10e9; };
  auto r = Measured(6, bw);
  RunRetests(&r, bw);
  EXPECT_EQ(r.retest_reference_bandwidth_bytes_per_s, r.reference_bandwidth_bytes_per_s);
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].kind, "node");
}

// A second pass runs a few pairs at a time and is often faster than the first. Its bar rises only
// as far as the first pass's reference would itself have been a suspect beside its controls
// (fraction x their lower median): a control a little below its faster twins is not a slow node,
// nor a dip measured again a little below them a slow link (a bar at the controls' own median,
// 12.5 GB/s here, made both, with the first pass at 10).
TEST(SecondPassTest, AFasterSecondPassKeepsTheFirstPassesBar) {
  // Slow links 0-3 and 1-4 of six nodes: four controls, rank 0's at 9, the others at 12.5.
  auto first = [](int a, int b) { return (a == 0 && b == 3) || (a == 1 && b == 4) ? 1e9 : 10e9; };
  auto again = [](int a, int b) {
    if ((a == 0 && b == 3) || (a == 1 && b == 4)) return 1e9;
    return a == 0 ? 9e9 : 12.5e9;
  };
  auto r = Measured(6, first);
  RunRetests(&r, again);
  EXPECT_EQ(r.retest_reference_bandwidth_bytes_per_s, 10e9);
  ASSERT_EQ(r.verdicts.size(), 2u) << PairsText(r);
  for (const auto& v : r.verdicts) EXPECT_EQ(v.kind, "link") << v.message;
  // A dip of 0-3 measured again at 9 beside controls at 12.5: a transient.
  auto dip = [](int a, int b) { return a == 0 && b == 3 ? 1e9 : 10e9; };
  auto dip_again = [](int a, int b) { return a == 0 && b == 3 ? 9e9 : 12.5e9; };
  auto d = Measured(4, dip);
  RunRetests(&d, dip_again);
  EXPECT_TRUE(d.passed()) << PairsText(d);
  EXPECT_EQ(d.transients, (std::vector<Pair>{{0, 3}}));
}

TEST(SecondPassTest, HealthyFleetPasses) {
  auto bw = [](int a, int b) { return 10e9 + (a * 7 + b) % 5 * 1e8; };
  auto r = Measured(16, bw);
  RunRetests(&r, bw);
  EXPECT_TRUE(r.passed());
  EXPECT_TRUE(r.suspects.empty());
}

TEST(SecondPassTest, OutputNamesTheOutlier) {
  auto bw = [](int a, int b) { return a == 0 && b == 3 ? 1e9 : 10e9; };
  auto r = Measured(4, bw);
  RunRetests(&r, bw);
  const std::string text = PairsText(r);
  EXPECT_NE(text.find("# fail: rank 0 (node0) and rank 3 (node3) are fine"), std::string::npos)
      << text;
  const auto j = PairsJson(r);
  EXPECT_EQ(j["kind"], "pairs");
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["verdicts"][0]["kind"], "link");
  const std::string html = report::BenchPairsHtml(r);
  EXPECT_NE(html.find("<rect"), std::string::npos);  // the heat map
}

}  // namespace
}  // namespace gpufleet::bench
