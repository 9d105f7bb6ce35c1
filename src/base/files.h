#pragma once
// Input files and folders named on the command line: one place for the checks
// and messages ("PATH: cannot read: No such file or directory", "PATH: is a
// directory, expected ..."). Thread-safe.

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"

namespace gpufleet {

// kNotFound if `path` does not exist; kInvalidArgument if it is a directory
// when a file is wanted (or the reverse). `expected` names what was wanted,
// "an NCCL topology file"; empty for no hint.
Status CheckPath(const std::string& path, bool want_directory, std::string_view expected);

// The default bound on an input file: far above any spec, topology, NCCL file or result, far
// below what would exhaust memory.
inline constexpr size_t kMaxInputBytes = 64 << 20;

// The whole content of the regular file at `path`, at most `max_bytes`. Anything else is an
// error naming it, never a hang or an unbounded read: a FIFO, a device (/dev/zero), a socket
// (kInvalidArgument: "PATH: is a FIFO, expected ..."), a file over the bound, a directory; a
// missing file is kNotFound. The file is opened without blocking and checked on the descriptor
// it was read from.
Result<std::string> ReadWholeFile(const std::string& path, std::string_view expected,
                                  size_t max_bytes = kMaxInputBytes);

// The same on an open descriptor (`name` names it in errors).
Result<std::string> ReadWholeFd(int fd, const std::string& name, std::string_view expected,
                                size_t max_bytes = kMaxInputBytes);

// The folder of the running executable (/proc/self/exe): gpufleet's helpers and, in the
// relocatable bundle, its libraries sit relative to it. "." when it cannot be read.
std::string ExecutableDir();

// This machine's host name (gethostname); "" when it cannot be read.
std::string HostName();

}  // namespace gpufleet
