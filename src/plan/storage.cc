#include "plan/storage.h"

#include <algorithm>

#include "plan/memory.h"

namespace gpufleet::plan {

namespace {
// Device-to-host copy per GPU: PCIe x16 per direction, Gen4 ~32 GB/s and Gen5
// ~64 GB/s raw (PCI-SIG), of which ~80 % is achieved by pinned-memory copies
// (NVIDIA GTC slide in published-measurements.md: PCIe Gen4 24 and Gen5 48
// GB/s busbw, i.e. 0.75; 0.8 for a plain copy is an assumption).
double PcieCopyBytesPerS(int gen) {
  const double raw = gen >= 5 ? 64e9 : gen == 4 ? 32e9 : 16e9;
  return raw * 0.8;
}
}  // namespace

StoragePlan PlanStorage(const model::Spec& spec, double step_s) {
  const model::Cluster& c = spec.cluster;
  const model::Workload& w = spec.workload;
  StoragePlan s;
  const double nodes = c.nodes.count;

  // Input rate = samples per step x bytes per sample / step time
  // (reference/formulas-and-facts.md §5 item 4: not derivable from batch size alone).
  s.bytes_per_sample =
      w.bytes_per_sample > 0 ? w.bytes_per_sample : w.bytes_per_token * w.model.sequence;
  s.input_bytes_per_s = w.global_batch * s.bytes_per_sample / step_s;
  s.input_bytes_per_s_per_node = s.input_bytes_per_s / nodes;

  // With LoRA a checkpoint holds what is trained, the adapters and their optimizer states
  // (Megatron Bridge's and Hugging Face PEFT's checkpoints: the frozen base is the pretrained
  // checkpoint's, loaded again on restart).
  const ParamCounts counts = CountParams(w.model);
  const double params = counts.Trainable();
  s.checkpoint_bytes = 14 * params;
  s.weights_only_bytes = 2 * params;
  s.restore_bytes = s.checkpoint_bytes + (w.model.lora.Enabled() ? 2 * counts.total : 0);

  // Remote tiers are reached through the storage NICs, or the compute NICs
  // when the node has none for storage.
  double client_bw = c.nodes.Bandwidth(model::NicRole::kStorage);
  std::string client_name = "storage NICs";
  if (client_bw == 0) {
    client_bw = c.nodes.Bandwidth(model::NicRole::kCompute);
    client_name = "compute NICs (no storage NIC)";
  }
  for (const auto& tier : c.storage) {
    TierCheckpoint t;
    t.tier = tier.name;
    t.kind = tier.kind;
    if (tier.local) {
      // Each node writes its own shard to its own drives, all at once.
      t.write_bytes_per_s = tier.write_bytes_per_s * nodes;
      t.write_bound = "local NVMe";
      t.read_s = s.restore_bytes / (tier.read_bytes_per_s * nodes);
    } else {
      const double net = client_bw * nodes;
      t.write_bytes_per_s = std::min(tier.write_bytes_per_s, net);
      t.write_bound = tier.write_bytes_per_s <= net ? "tier bandwidth" : client_name;
      t.read_s = s.restore_bytes / std::min(tier.read_bytes_per_s, net);
    }
    t.write_s = s.checkpoint_bytes / t.write_bytes_per_s;
    t.under_2_min = t.write_s <= 120;
    if (tier.name == w.checkpoint_tier) {
      s.target_tier = tier.name;
      s.target_write_s = t.write_s;
    }
    if (tier.local) {
      s.hot_bytes_needed_per_node = w.keep_checkpoints * s.checkpoint_bytes / nodes;
      s.hot_bytes_available_per_node = tier.capacity_bytes;
    }
    s.tiers.push_back(t);
  }

  // A sharded checkpoint puts 1/n of the state on each GPU's host link.
  const double per_gpu = s.checkpoint_bytes / spec.TotalGpus();
  s.snapshot_s = per_gpu / PcieCopyBytesPerS(c.nodes.gpu.pcie_gen);
  s.stall_s = w.checkpoint_async ? s.snapshot_s : s.target_write_s;
  s.stall_fraction = s.stall_s / w.checkpoint_interval_s;
  s.async_keeps_up = !w.checkpoint_async || s.target_write_s <= w.checkpoint_interval_s;
  return s;
}

}  // namespace gpufleet::plan
