#pragma once
// Writes command output to stdout or, with -o FILE, to FILE atomically (a
// temporary file renamed into place), so a failed run leaves nothing behind.

#include <string>

#include "base/result.h"

namespace gpufleet::cli {

Status WriteOutput(const std::string& path, const std::string& text);
// Reads a whole input file: kNotFound if missing, kInvalidArgument for a directory.
Status ReadText(const std::string& path, std::string* text);

}  // namespace gpufleet::cli
