#pragma once
// The one table that turns errors into exit codes (DESIGN.md "Conventions"):
// 0 ok, 1 a check or threshold failed, 2 bad usage or input, 3 the environment
// lacks something. Only cli/ prints or exits.

#include <cstdio>
#include <string>

#include "base/result.h"
#include "base/strings.h"

namespace gpufleet::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitEnvironment = 3;

inline int ExitCodeFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound:
      return kExitBadInput;
    case ErrorCode::kUnavailable:
    case ErrorCode::kDeadlineExceeded:
    case ErrorCode::kInternal:
      return kExitEnvironment;
  }
  return kExitEnvironment;
}

// Prints "gpufleet: <message>" as one line on stderr and returns the exit code.
inline int ReportError(const Error& error) {
  std::string line = strings::ValidUtf8(error.message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "gpufleet: %s\n", line.c_str());
  return ExitCodeFor(error.code);
}

}  // namespace gpufleet::cli
