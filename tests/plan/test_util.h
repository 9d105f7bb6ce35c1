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
