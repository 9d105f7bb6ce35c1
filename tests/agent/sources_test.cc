// NVML sampling, the per-GPU deadline and XID sources, through the fake
// libnvidia-ml.so.1 (LD_LIBRARY_PATH, set by CMake) and a kernel-log file.
#include "agent/sources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "../common/tree.h"
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
