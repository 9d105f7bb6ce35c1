#include "plan/comm.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <utility>

#include "plan/fabric.h"
#include "plan/memory.h"
#include "plan/step_model.h"

namespace gpufleet::plan {

using model::FabricType;
using model::Strategy;

namespace {

// Achieved busbw / link peak, calibrated on published nccl-tests runs
// (../shared/reference/published-measurements.md; docs/plan.md "Calibration"):
//  NVLink: 8x A100 all-reduce 16 GiB 234.89 of 300 GB/s = 0.78; 8x H200 ring
//          (NVLS off) 367.61 of 450 = 0.82.
//  PCIe:   NVIDIA GTC24 S62129 slide: Gen4 24 of 32 GB/s, Gen5 48 of 64 = 0.75.
//  RDMA (InfiniBand and RoCE): same slide, 400 Gb RDMA 48 of 50 GB/s = 0.96;
//          DGX H100 8 x 400 Gb 380 (2024) and 370 (2025) of 400 = 0.95, 0.925 (a
//          tree, whose busbw is (n-1)/n of the node's rate: 0.98, 0.955 of it).
//  TCP sockets over Ethernet: same slide, 100 GbE 10 of 12.5 GB/s = 0.80.
constexpr double kNvlinkEfficiency = 0.80;
constexpr double kPcieEfficiency = 0.75;
constexpr double kRdmaEfficiency = 0.96;
constexpr double kTcpEfficiency = 0.80;
// Latency terms of the alpha-beta model, fitted to small-message times:
// 8x A100 all-reduce 32 KiB took 43.7 us (= 8 + 14 ring steps x 2.5 us);
// 2 x 8 H100 over InfiniBand ~123 us at 8 B (= 8 + 30 steps x 4 us).
constexpr double kLaunchS = 8e-6;
constexpr double kIntraAlphaS = 2.5e-6;
constexpr double kRdmaAlphaS = 4e-6;
// Kernel TCP socket transport: not calibrated on a published run (assumption).
constexpr double kTcpAlphaS = 25e-6;

// The depth NCCL's tuning model gives a tree of n nodes (src/graph/tuning.cc, log2i: the
// floor of log2 n).
int FloorLog2(int n) {
  int k = 0;
  while (n >>= 1) ++k;
  return k;
}

// NCCL's protocol model (docs/plan.md "Expected busbw"): NCCL's own latency
// tables (src/graph/tuning.cc: base latency per algorithm and protocol, and a
// hardware latency per step over NVLink and over the network), with the
// constants below fitted to the published sweeps from 64 KiB to 16 GiB:
// 8x A100 (nccl-tests), 8x H200 (NCCL 2.27.7, NVLS), 8x B200 and 4 x 8 B200
// over EFA (NCCL 2.27.7), and the H200/B200 NVLS-vs-GPU-count table
// (../shared/reference/published-measurements.md).
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr double kNcclBaseRingUs[3] = {6.6, 14.0, 8.4};
constexpr double kNcclBaseTreeUs[3] = {6.8, 14.0, 8.4};
constexpr double kNcclNvlinkRingUs[3] = {0.6, 1.9, 3.4};
constexpr double kNcclNvlinkTreeUs[3] = {0.6, 1.25, 4.0};
constexpr double kNcclNetRingUs[3] = {2.7, 4.0, 14.0};
constexpr double kNcclNetTreeUs[3] = {5.0, 8.5, 14.0};
// NVLS's fixed cost: NCCL's table says 25 us; the H200 and B200 sweeps 36 us
// (before the generation's latency scale).
constexpr double kNcclNvlsUs = 36.0;
// Launch and harness cost of one call (fitted; 8x A100 and 8x H200 small sizes).
constexpr double kNcclLaunchS = 11e-6;
// Network steps cost 3.6x NCCL's table (4 x 8 B200 over EFA; the only published
// multi-node sweep, so InfiniBand is likely faster at small sizes than this).
constexpr double kNcclNetLatencyScale = 3.6;
// LL across nodes peaks at 12 GB/s (same sweep: 1 MiB 5.4 GB/s).
constexpr double kNcclNetLlBusBw = 12e9;
// Below these sizes NCCL runs fewer channels (a minimum per channel), so a call
// costs what one of this size costs: LL 180 KiB, Simple 300 MiB (Simple's
// fixed cost, its chunks' pipeline fill: 8x A100 256 MiB at 194 GB/s), NVLS 6 MiB.
constexpr double kNcclLlFloorBytes = 180.0 * 1024;
constexpr double kNcclSimpleFloorBytes = 300.0 * 1048576;
constexpr double kNcclNvlsFloorBytes = 6.0 * 1048576;

}  // namespace

std::string_view AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kNvls:
      return "nvls";
  }
  return "ring";
}

std::string_view ProtocolName(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return "LL";
    case Protocol::kLL128:
      return "LL128";
    case Protocol::kSimple:
      return "Simple";
  }
  return "Simple";
}

NcclTuning TuningFor(std::string_view scale_up_type, bool switched) {
  NcclTuning t;  // the A100 sweep's: nvlink3, and every generation without a sweep
  if (scale_up_type == "nvlink4") {
    // 8x H200, NCCL 2.27.7: LL to 4 MiB, NVLS from 8 MiB; NCCL's own Hopper NVLS
    // efficiency 0.85 x 0.69 measured/NCCL.
    t = {"8x H200 sweep (ml-engineering, NCCL 2.27.7)", 220e9, 0.93, 1.0 * 1048576, 1.65, 0.58};
  } else if (scale_up_type == "nvlink5") {
    // 8x B200 (p6-b200, NCCL 2.27.7); NCCL's Blackwell NVLS efficiency 0.74 x 0.69.
    t = {"8x B200 sweep (p6-b200, NCCL 2.27.7)", 400e9, 0.73, 5.0 * 1048576, 2.3, 0.51};
  }
  // NVLS needs NVSwitch's multicast: NVLink4 and later, switched.
  if (!switched) t.nvls_efficiency = 0;
  return t;
}

double BusBwFactor(Collective c, int ranks) {
  const double n = ranks;
  if (ranks <= 1) return 0;
  return c == Collective::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
}

double RingBytesSentPerRank(Collective c, double bytes, int ranks) {
  return BusBwFactor(c, ranks) * bytes;
}

UnitShape UnitsOf(const model::Cluster& c, int ranks_per_node, int nodes) {
  const int per_domain = std::max(1, c.ScaleUpDomain() / std::max(1, c.nodes.gpus_per_node));
  const int together = std::max(1, std::min(nodes, per_domain));
  return {ranks_per_node * together, (nodes + together - 1) / together};
}

NetworkModel BuildNetworkModel(const model::Cluster& c) {
  NetworkModel net;
  // The unit of the two-level model is the scale-up domain: a node, or a rack-scale NVLink
  // domain of several nodes (GB200 NVL72), whose fabric bandwidth is all its nodes' together.
  net.gpus_per_node = c.ScaleUpDomain();
  const double nodes_per_domain = static_cast<double>(net.gpus_per_node) / c.nodes.gpus_per_node;
  const bool pcie = c.scale_up.type == "pcie";
  net.intra_efficiency = pcie ? kPcieEfficiency : kNvlinkEfficiency;
  // Vendors quote scale-up bandwidth with both directions added; a ring uses one.
  net.intra_busbw_bytes_per_s = c.scale_up.bandwidth_bytes_per_s / 2 * net.intra_efficiency;
  net.intra_alpha_s = kIntraAlphaS;
  net.launch_s = kLaunchS;
  net.nccl = TuningFor(c.scale_up.type, c.scale_up.switched);
  net.nvls_algbw_bytes_per_s = c.scale_up.bandwidth_bytes_per_s / 2 * net.nccl.nvls_efficiency;

  const model::Fabric& f = c.compute_fabric;
  const bool tcp = f.present && f.type == FabricType::kEthernet;
  net.inter_efficiency = tcp ? kTcpEfficiency : kRdmaEfficiency;
  net.inter_alpha_s = tcp ? kTcpAlphaS : kRdmaAlphaS;
  double node_bw = 0;
  for (const auto& nic : c.nodes.nics) {
    if (nic.role != model::NicRole::kCompute) continue;
    double port = nic.port_speed_bytes_per_s;
    if (f.present) port = std::min(port, f.speed_bytes_per_s);
    node_bw += nic.Ports() * port;
  }
  // Traffic that leaves a leaf switch shares the uplinks: an o:1 oversubscribed leaf gives each
  // node 1/o of its injection bandwidth across leaves. Rail-optimised, a rail's leaf takes that
  // port of up to its down-ports' worth of nodes, and NCCL keeps its rings on the rails (PXN
  // moves a GPU's data to the right rail over NVLink), so the traffic leaves the leaf only when
  // the nodes outnumber those ports; otherwise once the fabric has a second tier (SizeFabric's
  // sizing; before, oversubscription applied to rails the same).
  if (f.present && f.switch_model.radix > 0 && f.oversubscription > 1) {
    const FabricSize size = SizeFabric(c.nodes.count, c.nodes.Ports(model::NicRole::kCompute),
                                       f.switch_model.radix, f.oversubscription, f.rail_optimized);
    if (size.tiers > 1 && (!f.rail_optimized || c.nodes.count > size.down_ports)) {
      node_bw /= f.oversubscription;
    }
  }
  net.inter_busbw_bytes_per_s = node_bw * nodes_per_domain * net.inter_efficiency;
  return net;
}

double CollectiveTime(const NetworkModel& net, Collective c, Algorithm a, double bytes,
                      int ranks_per_node, int nodes, double nic_share) {
  const int n = ranks_per_node * nodes;
  if (n <= 1 || bytes <= 0) return 0;
  // The slowest link of the ring sets its bandwidth: scale-up links between
  // GPUs of a node, the node's fabric bandwidth (shared by concurrent groups)
  // between nodes.
  double bw = net.intra_busbw_bytes_per_s;
  if (nodes > 1) {
    const double inter = net.inter_busbw_bytes_per_s * nic_share;
    bw = ranks_per_node > 1 ? std::min(bw, inter) : inter;
  }
  const double alpha = nodes > 1 ? net.inter_alpha_s : net.intra_alpha_s;
  const bool allreduce = c == Collective::kAllReduce;
  if (a == Algorithm::kRing || !allreduce) {
    // Ring (Thakur, Rabenseifner & Gropp 2005): all-reduce 2(n-1) steps and
    // 2(n-1)/n S per link; all-gather and reduce-scatter half of each.
    const double steps = allreduce ? 2.0 * (n - 1) : n - 1.0;
    return net.launch_s + steps * alpha + BusBwFactor(c, n) * bytes / bw;
  }
  // NCCL tree: a chain inside each node and a double binary tree across nodes;
  // latency 2 (floor(log2 k) alpha_inter + (r-1) alpha_intra), as NCCL's tuning model has it; every
  // node sends and receives ~2 S in total, like the ring, so the bandwidth term is 2 S / B.
  const double latency =
      2 * (FloorLog2(nodes) * net.inter_alpha_s + (ranks_per_node - 1) * net.intra_alpha_s);
  return net.launch_s + latency + 2 * bytes / bw;
}

namespace {

// An exchange whose sends run concurrently: `intra_s` on this GPU's scale-up links and
// `fabric_bytes` over its share of the node's fabric, whichever takes longer, after the launch
// and one latency.
double ExchangeTime(const NetworkModel& net, double intra_s, double fabric_bytes,
                    int ranks_per_node, int ranks) {
  const double inter =
      fabric_bytes / (net.inter_busbw_bytes_per_s / std::max(1, net.gpus_per_node));
  return net.launch_s + (ranks_per_node < ranks ? net.inter_alpha_s : net.intra_alpha_s) +
         std::max(intra_s, inter);
}

// HybridEP's dispatch and combine through its PyTorch API (the kernel, the copy out of its
// buffer, the synchronisation), BF16 at 32 SMs, as a share of the NVLink's one-way peak, in the
// unit it reports (the bytes a rank receives, its own tokens included), by the ranks in the
// NVLink domain: DeepEP's hybrid-ep branch, docs/README_Hybrid-EP.md, the GB200 table, the mean
// of dispatch and combine (8 ranks 545.71 and 568.94 GB/s of 900, 16 523.48 and 521.55, 24
// 507.32 and 483.76, 32 484.22 and 464.54, 36 479.02 and 447.89). B200's 8 ranks at 16 SMs,
// 535.94 and 530.86 (0.593), agree. No Hopper NVLink table: the same shares there. Its kernels
// alone run 1.3-1.4x faster; the rest is per call, which a training step pays too.
double HybridEpNvlinkShare(int ranks) {
  static constexpr std::array<std::pair<int, double>, 5> kMeasured = {
      {{8, 0.6193}, {16, 0.5806}, {24, 0.5506}, {32, 0.5271}, {36, 0.5150}}};
  if (ranks <= kMeasured.front().first) return kMeasured.front().second;
  for (size_t i = 1; i < kMeasured.size(); ++i) {
    const auto [r1, s1] = kMeasured[i];
    if (ranks <= r1) {
      const auto [r0, s0] = kMeasured[i - 1];
      return s0 + (s1 - s0) * (ranks - r0) / (r1 - r0);
    }
  }
  return kMeasured.back().second;
}

// C(n, r) as a double (0 where r is out of range).
double Choose(int n, int r) {
  if (r < 0 || r > n) return 0;
  double c = 1;
  for (int i = 0; i < r; ++i) c = c * (n - i) / (i + 1);
  return c;
}

// The probability that none of a token's top_k experts lies in a block of `block` consecutive
// experts (a rank's or a node's). Routing uniform over the experts, as forced balance routes
// them: C(E - b, k) / C(E, k). Group-limited (G groups of E/G, g of them picked): Megatron-Core
// picks a token's groups by their best experts' scores (group_limited_topk: the sum of each
// group's top k/g) and its top_k among the picked groups' experts, so every picked group holds
// some of them, k/g on average. A block of h whole groups is missed when none of its groups is
// picked, C(G - h, g) / C(G, g) (a part of a group counted as that part of one more); a block
// inside one group when its group is not picked, or is and its k/g miss the block,
// (1 - g/G) + (g/G) C(E/G - b, k/g) / C(E/G, k/g) (a block across two groups taken as in one).
double MissesBlock(const model::Moe& moe, int block) {
  const int e = moe.experts, k = moe.top_k, g = std::max(1, moe.groups);
  const int picked = moe.group_top_k > 0 ? std::min(moe.group_top_k, g) : g, size = e / g;
  if (picked == g) return Choose(e - block, k) / Choose(e, k);
  if (block < size) {
    const int per_group = std::max(1, k / picked);
    const double chosen = static_cast<double>(picked) / g;
    return (1 - chosen) + chosen * Choose(size - block, per_group) / Choose(size, per_group);
  }
  const int h = std::min(g, block / size);
  const double part = h < g ? static_cast<double>(block % size) / size : 0;
  const auto miss = [&](int groups) { return Choose(g - groups, picked) / Choose(g, picked); };
  return (1 - part) * miss(h) + part * miss(std::min(g, h + 1));
}

}  // namespace

double AllToAllTime(const NetworkModel& net, double sent_bytes, int ranks_per_node, int ranks) {
  if (ranks <= 1 || sent_bytes <= 0) return 0;
  return ExchangeTime(net, sent_bytes * (ranks_per_node - 1) / ranks / net.intra_busbw_bytes_per_s,
                      sent_bytes * (ranks - ranks_per_node) / ranks, ranks_per_node, ranks);
}

ExpertExchange ExpertAllToAll(const NetworkModel& net, const model::Moe& moe, bool dedup,
                              double token_bytes, int ranks_per_node, int ep) {
  if (ep <= 1 || token_bytes <= 0) return {};
  if (!dedup) {
    const double copies = token_bytes * moe.top_k;
    return {.seconds = AllToAllTime(net, copies, ranks_per_node, ep),
            .sent_bytes = copies * (ep - 1) / ep};
  }
  // A token goes once to each rank holding any of its top_k experts (E/EP of them each), and
  // crosses the fabric once to each other node holding any (E/nodes each), where the rank it
  // reaches forwards it over NVLink to the others that need it. A rank then receives EP x the
  // probability that it holds one of a token's experts, its own tokens included (HybridEP's
  // measured unit); the combine returns one reduced row the same way.
  const int nodes = (ep + ranks_per_node - 1) / ranks_per_node;
  const double p_rank = 1 - MissesBlock(moe, moe.experts / ep);
  const double received = ep * p_rank;
  const double remote_nodes = (nodes - 1) * (1 - MissesBlock(moe, moe.experts / nodes));
  double intra_s = 0;
  if (ranks_per_node > 1 && net.intra_efficiency > 0) {
    const double one_way_peak = net.intra_busbw_bytes_per_s / net.intra_efficiency;
    intra_s = token_bytes * received / (one_way_peak * HybridEpNvlinkShare(ranks_per_node));
  }
  // Sent: to this node's ranks, across the fabric, and forwarded for the other nodes' peers.
  return {.seconds = ExchangeTime(net, intra_s, token_bytes * remote_nodes, ranks_per_node, ep),
          .sent_bytes = token_bytes * ((ranks_per_node - 1) * p_rank * nodes + remote_nodes)};
}

CollectiveEstimate EstimateCollective(const NetworkModel& net, Collective c, double bytes,
                                      int ranks_per_node, int nodes, double nic_share) {
  CollectiveEstimate e;
  const int n = ranks_per_node * nodes;
  if (n <= 1 || bytes <= 0) return e;
  const NcclTuning& tune = net.nccl;
  const bool allreduce = c == Collective::kAllReduce;
  const double factor = BusBwFactor(c, n);
  const double ring_steps = allreduce ? 2.0 * (n - 1) : n - 1.0;
  // Slowest level: scale-up links, or the node's share of the fabric. A tree on
  // NVLS nodes reduces inside the node at the NVLS rate before it leaves the
  // node (NCCL's NVLSTree), and with two nodes each node sends S instead of 2 S
  // across the fabric (NCCL's tuning doubles the fabric rate there).
  double ring_bw = net.intra_busbw_bytes_per_s, tree_bw = ring_bw;
  if (nodes > 1) {
    const double inter = net.inter_busbw_bytes_per_s * nic_share;
    const bool nvls = net.nvls_algbw_bytes_per_s > 0;
    const double tree_intra = std::max(ring_bw, factor * net.nvls_algbw_bytes_per_s);
    const double tree_inter = nvls && nodes == 2 ? 2 * inter : inter;
    ring_bw = ranks_per_node > 1 ? std::min(ring_bw, inter) : inter;
    tree_bw = ranks_per_node > 1 ? std::min(tree_intra, tree_inter) : tree_inter;
  }
  auto consider = [&](double t, Algorithm a, Protocol p) {
    double& slot = a == Algorithm::kRing ? e.ring_s : a == Algorithm::kTree ? e.tree_s : e.nvls_s;
    if (slot == 0 || t < slot) slot = t;
    if (e.best_s == 0 || t < e.best_s) {
      e.best_s = t;
      e.best = a;
      e.protocol = p;
    }
  };
  for (int p = kLL; p <= kSimple; ++p) {
    // Seconds per byte moved by protocol p over a level of busbw `bw`, and the
    // bytes below which a call costs the same (fewer channels).
    auto per_byte = [&](double bw) {
      if (p == kLL)
        return 1 / std::min(0.5 * bw, nodes > 1 ? kNcclNetLlBusBw : tune.ll_busbw_bytes_per_s);
      if (p == kLL128) return 1 / (tune.ll128_fraction * bw);
      return 1 / bw;
    };
    const double floor = p == kLL      ? kNcclLlFloorBytes
                         : p == kLL128 ? tune.ll128_floor_bytes
                                       : kNcclSimpleFloorBytes;
    const double moved = std::max(bytes, floor);
    const double hop = nodes > 1 ? kNcclNetLatencyScale * kNcclNetRingUs[p] : kNcclNvlinkRingUs[p];
    const double ring_us = kNcclBaseRingUs[p] + hop * ring_steps;
    consider(
        kNcclLaunchS + tune.latency_scale * ring_us * 1e-6 + factor * moved * per_byte(ring_bw),
        Algorithm::kRing, static_cast<Protocol>(p));
    if (allreduce && nodes > 1) {
      // A chain inside each node, a double binary tree across nodes; each node
      // sends and receives ~2 S, like the ring.
      const double tree_us =
          kNcclBaseTreeUs[p] + 2 * (FloorLog2(nodes) * kNcclNetLatencyScale * kNcclNetTreeUs[p] +
                                    (ranks_per_node - 1) * kNcclNvlinkTreeUs[p]);
      consider(kNcclLaunchS + tune.latency_scale * tree_us * 1e-6 + 2 * moved * per_byte(tree_bw),
               Algorithm::kTree, static_cast<Protocol>(p));
    }
  }
  // NVLS inside a node: the switch reduces and multicasts, each GPU moves S once
  // each way (Simple only, more than two GPUs).
  if (allreduce && nodes == 1 && n > 2 && net.nvls_algbw_bytes_per_s > 0) {
    const double t = kNcclLaunchS + tune.latency_scale * kNcclNvlsUs * 1e-6 +
                     std::max(bytes, kNcclNvlsFloorBytes) / net.nvls_algbw_bytes_per_s;
    consider(t, Algorithm::kNvls, Protocol::kSimple);
  }
  return e;
}

Placement Place(int size, int stride, int gpus_per_node) {
  Placement p;
  if (stride >= gpus_per_node) {
    p.ranks_per_node = 1;
    p.nodes = size;
  } else {
    p.ranks_per_node = std::min(size, gpus_per_node / stride);
    p.nodes = (size + p.ranks_per_node - 1) / p.ranks_per_node;
  }
  return p;
}

namespace {

void AddCollective(Traffic* t, const NetworkModel& net, Collective c, double bytes, double calls,
                   const Placement& p, double nic_share) {
  CollectiveEstimate e = EstimateCollective(net, c, bytes, p.ranks_per_node, p.nodes, nic_share);
  const int n = p.ranks_per_node * p.nodes;
  t->sent_bytes_per_gpu += calls * RingBytesSentPerRank(c, bytes, n);
  t->ring_s += calls * e.ring_s;
  t->tree_s += calls * (e.tree_s > 0 ? e.tree_s : e.ring_s);  // ring where NCCL has no tree
  t->time_s += calls * e.best_s;
  t->calls_per_step += calls;
}

}  // namespace

StepTime EstimateStep(const model::Spec& spec, const ComputePlan& compute,
                      const NetworkModel& net) {
  const model::Workload& w = spec.workload;
  const model::ModelShape& m = w.model;
  const int g = spec.cluster.ScaleUpDomain();  // GPUs that talk over NVLink
  const int dp = spec.DataParallel();
  const int t = w.tensor;
  const double m_count = w.accumulation;
  const double layers =
      m.layers * model::StageShare(m.layers, w.pipeline, w.pipeline_split);  // largest stage
  const double micro_s = compute.micro_batch_s;
  // Share of one micro-batch's compute spent in backward: 2 of 3 passes, 3 of 4
  // with full recompute (the recompute forward runs inside backward), of the layers it re-runs;
  // with LoRA's frozen weights 1 of 2 (no weight gradients), 2 of 3.
  const double recomputed = model::RecomputedShare(
      w.recompute, w.recompute_layers, model::StageLayers(m.layers, w.pipeline, w.pipeline_split));
  const double passes = m.LinearPasses();
  const double backward_share = (passes - 1 + recomputed) / (passes + recomputed);

  StepTime st;
  st.compute_s = m_count * micro_s;

  // Data parallel: gradients (bf16/fp16: 2 B per parameter of the GPU's shard), reduced over
  // DP x CP ranks (context-parallel ranks hold the same weights; Megatron's data-parallel group
  // with context parallelism), whose ranks sit t apart.
  const int dpc = dp * w.context;
  if (dpc > 1) {
    Traffic tr;
    tr.kind = "data-parallel";
    // With hybrid sharding (workload.parallel.shard) FSDP's and ZeRO-3's gathers and
    // reduce-scatters run inside the shard group, and the replicas all-reduce the reduced
    // shards (below).
    const int shard_ranks = model::StateShardRanks(w.strategy, w.shard, dpc);
    const Placement p = Place(shard_ranks, t, g);
    // Every tensor-parallel rank runs its own group at the same time.
    const double share = static_cast<double>(p.ranks_per_node) / g;
    tr.group_size = shard_ranks;
    tr.group_nodes = p.nodes;
    // A mixture of experts' routed experts are divided over EP as well. With DDP, the
    // distributed optimizer and ZeRO-2 (Megatron-Core's expert_parallel_buffers, DeepSpeed
    // MoE's expert data-parallel groups) they are reduced and gathered over their own
    // expert-data-parallel group, DP x CP x TP / (EP x ETP) ranks EP x ETP apart, beside the
    // dense parameters' collectives (the step model does the same); FSDP and ZeRO-3 shard them
    // there too, with hybrid sharding over that group's share of a shard group
    // (ExpertStateShardRanks), the rest its replicas.
    // The parameters that set the step's tail (ParamsOnTailPipelineRank: the first pipeline
    // rank's, or a middle rank's where a mixture of experts' dense layers leave the first fewer),
    // as the step model moves them. With LoRA the gradients and the optimizer's gathers are the
    // adapters' alone; ZeRO-3's and FSDP's gathers still move the frozen weights (the step model's
    // reading).
    const ParamCounts pc = CountParams(m);
    const StageParams tail_rank = ParamsOnTailPipelineRank(pc, m, t, w.pipeline, w.virtual_stages,
                                                           w.pipeline_split, dpc, w.expert);
    const LocalParams& local = tail_rank.local;
    const LocalParams& trained = tail_rank.trained;
    // Gradients are reduced in the stack's reduction dtype (software.grad_reduce: bf16 2 bytes,
    // fp32 4), as the step model moves them.
    const double gb = w.grad_reduce_bytes;
    const double grad_bytes = gb * trained.Total();
    // The parameter gathers move the working copy: half the linear weights' bytes with FP8
    // parameters.
    const int edp = model::ExpertStateShardRanks(w.strategy, w.shard, t, dpc, w.expert);
    const int etp = model::ExpertTensor(t, dpc, w.expert);
    const Placement ep_place = Place(edp, w.expert * etp, g);
    const double ep_share = static_cast<double>(ep_place.ranks_per_node) / g;
    // The dense parameters' collective over the group and the experts' over theirs (none where
    // no expert is replicated). Without EP, FSDP and ZeRO-3 gather and reduce a block's experts
    // with the block (torchtitan wraps them apart only with EP): one collective.
    const bool fully_sharded =
        w.strategy == Strategy::kFsdp || w.strategy == Strategy::kZero3 ||
        (w.strategy == Strategy::kZero2 && model::Zero2GathersPerMicroBatch(w.sharding_impl));
    auto add_split = [&](Collective c, double dense_bytes, double expert_bytes, double calls) {
      if (fully_sharded && w.expert == 1) {
        AddCollective(&tr, net, c, dense_bytes + expert_bytes, calls, p, share);
        return;
      }
      AddCollective(&tr, net, c, dense_bytes, calls, p, share);
      if (edp > 1 && expert_bytes > 0) {
        AddCollective(&tr, net, c, expert_bytes, calls, ep_place, ep_share);
      }
    };
    // Said beside the collectives where the experts have a group of their own.
    const std::string experts_own =
        m.IsMoe() && fully_sharded && w.expert == 1 ? ""
        : m.IsMoe() && edp > 1
            ? fmt::format(" (the routed experts' over their {} expert-data-parallel ranks)", edp)
        : m.IsMoe() ? " (no routed expert replicated: theirs not reduced)"
                    : "";
    const double dense_gather_bytes =
        local.DenseWeightBytes(w.GatheredLinearWeightBytes(w.strategy));
    const double expert_gather_bytes =
        local.ExpertWeightBytes(w.GatheredLinearWeightBytes(w.strategy));
    tr.bytes_per_call = grad_bytes;
    switch (w.strategy) {
      case Strategy::kDdp:
        // One all-reduce per step (no_sync during accumulation), overlapped
        // with the last micro-batch's backward; the last bucket stays exposed.
        tr.collectives = "all-reduce of gradients once per step" + experts_own;
        add_split(Collective::kAllReduce, gb * trained.dense, gb * trained.experts, 1);
        tr.overlappable_s = backward_share * micro_s;
        break;
      case Strategy::kZero1: {
        // Reduce-scatter gradients, all-gather updated parameters: the volume of
        // one all-reduce (ZeRO paper §7).
        tr.collectives = "reduce-scatter + all-gather once per step" + experts_own;
        add_split(Collective::kReduceScatter, gb * trained.dense, gb * trained.experts, 1);
        const double rs_s = tr.time_s;
        add_split(Collective::kAllGather,
                  trained.DenseWeightBytes(w.GatheredLinearWeightBytes(w.strategy)),
                  trained.ExpertWeightBytes(w.GatheredLinearWeightBytes(w.strategy)), 1);
        tr.overlappable_s = backward_share * micro_s;
        if (w.GathersAfterOptimizerStep(w.strategy, w.virtual_stages)) {
          // The first chunk's gather runs after its optimizer step, before the forward (the
          // step model lets the other chunks' optimizer steps cover some of it): the rest of
          // the gather beside the forward, the reduce-scatter beside the backward.
          const double chunks = std::max(1, w.virtual_stages);
          const double ag_s = tr.time_s - rs_s;
          tr.collectives =
              "reduce-scatter + all-gather once per step (first chunk's gather after its "
              "optimizer step)" +
              experts_own;
          tr.overlappable_s =
              std::min(tr.overlappable_s,
                       std::min(backward_share * micro_s, rs_s) +
                           std::min(ag_s * (chunks - 1) / chunks, (1 - backward_share) * micro_s));
        }
        break;
      }
      case Strategy::kZero2:
        // PyTorch FSDP's SHARD_GRAD_OP gathers the parameters again in every micro-batch's
        // forward (once a step with pipeline parallelism, the stage kept gathered); the step
        // model says the same.
        if (model::Zero2GathersPerMicroBatch(w.sharding_impl)) {
          // With pipeline stages the stage stays gathered and syncs on the last micro-batch:
          // once a step, as FSDP's below (before, this fell through to ZeRO-2's per-micro-batch
          // reduce-scatters, which the step model does not run).
          const double calls = w.pipeline > 1 ? 1 : m_count;
          tr.collectives = (w.pipeline > 1 ? "all-gather + reduce-scatter once per step "
                                             "(SHARD_GRAD_OP, stage kept gathered)"
                                           : "all-gather + reduce-scatter per micro-batch "
                                             "(SHARD_GRAD_OP)") +
                           experts_own;
          add_split(Collective::kAllGather, dense_gather_bytes, expert_gather_bytes, calls);
          add_split(Collective::kReduceScatter, gb * trained.dense, gb * trained.experts, calls);
          tr.overlappable_s = calls * micro_s;
          break;
        }
        // Gradients are partitioned, so they are reduce-scattered every
        // micro-batch; parameters are all-gathered once after the optimizer.
        tr.collectives = "reduce-scatter per micro-batch + all-gather per step" + experts_own;
        add_split(Collective::kReduceScatter, gb * trained.dense, gb * trained.experts, m_count);
        add_split(Collective::kAllGather,
                  trained.DenseWeightBytes(w.GatheredLinearWeightBytes(w.strategy)),
                  trained.ExpertWeightBytes(w.GatheredLinearWeightBytes(w.strategy)), 1);
        tr.overlappable_s = m_count * backward_share * micro_s + (1 - backward_share) * micro_s;
        break;
      case Strategy::kZero3:
      case Strategy::kFsdp:
        // Parameters all-gathered in forward and again in backward, gradients
        // reduce-scattered, every micro-batch: 1.5 x DDP's volume per micro-batch
        // (ZeRO paper §7.2.2), prefetched behind each layer's compute.
        // With pipeline parallelism FSDP keeps the stage gathered and syncs gradients on the
        // last micro-batch only: one all-gather and one reduce-scatter per step (the step model
        // and the memory model say the same).
        if (w.pipeline > 1) {
          tr.collectives =
              "all-gather + reduce-scatter once per step (stage kept gathered)" + experts_own;
          add_split(Collective::kAllGather, dense_gather_bytes, expert_gather_bytes, 1);
          add_split(Collective::kReduceScatter, gb * trained.dense, gb * trained.experts, 1);
          tr.overlappable_s = micro_s;
          break;
        }
        tr.collectives = "all-gather x2 + reduce-scatter per micro-batch" + experts_own;
        add_split(Collective::kAllGather, dense_gather_bytes, expert_gather_bytes, 2 * m_count);
        add_split(Collective::kReduceScatter, gb * trained.dense, gb * trained.experts, m_count);
        tr.overlappable_s = m_count * micro_s;
        break;
    }
    // The first gather and the last reduction of each pass cannot be hidden:
    // about one layer's share of the traffic.
    auto expose = [&](Traffic* x) {
      x->exposed_s =
          std::max(0.0, x->time_s - x->overlappable_s) + x->time_s / std::max(1.0, layers);
    };
    expose(&tr);
    st.traffic.push_back(tr);
    if (shard_ranks < dpc) {
      // Each shard group's reduced gradients, 1/shard of them, all-reduced across the replicas
      // (ranks t x shard apart) as the backward produces them: per micro-batch, or once a step
      // with pipeline stages (the stage kept gathered).
      Traffic rep;
      rep.kind = "data-parallel replicas";
      const int replicas = dpc / shard_ranks;
      const Placement rp = Place(replicas, t * shard_ranks, g);
      rep.group_size = replicas;
      rep.group_nodes = rp.nodes;
      rep.bytes_per_call = gb * trained.dense / shard_ranks + gb * trained.experts / edp;
      const double calls = w.pipeline > 1 ? 1 : m_count;
      rep.collectives = w.pipeline > 1 ? "all-reduce of the gradient shards once per step"
                                       : "all-reduce of the gradient shards per micro-batch";
      // Without EP the experts are in the blocks' own all-reduces (as in their gathers above).
      const double own = w.expert > 1 ? trained.dense : trained.Total();
      AddCollective(&rep, net, Collective::kAllReduce, gb * own / shard_ranks, calls, rp,
                    static_cast<double>(rp.ranks_per_node) / g);
      // The experts' shards across their own replicas (their shard group's, EP x ETP x its size
      // apart), where a shard group holds more than one copy of an expert's shards.
      const int expert_replicas = model::ExpertDataParallel(t, dpc, w.expert) / edp;
      if (w.expert > 1 && expert_replicas > 1 && trained.experts > 0) {
        const Placement erp = Place(expert_replicas, w.expert * etp * edp, g);
        AddCollective(&rep, net, Collective::kAllReduce, gb * trained.experts / edp, calls, erp,
                      static_cast<double>(erp.ranks_per_node) / g);
      }
      // Beside a shard group inside a scale-up domain the all-reduces have the NICs to
      // themselves; a group across domains uses them too, and leaves them what it does not take.
      rep.overlappable_s = calls * backward_share * micro_s;
      if (t * shard_ranks > g) rep.overlappable_s = std::max(0.0, rep.overlappable_s - tr.time_s);
      expose(&rep);
      st.traffic.push_back(rep);
    }
  }

  const double act_bytes = 2.0 * w.micro_batch * m.sequence / w.context * m.hidden;
  // Tensor parallel: per layer and micro-batch 2 all-reduces forward and 2
  // backward of b s h activations, 2 more with full recompute (Narayanan SC21
  // §3; with sequence parallel the same volume as all-gather/reduce-scatter
  // pairs, Korthikanti §4). Not overlapped (no --tp-comm-overlap assumed).
  if (t > 1) {
    Traffic tr;
    tr.kind = "tensor-parallel";
    const Placement p = Place(t, 1, g);
    tr.group_size = t;
    tr.group_nodes = p.nodes;
    // LoRA's adapters exchange activations of their own (LoraTpAllReduces, as the step model).
    const double adapters = LoraTpAllReduces(w, t, w.sequence_parallel);
    const double per_layer = 4 + 2 * recomputed + adapters;
    tr.bytes_per_call = act_bytes;
    tr.collectives =
        adapters > 0 ? fmt::format(
                           "{:.3g} all-reduces per layer per micro-batch ({:.3g} of them LoRA's "
                           "adapters')",
                           per_layer, adapters)
                     : fmt::format("{:.0f} all-reduces per layer per micro-batch", per_layer);
    AddCollective(&tr, net, Collective::kAllReduce, act_bytes, per_layer * layers * m_count, p,
                  1.0 / g * p.ranks_per_node);
    tr.exposed_s = tr.time_s;
    st.traffic.push_back(tr);
  }

  // Context parallel: per layer and micro-batch K and V around the ring forward (an all-gather of
  // the whole sequence's K and V over TP, bf16), backward K and V again with their gradients
  // beside them (two of it, as Transformer Engine's ring sends them; the step model's count), and
  // K and V again where the attention is recomputed (full recompute, or selective recompute of
  // the attention core); the CP ranks sit t apart and every TP rank runs its ring at once, sharing
  // the NICs, as the step model has it. Ring attention sends each step's K/V beside the previous
  // chunk's attention: one step in cp is exposed, and what the attention cannot cover (its share
  // of the compute's FLOPs, at the stated MFU).
  if (w.context > 1) {
    Traffic tr;
    tr.kind = "context-parallel";
    const Placement p = Place(w.context, t, g);
    tr.group_size = w.context;
    tr.group_nodes = p.nodes;
    const double again = w.recompute == model::Recompute::kSelective
                             ? (w.recompute_modules.core_attn ? 1.0 : 0.0)
                             : recomputed;
    const double per_layer = 3 + again;
    const double kv = 2.0 * w.micro_batch * m.sequence * m.KvWidth() * 2 / t;
    tr.bytes_per_call = kv;
    tr.collectives =
        fmt::format("{:.3g} K/V or K/V-gradient ring passes per layer per micro-batch", per_layer);
    AddCollective(&tr, net, Collective::kAllGather, kv, per_layer * layers * m_count, p,
                  static_cast<double>(p.ranks_per_node) / g);
    const FlopsPerToken& f = compute.per_token;
    tr.overlappable_s = st.compute_s * (3 + again) * f.attention_forward / f.hardware;
    tr.exposed_s = std::max(tr.time_s / w.context, tr.time_s - tr.overlappable_s);
    st.traffic.push_back(tr);
  }

  // Expert parallel: an all-to-all dispatch and one combine per MoE layer, forward and
  // backward (twice more with full recompute), of each token's k copies, or with HybridEP each
  // token once per rank and node holding its experts (ExpertAllToAll); not hidden.
  if (w.expert > 1 && m.IsMoe()) {
    Traffic tr;
    tr.kind = "expert-parallel";
    const int etp = model::ExpertTensor(t, dp * w.context, w.expert);
    const Placement p = Place(w.expert, etp, g);  // ETP apart, as the step model has it
    tr.group_size = w.expert;
    tr.group_nodes = p.nodes;
    const double per_layer = 4 + 2 * recomputed;
    const ExpertExchange x =
        ExpertAllToAll(net, m.moe, w.moe_dedup, act_bytes / t, p.ranks_per_node, w.expert);
    // The buffer: every routed copy on the all-to-all, what it sends with HybridEP.
    tr.bytes_per_call = w.moe_dedup ? x.sent_bytes : act_bytes / t * m.moe.top_k;
    tr.collectives = fmt::format("{:.0f} all-to-alls per MoE layer per micro-batch", per_layer);
    // On the rank with the most MoE layers (a mixture of experts' dense layers sit on the first
    // ranks), as the traffic of the other rows is the busiest rank's.
    int moe_layers = 0;
    for (int rank = 0; rank < w.pipeline; ++rank) {
      const RankLayers r =
          LayersOnPipelineRank(m, w.pipeline, w.virtual_stages, w.pipeline_split, rank);
      moe_layers = std::max(moe_layers, r.layers - r.dense);
    }
    tr.calls_per_step = per_layer * moe_layers * m_count;
    tr.sent_bytes_per_gpu = tr.calls_per_step * x.sent_bytes;
    tr.ring_s = tr.tree_s = tr.time_s = tr.calls_per_step * x.seconds;
    tr.exposed_s = tr.time_s;
    st.traffic.push_back(tr);
  }

  // Pipeline parallel: one activation send forward and one gradient send
  // backward per micro-batch per chunk boundary (v chunks a rank), b s h / t
  // with the scatter-gather optimisation (Narayanan SC21 §4.1). Steady-state
  // sends are exposed as the step model has them (PipelineSendsExposed: all in
  // plain 1F1B), the fill and drain path whole. The stages sit t x cp x dp
  // ranks apart: NVLink when all of them share a domain, else the fabric, whose
  // boundary the lockstep stages wait for.
  if (w.pipeline > 1) {
    Traffic tr;
    tr.kind = "pipeline-parallel";
    tr.group_size = w.pipeline;
    tr.group_nodes = Place(w.pipeline, t * dp * w.context, g).nodes;
    const bool across_nodes = tr.group_nodes > 1;
    const double bytes = act_bytes / t;
    const double bw = across_nodes ? net.inter_busbw_bytes_per_s / g : net.intra_busbw_bytes_per_s;
    const double alpha = across_nodes ? net.inter_alpha_s : net.intra_alpha_s;
    const double one = alpha + bytes / bw;
    tr.bytes_per_call = bytes;
    tr.collectives = "send/recv per micro-batch per chunk boundary";
    const int v = std::max(1, w.virtual_stages);
    tr.calls_per_step = 2 * m_count * v;
    tr.sent_bytes_per_gpu = tr.calls_per_step * bytes;
    tr.ring_s = tr.tree_s = tr.time_s = tr.calls_per_step * one;
    tr.exposed_s =
        tr.time_s * PipelineSendsExposed(w, v, Efficiency{}) + 2 * (w.pipeline - 1) * one;
    st.traffic.push_back(tr);
    // Bubble: (p - 1) / (v m) of the ideal time (Narayanan SC21 §2.2).
    st.bubble_s = (w.pipeline - 1.0) / (w.virtual_stages * m_count) * st.compute_s;
  }

  for (const auto& tr : st.traffic) st.exposed_comm_s += tr.exposed_s;
  st.step_s = st.compute_s + st.bubble_s + st.exposed_comm_s;
  st.tokens_per_s = compute.tokens_per_step / st.step_s;
  st.effective_mfu = compute.ideal_step_s / st.step_s;
  return st;
}

CommPlan PlanComm(const model::Spec& spec, const ComputePlan& compute) {
  CommPlan plan;
  plan.network = BuildNetworkModel(spec.cluster);
  plan.step = EstimateStep(spec, compute, plan.network);

  // Weak scaling: same per-GPU batch, from the smallest whole-node count that
  // holds one model replica to the spec's node count, doubling.
  const int g = spec.cluster.nodes.gpus_per_node;
  const int mp = spec.workload.ModelParallel();
  std::vector<int> counts;
  for (int k = 1; k < spec.cluster.nodes.count; k *= 2) {
    if ((k * g) % mp == 0) counts.push_back(k);
  }
  counts.push_back(spec.cluster.nodes.count);
  double base = 0;
  for (int k : counts) {
    model::Spec s = spec;
    s.cluster.nodes.count = k;
    s.workload.global_batch = s.workload.micro_batch * s.workload.accumulation * s.DataParallel();
    // Expert parallelism comes out of DP x CP: as much of it as the smaller cluster has.
    s.workload.expert = std::gcd(s.workload.expert, s.DataParallel() * s.workload.context);
    // So does a hybrid shard group (a shard group of 0 is the whole of DP x CP).
    s.workload.shard = std::gcd(s.workload.shard, s.DataParallel() * s.workload.context);
    ScalingPoint pt;
    pt.nodes = k;
    pt.gpus = s.TotalGpus();
    // The step model's prediction (as `sim step --sweep`); at the stated MFU where it has none.
    if (auto m = AnalyticalStepModel().Step(s, LayoutOf(s), pt.gpus)) {
      pt.step_s = m->step_s;
      pt.tokens_per_s = m->tokens_per_s;
    } else {
      const StepTime st = EstimateStep(s, PlanCompute(s), BuildNetworkModel(s.cluster));
      pt.step_s = st.step_s;
      pt.tokens_per_s = st.tokens_per_s;
    }
    const double per_gpu = pt.tokens_per_s / pt.gpus;
    if (base == 0) base = per_gpu;
    pt.efficiency = per_gpu / base;
    plan.scaling.push_back(pt);
  }

  // Expected all-reduce busbw per size, 8 B to 16 GiB (nccl-tests -b 8 -e 16G -f 2).
  auto sweep = [&](int ranks_per_node, int nodes) {
    std::vector<BusBwPoint> out;
    const int n = ranks_per_node * nodes;
    if (n < 2) return out;
    for (int k = 3; k <= 34; ++k) {
      BusBwPoint pt;
      pt.bytes = std::ldexp(1.0, k);
      CollectiveEstimate e =
          EstimateCollective(plan.network, Collective::kAllReduce, pt.bytes, ranks_per_node, nodes);
      pt.time_s = e.best_s;
      pt.algorithm = e.best;
      pt.protocol = e.protocol;
      pt.busbw_bytes_per_s = BusBwFactor(Collective::kAllReduce, n) * pt.bytes / e.best_s;
      out.push_back(pt);
    }
    return out;
  };
  // One node over its NVLink; the whole cluster as domains of NVLink joined by the fabric.
  const UnitShape all = UnitsOf(spec.cluster, g, spec.cluster.nodes.count);
  plan.busbw_node = sweep(g, 1);
  plan.busbw_cluster = sweep(all.ranks_per_unit, all.units);
  plan.allreduce_4mib_s = EstimateCollective(plan.network, Collective::kAllReduce, 4.0 * (1 << 20),
                                             all.ranks_per_unit, all.units)
                              .best_s;
  return plan;
}

}  // namespace gpufleet::plan
