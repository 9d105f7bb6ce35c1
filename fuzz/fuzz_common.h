#pragma once
// Helpers for the fuzz targets (one libFuzzer target per parser, fuzz/CMakeLists.txt): the
// input as text, and a temporary file for APIs that read paths. docs/reliability.md.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace gpufleet::fuzz {

inline std::string_view Text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A file holding the input, removed when this goes out of scope.
class TempFile {
 public:
  TempFile(std::string_view content, const char* suffix) {
    path_ = "/tmp/gpufleet-fuzz-" + std::to_string(::getpid()) + suffix;
    if (std::FILE* f = std::fopen(path_.c_str(), "wb")) {
      std::fwrite(content.data(), 1, content.size(), f);
      std::fclose(f);
    }
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace gpufleet::fuzz
