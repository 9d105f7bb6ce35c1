#include "agent/agent.h"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "base/gzip.h"
#include "base/json.h"

namespace gpufleet::agent {

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Result<std::set<std::string>> SelectCollectors(const std::vector<std::string>& on,
                                               const std::vector<std::string>& off) {
  std::set<std::string> enabled;
  for (const auto& c : Collectors()) {
    if (c.enabled_by_default) enabled.insert(c.name);
  }
  auto known = [](const std::string& name) -> Status {
    for (const auto& c : Collectors()) {
      if (name == c.name) return OkStatus();
    }
    std::string names;
    for (const auto& c : Collectors()) names += std::string(names.empty() ? "" : ", ") + c.name;
    return InvalidArgument(
        fmt::format("--collector.{}: no such collector; collectors are {}", name, names));
  };
  for (const auto& n : on) {
    GPUFLEET_RETURN_IF_ERROR(known(n));
    enabled.insert(n);
  }
  for (const auto& n : off) {
    GPUFLEET_RETURN_IF_ERROR(known(n));
    enabled.erase(n);
  }
  return enabled;
}

Agent::Agent(AgentOptions o, const model::Spec* spec, const topo::NodeTopology* node)
    : Agent(o, NodeSources::Open(o.sources), spec, node) {}

Agent::Agent(AgentOptions o, std::unique_ptr<NodeSources> sources, const model::Spec* spec,
             const topo::NodeTopology* node)
    : opt_(std::move(o)), spec_(spec), node_(node), src_(std::move(sources)) {
  if (src_->nvml() || !opt_.sources.kmsg.empty()) src_->xids().PollOnce(0);
  last_disks_ = ReadDiskStats(src_->root());
}

Agent::~Agent() {
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    stop_ = true;
  }
  loop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Agent::Start() {
  src_->xids().Start();
  thread_ = std::thread([this] { Loop(); });
}

void Agent::Loop() {
  std::unique_lock<std::mutex> lock(loop_mu_);
  while (!stop_) {
    lock.unlock();
    CollectOnce();
    lock.lock();
    loop_cv_.wait_for(lock, std::chrono::duration<double>(opt_.interval_s), [&] { return stop_; });
  }
}

void Agent::CollectOnce() {
  const double now = UnixNow();
  CollectInput in;
  in.root = &src_->root();
  in.nvml = src_->nvml();
  in.nvml_note = src_->nvml_note();
  in.xid_table = &opt_.xid_table;
  in.bench_dir = opt_.bench_dir;
  const auto t0 = std::chrono::steady_clock::now();
  in.gpus = src_->ReadGpus();
  in.xids = src_->xids().Events();
  const double gpu_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  bool due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& r : in.gpus) {
      for (const auto& [fn, code] : r.sample.errors) nvml_errors_[{fn, code}] += 1;
    }
    in.nvml_errors = nvml_errors_;
    due = checked_at_ == 0 || now - checked_at_ >= opt_.check_interval_s;
  }
  if (due) RunChecks(in.gpus, in.xids, now);
  {
    std::lock_guard<std::mutex> lock(mu_);
    in.findings = findings_;
    in.last_check_time = checked_at_;
  }

  MetricSet all;
  for (const auto& c : Collectors()) {
    if (!opt_.collectors.count(c.name)) continue;
    const auto start = std::chrono::steady_clock::now();
    MetricSet m;
    Status s = c.collect(in, &m);
    CollectorStat st;
    st.name = c.name;
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (st.name == "gpu") st.seconds += gpu_seconds;
    st.ok = static_cast<bool>(s);
    if (!s) st.error = s.error().message;
    in.stats.push_back(st);
    all.Append(std::move(m));
  }
  all.Add("gpufleet_last_collection_timestamp_seconds", MetricType::kGauge,
          "When this snapshot was collected", {}, now);
  all.Add("gpufleet_build_info", MetricType::kGauge, "The agent's version",
          {{"version", opt_.version}}, 1);
  Snapshot snap;
  snap.text = std::make_shared<const std::string>(all.Render());
  if (auto gz = Gzip(*snap.text, 6))
    snap.gzip = std::make_shared<const std::string>(std::move(*gz));
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(snap);
  samples_ = all.SampleCount();
  collected_at_ = now;
}

void Agent::RunChecks(const std::vector<GpuReading>& gpus, std::vector<sys::XidEvent> xids,
                      double now) {
  checks::CheckContext ctx;
  ctx.spec = spec_;
  ctx.node = node_;
  ctx.limits = opt_.limits;
  ctx.xid_table = opt_.xid_table;
  ctx.now = now;
  NodeSources::FillChecks(gpus, *src_, std::move(xids), &ctx);
  if (auto d = DiskUsageOf(opt_.disks)) ctx.disks = std::move(*d);
  std::vector<DiskStat> disks = ReadDiskStats(src_->root());
  {
    std::lock_guard<std::mutex> lock(mu_);
    ctx.disk_latency = DiskLatencies(last_disks_, disks);
    last_disks_ = std::move(disks);
  }
  std::vector<checks::Finding> findings = checks::RunAll(ctx);
  std::lock_guard<std::mutex> lock(mu_);
  findings_ = std::move(findings);
  checked_at_ = now;
}

Agent::Snapshot Agent::MetricsSnapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

std::string Agent::Metrics() const {
  Snapshot s = MetricsSnapshot();
  return s.text ? *s.text : "";
}

size_t Agent::SampleCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_;
}

nlohmann::ordered_json CheckReportJson(const std::vector<checks::Finding>& findings, double time) {
  nlohmann::ordered_json j;
  j["schema"] = "gpufleet.check/v1";
  j["time"] = time;
  j["status"] = checks::StatusName(checks::Worst(findings));
  j["action"] = checks::ActionName(checks::StrongestAction(findings));
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& f : findings) {
    arr.push_back({{"check", f.check},
                   {"status", checks::StatusName(f.status)},
                   {"component", f.component},
                   {"message", f.message},
                   {"action", checks::ActionName(f.action)}});
  }
  j["findings"] = arr;
  return j;
}

std::string Agent::ChecksJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  return DumpJson(CheckReportJson(findings_, checked_at_));
}

bool Agent::Healthy(std::string* why) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (collected_at_ == 0) {
    *why = "no collection yet";
    return false;
  }
  const double age = UnixNow() - collected_at_;
  if (age > 3 * opt_.interval_s + 5) {
    *why = fmt::format("data is {:.0f} s old (interval {:g} s)", age, opt_.interval_s);
    return false;
  }
  *why = fmt::format("ok: data {:.1f} s old", age);
  return true;
}

}  // namespace gpufleet::agent
