#include "report/plan_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <vector>

#include "base/units.h"
#include "report/html.h"
#include "report/svg.h"
#include "report/table.h"

namespace gpufleet::report {

using namespace gpufleet::units;  // NOLINT(google-build-using-namespace): formatting helpers
using plan::Plan;

namespace {

// A document both text and Markdown renderers walk, so the two never drift.
struct Section {
  explicit Section(std::string t) : title(std::move(t)) {}
  std::string title;
  std::vector<Table> tables;
  std::vector<std::string> notes;
  std::vector<std::string> items;   // a bulleted list (findings)
  bool wrap_items = false;          // text: wrap long items at 100 columns
  std::vector<std::string> charts;  // SVG, HTML only
};

// Word-wraps `text` to `width` columns; continuation lines get `indent` spaces.
std::string Wrap(const std::string& text, size_t width, size_t indent) {
  std::string out;
  size_t col = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    const size_t w = DisplayWidth(word);
    if (col > indent && col + 1 + w > width) {
      out += "\n" + std::string(indent, ' ');
      col = indent;
    } else if (col > 0) {
      out += ' ';
      ++col;
    }
    out += word;
    col += w;
    start = end + 1;
  }
  return out;
}

std::string Money(double usd) { return std::isfinite(usd) ? FormatUsd(usd) : "never"; }
std::string MoneyRange(const plan::Money& m) {
  if (m.low == m.high) return Money(m.low);
  return Money(m.low) + " - " + Money(m.high);
}
std::string Months(const plan::Money& m) {
  auto one = [](double v) { return std::isfinite(v) ? fmt::format("{:.1f}", v) : "never"; };
  if (m.low == m.high) return one(m.low) + " months";
  return one(m.low) + " - " + one(m.high) + " months";
}
std::string YesNo(bool b) { return b ? "yes" : "no"; }

Table KeyValues() { return Table::KeyValue(); }

std::string BusBwChart(const Plan& p) {
  LineChart chart;
  chart.title = "Expected all-reduce bus bandwidth";
  chart.x = {"message size", AxisUnit::kBytes, true, false};
  chart.y = {"busbw", AxisUnit::kBytesPerSecond, false, true};
  for (const auto& [name, pts] : {std::pair{"one node", &p.comm.busbw_node},
                                  std::pair{"whole cluster", &p.comm.busbw_cluster}}) {
    Series s{name, {}, {}, false};
    for (const auto& pt : *pts) {
      if (pt.bytes < 1024) continue;  // the table starts at 1 KiB too
      s.x.push_back(pt.bytes);
      s.y.push_back(pt.busbw_bytes_per_s);
    }
    if (!s.x.empty()) chart.series.push_back(s);
  }
  return RenderSvg(chart);
}

std::string ScalingChart(const Plan& p) {
  LineChart chart;
  chart.title = "Weak-scaling efficiency";
  chart.x = {"GPUs", AxisUnit::kCount, true, false};
  chart.y = {"efficiency", AxisUnit::kFraction, false, false, 0.1};
  Series s{"per-GPU throughput against the smallest point", {}, {}, false};
  for (const auto& pt : p.comm.scaling) {
    s.x.push_back(pt.gpus);
    s.y.push_back(pt.efficiency);
  }
  chart.series.push_back(s);
  return RenderSvg(chart);
}

std::string MemoryChart(const Plan& p) {
  BarChart chart;
  chart.title = "Memory per GPU by strategy";
  chart.limit = p.memory.configured.capacity_bytes;
  chart.limit_label = "GPU memory " + FormatBytes(chart.limit);
  chart.unit = AxisUnit::kBytes;
  for (const auto& b : p.memory.strategies) {
    chart.bars.push_back({std::string(model::StrategyName(b.strategy)),
                          {{"weights", b.states.weights_bytes},
                           {"grads", b.states.grads_bytes},
                           {"optimizer", b.states.optimizer_bytes},
                           {"gathered", b.gathered_bytes},
                           {"activations", b.activation_bytes},
                           {"overhead", b.reserved_bytes + b.fragmentation_bytes}}});
  }
  return RenderSvg(chart);
}

std::vector<Section> Build(const model::Spec& spec, const Plan& p) {
  const model::Cluster& c = spec.cluster;
  const model::Workload& w = spec.workload;
  std::vector<Section> doc;

  {
    Section s("Cluster");
    Table t = KeyValues();
    t.AddRow({"name", c.name});
    t.AddRow({"GPUs", fmt::format("{} = {} nodes x {} {}", spec.TotalGpus(), c.nodes.count,
                                  c.nodes.gpus_per_node, c.nodes.gpu.name)});
    t.AddRow({"GPU", fmt::format("{} {} {}: {} at {}, {} bf16 dense, {} TDP", c.nodes.gpu.vendor,
                                 c.nodes.gpu.architecture, c.nodes.gpu.form_factor,
                                 FormatBytes(c.nodes.gpu.memory_bytes),
                                 FormatByteRate(c.nodes.gpu.memory_bandwidth_bytes_per_s),
                                 FormatFlops(c.nodes.gpu.bf16_flop_per_s),
                                 FormatPower(c.nodes.gpu.tdp_w))});
    t.AddRow({"scale-up", fmt::format("{} {} per GPU", c.scale_up.type,
                                      FormatByteRate(c.scale_up.bandwidth_bytes_per_s))});
    t.AddRow(
        {"compute network",
         fmt::format(
             "{} x {} per node = {}", c.nodes.Ports(model::NicRole::kCompute),
             c.nodes.nics.empty() ? "-" : FormatBitRate(c.nodes.nics[0].port_speed_bytes_per_s),
             FormatBitRate(c.nodes.Bandwidth(model::NicRole::kCompute)))});
    t.AddRow({"workload",
              fmt::format(
                  "{} ({} params), {}, {}{} TP{} PP{} CP{} DP{}, micro {} x accum {} = "
                  "global {} sequences of {}{}{}",
                  w.model.name, FormatCount(p.memory.params.total),
                  model::PrecisionName(w.precision), model::StrategyName(w.strategy),
                  w.shard > 0 && w.shard < spec.DataParallel() * w.context
                      ? fmt::format(" (hybrid, shard groups of {})", w.shard)
                      : "",
                  w.tensor, w.pipeline, w.context, spec.DataParallel(), w.micro_batch,
                  w.accumulation, w.global_batch, w.model.sequence,
                  w.model.document_length > 0
                      ? fmt::format(", packed with documents of {} tokens", w.model.document_length)
                      : "",
                  w.model.lora.Enabled()
                      ? fmt::format(", LoRA rank {} on {} ({} trained, the rest frozen)",
                                    w.model.lora.rank, fmt::join(w.model.lora.Names(), ", "),
                                    FormatCount(p.memory.params.adapters))
                      : "")});
    s.tables.push_back(t);
    doc.push_back(s);
  }
  {
    Section s("Memory per GPU");
    Table t({"strategy", "weights", "grads", "optimizer", "gathered", "activations", "overhead",
             "total", "fits"});
    for (const auto& b : p.memory.strategies) {
      t.AddRow(
          {std::string(model::StrategyName(b.strategy)) + (b.strategy == w.strategy ? " *" : ""),
           FormatBytes(b.states.weights_bytes), FormatBytes(b.states.grads_bytes),
           FormatBytes(b.states.optimizer_bytes), FormatBytes(b.gathered_bytes),
           FormatBytes(b.activation_bytes), FormatBytes(b.reserved_bytes + b.fragmentation_bytes),
           FormatBytes(b.total_bytes), YesNo(b.fits)});
    }
    s.tables.push_back(t);
    s.notes.push_back(fmt::format(
        "* configured; micro-batch {}, activation checkpointing {}, capacity {}; largest "
        "micro-batch that fits: {}; cheapest strategy that fits: {}",
        w.micro_batch,
        w.recompute_layers > 0 ? fmt::format("full ({} layers of each stage)", w.recompute_layers)
                               : model::RecomputeLabel(w.recompute, w.recompute_modules),
        FormatBytes(p.memory.configured.capacity_bytes), p.memory.max_micro_batch,
        p.memory.cheapest_fitting ? std::string(model::StrategyName(*p.memory.cheapest_fitting))
                                  : "none"));
    if (const double q = plan::TeQuantizedWeightBytes(w, c.nodes.gpu.architecture); q > 0) {
      // Transformer Engine's quantized linear weights (plan::TeQuantizedWeightBytes), which the
      // weights column counts: the FP8 parameters themselves, or a copy beside bf16's; FSDP's
      // and ZeRO-3's shards count none.
      const std::string layouts = w.BlockScaled() ? "row-wise and column-wise, with block scales"
                                  : q == 1        ? "one copy for both layouts"
                                                  : "the data and its transpose";
      const std::string shards = w.Fp8ParamsFor(model::Strategy::kFsdp) ? "in 1 B" : "in bf16";
      s.notes.push_back(
          w.Fp8ParamsFor(model::Strategy::kZero1)
              ? fmt::format(
                    "weights: zero1 and zero2 store each linear weight quantized ({:.3g} B, {}; "
                    "{} parameters), ddp in bf16 with Transformer Engine's quantized copy beside "
                    "it; fsdp and zero3 shard it {}",
                    q, layouts, w.precision == model::Precision::kFp4 ? "NVFP4" : "FP8", shards)
              : fmt::format(
                    "weights: ddp, zero1 and zero2 keep each linear weight in bf16 with "
                    "Transformer "
                    "Engine's quantized copy beside it ({:.3g} B, {}); fsdp and zero3 shard it in "
                    "bf16",
                    q, layouts));
    }
    if (w.sharding_impl == model::ShardingImpl::kFsdp2 && w.Fp8ParamsFor(model::Strategy::kFsdp)) {
      // torchao's float8 all-gather (Workload::Fp8ParamsFor): FSDP2's gathers and gathered units
      // in FP8, its shards the fp32 parameters.
      s.notes.push_back(
          "weights: fsdp and zero3 gather each linear weight in FP8 (torchao's float8 "
          "all-gather, 1 B) and hold the gathered units so; their shards stay the fp32 "
          "parameters; zero2 (SHARD_GRAD_OP) and the others gather bf16");
    }
    if (w.pipeline > 1) {
      std::vector<std::string> ranks;
      for (const auto& b : p.memory.strategies) {
        ranks.push_back(fmt::format("{} the {} (rank {})", model::StrategyName(b.strategy),
                                    plan::PipelineRankName(b.pipeline_rank),
                                    b.pipeline_rank_index));
      }
      s.notes.push_back(fmt::format(
          "with {} pipeline stages each row is the rank that holds the most, with its own layers "
          "(the first also holds the embedding, the last the output layer): {}",
          w.pipeline, fmt::join(ranks, ", ")));
    }
    if (p.memory.configured.offloaded_bytes > 0) {
      s.notes.push_back(fmt::format(
          "activation offload: {} layers' activations in host memory, {} per GPU ({} per node), "
          "not in the activations above",
          w.activation_offload, FormatBytes(p.memory.configured.offloaded_bytes),
          FormatBytes(p.memory.configured.offloaded_bytes * c.nodes.gpus_per_node)));
    }
    doc.push_back(s);
  }
  {
    Section s("Compute");
    Table t = KeyValues();
    const auto& cp = p.compute;
    const auto& st = p.step;
    t.AddRow(
        {"FLOPs per token", fmt::format("{:.3g} model ({}), {:.3g} hardware", cp.per_token.model,
                                        spec.workload.model.lora.Enabled()
                                            ? "frozen matmuls 2 passes, adapters and attention 3"
                                            : "3 passes",
                                        cp.per_token.hardware)});
    t.AddRow({"tokens per step", fmt::format("{:.0f}", cp.tokens_per_step)});
    t.AddRow({"ideal step (100 % of peak)", FormatTime(cp.ideal_step_s)});
    t.AddRow(
        {"compute", fmt::format("{} (step model: GEMMs at the GPU's measured ceiling, "
                                "attention, element-wise work{})",
                                FormatTime(st.compute_s),
                                st.recompute_s > 0 ? ", recompute " + FormatTime(st.recompute_s)
                                                   : std::string())});
    if (st.contention_s > 0) {
      t.AddRow({"compute slowed by hidden comm", FormatTime(st.contention_s)});
    }
    if (st.sharding_copies_s > 0) {
      t.AddRow({"sharding casts and copies", FormatTime(st.sharding_copies_s)});
    }
    if (st.offload_s > 0) {
      t.AddRow({"activation offload (exposed)", FormatTime(st.offload_s)});
    }
    t.AddRow({"pipeline bubble", FormatTime(st.bubble_s)});
    t.AddRow(
        {"exposed communication",
         fmt::format("{} (TP {}, CP {}, EP {}, PP {}, DP {})", FormatTime(st.ExposedCommS()),
                     FormatTime(st.tp_comm_s), FormatTime(st.cp_comm_s), FormatTime(st.ep_comm_s),
                     FormatTime(st.pp_comm_s), FormatTime(st.dp_comm_s))});
    t.AddRow({"optimizer and overhead", FormatTime(st.optimizer_s + st.overhead_s)});
    t.AddRow({"expected step",
              FormatTime(st.step_s) + (p.step_model_error.empty() ? " (the step model, as sim step)"
                                                                  : " (at the stated MFU)")});
    // How far the step model's step can be trusted, as `sim step` says it (docs/sim.md).
    if (p.step_model_error.empty()) t.AddRow({"confidence", plan::RegimeText(st.regime)});
    t.AddRow(
        {"throughput", fmt::format("{:.0f} tokens/s ({:.0f} per GPU), MFU {}", st.tokens_per_s,
                                   st.tokens_per_s / spec.TotalGpus(), FormatPercent(st.mfu))});
    t.AddRow({w.mfu_stated ? "at the stated MFU"
                           : fmt::format("at MFU {} (no mfu: in the spec)", FormatPercent(cp.mfu)),
              fmt::format("{} step (compute {}, HFU {}, ceiling {}){}",
                          FormatTime(p.comm.step.step_s), FormatTime(cp.compute_step_s),
                          FormatPercent(cp.hfu), FormatPercent(cp.hfu_ceiling),
                          p.step_model_error.empty()
                              ? fmt::format(": {:+.0f} % against the model",
                                            (p.comm.step.step_s / st.step_s - 1) * 100)
                              : std::string())});
    s.tables.push_back(t);
    doc.push_back(s);
  }
  {
    Section s("Communication per step");
    const auto& net = p.comm.network;
    Table t({"traffic", "pattern", "group", "nodes", "buffer", "sent/GPU", "ring", "tree",
             "hidden by", "exposed"});
    for (const auto& tr : p.comm.step.traffic) {
      t.AddRow({tr.kind, tr.collectives, std::to_string(tr.group_size),
                std::to_string(tr.group_nodes), FormatBytes(tr.bytes_per_call),
                FormatBytes(tr.sent_bytes_per_gpu), FormatTime(tr.ring_s), FormatTime(tr.tree_s),
                FormatTime(tr.overlappable_s), FormatTime(tr.exposed_s)});
    }
    if (!t.empty()) s.tables.push_back(t);
    if (!t.empty()) {
      s.notes.push_back(
          "traffic per step; \"hidden by\" and \"exposed\" with compute at the stated MFU (the "
          "expected step's exposed communication is the step model's, under Compute)");
    }
    s.notes.push_back(fmt::format(
        "links: scale-up busbw {} per GPU ({} of peak), fabric {} per node ({} of peak)",
        FormatByteRate(net.intra_busbw_bytes_per_s), FormatPercent(net.intra_efficiency),
        FormatByteRate(net.inter_busbw_bytes_per_s), FormatPercent(net.inter_efficiency)));
    Table sc({"nodes", "GPUs", "step", "tokens/s", "efficiency"});
    for (const auto& pt : p.comm.scaling) {
      sc.AddRow({std::to_string(pt.nodes), std::to_string(pt.gpus), FormatTime(pt.step_s),
                 fmt::format("{:.0f}", pt.tokens_per_s), FormatPercent(pt.efficiency)});
    }
    s.tables.push_back(sc);
    doc.push_back(s);
  }
  {
    Section s("Expected all-reduce bus bandwidth (nccl-tests busbw)");
    Table t({"size", "1 node: time", "busbw", "algo", "cluster: time", "busbw", "algo"});
    for (size_t i = 0; i < p.comm.busbw_cluster.size() || i < p.comm.busbw_node.size(); ++i) {
      const double bytes = std::ldexp(1.0, static_cast<int>(i) + 3);
      // Powers of 4 from 1 KiB keep the text short; JSON has every power of 2.
      const int log2 = static_cast<int>(i) + 3;
      if (log2 < 10 || (log2 - 10) % 2 != 0) continue;
      std::vector<std::string> row = {FormatBytes(bytes)};
      for (const auto* sweep : {&p.comm.busbw_node, &p.comm.busbw_cluster}) {
        if (i < sweep->size()) {
          const auto& pt = (*sweep)[i];
          row.push_back(FormatTime(pt.time_s));
          row.push_back(FormatByteRate(pt.busbw_bytes_per_s));
          row.push_back(fmt::format("{}/{}", plan::AlgorithmName(pt.algorithm),
                                    plan::ProtocolName(pt.protocol)));
        } else {
          row.insert(row.end(), {"-", "-", "-"});
        }
      }
      t.AddRow(row);
    }
    s.tables.push_back(t);
    s.notes.push_back(fmt::format(
        "NCCL's choice of algorithm and protocol per size; protocol behaviour from the {}",
        p.comm.network.nccl.fitted_to));
    s.notes.push_back(fmt::format("4 MiB all-reduce over all GPUs: {} (rule of thumb: < 30 ms)",
                                  FormatTime(p.comm.allreduce_4mib_s)));
    doc.push_back(s);
  }
  {
    Section s("Storage");
    const auto& st = p.storage;
    Table t = KeyValues();
    t.AddRow({"input data",
              fmt::format("{} ({} per node; {} per sample)", FormatByteRate(st.input_bytes_per_s),
                          FormatByteRate(st.input_bytes_per_s_per_node),
                          FormatBytes(st.bytes_per_sample))});
    t.AddRow({"checkpoint", fmt::format("{} full state (14 B/param), {} weights only",
                                        FormatBytesDecimal(st.checkpoint_bytes),
                                        FormatBytesDecimal(st.weights_only_bytes))});
    t.AddRow({"every", fmt::format("{} to {}, {}", FormatTime(w.checkpoint_interval_s),
                                   st.target_tier.empty() ? "-" : st.target_tier,
                                   w.checkpoint_async ? "async" : "sync")});
    t.AddRow({"training stalls",
              fmt::format("{} per checkpoint ({} of the interval){}", FormatTime(st.stall_s),
                          FormatPercent(st.stall_fraction),
                          w.checkpoint_async ? fmt::format("; snapshot {} to host memory",
                                                           FormatTime(st.snapshot_s))
                                             : "")});
    if (st.hot_bytes_available_per_node > 0) {
      t.AddRow({"hot tier per node",
                fmt::format("{} needed for {} copies, {} available",
                            FormatBytesDecimal(st.hot_bytes_needed_per_node), w.keep_checkpoints,
                            FormatBytesDecimal(st.hot_bytes_available_per_node))});
    }
    s.tables.push_back(t);
    Table tiers({"tier", "kind", "write rate", "limited by", "write", "< 2 min", "restore"});
    for (const auto& tc : st.tiers) {
      tiers.AddRow({tc.tier, std::string(model::TierKindName(tc.kind)),
                    FormatByteRate(tc.write_bytes_per_s), tc.write_bound, FormatTime(tc.write_s),
                    YesNo(tc.under_2_min), FormatTime(tc.read_s)});
    }
    if (!tiers.empty()) s.tables.push_back(tiers);
    doc.push_back(s);
  }
  {
    Section s("Power and cooling");
    const auto& pw = p.power;
    Table t = KeyValues();
    t.AddRow({"node", fmt::format("{} max{}, {} training, {} idle", FormatPower(pw.node.max_w),
                                  pw.node.max_from_spec ? "" : " (estimated)",
                                  FormatPower(pw.node.load_w), FormatPower(pw.node.idle_w))});
    t.AddRow({"circuit",
              fmt::format("{:.0f} V {:.0f} A {}-phase x {} = {} continuous; {} "
                          "node(s) each; {} circuits ({} feed(s))",
                          c.facility.voltage_v, c.facility.current_a, c.facility.phases,
                          FormatPercent(c.facility.derating), FormatPower(pw.circuit_capacity_w),
                          pw.nodes_per_circuit, pw.circuits, c.facility.feeds)});
    t.AddRow(
        {"node current", fmt::format("{:.1f} A per phase at max", pw.node_current_per_phase_a)});
    t.AddRow({"IT load", fmt::format("{} training ({} GPU boards, {} fabric), {} idle, {} max",
                                     FormatPower(pw.it_load_w), FormatPower(pw.gpu_board_w),
                                     FormatPower(pw.fabric_w), FormatPower(pw.it_idle_w),
                                     FormatPower(pw.it_max_w))});
    t.AddRow({"facility",
              fmt::format("{} at PUE {:.2f}", FormatPower(pw.facility_load_w), c.facility.pue)});
    t.AddRow({"heat", fmt::format("{:.0f} BTU/h = {:.1f} tons of cooling", pw.heat_btu_per_h,
                                  pw.cooling_tons)});
    t.AddRow({"heat at nameplate maximum",
              fmt::format("{:.0f} BTU/h = {:.1f} tons: size cooling to survive this",
                          pw.heat_max_btu_per_h, pw.cooling_max_tons)});
    if (const plan::RackPower& r = pw.rack; r.racks > 0) {
      std::string trays;
      if (r.switch_trays > 0) {
        trays = fmt::format(
            "; {} NVLink switch trays in all{}", r.switch_trays,
            r.switch_chips > 0 ? fmt::format(" ({} NVSwitch chips)", r.switch_chips) : "");
      }
      t.AddRow({"racks", fmt::format("{} of {} nodes ({} GPUs){}", r.racks, r.nodes_per_rack,
                                     r.nodes_per_rack * c.nodes.gpus_per_node, trays)});
      t.AddRow({"per rack",
                fmt::format("{} training, {} max{}", FormatPower(r.load_w), FormatPower(r.max_w),
                            r.budget_w > 0 ? fmt::format(" of a {} budget", FormatPower(r.budget_w))
                                           : "")});
      std::string cooling = "air";
      if (r.liquid && r.liquid_fraction > 0) {
        cooling = fmt::format("liquid {} and air {} per rack at max ({} to liquid)",
                              FormatPower(r.liquid_max_w), FormatPower(r.air_max_w),
                              FormatPercent(r.liquid_fraction));
      } else if (r.liquid) {
        cooling = fmt::format(
            "liquid and air, {} per rack at max (the split is not given: "
            "racks.liquid_fraction)",
            FormatPower(r.max_w));
      } else {
        cooling = fmt::format("air, {} per rack at max", FormatPower(r.max_w));
      }
      t.AddRow({"rack cooling", cooling});
    }
    s.tables.push_back(t);
    Table circ({"common circuit", "continuous", "nodes each"});
    for (const auto& o : pw.common_circuits) {
      circ.AddRow({o.name, FormatPower(o.capacity_w), std::to_string(o.nodes_per_circuit)});
    }
    s.tables.push_back(circ);
    doc.push_back(s);
  }
  {
    Section s("Fabric");
    const auto& fb = p.fabric;
    Table t({"network", "switch", "endpoints", "tiers", "leaves", "spines", "cores", "switches",
             "cables", "optics"});
    auto row = [&](const char* name, const std::string& sw, const plan::FabricSize& f) {
      t.AddRow({name, sw, std::to_string(f.endpoints), std::to_string(f.tiers),
                std::to_string(f.leaves), std::to_string(f.spines), std::to_string(f.cores),
                std::to_string(f.switches), std::to_string(f.cables),
                std::to_string(f.transceivers)});
    };
    if (fb.compute_present) row("compute", fb.compute_switch, fb.compute);
    if (fb.storage_present) row("storage", fb.storage_switch, fb.storage);
    if (!t.empty()) s.tables.push_back(t);
    s.notes.push_back(fmt::format("switch power {}{}; fabric cost {}; compute bisection {}",
                                  FormatPower(fb.power_w),
                                  fb.power_unverified ? " (unverified catalog figures)" : "",
                                  fb.priced ? Money(fb.cost_usd)
                                            : "not priced (set costs.switch_usd, transceiver_usd, "
                                              "cable_usd)",
                                  FormatBitRate(fb.bisection_bytes_per_s)));
    doc.push_back(s);
  }
  {
    Section s("Cost");
    const auto& co = p.cost;
    Table t = KeyValues();
    if (co.has_capex) {
      t.AddRow({"capex", MoneyRange(co.capex_usd)});
    }
    t.AddRow({"opex per year",
              fmt::format("{}{} (energy at PUE {:.2f}: {})", Money(co.opex_usd_per_year),
                          co.opex_stated ? " stated" : " energy only", c.facility.pue,
                          Money(co.energy_usd_per_year))});
    t.AddRow({"GPU-hours per year", fmt::format("{:.0f} at {} utilisation", co.gpu_hours_per_year,
                                                FormatPercent(c.costs.utilization))});
    if (co.has_cloud) t.AddRow({"cloud rent per year", MoneyRange(co.cloud_usd_per_year)});
    if (co.has_capex) {
      t.AddRow({"build per year",
                fmt::format("{} ({:.0f}-year depreciation + opex)",
                            MoneyRange(co.build_usd_per_year), c.costs.depreciation_years)});
    }
    if (co.has_capex && co.has_cloud) t.AddRow({"break-even", Months(co.break_even_months)});
    if (co.has_capex) {
      t.AddRow({"per million tokens (build)",
                fmt::format("{:.3f} - {:.3f} USD", co.build_usd_per_million_tokens.low,
                            co.build_usd_per_million_tokens.high)});
    }
    if (co.has_cloud) {
      t.AddRow({"per million tokens (cloud)",
                fmt::format("{:.3f} - {:.3f} USD", co.cloud_usd_per_million_tokens.low,
                            co.cloud_usd_per_million_tokens.high)});
    }
    if (co.train_days > 0) {
      t.AddRow({"training run",
                fmt::format("{:.1f} days for {} tokens; {} in the cloud", co.train_days,
                            FormatCount(w.train_tokens), MoneyRange(co.train_cloud_usd))});
    }
    s.tables.push_back(t);
    doc.push_back(s);
  }
  {
    Section s("Findings");
    for (const auto& f : p.findings) {
      s.items.push_back(fmt::format("[{}] {}: {}. Fix: {}.", plan::SeverityName(f.severity), f.id,
                                    f.message, f.action));
    }
    s.wrap_items = true;
    if (s.items.empty()) s.notes.push_back("none");
    doc.push_back(s);
  }
  return doc;
}

}  // namespace

std::string PlanText(const model::Spec& spec, const Plan& plan) {
  std::string out = fmt::format("gpufleet plan: {} ({})\n", spec.cluster.name, spec.file);
  for (const auto& s : Build(spec, plan)) {
    out += "\n" + s.title + "\n" + std::string(DisplayWidth(s.title), '-') + "\n";
    for (const auto& t : s.tables) out += t.Text();
    for (const auto& n : s.notes) out += "  " + n + "\n";
    for (const auto& i : s.items) out += "  " + (s.wrap_items ? Wrap(i, 98, 4) : i) + "\n";
  }
  return out;
}

std::string PlanMarkdown(const model::Spec& spec, const Plan& plan) {
  std::string out =
      fmt::format("# gpufleet plan: {}\n\nSpec: `{}`\n", spec.cluster.name, spec.file);
  for (const auto& s : Build(spec, plan)) {
    out += "\n## " + s.title + "\n\n";
    for (const auto& t : s.tables) out += t.Markdown() + "\n";
    for (const auto& n : s.notes) out += n + "\n\n";
    for (const auto& i : s.items) out += "- " + i + "\n";
  }
  return out;
}

std::string PlanHtml(const model::Spec& spec, const Plan& plan) {
  std::vector<Section> doc = Build(spec, plan);
  for (auto& s : doc) {
    if (s.title == "Memory per GPU") s.charts.push_back(MemoryChart(plan));
    if (s.title == "Communication per step" && plan.comm.scaling.size() > 1) {
      s.charts.push_back(ScalingChart(plan));
    }
    if (s.title.rfind("Expected all-reduce", 0) == 0) s.charts.push_back(BusBwChart(plan));
  }
  std::string out;
  for (const auto& s : doc) {
    out += "<h2>" + EscapeXml(s.title) + "</h2>\n";
    for (const auto& t : s.tables) out += t.Html();
    for (const auto& c : s.charts) out += c;
    for (const auto& n : s.notes) out += "<p>" + EscapeXml(n) + "</p>\n";
    if (!s.items.empty()) {
      out += "<ul>\n";
      for (const auto& f : plan.findings) {
        out += fmt::format("<li class=\"{}\"><b>{}</b> <code>{}</code>: {}. <i>Fix:</i> {}.</li>\n",
                           plan::SeverityName(f.severity), plan::SeverityName(f.severity),
                           EscapeXml(f.id), EscapeXml(f.message), EscapeXml(f.action));
      }
      out += "</ul>\n";
    }
  }
  return HtmlPage("gpufleet plan: " + spec.cluster.name, "Spec: " + spec.file, out);
}

nlohmann::ordered_json PlanJson(const model::Spec& spec, const Plan& p) {
  using J = nlohmann::ordered_json;
  const model::Cluster& c = spec.cluster;
  const model::Workload& w = spec.workload;
  J j;
  j["schema"] = kPlanSchema;
  j["spec"] = {{"file", spec.file}, {"name", c.name}};
  j["cluster"] = {
      {"nodes", c.nodes.count},
      {"gpus_per_node", c.nodes.gpus_per_node},
      {"gpus", spec.TotalGpus()},
      {"gpu_model", c.nodes.gpu.name},
      {"gpu_memory_bytes", c.nodes.gpu.memory_bytes},
      {"gpu_peak_flop_per_s", p.compute.peak_flop_per_s},
      {"compute_bandwidth_bytes_per_s_per_node", c.nodes.Bandwidth(model::NicRole::kCompute)}};
  j["workload"] = {
      {"model", w.model.name},
      {"parameters", p.memory.params.total},
      {"precision", model::PrecisionName(w.precision)},
      {"strategy", model::StrategyName(w.strategy)},
      {"tensor", w.tensor},
      {"pipeline", w.pipeline},
      {"context", w.context},
      {"data_parallel", spec.DataParallel()},
      {"micro_batch", w.micro_batch},
      {"accumulation", w.accumulation},
      {"global_batch", w.global_batch},
      {"sequence", w.model.sequence},
      {"document_length", w.model.document_length},
      {"lora", w.model.lora.Enabled() ? J{{"rank", w.model.lora.rank},
                                          {"modules", J(w.model.lora.Names())},
                                          {"trained_parameters", p.memory.params.adapters}}
                                      : J()},
      {"activation_checkpointing", model::RecomputeName(w.recompute)},
      {"activation_checkpointing_layers",
       model::RecomputedLayers(w.recompute, w.recompute_layers,
                               model::StageLayers(w.model.layers, w.pipeline, w.pipeline_split))},
      {"activation_checkpointing_modules",
       w.recompute == model::Recompute::kSelective ? J(w.recompute_modules.Names()) : J::array()},
      {"shard_group", model::ShardGroup(w.shard, spec.DataParallel() * w.context)}};
  auto mem = [](const plan::MemoryBreakdown& b) {
    return J{{"strategy", model::StrategyName(b.strategy)},
             {"micro_batch", b.micro_batch},
             {"weights_bytes", b.states.weights_bytes},
             {"grads_bytes", b.states.grads_bytes},
             {"optimizer_bytes", b.states.optimizer_bytes},
             {"gathered_bytes", b.gathered_bytes},
             {"activation_bytes", b.activation_bytes},
             {"offloaded_bytes", b.offloaded_bytes},
             {"reserved_bytes", b.reserved_bytes},
             {"fragmentation_bytes", b.fragmentation_bytes},
             {"total_bytes", b.total_bytes},
             {"capacity_bytes", b.capacity_bytes},
             {"fits", b.fits},
             {"pipeline_rank", plan::PipelineRankName(b.pipeline_rank)},
             {"pipeline_rank_index", b.pipeline_rank_index}};
  };
  J strategies = J::array();
  for (const auto& b : p.memory.strategies) strategies.push_back(mem(b));
  j["memory"] = {
      {"params",
       {{"total", p.memory.params.total},
        {"per_layer", p.memory.params.per_layer},
        {"embedding", p.memory.params.embedding},
        {"output", p.memory.params.output}}},
      {"configured", mem(p.memory.configured)},
      {"max_micro_batch", p.memory.max_micro_batch},
      {"cheapest_fitting_strategy",
       p.memory.cheapest_fitting ? J(std::string(model::StrategyName(*p.memory.cheapest_fitting)))
                                 : J(nullptr)},
      {"strategies", strategies}};
  const auto& cp = p.compute;
  const auto& st = p.comm.step;
  const auto& ms = p.step;
  // sim step's regime (gpufleet.sim-step/v1), null where the step model gave no step.
  const bool modelled = p.step_model_error.empty();
  const J confidence = modelled ? J(plan::ConfidenceName(ms.regime.level)) : J(nullptr);
  const J outside = modelled ? J(ms.regime.reasons) : J(nullptr);
  j["compute"] = {{"model_flops_per_token", cp.per_token.model},
                  {"hardware_flops_per_token", cp.per_token.hardware},
                  {"tokens_per_step", cp.tokens_per_step},
                  {"model_flops_per_step", cp.model_flops_per_step},
                  {"ideal_step_s", cp.ideal_step_s},
                  {"compute_step_s", cp.compute_step_s},
                  {"mfu", cp.mfu},
                  {"hfu", cp.hfu},
                  {"hfu_ceiling", cp.hfu_ceiling},
                  {"mfu_stated", w.mfu_stated},
                  // The expected step: the step model's, as `sim step` (schema unchanged:
                  // these keys held the stated MFU's before issue 13).
                  {"bubble_s", ms.bubble_s},
                  {"exposed_comm_s", ms.ExposedCommS()},
                  {"step_s", ms.step_s},
                  {"tokens_per_s", ms.tokens_per_s},
                  {"effective_mfu", ms.mfu},
                  {"step_source", p.step_model_error.empty() ? "step model" : "stated mfu"},
                  {"step_model",
                   {{"compute_s", ms.compute_s},
                    {"recompute_s", ms.recompute_s},
                    {"tp_comm_s", ms.tp_comm_s},
                    {"cp_comm_s", ms.cp_comm_s},
                    {"ep_comm_s", ms.ep_comm_s},
                    {"pp_comm_s", ms.pp_comm_s},
                    {"dp_comm_s", ms.dp_comm_s},
                    {"contention_s", ms.contention_s},
                    {"sharding_copies_s", ms.sharding_copies_s},
                    {"offload_exposed_s", ms.offload_s},
                    {"bubble_s", ms.bubble_s},
                    {"optimizer_s", ms.optimizer_s},
                    {"overhead_s", ms.overhead_s},
                    {"error", p.step_model_error.empty() ? J(nullptr) : J(p.step_model_error)},
                    {"confidence", confidence},
                    {"outside", outside}}},
                  {"at_stated_mfu",
                   {{"bubble_s", st.bubble_s},
                    {"exposed_comm_s", st.exposed_comm_s},
                    {"step_s", st.step_s},
                    {"tokens_per_s", st.tokens_per_s}}}};
  J traffic = J::array();
  for (const auto& tr : st.traffic) {
    traffic.push_back({{"kind", tr.kind},
                       {"collectives", tr.collectives},
                       {"group_size", tr.group_size},
                       {"group_nodes", tr.group_nodes},
                       {"bytes_per_call", tr.bytes_per_call},
                       {"calls_per_step", tr.calls_per_step},
                       {"sent_bytes_per_gpu", tr.sent_bytes_per_gpu},
                       {"ring_s", tr.ring_s},
                       {"tree_s", tr.tree_s},
                       {"time_s", tr.time_s},
                       {"overlappable_s", tr.overlappable_s},
                       {"exposed_s", tr.exposed_s}});
  }
  J scaling = J::array();
  for (const auto& pt : p.comm.scaling) {
    scaling.push_back({{"nodes", pt.nodes},
                       {"gpus", pt.gpus},
                       {"step_s", pt.step_s},
                       {"tokens_per_s", pt.tokens_per_s},
                       {"efficiency", pt.efficiency}});
  }
  auto sweep = [](const std::vector<plan::BusBwPoint>& pts) {
    J a = J::array();
    for (const auto& pt : pts) {
      a.push_back({{"bytes", pt.bytes},
                   {"time_s", pt.time_s},
                   {"busbw_bytes_per_s", pt.busbw_bytes_per_s},
                   {"algorithm", plan::AlgorithmName(pt.algorithm)},
                   {"protocol", plan::ProtocolName(pt.protocol)}});
    }
    return a;
  };
  const auto& net = p.comm.network;
  j["communication"] = {
      {"network",
       {{"intra_busbw_bytes_per_s", net.intra_busbw_bytes_per_s},
        {"inter_busbw_bytes_per_s_per_node", net.inter_busbw_bytes_per_s},
        {"intra_efficiency", net.intra_efficiency},
        {"inter_efficiency", net.inter_efficiency},
        {"intra_alpha_s", net.intra_alpha_s},
        {"inter_alpha_s", net.inter_alpha_s},
        {"launch_s", net.launch_s}}},
      {"traffic", traffic},
      {"scaling", scaling},
      {"allreduce_4mib_s", p.comm.allreduce_4mib_s},
      {"expected_allreduce_busbw",
       {{"node", sweep(p.comm.busbw_node)}, {"cluster", sweep(p.comm.busbw_cluster)}}}};
  const auto& so = p.storage;
  J tiers = J::array();
  for (const auto& t : so.tiers) {
    tiers.push_back({{"tier", t.tier},
                     {"kind", model::TierKindName(t.kind)},
                     {"write_bytes_per_s", t.write_bytes_per_s},
                     {"write_bound", t.write_bound},
                     {"write_s", t.write_s},
                     {"read_s", t.read_s},
                     {"under_2_min", t.under_2_min}});
  }
  j["storage"] = {{"bytes_per_sample", so.bytes_per_sample},
                  {"input_bytes_per_s", so.input_bytes_per_s},
                  {"input_bytes_per_s_per_node", so.input_bytes_per_s_per_node},
                  {"checkpoint_bytes", so.checkpoint_bytes},
                  {"weights_only_bytes", so.weights_only_bytes},
                  {"checkpoint_tier", so.target_tier},
                  {"checkpoint_interval_s", w.checkpoint_interval_s},
                  {"checkpoint_async", w.checkpoint_async},
                  {"checkpoint_write_s", so.target_write_s},
                  {"snapshot_s", so.snapshot_s},
                  {"stall_s", so.stall_s},
                  {"stall_fraction", so.stall_fraction},
                  {"async_keeps_up", so.async_keeps_up},
                  {"hot_bytes_needed_per_node", so.hot_bytes_needed_per_node},
                  {"hot_bytes_available_per_node", so.hot_bytes_available_per_node},
                  {"tiers", tiers}};
  const auto& pw = p.power;
  J circuits = J::array();
  for (const auto& o : pw.common_circuits) {
    circuits.push_back({{"circuit", o.name},
                        {"capacity_w", o.capacity_w},
                        {"nodes_per_circuit", o.nodes_per_circuit}});
  }
  j["power"] = {{"node",
                 {{"gpu_w", pw.node.gpu_w},
                  {"cpu_w", pw.node.cpu_w},
                  {"platform_w", pw.node.platform_w},
                  {"max_w", pw.node.max_w},
                  {"load_w", pw.node.load_w},
                  {"idle_w", pw.node.idle_w},
                  {"max_from_spec", pw.node.max_from_spec}}},
                {"circuit_capacity_w", pw.circuit_capacity_w},
                {"nodes_per_circuit", pw.nodes_per_circuit},
                {"circuits", pw.circuits},
                {"node_current_per_phase_a", pw.node_current_per_phase_a},
                {"fabric_w", pw.fabric_w},
                {"it_load_w", pw.it_load_w},
                {"it_idle_w", pw.it_idle_w},
                {"it_max_w", pw.it_max_w},
                {"facility_load_w", pw.facility_load_w},
                {"heat_btu_per_h", pw.heat_btu_per_h},
                {"cooling_tons", pw.cooling_tons},
                {"heat_max_btu_per_h", pw.heat_max_btu_per_h},
                {"cooling_max_tons", pw.cooling_max_tons},
                {"common_circuits", circuits}};
  if (pw.rack.racks > 0) {
    const auto& r = pw.rack;
    j["power"]["racks"] = {{"racks", r.racks},
                           {"nodes_per_rack", r.nodes_per_rack},
                           {"switch_trays", r.switch_trays},
                           {"switch_chips", r.switch_chips},
                           {"switch_trays_w", r.switch_trays_w},
                           {"load_w_per_rack", r.load_w},
                           {"max_w_per_rack", r.max_w},
                           {"budget_w_per_rack", r.budget_w},
                           {"liquid", r.liquid},
                           {"liquid_fraction", r.liquid_fraction},
                           {"liquid_max_w_per_rack", r.liquid_max_w},
                           {"air_max_w_per_rack", r.air_max_w}};
  }
  auto fabric = [](const plan::FabricSize& f) {
    return J{{"endpoints", f.endpoints},
             {"radix", f.radix},
             {"down_ports", f.down_ports},
             {"up_ports", f.up_ports},
             {"tiers", f.tiers},
             {"leaves", f.leaves},
             {"spines", f.spines},
             {"cores", f.cores},
             {"pods", f.pods},
             {"switches", f.switches},
             {"cables", f.cables},
             {"transceivers", f.transceivers},
             {"max_endpoints", f.max_endpoints},
             {"fits", f.fits}};
  };
  const auto& fb = p.fabric;
  j["fabric"] = {{"compute", fb.compute_present ? fabric(fb.compute) : J(nullptr)},
                 {"storage", fb.storage_present ? fabric(fb.storage) : J(nullptr)},
                 {"power_w", fb.power_w},
                 {"power_unverified", fb.power_unverified},
                 {"cost_usd", fb.priced ? J(fb.cost_usd) : J(nullptr)},
                 {"bisection_bytes_per_s", fb.bisection_bytes_per_s}};
  const auto& co = p.cost;
  auto range = [](bool has, const plan::Money& m) {
    if (!has) return J(nullptr);
    auto num = [](double v) { return std::isfinite(v) ? J(v) : J(nullptr); };
    return J{{"low", num(m.low)}, {"high", num(m.high)}};
  };
  j["cost"] = {
      {"capex_usd", range(co.has_capex, co.capex_usd)},
      {"energy_usd_per_year", co.energy_usd_per_year},
      {"opex_usd_per_year", co.opex_usd_per_year},
      {"gpu_hours_per_year", co.gpu_hours_per_year},
      {"cloud_usd_per_year", range(co.has_cloud, co.cloud_usd_per_year)},
      {"build_usd_per_year", range(co.has_capex, co.build_usd_per_year)},
      {"break_even_months", range(co.has_capex && co.has_cloud, co.break_even_months)},
      {"tokens_per_year", co.tokens_per_year},
      {"build_usd_per_million_tokens", range(co.has_capex, co.build_usd_per_million_tokens)},
      {"cloud_usd_per_million_tokens", range(co.has_cloud, co.cloud_usd_per_million_tokens)}};
  J findings = J::array();
  for (const auto& f : p.findings) {
    findings.push_back({{"severity", plan::SeverityName(f.severity)},
                        {"id", f.id},
                        {"component", f.component},
                        {"message", f.message},
                        {"value", f.value},
                        {"limit", f.limit},
                        {"unit", f.unit},
                        {"action", f.action}});
  }
  j["findings"] = findings;
  return j;
}

}  // namespace gpufleet::report
