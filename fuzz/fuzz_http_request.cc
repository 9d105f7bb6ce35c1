// Fuzz target: the agent's HTTP request-head parser (RFC 9112 framing). A head it accepts has
// at most one Content-Length and Host and no control byte in a value.
#include "agent/http_server.h"
#include "base/strings.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpufleet;
  const std::string_view text = fuzz::Text(data, size);
  auto r = agent::ParseRequestHead(text);
  if (!r) return 0;
  for (const auto& [name, value] : r->headers) {
    for (unsigned char c : value) {
      if ((c < 0x20 && c != '\t') || c == 0x7f) __builtin_trap();
    }
  }
  // An accepted head has at most one Host and one Content-Length line: a second one is how a
  // request is smuggled, and must be refused, never merged.
  int hosts = 0, lengths = 0;
  for (const auto& line : strings::Split(text, '\n')) {
    const std::string lower = strings::ToLower(line);
    hosts += lower.rfind("host:", 0) == 0 ? 1 : 0;
    lengths += lower.rfind("content-length:", 0) == 0 ? 1 : 0;
  }
  if (hosts > 1 || lengths > 1) __builtin_trap();
  return 0;
}
