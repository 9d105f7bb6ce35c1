#pragma once
// The matrix `nvidia-smi topo -m` prints: GPUs and NICs against each other
// with the path legend (X, NV#, PIX, PXB, PHB, NODE, SYS), plus each GPU's
// CPU and NUMA affinity. Parsed from real output in all its driver-version
// variants (TABs or spaces, CRLF, ANSI underline, mlx5_N or NICn columns with
// a NIC legend, a GPU NUMA ID column), and rendered from our own discovery.
// A damaged paste is rejected with the reason, never guessed at. Pure.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "topo/node_topology.h"

namespace gpufleet::topo {

struct SmiMatrix {
  std::vector<std::string> devices;             // header order: GPU0.., then NIC0.. or mlx5_N
  std::vector<std::vector<std::string>> cells;  // [row][column], rows in `devices` order
  // Per GPU (index = GPU number): "0-31,64-95", "0", "N/A".
  std::vector<std::string> cpu_affinity;
  std::vector<std::string> numa_affinity;
  std::vector<std::string> gpu_numa_id;
  std::map<std::string, std::string> nic_legend;  // NIC0 -> mlx5_0
  int gpus = 0;

  // The NIC's RDMA name: the legend's, or the column name itself (old drivers).
  std::string NicName(const std::string& column) const;
  const std::string& Cell(const std::string& row, const std::string& column) const;
};

// Parses `nvidia-smi topo -m` output. kInvalidArgument ("file: ...") names what
// is damaged: a row missing from the header, a cell that is not a path code, a
// truncated CPU list, an asymmetric matrix.
Result<SmiMatrix> ParseSmiMatrix(std::string_view text, const std::string& file);

// Our own matrix for a discovered node. With `pcie_only`, GPU pairs show their
// PCIe path instead of NV# (like `nvidia-smi topo -mp`).
SmiMatrix MatrixOf(const NodeTopology& t, bool pcie_only = false);

// TAB-separated like nvidia-smi, with the legend (and a NIC legend).
std::string RenderSmiMatrix(const SmiMatrix& m);

// One cell where two matrices disagree.
struct MatrixDifference {
  std::string row;
  std::string column;
  std::string ours;    // "" when the device is missing on our side
  std::string theirs;  // "" when it is missing on theirs
};
// Compares `ours` with `theirs` (e.g. a saved `nvidia-smi topo -m`), matching GPUs by
// number and NICs by RDMA name through each side's legend, plus each GPU's NUMA affinity.
std::vector<MatrixDifference> CompareMatrices(const SmiMatrix& ours, const SmiMatrix& theirs);

}  // namespace gpufleet::topo
