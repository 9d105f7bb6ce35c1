#pragma once
// The IMEX daemon's state for the imex check: its config and node list, whether it runs,
// whether this node is listed, and which peers answer on its port (a TCP connect to each,
// all at once, within `timeout`). Reads under `root` (the live node's "/").

#include <chrono>
#include <string>

#include "base/sysroot.h"
#include "checks/check.h"

namespace gpufleet::agent {

inline constexpr const char* kDefaultImexConfig = "/etc/nvidia-imex/config.cfg";

checks::ImexState ReadImex(const SysRoot& root, const std::string& config,
                           std::chrono::milliseconds timeout);

}  // namespace gpufleet::agent
