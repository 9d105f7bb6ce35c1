#pragma once
// Storage: the input data rate the GPUs consume, checkpoint size, write and
// read time to each tier, the training stall per checkpoint (sync vs async),
// and the hot-tier capacity needed. Pure; thread-safe.

#include <string>
#include <vector>

#include "model/spec.h"

namespace gpufleet::plan {

struct TierCheckpoint {
  std::string tier;
  model::TierKind kind = model::TierKind::kWarm;
  double write_bytes_per_s = 0;  // effective: min(tier, clients' network)
  std::string write_bound;       // what limits it: "tier" or "storage NICs" ...
  double write_s = 0;
  double read_s = 0;  // restore on restart
  bool under_2_min = false;
};

struct StoragePlan {
  double bytes_per_sample = 0;
  double input_bytes_per_s = 0;  // whole cluster
  double input_bytes_per_s_per_node = 0;
  // Full training state: 2 B bf16 weights + 4 B fp32 master + 8 B Adam = 14 B
  // per parameter (reference/formulas-and-facts.md §1.5).
  double checkpoint_bytes = 0;
  double weights_only_bytes = 0;  // 2 B per parameter
  // What a restart reads: the checkpoint, and with LoRA the frozen base's weights too (2 B each,
  // from the pretrained checkpoint, taken to sit on the same tier).
  double restore_bytes = 0;
  std::vector<TierCheckpoint> tiers;
  std::string target_tier;  // the workload's checkpoint tier
  double target_write_s = 0;
  double snapshot_s = 0;                 // async: device-to-host copy that blocks training
  double stall_s = 0;                    // per checkpoint
  double stall_fraction = 0;             // stall / interval
  bool async_keeps_up = true;            // async write finishes before the next checkpoint
  double hot_bytes_needed_per_node = 0;  // keep x checkpoint shard per node
  double hot_bytes_available_per_node = 0;
};

StoragePlan PlanStorage(const model::Spec& spec, double step_s);

}  // namespace gpufleet::plan
