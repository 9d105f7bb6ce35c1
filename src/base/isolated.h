#pragma once
// Work that may crash or loop inside a library we do not own (libhwloc reading a file a user
// passed) runs in a forked child: a crash or a run past the deadline becomes an error naming
// the input, never the end of our process.

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace gpufleet {

struct IsolatedOptions {
  std::string what;     // the input, named first in every error: "node.xml"
  std::string library;  // who reads it, for the messages: "libhwloc"
  std::chrono::milliseconds deadline{60'000};
  size_t max_answer_bytes = 64 << 20;
};

// Runs `work` in a child process and returns its answer. The child's own errors come back with
// their code and message; a signal is kInvalidArgument "WHAT: LIBRARY crashed reading it
// (signal N)", a child still running at the deadline is killed and kInvalidArgument "WHAT:
// LIBRARY did not finish reading it in N s". Call it before starting threads: only the calling
// thread exists in the child.
Result<std::string> RunIsolated(const IsolatedOptions& options,
                                const std::function<Result<std::string>()>& work);

}  // namespace gpufleet
