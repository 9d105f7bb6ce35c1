#pragma once
// Shared helpers for plan tests: the reference spec, small spec edits and published shapes.

#include <gtest/gtest.h>

#include "model/spec.h"

namespace gpufleet::plan::testing {

inline model::Spec Reference() {
  Result<model::Spec> s = model::ReferenceSpec();
  if (!s) ADD_FAILURE() << s.error().message;
  return s ? *s : model::Spec{};
}

inline model::Spec Example(const std::string& file) {
  Result<model::Spec> s =
      model::LoadSpecFile(std::string(GPUFLEET_SOURCE_DIR) + "/examples/" + file);
  if (!s) ADD_FAILURE() << s.error().message;
  return s ? *s : model::Spec{};
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

// GPT-3 175B (Brown et al. 2020; Korthikanti et al. 2022's Table 2 setting): 96 layers of 12,288,
// 96 heads, a 4h GELU MLP, 2,048 tokens.
inline model::ModelShape Gpt3Shape() {
  model::ModelShape m;
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.vocab = 51200;
  m.sequence = 2048;
  return m;
}

// GPT-OSS 120B (its Hugging Face config and OpenAI's model card, August 2025): 36 layers of hidden
// 2,880, 64 query and 8 KV heads of 64, 128 experts of 2,880 with a clamped gated quick-GELU, 4
// a token, linear biases, YaRN, an untied vocabulary of 201,088, 4,096 tokens; no window (the
// spec's sliding_window: 128 on 18 layers is the caller's to set).
inline model::ModelShape GptOss120bShape() {
  model::ModelShape m;
  m.layers = 36;
  m.hidden = 2880;
  m.heads = 64;
  m.kv_heads = 8;
  m.head_dim = 64;
  m.ffn_hidden = 2880;
  m.mlp = model::Mlp::kQuickGeglu;
  m.activation_clamp = 7;
  m.linear_bias = true;
  m.rope_scaling = model::RopeScaling::kYarn;
  m.vocab = 201088;
  m.sequence = 4096;
  m.moe = {.experts = 128, .top_k = 4, .ffn_hidden = 2880};
  return m;
}

// Llama 3 70B (Meta 2024) at 4,096 tokens, as Megatron Bridge fine-tunes it.
inline model::ModelShape Llama3_70bShape() {
  model::ModelShape m;
  m.layers = 80;
  m.hidden = 8192;
  m.heads = 64;
  m.kv_heads = 8;
  m.ffn_hidden = 28672;
  m.mlp = model::Mlp::kSwiglu;
  m.vocab = 128256;
  m.sequence = 4096;
  return m;
}

// Llama 3 8B (Meta 2024): 32 layers of 4,096, an untied vocabulary of 128,256, 8,192 tokens.
inline model::ModelShape Llama3_8bShape() {
  model::ModelShape m = Llama3_70bShape();
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.ffn_hidden = 14336;
  m.sequence = 8192;
  return m;
}

}  // namespace gpufleet::plan::testing
