// Not a parser: a target that crashes on the input "crash", so the fuzz smoke in CI can prove
// it fails on a crash (scripts/fuzz.sh smoke runs it and expects the failure).
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (gpufleet::fuzz::Text(data, size) == "crash") __builtin_trap();
  return 0;
}
