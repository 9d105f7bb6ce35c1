#pragma once
// gzip (RFC 1952) of a buffer in memory, through zlib: capture archives and the
// agent's pre-compressed /metrics snapshot. Thread-safe.

#include <string>
#include <string_view>

#include "base/result.h"

namespace gpufleet {

// `level` is zlib's: 1 fastest .. 9 smallest. kInternal if zlib fails.
Result<std::string> Gzip(std::string_view data, int level);

}  // namespace gpufleet
