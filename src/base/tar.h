#pragma once
// A gzip-compressed POSIX ustar archive built in memory: regular files and
// symlinks, enough for `topo capture`. Readable by GNU tar and hwloc's tools.
// Not thread-safe; build one per archive.

#include <string>
#include <vector>

#include "base/result.h"

namespace gpufleet {

class TarBuilder {
 public:
  // `path` is relative ("capture/sys/..."); parents are implied.
  void AddFile(const std::string& path, const std::string& content);
  void AddSymlink(const std::string& path, const std::string& target);
  // The .tar.gz bytes; kInternal if zlib fails or a path is longer than ustar allows.
  Result<std::string> Finish() const;
  size_t entries() const { return entries_.size(); }

 private:
  struct Entry {
    std::string path;
    std::string content;
    std::string link;
    bool symlink = false;
  };
  std::vector<Entry> entries_;
};

}  // namespace gpufleet
