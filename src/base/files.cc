#include "base/files.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpufleet {

Status CheckPath(const std::string& path, bool want_directory, std::string_view expected) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return NotFound(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  const bool directory = S_ISDIR(st.st_mode);
  if (want_directory && !directory) {
    return InvalidArgument(fmt::format("{}: is not a directory (expected {})", path, expected));
  }
  if (!want_directory && directory) {
    return InvalidArgument(expected.empty()
                               ? fmt::format("{}: is a directory", path)
                               : fmt::format("{}: is a directory, expected {}", path, expected));
  }
  return OkStatus();
}

Result<std::string> ReadWholeFile(const std::string& path, std::string_view expected) {
  GPUFLEET_RETURN_IF_ERROR(CheckPath(path, /*want_directory=*/false, expected));
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace gpufleet
