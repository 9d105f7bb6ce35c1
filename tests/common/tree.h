#pragma once
// A scratch folder for one test, holding files written by path: a fake /proc
// and /sys tree, a fault file, a results folder. Removed at destruction. The
// name carries the process id, so tests that ctest runs in parallel (one process
// each) never share one.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gpufleet::testing {

class Tree {
 public:
  explicit Tree(const std::string& name)
      : root_(std::filesystem::path(::testing::TempDir()) /
              ("gpufleet-" + name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~Tree() { std::filesystem::remove_all(root_); }
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  // Writes `text` at `rel` (parents created) and returns the full path.
  std::string Write(const std::string& rel, const std::string& text) const {
    const auto p = root_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string Dir(const std::string& rel) const {
    std::filesystem::create_directories(root_ / rel);
    return (root_ / rel).string();
  }
  std::string path() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

}  // namespace gpufleet::testing
