#include "base/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

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

namespace {

const char* KindOf(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

}  // namespace

Result<std::string> ReadWholeFd(int fd, const std::string& name, std::string_view expected,
                                size_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return NotFound(fmt::format("{}: cannot read: {}", name, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return InvalidArgument(
        expected.empty()
            ? fmt::format("{}: is {}, not a regular file", name, KindOf(st.st_mode))
            : fmt::format("{}: is {}, expected {}", name, KindOf(st.st_mode), expected));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return InvalidArgument(fmt::format("{}: {} bytes, more than the {} bytes an input may have",
                                       name, st.st_size, max_bytes));
  }
  // Opened with O_NONBLOCK for the FIFO case; reads of a regular file block as usual.
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return NotFound(fmt::format("{}: cannot read: {}", name, std::strerror(errno)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > max_bytes) {  // it grew while we read
      return InvalidArgument(
          fmt::format("{}: more than the {} bytes an input may have", name, max_bytes));
    }
  }
  return text;
}

Result<std::string> ReadWholeFile(const std::string& path, std::string_view expected,
                                  size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == EISDIR) {
      return InvalidArgument(expected.empty()
                                 ? fmt::format("{}: is a directory", path)
                                 : fmt::format("{}: is a directory, expected {}", path, expected));
    }
    return NotFound(fmt::format("{}: cannot read: {}", path, std::strerror(err)));
  }
  Result<std::string> text = ReadWholeFd(fd, path, expected, max_bytes);
  ::close(fd);
  return text;
}

std::string ExecutableDir() {
  char self[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return ".";
  const std::string path(self, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "";
  return host;
}

}  // namespace gpufleet
