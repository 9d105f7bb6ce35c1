#include "base/sysroot.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/files.h"

namespace gpufleet {

namespace fs = std::filesystem;

SysRoot::SysRoot(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string SysRoot::Resolve(const std::string& path) const {
  if (root_ == "/" || root_.empty()) return path;
  return root_ + path;
}

int SysRoot::Open(const std::string& path, int flags) const {
  // openat2 refuses O_PATH with anything but O_DIRECTORY, O_NOFOLLOW and O_CLOEXEC.
  flags |= (flags & O_PATH) ? O_CLOEXEC : O_CLOEXEC | O_NOCTTY;
  if (root_ == "/" || root_.empty()) return ::open(path.c_str(), flags);
  // A capture: every path, and every symlink in it, resolves inside the root as if it were "/"
  // (RESOLVE_IN_ROOT, Linux 5.6+), so a planted link to /etc/passwd reads the capture's own
  // /etc/passwd, if any, never the host's.
  const int dir = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  open_how how{};
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  std::string rel = path;
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  if (rel.empty()) rel = ".";
  int fd = static_cast<int>(::syscall(SYS_openat2, dir, rel.c_str(), &how, sizeof(how)));
  if (fd < 0 && errno == ENOSYS) {
    // An older kernel: resolve the links ourselves, inside the root, and refuse a last link.
    const int saved = errno;
    auto real = RealPath(path);
    fd = real ? ::openat(dir, ("." + *real).c_str(), flags | O_NOFOLLOW) : -1;
    if (!real) errno = saved;
  }
  const int err = errno;
  ::close(dir);
  errno = err;
  return fd;
}

Result<std::string> SysRoot::Read(const std::string& path) const {
  // Non-blocking open and a regular-file check: a FIFO or device in a capture is refused, not
  // read forever. Kernel files (sysfs, procfs) are regular files; 16 MiB is far above any.
  const int fd = Open(path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return NotFound(fmt::format("read {}: not found", Resolve(path)));
  Result<std::string> text = ReadWholeFd(fd, Resolve(path), "", 16 << 20);
  ::close(fd);
  if (!text) return text.error();
  if (!text->empty() && text->back() == '\n') text->pop_back();
  return text;
}

bool SysRoot::Exists(const std::string& path) const {
  const int fd = Open(path, O_PATH);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

Result<std::vector<std::string>> SysRoot::List(const std::string& path) const {
  const int fd = Open(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    return NotFound(fmt::format("list {}: {}", Resolve(path), std::strerror(errno)));
  }
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return NotFound(fmt::format("list {}: {}", Resolve(path), std::strerror(errno)));
  }
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
    if (names.size() > 1'000'000) break;  // bounded, whatever a capture holds
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> SysRoot::RealPath(const std::string& path) const {
  // Resolve symlinks one component at a time so absolute links stay inside the root.
  fs::path live;
  std::vector<std::string> todo;
  for (const auto& part : fs::path(path)) {
    if (part != "/") todo.push_back(part.string());
  }
  int hops = 0;
  for (size_t i = 0; i < todo.size(); ++i) {
    const std::string& part = todo[i];
    if (part == "." || part.empty()) continue;
    if (part == "..") {
      live = live.parent_path();
      continue;
    }
    fs::path next = live / part;
    std::error_code ec;
    fs::path on_disk = fs::path(Resolve("/" + next.relative_path().string()));
    if (fs::is_symlink(on_disk, ec)) {
      if (++hops > 40) return NotFound(fmt::format("realpath {}: too many links", path));
      fs::path target = fs::read_symlink(on_disk, ec);
      if (ec) return NotFound(fmt::format("realpath {}: {}", path, ec.message()));
      std::vector<std::string> rest(todo.begin() + static_cast<long>(i) + 1, todo.end());
      todo.resize(i + 1);
      if (target.is_absolute()) live.clear();
      std::vector<std::string> expanded;
      for (const auto& t : target) {
        if (t != "/") expanded.push_back(t.string());
      }
      todo.insert(todo.end(), expanded.begin(), expanded.end());
      todo.insert(todo.end(), rest.begin(), rest.end());
      continue;
    }
    live = next;
  }
  return "/" + live.relative_path().string();
}

}  // namespace gpufleet
