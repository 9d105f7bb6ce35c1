// Fuzz target: kernel-log lines and /dev/kmsg records as the XID reader sees them, one by one
// (ParseKmsgXid) and as a file read in bounded steps (KmsgReader).
#include "fuzz/fuzz_common.h"
#include "sys/kmsg.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpufleet;
  const std::string_view text = fuzz::Text(data, size);
  auto e = sys::ParseKmsgXid(text, 1.7e9);
  if (e && (e->xid < 0 || e->xid > 99999)) __builtin_trap();  // an XID out of its range
  fuzz::TempFile f(text, ".log");
  if (auto r = sys::KmsgReader::Open(f.path())) {
    for (const auto& x : (*r)->Read()) {
      if (x.xid < 0 || x.xid > 99999) __builtin_trap();
    }
  }
  return 0;
}
