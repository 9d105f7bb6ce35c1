#pragma once
// XIDs from the kernel log. The NVIDIA driver writes
//   NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
// NVML's event API cannot report some XIDs (79, 119, 120: NVIDIA/DCGM#162), so
// the agent reads both and de-duplicates. KmsgReader reads /dev/kmsg records
// ("pri,seq,usec,flags;text") or a plain file of them or of `dmesg` lines.
// Not thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sys/nvml.h"

namespace gpufleet::sys {

// One kernel-log line or /dev/kmsg record -> the XID it reports, if any.
// `boot_time` (unix seconds) turns the record's microseconds since boot into a time.
std::optional<XidEvent> ParseKmsgXid(std::string_view line, double boot_time);

// Unix time of boot: now (realtime) minus CLOCK_BOOTTIME, which is what the
// kernel log's timestamps count from.
double BootTime();

class KmsgReader {
 public:
  // Opens `path` (/dev/kmsg, or a regular file of log lines) and reads from its start: the
  // XIDs of this boot so far come with the first Read. Anything else (/dev/zero, a FIFO) is
  // kInvalidArgument; a log that cannot be opened is kUnavailable.
  static Result<std::unique_ptr<KmsgReader>> Open(const std::string& path);
  ~KmsgReader();
  KmsgReader(const KmsgReader&) = delete;
  KmsgReader& operator=(const KmsgReader&) = delete;

  // The XIDs logged since the last call. Never blocks; reads at most 16 MiB per call.
  std::vector<XidEvent> Read();
  // True when the last Read stopped at its budget with more to read (a long file).
  bool More() const { return more_; }

 private:
  KmsgReader(int fd, bool device);
  static constexpr size_t kMaxLine = 8192;              // longer file lines are skipped
  static constexpr size_t kMaxBytesPerRead = 16 << 20;  // per Read(); the rest next time
  int fd_;
  bool device_;            // /dev/kmsg: one record per read(); else lines of a file
  std::string partial_;    // an unfinished line of a file
  bool skipping_ = false;  // inside a line longer than kMaxLine
  bool more_ = false;
  double boot_time_;
};

}  // namespace gpufleet::sys
