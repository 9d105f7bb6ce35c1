#pragma once
// Runs an external command (no shell: argv as given) with a deadline and
// captures its stdout. For the few CLI paths that must talk to other tools
// (scontrol); collectors never shell out. Thread-safe.

#include <string>
#include <vector>

#include "base/result.h"

namespace gpufleet::sys {

struct CommandOutput {
  int exit_code = 0;
  std::string out;
  std::string err;
};

// kUnavailable when the program cannot start; kDeadlineExceeded (after killing
// it) when it runs past `timeout_s`. A non-zero exit is a value, not an error.
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv, double timeout_s);

}  // namespace gpufleet::sys
