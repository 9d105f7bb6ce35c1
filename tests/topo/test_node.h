#pragma once
// A small hand-built node for topology tests: 2 NUMA nodes, each with one PCIe
// switch holding a GPU and a NIC, plus a far NIC on a root port of NUMA 1.
//
//   NUMA 0 (CPUs 0-3): host bridge 0 - root 0000:00:01.0 - switch up 0000:01:00.0
//                        - down 0000:02:00.0 - GPU 0000:03:00.0
//                        - down 0000:02:01.0 - NIC mlx5_0 0000:04:00.0
//   NUMA 1 (CPUs 4-7): host bridge 1 - root 0000:80:01.0 - switch up 0000:81:00.0
//                        - down 0000:82:00.0 - GPU 0000:83:00.0
//                        - down 0000:82:01.0 - NIC mlx5_1 0000:84:00.0
//                      host bridge 2 - root 0000:90:01.0 - NIC mlx5_2 0000:91:00.0

#include "topo/node_topology.h"

namespace gpufleet::topo::testing {

inline NodeTopology SmallNode() {
  NodeTopology t;
  t.source = "test";
  t.cpu_vendor = "GenuineIntel";
  t.cpu_family = 6;
  t.cpu_model_number = 143;
  t.arch = "x86_64";
  t.numa = {{0, "0-3", {0, 1, 2, 3}, 0}, {1, "4-7", {4, 5, 6, 7}, 0}};
  t.host_bridge_numa = {0, 1, 1};
  auto add = [&](const char* busid, uint32_t cls, DeviceKind kind, int parent, int hb) {
    PciDevice d;
    d.busid = busid;
    d.class_code = cls;
    d.kind = kind;
    d.parent = parent;
    d.host_bridge = hb;
    d.numa = t.host_bridge_numa[static_cast<size_t>(hb)];
    d.vendor = kind == DeviceKind::kGpu ? 0x10de : kind == DeviceKind::kNic ? 0x15b3 : 0x8086;
    d.max = {16, 16};
    d.current = {16, 16};
    t.pci.push_back(d);
    return static_cast<int>(t.pci.size()) - 1;
  };
  for (int side = 0; side < 2; ++side) {
    const char* ids[2][6] = {{"0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0",
                              "0000:02:01.0", "0000:04:00.0"},
                             {"0000:80:01.0", "0000:81:00.0", "0000:82:00.0", "0000:83:00.0",
                              "0000:82:01.0", "0000:84:00.0"}};
    const int root = add(ids[side][0], 0x060400, DeviceKind::kBridge, -1, side);
    const int up = add(ids[side][1], 0x060400, DeviceKind::kBridge, root, side);
    const int down0 = add(ids[side][2], 0x060400, DeviceKind::kBridge, up, side);
    const int gpu = add(ids[side][3], 0x030200, DeviceKind::kGpu, down0, side);
    const int down1 = add(ids[side][4], 0x060400, DeviceKind::kBridge, up, side);
    const int nic = add(ids[side][5], 0x020700, DeviceKind::kNic, down1, side);
    Gpu g;
    g.pci = gpu;
    g.index = side;
    g.model = "NVIDIA A100-SXM4-80GB";
    g.sm = 80;
    g.nvlinks = {{NvLink::To::kNvSwitch, "", 12}};
    t.gpus.push_back(g);
    t.nics.push_back({nic,
                      side == 0 ? "mlx5_0" : "mlx5_1",
                      side == 0 ? "ib0" : "ib1",
                      {{1, "ACTIVE", "LinkUp", 25e9, "InfiniBand"}}});
  }
  const int root2 = add("0000:90:01.0", 0x060400, DeviceKind::kBridge, -1, 2);
  const int far = add("0000:91:00.0", 0x020700, DeviceKind::kNic, root2, 2);
  t.nics.push_back({far, "mlx5_2", "ib2", {{1, "ACTIVE", "LinkUp", 25e9, "InfiniBand"}}});
  return t;
}

}  // namespace gpufleet::topo::testing
