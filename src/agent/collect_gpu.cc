// gpu collector: one set of series per GPU from its NVML reading, XID counters
// from NVML events and the kernel log, and the job that holds each GPU.
// Metric names and their NVML sources: docs/metrics.md.
#include <fmt/format.h>

#include <cctype>
#include <map>
#include <set>

#include "agent/collector.h"

namespace gpufleet::agent {

namespace {

constexpr MetricType kG = MetricType::kGauge;
constexpr MetricType kC = MetricType::kCounter;

Labels With(Labels l, std::string k, std::string v) {
  l.emplace_back(std::move(k), std::move(v));
  return l;
}

void AddReading(const GpuReading& r, const SysRoot& root, MetricSet* m) {
  const sys::GpuSample& g = r.sample;
  const Labels l = GpuLabels(g);
  m->Add("gpufleet_gpu_up", kG, "1 if NVML answered for this GPU within the deadline, else 0", l,
         r.up ? 1 : 0);
  m->Add("gpufleet_gpu_collect_duration_seconds", kG, "Time to read this GPU through NVML", l,
         r.seconds);
  if (!r.hung_call.empty()) {
    m->Add("gpufleet_gpu_hung_call_info", kG,
           "The NVML call that did not return within the deadline (1 per hung GPU)",
           With(l, "call", r.hung_call), 1);
  }
  if (g.lost) {
    m->Add("gpufleet_gpu_lost", kG, "1 if NVML reports the GPU lost (fell off the bus)", l, 1);
  }
  if (!r.up) return;
  m->Add("gpufleet_gpu_lost", kG, "1 if NVML reports the GPU lost (fell off the bus)", l, 0);
  if (g.has_util) {
    m->Add("gpufleet_gpu_utilization_ratio", kG,
           "Fraction of time a kernel ran, averaged over the driver's samples since the last "
           "collection",
           l, g.util_ratio);
    m->Add("gpufleet_gpu_memory_utilization_ratio", kG,
           "Fraction of time device memory was read or written", l, g.mem_util_ratio);
  }
  if (g.has_memory) {
    m->Add("gpufleet_gpu_memory_used_bytes", kG, "Device memory in use", l, g.memory_used_bytes);
    m->Add("gpufleet_gpu_memory_total_bytes", kG, "Device memory installed", l,
           g.memory_total_bytes);
  }
  if (g.has_power) m->Add("gpufleet_gpu_power_watts", kG, "Board power draw", l, g.power_watts);
  if (g.has_power_limit) {
    m->Add("gpufleet_gpu_power_limit_watts", kG, "Enforced power limit", l, g.power_limit_watts);
  }
  if (g.has_energy) {
    m->Add("gpufleet_gpu_energy_joules_total", kC, "Energy used since the driver loaded", l,
           g.energy_joules);
  }
  if (g.has_temp) {
    m->Add("gpufleet_gpu_temperature_celsius", kG, "GPU die temperature", l, g.temp_celsius);
  }
  if (g.has_mem_temp) {
    m->Add("gpufleet_gpu_memory_temperature_celsius", kG, "HBM temperature", l, g.mem_temp_celsius);
  }
  if (g.has_clocks) {
    m->Add("gpufleet_gpu_sm_clock_hertz", kG, "SM clock now", l, g.sm_clock_hz);
    m->Add("gpufleet_gpu_memory_clock_hertz", kG, "Memory clock now", l, g.mem_clock_hz);
    if (g.sm_clock_max_hz > 0) {
      m->Add("gpufleet_gpu_sm_clock_max_hertz", kG, "Highest SM clock the GPU supports", l,
             g.sm_clock_max_hz);
    }
  }
  if (g.has_clock_events) {
    for (const auto& reason : sys::ClockEventReasons()) {
      m->Add("gpufleet_gpu_clock_event_active", kG,
             "1 while this clock-event (throttle) reason holds the clocks down",
             With(l, "reason", reason.name), (g.clock_event_reasons & reason.bit) ? 1 : 0);
    }
  }
  if (g.has_ecc) {
    const char* help = "ECC errors since the driver loaded (volatile counters)";
    m->Add("gpufleet_gpu_ecc_errors_total", kC, help, With(l, "error", "corrected"),
           static_cast<double>(g.ecc_corrected));
    m->Add("gpufleet_gpu_ecc_errors_total", kC, help, With(l, "error", "uncorrected"),
           static_cast<double>(g.ecc_uncorrected));
  }
  if (g.has_remap) {
    const char* help = "Rows remapped, by the kind of error that caused it";
    m->Add("gpufleet_gpu_remapped_rows", kG, help, With(l, "cause", "correctable"),
           static_cast<double>(g.remapped_rows_corrected));
    m->Add("gpufleet_gpu_remapped_rows", kG, help, With(l, "cause", "uncorrectable"),
           static_cast<double>(g.remapped_rows_uncorrected));
    m->Add("gpufleet_gpu_row_remap_pending", kG, "1 if a row remap waits for a GPU reset", l,
           g.remap_pending ? 1 : 0);
    m->Add("gpufleet_gpu_row_remap_failed", kG, "1 if a row remap failed (no spare rows: RMA)", l,
           g.remap_failed ? 1 : 0);
  }
  if (g.has_pcie) {
    m->Add("gpufleet_gpu_pcie_link_generation", kG, "PCIe generation now (drops when idle)", l,
           g.pcie_gen);
    m->Add("gpufleet_gpu_pcie_link_width", kG, "PCIe lanes now", l, g.pcie_width);
    m->Add("gpufleet_gpu_pcie_link_max_generation", kG, "Highest PCIe generation", l,
           g.pcie_gen_max);
    m->Add("gpufleet_gpu_pcie_link_max_width", kG, "Widest PCIe link", l, g.pcie_width_max);
  }
  if (g.has_pcie_replay) {
    m->Add("gpufleet_gpu_pcie_replays_total", kC, "PCIe replays (link-level retries)", l,
           static_cast<double>(g.pcie_replays));
  }
  // Link state per link; error counters summed over the GPU's links (18 links x 4
  // types x 8 GPUs would be 576 series per node for numbers that are almost always 0).
  double errors[4] = {0, 0, 0, 0};
  bool errors_known = false;
  for (const auto& link : g.nvlinks) {
    m->Add("gpufleet_gpu_nvlink_up", kG, "1 if the NVLink is active",
           With(l, "link", std::to_string(link.link)), link.active ? 1 : 0);
    if (!link.errors_known) continue;
    errors_known = true;
    for (int c = 0; c < 4; ++c) errors[c] += static_cast<double>(link.errors[c]);
  }
  if (errors_known) {
    for (int c = 0; c < 4; ++c) {
      m->Add("gpufleet_gpu_nvlink_errors_total", kC,
             "NVLink data-link-layer errors by type, summed over the GPU's active links",
             With(l, "type", sys::kNvLinkErrorNames[c]), errors[c]);
    }
  }
  // One series per GPU, not per link (18 x 8 more series per node for a number that is the same
  // on every healthy link): the slowest active link, which a link trained down pulls down.
  double slowest = 0;
  for (const auto& link : g.nvlinks) {
    if (!link.active || link.speed_mbps <= 0) continue;
    slowest = slowest == 0 ? link.speed_mbps : std::min(slowest, link.speed_mbps);
  }
  if (slowest > 0) {
    m->Add("gpufleet_gpu_nvlink_speed_bytes_per_second", kG,
           "The slowest active NVLink's speed per direction as NVML reports it (NVLink 4: 26.6 "
           "GB/s, NVLink 5: 53.1 GB/s); topo show lists every link",
           l, slowest * 1e6);
  }
  if (g.has_fabric && g.fabric.state != sys::FabricState::kNotSupported) {
    const sys::GpuFabric& f = g.fabric;
    m->Add("gpufleet_gpu_fabric_state", kG,
           "Registration with the multi-node NVLink fabric: 1 not started, 2 in progress, 3 "
           "completed",
           l, static_cast<int>(f.state));
    m->Add("gpufleet_gpu_fabric_status", kG,
           "The fabric registration's result once completed (nvmlReturn_t: 0 success)", l,
           f.status);
    m->Add("gpufleet_gpu_fabric_info", kG,
           "1 per GPU in a multi-node NVLink domain: its domain (cluster UUID) and partition "
           "(clique)",
           With(With(l, "cluster_uuid", f.cluster_uuid), "clique_id", std::to_string(f.clique)), 1);
    m->Add("gpufleet_gpu_fabric_health_mask", kG,
           "The fabric's health mask (NVML_GPU_FABRIC_HEALTH_MASK_*; fields read by the fabric "
           "check)",
           l, f.health_mask);
    m->Add("gpufleet_gpu_fabric_healthy", kG,
           "1 if the fabric reports no degraded bandwidth, unhealthy route or wrong "
           "configuration",
           l, f.Problems().empty() && f.status == 0 ? 1 : 0);
  }
  if (g.has_gpm) {
    const char* interval = " over the interval since the previous collection (NVML GPM)";
    m->Add("gpufleet_gpu_graphics_engine_active_ratio", kG,
           fmt::format("Fraction of time the graphics or compute engine was active{}", interval), l,
           g.gpm_graphics_active);
    m->Add("gpufleet_gpu_sm_active_ratio", kG,
           fmt::format("Fraction of SMs busy, averaged{}", interval), l, g.gpm_sm_active);
    m->Add("gpufleet_gpu_sm_occupancy_ratio", kG,
           fmt::format("Resident warps over the SMs' maximum{}", interval), l, g.gpm_sm_occupancy);
    m->Add("gpufleet_gpu_tensor_active_ratio", kG,
           fmt::format("Fraction of time the SMs ran any tensor-core operation{}", interval), l,
           g.gpm_tensor_active);
    m->Add("gpufleet_gpu_dram_active_ratio", kG,
           fmt::format("Device-memory bandwidth used over its maximum{}", interval), l,
           g.gpm_dram_active);
    m->Add("gpufleet_gpu_pcie_tx_bytes_per_second", kG,
           fmt::format("PCIe traffic sent by the GPU{}", interval), l, g.gpm_pcie_tx_bytes_per_s);
    m->Add("gpufleet_gpu_pcie_rx_bytes_per_second", kG,
           fmt::format("PCIe traffic received by the GPU{}", interval), l,
           g.gpm_pcie_rx_bytes_per_s);
  }
  if (g.has_recovery) {
    m->Add("gpufleet_gpu_recovery_action", kG,
           "The driver's recovery action: 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 "
           "drain and reset, 5 recover IMEX domain",
           l, static_cast<int>(g.recovery));
  }
  std::set<std::string> jobs;
  for (unsigned pid : g.pids) {
    auto cg = root.Read(fmt::format("/proc/{}/cgroup", pid));
    JobOfProcess j = cg ? ParseCgroup(*cg) : JobOfProcess{};
    const std::string key = j.slurm_job + "|" + j.pod_uid + "|" + j.container;
    if (!jobs.insert(key).second) continue;
    Labels jl = l;
    jl.emplace_back("slurm_job", j.slurm_job);
    jl.emplace_back("pod_uid", j.pod_uid);
    jl.emplace_back("container", j.container);
    m->Add("gpufleet_gpu_job_info", kG,
           "1 per job holding the GPU: Slurm job id or Kubernetes pod UID, from the GPU "
           "process's cgroup (join kube_pod_info on uid for pod and namespace)",
           jl, 1);
  }
  m->Add("gpufleet_gpu_processes", kG, "Compute processes on the GPU", l,
         static_cast<double>(g.pids.size()));
}

}  // namespace

Status CollectGpu(const CollectInput& in, MetricSet* out) {
  if (!in.nvml) return Unavailable(in.nvml_note.empty() ? "NVML not loaded" : in.nvml_note);
  out->Add("gpufleet_gpus", kG, "GPUs NVML counts", {}, static_cast<double>(in.gpus.size()));
  for (const auto& r : in.gpus) AddReading(r, *in.root, out);

  // XIDs: a counter per GPU and code, at zero from the start for the common codes
  // (so increase() sees their first one), and a last-seen time (what the alerts use,
  // so a code's first XID alerts even for a code without a zero series).
  std::map<std::pair<int, int>, std::pair<double, double>> seen;  // (gpu, xid) -> (n, last)
  // XIDs of bus ids NVML does not list (GPUs that fell off the bus), one series each.
  std::map<std::pair<std::string, int>, std::pair<double, double>> unlisted;
  for (const auto& e : in.xids) {
    auto& s = e.gpu >= 0 ? seen[{e.gpu, e.xid}] : unlisted[{e.busid, e.xid}];
    s.first += 1;
    s.second = std::max(s.second, e.time);
  }
  auto action = [&](int xid) { return std::string(checks::XidPolicyName(in.xid_table->For(xid))); };
  auto add = [&](const Labels& l, int xid, const std::pair<double, double>* n_last) {
    const Labels xl = With(With(l, "xid", std::to_string(xid)), "action", action(xid));
    out->Add("gpufleet_gpu_xid_errors_total", kC,
             "XIDs since boot (kernel log) or agent start (NVML events), de-duplicated; zero "
             "from the start for the common codes",
             xl, n_last ? n_last->first : 0);
    if (n_last && n_last->second > 0) {
      out->Add("gpufleet_gpu_xid_last_timestamp_seconds", kG,
               "Unix time of the last XID of this code on this GPU", xl, n_last->second);
    }
  };
  std::set<int> common;
  for (const auto& rule : checks::DefaultXidRules()) {
    if (rule.common) common.insert(rule.xid);
  }
  for (const auto& r : in.gpus) {
    std::set<int> codes = common;
    for (const auto& [k, v] : seen) {
      if (k.first == r.sample.index) codes.insert(k.second);
    }
    const Labels l = GpuLabels(r.sample);
    int last = 0;
    double last_time = -1;
    for (int xid : codes) {
      auto it = seen.find({r.sample.index, xid});
      add(l, xid, it == seen.end() ? nullptr : &it->second);
      if (it != seen.end() && it->second.second > last_time) {
        last = xid;
        last_time = it->second.second;
      }
    }
    out->Add("gpufleet_gpu_last_xid", kG,
             "The code of the GPU's most recent XID, 0 when it has had none (DCGM's "
             "DCGM_FI_DEV_XID_ERRORS)",
             l, last);
  }
  for (const auto& [k, v] : unlisted) {
    add({{"gpu", ""}, {"uuid", ""}, {"pci_bus_id", k.first}, {"model", ""}}, k.second, &v);
  }
  return OkStatus();
}

JobOfProcess ParseCgroup(std::string_view text) {
  JobOfProcess j;
  // Slurm: ".../job_1234/step_0/..." (cgroup v1 and v2).
  if (size_t at = text.find("/job_"); at != std::string_view::npos) {
    size_t e = at + 5;
    while (e < text.size() && std::isdigit(static_cast<unsigned char>(text[e]))) ++e;
    j.slurm_job = std::string(text.substr(at + 5, e - at - 5));
  }
  // Kubernetes: "kubepods-burstable-pod6b1f_..._x.slice" (systemd driver) or
  // "/kubepods/burstable/pod6b1f-...-x/" (cgroupfs driver); the UID has 32 hex digits.
  if (text.find("kubepods") == std::string_view::npos) return j;
  size_t uid_end = 0;
  for (size_t at = text.find("pod"); at != std::string_view::npos; at = text.find("pod", at + 3)) {
    size_t e = at + 3;
    std::string uid;
    while (e < text.size() && (std::isxdigit(static_cast<unsigned char>(text[e])) ||
                               text[e] == '-' || text[e] == '_')) {
      uid += text[e] == '_' ? '-' : text[e];
      ++e;
    }
    if (uid.size() == 36) {
      j.pod_uid = uid;
      uid_end = e;
      break;
    }
  }
  if (j.pod_uid.empty()) return j;
  // Container: "cri-containerd-<64 hex>.scope", "docker-<64 hex>.scope", or "/<64 hex>".
  for (size_t p = uid_end; p + 64 <= text.size(); ++p) {
    size_t n = 0;
    while (p + n < text.size() && std::isxdigit(static_cast<unsigned char>(text[p + n]))) ++n;
    if (n == 64) {
      j.container = std::string(text.substr(p, 64));
      break;
    }
    p += n;
  }
  return j;
}

}  // namespace gpufleet::agent
