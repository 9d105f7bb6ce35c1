#pragma once
// One line of progress on stderr, rewritten in place (long benchmarks show it
// when stderr is a terminal; the caller decides). No-ops when `on` is false.

#include <cstdio>
#include <string>

namespace gpufleet::bench {

inline void ShowProgress(bool on, const std::string& line) {
  if (!on) return;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

inline void ClearProgress(bool on) {
  if (on) std::fprintf(stderr, "\r\033[K");
}

}  // namespace gpufleet::bench
