#pragma once
// SysRoot: the filesystem seam for /sys and /proc. Every read of kernel state
// goes through one, so tests and offline diagnosis point it at a captured tree
// ("/" on a live node). Thread-safe (stateless besides the root).

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

 private:
  std::string root_;
};

}  // namespace gpufleet
