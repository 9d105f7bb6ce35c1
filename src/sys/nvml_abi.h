#pragma once
// The NVML structures gpufleet passes across the library boundary, laid out as nvml.h (NVML API
// 13) declares them: one definition for the dlopen wrapper (nvml.cc) and for the fake
// libnvidia-ml.so.1 the tests load (tests/fakes/fake_nvml.cc), so the two cannot drift apart.
// Plain data, no behaviour.

namespace gpufleet::sys::abi {

using nvmlReturn_t = int;
using ull = unsigned long long;  // NOLINT(google-runtime-int): NVML's own type

// nvmlPciInfo_t as read by nvmlDeviceGetPciInfo_v3.
struct PciInfo {
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];
};

// nvmlMemory_t (the unversioned layout of nvmlDeviceGetMemoryInfo).
struct MemoryInfo {
  ull total, free, used;
};

// nvmlUtilization_t.
struct Utilization {
  unsigned gpu, memory;
};

// nvmlValue_t: the 8-byte union of nvmlSample_t and nvmlFieldValue_t.
union Value {
  double d;
  unsigned ui;
  unsigned long ul;  // NOLINT(google-runtime-int)
  ull ull_value;
  long long sll;  // NOLINT(google-runtime-int)
  int si;
};

// nvmlSample_t: a timestamp (us) and a value.
struct SampleValue {
  ull timestamp;
  Value value;
};

// nvmlFieldValue_t.
struct FieldValue {
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;       // NOLINT(google-runtime-int)
  long long latency_usec;    // NOLINT(google-runtime-int)
  int value_type;            // nvmlValueType_t
  nvmlReturn_t nvml_return;  // per field
  Value value;
};
static_assert(sizeof(FieldValue) == 40);

// nvmlProcessInfo_t as read by nvmlDeviceGetComputeRunningProcesses_v3.
struct ProcessInfo {
  unsigned pid;
  ull used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

// nvmlEventData_t.
struct EventData {
  void* device;
  ull event_type;
  ull event_data;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

// nvmlGpuFabricInfo_v3_t; v2 is the same without healthSummary (36 bytes).
struct FabricInfo {
  unsigned version;
  unsigned char cluster_uuid[16];
  nvmlReturn_t status;
  unsigned clique_id;
  unsigned char state;  // nvmlGpuFabricState_t
  unsigned health_mask;
  unsigned char health_summary;
};
static_assert(sizeof(FabricInfo) == 40);
constexpr unsigned kFabricInfoV3 = 40u | (3u << 24);  // NVML_STRUCT_VERSION(GpuFabricInfo, 3)
constexpr unsigned kFabricInfoV2 = 36u | (2u << 24);
constexpr nvmlReturn_t kArgumentVersionMismatch = 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH

// GPU performance monitoring ("GPM"): two samples of a GPU's counters and the metrics over the
// interval between them. nvmlGpmSample_t is an opaque handle.
using GpmSampleHandle = void*;
struct GpmMetric {
  unsigned metric_id;
  nvmlReturn_t nvml_return;
  double value;
  struct {
    char* short_name;
    char* long_name;
    char* unit;
  } info;
};
// nvmlGpmMetricsGet_t with room for any NVML_GPM_METRIC_MAX so far (98 in NVML 12.0, more
// later): NVML reads and writes only `num_metrics` entries.
struct GpmMetricsGet {
  unsigned version;
  unsigned num_metrics;
  GpmSampleHandle sample1, sample2;
  GpmMetric metrics[256];
};
struct GpmSupport {
  unsigned version;
  unsigned is_supported;
};
constexpr unsigned kGpmVersion = 1;  // NVML_GPM_METRICS_GET_VERSION, NVML_GPM_SUPPORT_VERSION

}  // namespace gpufleet::sys::abi
