#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "../topo/test_node.h"
#include "checks/check.h"
#include "checks/slurm.h"

namespace gpufleet::checks {
namespace {

using ::testing::ElementsAre;

model::Spec TwoGpuSpec() {
  // SmallNode's three single-port HCAs at 200 Gb/s.
  auto s = model::ReferenceSpec({{"nodes.count", "1"},
                                 {"nodes.gpu.count", "2"},
                                 {"nodes.nics[0].count", "3"},
                                 {"nodes.nics[0].ports", "1"},
                                 {"nodes.nics[0].speed", "200 Gb/s"}});
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
  CheckContext ctx;
  ctx.spec = &spec;
  ctx.node = &node;
  ctx.disks = {{"/tmp", 0.5}};
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
  CheckContext ctx;
  ctx.spec = &spec;
  ctx.node = &node;
  ctx.disks = {{"/tmp", 0.97}, {"/", 0.90}};
  auto f = RunAll(ctx);
  EXPECT_THAT(Summary(f),
              ElementsAre("nvlink:GPU1:fail", "pcie-link:gpu 0000:03:00.0:fail",
                          "pcie-link:gpu 0000:83:00.0:warn", "infiniband:mlx5_1 port 1:fail",
                          "infiniband:mlx5_2 port 1:fail", "infiniband:node:fail",
                          "disk-space:/tmp:fail", "disk-space:/:warn"));
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

// Two healthy H100s as NVML reads them, busy, at full power.
std::vector<sys::GpuSample> HealthyGpus() {
  std::vector<sys::GpuSample> gpus(2);
  for (int i = 0; i < 2; ++i) {
    sys::GpuSample& g = gpus[static_cast<size_t>(i)];
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.busid = i == 0 ? "0000:03:00.0" : "0000:83:00.0";
    g.has_util = true;
    g.util_ratio = 0.97;
    g.has_power = g.has_power_limit = true;
    g.power_watts = 660;
    g.power_limit_watts = 700;
    g.has_clock_events = true;
    g.clock_event_reasons = 0x4;  // SW power cap: normal at the limit
    g.has_ecc = g.has_remap = g.has_pcie = true;
    g.pcie_gen = g.pcie_gen_max = 5;
    g.pcie_width = g.pcie_width_max = 16;
    g.nvlinks = {{0, true}, {1, true}};
    g.pids = {4242};
  }
  return gpus;
}

class GpuChecksTest : public ::testing::Test {
 protected:
  GpuChecksTest()
      : spec_(*model::ReferenceSpec({{"nodes.count", "1"},
                                     {"nodes.gpu.count", "2"},
                                     {"nodes.gpu.model", "H100"},
                                     {"nodes.nics[0].count", "3"},
                                     {"nodes.nics[0].ports", "1"},
                                     {"nodes.nics[0].speed", "200 Gb/s"}})),
        node_(topo::testing::SmallNode()) {
    ctx_.spec = &spec_;
    ctx_.node = &node_;
    ctx_.nvml = true;
    ctx_.gpus = HealthyGpus();
    ctx_.now = 1'800'000'000;
  }
  std::vector<std::string> Run() { return Summary(RunAll(ctx_)); }
  model::Spec spec_;
  topo::NodeTopology node_;
  CheckContext ctx_;
};

TEST_F(GpuChecksTest, HealthyBusyGpusPass) { EXPECT_THAT(Run(), ::testing::IsEmpty()); }

TEST_F(GpuChecksTest, XidsFollowTheActionTable) {
  ctx_.xids = {{"0000:83:00.0", 1, 79, ctx_.now - 60, "kmsg", "NVRM: Xid ..."},
               {"0000:03:00.0", 0, 13, ctx_.now - 5, "nvml", ""},      // application: ignored
               {"0000:03:00.0", 0, 63, ctx_.now - 5, "nvml", ""},      // record: warn
               {"0000:03:00.0", 0, 48, ctx_.now - 7200, "nvml", ""}};  // outside the window
  auto f = CheckXids(ctx_);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].component, "GPU0");
  EXPECT_EQ(f[0].status, Status::kWarn);
  EXPECT_EQ(f[1].component, "GPU1");
  EXPECT_EQ(f[1].action, Action::kDrainAndReboot);
  EXPECT_EQ(f[1].message, "XID 79 (GPU has fallen off the bus) x1, last 60 s ago");
  // An operator's override wins over the table.
  ctx_.xid_table.overrides[63] = XidPolicy::kIgnore;
  ctx_.xid_table.overrides[79] = XidPolicy::kDrain;
  f = CheckXids(ctx_);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].action, Action::kDrain);
}

TEST_F(GpuChecksTest, ParsesXidActionOverrides) {
  auto a = ParseXidAction("79=drain+reboot");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->first, 79);
  EXPECT_EQ(a->second, XidPolicy::kDrainAndReboot);
  EXPECT_FALSE(ParseXidAction("79"));
  EXPECT_FALSE(ParseXidAction("x=drain"));
  auto bad = ParseXidAction("79=panic");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("unknown action 'panic'"));
}

TEST_F(GpuChecksTest, EachGpuFaultIsNamed) {
  ctx_.gpus[0].ecc_uncorrected = 3;
  ctx_.gpus[1].remap_failed = true;
  ctx_.gpus[0].clock_event_reasons |= 0x40;  // HW thermal slowdown under load
  ctx_.gpus[1].power_watts = 300;            // busy but far below 700 W
  ctx_.gpus[1].nvlinks[1].active = false;
  ctx_.gpus[0].pcie_width = 8;
  ctx_.gpus[1].has_recovery = true;
  ctx_.gpus[1].recovery = sys::RecoveryAction::kGpuReset;
  ctx_.gpus[0].util_ratio = 0.5;  // a job holds it: a warning, and no longer "under load"
  EXPECT_THAT(Run(),
              ElementsAre("memory-errors:GPU0:fail", "memory-errors:GPU1:fail",
                          "recovery-action:GPU1:fail", "throttle:GPU0:warn", "power:GPU1:warn",
                          "utilization:GPU0:warn", "nvlink:GPU1:fail", "pcie-link:GPU0:fail"));
  auto f = RunAll(ctx_);
  EXPECT_EQ(StrongestAction(f), Action::kDrainAndReboot);  // the failed row remap: RMA
}

TEST_F(GpuChecksTest, LostHungAndWrongModelGpus) {
  ctx_.gpus[0].lost = true;
  ctx_.gpus[1].name = "NVIDIA A100-SXM4-80GB";
  auto f = CheckGpuCount(ctx_);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].action, Action::kDrainAndReboot);
  EXPECT_THAT(f[1].message, ::testing::HasSubstr("is a A100-SXM4-80GB"));
  ctx_.gpus[0].lost = false;
  ctx_.gpus[1].name = "NVIDIA H100 80GB HBM3";
  ctx_.gpus[1].hung_call = "nvmlDeviceGetPowerUsage";
  f = CheckGpuCount(ctx_);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message, ::testing::HasSubstr("nvmlDeviceGetPowerUsage did not return"));
  // NVML sees fewer GPUs than the spec wants (the PCI bus still shows both).
  ctx_.gpus.pop_back();
  f = CheckGpuCount(ctx_);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].message,
            "1 of 2 GPUs seen by NVML: a GPU has fallen off the bus or is not seated");
}

TEST_F(GpuChecksTest, NoNvmlOnALiveGpuNodeCannotBeEvaluated) {
  ctx_.gpus.clear();
  ctx_.nvml = false;
  ctx_.nvml_expected = true;
  ctx_.nvml_note = "nvmlInit_v2: Driver Not Loaded";
  auto f = RunAll(ctx_);
  EXPECT_EQ(Worst(f), Status::kUnknown);
  EXPECT_EQ(f[0].message, "GPU health cannot be read: nvmlInit_v2: Driver Not Loaded");
  ctx_.nvml_expected = false;  // --no-nvml, or a capture
  EXPECT_EQ(Worst(RunAll(ctx_)), Status::kPass);
}

TEST_F(GpuChecksTest, StorageLatencyNeedsEnoughIos) {
  ctx_.disk_latency = {{"nvme0n1", 500, 0.025}, {"sda", 3, 0.5}, {"nvme1n1", 900, 0.002}};
  auto f = CheckStorageLatency(ctx_);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].message, "mean IO latency 25.0 ms over 500 IOs (limit 10 ms)");
}

// Issue 12: the infiniband check passed on a node with no /sys/class/infiniband at all while the
// spec listed 10 HCAs.
TEST(InfinibandCheckTest, NoRdmaDeviceAtAllFailsAgainstTheSpec) {
  auto spec = model::ReferenceSpec({{"nodes.count", "1"},
                                    {"nodes.gpu.count", "2"},
                                    {"nodes.nics[0].count", "10"},
                                    {"nodes.nics[0].ports", "1"}});
  ASSERT_TRUE(spec) << spec.error().message;
  topo::NodeTopology node = topo::testing::SmallNode();
  node.nics.clear();
  CheckContext ctx;
  ctx.spec = &*spec;
  ctx.node = &node;
  auto f = CheckInfinibandPorts(ctx);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].status, Status::kFail);
  EXPECT_EQ(f[0].action, Action::kDrain);
  EXPECT_EQ(f[0].message,
            "no InfiniBand RDMA port at all (/sys/class/infiniband), the spec has 10 compute "
            "ports: 10 x ConnectX-7 (1 port) at 400 Gb/s");
}

TEST(InfinibandCheckTest, CountsActivePortsAgainstTheSpec) {
  topo::NodeTopology node = topo::testing::SmallNode();  // three ports at 200 Gb/s
  node.nics[1].ports[0].state = "DOWN";
  CheckContext ctx;
  ctx.node = &node;
  for (int want : {3, 2}) {
    auto spec = model::ReferenceSpec({{"nodes.count", "1"},
                                      {"nodes.gpu.count", "2"},
                                      {"nodes.nics[0].count", std::to_string(want)},
                                      {"nodes.nics[0].ports", "1"},
                                      {"nodes.nics[0].speed", "200 Gb/s"}});
    ASSERT_TRUE(spec);
    ctx.spec = &*spec;
    auto f = CheckInfinibandPorts(ctx);
    if (want == 3) {  // one short: the count fails and the down port is named
      ASSERT_EQ(f.size(), 2u);
      EXPECT_EQ(f[1].message,
                "2 of the spec's 3 compute ports are ACTIVE (3 InfiniBand RDMA ports found): 3 x "
                "ConnectX-7 (1 port) at 200 Gb/s");
      EXPECT_EQ(f[0].component, "mlx5_1 port 1");
      EXPECT_EQ(f[0].status, Status::kFail);
    } else {  // the spec's two are up: the third, down, is a warning only
      ASSERT_EQ(f.size(), 1u);
      EXPECT_EQ(f[0].status, Status::kWarn);
      EXPECT_EQ(f[0].action, Action::kNone);
    }
  }
  // Without a spec every RDMA port that exists must be up; nothing is counted.
  ctx.spec = nullptr;
  auto f = CheckInfinibandPorts(ctx);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].component, "mlx5_1 port 1");
  EXPECT_EQ(f[0].status, Status::kFail);
  // An Ethernet (TCP sockets) compute fabric expects no RDMA port.
  auto tcp = model::ReferenceSpec({{"nodes.count", "1"},
                                   {"nodes.gpu.count", "2"},
                                   {"fabrics.compute.type", "ethernet"},
                                   {"fabrics.compute.switch", "SN5600"}});
  ASSERT_TRUE(tcp) << tcp.error().message;
  node.nics.clear();
  ctx.spec = &*tcp;
  EXPECT_THAT(CheckInfinibandPorts(ctx), ::testing::IsEmpty());
}

// Issue 12: without a spec, check and agent judge only what needs none (never the embedded A100
// reference, which failed every healthy H100 as the wrong model).
TEST_F(GpuChecksTest, WithoutASpecOnlyWhatNeedsNoSpecIsJudged) {
  ctx_.spec = nullptr;
  EXPECT_THAT(Run(), ::testing::IsEmpty());  // H100s, 3 HCAs: nothing to compare them with
  ctx_.gpus.pop_back();                      // the bus shows 2 GPUs, NVML answers for 1
  auto f = CheckGpuCount(ctx_);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].message,
            "1 of the 2 GPUs on the PCI bus are seen by NVML: a GPU has fallen off the bus");
  EXPECT_EQ(f[0].action, Action::kDrainAndReboot);
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
  SlurmDecision d = Decide(bad, {"IDLE", ""}, "");
  EXPECT_EQ(d.action, SlurmAction::kDrain);
  EXPECT_EQ(d.reason,
            "gpufleet: infiniband: mlx5_0 port 1: state 'DOWN'");  // no quotes reach scontrol
  EXPECT_EQ(Decide(bad, {"IDLE+DRAIN", "maintenance"}, "").action, SlurmAction::kNone);
  EXPECT_EQ(Decide(good, {"IDLE+DRAIN", "gpufleet: x"}, "").action, SlurmAction::kResume);
  EXPECT_EQ(Decide(good, {"IDLE+DRAIN", "maintenance"}, "").action, SlurmAction::kNone);
  EXPECT_EQ(Decide(good, {"IDLE", ""}, "").action, SlurmAction::kNone);
  EXPECT_EQ(Decide(unknown, {"IDLE+DRAIN", "gpufleet: x"}, "").action, SlurmAction::kNone);
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
  auto d = ApplyToSlurm(bad, "n1", "", fake);
  EXPECT_EQ(d.error, "");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_THAT(calls[1], ElementsAre("scontrol", "update", "nodename=n1", "state=drain",
                                    "reason=gpufleet: gpu-count: node: 1 of 2 GPUs"));
}

// Issue 12: run as the job user (the sbatch prolog), scontrol update is refused; that was exit 3
// with none of the findings. Now the decision comes back with the error, to be reported.
TEST(SlurmTest, AScontrolThatRefusesIsReportedNotFatal) {
  Runner refusing = [](const std::vector<std::string>& argv) -> Result<sys::CommandOutput> {
    if (argv[1] == "show") return sys::CommandOutput{0, "NodeName=n1 State=IDLE\n", ""};
    return sys::CommandOutput{1, "", "slurm_update error: Invalid user id\n"};
  };
  const std::vector<Finding> bad = {{Status::kFail, "xid", "GPU1", "XID 48", Action::kDrain}};
  SlurmDecision d = ApplyToSlurm(bad, "n1", "", refusing);
  EXPECT_EQ(d.action, SlurmAction::kDrain);
  EXPECT_EQ(d.error,
            "scontrol update nodename=n1 state=drain: slurm_update error: Invalid user id");
  Runner down = [](const std::vector<std::string>&) -> Result<sys::CommandOutput> {
    return sys::CommandOutput{1, "", "Unable to contact slurm controller\n"};
  };
  d = ApplyToSlurm(bad, "n1", "", down);
  EXPECT_EQ(d.action, SlurmAction::kNone);
  EXPECT_EQ(d.error, "scontrol show node n1: Unable to contact slurm controller");
}

// Issue 12: a reboot-class XID drained the node, and once --xid-window had passed the next check
// passed and resumed it without a reboot. The drain now carries the boot id; only a new boot id
// (a reboot) lets the node be resumed.
TEST(SlurmTest, RebootClassDrainsWaitForANewBootId) {
  const std::vector<Finding> xid79 = {
      {Status::kFail, "xid", "GPU1", "XID 79 (GPU has fallen off the bus) x1, last 5 s ago",
       Action::kDrainAndReboot},
      {Status::kFail, "memory-errors", "GPU0", "ecc", Action::kDrain}};
  const std::vector<Finding> good = {{Status::kPass, "xid", "node", "ok", Action::kNone}};
  SlurmDecision d = Decide(xid79, {"IDLE", ""}, "1a2b3c4d");
  EXPECT_EQ(d.action, SlurmAction::kDrain);
  EXPECT_EQ(d.reason,
            "gpufleet: reboot required (boot 1a2b3c4d): xid: GPU1: XID 79 (GPU has fallen off the "
            "bus) x1, last 5 s ago");
  EXPECT_EQ(RebootBootId(d.reason), "1a2b3c4d");
  EXPECT_EQ(RebootBootId("gpufleet: xid: GPU1: XID 48"), "");
  const SlurmNode drained{"IDLE+DRAIN", d.reason};
  // The XID aged out, checks pass, same boot: stays drained.
  SlurmDecision same = Decide(good, drained, "1a2b3c4d");
  EXPECT_EQ(same.action, SlurmAction::kNone);
  EXPECT_EQ(same.why,
            "drained for a reboot at boot 1a2b3c4d, and the node has not rebooted since: left "
            "drained");
  EXPECT_EQ(Decide(good, drained, "").action, SlurmAction::kNone);  // boot id unreadable
  // Rebooted: resumed.
  SlurmDecision rebooted = Decide(good, drained, "99aa99aa");
  EXPECT_EQ(rebooted.action, SlurmAction::kResume);
  EXPECT_EQ(rebooted.why,
            "rebooted since the drain (boot 1a2b3c4d -> 99aa99aa) and checks pass: resuming");
  // Still failing after the reboot: the reason is brought up to the new boot.
  SlurmDecision again = Decide(xid79, drained, "99aa99aa");
  EXPECT_EQ(again.action, SlurmAction::kDrain);
  EXPECT_EQ(RebootBootId(again.reason), "99aa99aa");
  EXPECT_EQ(Decide(xid79, drained, "1a2b3c4d").action, SlurmAction::kNone);
  // A plain drain is upgraded to a reboot drain when a reboot-class fault appears.
  EXPECT_EQ(Decide(xid79, {"IDLE+DRAIN", "gpufleet: memory-errors: GPU0: ecc"}, "1a2b3c4d").action,
            SlurmAction::kDrain);
  // An admin's drain is never touched.
  EXPECT_EQ(Decide(xid79, {"IDLE+DRAIN", "maintenance"}, "1a2b3c4d").action, SlurmAction::kNone);
  EXPECT_EQ(Decide(good, {"IDLE+DRAIN", "maintenance"}, "99aa99aa").action, SlurmAction::kNone);
}

TEST(SlurmTest, ReadsTheBootId) {
  const std::string dir = ::testing::TempDir() + "/bootid." + std::to_string(::getpid());
  std::filesystem::create_directories(dir + "/proc/sys/kernel/random");
  std::FILE* f = std::fopen((dir + "/proc/sys/kernel/random/boot_id").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("9F86D081-884c-7d65-9a2f-eaa0c55ad015\n", f);
  std::fclose(f);
  EXPECT_EQ(BootIdOf(SysRoot(dir)), "9f86d081");
  EXPECT_EQ(BootIdOf(SysRoot(dir + "/missing")), "");
  std::filesystem::remove_all(dir);
}

// Issue 12: with kernel.dmesg_restrict=1 a job user's check printed "/dev/kmsg: Operation not
// permitted" and then passed the XID check; XIDs only the kernel log shows went unseen.
TEST_F(GpuChecksTest, AnUnreadableKernelLogCannotBeEvaluated) {
  ctx_.kmsg_note = "/dev/kmsg: Operation not permitted";
  auto f = CheckXids(ctx_);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].status, Status::kUnknown);
  EXPECT_EQ(Worst(RunAll(ctx_)), Status::kUnknown);
}

// One GB200 NVL72 compute tray as NVML reports it: four GPUs, 18 NVLink 5 links each, fabric
// registration completed in one domain and clique, health fields all "false".
std::vector<sys::GpuSample> Gb200Tray() {
  std::vector<sys::GpuSample> gpus(4);
  for (int i = 0; i < 4; ++i) {
    auto& g = gpus[static_cast<size_t>(i)];
    g.index = i;
    for (int l = 0; l < 18; ++l) {
      sys::NvLinkSample s;
      s.link = l;
      s.active = true;
      s.version = 7;
      s.speed_mbps = 53125;
      g.nvlinks.push_back(s);
    }
    g.has_fabric = true;
    g.fabric.state = sys::FabricState::kCompleted;
    g.fabric.cluster_uuid = "8c4f2a9e-51d7-4b3a-9e0c-6a1d2b3c4d5e";
    g.fabric.clique = 32766;
    g.fabric.health_mask = 0x1aa;
    g.fabric.health_summary = 1;
  }
  return gpus;
}

std::vector<std::string> Messages(const std::vector<Finding>& f) {
  std::vector<std::string> out;
  for (const auto& x : f) {
    out.push_back(std::string(StatusName(x.status)) + " " + x.component + ": " + x.message);
  }
  return out;
}

TEST(FabricCheckTest, AHealthyTrayPassesAndHgxGpusAreNotJudged) {
  CheckContext ctx;
  ctx.gpus = Gb200Tray();
  EXPECT_THAT(CheckFabric(ctx), ::testing::IsEmpty());
  ctx.gpus = HealthyGpus();  // H100s: no multi-node fabric
  EXPECT_THAT(CheckFabric(ctx), ::testing::IsEmpty());
  // An HGX board on R550+: "completed" with an all-zero cluster UUID and no clique of its own.
  for (auto& g : ctx.gpus) {
    g.has_fabric = true;
    g.fabric.state = sys::FabricState::kCompleted;
  }
  ctx.gpus[1].nvlinks.pop_back();  // the nvlink check's business, not this one's
  EXPECT_THAT(CheckFabric(ctx), ::testing::IsEmpty());
}

TEST(FabricCheckTest, NamesEachGpuThatCannotServeTheDomain) {
  CheckContext ctx;
  ctx.gpus = Gb200Tray();
  ctx.gpus[0].fabric.health_mask = 0x1a9;  // degraded bandwidth
  ctx.gpus[1].nvlinks[5].active = false;   // 17 of 18 up
  ctx.gpus[2].nvlinks.pop_back();          // link 17 not even reported
  ctx.gpus[3].fabric.state = sys::FabricState::kInProgress;
  auto f = CheckFabric(ctx);
  EXPECT_THAT(Messages(f),
              ElementsAre("fail GPU0: fabric health: degraded bandwidth (health mask 0x1a9, "
                          "clique 32766)",
                          ::testing::StartsWith("fail GPU1: 17 of 18 NVLinks active (link 5 down)"),
                          ::testing::StartsWith(
                              "fail GPU2: 17 of 18 NVLinks active (link 17 missing or down)"),
                          ::testing::StartsWith("fail GPU3: fabric registration in_progress")));
  for (const auto& x : f) EXPECT_EQ(x.action, Action::kDrain);
}

TEST(FabricCheckTest, AGpuInAnotherCliqueOrDomainIsNamed) {
  CheckContext ctx;
  ctx.gpus = Gb200Tray();
  ctx.gpus[2].fabric.clique = 7;
  ctx.gpus[3].fabric.health_mask = 0x1a6;  // route recovery in progress: a warning
  EXPECT_THAT(Messages(CheckFabric(ctx)),
              ElementsAre(::testing::StartsWith("warn GPU3: fabric health: route recovery"),
                          "fail GPU2: in NVLink domain 8c4f2a9e-51d7-4b3a-9e0c-6a1d2b3c4d5e clique "
                          "7, the node's other GPUs in 8c4f2a9e-51d7-4b3a-9e0c-6a1d2b3c4d5e "
                          "clique 32766: it cannot reach them over NVLink"));
  ctx.gpus = Gb200Tray();
  ctx.gpus[0].fabric.status = 999;
  EXPECT_THAT(Messages(CheckFabric(ctx)),
              ElementsAre("fail GPU0: fabric registration completed with error 999 "
                          "(nvmlReturn_t)"));
}

TEST(ImexCheckTest, JudgesTheDaemonItsListAndItsPeers) {
  CheckContext ctx;
  EXPECT_THAT(CheckImex(ctx), ::testing::IsEmpty());  // no fabric GPU: nothing to judge
  ImexState& s = ctx.imex;
  s.checked = true;
  s.config = "/etc/nvidia-imex/config.cfg";
  s.nodes_file = "/etc/nvidia-imex/nodes_config.cfg";
  s.nodes = {"10.0.0.1", "10.0.0.2", "10.0.0.3"};  // this node and two peers
  s.peers = 2;
  s.daemon_running = true;
  s.self_listed = true;
  EXPECT_THAT(CheckImex(ctx), ::testing::IsEmpty());
  s.unreachable = {"10.0.0.3:50000 (connection refused)"};
  EXPECT_THAT(Messages(CheckImex(ctx)),
              ElementsAre("warn nvidia-imex: 1 of 2 IMEX peer(s) do not answer on port 50000: "
                          "10.0.0.3:50000 (connection refused)"));
  s.unreachable = {"a", "b"};  // every peer silent: this node's network
  EXPECT_EQ(CheckImex(ctx)[0].status, Status::kFail);
  s.unreachable.clear();
  s.daemon_running = false;
  s.self_listed = false;
  EXPECT_THAT(Messages(CheckImex(ctx)),
              ElementsAre(::testing::StartsWith("fail nvidia-imex: not running"),
                          ::testing::StartsWith("fail /etc/nvidia-imex/nodes_config.cfg: none of "
                                                "this node's addresses")));
  s.config_error = "read /etc/nvidia-imex/config.cfg: not found";
  EXPECT_THAT(Messages(CheckImex(ctx)),
              ElementsAre("fail nvidia-imex: read /etc/nvidia-imex/config.cfg: not found: "
                          "multi-node NVLink memory sharing is not configured"));
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
