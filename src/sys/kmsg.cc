#include "sys/kmsg.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace gpufleet::sys {

namespace {

// "PCI:0000:3b:00" or "0000:3b:00" -> "0000:3b:00.0".
std::string BusIdFromKernel(std::string_view s) {
  if (s.substr(0, 4) == "PCI:") s.remove_prefix(4);
  unsigned domain = 0, bus = 0, dev = 0;
  const std::string copy(s);
  if (std::sscanf(copy.c_str(), "%x:%x:%x", &domain, &bus, &dev) == 3) {
    return fmt::format("{:04x}:{:02x}:{:02x}.0", domain & 0xffff, bus & 0xff, dev & 0x1f);
  }
  if (std::sscanf(copy.c_str(), "%x:%x", &bus, &dev) == 2) {
    return fmt::format("0000:{:02x}:{:02x}.0", bus & 0xff, dev & 0x1f);
  }
  return copy;
}

}  // namespace

std::optional<XidEvent> ParseKmsgXid(std::string_view line, double boot_time) {
  static constexpr std::string_view kTag = "NVRM: Xid (";
  const size_t at = line.find(kTag);
  if (at == std::string_view::npos) return std::nullopt;
  // Time: a /dev/kmsg record "pri,seq,usec,flags;..." or a dmesg "[  123.456789] ...".
  double since_boot = -1;
  if (const size_t semi = line.find(';'); semi != std::string_view::npos && semi < at) {
    const std::string head(line.substr(0, semi));
    unsigned long long usec = 0;  // NOLINT(google-runtime-int)
    if (std::sscanf(head.c_str(), "%*u,%*u,%llu", &usec) == 1) since_boot = usec / 1e6;
  } else if (const size_t open = line.find('['); open != std::string_view::npos && open < at) {
    since_boot = std::strtod(std::string(line.substr(open + 1)).c_str(), nullptr);
  }
  std::string_view rest = line.substr(at + kTag.size());
  const size_t close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  XidEvent e;
  e.busid = BusIdFromKernel(rest.substr(0, close));
  rest.remove_prefix(close + 1);
  while (!rest.empty() && (rest.front() == ':' || rest.front() == ' ')) rest.remove_prefix(1);
  // XIDs are small numbers (NVIDIA's catalog ends in the 150s); more than five digits is not an
  // XID, and is not summed into an int ("4294967375" overflowed into XID 79).
  int xid = 0;
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
    if (digits == 5) return std::nullopt;
    xid = xid * 10 + (rest[digits] - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  e.xid = xid;
  e.time = since_boot >= 0 ? boot_time + since_boot : 0;
  e.source = "kmsg";
  e.text = std::string(line.substr(at));
  while (!e.text.empty() && (e.text.back() == '\n' || e.text.back() == '\r')) e.text.pop_back();
  return e;
}

double BootTime() {
  timespec real{}, boot{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_BOOTTIME, &boot);
  return static_cast<double>(real.tv_sec - boot.tv_sec) + (real.tv_nsec - boot.tv_nsec) / 1e9;
}

Result<std::unique_ptr<KmsgReader>> KmsgReader::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    return Unavailable(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  fstat(fd, &st);
  // The kernel log device (character device 1:11) or a regular file of log lines: anything else
  // (/dev/zero, a FIFO) would be read forever.
  const bool kmsg = S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 11;
  if (!kmsg && !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(
        fmt::format("--kmsg {}: not the kernel log (/dev/kmsg) nor a file of log lines", path));
  }
  return std::unique_ptr<KmsgReader>(new KmsgReader(fd, kmsg));
}

KmsgReader::KmsgReader(int fd, bool device) : fd_(fd), device_(device), boot_time_(BootTime()) {}

KmsgReader::~KmsgReader() { ::close(fd_); }

std::vector<XidEvent> KmsgReader::Read() {
  std::vector<XidEvent> out;
  char buf[8192];
  // Bounded work per call: a huge or growing file is read over several polls.
  size_t budget = kMaxBytesPerRead;
  more_ = false;
  for (;;) {
    if (budget == 0) {
      more_ = true;
      break;
    }
    const ssize_t n = ::read(fd_, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) continue;  // records were overwritten; the next read goes on
      break;                         // EAGAIN: nothing new
    }
    if (n == 0) break;
    budget -= std::min(budget, static_cast<size_t>(n));
    if (device_) {  // one record per read
      if (auto e = ParseKmsgXid(std::string_view(buf, static_cast<size_t>(n)), boot_time_)) {
        out.push_back(std::move(*e));
      }
      continue;
    }
    // A file: lines, each at most kMaxLine bytes; the rest of a longer line is skipped (a
    // 200 MB line used to be searched from its start at every read: quadratic).
    std::string_view chunk(buf, static_cast<size_t>(n));
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      const std::string_view piece = chunk.substr(0, nl);
      if (!skipping_) {
        if (partial_.size() + piece.size() > kMaxLine) {
          partial_.clear();
          skipping_ = true;
        } else {
          partial_.append(piece);
        }
      }
      if (nl == std::string_view::npos) break;
      if (!skipping_) {
        if (auto e = ParseKmsgXid(partial_, boot_time_)) out.push_back(std::move(*e));
      }
      partial_.clear();
      skipping_ = false;
      chunk.remove_prefix(nl + 1);
    }
  }
  return out;
}

}  // namespace gpufleet::sys
