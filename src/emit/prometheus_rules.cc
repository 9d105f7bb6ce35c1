// prometheus-rules: alerting rules on the gpufleet agent's metrics, with the
// thresholds that depend on the hardware taken from the spec and its plan (GPU
// count, the GPU's rated power, the compute NICs' rate, the 4 MiB all-reduce
// time the plan expects on this hardware). XID alerts use the
// last-seen timestamp, not increase() on the counter, so the first XID of a
// series alerts too (reference/monitoring.md §8). docs/metrics.md lists the
// metrics; tests check every name here is one the agent exports.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "base/units.h"
#include "emit/emit.h"
#include "plan/comm.h"
#include "plan/compute.h"

namespace gpufleet::emit {

namespace {

struct Rule {
  std::string alert;
  std::string expr;
  std::string for_;
  std::string severity;  // critical (drain now), warning (look soon)
  std::string summary;
  std::string action;  // what the operator does
};

void EmitGroup(YAML::Emitter& y, const std::string& name, const std::vector<Rule>& rules) {
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name;
  y << YAML::Key << "rules" << YAML::Value << YAML::BeginSeq;
  for (const auto& r : rules) {
    y << YAML::BeginMap;
    y << YAML::Key << "alert" << YAML::Value << r.alert;
    y << YAML::Key << "expr" << YAML::Value << r.expr;
    if (!r.for_.empty()) y << YAML::Key << "for" << YAML::Value << r.for_;
    y << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "severity" << YAML::Value << r.severity;
    y << YAML::EndMap;
    y << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "summary" << YAML::Value << r.summary;
    y << YAML::Key << "action" << YAML::Value << r.action;
    y << YAML::EndMap;
    y << YAML::EndMap;
  }
  y << YAML::EndSeq << YAML::EndMap;
}

}  // namespace

Result<std::vector<GeneratedFile>> EmitPrometheusRules(const model::Spec& spec,
                                                       const EmitOptions&) {
  const auto& n = spec.cluster.nodes;
  // Power: a training GPU's draw depends on its kernels (memory- and communication-bound phases
  // draw far less than GEMMs), so "below 87.5 % of TDP under load" fires on healthy nodes. The
  // alert wants a GPU that is busy, at under half its rating (the lower of the spec's TDP and the
  // enforced limit), and under 70 % of its node's median GPU, for 30 minutes: the GPUs of one
  // job run the same steps, so one that draws far less than its peers is clock- or
  // power-delivery-limited. DCGM's targeted-power floor is 75 % of the target under a synthetic
  // load (reference/validation.md), a bound training never has to reach.
  const double rating_w = n.gpu.tdp_w;
  // All-reduce of 4 MiB over every GPU: the plan's alpha-beta time for this hardware with a 10x
  // margin (the model is within ~3x of published mid-size nccl-tests points, docs/plan.md), at
  // least 1 ms, and never above the 30 ms rule of thumb. A broken topology or a fallback to
  // sockets is 10-100x slower than planned and fires; a healthy cluster stays well under it.
  const plan::ComputePlan compute = plan::PlanCompute(spec);
  const double allreduce_4mib_s = plan::PlanComm(spec, compute).allreduce_4mib_s;
  const double allreduce_alert_s = std::min(0.030, std::max(0.001, 10 * allreduce_4mib_s));
  double nic_rate = 0;
  for (const auto& nic : n.nics) {
    if (nic.role == model::NicRole::kCompute)
      nic_rate = std::max(nic_rate, nic.port_speed_bytes_per_s);
  }
  const std::string gpu_sel = "{{ $labels.instance }} GPU {{ $labels.gpu }}";

  std::vector<Rule> gpu = {
      {"GpufleetGpuLost", "gpufleet_gpu_lost == 1", "", "critical",
       gpu_sel + " fell off the bus (NVML: GPU is lost)", "drain the node and reboot it"},
      {"GpufleetGpuNotAnswering", "gpufleet_gpu_up == 0", "2m", "critical",
       gpu_sel + " does not answer NVML within the agent's deadline",
       "drain; reset the GPU or reboot if it stays hung"},
      {"GpufleetGpuMissing", fmt::format("gpufleet_gpus < {}", n.gpus_per_node), "5m", "critical",
       fmt::format("{{{{ $labels.instance }}}} has {{{{ $value }}}} GPUs, the spec says {}",
                   n.gpus_per_node),
       "drain; a GPU fell off the bus or is not seated"},
      {"GpufleetXidDrain",
       "time() - gpufleet_gpu_xid_last_timestamp_seconds{action=~\"drain|drain\\\\+reboot\"} < 900",
       "", "critical", gpu_sel + " logged XID {{ $labels.xid }} ({{ $labels.action }})",
       "{{ $labels.action }} the node, per the XID table in docs/check.md"},
      {"GpufleetXidWarning",
       "time() - gpufleet_gpu_xid_last_timestamp_seconds{action=\"warn\"} < 900", "", "warning",
       gpu_sel + " logged XID {{ $labels.xid }}", "watch; escalate if it repeats"},
      {"GpufleetUncorrectableEcc", "gpufleet_gpu_ecc_errors_total{error=\"uncorrected\"} > 0", "",
       "critical", gpu_sel + " has {{ $value }} uncorrectable ECC errors since the driver loaded",
       "drain and reset the GPU"},
      {"GpufleetRowRemapFailed", "gpufleet_gpu_row_remap_failed == 1", "", "critical",
       gpu_sel + " failed a row remap: out of spare rows", "drain; replace the GPU (RMA)"},
      {"GpufleetRowRemapPending", "gpufleet_gpu_row_remap_pending == 1", "15m", "warning",
       gpu_sel + " has a row remap waiting for a GPU reset", "reset the GPU when it is idle"},
      {"GpufleetRecoveryAction", "gpufleet_gpu_recovery_action > 0", "", "critical",
       gpu_sel + " driver asks for recovery action {{ $value }}",
       "1 reset GPU, 2 reboot node, 3 drain P2P, 4 drain and reset"},
      {"GpufleetHardwareSlowdown",
       "max by (instance, gpu) (gpufleet_gpu_clock_event_active{reason=~\"hw_.*\"}) == 1 and on "
       "(instance, gpu) max by (instance, gpu) (gpufleet_gpu_utilization_ratio) > 0.8",
       "5m", "critical", gpu_sel + " clocks cut by hardware (thermal or power brake) under load",
       "drain; check cooling, fans and power delivery"},
      {"GpufleetPowerBelowRating",
       fmt::format("gpufleet_gpu_power_watts < 0.5 * clamp_max(gpufleet_gpu_power_limit_watts, "
                   "{:g}) and on (instance, gpu) gpufleet_gpu_utilization_ratio > 0.9 and on "
                   "(instance, gpu) gpufleet_gpu_power_watts < on (instance) group_left () (0.7 * "
                   "quantile by (instance) (0.5, gpufleet_gpu_power_watts))",
                   rating_w),
       "30m", "warning",
       fmt::format("{} draws {{{{ $value }}}} W at over 90 % busy: under half its rating ({} "
                   "{:g} W or its power limit) and under 70 % of its node's median GPU",
                   gpu_sel, n.gpu.name, rating_w),
       "check clocks, power capping and power delivery; compare with its neighbours"},
      {"GpufleetNvlinkDown", "gpufleet_gpu_nvlink_up == 0", "1m", "critical",
       gpu_sel + " NVLink {{ $labels.link }} is down", "drain; reset the GPU, then check the link"},
      {"GpufleetPcieDowntrained", "gpufleet_gpu_pcie_link_width < gpufleet_gpu_pcie_link_max_width",
       "10m", "warning", gpu_sel + " PCIe link trained narrower than its maximum",
       "reseat the GPU or riser at the next maintenance"},
  };
  std::vector<Rule> node = {
      {"GpufleetCheckFailing", "gpufleet_check_status == 2", "2m", "critical",
       "{{ $labels.instance }} fails the {{ $labels.check }} check",
       "see /checks on the agent or run gpufleet check on the node"},
      {"GpufleetInfinibandPortDown", "gpufleet_infiniband_port_active == 0", "2m", "critical",
       "{{ $labels.instance }} {{ $labels.hca }} port {{ $labels.port }} is not ACTIVE",
       "drain; check the cable, the switch port and the subnet manager"},
      {"GpufleetInfinibandLinkFlapping",
       "increase(gpufleet_infiniband_port_link_downed_total[1h]) > 0", "", "warning",
       "{{ $labels.instance }} {{ $labels.hca }} port {{ $labels.port }} went down in the last "
       "hour",
       "check the cable and transceiver"},
      // node_exporter's disk counters, or the agent's node collector's where that is on (it is
      // off by default: node_exporter exports the same).
      {"GpufleetStorageLatencyHigh",
       "(rate(node_disk_read_time_seconds_total[5m]) + "
       "rate(node_disk_write_time_seconds_total[5m])) / "
       "(rate(node_disk_reads_completed_total[5m]) + "
       "rate(node_disk_writes_completed_total[5m])) > 0.01 or "
       "(rate(gpufleet_node_disk_read_time_seconds_total[5m]) + "
       "rate(gpufleet_node_disk_write_time_seconds_total[5m])) / "
       "(rate(gpufleet_node_disk_reads_completed_total[5m]) + "
       "rate(gpufleet_node_disk_writes_completed_total[5m])) > 0.01",
       "10m", "warning", "{{ $labels.instance }} {{ $labels.device }} IOs take over 10 ms",
       "checkpoints and data loading stall; check the device and its queue"},
      {"GpufleetAgentDown", "up{job=\"gpufleet\"} == 0", "5m", "warning",
       "the gpufleet agent on {{ $labels.instance }} does not answer",
       "restart the agent; without it nothing on this node is watched"},
      {"GpufleetAgentStale", "time() - gpufleet_last_collection_timestamp_seconds > 120", "5m",
       "warning", "{{ $labels.instance }} serves metrics {{ $value | humanizeDuration }} old",
       "the agent's collection loop is stuck: restart the agent"},
      {"GpufleetCollectorFailing", "gpufleet_scrape_collector_success == 0", "10m", "warning",
       "{{ $labels.instance }} collector {{ $labels.collector }} fails",
       "read the agent's log; for gpu, is the driver loaded?"},
  };
  if (nic_rate > 0) {
    node.push_back(
        {"GpufleetInfinibandRateBelowSpec",
         fmt::format("gpufleet_infiniband_port_rate_bytes_per_second < {:g} and "
                     "gpufleet_infiniband_port_active == 1",
                     nic_rate),
         "5m", "critical",
         fmt::format("{{{{ $labels.instance }}}} {{{{ $labels.hca }}}} runs below the spec's {}",
                     units::FormatBitRate(nic_rate)),
         "drain; the link trained at a lower rate (cable, transceiver, switch port)"});
  }
  std::vector<Rule> bench = {
      {"GpufleetBusBandwidthBelowPlan",
       "gpufleet_bench_busbw_bytes_per_second / gpufleet_bench_expected_busbw_bytes_per_second "
       "< 0.8",
       "", "warning",
       "{{ $labels.instance }} {{ $labels.op }} at {{ $labels.bytes }} B reaches {{ $value | "
       "humanizePercentage }} of the plan",
       "run gpufleet bench pairs to find the slow node or link"},
      {"GpufleetAllReduce4MiBSlow",
       fmt::format("gpufleet_bench_time_seconds{{op=\"all_reduce\",bytes=\"4194304\"}} > {:g}",
                   allreduce_alert_s),
       "", "warning",
       fmt::format("{{{{ $labels.instance }}}} 4 MiB all-reduce takes {{{{ $value | "
                   "humanizeDuration }}}}; the plan expects {} over all {} GPUs (alert at {})",
                   units::FormatTime(allreduce_4mib_s), spec.TotalGpus(),
                   units::FormatTime(allreduce_alert_s)),
       "check NCCL's algorithm and protocol choice, the transport (NCCL_DEBUG=INFO: IB, not "
       "sockets) and the fabric"},
  };

  // Rack-scale NVLink (GB200/GB300 NVL72): what one node's fabric check cannot see is the
  // domain as a whole, across its trays: every GPU of a domain (cluster UUID) registered, in one
  // clique unless the domain was partitioned on purpose.
  std::vector<Rule> fabric;
  if (const int domain = spec.cluster.ScaleUpDomain(); domain > n.gpus_per_node) {
    fabric = {
        {"GpufleetFabricNotRegistered", "gpufleet_gpu_fabric_state != 3", "5m", "critical",
         gpu_sel + " has not completed its NVLink fabric registration (state {{ $value }})",
         "drain; check the fabric manager on the switch trays and the GPU's fabric state "
         "(nvidia-smi -q)"},
        {"GpufleetFabricUnhealthy", "gpufleet_gpu_fabric_healthy == 0", "2m", "critical",
         gpu_sel + " NVLink fabric reports degraded bandwidth, an unhealthy route or a wrong "
                   "configuration",
         "drain; gpufleet check names what the health mask says"},
        {"GpufleetNvlinkDomainShort",
         fmt::format(
             "count by (cluster_uuid) (gpufleet_gpu_fabric_info{{cluster_uuid!=\"\"}}) < {}",
             domain),
         "10m", "warning",
         fmt::format("NVLink domain {{{{ $labels.cluster_uuid }}}} has {{{{ $value }}}} of its {} "
                     "GPUs registered",
                     domain),
         "a tray is down, unregistered or joined another domain: gpufleet_gpu_fabric_info "
         "names each GPU's domain"},
        {"GpufleetNvlinkDomainSplit",
         "count by (cluster_uuid) (count by (cluster_uuid, clique_id) "
         "(gpufleet_gpu_fabric_info{cluster_uuid!=\"\"})) > 1",
         "10m", "warning",
         "NVLink domain {{ $labels.cluster_uuid }} has its GPUs in {{ $value }} cliques",
         "GPUs in different cliques cannot reach each other over NVLink: unless the domain is "
         "partitioned on purpose, check the fabric manager's partition"},
    };
  }

  YAML::Emitter y;
  y << YAML::BeginMap << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
  EmitGroup(y, "gpufleet-gpu", gpu);
  EmitGroup(y, "gpufleet-node", node);
  EmitGroup(y, "gpufleet-bench", bench);
  if (!fabric.empty()) EmitGroup(y, "gpufleet-fabric", fabric);
  y << YAML::EndSeq << YAML::EndMap;
  if (!y.good()) return Error{ErrorCode::kInternal, "YAML emitter: " + y.GetLastError()};
  return std::vector<GeneratedFile>{
      {"gpufleet-rules.yml",
       fmt::format("# Prometheus alerting rules for the gpufleet agent on {} (gpufleet emit "
                   "prometheus-rules).\n# Check: promtool check rules gpufleet-rules.yml\n{}\n",
                   CommentSafe(spec.cluster.name), y.c_str())}};
}

}  // namespace gpufleet::emit
