// Fuzz target: an hwloc XML topology through discovery exactly as `--hwloc-xml FILE` reads it:
// libhwloc runs in a child process, so a crash inside it must come back as an error naming the
// file, and this process (the fuzzer) must see none. Slow (a fork per input); its campaign finds
// what our reading of hwloc's objects does wrong, and proves the wrapper holds.
#include "base/json.h"
#include "fuzz/fuzz_common.h"
#include "topo/discover.h"
#include "topo/topo_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpufleet;
  if (size > (1 << 20)) return 0;
  fuzz::TempFile f(fuzz::Text(data, size), ".xml");
  topo::DiscoverOptions o;
  o.hwloc_xml = f.path();
  o.nvml = false;
  auto t = topo::Discover(o);
  if (t) (void)DumpJson(topo::ToJson(*t));
  return 0;
}
