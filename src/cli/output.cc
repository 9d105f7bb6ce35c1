#include "cli/output.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/files.h"

namespace gpufleet::cli {

Status WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout)) {
      return Unavailable(fmt::format("write to stdout: {}", std::strerror(errno)));
    }
    return OkStatus();
  }
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return InvalidArgument(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return InvalidArgument(fmt::format("{}: cannot write: {}", path, std::strerror(err)));
  }
  return OkStatus();
}

Status ReadText(const std::string& path, std::string* text) {
  GPUFLEET_ASSIGN_OR_RETURN(*text, ReadWholeFile(path, ""));
  return OkStatus();
}

}  // namespace gpufleet::cli
