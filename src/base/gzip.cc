#include "base/gzip.h"

#include <zlib.h>

namespace gpufleet {

Result<std::string> Gzip(std::string_view data, int level) {
  z_stream z{};
  // windowBits 15 + 16: a gzip wrapper instead of zlib's.
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Error{ErrorCode::kInternal, "zlib: deflateInit2 failed"};
  }
  std::string gz(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(gz.data());
  z.avail_out = static_cast<uInt>(gz.size());
  const int rc = deflate(&z, Z_FINISH);
  gz.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Error{ErrorCode::kInternal, "zlib: deflate did not finish"};
  return gz;
}

}  // namespace gpufleet
