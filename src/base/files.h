#pragma once
// Input files and folders named on the command line: one place for the checks
// and messages ("PATH: cannot read: No such file or directory", "PATH: is a
// directory, expected ..."). Thread-safe.

#include <string>
#include <string_view>

#include "base/result.h"

namespace gpufleet {

// kNotFound if `path` does not exist; kInvalidArgument if it is a directory
// when a file is wanted (or the reverse). `expected` names what was wanted,
// "an NCCL topology file"; empty for no hint.
Status CheckPath(const std::string& path, bool want_directory, std::string_view expected);

// The whole content of the regular file at `path`, after CheckPath.
Result<std::string> ReadWholeFile(const std::string& path, std::string_view expected);

}  // namespace gpufleet
