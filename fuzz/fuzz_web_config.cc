// Fuzz target: an exporter-toolkit web-config file as the agent loads it. A file that loads
// with users must never end with no authentication, and nothing may throw.
#include "agent/server.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpufleet;
  const std::string_view text = fuzz::Text(data, size);
  fuzz::TempFile f(text, ".yml");
  auto w = agent::LoadWebConfig(f.path());
  if (w) {
    for (const auto& [user, hash] : w->users) {
      if (user.empty() || hash.rfind("$2", 0) != 0) __builtin_trap();
    }
  }
  return 0;
}
