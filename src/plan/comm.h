#pragma once
// Communication: the alpha-beta cost of NCCL-style ring and tree collectives on
// a two-level network (scale-up inside a node, the compute fabric between
// nodes), the bytes and time of each parallelism's traffic per step, how much
// hides behind compute, the step time, scaling from one node to the spec's
// size, and the all-reduce bus bandwidth expected per message size (what
// `gpufleet bench collective` is judged against). Pure; thread-safe.

#include <string>
#include <vector>

#include "model/spec.h"
#include "plan/compute.h"

namespace gpufleet::plan {

enum class Collective { kAllReduce, kAllGather, kReduceScatter };
enum class Algorithm { kRing, kTree, kNvls };
std::string_view AlgorithmName(Algorithm a);
// NCCL's protocols: LL (8-byte lines with a flag, lowest latency), LL128 (128-byte lines),
// Simple (bulk copies with fences, highest bandwidth, highest latency).
enum class Protocol { kLL, kLL128, kSimple };
std::string_view ProtocolName(Protocol p);

// How NCCL's protocols behave on one generation of scale-up link, fitted to the published
// nccl-tests sweeps (docs/plan.md "Expected busbw"). The defaults are the A100 sweep's (the
// slowest measured), used for generations no sweep was published for.
struct NcclTuning {
  std::string fitted_to = "8x A100 sweep (ml-engineering)";
  double ll_busbw_bytes_per_s = 17e9;        // LL's ceiling on one node
  double ll128_fraction = 0.69;              // LL128's bandwidth / Simple's
  double ll128_floor_bytes = 3.4 * 1048576;  // fewer channels below: costs what this costs
  double latency_scale = 1.3;                // measured / NCCL's own latency tables
  double nvls_efficiency = 0;                // NVLS algbw / one link direction; 0 = no NVLS
};
NcclTuning TuningFor(std::string_view scale_up_type, bool switched);

// nccl-tests doc/PERFORMANCE.md: busbw = algbw x factor; 2(n-1)/n for
// all-reduce, (n-1)/n for all-gather and reduce-scatter.
double BusBwFactor(Collective c, int ranks);
// Bytes one rank sends in a ring collective over a buffer of `bytes` (the
// total buffer S as nccl-tests defines it).
double RingBytesSentPerRank(Collective c, double bytes, int ranks);

struct NetworkModel {
  int gpus_per_node = 1;
  double intra_busbw_bytes_per_s = 0;  // achievable per-GPU ring busbw on the scale-up links
  double inter_busbw_bytes_per_s = 0;  // achievable per-node bandwidth over the compute fabric
  double intra_alpha_s = 0;            // per ring step inside a node
  double inter_alpha_s = 0;            // per ring step across nodes
  double launch_s = 0;                 // fixed cost per collective
  double intra_efficiency = 0;         // achieved / link peak (calibration, docs/plan.md)
  double inter_efficiency = 0;
  double nvls_algbw_bytes_per_s = 0;  // NVLink SHARP all-reduce algbw inside a node; 0 = none
  NcclTuning nccl;
};

// A run of `ranks_per_node` x `nodes` ranks in the network model's units: nodes of one NVLink
// domain (GB200 NVL72's trays) talk over NVLink, as one unit of their ranks together.
struct UnitShape {
  int ranks_per_unit = 1;
  int units = 1;
};
UnitShape UnitsOf(const model::Cluster& c, int ranks_per_node, int nodes);

// Places a group of `size` ranks whose members are `stride` ranks apart (Megatron order: tensor
// fastest, then context, then data, then pipeline) on nodes of `gpus_per_node` GPUs.
struct Placement {
  int ranks_per_node = 1;
  int nodes = 1;
};
Placement Place(int size, int stride, int gpus_per_node);

// Link peaks from the spec, derated by efficiencies calibrated on published
// nccl-tests runs (reference/published-measurements.md; docs/plan.md).
NetworkModel BuildNetworkModel(const model::Cluster& c);

// Time of one bandwidth-bound collective over `ranks_per_node` x `nodes` ranks
// in the alpha-beta model (the step model's traffic: large buffers, Simple
// protocol). `nic_share` is the fraction of each node's fabric bandwidth this
// group gets when several groups communicate at once (e.g. one DP group per
// tensor-parallel rank). Trees exist for all-reduce only, as in NCCL.
double CollectiveTime(const NetworkModel& net, Collective c, Algorithm a, double bytes,
                      int ranks_per_node, int nodes, double nic_share = 1.0);

// NCCL's choice at any size: every algorithm (ring; tree across nodes; NVLS on
// NVLink4+ switches) with every protocol, the fastest of them, each costing
//   launch + latency_scale x NCCL's latency table (base + per-step hardware latency)
//   + bus factor x max(S, protocol floor) / protocol bandwidth.
// One all-to-all in which each of `ranks` ranks (`ranks_per_node` of them on each node) sends
// `sent_bytes` split evenly over the group: the share for peers on its node over NVLink, the
// rest over the node's fabric, which every GPU of the node uses at once. Launch plus one
// latency: the sends run concurrently.
double AllToAllTime(const NetworkModel& net, double sent_bytes, int ranks_per_node, int ranks);
// One dispatch (or combine) of a mixture of experts' tokens, `token_bytes` of them on this rank,
// among `ep` ranks, `ranks_per_node` of them on a node, by the spec's dispatcher: NCCL's
// all-to-all sends one copy per routed expert (AllToAllTime); HybridEP and DeepEP (`dedup`) send
// a token once to each rank holding any of its experts and once across the fabric to each other
// node holding any, NVLink there, at HybridEP's measured rate on the scale-up links (a share of
// their one-way peak that falls with the ranks a node: 8 to 36 measured, the ends held beyond).
struct ExpertExchange {
  double seconds = 0;
  double sent_bytes = 0;  // what leaves this GPU, to its node's ranks or across the fabric
};
ExpertExchange ExpertAllToAll(const NetworkModel& net, const model::Moe& moe, bool dedup,
                              double token_bytes, int ranks_per_node, int ep);

struct CollectiveEstimate {
  double ring_s = 0;  // fastest ring protocol
  double tree_s = 0;  // fastest tree protocol (all-reduce across nodes); 0 otherwise
  double nvls_s = 0;  // NVLS (all-reduce inside a node); 0 where there is none
  double best_s = 0;
  Algorithm best = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
};
CollectiveEstimate EstimateCollective(const NetworkModel& net, Collective c, double bytes,
                                      int ranks_per_node, int nodes, double nic_share = 1.0);

// One kind of traffic in a training step.
struct Traffic {
  std::string kind;         // "data-parallel", "tensor-parallel", "pipeline-parallel"
  std::string collectives;  // e.g. "all-gather x2 + reduce-scatter per micro-batch"
  int group_size = 1;
  int group_nodes = 1;        // nodes the group spans (1 = scale-up only)
  double bytes_per_call = 0;  // buffer size S of one collective
  double calls_per_step = 0;
  double sent_bytes_per_gpu = 0;  // per step, ring
  double ring_s = 0;              // per step
  double tree_s = 0;              // per step (the ring where NCCL has no tree)
  double time_s = 0;              // per step with the faster algorithm
  double overlappable_s = 0;      // compute it can hide behind
  double exposed_s = 0;
};

struct StepTime {
  double compute_s = 0;  // accumulation x micro-batch compute
  double bubble_s = 0;   // pipeline fill and drain
  double exposed_comm_s = 0;
  double step_s = 0;
  double tokens_per_s = 0;
  double effective_mfu = 0;  // model FLOPs / (n x peak x step time)
  std::vector<Traffic> traffic;
};

StepTime EstimateStep(const model::Spec& spec, const ComputePlan& compute, const NetworkModel& net);

struct ScalingPoint {
  int nodes = 0;
  int gpus = 0;
  double step_s = 0;
  double tokens_per_s = 0;
  double efficiency = 0;  // per-GPU throughput relative to the smallest point
};

struct BusBwPoint {
  double bytes = 0;
  double time_s = 0;
  double busbw_bytes_per_s = 0;
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
};

struct CommPlan {
  NetworkModel network;
  StepTime step;
  std::vector<ScalingPoint> scaling;      // weak scaling, per-GPU batch fixed
  std::vector<BusBwPoint> busbw_node;     // all-reduce over one node's GPUs
  std::vector<BusBwPoint> busbw_cluster;  // all-reduce over every GPU
  double allreduce_4mib_s = 0;            // full cluster, the "30 ms" rule
};

CommPlan PlanComm(const model::Spec& spec, const ComputePlan& compute);

}  // namespace gpufleet::plan
