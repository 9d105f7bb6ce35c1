#include "base/sysroot.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpufleet {

namespace fs = std::filesystem;

SysRoot::SysRoot(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string SysRoot::Resolve(const std::string& path) const {
  if (root_ == "/" || root_.empty()) return path;
  return root_ + path;
}

Result<std::string> SysRoot::Read(const std::string& path) const {
  std::ifstream in(Resolve(path), std::ios::binary);
  if (!in) return NotFound(fmt::format("read {}: not found", Resolve(path)));
  std::ostringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

bool SysRoot::Exists(const std::string& path) const {
  std::error_code ec;
  return fs::exists(Resolve(path), ec);
}

Result<std::vector<std::string>> SysRoot::List(const std::string& path) const {
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(Resolve(path), ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) return NotFound(fmt::format("list {}: {}", Resolve(path), ec.message()));
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
