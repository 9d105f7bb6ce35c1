#pragma once
// SysRoot: the filesystem seam for /sys and /proc. Every read of kernel state
// goes through one, so tests and offline diagnosis point it at a captured tree
// ("/" on a live node). A capture comes from elsewhere, so under one nothing
// escapes the root: symlinks resolve inside it, FIFOs and devices are refused,
// reads are bounded. Thread-safe (stateless besides the root).

#include <string>
#include <vector>

#include "base/result.h"

namespace gpufleet {

class SysRoot {
 public:
  explicit SysRoot(std::string root = "/");

  const std::string& root() const { return root_; }
  // `path` is absolute as on a live node ("/sys/class/infiniband"); the root is prepended.
  std::string Resolve(const std::string& path) const;
  // The whole file with one trailing newline removed; kNotFound names the path.
  Result<std::string> Read(const std::string& path) const;
  bool Exists(const std::string& path) const;
  // Entry names of a directory, sorted; kNotFound if it is not one.
  Result<std::vector<std::string>> List(const std::string& path) const;
  // Where a symlink points, resolved within the root, as a live path ("/sys/devices/...").
  Result<std::string> RealPath(const std::string& path) const;
  // open(2) of `path` under the root with `flags`; for a capture (root other than "/") every
  // symlink resolves inside it. -1 with errno set on failure.
  int Open(const std::string& path, int flags) const;

 private:
  std::string root_;
};

}  // namespace gpufleet
