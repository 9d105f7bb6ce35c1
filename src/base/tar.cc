#include "base/tar.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cstring>
#include <ctime>

#include "base/gzip.h"

namespace gpufleet {

void TarBuilder::AddFile(const std::string& path, const std::string& content) {
  entries_.push_back({path, content, "", false});
}

void TarBuilder::AddSymlink(const std::string& path, const std::string& target) {
  entries_.push_back({path, "", target, true});
}

namespace {

// One 512-byte ustar header (POSIX.1-1988 "ustar\0" "00").
Status Header(const std::string& path, size_t size, bool symlink, const std::string& link,
              std::string* out) {
  char h[512] = {};
  std::string name = path, prefix;
  if (name.size() > 100) {
    size_t cut = name.rfind('/', 155);
    if (cut == std::string::npos || name.size() - cut - 1 > 100) {
      return Error{ErrorCode::kInternal, fmt::format("tar: path too long: {}", path)};
    }
    prefix = name.substr(0, cut);
    name = name.substr(cut + 1);
  }
  if (link.size() > 100)
    return Error{ErrorCode::kInternal, fmt::format("tar: link too long: {}", link)};
  std::memcpy(h, name.data(), name.size());
  std::snprintf(h + 100, 8, "%07o", symlink ? 0777 : 0644);
  std::snprintf(h + 108, 8, "%07o", 0);
  std::snprintf(h + 116, 8, "%07o", 0);
  std::snprintf(h + 124, 12, "%011lo", static_cast<unsigned long>(size));
  std::snprintf(h + 136, 12, "%011lo", static_cast<unsigned long>(std::time(nullptr)));
  h[156] = symlink ? '2' : '0';
  std::memcpy(h + 157, link.data(), link.size());
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  std::memcpy(h + 345, prefix.data(), prefix.size());
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(h + 148, 8, "%06o", sum);
  h[155] = ' ';
  out->append(h, sizeof(h));
  return OkStatus();
}

}  // namespace

Result<std::string> TarBuilder::Finish() const {
  std::string tar;
  for (const auto& e : entries_) {
    GPUFLEET_RETURN_IF_ERROR(
        Header(e.path, e.symlink ? 0 : e.content.size(), e.symlink, e.link, &tar));
    if (!e.symlink) {
      tar += e.content;
      tar.append((512 - e.content.size() % 512) % 512, '\0');
    }
  }
  tar.append(1024, '\0');  // two zero blocks end the archive

  return Gzip(tar, Z_BEST_COMPRESSION);
}

}  // namespace gpufleet
