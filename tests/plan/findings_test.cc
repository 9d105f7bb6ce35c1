#include "plan/findings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "test_util.h"

namespace gpufleet::plan {
namespace {

const Finding* Find(const Plan& p, const std::string& id) {
  auto it = std::find_if(p.findings.begin(), p.findings.end(),
                         [&](const Finding& f) { return f.id == id; });
  return it == p.findings.end() ? nullptr : &*it;
}

Plan MustPlan(const model::Spec& s) {
  Result<Plan> p = MakePlan(s);
  if (!p) ADD_FAILURE() << p.error().message;
  return p ? *p : Plan{};
}

TEST(FindingsTest, ReferenceClusterHasNoCriticalFindings) {
  Plan p = MustPlan(testing::Reference());
  EXPECT_FALSE(p.HasCritical());
  // DESIGN.md asks for "sequence parallel" with FSDP and no tensor parallelism: flagged.
  EXPECT_NE(Find(p, "spec.sequence-parallel-without-tp"), nullptr);
  // 12.8 kW per 32 GPUs counts GPU boards only.
  const Finding* cooling = Find(p, "rule.cooling-12.8kw");
  ASSERT_NE(cooling, nullptr);
  EXPECT_GT(cooling->value, 1.25 * 12800);
  // The "DDP up to 7B" rule: on 80 GiB, DDP stops near 4B.
  const Finding* ddp = Find(p, "rule.ddp-limit");
  ASSERT_NE(ddp, nullptr);
  EXPECT_LT(ddp->value, 5e9);
  EXPECT_GT(ddp->value, 3e9);
}

TEST(FindingsTest, EveryExamplePlansWithoutCriticalFindings) {
  for (const char* f : {"reference-32gpu.yaml", "h100-8gpu-box.yaml", "h100-1024gpu.yaml",
                        "h100-16384gpu.yaml", "gb200-nvl72-576gpu.yaml"}) {
    Plan p = MustPlan(testing::Example(f));
    for (const auto& finding : p.findings) {
      EXPECT_NE(finding.severity, Severity::kCritical) << f << ": " << finding.message;
    }
  }
}

// Qwen3 30B-A3B on 8 B200s in MXFP8 as Megatron Bridge's 26.04.01 recipe runs it (16 experts a
// rank, 8,192 rows each at micro-batch 4): the experts' GEMMs one per expert, where Transformer
// Engine's fused grouped MLP would run them as one kernel. Named with the step it would give;
// not where the spec fuses them already, nor where the fusion cannot run (Hopper).
TEST(FindingsTest, PerExpertGemmsNameTheFusedGroupedMlpWhereItRuns) {
  const std::vector<std::string> b200 = {"nodes.count=1",
                                         "nodes.gpu.model=B200-SXM-180GB",
                                         "fabrics.scale_up.type=nvlink5",
                                         "fabrics.scale_up.bandwidth=1800 GB/s",
                                         "workload.parallel.expert=8",
                                         "workload.batch.micro=4",
                                         "workload.batch.global=512",
                                         "workload.software.fp8_recipe=mxfp8",
                                         "workload.software.moe_dispatcher=hybridep"};
  const std::string file = std::string(GPUFLEET_SOURCE_DIR) + "/examples/h100-16gpu-moe.yaml";
  Result<model::Spec> s = model::LoadSpec(file, b200);
  ASSERT_TRUE(s) << s.error().message;
  Plan p = MustPlan(*s);
  const Finding* f = Find(p, "compute.moe-expert-gemms");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_THAT(f->message, ::testing::HasSubstr("(16 a rank)"));
  EXPECT_THAT(f->action, ::testing::HasSubstr("software.moe_expert_gemm: fused"));
  model::Spec fused = *s;
  fused.workload.moe_fused_grouped_mlp = true;
  const Plan q = MustPlan(fused);
  EXPECT_NEAR(f->value, q.step.step_s / p.step.step_s, 1e-9);
  EXPECT_LT(f->value, 0.95);
  EXPECT_EQ(Find(q, "compute.moe-expert-gemms"), nullptr);
  // Hopper (the example as written): no fused grouped MLP to name.
  EXPECT_EQ(Find(MustPlan(testing::Example("h100-16gpu-moe.yaml")), "compute.moe-expert-gemms"),
            nullptr);
}

// When the experts' all-to-all is most of the exposed communication, the fix names what
// shortens it that the spec does not already do: HybridEP's once-per-node dispatch (where EP
// crosses nodes), EP overlap.
TEST(FindingsTest, ExposedAllToAllNamesTheDispatcherAndTheOverlapNotYetUsed) {
  model::Spec s = testing::Example("h100-16gpu-moe.yaml");  // EP16 across 2 nodes, all-to-all
  Plan p = MustPlan(s);
  const Finding* f = Find(p, "network.exposed-communication");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->action.find("moe_dispatcher: hybridep"), std::string::npos) << f->action;
  EXPECT_NE(f->action.find("moe_comm_overlap: true"), std::string::npos) << f->action;
  s.workload.moe_dedup = true;
  p = MustPlan(s);
  f = Find(p, "network.exposed-communication");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->action.find("moe_dispatcher"), std::string::npos) << f->action;
  EXPECT_NE(f->action.find("moe_comm_overlap: true"), std::string::npos) << f->action;
  // EP inside a node (on NVLink a twentieth as fast, so that it is still exposed): HybridEP's
  // deduplication is not named, whose measured rate there is close to NCCL's.
  s.workload.moe_dedup = false;
  s.workload.expert = 8;
  s.cluster.scale_up.bandwidth_bytes_per_s /= 20;
  p = MustPlan(s);
  f = Find(p, "network.exposed-communication");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->action.find("moe_dispatcher"), std::string::npos) << f->action;
  EXPECT_NE(f->action.find("experts' all-to-all"), std::string::npos) << f->action;
}

// Overlapping the parameter gather with the optimizer step: with virtual stages (the example's
// five) the other chunks' steps run beside the first chunk's gather, no finding; without them the
// forward waits for the whole gather, a warning that says how much it exposes.
TEST(FindingsTest, ParamGatherAfterTheOptimizerStepWithoutVirtualStagesWarns) {
  model::Spec s = testing::Example("h100-1024gpu.yaml");
  s.workload.optimizer_step_gather = model::OptimizerStepGather::kAlways;
  EXPECT_EQ(Find(MustPlan(s), "network.param-gather-after-optimizer"), nullptr);
  s.workload.virtual_stages = 1;
  const Plan p = MustPlan(s);
  const Finding* f = Find(p, "network.param-gather-after-optimizer");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->value, p.step.dp_comm_s);
  s.workload.optimizer_step_gather = model::OptimizerStepGather::kNever;
  EXPECT_LT(MustPlan(s).step.dp_comm_s, p.step.dp_comm_s);
  EXPECT_EQ(Find(MustPlan(s), "network.param-gather-after-optimizer"), nullptr);
}

// A bubble over a tenth of the step names the interleavings the layers allow: 80 layers over
// PP8 split evenly into 2, 5 or 10 chunks per rank; Llama 3.1 405B's 126 layers interleave over
// PP8 only with the embedding and the loss counted in the split (128 slots: 2, 4, 8), 127 with
// the embedding alone; 14 layers and both (2 slots a rank) cannot go past 2 chunks.
TEST(FindingsTest, PipelineBubbleNamesTheVirtualStagesTheLayersAllow) {
  model::Spec s = testing::Example("h100-1024gpu.yaml");  // 80 layers, TP8
  s.workload.pipeline = 8;
  s.workload.virtual_stages = 1;
  s.workload.accumulation = 8;
  s.workload.global_batch = 8 * 16;
  auto advice = [&] {
    const Plan p = MustPlan(s);
    const Finding* f = Find(p, "compute.pipeline-bubble");
    EXPECT_NE(f, nullptr);
    return f != nullptr ? f->action : std::string();
  };
  std::string a = advice();
  EXPECT_THAT(a, ::testing::HasSubstr("virtual_stages 2, 5, 10 fit"));
  EXPECT_THAT(a, ::testing::HasSubstr("10x at 10"));
  EXPECT_THAT(a, ::testing::Not(::testing::HasSubstr("micro-batches a step or more")));
  s.workload.model.layers = 126;
  a = advice();
  EXPECT_THAT(a, ::testing::HasSubstr("126 layers interleave over pipeline 8 only with "
                                      "the embedding and the loss counted"));
  EXPECT_THAT(a, ::testing::HasSubstr("embedding_in_pipeline_split, loss_in_pipeline_split"));
  EXPECT_THAT(a, ::testing::HasSubstr("virtual_stages 2, 4, 8 fit"));
  s.workload.model.layers = 127;
  a = advice();
  EXPECT_THAT(a, ::testing::HasSubstr("only with the embedding counted"));
  EXPECT_THAT(a, ::testing::HasSubstr("(workload.parallel.embedding_in_pipeline_split: true"));
  s.workload.model.layers = 14;
  s.workload.pipeline_split = {.embedding = true, .loss = true};
  s.workload.virtual_stages = 2;  // one layer a chunk: nothing left to interleave
  EXPECT_THAT(advice(),
              ::testing::HasSubstr("no virtual_stages above 2 divides 14 layers over pipeline 8"));
}

// Plain 1F1B waits for each micro-batch's pipeline sends; on a slow fabric they are most of
// what the step exposes, and the finding says so and names the interleaving that would hide
// them (80 layers over PP16: 5 a rank, so 5 chunks of one layer). Interleaved, it does not, and
// the pipeline exposes 55 % of what it did.
TEST(FindingsTest, ExposedPipelineSendsNameInterleaving) {
  std::vector<model::SpecOverride> set;
  for (const char* o : {"workload.parallel.pipeline=16", "workload.parallel.virtual_stages=1",
                        "workload.parallel.tensor=2", "workload.batch.accumulation=128",
                        "nodes.nics[0].speed=25 Gb/s", "fabrics.compute.speed=25 Gb/s"}) {
    auto parsed = model::ParseOverride(o);
    ASSERT_TRUE(parsed) << parsed.error().message;
    set.push_back(*parsed);
  }
  auto spec =
      model::LoadSpecFile(std::string(GPUFLEET_SOURCE_DIR) + "/examples/h100-1024gpu.yaml", set);
  ASSERT_TRUE(spec) << spec.error().message;
  Plan p = MustPlan(*spec);
  const Finding* f = Find(p, "network.exposed-communication");
  ASSERT_NE(f, nullptr);
  EXPECT_GT(p.step.pp_comm_s, 0.5 * p.step.ExposedCommS());
  EXPECT_THAT(f->action, ::testing::HasSubstr("most of it is the pipeline's sends, which plain "
                                              "1F1B waits for"));
  EXPECT_THAT(f->action, ::testing::HasSubstr("interleave: virtual_stages 5 fit"));
  const double plain_sends = p.step.pp_comm_s;
  spec->workload.virtual_stages = 5;
  p = MustPlan(*spec);
  // Five chunks send five times as often, a tenth of each exposed (pp_p2p_exposed), beside the
  // fill and drain: (128 x 2 x 5 x 0.1 + 2 x 15) / (128 x 2 + 2 x 15) of plain 1F1B's.
  EXPECT_NEAR(p.step.pp_comm_s / plain_sends, (128 * 2 * 5 * 0.1 + 30) / (128 * 2 + 30.0), 1e-6);
  f = Find(p, "network.exposed-communication");
  if (f != nullptr) {
    EXPECT_THAT(f->action, ::testing::Not(::testing::HasSubstr("pipeline's sends")));
  }
}

// FP8 attention where cuDNN's measured FP8 kernel is slower than its BF16 one warns, with the
// measured ratio: Hopper from about 5,500 tokens per kernel, block scaling at short lengths.
TEST(FindingsTest, Fp8AttentionSlowerThanBf16Warns) {
  model::Spec s = testing::Example("h100-1024gpu.yaml");  // sequence 4,096
  s.workload.precision = model::Precision::kFp8;
  s.workload.fp8_recipe = model::Fp8Recipe::kCurrent;
  s.workload.fp8_attention = true;
  EXPECT_EQ(Find(MustPlan(s), "compute.fp8-attention-slower"), nullptr);  // 1.075x at 4,096
  s.workload.model.sequence = 16384;
  const Plan slow = MustPlan(s);
  const Finding* f = Find(slow, "compute.fp8-attention-slower");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NEAR(f->value, (6.531 + 19.002) / (4.357 + 29.422), 1e-9);  // cuDNN 9.19 on H200
  EXPECT_THAT(f->message, ::testing::HasSubstr("0.76x BF16 attention's speed on Hopper at 16384"));
  s.workload.context = 2;  // each kernel sees 8,192 tokens: 0.90x
  const Plan ring = MustPlan(s);
  ASSERT_NE(Find(ring, "compute.fp8-attention-slower"), nullptr);
  EXPECT_NEAR(Find(ring, "compute.fp8-attention-slower")->value, (1.708 + 5.083) / (1.141 + 6.392),
              1e-9);
  s.workload.fp8_attention = false;
  EXPECT_EQ(Find(MustPlan(s), "compute.fp8-attention-slower"), nullptr);
  model::Spec gb = testing::Example("gb200-nvl72-576gpu.yaml");  // sequence 8,192
  gb.workload.precision = model::Precision::kFp8;
  gb.workload.fp8_recipe = model::Fp8Recipe::kMxfp8;
  gb.workload.fp8_attention = true;
  gb.workload.model.sequence = 4096;
  const Plan block_scaled = MustPlan(gb);
  const Finding* mx = Find(block_scaled, "compute.fp8-attention-slower");
  ASSERT_NE(mx, nullptr);
  EXPECT_THAT(mx->action, ::testing::HasSubstr("NVTE_DPA_FP8_RECIPE=Float8CurrentScaling"));
  gb.workload.fp8_recipe = model::Fp8Recipe::kCurrent;  // per-tensor: 1.06x at 4,096
  EXPECT_EQ(Find(MustPlan(gb), "compute.fp8-attention-slower"), nullptr);
  // The same per-tensor FP8 attention on a model whose every layer is windowed: its backward
  // runs the whole square there, and BF16 attention gives the shorter step.
  gb.workload.model.sliding_window = 128;
  gb.workload.model.sliding_window_layers = gb.workload.model.layers;
  const Plan windowed = MustPlan(gb);
  const Finding* w = Find(windowed, "compute.fp8-attention-slower");
  ASSERT_NE(w, nullptr);
  EXPECT_THAT(w->message, ::testing::HasSubstr("whole 4096-token square"));
  EXPECT_LT(w->value, 1);
  model::Spec bf16 = gb;
  bf16.workload.fp8_attention = false;
  EXPECT_NEAR(w->value, MustPlan(bf16).step.step_s / windowed.step.step_s, 1e-12);
  // In packed documents no longer than the window no tile lies outside it: the windowed warning
  // goes; the kernels, 128 tokens each, take the ratio cuDNN measures at its shortest, 2,048,
  // where per-tensor FP8 runs at 0.988x on Blackwell, and the message says so.
  gb.workload.model.document_length = 128;
  const Plan packed = MustPlan(gb);
  const Finding* p = Find(packed, "compute.fp8-attention-slower");
  ASSERT_NE(p, nullptr);
  EXPECT_THAT(p->message, ::testing::Not(::testing::HasSubstr("square")));
  EXPECT_THAT(p->message,
              ::testing::HasSubstr("at 128 tokens per kernel (cuDNN's measured "
                                   "forward + backward, at 2048, the shortest it times"));
  EXPECT_NEAR(p->value, (0.125 + 0.382) / (0.096 + 0.417), 1e-9);
}

// GB200 NVL72: tensor parallel 8 over trays of 4 GPUs stays on NVLink inside the rack's domain
// (no warning); past the domain it warns naming it. A rack over its power budget is critical at
// the training draw, a warning when only the nameplate maximum exceeds it; switch trays whose
// draw is not given are named.
TEST(FindingsTest, RackScaleDomainAndRackPower) {
  model::Spec s = testing::Example("gb200-nvl72-576gpu.yaml");
  Plan p = MustPlan(s);
  EXPECT_EQ(Find(p, "network.tensor-parallel-across-nodes"), nullptr);
  EXPECT_EQ(Find(p, "power.rack-exceeds-budget"), nullptr);  // 97.2 kW of 132 kW
  ASSERT_NE(Find(p, "power.switch-trays-not-counted"), nullptr);
  EXPECT_EQ(Find(p, "power.switch-trays-not-counted")->value, 72);
  model::Spec hot = s;
  hot.cluster.rack.power_w = 95000;  // between the training draw and the maximum
  const Plan warm = MustPlan(hot);
  const Finding* f = Find(warm, "power.rack-exceeds-budget");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  hot.cluster.rack.power_w = 60000;
  const Plan over = MustPlan(hot);
  ASSERT_NE(Find(over, "power.rack-exceeds-budget"), nullptr);
  EXPECT_EQ(Find(over, "power.rack-exceeds-budget")->severity, Severity::kCritical);
  model::Spec wide = s;
  wide.cluster.scale_up.domain = 4;  // NVLink inside a tray only
  wide.cluster.rack.nodes = 18;
  const Plan narrow = MustPlan(wide);
  const Finding* tp = Find(narrow, "network.tensor-parallel-across-nodes");
  ASSERT_NE(tp, nullptr);
  EXPECT_EQ(tp->limit, 4);
}

TEST(FindingsTest, NameThatClaimsTheWrongGpuCount) {
  // "a name that claims 32 GPUs over 4 nodes x 4 GPUs"
  model::Spec s = testing::Reference();
  s.cluster.nodes.gpus_per_node = 4;
  s.workload.global_batch = s.workload.micro_batch * s.workload.accumulation * 16;
  Plan p = MustPlan(s);
  const Finding* f = Find(p, "spec.name-gpu-count");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->value, 16);
  EXPECT_EQ(f->limit, 32);
}

TEST(FindingsTest, DdpAboveSevenBillionAndOutOfMemory) {
  model::Spec s = testing::Reference();
  s.workload.strategy = model::Strategy::kDdp;
  Plan p = MustPlan(s);
  EXPECT_NE(Find(p, "strategy.ddp-above-7b"), nullptr);
  const Finding* oom = Find(p, "memory.does-not-fit");
  ASSERT_NE(oom, nullptr);
  EXPECT_EQ(oom->severity, Severity::kCritical);
  EXPECT_TRUE(p.HasCritical());
}

// A hybrid-sharded spec that does not fit: the reference's 13B in shard groups of 2 holds 8 B per
// parameter of states (104 GB) at any micro-batch, where ZeRO-1 over all 32 ranks fits. The
// strategy table shards over every rank, so the fix drops the shard group too (zero1 refuses one).
TEST(FindingsTest, OutOfMemoryWithHybridShardingDropsTheShardGroup) {
  model::Spec s = testing::Reference();
  s.workload.shard = 2;
  Plan p = MustPlan(s);
  const Finding* oom = Find(p, "memory.does-not-fit");
  ASSERT_NE(oom, nullptr);
  EXPECT_EQ(oom->action, "use strategy zero1 and drop workload.parallel.shard");
}

TEST(FindingsTest, EthernetAtScaleSlowCheckpointAndNoStorageNetwork) {
  model::Spec s = testing::Example("h100-1024gpu.yaml");
  s.cluster.compute_fabric.type = model::FabricType::kRoCE;
  s.workload.checkpoint_async = false;
  s.cluster.storage[1].write_bytes_per_s = 5e9;  // 69B x 14 B = 966 GB at 5 GB/s = 193 s
  std::erase_if(s.cluster.nodes.nics,
                [](const model::NicGroup& n) { return n.role == model::NicRole::kStorage; });
  Plan p = MustPlan(s);
  EXPECT_NE(Find(p, "network.roce-at-scale"), nullptr);
  const Finding* ckpt = Find(p, "storage.checkpoint-over-2min");
  ASSERT_NE(ckpt, nullptr);
  EXPECT_EQ(ckpt->severity, Severity::kCritical);  // sync: training stops meanwhile
  EXPECT_GT(ckpt->value, 120);
  EXPECT_NE(Find(p, "network.no-storage-network"), nullptr);
}

TEST(FindingsTest, SlowTcpFabricBreaksTheFourMebibyteRule) {
  model::Spec s = testing::Example("h100-16384gpu.yaml");
  s.cluster.compute_fabric.type = model::FabricType::kEthernet;
  s.cluster.compute_fabric.switch_model.link_layer = "ethernet";
  Plan p = MustPlan(s);
  EXPECT_NE(Find(p, "network.tcp-ethernet"), nullptr);
  EXPECT_LT(p.comm.allreduce_4mib_s, 0.030);                // tree latency keeps it under 30 ms...
  s.cluster.nodes.nics[0].port_speed_bytes_per_s = 1.25e6;  // ...a 10 Mb/s link does not
  s.cluster.compute_fabric.speed_bytes_per_s = 1.25e6;
  Plan slow = MustPlan(s);
  const Finding* f = Find(slow, "network.allreduce-4mib");
  ASSERT_NE(f, nullptr);
  EXPECT_GT(f->value, 0.030);
}

TEST(FindingsTest, ImplausibleMfuAndUndersizedCircuit) {
  model::Spec s = testing::Reference();
  s.workload.mfu = 0.70;  // HFU 93 % with full recompute > 86.9 % MAMF
  s.workload.mfu_stated = true;
  s.cluster.facility.voltage_v = 120;
  s.cluster.facility.current_a = 20;
  s.cluster.facility.phases = 1;
  Plan p = MustPlan(s);
  EXPECT_NE(Find(p, "compute.mfu-above-ceiling"), nullptr);
  EXPECT_NE(Find(p, "power.node-exceeds-circuit"), nullptr);
  EXPECT_EQ(p.findings.front().severity, Severity::kCritical);  // most severe first
}

// The default MFU (45 %, for the traffic view) is not the user's: on NVFP4 on Blackwell Ultra,
// whose FP4 ceiling is 46 % of its printed peak, it would imply an HFU above it with
// recomputation, so the plan's compute runs at the ceiling instead, and says nothing; stated, the
// same MFU is critical.
TEST(FindingsTest, OnlyAStatedMfuIsHeldToTheCeiling) {
  model::Spec s = testing::Example("gb200-nvl72-576gpu.yaml");
  const model::GpuSpec* gb300 = model::Catalog::Builtin().FindGpu("GB300-NVL72");
  ASSERT_NE(gb300, nullptr);
  s.cluster.nodes.gpu = *gb300;
  s.workload.precision = model::Precision::kFp4;
  Plan quiet = MustPlan(s);
  EXPECT_LT(quiet.compute.mfu, s.workload.mfu);
  EXPECT_NEAR(quiet.compute.hfu, quiet.compute.hfu_ceiling, 1e-12);
  EXPECT_NEAR(quiet.compute.compute_step_s * quiet.compute.mfu, quiet.compute.ideal_step_s, 1e-9);
  EXPECT_EQ(Find(quiet, "compute.mfu-above-ceiling"), nullptr);
  s.workload.mfu_stated = true;
  const Plan stated = MustPlan(s);
  EXPECT_EQ(stated.compute.mfu, s.workload.mfu);
  EXPECT_GT(stated.compute.hfu, stated.compute.hfu_ceiling);
  EXPECT_NE(Find(stated, "compute.mfu-above-ceiling"), nullptr);
}

TEST(FindingsTest, ModelThatFitsNowhereIsAnInputError) {
  model::Spec s = testing::Reference();
  s.workload.model.layers = 400;  // ~128B params: 16 B x 128e9 / 32 > 80 GiB
  Result<Plan> p = MakePlan(s);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(p.error().message.find("even fully sharded"), std::string::npos);
  EXPECT_EQ(p.error().message.rfind("<reference>:", 0), 0u);
  // It names the fewest GPUs that would hold it, not only "add parallelism".
  EXPECT_NE(p.error().message.find("it needs at least"), std::string::npos) << p.error().message;
  EXPECT_EQ(MinimumNodes(s) * s.cluster.nodes.gpus_per_node % 8, 0);
  model::Spec bigger = s;
  bigger.cluster.nodes.count = MinimumNodes(s);
  EXPECT_TRUE(MakePlan(bigger)) << "the minimum it names must plan";
  bigger.cluster.nodes.count /= 2;
  EXPECT_FALSE(MakePlan(bigger)) << "and half of it must not";
}

// Issue 14's cross-checks: a NIC faster than its PCIe slot, a scale-up fabric the GPU does not
// speak, cooling at the nameplate maximum.
TEST(FindingsTest, NicSlotScaleUpAndCoolingCrossChecks) {
  model::Spec s = testing::Reference();  // A100 (PCIe Gen4) with 2-port 400 Gb/s ConnectX-7s
  Plan p = MustPlan(s);
  const Finding* nic = Find(p, "network.nic-exceeds-pcie");
  ASSERT_NE(nic, nullptr);
  EXPECT_NE(nic->message.find("PCIe Gen4 x16 slot, which carries 252 Gb/s"), std::string::npos)
      << nic->message;
  EXPECT_EQ(Find(p, "fabric.scale-up-mismatch"), nullptr);
  EXPECT_GT(p.power.cooling_max_tons, p.power.cooling_tons);
  EXPECT_NEAR(p.power.heat_max_btu_per_h / p.power.heat_btu_per_h,
              p.power.it_max_w / p.power.it_load_w, 1e-9);
  model::Spec b200 = s;
  b200.cluster.nodes.gpu = *model::Catalog::Builtin().FindGpu("B200-SXM-180GB");
  Plan q = MustPlan(b200);
  const Finding* mismatch = Find(q, "fabric.scale-up-mismatch");
  ASSERT_NE(mismatch, nullptr);
  EXPECT_EQ(mismatch->severity, Severity::kCritical);
  EXPECT_NE(mismatch->message.find("speaks nvlink5, but fabrics.scale_up says nvlink3"),
            std::string::npos);
  // Gen5 carries 504 Gb/s per direction: still short of 2 x 400 Gb/s.
  EXPECT_NE(Find(q, "network.nic-exceeds-pcie"), nullptr);  // 800 Gb/s > 504 Gb/s
}

// Offloaded activations live in the node's host memory: more than the node has is critical.
TEST(FindingsTest, ActivationOffloadBeyondHostMemoryIsCritical) {
  model::Spec s = testing::Reference();
  s.workload.recompute = model::Recompute::kNone;
  s.workload.activation_offload = 30;
  s.cluster.nodes.memory_bytes = 2048 * testing::kGiB;
  EXPECT_EQ(Find(MustPlan(s), "memory.offload-exceeds-host"), nullptr);
  s.cluster.nodes.memory_bytes = 64 * testing::kGiB;
  const Plan p = MustPlan(s);
  const Finding* f = Find(p, "memory.offload-exceeds-host");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_DOUBLE_EQ(f->value, p.memory.configured.offloaded_bytes * s.cluster.nodes.gpus_per_node);
}

// FP8 without FP8 parameters: Transformer Engine's quantized copy of each linear weight sits
// beside the bf16 one, and the plan says what FP8 parameters would save. The MoE example on
// megatron-core-2024 (whose default is off) at zero1: info, the saving the zero1 row's difference;
// in nemo-2025 (on) nothing; with the memory cut so that only FP8 parameters fit, a warning.
TEST(FindingsTest, Fp8ParametersWouldDropTheQuantizedCopy) {
  model::Spec s = testing::Example("h100-16gpu-moe.yaml");
  EXPECT_EQ(Find(MustPlan(s), "memory.fp8-parameters"), nullptr);
  s.workload.stack = "megatron-core-2024";
  s.workload.fp8_param_gather = false;
  model::Spec on = s;
  on.workload.fp8_param_gather = true;
  const double off_bytes =
      EstimateMemory(s, s.workload.strategy, 1, s.workload.recompute).total_bytes;
  const double on_bytes =
      EstimateMemory(on, s.workload.strategy, 1, s.workload.recompute).total_bytes;
  ASSERT_GT(off_bytes, on_bytes);
  const Plan roomy = MustPlan(s);
  const Finding* f = Find(roomy, "memory.fp8-parameters");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_DOUBLE_EQ(f->value, off_bytes - on_bytes);
  s.cluster.nodes.gpu.memory_bytes = (off_bytes + on_bytes) / 2;
  const Plan tight = MustPlan(s);
  ASSERT_FALSE(tight.memory.configured.fits);
  f = Find(tight, "memory.fp8-parameters");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_THAT(f->message, ::testing::HasSubstr("which fits"));
  EXPECT_THAT(f->message, ::testing::HasSubstr("quantized copy of each linear weight beside"));
  EXPECT_THAT(f->action, ::testing::HasSubstr("--fp8-param-gather"));
  // FSDP with per-tensor FP8: no copy beside its bf16 shards, which FP8 parameters halve.
  model::Spec fsdp = s;
  fsdp.workload.strategy = model::Strategy::kFsdp;
  fsdp.cluster.nodes.gpu.memory_bytes = 80 * testing::kGiB;
  const Plan sharded = MustPlan(fsdp);
  f = Find(sharded, "memory.fp8-parameters");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->message, ::testing::HasSubstr("sharded and gathered in bf16; FP8 parameters would "
                                               "keep them in 1 byte"));
  // BF16 has no copy to drop.
  s.workload.precision = model::Precision::kBf16;
  EXPECT_EQ(Find(MustPlan(s), "memory.fp8-parameters"), nullptr);
}

}  // namespace
}  // namespace gpufleet::plan
