#pragma once
// Shared helpers for plan tests: the reference spec and small spec edits.

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

}  // namespace gpufleet::plan::testing
