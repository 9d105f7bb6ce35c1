// grafana: a dashboard over the gpufleet agent's metrics, one row per concern
// (health, GPU load, GPU errors, fabric, storage, validation), with variables
// for the Prometheus data source and the nodes. Import it in Grafana
// (Dashboards > New > Import). Every metric name is one the agent exports
// (checked by the tests).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/json.h"
#include "emit/emit.h"

namespace gpufleet::emit {

namespace {

using nlohmann::ordered_json;

struct Query {
  std::string expr;
  std::string legend;
};

class Board {
 public:
  void Row(const std::string& title) {
    if (x_ != 0) NextLine();
    panels_.push_back({{"type", "row"},
                       {"title", title},
                       {"collapsed", false},
                       {"gridPos", {{"h", 1}, {"w", 24}, {"x", 0}, {"y", y_}}},
                       {"id", ++id_},
                       {"panels", ordered_json::array()}});
    y_ += 1;
  }
  void Panel(const std::string& type, const std::string& title, const std::string& unit,
             const std::vector<Query>& queries, int width = 12, const std::string& help = "") {
    if (x_ + width > 24) NextLine();
    ordered_json targets = ordered_json::array();
    char ref = 'A';
    for (const auto& q : queries) {
      targets.push_back({{"datasource", {{"type", "prometheus"}, {"uid", "${datasource}"}}},
                         {"expr", q.expr},
                         {"legendFormat", q.legend},
                         {"refId", std::string(1, ref++)}});
    }
    ordered_json p = {
        {"type", type},
        {"title", title},
        {"id", ++id_},
        {"datasource", {{"type", "prometheus"}, {"uid", "${datasource}"}}},
        {"gridPos", {{"h", 8}, {"w", width}, {"x", x_}, {"y", y_}}},
        {"fieldConfig", {{"defaults", {{"unit", unit}}}, {"overrides", ordered_json::array()}}},
        {"targets", targets}};
    if (!help.empty()) p["description"] = help;
    panels_.push_back(std::move(p));
    x_ += width;
  }
  ordered_json panels() const { return panels_; }

 private:
  void NextLine() {
    x_ = 0;
    y_ += 8;
  }
  ordered_json panels_ = ordered_json::array();
  int x_ = 0, y_ = 0, id_ = 0;
};

}  // namespace

Result<std::vector<GeneratedFile>> EmitGrafana(const model::Spec& spec, const EmitOptions&) {
  const std::string node = "instance=~\"$instance\"";
  const std::string gpu = "{" + node + "}";
  auto sel = [&](const std::string& extra) { return "{" + node + "," + extra + "}"; };
  Board b;
  b.Row("Health");
  b.Panel("stat", "Nodes failing a check", "none",
          {{"count(gpufleet_node_healthy" + gpu + " == 0) or vector(0)", "failing"}}, 6,
          "Nodes where a gpufleet check fails (gpufleet_node_healthy == 0)");
  b.Panel("stat", "GPUs not answering", "none",
          {{"count(gpufleet_gpu_up" + gpu + " == 0) or vector(0)", "down"}}, 6);
  b.Panel("table", "Failing and warning checks", "none",
          {{"gpufleet_check_status" + gpu + " > 0", "{{instance}} {{check}}"}}, 12,
          "1 warn, 2 fail, 3 cannot evaluate; details on the agent's /checks");
  b.Panel(
      "table", "XIDs in the last 24 h", "none",
      {{"time() - gpufleet_gpu_xid_last_timestamp_seconds" + gpu + " < 86400",
        "{{instance}} GPU {{gpu}} XID {{xid}} ({{action}})"}},
      12,
      "Seconds since the last XID of each code on each GPU; the action comes from the XID table");
  b.Panel("timeseries", "Driver recovery action", "none",
          {{"gpufleet_gpu_recovery_action" + gpu, "{{instance}} GPU {{gpu}}"}}, 12,
          "0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset");
  b.Row("GPU load");
  b.Panel("timeseries", "Utilisation", "percentunit",
          {{"gpufleet_gpu_utilization_ratio" + gpu, "{{instance}} GPU {{gpu}}"}});
  b.Panel("timeseries", "Memory used", "bytes",
          {{"gpufleet_gpu_memory_used_bytes" + gpu, "{{instance}} GPU {{gpu}}"}});
  b.Panel("timeseries",
          fmt::format("Power (rated {:g} W for the {})", spec.cluster.nodes.gpu.tdp_w,
                      spec.cluster.nodes.gpu.name),
          "watt",
          {{"gpufleet_gpu_power_watts" + gpu, "{{instance}} GPU {{gpu}}"},
           {"gpufleet_gpu_power_limit_watts" + gpu, "limit {{instance}} GPU {{gpu}}"}});
  b.Panel("timeseries", "Temperature", "celsius",
          {{"gpufleet_gpu_temperature_celsius" + gpu, "{{instance}} GPU {{gpu}}"},
           {"gpufleet_gpu_memory_temperature_celsius" + gpu, "HBM {{instance}} GPU {{gpu}}"}});
  b.Panel("timeseries", "SM clock", "hertz",
          {{"gpufleet_gpu_sm_clock_hertz" + gpu, "{{instance}} GPU {{gpu}}"}});
  b.Panel("timeseries", "Clock-event (throttle) reasons active", "none",
          {{"gpufleet_gpu_clock_event_active" + sel("reason!=\"gpu_idle\"") + " == 1",
            "{{instance}} GPU {{gpu}} {{reason}}"}});
  b.Panel("timeseries", "Energy", "watt",
          {{"rate(gpufleet_gpu_energy_joules_total" + gpu + "[5m])", "{{instance}} GPU {{gpu}}"}},
          12, "rate() of the energy counter: the mean power over 5 minutes");
  b.Row("GPU errors");
  b.Panel("timeseries", "XIDs", "none",
          {{"increase(gpufleet_gpu_xid_errors_total" + gpu + "[1h]) > 0",
            "{{instance}} GPU {{gpu}} XID {{xid}}"}});
  b.Panel("timeseries", "ECC errors (since driver load)", "none",
          {{"gpufleet_gpu_ecc_errors_total" + gpu, "{{instance}} GPU {{gpu}} {{error}}"}});
  b.Panel("timeseries", "Row remapping", "none",
          {{"gpufleet_gpu_row_remap_pending" + gpu, "pending {{instance}} GPU {{gpu}}"},
           {"gpufleet_gpu_row_remap_failed" + gpu, "failed {{instance}} GPU {{gpu}}"},
           {"gpufleet_gpu_remapped_rows" + gpu, "{{cause}} {{instance}} GPU {{gpu}}"}});
  b.Panel(
      "timeseries", "NVLinks up per GPU", "none",
      {{"sum by (instance, gpu) (gpufleet_gpu_nvlink_up" + gpu + ")", "{{instance}} GPU {{gpu}}"}});
  b.Panel("timeseries", "NVLink errors", "none",
          {{"rate(gpufleet_gpu_nvlink_errors_total" + gpu + "[5m]) > 0",
            "{{instance}} GPU {{gpu}} {{type}}"}});
  b.Panel("timeseries", "PCIe replays and link width", "none",
          {{"rate(gpufleet_gpu_pcie_replays_total" + gpu + "[5m])",
            "replays/s {{instance}} GPU {{gpu}}"},
           {"gpufleet_gpu_pcie_link_width" + gpu, "width {{instance}} GPU {{gpu}}"}});
  b.Row("Fabric");
  b.Panel("timeseries", "InfiniBand ports active", "none",
          {{"gpufleet_infiniband_port_active" + gpu, "{{instance}} {{hca}}/{{port}}"}});
  b.Panel("timeseries", "InfiniBand traffic", "Bps",
          {{"rate(gpufleet_infiniband_port_transmit_bytes_total" + gpu + "[5m])",
            "tx {{instance}} {{hca}}"},
           {"rate(gpufleet_infiniband_port_receive_bytes_total" + gpu + "[5m])",
            "rx {{instance}} {{hca}}"}});
  b.Panel("timeseries", "InfiniBand errors and link downs", "none",
          {{"increase(gpufleet_infiniband_port_errors_total" + gpu + "[1h]) > 0",
            "{{instance}} {{hca}} {{counter}}"},
           {"increase(gpufleet_infiniband_port_link_downed_total" + gpu + "[1h]) > 0",
            "link down {{instance}} {{hca}}"}});
  b.Panel("timeseries", "Ethernet traffic", "Bps",
          {{"rate(gpufleet_node_network_transmit_bytes_total" + gpu + "[5m])",
            "tx {{instance}} {{device}}"},
           {"rate(gpufleet_node_network_receive_bytes_total" + gpu + "[5m])",
            "rx {{instance}} {{device}}"}});
  b.Row("Node and storage");
  b.Panel("timeseries", "CPU busy", "percentunit",
          {{"1 - sum by (instance) (rate(gpufleet_node_cpu_seconds_total" + sel("mode=\"idle\"") +
                "[5m])) / sum by (instance) (rate(gpufleet_node_cpu_seconds_total" + gpu + "[5m]))",
            "{{instance}}"}});
  b.Panel("timeseries", "Memory available", "bytes",
          {{"gpufleet_node_memory_available_bytes" + gpu, "{{instance}}"}});
  b.Panel("timeseries", "Disk IO latency", "s",
          {{"(rate(gpufleet_node_disk_read_time_seconds_total" + gpu +
                "[5m]) + rate(gpufleet_node_disk_write_time_seconds_total" + gpu +
                "[5m])) / (rate(gpufleet_node_disk_reads_completed_total" + gpu +
                "[5m]) + rate(gpufleet_node_disk_writes_completed_total" + gpu + "[5m]))",
            "{{instance}} {{device}}"}},
          12, "Mean time per IO; the storage-latency check fails above 10 ms");
  b.Panel("timeseries", "Disk throughput", "Bps",
          {{"rate(gpufleet_node_disk_written_bytes_total" + gpu + "[5m])",
            "write {{instance}} {{device}}"},
           {"rate(gpufleet_node_disk_read_bytes_total" + gpu + "[5m])",
            "read {{instance}} {{device}}"}});
  b.Row("Validation (gpufleet bench)");
  b.Panel("timeseries", "All-reduce bus bandwidth, measured and planned", "Bps",
          {{"gpufleet_bench_busbw_bytes_per_second" + sel("op=\"all_reduce\""),
            "{{instance}} {{bytes}} B"},
           {"gpufleet_bench_expected_busbw_bytes_per_second" + sel("op=\"all_reduce\""),
            "plan {{bytes}} B"}});
  b.Panel("timeseries", "Storage throughput", "Bps",
          {{"gpufleet_bench_throughput_bytes_per_second" + gpu, "{{instance}} {{op}}"}});
  b.Row("Agent");
  b.Panel("timeseries", "Collector duration", "s",
          {{"gpufleet_scrape_collector_duration_seconds" + gpu, "{{instance}} {{collector}}"}});
  b.Panel("timeseries", "Data age and NVML errors", "none",
          {{"time() - gpufleet_last_collection_timestamp_seconds" + gpu, "age s {{instance}}"},
           {"rate(gpufleet_nvml_errors_total" + gpu + "[5m]) > 0",
            "{{instance}} {{function}} {{code}}"}});

  ordered_json d;
  d["title"] = fmt::format("gpufleet: {}", spec.cluster.name);
  d["uid"] = "gpufleet-nodes";
  d["tags"] = {"gpufleet", "gpu"};
  d["schemaVersion"] = 39;
  d["version"] = 1;
  d["editable"] = true;
  d["time"] = {{"from", "now-6h"}, {"to", "now"}};
  d["refresh"] = "30s";
  d["templating"] = {{"list",
                      {{{"name", "datasource"},
                        {"type", "datasource"},
                        {"query", "prometheus"},
                        {"label", "Prometheus"}},
                       {{"name", "instance"},
                        {"type", "query"},
                        {"label", "Node"},
                        {"datasource", {{"type", "prometheus"}, {"uid", "${datasource}"}}},
                        {"query", "label_values(gpufleet_build_info, instance)"},
                        {"definition", "label_values(gpufleet_build_info, instance)"},
                        {"refresh", 2},
                        {"multi", true},
                        {"includeAll", true},
                        {"allValue", ".*"},
                        {"current", {{"text", "All"}, {"value", "$__all"}}}}}}};
  d["panels"] = b.panels();
  return std::vector<GeneratedFile>{{"gpufleet-dashboard.json", DumpJson(d)}};
}

}  // namespace gpufleet::emit
