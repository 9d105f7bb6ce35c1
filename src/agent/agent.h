#pragma once
// The node agent: collects on a schedule into a snapshot that /metrics serves
// as is (a scrape never waits on a GPU), runs the checks on their own
// schedule, and says on /healthz whether its data is fresh. Thread-safe: the
// HTTP threads only read snapshots under a mutex.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/collector.h"
#include "agent/sources.h"
#include "checks/check.h"
#include "model/spec.h"
#include "topo/node_topology.h"

namespace gpufleet::agent {

struct AgentOptions {
  SourceOptions sources;
  std::set<std::string> collectors;  // enabled ones
  std::string bench_dir;
  double interval_s = 10;        // collection period
  double check_interval_s = 60;  // check period
  checks::Thresholds limits;
  checks::XidTable xid_table;
  std::vector<std::string> disks = {"/"};  // for disk-space
  std::string version;                     // for gpufleet_build_info
};

// The enabled collectors after --collector.X / --no-collector.X; kInvalidArgument
// for a name that is not a collector.
Result<std::set<std::string>> SelectCollectors(const std::vector<std::string>& on,
                                               const std::vector<std::string>& off);

class Agent {
 public:
  // `spec` and `node` must outlive the agent. The first form opens the node's sources
  // from `o.sources`; the second takes them already open (NVML shared with discovery).
  Agent(AgentOptions o, const model::Spec* spec, const topo::NodeTopology* node);
  Agent(AgentOptions o, std::unique_ptr<NodeSources> sources, const model::Spec* spec,
        const topo::NodeTopology* node);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Collects (and checks, when due) once, now.
  void CollectOnce();
  // Collects every interval on a thread until destruction.
  void Start();

  // The last collection as exposition text, and gzip-compressed (once per
  // collection, so a scrape costs no compression). Both null before the first.
  struct Snapshot {
    std::shared_ptr<const std::string> text, gzip;
  };
  Snapshot MetricsSnapshot() const;
  std::string Metrics() const;  // the text ("" before the first collection)
  // The last check run as gpufleet.check/v1 JSON.
  std::string ChecksJson() const;
  // Fresh data (a collection within 3 intervals); `why` says what is wrong.
  bool Healthy(std::string* why) const;
  size_t SampleCount() const;

 private:
  void RunChecks(const std::vector<GpuReading>& gpus, std::vector<sys::XidEvent> xids, double now);
  void Loop();

  AgentOptions opt_;
  const model::Spec* spec_;
  const topo::NodeTopology* node_;
  std::unique_ptr<NodeSources> src_;

  mutable std::mutex mu_;  // guards everything below
  Snapshot snapshot_;
  size_t samples_ = 0;
  double collected_at_ = 0;
  std::vector<checks::Finding> findings_;
  double checked_at_ = 0;
  std::map<std::pair<std::string, int>, double> nvml_errors_;
  std::vector<DiskStat> last_disks_;

  std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Unix time now, in seconds.
double UnixNow();

// A check run as gpufleet.check/v1 JSON: time, status, action, findings.
// `check --format json` and the agent's /checks both write it.
nlohmann::ordered_json CheckReportJson(const std::vector<checks::Finding>& findings, double time);

}  // namespace gpufleet::agent
