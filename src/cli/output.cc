#include "cli/output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <random>
#include <string_view>

#include "base/files.h"
#include "base/strings.h"

namespace gpufleet::cli {

namespace {

Error CannotWrite(const std::string& path, int err) {
  return InvalidArgument(fmt::format("{}: cannot write: {}", path, std::strerror(err)));
}

Status WriteAll(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return CannotWrite(path, errno);
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

// The descriptor that /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N
// name, or -1. Writing there means that descriptor, not a file reopened by name
// (which would truncate a file the shell opened for appending, or replace it).
int NamedDescriptor(std::string_view path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.substr(0, prefix.size()) != prefix) continue;
    std::string_view n = path.substr(prefix.size());
    int fd = -1;
    if (!n.empty() && std::from_chars(n.data(), n.data() + n.size(), fd).ptr == n.data() + n.size())
      return fd;
  }
  return -1;
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Follows symlinks in the last component (a chain of them, as open() would), so
// the link stays a link and its target is what gets written. A dangling link
// gives the path it points to, which is then created.
Result<std::string> FollowLinks(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
    if (n < 0) return CannotWrite(path, errno);
    std::string target(buf, static_cast<size_t>(n));
    path = target.front() == '/' ? target : DirName(path) + "/" + target;
  }
  return CannotWrite(path, ELOOP);
}

// Writes in place, as `>` does: devices, FIFOs, terminals, and a regular file
// whose owner or folder does not allow replacing it.
Status WriteInPlace(const std::string& path, const std::string& text, bool truncate) {
  const int fd = ::open(path.c_str(),
                        O_WRONLY | O_CLOEXEC | O_NOCTTY | (truncate ? O_TRUNC | O_CREAT : 0), 0666);
  if (fd < 0) return CannotWrite(path, errno);
  Status s = WriteAll(fd, text, path);
  if (::close(fd) != 0 && s) s = CannotWrite(path, errno);
  return s;
}

// A regular file (or a new one): a temporary beside it, created with O_EXCL so
// nothing planted at that name is followed or overwritten, then renamed over it.
Status ReplaceAtomically(const std::string& path, const std::string& text,
                         const struct stat* existing) {
  const std::string dir = DirName(path);
  const std::string base =
      path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  std::random_device rd;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = fmt::format("{}/.{}.tmp.{}.{:08x}", dir, base, ::getpid(), rd());
    // A new file gets 0666 less the umask, as the shell would give it.
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                existing != nullptr ? 0600 : 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    const int err = errno;
    // A folder we may not create in, but a file we may write: write it in place.
    if (existing != nullptr && (err == EACCES || err == EPERM || err == EROFS)) {
      return WriteInPlace(path, text, true);
    }
    return CannotWrite(path, err);
  }
  if (existing != nullptr) {
    const bool owner_kept = (existing->st_uid == ::geteuid() && existing->st_gid == ::getegid()) ||
                            ::fchown(fd, existing->st_uid, existing->st_gid) == 0;
    if (!owner_kept) {
      // Replacing would hand the file to us: keep its owner by writing in place instead.
      ::close(fd);
      ::unlink(tmp.c_str());
      return WriteInPlace(path, text, true);
    }
    ::fchmod(fd, existing->st_mode & 07777);
  }
  Status s = WriteAll(fd, text, path);
  if (s && ::fsync(fd) != 0) s = CannotWrite(path, errno);
  if (::close(fd) != 0 && s) s = CannotWrite(path, errno);
  if (s && std::rename(tmp.c_str(), path.c_str()) != 0) s = CannotWrite(path, errno);
  if (!s) ::unlink(tmp.c_str());
  return s;
}

}  // namespace

Status WriteOutput(const std::string& path, const std::string& raw, bool binary) {
  const std::string fixed =
      binary || strings::IsValidUtf8(raw) ? std::string() : strings::ValidUtf8(raw);
  const std::string& text = fixed.empty() ? raw : fixed;
  if (path.empty() || path == "-" || NamedDescriptor(path) == 1) {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout)) {
      return Unavailable(fmt::format("write to stdout: {}", std::strerror(errno)));
    }
    return OkStatus();
  }
  if (const int fd = NamedDescriptor(path); fd >= 0) {
    std::fflush(stdout);
    return WriteAll(fd, text, path);
  }
  GPUFLEET_ASSIGN_OR_RETURN(const std::string target, FollowLinks(path));
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT) return CannotWrite(path, errno);
    return ReplaceAtomically(target, text, nullptr);
  }
  if (S_ISDIR(st.st_mode)) return InvalidArgument(fmt::format("{}: is a directory", path));
  if (!S_ISREG(st.st_mode)) return WriteInPlace(target, text, false);
  return ReplaceAtomically(target, text, &st);
}

Status ReadText(const std::string& path, std::string* text) {
  GPUFLEET_ASSIGN_OR_RETURN(*text, ReadWholeFile(path, ""));
  return OkStatus();
}

}  // namespace gpufleet::cli
