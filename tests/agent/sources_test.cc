// NVML sampling, the per-GPU deadline and XID sources, through the fake
// libnvidia-ml.so.1 (LD_LIBRARY_PATH, set by CMake) and a kernel-log file.
#include "agent/sources.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "../common/tree.h"
#include "agent/imex.h"
#include "agent/xid_tracker.h"
#include "sys/kmsg.h"

namespace gpufleet::agent {
namespace {

using ::testing::HasSubstr;

TEST(KmsgTest, ParsesKmsgRecordsAndDmesgLines) {
  auto e = sys::ParseKmsgXid(
      "3,1234,5000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU "
      "has fallen off the bus.\n",
      1000.0);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->busid, "0000:3b:00.0");
  EXPECT_EQ(e->xid, 79);
  EXPECT_DOUBLE_EQ(e->time, 1005.0);
  EXPECT_EQ(e->source, "kmsg");
  EXPECT_THAT(e->text, HasSubstr("fallen off the bus."));
  e = sys::ParseKmsgXid("[  312.5] NVRM: Xid (0000:18:00): 48, pid=77, name=python, DBE", 0);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->busid, "0000:18:00.0");
  EXPECT_EQ(e->xid, 48);
  EXPECT_DOUBLE_EQ(e->time, 312.5);
  EXPECT_FALSE(sys::ParseKmsgXid("6,1,2,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module", 0));
  EXPECT_FALSE(sys::ParseKmsgXid("NVRM: Xid (PCI:0000:3b:00): no number", 0));
}

TEST(KmsgTest, ReaderReturnsOnlyNewLines) {
  testing::Tree t("kmsg");
  const std::string log = t.Write("kmsg", "6,1,100,-;usb 1-1: new device\n");
  auto r = sys::KmsgReader::Open(log);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE((*r)->Read().empty());
  std::ofstream(log, std::ios::app) << "3,2,200,-;NVRM: Xid (PCI:0000:3b:00): 13, Graphics "
                                       "Exception\n3,3,300,-;NVRM: Xid (PCI:0000:3b:00): 7";
  auto got = (*r)->Read();
  ASSERT_EQ(got.size(), 1u);  // the unfinished line waits for its newline
  EXPECT_EQ(got[0].xid, 13);
  std::ofstream(log, std::ios::app) << "9, finished\n";
  got = (*r)->Read();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].xid, 79);
  EXPECT_FALSE(sys::KmsgReader::Open(t.path() + "/absent"));
}

TEST(XidTrackerTest, SameXidFromBothSourcesCountsOnce) {
  std::vector<sys::XidEvent> events;
  EXPECT_TRUE(AddDeduplicated(&events, {"0000:3b:00.0", 2, 79, 100, "kmsg", ""}));
  EXPECT_FALSE(AddDeduplicated(&events, {"0000:3b:00.0", 2, 79, 103, "nvml", ""}));
  EXPECT_TRUE(AddDeduplicated(&events, {"0000:3b:00.0", 2, 79, 200, "nvml", ""}));    // later
  EXPECT_TRUE(AddDeduplicated(&events, {"0000:3b:00.0", 2, 48, 100, "nvml", ""}));    // other XID
  EXPECT_TRUE(AddDeduplicated(&events, {"0000:3b:00.0", 2, 79, 100.5, "kmsg", ""}));  // a repeat
  EXPECT_EQ(events.size(), 4u);
}

// Points the fake NVML at a fault file for one test.
class FakeNvmlTest : public ::testing::Test {
 protected:
  FakeNvmlTest() : tree_("fake-nvml") {}
  void Faults(const std::string& json) {
    setenv("GPUFLEET_FAKE_NVML", tree_.Write("faults.json", json).c_str(), 1);
  }
  ~FakeNvmlTest() override { unsetenv("GPUFLEET_FAKE_NVML"); }
  testing::Tree tree_;
};

TEST_F(FakeNvmlTest, ReadsEveryFieldThroughTheDlopenPath) {
  Faults(R"({"gpus": 2, "gpu": {"1": {"clock_event_reasons": 72, "ecc_uncorrected": 4,
            "row_remap_pending": true, "nvlink_down": [3], "recovery_action": 1,
            "pids": [11, 12]}}})");
  auto nvml = sys::Nvml::Open();
  ASSERT_TRUE(nvml) << nvml.error().message << " (is LD_LIBRARY_PATH set to the fake?)";
  uint64_t ts = 0;
  sys::GpuSample g = (*nvml)->Sample(1, &ts);
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.busid, "0000:20:00.0");
  EXPECT_GT(ts, 0u);
  EXPECT_TRUE(g.has_util);
  EXPECT_DOUBLE_EQ(g.util_ratio, 0.98);
  EXPECT_DOUBLE_EQ(g.power_watts, 650);
  EXPECT_DOUBLE_EQ(g.power_limit_watts, 700);
  EXPECT_EQ(g.clock_event_reasons, 72u);  // 0x40 HW thermal + 0x8 HW slowdown
  EXPECT_EQ(g.ecc_uncorrected, 4u);
  EXPECT_TRUE(g.remap_pending);
  EXPECT_EQ(g.nvlinks.size(), 18u);
  EXPECT_FALSE(g.nvlinks[3].active);
  EXPECT_EQ(g.recovery, sys::RecoveryAction::kGpuReset);
  EXPECT_DOUBLE_EQ(g.mem_temp_celsius, 62);
  EXPECT_EQ(g.pids, (std::vector<unsigned>{11, 12}));
  EXPECT_TRUE(g.errors.empty());
}

TEST_F(FakeNvmlTest, ReadsAGb200TraysFabricAndLinks) {
  // Health mask: degraded bandwidth true (1 at shift 0), the other fields false, configuration
  // none; GPU3 still registering; GPU2 in another clique.
  Faults(R"({"profile": "gb200", "gpu": {"1": {"fabric_health_mask": 425},
            "2": {"fabric_clique": 7}, "3": {"fabric_state": 2}}})");
  auto nvml = sys::Nvml::Open();
  ASSERT_TRUE(nvml) << nvml.error().message;
  auto gpus = (*nvml)->Gpus();
  ASSERT_TRUE(gpus) << gpus.error().message;
  ASSERT_EQ(gpus->size(), 4u);
  const sys::NvmlGpu& g0 = (*gpus)[0];
  EXPECT_EQ(g0.name, "NVIDIA GB200");
  EXPECT_EQ(g0.sm, 100);
  EXPECT_EQ(g0.links, 18);
  EXPECT_EQ(g0.active_links.size(), 18u);
  EXPECT_EQ(g0.nvlink_version, 7);
  EXPECT_DOUBLE_EQ(g0.link_mbps, 53125);
  EXPECT_EQ(g0.c2c_links, 10);
  EXPECT_DOUBLE_EQ(g0.c2c_mbps, 45000);
  ASSERT_TRUE(g0.has_fabric);
  EXPECT_EQ(g0.fabric.state, sys::FabricState::kCompleted);
  EXPECT_EQ(g0.fabric.cluster_uuid, "8c4f2a9e-51d7-4b3a-9e0c-6a1d2b3c4d5e");
  EXPECT_EQ(g0.fabric.clique, 32766u);
  EXPECT_EQ(g0.fabric.health_summary, 1);
  EXPECT_TRUE(g0.fabric.Problems().empty());
  EXPECT_THAT((*gpus)[1].fabric.Problems(), ::testing::ElementsAre("degraded bandwidth"));
  EXPECT_EQ((*gpus)[2].fabric.clique, 7u);
  EXPECT_EQ((*gpus)[3].fabric.state, sys::FabricState::kInProgress);

  sys::GpuSample s = (*nvml)->Sample(3, nullptr);
  ASSERT_TRUE(s.has_fabric);
  EXPECT_EQ(s.fabric.state, sys::FabricState::kInProgress);
  ASSERT_EQ(s.nvlinks.size(), 18u);
  EXPECT_EQ(s.nvlinks[17].version, 7);
  EXPECT_DOUBLE_EQ(s.nvlinks[17].speed_mbps, 53125);
  EXPECT_TRUE(s.errors.empty());
}

// GPM: nothing on the first sample of a GPU, the interval's activity from the second on (as
// fractions, PCIe in bytes/s); a GPU without GPM never has it.
TEST_F(FakeNvmlTest, GpmActivityFromTheSecondSampleOn) {
  Faults(
      R"({"gpus": 2, "gpu": {"0": {"gpm_tensor": 40, "gpm_pcie_tx_mib": 2}, "1": {"gpm": false}}})");
  auto nvml = sys::Nvml::Open();
  ASSERT_TRUE(nvml);
  sys::GpuSample first = (*nvml)->Sample(0, nullptr);
  EXPECT_FALSE(first.has_gpm);
  sys::GpuSample second = (*nvml)->Sample(0, nullptr);
  ASSERT_TRUE(second.has_gpm);
  EXPECT_DOUBLE_EQ(second.gpm_tensor_active, 0.40);
  EXPECT_DOUBLE_EQ(second.gpm_sm_active, 0.88);
  EXPECT_DOUBLE_EQ(second.gpm_dram_active, 0.55);
  EXPECT_DOUBLE_EQ(second.gpm_pcie_tx_bytes_per_s, 2.0 * 1024 * 1024);
  EXPECT_TRUE(second.errors.empty());
  (*nvml)->Sample(1, nullptr);
  EXPECT_FALSE((*nvml)->Sample(1, nullptr).has_gpm);
}

TEST_F(FakeNvmlTest, AnHgxGpuHasNoFabricToJudge) {
  Faults(R"({"gpus": 1})");
  auto nvml = sys::Nvml::Open();
  ASSERT_TRUE(nvml);
  sys::GpuSample s = (*nvml)->Sample(0, nullptr);
  EXPECT_EQ(s.fabric.state, sys::FabricState::kNotSupported);
  EXPECT_EQ(s.fabric.cluster_uuid, "");
}

// The IMEX daemon's state from a scratch root: config, node list, a process named nvidia-imex,
// and peers on loopback (a listener for the reachable one, none for the refused one).
TEST(ImexTest, ReadsConfigNodesDaemonAndPeers) {
  testing::Tree t("imex");
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  // A peer on 127.0.0.3: loopback, but not an address of this host's interfaces.
  inet_pton(AF_INET, "127.0.0.3", &a.sin_addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(listener, 8), 0);
  socklen_t len = sizeof(a);
  getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  t.Write("etc/nvidia-imex/config.cfg",
          "# IMEX\nDAEMONIZE=1\nSERVER_PORT=" + std::to_string(port) +
              "\nIMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg\n");
  t.Write("etc/nvidia-imex/nodes_config.cfg", "127.0.0.1\n\n127.0.0.2\n127.0.0.3\nnode7\n");
  t.Write("proc/4242/comm", "nvidia-imex\n");
  t.Write("proc/1/comm", "systemd\n");
  // 127.0.0.2 is loopback too; nothing listens on it at this port: refused.
  checks::ImexState s =
      ReadImex(SysRoot(t.path()), "/etc/nvidia-imex/config.cfg", std::chrono::milliseconds(2000));
  close(listener);
  EXPECT_TRUE(s.checked);
  EXPECT_EQ(s.config_error, "");
  EXPECT_EQ(s.port, port);
  EXPECT_THAT(s.nodes, ::testing::ElementsAre("127.0.0.1", "127.0.0.2", "127.0.0.3", "node7"));
  EXPECT_TRUE(s.daemon_running);
  EXPECT_TRUE(s.self_listed);  // 127.0.0.1 is this host's, and not probed
  EXPECT_EQ(s.peers, 3);       // 127.0.0.3 answers
  ASSERT_EQ(s.unreachable.size(), 2u);
  EXPECT_THAT(s.unreachable[0], HasSubstr("127.0.0.2:"));
  EXPECT_THAT(s.unreachable[0], HasSubstr("refused"));
  EXPECT_THAT(s.unreachable[1],
              HasSubstr("node7:" + std::to_string(port) + " (not an IP address)"));

  t.Write("etc/nvidia-imex/config.cfg", "SERVER_PORT=70000\n");
  s = ReadImex(SysRoot(t.path()), "/etc/nvidia-imex/config.cfg", std::chrono::milliseconds(100));
  EXPECT_THAT(s.config_error, HasSubstr("SERVER_PORT=70000 is not a TCP port"));
  s = ReadImex(SysRoot(t.path()), "/etc/nvidia-imex/missing.cfg", std::chrono::milliseconds(100));
  EXPECT_THAT(s.config_error, HasSubstr("missing.cfg"));
}

TEST_F(FakeNvmlTest, LostGpuIsLostNotMissing) {
  Faults(R"({"gpus": 2, "gpu": {"0": {"lost": true}}})");
  auto nvml = sys::Nvml::Open();
  ASSERT_TRUE(nvml);
  sys::GpuSample g = (*nvml)->Sample(0, nullptr);
  EXPECT_TRUE(g.lost);
  EXPECT_EQ(g.errors.begin()->second, sys::kNvmlGpuIsLost);
}

TEST_F(FakeNvmlTest, HungGpuIsReportedWithItsCallAndDoesNotStallTheOthers) {
  // Generous times, so a sanitizer build's healthy GPUs answer within the deadline.
  Faults(R"({"gpus": 4, "gpu": {"2": {"hang": "nvmlDeviceGetPowerUsage", "hang_seconds": 3.5}}})");
  auto nvml = sys::Nvml::Open();
  ASSERT_TRUE(nvml);
  {
    GpuMonitor m(nvml->get(), 4, std::chrono::milliseconds(1500));
    const auto start = std::chrono::steady_clock::now();
    auto r = m.Collect();
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(took, 3.0);  // the deadline, not the 3.5 s hang (a bound, not a timing goal)
    ASSERT_EQ(r.size(), 4u);
    EXPECT_TRUE(r[0].up && r[1].up && r[3].up);
    EXPECT_FALSE(r[2].up);
    EXPECT_EQ(r[2].hung_call, "nvmlDeviceGetPowerUsage");
    EXPECT_EQ(r[2].sample.hung_call, "nvmlDeviceGetPowerUsage");
    // Asked again while still hung: the others answer, the hung one is not re-asked.
    r = m.Collect();
    EXPECT_TRUE(r[0].up);
    EXPECT_FALSE(r[2].up);
    EXPECT_TRUE(m.AnyHung());
    Faults(R"({"gpus": 4})");
    for (int i = 0; i < 80 && m.AnyHung(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_FALSE(m.AnyHung());
    r = m.Collect();
    EXPECT_TRUE(r[2].up);  // it recovered
  }
}

TEST_F(FakeNvmlTest, XidsFromNvmlEventsAndTheKernelLogAreMerged) {
  Faults(R"({"gpus": 2, "gpu": {"1": {"xid": [79, 48]}}})");
  // The kernel log says the same 79 (NVML and kmsg both see it) plus a 119 NVML cannot report.
  const std::string log = tree_.Write(
      "kmsg", "[ 1.0] NVRM: Xid (PCI:0000:20:00): 119, pid=1, Timeout after 6s of waiting\n");
  SourceOptions o;
  o.kmsg = log;
  auto src = NodeSources::Open(o);
  ASSERT_TRUE(src->nvml()) << src->nvml_note();
  auto gpus = src->ReadGpus();
  ASSERT_EQ(gpus.size(), 2u);
  src->xids().PollOnce(200);
  auto events = src->xids().Events();
  std::vector<std::pair<int, int>> got;
  for (const auto& e : events) got.emplace_back(e.gpu, e.xid);
  EXPECT_THAT(
      got, ::testing::UnorderedElementsAre(std::pair{1, 119}, std::pair{1, 79}, std::pair{1, 48}));
  EXPECT_TRUE(src->kmsg_note().empty());
}

TEST_F(FakeNvmlTest, FailedInitIsANoteNotAnError) {
  Faults(R"({"fail_init": 9})");
  SourceOptions o;
  o.kmsg = "";
  auto src = NodeSources::Open(o);
  EXPECT_FALSE(src->nvml());
  EXPECT_THAT(src->nvml_note(), HasSubstr("Driver Not Loaded"));
  EXPECT_TRUE(src->ReadGpus().empty());
}

}  // namespace
}  // namespace gpufleet::agent
