#pragma once
// NodeTopology: one node's CPUs and NUMA nodes, its PCI tree (bridges and
// switches with link speed and width), GPUs (bus id, model, UUID, NVLinks),
// NICs (RDMA device, ports, rate, link layer, netdev) and NVMe drives, plus
// the path type between any two devices in nvidia-smi's legend and in NCCL's.
// Built by discovery (discover.h) from a live node, an hwloc XML or a
// captured sysfs tree. A value type; thread-compatible.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpufleet::topo {

enum class DeviceKind { kBridge, kGpu, kNic, kNvSwitch, kNvme, kOther };
std::string_view DeviceKindName(DeviceKind k);

struct PciLink {
  double speed_gt_per_s = 0;  // per lane: 2.5, 5, 8, 16, 32, 64; 0 = unknown
  int width = 0;              // lanes; 0 = unknown
  double BytesPerS() const;   // usable bandwidth after line encoding
};

struct PciDevice {
  std::string busid;        // canonical "dddd:bb:dd.f"
  uint32_t class_code = 0;  // 0x030200
  uint16_t vendor = 0, device = 0, subsystem_vendor = 0, subsystem_device = 0;
  DeviceKind kind = DeviceKind::kOther;
  int parent = -1;       // index of the upstream bridge in NodeTopology::pci; -1 = host bridge
  int host_bridge = -1;  // index of the root complex (host bridge) it hangs from
  int numa = -1;         // NUMA node of the host bridge; -1 = unknown
  PciLink current;       // link as trained now
  PciLink max;           // what the device and slot support
  double link_bytes_per_s = 0;  // hwloc's pci_link_speed when per-field values are unknown
};

struct NvLink {
  enum class To { kGpu, kNvSwitch, kCpu };
  To to = To::kGpu;
  std::string target;  // remote bus id (GPU) or the NVSwitch's; "" when not visible
  int count = 0;
};

struct Gpu {
  int pci = -1;   // index into NodeTopology::pci
  int index = 0;  // NVML / nvidia-smi index (PCI bus order)
  std::string model;
  std::string uuid;
  int sm = 0;  // compute capability x 10, 0 = unknown
  std::vector<NvLink> nvlinks;
  // NVLink-C2C to its CPU (Grace): active links and MB/s per link per direction (NVML); NCCL
  // reads them as <c2c count bw> inside <gpu>. 0 = none or not known.
  int c2c_links = 0;
  double c2c_mbps = 0;
  int NvLinkCount() const;
  int NvSwitchLinkCount() const;  // links into NVSwitches only
};

struct NicPort {
  int number = 1;
  std::string state;       // ACTIVE, DOWN, INIT, ARMED
  std::string phys_state;  // LinkUp, Polling, Disabled
  double rate_bytes_per_s = 0;
  std::string link_layer;  // InfiniBand or Ethernet
};

struct Nic {
  int pci = -1;
  std::string name;    // RDMA device (mlx5_0) or netdev when not RDMA-capable
  std::string netdev;  // ib0, eth2, ...
  std::vector<NicPort> ports;
};

struct Nvme {
  int pci = -1;
  std::string name;  // nvme0n1
};

struct NumaNode {
  int id = 0;
  std::string cpulist;    // "0-31,64-95"
  std::vector<int> cpus;  // hardware threads (hwloc PUs)
  int cores = 0;          // physical cores (hwloc Core objects); 0 = not known
  double memory_bytes = 0;
};

// A GPU's NVLinks and its place in a multi-node NVLink domain (GB200/GB300 NVL72) as NVML
// reports them, keyed by NVML index whether or not the PCI tree holds the GPU.
struct GpuFabricView {
  int index = 0;
  std::string busid, model;
  int links = 0, links_active = 0;
  int nvlink_version = 0;  // nvmlNvlinkVersion_t: 4 = 3.0, 6 = 4.0, 7 = 5.0; 0 = not reported
  double link_mbps = 0;    // per link and direction; 0 = not reported
  int c2c_links = 0;       // NVLink-C2C to the CPU
  double c2c_mbps = 0;
  std::string state;  // not_supported, not_started, in_progress, completed
  int status = 0;     // nvmlReturn_t of the registration
  std::string cluster_uuid;
  unsigned clique = 0;
  uint32_t health_mask = 0;
  std::vector<std::string> problems;  // what the fabric's health mask reports
};

struct NodeTopology {
  std::string source;  // "live", "hwloc-xml FILE", "root DIR"
  std::string hostname;
  std::string arch;        // x86_64, aarch64
  std::string cpu_vendor;  // GenuineIntel, AuthenticAMD
  std::string cpu_model;
  int cpu_family = 0;
  int cpu_model_number = 0;
  int packages = 0;
  std::vector<NumaNode> numa;
  std::vector<PciDevice> pci;
  std::vector<int> host_bridge_numa;  // per host bridge index
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  std::vector<Nvme> nvme;
  std::vector<GpuFabricView> fabric;  // from NVML; empty without it
  std::vector<std::string> notes;     // what discovery could not see, in plain words

  int FindPci(std::string_view busid) const;  // index or -1
  const NumaNode* FindNuma(int id) const;
  // NUMA node of a PCI device (its host bridge's), or -1.
  int NumaOf(int pci_index) const;
};

// nvidia-smi `topo -m` legend and NCCL's path types (reference/topology.md §1.5, §3.1).
enum class SmiPath { kSelf, kNvLink, kPix, kPxb, kPhb, kNode, kSys };
enum class NcclPath { kLoc, kNvl, kPix, kPxb, kPhb, kSys };

struct Path {
  SmiPath smi = SmiPath::kSys;
  int nvlinks = 0;  // for kNvLink
  NcclPath nccl = NcclPath::kSys;
  std::string Label() const;  // "X", "NV12", "PIX", "PXB", "PHB", "NODE", "SYS"
};
std::string_view NcclPathName(NcclPath p);

// Path between two PCI devices (indices into `t.pci`).
Path PathBetween(const NodeTopology& t, int a, int b);

// Linux cpulist "0-3,8" <-> CPU numbers; and NCCL's affinity mask format
// (comma-separated 32-bit hex words, most significant first).
std::vector<int> ParseCpuList(std::string_view list);
std::string FormatCpuList(const std::vector<int>& cpus);
std::string CpuMask(const std::vector<int>& cpus, int min_words = 1);
std::optional<std::vector<int>> ParseCpuMask(std::string_view mask);

// One NVLink's bandwidth per direction in MB/s for an NVIDIA GPU's PCI device id, by the
// generation its architecture carries (NVIDIA's NVLink generation table: NVLink 1 on Pascal at
// 20 GB/s, NVLink 2 on Volta,
// 3 on Ampere, 4 on Hopper at 25 GB/s per link per direction; NVLink 5 on Blackwell at 50):
// GP100 0x15f0-0x15ff, GV100 0x1db0-0x1dff, GA100 0x20b0-0x20ff, GH100 0x2300-0x234f, GB100/GB200
// 0x2900-0x29ff (PCI ID database). nullopt for any other id.
std::optional<double> NvLinkMBpsPerLink(uint16_t device_id);

}  // namespace gpufleet::topo
