// dcgm-rules: Prometheus recording rules that publish the agent's series under the DCGM
// exporter's names and labels (NVIDIA/dcgm-exporter etc/default-counters.csv; units as DCGM
// reports them: MHz, MiB, percent, mJ; labels gpu, UUID, device, modelName, Hostname,
// pci_bus_id), so dashboards and alerts written for the DCGM exporter — NVIDIA's own Grafana
// dashboard among them — work on a gpufleet fleet unchanged. docs/metrics.md maps every name.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "emit/emit.h"

namespace gpufleet::emit {

namespace {

struct Recording {
  const char* dcgm;    // the DCGM exporter's series
  const char* expr;    // over the agent's series, in DCGM's unit
  const char* source;  // for the comment: where the value comes from
};

// What the agent exports that has a DCGM name. Not here: DCGM_FI_DEV_ENC_UTIL / DEC_UTIL (video
// engines, not read), DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL (NVLink throughput counters, not read),
// DCGM_FI_DEV_VGPU_LICENSE_STATUS, DCGM_FI_DEV_FB_RESERVED.
const Recording kRecordings[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gpufleet_gpu_sm_clock_hertz / 1e6", "SM clock, MHz"},
    {"DCGM_FI_DEV_MEM_CLOCK", "gpufleet_gpu_memory_clock_hertz / 1e6", "memory clock, MHz"},
    {"DCGM_FI_DEV_GPU_TEMP", "gpufleet_gpu_temperature_celsius", "GPU temperature, C"},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gpufleet_gpu_memory_temperature_celsius", "HBM temperature, C"},
    {"DCGM_FI_DEV_POWER_USAGE", "gpufleet_gpu_power_watts", "board power, W"},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "gpufleet_gpu_energy_joules_total * 1000",
     "energy since the driver loaded, mJ"},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "gpufleet_gpu_pcie_replays_total", "PCIe replays"},
    {"DCGM_FI_DEV_GPU_UTIL", "gpufleet_gpu_utilization_ratio * 100", "utilisation, %"},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gpufleet_gpu_memory_utilization_ratio * 100",
     "memory controller busy, %"},
    {"DCGM_FI_DEV_XID_ERRORS", "gpufleet_gpu_last_xid", "the last XID's code"},
    {"DCGM_FI_DEV_FB_USED", "gpufleet_gpu_memory_used_bytes / 1048576", "device memory used, MiB"},
    {"DCGM_FI_DEV_FB_FREE",
     "(gpufleet_gpu_memory_total_bytes - gpufleet_gpu_memory_used_bytes) / 1048576",
     "device memory free, MiB"},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
     "sum without (cause) (gpufleet_gpu_remapped_rows{cause=\"uncorrectable\"})",
     "rows remapped for uncorrectable errors"},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
     "sum without (cause) (gpufleet_gpu_remapped_rows{cause=\"correctable\"})",
     "rows remapped for correctable errors"},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gpufleet_gpu_row_remap_failed", "row remapping failed"},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gpufleet_gpu_graphics_engine_active_ratio",
     "graphics/compute engine active, ratio (NVML GPM)"},
    {"DCGM_FI_PROF_SM_ACTIVE", "gpufleet_gpu_sm_active_ratio", "SMs busy, ratio (NVML GPM)"},
    {"DCGM_FI_PROF_SM_OCCUPANCY", "gpufleet_gpu_sm_occupancy_ratio",
     "warps resident over the maximum, ratio (NVML GPM)"},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gpufleet_gpu_tensor_active_ratio",
     "tensor pipes active, ratio (NVML GPM)"},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "gpufleet_gpu_dram_active_ratio",
     "device memory interface active, ratio (NVML GPM)"},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", "gpufleet_gpu_pcie_tx_bytes_per_second",
     "PCIe bytes sent per second (NVML GPM)"},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", "gpufleet_gpu_pcie_rx_bytes_per_second",
     "PCIe bytes received per second (NVML GPM)"},
};

// The DCGM exporter's labels, added beside the agent's own: UUID and modelName copied from uuid
// and model, device "nvidiaN" from gpu, Hostname from the scrape target's host.
std::string WithDcgmLabels(const std::string& expr) {
  std::string e = "(" + expr + ")";
  e = fmt::format("label_replace({}, \"UUID\", \"$1\", \"uuid\", \"(.*)\")", e);
  e = fmt::format("label_replace({}, \"modelName\", \"$1\", \"model\", \"(.*)\")", e);
  e = fmt::format("label_replace({}, \"device\", \"nvidia$1\", \"gpu\", \"(.+)\")", e);
  e = fmt::format("label_replace({}, \"Hostname\", \"$1\", \"instance\", \"([^:]+)(:[0-9]+)?\")",
                  e);
  return e;
}

}  // namespace

std::vector<std::string> DcgmSeriesNames() {
  std::vector<std::string> out;
  for (const auto& r : kRecordings) out.emplace_back(r.dcgm);
  return out;
}

Result<std::vector<GeneratedFile>> EmitDcgmRules(const model::Spec& spec, const EmitOptions&) {
  YAML::Emitter y;
  y << YAML::BeginMap << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "gpufleet-dcgm-names";
  y << YAML::Key << "rules" << YAML::Value << YAML::BeginSeq;
  for (const auto& r : kRecordings) {
    y << YAML::BeginMap;
    y << YAML::Key << "record" << YAML::Value << r.dcgm;
    y << YAML::Key << "expr" << YAML::Value << WithDcgmLabels(r.expr);
    y << YAML::EndMap;
  }
  y << YAML::EndSeq << YAML::EndMap;
  y << YAML::EndSeq << YAML::EndMap;
  if (!y.good()) return Error{ErrorCode::kInternal, "YAML emitter: " + y.GetLastError()};
  std::string mapping;
  for (const auto& r : kRecordings) {
    mapping += fmt::format("#   {:<40} {}\n", r.dcgm, r.source);
  }
  return std::vector<GeneratedFile>{
      {"gpufleet-dcgm-rules.yml",
       fmt::format("# Recording rules publishing the gpufleet agent's series under the DCGM "
                   "exporter's names and labels\n# for {} (gpufleet emit dcgm-rules), so "
                   "dashboards made for the DCGM exporter work unchanged.\n# Load beside "
                   "gpufleet-rules.yml; check: promtool check rules gpufleet-dcgm-rules.yml\n"
                   "# Profiling series (DCGM_FI_PROF_*) need GPM: Hopper or later, and the "
                   "agent's second collection.\n{}{}\n",
                   CommentSafe(spec.cluster.name), mapping, y.c_str())}};
}

}  // namespace gpufleet::emit
