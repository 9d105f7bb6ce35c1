// Fuzz target: `nvidia-smi topo -m` output parsed, rendered back, and written as JSON.
#include "base/json.h"
#include "fuzz/fuzz_common.h"
#include "topo/smi_matrix.h"
#include "topo/topo_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpufleet;
  auto m = topo::ParseSmiMatrix(fuzz::Text(data, size), "fuzz.txt");
  if (!m) return 0;
  (void)topo::RenderSmiMatrix(*m);
  (void)DumpJson(topo::ToJson(*m));
  return 0;
}
