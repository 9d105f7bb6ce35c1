// grafana: a dashboard over the gpufleet agent's metrics that stays readable on a 1,000-node
// fleet: variables for the data source, cluster, node and GPU; a fleet row of counts, the
// unhealthy list first, a heat map of GPU utilisation across every GPU and top/bottom-k lines
// instead of one line per GPU; per-node detail in collapsed rows, reached from the unhealthy
// table's links; XIDs and failing checks as annotations. Node panels read node_exporter's names,
// or the agent's node collector's where it is on. Import it in Grafana (Dashboards > New >
// Import). Every gpufleet metric name is one the agent exports (checked by the tests), and the
// JSON is checked against Grafana's dashboard model (tests/emit).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/json.h"
#include "emit/emit.h"

namespace gpufleet::emit {

namespace {

using nlohmann::ordered_json;

const ordered_json kDatasource = {{"type", "prometheus"}, {"uid", "${datasource}"}};

struct Query {
  std::string expr;
  std::string legend;
  bool instant = false;  // one value per series now (tables), not a range
};

struct PanelSpec {
  PanelSpec(std::string type_, std::string title_, std::string unit_, std::vector<Query> queries_,
            int width_ = 12, int height_ = 8, std::string help_ = "",
            ordered_json options_ = ordered_json::object(),
            ordered_json field_defaults_ = ordered_json::object(),
            ordered_json transformations_ = ordered_json::array())
      : type(std::move(type_)),
        title(std::move(title_)),
        unit(std::move(unit_)),
        queries(std::move(queries_)),
        width(width_),
        height(height_),
        help(std::move(help_)),
        options(std::move(options_)),
        field_defaults(std::move(field_defaults_)),
        transformations(std::move(transformations_)) {}
  std::string type;  // timeseries, stat, table, heatmap
  std::string title;
  std::string unit;
  std::vector<Query> queries;
  int width, height;
  std::string help;
  ordered_json options, field_defaults, transformations;
};

class Board {
 public:
  // A row; `collapsed` rows hold their panels inside them (Grafana's model) until opened.
  void Row(const std::string& title, bool collapsed = false) {
    CloseRow();
    if (x_ != 0) NextLine();
    row_ = {{"type", "row"},
            {"title", title},
            {"id", ++id_},
            {"collapsed", collapsed},
            {"gridPos", {{"h", 1}, {"w", 24}, {"x", 0}, {"y", y_}}},
            {"panels", ordered_json::array()}};
    y_ += 1;
    if (!collapsed) {
      panels_.push_back(row_);
      row_ = nullptr;
    }
  }
  void Add(const PanelSpec& s) {
    if (x_ + s.width > 24) NextLine();
    ordered_json targets = ordered_json::array();
    char ref = 'A';
    for (const auto& q : s.queries) {
      ordered_json t = {{"datasource", kDatasource},
                        {"expr", q.expr},
                        {"legendFormat", q.legend},
                        {"refId", std::string(1, ref++)}};
      if (q.instant) {
        t["instant"] = true;
        t["range"] = false;
        t["format"] = "table";
      }
      targets.push_back(std::move(t));
    }
    ordered_json defaults = s.field_defaults;
    defaults["unit"] = s.unit;
    ordered_json p = {
        {"type", s.type},
        {"title", s.title},
        {"id", ++id_},
        {"datasource", kDatasource},
        {"gridPos", {{"h", s.height}, {"w", s.width}, {"x", x_}, {"y", y_}}},
        {"fieldConfig", {{"defaults", defaults}, {"overrides", ordered_json::array()}}},
        {"options", s.options},
        {"targets", targets}};
    if (!s.transformations.empty()) p["transformations"] = s.transformations;
    if (!s.help.empty()) p["description"] = s.help;
    if (row_.is_null()) {
      panels_.push_back(std::move(p));
    } else {
      row_["panels"].push_back(std::move(p));
    }
    x_ += s.width;
    line_height_ = std::max(line_height_, s.height);
  }
  ordered_json Panels() {
    CloseRow();
    return panels_;
  }

 private:
  void NextLine() {
    x_ = 0;
    y_ += line_height_;
    line_height_ = 0;
  }
  void CloseRow() {
    if (!row_.is_null()) {
      panels_.push_back(row_);
      row_ = nullptr;
    }
  }
  ordered_json panels_ = ordered_json::array();
  ordered_json row_ = nullptr;  // the collapsed row being filled
  int x_ = 0, y_ = 0, id_ = 0, line_height_ = 0;
};

ordered_json Variable(const std::string& name, const std::string& label, const std::string& query) {
  return {{"name", name},
          {"label", label},
          {"type", "query"},
          {"datasource", kDatasource},
          {"query", {{"query", query}, {"refId", "PrometheusVariableQueryEditor-VariableQuery"}}},
          {"definition", query},
          {"refresh", 2},
          {"sort", 3},
          {"multi", true},
          {"includeAll", true},
          {"allValue", ".*"},
          {"current", {{"text", "All"}, {"value", "$__all"}}}};
}

ordered_json Annotation(const std::string& name, const std::string& expr, const std::string& title,
                        const std::string& text, const std::string& color) {
  return {{"name", name},
          {"datasource", kDatasource},
          {"enable", true},
          {"iconColor", color},
          {"expr", expr},
          {"step", "60s"},
          {"titleFormat", title},
          {"textFormat", text},
          {"useValueForTime", false}};
}

}  // namespace

Result<std::vector<GeneratedFile>> EmitGrafana(const model::Spec& spec, const EmitOptions&) {
  // Every query is scoped by the variables; `gpu` only where the series has one.
  const std::string fleet = "cluster=~\"$cluster\",instance=~\"$instance\"";
  const std::string f = "{" + fleet + "}";
  const std::string g = "{" + fleet + ",gpu=~\"$gpu\"}";
  // node_exporter's series: by host (its own port, and no cluster label).
  const std::string h = "{instance=~\"($host)(:[0-9]+)?\"}";
  const std::string h_idle = "{instance=~\"($host)(:[0-9]+)?\",mode=\"idle\"}";
  auto with = [&](const std::string& extra) { return "{" + fleet + "," + extra + "}"; };
  const ordered_json stat_options = {
      {"reduceOptions", {{"calcs", {"lastNotNull"}}, {"fields", ""}, {"values", false}}},
      {"colorMode", "background"},
      {"graphMode", "none"},
      {"textMode", "value"}};
  auto thresholds = [](double red_at) {
    ordered_json steps = ordered_json::array();
    steps.push_back({{"color", "green"}, {"value", nullptr}});
    steps.push_back({{"color", "red"}, {"value", red_at}});
    ordered_json t;
    t["thresholds"] = {{"mode", "absolute"}, {"steps", steps}};
    return t;
  };
  const std::string drill =
      "/d/gpufleet-nodes/gpufleet?var-datasource=${datasource}&"
      "var-cluster=${cluster}&var-instance=${__data.fields.instance}";

  Board b;
  b.Row("Fleet");
  b.Add({"stat",
         "Nodes reporting",
         "none",
         {{"count(gpufleet_build_info" + f + ")", "nodes"}},
         4,
         4,
         "Agents Prometheus scraped in the last five minutes",
         stat_options});
  b.Add({"stat",
         "Nodes failing a check",
         "none",
         {{"count(gpufleet_node_healthy" + f + " == 0) or vector(0)", "failing"}},
         4,
         4,
         "Nodes where a gpufleet check fails: what check --slurm drains",
         stat_options,
         thresholds(1)});
  b.Add({"stat",
         "GPUs not answering",
         "none",
         {{"count(gpufleet_gpu_up" + f + " == 0) or vector(0)", "down"}},
         4,
         4,
         "GPUs NVML did not read within the deadline, or lost",
         stat_options,
         thresholds(1)});
  b.Add({"stat",
         "GPUs",
         "none",
         {{"count(gpufleet_gpu_up" + f + " == 1)", "GPUs"}},
         4,
         4,
         fmt::format("GPUs answering; the spec has {} per node", spec.cluster.nodes.gpus_per_node),
         stat_options});
  b.Add({"stat",
         "Mean GPU utilisation",
         "percentunit",
         {{"avg(gpufleet_gpu_utilization_ratio" + f + ")", "mean"}},
         4,
         4,
         "",
         stat_options});
  b.Add({"stat",
         "GPU power",
         "watt",
         {{"sum(gpufleet_gpu_power_watts" + f + ")", "power"}},
         4,
         4,
         fmt::format("All GPU boards; rated {:g} W each for the {}", spec.cluster.nodes.gpu.tdp_w,
                     spec.cluster.nodes.gpu.name),
         stat_options});
  b.Add({"table",
         "Unhealthy nodes first",
         "none",
         {{"sort_desc(gpufleet_check_status" + f + " > 0)", "", true}},
         12,
         9,
         "Every failing (2), cannot-evaluate (3) and warning (1) check, worst first; click a node "
         "to open its detail rows. Details on the agent's /checks",
         {{"sortBy", {{{"displayName", "Value"}, {"desc", true}}}}, {"showHeader", true}},
         {{"links", {{{"title", "Open this node"}, {"url", drill}}}}},
         {{{"id", "organize"},
           {"options",
            {{"excludeByName", {{"Time", true}, {"__name__", true}, {"job", true}}},
             {"renameByName", {{"Value", "status (1 warn, 2 fail, 3 unknown)"}}}}}}}});
  b.Add({"table",
         "XIDs in the last 24 h",
         "s",
         {{"sort(time() - gpufleet_gpu_xid_last_timestamp_seconds" + f + " < 86400)", "", true}},
         12,
         9,
         "Seconds since the last XID of each code on each GPU, newest first; the action "
         "comes from the XID table",
         {{"showHeader", true}},
         {{"links", {{{"title", "Open this node"}, {"url", drill}}}}},
         {{{"id", "organize"},
           {"options",
            {{"excludeByName", {{"Time", true}, {"__name__", true}, {"job", true}}},
             {"renameByName", {{"Value", "seconds ago"}}}}}}}});
  b.Add({"heatmap",
         "GPU utilisation across the fleet",
         "percentunit",
         {{"gpufleet_gpu_utilization_ratio" + f, ""}},
         12,
         9,
         "How many GPUs sit at each utilisation, over time: one band per 5 %, however many GPUs",
         {{"calculate", true},
          {"calculation",
           {{"xBuckets", {{"mode", "size"}, {"value", "1m"}}},
            {"yBuckets", {{"mode", "size"}, {"value", "0.05"}}}}},
          {"color", {{"mode", "scheme"}, {"scheme", "Viridis"}, {"steps", 64}}},
          {"yAxis", {{"unit", "percentunit"}}},
          {"cellGap", 1}}});
  b.Add({"timeseries",
         "Least busy GPUs (bottom 10)",
         "percentunit",
         {{"bottomk(10, gpufleet_gpu_utilization_ratio" + f + ")", "{{instance}} GPU {{gpu}}"}},
         12,
         9,
         "The ten lowest-utilised GPUs now: a straggler or an idle allocation",
         {{"legend", {{"displayMode", "table"}, {"placement", "right"}, {"calcs", {"last"}}}}}});
  b.Add({"timeseries",
         "Hottest GPUs (top 10)",
         "celsius",
         {{"topk(10, gpufleet_gpu_temperature_celsius" + f + ")", "{{instance}} GPU {{gpu}}"}},
         12,
         8,
         "",
         {{"legend", {{"displayMode", "table"}, {"placement", "right"}, {"calcs", {"last"}}}}}});
  b.Add({"timeseries",
         "Node power (top 20)",
         "watt",
         {{"topk(20, sum by (instance) (gpufleet_gpu_power_watts" + f + "))", "{{instance}}"}},
         12,
         8,
         "GPU boards per node",
         {{"legend", {{"displayMode", "table"}, {"placement", "right"}, {"calcs", {"last"}}}}}});
  b.Add({"timeseries",
         "XIDs per hour across the fleet",
         "none",
         {{"sum by (xid, action) (increase(gpufleet_gpu_xid_errors_total" + f + "[1h])) > 0",
           "XID {{xid}} ({{action}})"}},
         24,
         7,
         "One line per XID code, summed over every GPU"});

  b.Row("Node detail: GPU load (choose a node)", true);
  b.Add({"timeseries",
         "Utilisation",
         "percentunit",
         {{"gpufleet_gpu_utilization_ratio" + g, "{{instance}} GPU {{gpu}}"}}});
  b.Add({"timeseries",
         "Tensor and DRAM activity (GPM)",
         "percentunit",
         {{"gpufleet_gpu_tensor_active_ratio" + g, "tensor {{instance}} GPU {{gpu}}"},
          {"gpufleet_gpu_dram_active_ratio" + g, "DRAM {{instance}} GPU {{gpu}}"}},
         12,
         8,
         "Hopper and later (NVML GPM)"});
  b.Add({"timeseries",
         "Memory used",
         "bytes",
         {{"gpufleet_gpu_memory_used_bytes" + g, "{{instance}} GPU {{gpu}}"}}});
  b.Add({"timeseries",
         fmt::format("Power (rated {:g} W for the {})", spec.cluster.nodes.gpu.tdp_w,
                     spec.cluster.nodes.gpu.name),
         "watt",
         {{"gpufleet_gpu_power_watts" + g, "{{instance}} GPU {{gpu}}"},
          {"gpufleet_gpu_power_limit_watts" + g, "limit {{instance}} GPU {{gpu}}"}}});
  b.Add({"timeseries",
         "Temperature",
         "celsius",
         {{"gpufleet_gpu_temperature_celsius" + g, "{{instance}} GPU {{gpu}}"},
          {"gpufleet_gpu_memory_temperature_celsius" + g, "HBM {{instance}} GPU {{gpu}}"}}});
  b.Add({"timeseries",
         "SM clock and clock-event reasons",
         "hertz",
         {{"gpufleet_gpu_sm_clock_hertz" + g, "{{instance}} GPU {{gpu}}"}},
         12,
         8,
         "Throttle reasons: gpufleet_gpu_clock_event_active"});

  b.Row("Node detail: GPU errors", true);
  b.Add({"timeseries",
         "ECC errors (since driver load)",
         "none",
         {{"gpufleet_gpu_ecc_errors_total" + g, "{{instance}} GPU {{gpu}} {{error}}"}}});
  b.Add({"timeseries",
         "Row remapping",
         "none",
         {{"gpufleet_gpu_row_remap_pending" + g, "pending {{instance}} GPU {{gpu}}"},
          {"gpufleet_gpu_row_remap_failed" + g, "failed {{instance}} GPU {{gpu}}"}}});
  b.Add(
      {"timeseries",
       "NVLinks up per GPU",
       "none",
       {{"sum by (instance, gpu) (gpufleet_gpu_nvlink_up" + g + ")", "{{instance}} GPU {{gpu}}"}}});
  b.Add({"timeseries",
         "NVLink errors and PCIe replays",
         "none",
         {{"rate(gpufleet_gpu_nvlink_errors_total" + g + "[5m]) > 0",
           "{{instance}} GPU {{gpu}} {{type}}"},
          {"rate(gpufleet_gpu_pcie_replays_total" + g + "[5m]) > 0",
           "PCIe replays {{instance}} GPU {{gpu}}"}}});
  b.Add({"timeseries",
         "Driver recovery action",
         "none",
         {{"gpufleet_gpu_recovery_action" + g, "{{instance}} GPU {{gpu}}"}},
         12,
         8,
         "0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset, 5 recover IMEX "
         "domain"});
  b.Add({"timeseries",
         "NVLink fabric (rack-scale NVLink)",
         "none",
         {{"gpufleet_gpu_fabric_healthy" + g, "healthy {{instance}} GPU {{gpu}}"},
          {"gpufleet_gpu_fabric_state" + g, "state {{instance}} GPU {{gpu}}"}},
         12,
         8,
         "GB200/GB300 NVL72: state 3 = registered; absent elsewhere"});

  b.Row("Node detail: network, storage, host", true);
  b.Add({"timeseries",
         "InfiniBand traffic",
         "Bps",
         {{"rate(gpufleet_infiniband_port_transmit_bytes_total" + f + "[5m])",
           "tx {{instance}} {{hca}}"},
          {"rate(gpufleet_infiniband_port_receive_bytes_total" + f + "[5m])",
           "rx {{instance}} {{hca}}"}}});
  b.Add({"timeseries",
         "InfiniBand ports and errors",
         "none",
         {{"gpufleet_infiniband_port_active" + f + " == 0", "down {{instance}} {{hca}}/{{port}}"},
          {"increase(gpufleet_infiniband_port_errors_total" + f + "[1h]) > 0",
           "{{instance}} {{hca}} {{counter}}"}}});
  // Host panels: node_exporter's series, or the agent's node collector's where it is on.
  b.Add({"timeseries",
         "CPU busy",
         "percentunit",
         {{"1 - avg by (instance) (rate(node_cpu_seconds_total" + h_idle +
               "[5m])) or 1 - sum by (instance) (rate(gpufleet_node_cpu_seconds_total" +
               with("mode=\"idle\"") +
               "[5m])) / sum by (instance) (rate(gpufleet_node_cpu_seconds_total" + f + "[5m]))",
           "{{instance}}"}},
         12,
         8,
         "node_exporter, or gpufleet agent --collector.node"});
  b.Add({"timeseries",
         "Memory available",
         "bytes",
         {{"node_memory_MemAvailable_bytes" + h + " or gpufleet_node_memory_available_bytes" + f,
           "{{instance}}"}}});
  b.Add({"timeseries",
         "Disk IO latency",
         "s",
         {{"(rate(node_disk_read_time_seconds_total" + h +
               "[5m]) + rate(node_disk_write_time_seconds_total" + h +
               "[5m])) / (rate(node_disk_reads_completed_total" + h +
               "[5m]) + rate(node_disk_writes_completed_total" + h +
               "[5m])) or (rate(gpufleet_node_disk_read_time_seconds_total" + f +
               "[5m]) + rate(gpufleet_node_disk_write_time_seconds_total" + f +
               "[5m])) / (rate(gpufleet_node_disk_reads_completed_total" + f +
               "[5m]) + rate(gpufleet_node_disk_writes_completed_total" + f + "[5m]))",
           "{{instance}} {{device}}"}},
         12,
         8,
         "Mean time per IO; the storage-latency check fails above 10 ms"});
  b.Add({"timeseries",
         "Bus bandwidth, measured and planned (gpufleet bench)",
         "Bps",
         {{"gpufleet_bench_busbw_bytes_per_second" + with("op=\"all_reduce\""),
           "{{instance}} {{bytes}} B"},
          {"gpufleet_bench_expected_busbw_bytes_per_second" + with("op=\"all_reduce\""),
           "plan {{bytes}} B"}}});

  b.Row("Agents", true);
  b.Add({"timeseries",
         "Collector duration",
         "s",
         {{"topk(10, gpufleet_scrape_collector_duration_seconds" + f + ")",
           "{{instance}} {{collector}}"}}});
  b.Add({"timeseries",
         "Data age and NVML errors",
         "none",
         {{"topk(10, time() - gpufleet_last_collection_timestamp_seconds" + f + ")",
           "age s {{instance}}"},
          {"rate(gpufleet_nvml_errors_total" + f + "[5m]) > 0",
           "{{instance}} {{function}} {{code}}"}}});

  ordered_json d;
  d["title"] = fmt::format("gpufleet: {}", spec.cluster.name);
  d["uid"] = "gpufleet-nodes";
  d["description"] = "Generated by gpufleet emit grafana; docs/emit.md";
  d["tags"] = {"gpufleet", "gpu"};
  d["schemaVersion"] = 39;
  d["version"] = 1;
  d["editable"] = true;
  d["graphTooltip"] = 1;
  d["time"] = {{"from", "now-6h"}, {"to", "now"}};
  d["refresh"] = "1m";
  d["annotations"] = {
      {"list",
       {{{"builtIn", 1},
         {"datasource", {{"type", "grafana"}, {"uid", "-- Grafana --"}}},
         {"enable", true},
         {"hide", true},
         {"iconColor", "rgba(0, 211, 255, 1)"},
         {"name", "Annotations & Alerts"},
         {"type", "dashboard"}},
        // A new XID, even the same code again (the counter rises).
        Annotation("XIDs",
                   "sum by (instance, gpu, xid) (increase(gpufleet_gpu_xid_errors_total" + g +
                       "[2m])) > 0",
                   "XID {{xid}}", "{{instance}} GPU {{gpu}}", "red"),
        Annotation("Failing checks (drain)",
                   "gpufleet_node_healthy" + f + " == 0 and changes(gpufleet_node_healthy" + f +
                       "[2m]) > 0",
                   "check failed: drain", "{{instance}}", "orange")}}};
  d["templating"] = {
      {"list",
       {{{"name", "datasource"},
         {"label", "Prometheus"},
         {"type", "datasource"},
         {"query", "prometheus"},
         {"current", ordered_json::object()}},
        Variable("cluster", "Cluster", "label_values(gpufleet_build_info, cluster)"),
        Variable("instance", "Node",
                 "label_values(gpufleet_build_info{cluster=~\"$cluster\"}, instance)"),
        // node_exporter's targets are host:9100, not the agent's host:port: the `node` label
        // prometheus-scrape sets (the target's host) selects them.
        Variable("host", "Host (node_exporter)",
                 "label_values(gpufleet_build_info{cluster=~\"$cluster\",instance=~\"$instance\"}, "
                 "node)"),
        Variable(
            "gpu", "GPU",
            "label_values(gpufleet_gpu_up{cluster=~\"$cluster\",instance=~\"$instance\"}, gpu)")}}};
  d["panels"] = b.Panels();
  return std::vector<GeneratedFile>{{"gpufleet-dashboard.json", DumpJson(d)}};
}

}  // namespace gpufleet::emit
