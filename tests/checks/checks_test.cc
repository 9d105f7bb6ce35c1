#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../topo/test_node.h"
#include "checks/check.h"
#include "checks/slurm.h"

namespace gpufleet::checks {
namespace {

using ::testing::ElementsAre;

model::Spec TwoGpuSpec() {
  auto s = model::ReferenceSpec(
      {{"nodes.count", "1"}, {"nodes.gpu.count", "2"}, {"nodes.nics[0].speed", "200 Gb/s"}});
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

std::vector<std::string> Summary(const std::vector<Finding>& f) {
  std::vector<std::string> out;
  for (const auto& x : f) {
    if (x.status != Status::kPass)
      out.push_back(x.check + ":" + x.component + ":" + std::string(StatusName(x.status)));
  }
  return out;
}

TEST(ChecksTest, HealthyNodePasses) {
  const model::Spec spec = TwoGpuSpec();
  const topo::NodeTopology node = topo::testing::SmallNode();  // 2 GPUs, 3 NICs at 200 Gb/s
  CheckContext ctx{&spec, &node, {{"/tmp", 0.5}}, 0.95};
  auto f = RunAll(ctx);
  EXPECT_THAT(Summary(f), ::testing::IsEmpty());
  EXPECT_EQ(Worst(f), Status::kPass);
  EXPECT_EQ(f.size(), Checks().size());  // one pass line per check
}

TEST(ChecksTest, EachFaultIsNamedWithItsNumbersAndAction) {
  const model::Spec spec = TwoGpuSpec();
  topo::NodeTopology node = topo::testing::SmallNode();
  node.nics[1].ports[0].state = "DOWN";
  node.nics[1].ports[0].phys_state = "Polling";
  node.nics[2].ports[0].rate_bytes_per_s = 12.5e9;                      // 100 Gb/s of 200
  node.pci[static_cast<size_t>(node.gpus[0].pci)].current = {16, 8};    // x8 of x16
  node.pci[static_cast<size_t>(node.gpus[1].pci)].current = {2.5, 16};  // idle step-down
  node.gpus[1].nvlinks[0].count = 10;
  CheckContext ctx{&spec, &node, {{"/tmp", 0.97}, {"/", 0.90}}, 0.95};
  auto f = RunAll(ctx);
  EXPECT_THAT(Summary(f),
              ElementsAre("infiniband:mlx5_1 port 1:fail", "infiniband:mlx5_2 port 1:fail",
                          "pcie-link:gpu 0000:03:00.0:fail", "pcie-link:gpu 0000:83:00.0:warn",
                          "nvlink:GPU1:fail", "disk-space:/tmp:fail", "disk-space:/:warn"));
  EXPECT_EQ(Worst(f), Status::kFail);
  for (const auto& x : f) {
    if (x.check == "infiniband" && x.component == "mlx5_2 port 1") {
      EXPECT_EQ(x.message, "runs at 100 Gb/s, the spec says 200 Gb/s");
      EXPECT_EQ(x.action, Action::kDrain);
    }
  }
  node.gpus.pop_back();
  auto missing = CheckGpuCount(ctx);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].action, Action::kDrainAndReboot);
}

TEST(SlurmTest, ParsesScontrolOneLineOutput) {
  auto n = ParseScontrolNode(
      "NodeName=gpu01 Arch=x86_64 CoresPerSocket=1 State=IDLE+DRAIN ThreadsPerCore=1 "
      "Reason=gpufleet: infiniband: mlx5_0 port 1: down [root@2026-11-29T12:00:00]\n");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->state, "IDLE+DRAIN");
  EXPECT_EQ(n->reason, "gpufleet: infiniband: mlx5_0 port 1: down");
  EXPECT_TRUE(n->Drained());
  EXPECT_FALSE(ParseScontrolNode("garbage"));
}

TEST(SlurmTest, DrainsOnFailureResumesOnlyItsOwnDrain) {
  const std::vector<Finding> bad = {
      {Status::kFail, "infiniband", "mlx5_0 port 1", "state \"DOWN\"", Action::kDrain}};
  const std::vector<Finding> good = {{Status::kPass, "infiniband", "node", "ok", Action::kNone}};
  const std::vector<Finding> unknown = {
      {Status::kUnknown, "gpu", "GPU0", "NVML hung", Action::kNone}};
  SlurmDecision d = Decide(bad, {"IDLE", ""});
  EXPECT_EQ(d.action, SlurmAction::kDrain);
  EXPECT_EQ(d.reason,
            "gpufleet: infiniband: mlx5_0 port 1: state 'DOWN'");  // no quotes reach scontrol
  EXPECT_EQ(Decide(bad, {"IDLE+DRAIN", "maintenance"}).action, SlurmAction::kNone);
  EXPECT_EQ(Decide(good, {"IDLE+DRAIN", "gpufleet: x"}).action, SlurmAction::kResume);
  EXPECT_EQ(Decide(good, {"IDLE+DRAIN", "maintenance"}).action, SlurmAction::kNone);
  EXPECT_EQ(Decide(good, {"IDLE", ""}).action, SlurmAction::kNone);
  EXPECT_EQ(Decide(unknown, {"IDLE+DRAIN", "gpufleet: x"}).action, SlurmAction::kNone);
}

TEST(SlurmTest, AppliesTheDecisionWithScontrol) {
  std::vector<std::vector<std::string>> calls;
  Runner fake = [&](const std::vector<std::string>& argv) -> Result<sys::CommandOutput> {
    calls.push_back(argv);
    if (argv[1] == "show") return sys::CommandOutput{0, "NodeName=n1 State=IDLE Reason=x\n", ""};
    return sys::CommandOutput{0, "", ""};
  };
  const std::vector<Finding> bad = {
      {Status::kFail, "gpu-count", "node", "1 of 2 GPUs", Action::kDrain}};
  auto d = ApplyToSlurm(bad, "n1", fake);
  ASSERT_TRUE(d);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_THAT(calls[1], ElementsAre("scontrol", "update", "nodename=n1", "state=drain",
                                    "reason=gpufleet: gpu-count: node: 1 of 2 GPUs"));
}

TEST(CommandTest, RunsWithoutAShellAndTimesOut) {
  auto r = sys::RunCommand({"echo", "$(id)"}, 5);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->out, "$(id)\n");  // no shell expansion
  auto slow = sys::RunCommand({"sleep", "5"}, 0.2);
  ASSERT_FALSE(slow);
  EXPECT_EQ(slow.error().code, ErrorCode::kDeadlineExceeded);
  auto missing = sys::RunCommand({"/nonexistent/tool"}, 1);
  EXPECT_FALSE(missing);
}

}  // namespace
}  // namespace gpufleet::checks
