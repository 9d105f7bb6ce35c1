// The reference cluster's JSON plan against tests/golden/plan-reference.json. Numbers compare
// with a relative tolerance of 1e-9 (libm differences); everything else exactly.
// Regenerate after an intended change: GPUFLEET_UPDATE_GOLDEN=1 ./build/dev/tests/report_test

#include "report/plan_report.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

namespace gpufleet::report {
namespace {

const std::string kGolden = std::string(GPUFLEET_SOURCE_DIR) + "/tests/golden/plan-reference.json";

void ExpectSame(const nlohmann::ordered_json& want, const nlohmann::ordered_json& got,
                const std::string& path) {
  if (want.is_number() && got.is_number()) {
    const double a = want.get<double>();
    const double b = got.get<double>();
    EXPECT_LE(std::fabs(a - b), 1e-9 * std::max(std::fabs(a), std::fabs(b)) + 1e-12)
        << path << ": golden " << a << ", now " << b;
    return;
  }
  ASSERT_EQ(want.type(), got.type()) << path;
  if (want.is_object()) {
    ASSERT_EQ(want.size(), got.size()) << path << ": keys differ";
    for (auto it = want.begin(); it != want.end(); ++it) {
      ASSERT_TRUE(got.contains(it.key())) << path << "." << it.key() << " missing";
      ExpectSame(it.value(), got[it.key()], path + "." + it.key());
    }
  } else if (want.is_array()) {
    ASSERT_EQ(want.size(), got.size()) << path;
    for (size_t i = 0; i < want.size(); ++i) {
      ExpectSame(want[i], got[i], path + "[" + std::to_string(i) + "]");
    }
  } else {
    EXPECT_EQ(want, got) << path;
  }
}

nlohmann::ordered_json ReferenceJson() {
  Result<model::Spec> spec = model::ReferenceSpec();
  EXPECT_TRUE(spec);
  Result<plan::Plan> plan = plan::MakePlan(*spec);
  EXPECT_TRUE(plan);
  return PlanJson(*spec, *plan);
}

TEST(PlanReportTest, ReferenceJsonMatchesTheGoldenFile) {
  nlohmann::ordered_json got = ReferenceJson();
  if (const char* update = std::getenv("GPUFLEET_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(kGolden) << got.dump(2) << "\n";
    GTEST_SKIP() << "golden file rewritten: " << kGolden;
  }
  std::ifstream in(kGolden);
  ASSERT_TRUE(in) << kGolden;
  ExpectSame(nlohmann::ordered_json::parse(in), got, "$");
}

TEST(PlanReportTest, JsonIsVersionedAndUsesSiUnits) {
  nlohmann::ordered_json j = ReferenceJson();
  EXPECT_EQ(j["schema"], "gpufleet.plan/v1");
  EXPECT_EQ(j["cluster"]["gpus"], 32);
  EXPECT_DOUBLE_EQ(j["cluster"]["gpu_memory_bytes"].get<double>(), 80.0 * (1 << 30));
  EXPECT_EQ(j["communication"]["expected_allreduce_busbw"]["cluster"].size(), 32u);
}

TEST(PlanReportTest, TextAndMarkdownCarryTheSameSections) {
  Result<model::Spec> spec = model::ReferenceSpec();
  ASSERT_TRUE(spec);
  Result<plan::Plan> plan = plan::MakePlan(*spec);
  ASSERT_TRUE(plan);
  const std::string text = PlanText(*spec, *plan);
  const std::string md = PlanMarkdown(*spec, *plan);
  for (const char* section :
       {"Memory per GPU", "Compute", "Communication per step", "Expected all-reduce bus bandwidth",
        "Storage", "Power and cooling", "Fabric", "Cost", "Findings"}) {
    EXPECT_NE(text.find("\n" + std::string(section)), std::string::npos) << section;
    EXPECT_NE(md.find(std::string("## ") + section), std::string::npos) << section;
  }
}

// The expected step carries sim step's confidence, in text and JSON: the reference cluster's
// layout is outside calibration on three counts, each named.
TEST(PlanReportTest, TheExpectedStepSaysHowFarToTrustIt) {
  Result<model::Spec> spec = model::ReferenceSpec();
  ASSERT_TRUE(spec);
  Result<plan::Plan> plan = plan::MakePlan(*spec);
  ASSERT_TRUE(plan);
  const std::string text = PlanText(*spec, *plan);
  EXPECT_THAT(text,
              ::testing::ContainsRegex("confidence +extrapolated: micro-batch 4 \\(calibrated "
                                       "to 2\\); full recompute"));
  const nlohmann::ordered_json j = PlanJson(*spec, *plan)["compute"]["step_model"];
  EXPECT_EQ(j["confidence"], "extrapolated");
  EXPECT_EQ(j["outside"].size(), 3u);
}

// Packed sequences (model.document_length): the workload line and the JSON name the documents'
// length, 0 in the JSON where each sequence is one document.
TEST(PlanReportTest, PackedDocumentsAreNamed) {
  Result<model::Spec> spec = model::ReferenceSpec();
  ASSERT_TRUE(spec);
  Result<plan::Plan> whole = plan::MakePlan(*spec);
  ASSERT_TRUE(whole);
  EXPECT_EQ(PlanJson(*spec, *whole)["workload"]["document_length"], 0);
  EXPECT_EQ(PlanText(*spec, *whole).find("packed with documents"), std::string::npos);
  spec->workload.model.document_length = 512;
  Result<plan::Plan> packed = plan::MakePlan(*spec);
  ASSERT_TRUE(packed);
  EXPECT_EQ(PlanJson(*spec, *packed)["workload"]["document_length"], 512);
  EXPECT_NE(PlanText(*spec, *packed).find("sequences of 4096, packed with documents of 512 tokens"),
            std::string::npos);
  // The step is shorter: each query meets its document's keys, not the sequence's.
  EXPECT_LT(packed->step.step_s, whole->step.step_s);
}

// The weights column counts Transformer Engine's quantized linear weights; a note says how: none
// in BF16 (the reference spec); on the MoE example (H100, FP8, nemo-2025) the FP8 parameters
// zero1 and zero2 store, the data and its transpose, 2 B each; on megatron-core-2024 (no FP8
// parameters) a copy beside bf16's; in MXFP8 on B200 both layouts with their block scales, and
// FSDP's shards in bf16 (its MXFP8 parameters are not modelled).
TEST(PlanReportTest, QuantizedWeightsAreNamed) {
  auto text = [](const model::Spec& spec) {
    Result<plan::Plan> p = plan::MakePlan(spec);
    EXPECT_TRUE(p) << p.error().message;
    return p ? PlanText(spec, *p) : std::string();
  };
  Result<model::Spec> reference = model::ReferenceSpec();
  ASSERT_TRUE(reference);
  EXPECT_EQ(text(*reference).find("quantized"), std::string::npos);
  std::ifstream in(std::string(GPUFLEET_SOURCE_DIR) + "/examples/h100-16gpu-moe.yaml");
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto spec = [&](std::string_view from, std::string_view to, std::string_view from2 = "",
                  std::string_view to2 = "") {
    std::string yaml = buffer.str();
    for (auto [f, t] : {std::pair{from, to}, std::pair{from2, to2}}) {
      if (f.empty()) continue;
      const size_t at = yaml.find(f);
      EXPECT_NE(at, std::string::npos) << f;
      if (at != std::string::npos) yaml.replace(at, f.size(), t);
    }
    Result<model::Spec> s = model::ParseSpec(yaml, "moe.yaml");
    EXPECT_TRUE(s) << s.error().message;
    return s ? *s : model::Spec{};
  };
  {
    // PyTorch's FSDP2 with torchao's float8 all-gather: no Transformer Engine copy to name; the
    // gathers and the gathered units in FP8, the shards fp32.
    Result<model::Spec> fsdp2 = model::ParseSpec(R"(name: t
nodes:
  count: 1
  gpu: {model: H100-SXM5-80GB, count: 8}
workload:
  model: {name: m, layers: 8, hidden: 1024, heads: 8, vocab: 32000, sequence: 2048}
  precision: fp8
  parallel: {strategy: fsdp}
  batch: {micro: 1}
  software: {stack: pytorch-fsdp2, fp8_param_gather: true})",
                                                 "t.yaml");
    ASSERT_TRUE(fsdp2) << fsdp2.error().message;
    const std::string t = text(*fsdp2);
    EXPECT_EQ(t.find("quantized"), std::string::npos);
    EXPECT_NE(t.find("weights: fsdp and zero3 gather each linear weight in FP8 (torchao's float8 "
                     "all-gather, 1 B)"),
              std::string::npos);
    fsdp2->workload.fp8_param_gather = false;
    EXPECT_EQ(text(*fsdp2).find("torchao"), std::string::npos);
  }
  EXPECT_NE(text(spec("", ""))
                .find("weights: zero1 and zero2 store each linear weight quantized "
                      "(2 B, the data and its transpose; FP8 parameters), ddp in "
                      "bf16 with Transformer Engine's quantized copy beside it; fsdp "
                      "and zero3 shard it in 1 B"),
            std::string::npos);
  EXPECT_NE(text(spec("{stack: nemo-2025}", "{stack: megatron-core-2024}"))
                .find("weights: ddp, zero1 and zero2 keep each linear weight in bf16 with "
                      "Transformer Engine's quantized copy beside it (2 B, the data and its "
                      "transpose); fsdp and zero3 shard it in bf16"),
            std::string::npos);
  EXPECT_NE(text(spec("{stack: nemo-2025}", "{stack: nemo-2025, fp8_recipe: mxfp8}",
                      "H100-SXM5-80GB", "B200-SXM-180GB"))
                .find("quantized (2.06 B, row-wise and column-wise, with block scales; FP8 "
                      "parameters), ddp in bf16 with Transformer Engine's quantized copy beside "
                      "it; fsdp and zero3 shard it in bf16"),
            std::string::npos);
}

// LoRA: the workload line and the JSON name the adapters and what they train; the step is
// shorter, the checkpoint the adapters' and their states.
TEST(PlanReportTest, LoraIsNamed) {
  Result<model::Spec> spec = model::ReferenceSpec();
  ASSERT_TRUE(spec);
  Result<plan::Plan> full = plan::MakePlan(*spec);
  ASSERT_TRUE(full);
  EXPECT_TRUE(PlanJson(*spec, *full)["workload"]["lora"].is_null());
  EXPECT_EQ(PlanText(*spec, *full).find("LoRA"), std::string::npos);
  spec->workload.model.lora = {.rank = 16, .proj = false, .fc1 = false, .fc2 = false};
  Result<plan::Plan> lora = plan::MakePlan(*spec);
  ASSERT_TRUE(lora);
  const auto j = PlanJson(*spec, *lora)["workload"]["lora"];
  EXPECT_EQ(j["rank"], 16);
  EXPECT_EQ(j["modules"], nlohmann::ordered_json::array({"linear_qkv"}));
  EXPECT_DOUBLE_EQ(j["trained_parameters"].get<double>(), lora->memory.params.adapters);
  EXPECT_NE(PlanText(*spec, *lora).find("LoRA rank 16 on linear_qkv ("), std::string::npos);
  EXPECT_LT(lora->step.step_s, full->step.step_s);
  EXPECT_DOUBLE_EQ(lora->storage.checkpoint_bytes, 14 * lora->memory.params.adapters);
  // A restart reads the adapters' checkpoint and the frozen base's weights.
  EXPECT_DOUBLE_EQ(lora->storage.restore_bytes,
                   lora->storage.checkpoint_bytes + 2 * lora->memory.params.total);
  EXPECT_DOUBLE_EQ(full->storage.restore_bytes, full->storage.checkpoint_bytes);
  for (size_t i = 0; i < lora->storage.tiers.size(); ++i) {
    EXPECT_NEAR(lora->storage.tiers[i].read_s / full->storage.tiers[i].read_s,
                lora->storage.restore_bytes / full->storage.restore_bytes, 1e-9);
  }
}

}  // namespace
}  // namespace gpufleet::report

namespace gpufleet::report {
namespace {

TEST(PlanReportTest, HtmlIsSelfContainedWithCharts) {
  Result<model::Spec> spec = model::ReferenceSpec();
  ASSERT_TRUE(spec);
  spec->cluster.name = "a<b>&c";  // escaped, not markup
  Result<plan::Plan> plan = plan::MakePlan(*spec);
  ASSERT_TRUE(plan);
  const std::string html = PlanHtml(*spec, *plan);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("a&lt;b&gt;&amp;c"), std::string::npos);
  EXPECT_EQ(html.find("a<b>&c"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no fetches
  size_t charts = 0;
  for (size_t pos = 0; (pos = html.find("<svg", pos)) != std::string::npos; ++pos) ++charts;
  EXPECT_EQ(charts, 3u);  // memory, scaling, busbw
}

}  // namespace
}  // namespace gpufleet::report
