// Fuzz target: a bench result as the agent's bench collector reads it from --bench-dir (every
// kind: collective, pairs, storage, gpu share the gpufleet.bench/v1 frame).
#include <cmath>

#include "agent/bench_file.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpufleet;
  auto f = agent::ParseBenchFile(fuzz::Text(data, size));
  if (!f) return 0;
  if (!std::isfinite(f->time)) __builtin_trap();
  for (const auto& row : f->rows) {
    for (const auto& [field, v] : row.values) {
      if (!std::isfinite(v)) __builtin_trap();
    }
  }
  return 0;
}
