// Fuzz target: the topology JSON a capture carries (gpufleet-topology.json), read back and
// written again.
#include <nlohmann/json.hpp>

#include "base/json.h"
#include "fuzz/fuzz_common.h"
#include "topo/topo_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpufleet;
  const auto j = nlohmann::json::parse(fuzz::Text(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  auto t = topo::TopologyFromJson(j);
  if (t) (void)DumpJson(topo::ToJson(*t));
  return 0;
}
