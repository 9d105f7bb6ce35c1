// Collectors over fixture trees (/proc, /sys/class/infiniband, bench results)
// and the whole agent over the fake NVML.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <set>
#include <thread>

#include "../common/tree.h"
#include "agent/agent.h"
#include "agent/collector.h"
#include "agent/node_stats.h"
#include "base/files.h"
#include "base/strings.h"
#include "emit/emit.h"
#include "model/spec.h"
#include "topo/infiniband.h"

namespace gpufleet::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A small /proc and /sys: one NVMe disk with a partition, one NIC, two RDMA ports.
void WriteNodeTree(const testing::Tree& t) {
  t.Write("proc/stat", "cpu  1000 20 300 50000 40 0 10 0 0 0\ncpu0 500 10 150 25000 20 0 5 0\n");
  t.Write("proc/loadavg", "1.50 0.75 0.25 2/300 4242\n");
  t.Write("proc/meminfo",
          "MemTotal:       1048576 kB\nMemFree:         524288 kB\nMemAvailable:    786432 "
          "kB\nCached:          100000 kB\nSwapTotal:            0 kB\nSwapFree:             0 "
          "kB\nHugePages_Total:       4\n");
  t.Write("proc/diskstats",
          " 259       0 nvme0n1 1000 0 80000 2000 500 0 40000 3000 1 4000 5000 0 0 0 0\n"
          " 259       1 nvme0n1p1 900 0 70000 1900 400 0 30000 2900 0 3900 4900 0 0 0 0\n"
          "   7       0 loop0 10 0 20 1 0 0 0 0 0 1 1 0 0 0 0\n");
  t.Dir("sys/block/nvme0n1");
  t.Write("proc/net/dev",
          "Inter-|   Receive                                                |  Transmit\n"
          " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
          "errs drop fifo colls carrier compressed\n"
          "    lo: 100 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0\n"
          "  eth0: 5000 40 1 2 0 0 0 0 7000 50 3 4 0 0 0 0\n");
  const std::string p = "sys/class/infiniband/mlx5_0/ports/1/";
  t.Write(p + "state", "4: ACTIVE");
  t.Write(p + "phys_state", "5: LinkUp");
  t.Write(p + "rate", "400 Gb/sec (4X NDR)");
  t.Write(p + "link_layer", "InfiniBand");
  t.Write(p + "counters/port_xmit_data", "1000");
  t.Write(p + "counters/port_rcv_data", "2000");
  t.Write(p + "counters/port_xmit_packets", "10");
  t.Write(p + "counters/port_rcv_packets", "20");
  t.Write(p + "counters/port_xmit_wait", "5");
  t.Write(p + "counters/link_downed", "2");
  t.Write(p + "counters/symbol_error", "7");
  const std::string q = "sys/class/infiniband/mlx5_1/ports/1/";
  t.Write(q + "state", "1: DOWN");
  t.Write(q + "phys_state", "2: Polling");
  t.Write(q + "rate", "10 Gb/sec (4X SDR)");
  t.Write(q + "link_layer", "InfiniBand");
}

std::string Collect(Status (*fn)(const CollectInput&, MetricSet*), const CollectInput& in) {
  MetricSet m;
  Status s = fn(in, &m);
  EXPECT_TRUE(s) << s.error().message;
  return m.Render();
}

TEST(NodeCollectorTest, ReadsProcThroughTheSysRoot) {
  testing::Tree t("node-tree");
  WriteNodeTree(t);
  SysRoot root(t.path());
  CollectInput in;
  in.root = &root;
  const std::string m = Collect(&CollectNode, in);
  EXPECT_THAT(m, HasSubstr("gpufleet_node_cpu_seconds_total{mode=\"user\"} 10\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_node_cpu_seconds_total{mode=\"idle\"} 500\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_node_load1 1.5\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_node_memory_available_bytes 805306368\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_node_hugepages 4\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_node_disk_read_bytes_total{device=\"nvme0n1\"} 40960000\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_node_disk_read_time_seconds_total{device=\"nvme0n1\"} 2\n"));
  EXPECT_THAT(m, Not(HasSubstr("nvme0n1p1")));  // partitions and loop devices left out
  EXPECT_THAT(m, Not(HasSubstr("loop0")));
  EXPECT_THAT(m, HasSubstr("gpufleet_node_network_transmit_drops_total{device=\"eth0\"} 4\n"));
  EXPECT_THAT(m, Not(HasSubstr("device=\"lo\"")));
}

TEST(NodeCollectorTest, DiskLatencyIsTheMeanOverTheWindow) {
  std::vector<DiskStat> before = {{"nvme0n1", 1000, 500, 0, 0, 2.0, 3.0, 4, 0}};
  std::vector<DiskStat> after = {{"nvme0n1", 1100, 600, 0, 0, 2.5, 4.5, 5, 0}};
  auto l = DiskLatencies(before, after);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_DOUBLE_EQ(l[0].ios, 200);
  EXPECT_DOUBLE_EQ(l[0].mean_latency_s, 2.0 / 200);  // 10 ms
}

TEST(InfinibandCollectorTest, StateRateAndCounters) {
  testing::Tree t("ib-tree");
  WriteNodeTree(t);
  SysRoot root(t.path());
  CollectInput in;
  in.root = &root;
  const std::string m = Collect(&CollectInfiniband, in);
  EXPECT_THAT(m, HasSubstr("gpufleet_infiniband_port_active{hca=\"mlx5_0\",port=\"1\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_infiniband_port_active{hca=\"mlx5_1\",port=\"1\"} 0\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_infiniband_port_link_up{hca=\"mlx5_1\",port=\"1\"} 0\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_infiniband_port_rate_bytes_per_second{hca=\"mlx5_0\","
                           "port=\"1\"} 50000000000\n"));
  // port_xmit_data counts 4-octet words.
  EXPECT_THAT(m, HasSubstr("gpufleet_infiniband_port_transmit_bytes_total{hca=\"mlx5_0\","
                           "port=\"1\"} 4000\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_infiniband_port_link_downed_total{hca=\"mlx5_0\","
                           "port=\"1\"} 2\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_infiniband_port_errors_total{hca=\"mlx5_0\",port=\"1\","
                           "counter=\"symbol_error\"} 7\n"));
}

TEST(BenchCollectorTest, NewestResultOfEachKind) {
  testing::Tree t("bench");
  t.Write("a.json", R"({"schema": "gpufleet.bench/v1", "kind": "collective", "time": 100,
    "results": [{"op": "all_reduce", "bytes": 4194304, "busbw_bytes_per_s": 1e9}]})");
  t.Write("b.json", R"({"schema": "gpufleet.bench/v1", "kind": "collective", "time": 200,
    "verdict": "fail", "results": [{"op": "all_reduce", "bytes": 4194304, "time_s": 0.004,
    "busbw_bytes_per_s": 2e9, "expected_busbw_bytes_per_s": 3e9}]})");
  t.Write("c.json", "not json");
  CollectInput in;
  in.bench_dir = t.path();
  const std::string m = Collect(&CollectBench, in);
  EXPECT_THAT(m, HasSubstr("gpufleet_bench_busbw_bytes_per_second{kind=\"collective\",op=\"all_"
                           "reduce\",bytes=\"4194304\"} 2000000000\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_bench_passed{kind=\"collective\"} 0\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_bench_unreadable_files 1\n"));
  in.bench_dir = t.path() + "/absent";
  MetricSet none;
  EXPECT_FALSE(CollectBench(in, &none));
}

TEST(GpuCollectorTest, XidsOfGpusNvmlNoLongerListsStaySeparate) {
  // Two GPUs fell off the bus, both with XID 79: two series, each with its bus id.
  checks::XidTable table;
  CollectInput in;
  in.nvml = true;
  in.xid_table = &table;
  in.xids = {{"0000:3b:00.0", -1, 79, 100, "kmsg", ""},
             {"0000:5e:00.0", -1, 79, 200, "kmsg", ""},
             {"0000:5e:00.0", -1, 79, 300, "kmsg", ""}};
  const std::string m = Collect(&CollectGpu, in);
  EXPECT_THAT(m, HasSubstr("gpufleet_gpu_xid_errors_total{gpu=\"\",uuid=\"\",pci_bus_id=\"0000:"
                           "3b:00.0\",model=\"\",xid=\"79\",action=\"drain+reboot\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_gpu_xid_errors_total{gpu=\"\",uuid=\"\",pci_bus_id=\"0000:"
                           "5e:00.0\",model=\"\",xid=\"79\",action=\"drain+reboot\"} 2\n"));
}

TEST(AttributionTest, SlurmJobAndKubernetesPodFromTheCgroup) {
  EXPECT_EQ(
      ParseCgroup("0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n").slurm_job,
      "4242");
  EXPECT_EQ(ParseCgroup("12:devices:/slurm/uid_1000/job_77/step_batch\n").slurm_job, "77");
  auto k = ParseCgroup(
      "0::/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod6b1f2c3d_1111_2222_3333_444455556666.slice/"
      "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope\n");
  EXPECT_EQ(k.pod_uid, "6b1f2c3d-1111-2222-3333-444455556666");
  EXPECT_EQ(k.container, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  EXPECT_TRUE(k.slurm_job.empty());
  EXPECT_EQ(ParseCgroup("11:memory:/kubepods/besteffort/pod6b1f2c3d-1111-2222-3333-"
                        "444455556666/abc\n")
                .pod_uid,
            "6b1f2c3d-1111-2222-3333-444455556666");
  EXPECT_TRUE(ParseCgroup("0::/user.slice/session-1.scope\n").pod_uid.empty());
}

TEST(SelectCollectorsTest, DefaultsOnOffAndUnknownNames) {
  auto defaults = SelectCollectors({}, {});
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->size(), Collectors().size() - 1);
  EXPECT_FALSE(defaults->count("node"));  // node_exporter's job, unless asked for
  auto all = SelectCollectors({"node"}, {});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), Collectors().size());
  auto some = SelectCollectors({}, {"node", "bench"});
  ASSERT_TRUE(some);
  EXPECT_FALSE(some->count("node"));
  auto bad = SelectCollectors({"gpus"}, {});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("--collector.gpus: no such collector"));
}

TEST(AgentTest, OneCollectionWithInjectedFaults) {
  testing::Tree t("agent");
  WriteNodeTree(t);
  setenv("GPUFLEET_FAKE_NVML",
         t.Write("faults.json", R"({"gpus": 4, "gpu": {"1": {"lost": true},
           "2": {"xid": [79], "pids": [4242]},
           "3": {"hang": "nvmlDeviceGetTotalEccErrors", "hang_seconds": 3}}})")
             .c_str(),
         1);
  t.Write("proc/4242/cgroup", "0::/system.slice/slurmstepd.scope/job_99/step_0\n");
  auto spec = model::ReferenceSpec({{"nodes.gpu.model", "H100"}, {"nodes.gpu.count", "4"}});
  ASSERT_TRUE(spec) << spec.error().message;
  topo::NodeTopology node;
  AgentOptions o;
  o.sources.root = t.path();
  o.sources.kmsg = "";
  o.sources.gpu_deadline = std::chrono::milliseconds(1500);  // sanitizer builds are slow
  o.collectors = *SelectCollectors({}, {});
  o.disks = {t.path()};
  o.version = "test";
  {
    Agent a(o, &*spec, &node);
    a.CollectOnce();
    const std::string m = a.Metrics();
    EXPECT_THAT(m, HasSubstr("gpufleet_gpus 4\n"));
    EXPECT_THAT(m, HasSubstr("gpufleet_gpu_up{gpu=\"0\""));
    EXPECT_THAT(m,
                HasSubstr("gpufleet_gpu_lost{gpu=\"1\",uuid=\"\",pci_bus_id=\"\",model=\"\"} 1"));
    EXPECT_THAT(m, HasSubstr("call=\"nvmlDeviceGetTotalEccErrors\"} 1\n"));
    EXPECT_THAT(m, HasSubstr("slurm_job=\"99\""));
    // The XID counter of a common code is there at zero before any XID ...
    EXPECT_THAT(m, HasSubstr("gpufleet_gpu_xid_errors_total{gpu=\"0\",uuid=\"GPU-fa4e0000-0000-"
                             "4000-8000-000000000000\",pci_bus_id=\"0000:10:00.0\",model=\"NVIDIA "
                             "H100 80GB HBM3\",xid=\"79\",action=\"drain+reboot\"} 0\n"));
    EXPECT_THAT(m, HasSubstr("gpufleet_check_status{check=\"gpu-count\"} 2\n"));
    EXPECT_THAT(m, HasSubstr("gpufleet_node_action{action=\"drain+reboot\"} 1\n"));
    EXPECT_THAT(m, HasSubstr("gpufleet_scrape_collector_success{collector=\"gpu\"} 1\n"));
    EXPECT_THAT(m, HasSubstr("gpufleet_build_info{version=\"test\"} 1\n"));
    EXPECT_THAT(m, HasSubstr("gpufleet_last_collection_timestamp_seconds "));
    EXPECT_THAT(a.ChecksJson(), HasSubstr("\"status\": \"fail\""));
    std::string why;
    EXPECT_TRUE(a.Healthy(&why)) << why;
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));  // let the hung call return
  }
  unsetenv("GPUFLEET_FAKE_NVML");
}

TEST(AgentTest, WithoutNvmlTheGpuCollectorFailsAndTheRestServes) {
  testing::Tree t("agent-no-nvml");
  WriteNodeTree(t);
  auto spec = model::ReferenceSpec({});
  topo::NodeTopology node;
  AgentOptions o;
  o.sources.nvml = false;
  o.sources.root = t.path();
  o.sources.kmsg = "";
  o.collectors = *SelectCollectors({}, {});
  o.disks = {t.path()};
  Agent a(o, &*spec, &node);
  a.CollectOnce();
  const std::string m = a.Metrics();
  EXPECT_THAT(m, HasSubstr("gpufleet_scrape_collector_success{collector=\"gpu\"} 0\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_scrape_collector_success{collector=\"infiniband\"} 1\n"));
  EXPECT_THAT(m, Not(HasSubstr("collector=\"node\"")));  // off by default: node_exporter's job
  EXPECT_THAT(m, HasSubstr("gpufleet_nvml_loaded 0\n"));
  EXPECT_THAT(m, HasSubstr("gpufleet_infiniband_port_active{hca=\"mlx5_0\""));
}

// Every family a fully featured node exports: all GPU features, an XID, a job, InfiniBand,
// a bench result. Used to hold the rules, the dashboard and docs/metrics.md to real names.
std::set<std::string> ExportedFamilies() {
  testing::Tree t("families");
  WriteNodeTree(t);
  t.Write("proc/4242/cgroup", "0::/system.slice/slurmstepd.scope/job_99/step_0\n");
  const std::string bench = t.Dir("bench");
  t.Write("bench/r.json", R"({"schema": "gpufleet.bench/v1", "kind": "collective", "time": 1,
    "verdict": "pass", "results": [{"op": "all_reduce", "bytes": 4194304, "time_s": 0.001,
    "busbw_bytes_per_s": 1e9, "algbw_bytes_per_s": 5e8, "expected_busbw_bytes_per_s": 1e9,
    "throughput_bytes_per_s": 1e9}]})");
  setenv("GPUFLEET_FAKE_NVML",
         t.Write("faults.json", R"({"gpus": 2, "gpu": {"0": {"xid": [79], "pids": [4242],
           "fail": {"nvmlDeviceGetTemperature": 999}, "fabric_state": 3, "fabric_clique": 1,
           "fabric_cluster_uuid": "8c4f2a9e-51d7-4b3a-9e0c-6a1d2b3c4d5e"},
           "1": {"hang": "nvmlDeviceGetPowerUsage", "hang_seconds": 2.5}}})")
             .c_str(),
         1);
  auto spec = model::ReferenceSpec({});
  topo::NodeTopology node;
  AgentOptions o;
  o.sources.root = t.path();
  o.sources.kmsg = "";
  // A deadline long enough for a sanitizer build's healthy GPU, short of the 2.5 s hang.
  o.sources.gpu_deadline = std::chrono::milliseconds(1500);
  o.collectors = *SelectCollectors({"node"}, {});  // every family, node's included
  o.disks = {t.path()};
  o.bench_dir = bench;
  std::set<std::string> names;
  {
    Agent a(o, &*spec, &node);
    // Twice: the first sees the GPU hang, the second the XID event that arrived meanwhile.
    for (int i = 0; i < 2; ++i) {
      a.CollectOnce();
      for (const auto& line : strings::Split(a.Metrics(), '\n')) {
        if (line.rfind("# TYPE ", 0) == 0) names.insert(line.substr(7, line.find(' ', 7) - 7));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // let the hung call return
  }
  unsetenv("GPUFLEET_FAKE_NVML");
  return names;
}

std::set<std::string> NamesIn(const std::string& text) {
  std::set<std::string> out;
  static const std::regex kName("gpufleet_[a-z0-9_]+");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kName);
       it != std::sregex_iterator(); ++it) {
    out.insert(it->str());
  }
  return out;
}

TEST(AgentTest, RulesDashboardAndDocsUseExactlyTheExportedNames) {
  const std::set<std::string> exported = ExportedFamilies();
  ASSERT_GT(exported.size(), 60u);
  EXPECT_TRUE(exported.count("gpufleet_gpu_xid_last_timestamp_seconds"));
  EXPECT_TRUE(exported.count("gpufleet_gpu_hung_call_info"));
  auto spec = model::ReferenceSpec({});
  for (const char* target : {"prometheus-rules", "grafana", "dcgm-rules"}) {
    auto files = emit::FindTarget(target)->generate(*spec, emit::EmitOptions{});
    ASSERT_TRUE(files) << files.error().message;
    for (const auto& name : NamesIn((*files)[0].content)) {
      EXPECT_TRUE(exported.count(name))
          << target << " uses " << name << ", which no collector exports";
    }
  }
  // docs/metrics.md lists every family, and nothing that is not one.
  auto doc =
      ReadWholeFile(std::string(GPUFLEET_SOURCE_DIR) + "/docs/metrics.md", "the metrics doc");
  ASSERT_TRUE(doc) << doc.error().message;
  const std::set<std::string> documented = NamesIn(*doc);
  for (const auto& name : exported)
    EXPECT_TRUE(documented.count(name)) << name << " is not in docs/metrics.md";
  for (const auto& name : documented) {
    EXPECT_TRUE(exported.count(name))
        << "docs/metrics.md lists " << name << ", which is not exported";
  }
}

}  // namespace
}  // namespace gpufleet::agent
