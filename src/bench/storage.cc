#include "bench/storage.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <thread>

#include "base/files.h"
#include "base/units.h"
#include "bench/progress.h"

namespace gpufleet::bench {
namespace {

volatile std::sig_atomic_t g_signal = 0;

void OnSignal(int sig) { g_signal = sig; }

bool Stopped() { return g_signal != 0; }

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Error Errno(const std::string& what) {
  if (Stopped())
    return Unavailable(fmt::format("interrupted by signal {}", static_cast<int>(g_signal)));
  return Unavailable(fmt::format("{}: {}", what, std::strerror(errno)));
}

constexpr size_t kAlign = 4096;

struct AlignedBuffer {
  explicit AlignedBuffer(size_t bytes) : size(bytes) {
    if (posix_memalign(&p, kAlign, bytes) != 0) p = nullptr;
    if (p != nullptr) {
      // Incompressible bytes, so a compressing filesystem cannot flatter us.
      std::mt19937_64 rng(42);
      auto* w = static_cast<uint64_t*>(p);
      for (size_t i = 0; i < bytes / 8; ++i) w[i] = rng();
    }
  }
  ~AlignedBuffer() { std::free(p); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  void* p = nullptr;
  size_t size;
};

// The work folder: everything we write is inside it, and it goes at the end
// whatever happens.
class WorkDir {
 public:
  static Result<std::unique_ptr<WorkDir>> Create(const std::string& parent) {
    auto d = std::unique_ptr<WorkDir>(new WorkDir());
    d->path_ = fmt::format("{}/.gpufleet-bench-{}-{}", parent, HostName(), getpid());
    if (mkdir(d->path_.c_str(), 0700) != 0) {
      return Unavailable(
          fmt::format("--path {}: cannot create {}: {}", parent, d->path_, std::strerror(errno)));
    }
    return d;
  }
  ~WorkDir() {
    if (DIR* dir = opendir(path_.c_str())) {
      while (dirent* e = readdir(dir)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") unlink((path_ + "/" + name).c_str());
      }
      closedir(dir);
    }
    rmdir(path_.c_str());
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  WorkDir() = default;
  std::string path_;
};

// Opens for the test; with O_DIRECT when asked and possible.
int OpenFile(const std::string& path, int flags, bool direct) {
  return open(path.c_str(), flags | O_CLOEXEC | (direct ? O_DIRECT : 0), 0600);
}

Latency Summarise(std::vector<double> v) {
  Latency l;
  l.p50_s = Percentile(v, 50);
  l.p90_s = Percentile(v, 90);
  l.p99_s = Percentile(v, 99);
  l.max_s = Percentile(v, 100);
  return l;
}

Status WriteAll(int fd, const AlignedBuffer& buf, uint64_t offset, uint64_t bytes, uint64_t block) {
  for (uint64_t done = 0; done < bytes && !Stopped();) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(block, bytes - done));
    const ssize_t w = pwrite(fd, buf.p, n, static_cast<off_t>(offset + done));
    if (w < 0) {
      if (errno == EINTR && !Stopped()) continue;
      return Errno("write");
    }
    done += static_cast<uint64_t>(w);
  }
  return Stopped() ? Status(Errno("write")) : OkStatus();
}

std::string FilesystemOf(const std::string& path) {
  char real[PATH_MAX];
  if (realpath(path.c_str(), real) == nullptr) return "?";
  std::ifstream mounts("/proc/mounts");
  std::string dev, mnt, type, best_type = "?";
  size_t best = 0;
  std::string line;
  while (std::getline(mounts, line)) {
    std::istringstream in(line);
    in >> dev >> mnt >> type;
    const std::string r = real;
    if (r.rfind(mnt, 0) == 0 && (r.size() == mnt.size() || mnt == "/" || r[mnt.size()] == '/') &&
        mnt.size() >= best) {
      best = mnt.size();
      best_type = type;
    }
  }
  return best_type;
}

}  // namespace

void InstallStorageSignalHandlers() {
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked write returns EINTR and we stop
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int StorageInterruptSignal() { return g_signal; }

bool StorageReport::passed() const { return NoFailures(findings); }

Result<StorageReport> RunStorage(const StorageOptions& o) {
  if (o.block_bytes < kAlign || o.block_bytes % kAlign != 0 || o.block_bytes > (1ull << 30)) {
    return InvalidArgument("--block-size: want a multiple of 4 KiB up to 1 GiB");
  }
  if (o.file_bytes < o.block_bytes)
    return InvalidArgument("--size: want at least one --block-size");
  if (o.shards < 1 || o.jobs < 1) return InvalidArgument("--shards and --jobs: want at least 1");
  struct stat st;
  if (stat(o.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return InvalidArgument(fmt::format("--path {}: not a folder", o.path));
  }
  struct statvfs vfs;
  if (statvfs(o.path.c_str(), &vfs) != 0) return Errno("--path " + o.path);
  const double free_bytes = static_cast<double>(vfs.f_bavail) * static_cast<double>(vfs.f_frsize);
  // Shards are whole 4 KiB pages (O_DIRECT), at least one each.
  const uint64_t shard_bytes =
      o.checkpoint_bytes == 0
          ? 0
          : std::max<uint64_t>(
                kAlign, o.checkpoint_bytes / static_cast<uint64_t>(o.shards) / kAlign * kAlign);
  const uint64_t ckpt = shard_bytes * static_cast<uint64_t>(o.shards);
  const double need = static_cast<double>(o.file_bytes + ckpt) * 1.05 + (64 << 20);
  if (free_bytes < need) {
    return Unavailable(fmt::format(
        "--path {}: needs {} free for the tests, has {} (lower --size or --checkpoint-size)",
        o.path, units::FormatBytes(need), units::FormatBytes(free_bytes)));
  }
  GPUFLEET_ASSIGN_OR_RETURN(auto work, WorkDir::Create(o.path));

  StorageReport r;
  r.path = o.path;
  r.filesystem = FilesystemOf(o.path);
  r.file_bytes = o.file_bytes / o.block_bytes * o.block_bytes;
  r.block_bytes = o.block_bytes;
  AlignedBuffer buf(o.block_bytes);
  if (buf.p == nullptr) return Unavailable("cannot allocate the I/O buffer");

  // O_DIRECT: tmpfs, some FUSE and overlay filesystems refuse it with EINVAL.
  const std::string seq = work->File("sequential");
  r.direct = o.direct != "off";
  int fd = OpenFile(seq, O_CREAT | O_WRONLY | O_TRUNC, r.direct);
  if (fd < 0 && errno == EINVAL && o.direct == "auto") {
    r.direct = false;
    r.direct_note = fmt::format(
        "{} refuses O_DIRECT: buffered I/O, fsync at the end of writes; "
        "reads may come from the page cache",
        r.filesystem);
    fd = OpenFile(seq, O_CREAT | O_WRONLY | O_TRUNC, false);
  }
  if (fd < 0) return Errno("open " + seq);
  if (!r.direct && r.direct_note.empty()) r.direct_note = "--direct off: buffered I/O";

  ShowProgress(o.progress, "sequential write");
  double t0 = Now();
  Status s = WriteAll(fd, buf, 0, r.file_bytes, o.block_bytes);
  if (s && fsync(fd) != 0) s = Errno("fsync");
  const double write_s = Now() - t0;
  close(fd);
  GPUFLEET_RETURN_IF_ERROR(s);
  r.write_bytes_per_s = static_cast<double>(r.file_bytes) / write_s;

  ShowProgress(o.progress, "sequential read");
  fd = OpenFile(seq, O_RDONLY, r.direct);
  if (fd < 0) return Errno("open " + seq);
  if (!r.direct) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // best effort
  t0 = Now();
  for (uint64_t off = 0; off < r.file_bytes && !Stopped(); off += o.block_bytes) {
    if (pread(fd, buf.p, o.block_bytes, static_cast<off_t>(off)) < 0 && errno != EINTR) {
      s = Errno("read");
      break;
    }
  }
  const double read_s = Now() - t0;
  if (s && Stopped()) s = Errno("read");
  GPUFLEET_RETURN_IF_ERROR(s);
  r.read_bytes_per_s = static_cast<double>(r.file_bytes) / read_s;

  ShowProgress(o.progress, "random 4 KiB reads");
  {
    r.jobs = o.jobs;
    std::vector<std::vector<double>> lat(static_cast<size_t>(o.jobs));
    std::atomic<bool> failed{false};
    std::vector<std::thread> threads;
    const uint64_t blocks = r.file_bytes / kAlign;
    const double end = Now() + o.random_seconds;
    for (int j = 0; j < o.jobs; ++j) {
      threads.emplace_back([&, j] {
        AlignedBuffer b(kAlign);
        std::mt19937_64 rng(static_cast<uint64_t>(j) + 1);
        auto& mine = lat[static_cast<size_t>(j)];
        while (!Stopped() && Now() < end) {
          const off_t off = static_cast<off_t>(rng() % blocks * kAlign);
          const double a = Now();
          if (pread(fd, b.p, kAlign, off) != static_cast<ssize_t>(kAlign)) {
            if (errno != EINTR) failed = true;
            break;
          }
          mine.push_back(Now() - a);
        }
      });
    }
    for (auto& t : threads) t.join();
    if (failed) s = Errno("random read");
    std::vector<double> all;
    for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
    r.random_iops = static_cast<double>(all.size()) / o.random_seconds;
    r.random_read = Summarise(std::move(all));
  }
  close(fd);
  if (s && Stopped()) s = Errno("random read");
  GPUFLEET_RETURN_IF_ERROR(s);

  ShowProgress(o.progress, "fsync latency");
  {
    const std::string f = work->File("fsync");
    fd = OpenFile(f, O_CREAT | O_WRONLY | O_TRUNC, false);
    if (fd < 0) return Errno("open " + f);
    std::vector<double> lat;
    r.fsyncs = o.fsyncs;
    for (int i = 0; i < o.fsyncs && s && !Stopped(); ++i) {
      if (pwrite(fd, buf.p, kAlign, static_cast<off_t>(i) * static_cast<off_t>(kAlign)) < 0) {
        s = Errno("write");
        break;
      }
      const double a = Now();
      if (fsync(fd) != 0) s = Errno("fsync");
      lat.push_back(Now() - a);
    }
    close(fd);
    if (s && Stopped()) s = Errno("fsync");
    GPUFLEET_RETURN_IF_ERROR(s);
    r.fsync = Summarise(std::move(lat));
  }

  ShowProgress(o.progress, "metadata");
  {
    r.metadata_files = o.metadata_files;
    auto name = [&](int i) { return work->File(fmt::format("m{}", i)); };
    t0 = Now();
    for (int i = 0; i < o.metadata_files && !Stopped(); ++i) {
      const int m = open(name(i).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
      if (m < 0) return Errno("create");
      close(m);
    }
    r.creates_per_s = o.metadata_files / (Now() - t0);
    t0 = Now();
    struct stat sb;
    for (int i = 0; i < o.metadata_files && !Stopped(); ++i) {
      if (stat(name(i).c_str(), &sb) != 0) return Errno("stat");
    }
    r.stats_per_s = o.metadata_files / (Now() - t0);
    t0 = Now();
    for (int i = 0; i < o.metadata_files && !Stopped(); ++i) {
      if (unlink(name(i).c_str()) != 0) return Errno("unlink");
    }
    r.unlinks_per_s = o.metadata_files / (Now() - t0);
    if (Stopped()) return Errno("metadata");
  }

  if (ckpt > 0) {
    ShowProgress(o.progress, "checkpoint");
    r.checkpoint_bytes = ckpt;
    r.shards = o.shards;
    r.checkpoint_budget_s = o.checkpoint_budget_s;
    const uint64_t per = shard_bytes;
    std::vector<std::string> errors(static_cast<size_t>(o.shards));
    std::vector<std::thread> threads;
    t0 = Now();
    for (int i = 0; i < o.shards; ++i) {
      threads.emplace_back([&, i] {
        const std::string f = work->File(fmt::format("shard-{:05}", i));
        const int sfd = OpenFile(f, O_CREAT | O_WRONLY | O_TRUNC, r.direct);
        if (sfd < 0) {
          errors[static_cast<size_t>(i)] = fmt::format("open {}: {}", f, std::strerror(errno));
          return;
        }
        Status w = WriteAll(sfd, buf, 0, per, o.block_bytes);
        if (w && fsync(sfd) != 0) w = Errno("fsync");
        if (!w) errors[static_cast<size_t>(i)] = w.error().message;
        close(sfd);
      });
    }
    for (auto& t : threads) t.join();
    r.checkpoint_s = Now() - t0;
    if (Stopped()) return Errno("checkpoint");
    for (const auto& e : errors) {
      if (!e.empty()) return Unavailable("checkpoint: " + e);
    }
  }
  ClearProgress(o.progress);

  r.read_needed_bytes_per_s = o.read_needed_bytes_per_s;
  if (r.checkpoint_bytes > 0 && r.checkpoint_s > r.checkpoint_budget_s) {
    r.findings.push_back(
        {"fail",
         fmt::format(
             "checkpoint of {} in {} shards took {}, over the {} budget ({})",
             units::FormatBytes(static_cast<double>(r.checkpoint_bytes)), r.shards,
             units::FormatTime(r.checkpoint_s), units::FormatTime(r.checkpoint_budget_s),
             units::FormatByteRate(static_cast<double>(r.checkpoint_bytes) / r.checkpoint_s))});
  }
  if (r.read_needed_bytes_per_s > 0 && r.read_bytes_per_s < r.read_needed_bytes_per_s) {
    r.findings.push_back(
        {"fail", fmt::format("sequential read {} is below the {} this node's GPUs consume",
                             units::FormatByteRate(r.read_bytes_per_s),
                             units::FormatByteRate(r.read_needed_bytes_per_s))});
  }
  // Ten times the 10 ms disk-latency limit of `gpufleet check`.
  if (r.fsync.p99_s > 0.100) {
    r.findings.push_back({"warn", fmt::format("fsync p99 {} (slow journal or a remote filesystem)",
                                              units::FormatTime(r.fsync.p99_s))});
  }
  if (!r.direct) r.findings.push_back({"warn", r.direct_note});
  return r;
}

std::string StorageText(const StorageReport& r) {
  auto lat = [](const Latency& l) {
    return fmt::format("p50 {:.1f} us, p90 {:.1f} us, p99 {:.1f} us, max {:.1f} us", l.p50_s * 1e6,
                       l.p90_s * 1e6, l.p99_s * 1e6, l.max_s * 1e6);
  };
  std::string out = fmt::format("# gpufleet bench storage: {} ({}), {}\n", r.path, r.filesystem,
                                r.direct ? "O_DIRECT" : "buffered");
  out += fmt::format("  sequential write  {:>14}   {} in {} blocks, fsync at the end\n",
                     units::FormatByteRate(r.write_bytes_per_s),
                     units::FormatBytes(static_cast<double>(r.file_bytes)),
                     units::FormatBytes(static_cast<double>(r.block_bytes)));
  out += fmt::format("  sequential read   {:>14}\n", units::FormatByteRate(r.read_bytes_per_s));
  out += fmt::format("  4 KiB random read {:>10.0f} IOPS   {} threads; {}\n", r.random_iops, r.jobs,
                     lat(r.random_read));
  out += fmt::format("  fsync (4 KiB)     {:>14}   {}\n", fmt::format("{} calls", r.fsyncs),
                     lat(r.fsync));
  out += fmt::format(
      "  metadata          {:.0f} creates/s, {:.0f} stats/s, {:.0f} unlinks/s ({} files)\n",
      r.creates_per_s, r.stats_per_s, r.unlinks_per_s, r.metadata_files);
  if (r.checkpoint_bytes > 0) {
    out +=
        fmt::format("  checkpoint        {} in {} shards: {} ({}), budget {}\n",
                    units::FormatBytes(static_cast<double>(r.checkpoint_bytes)), r.shards,
                    units::FormatTime(r.checkpoint_s),
                    units::FormatByteRate(static_cast<double>(r.checkpoint_bytes) / r.checkpoint_s),
                    units::FormatTime(r.checkpoint_budget_s));
  }
  if (r.read_needed_bytes_per_s > 0) {
    out += fmt::format("  input rate needed {:>14}   (the plan: this node's GPUs)\n",
                       units::FormatByteRate(r.read_needed_bytes_per_s));
  }
  for (const auto& f : r.findings) out += fmt::format("# {}: {}\n", f.severity, f.message);
  out += fmt::format("# verdict: {}\n", r.passed() ? "pass" : "fail");
  return out;
}

nlohmann::json StorageJson(const StorageReport& r) {
  auto lat = [](const Latency& l) {
    return nlohmann::json{
        {"p50_s", l.p50_s}, {"p90_s", l.p90_s}, {"p99_s", l.p99_s}, {"max_s", l.max_s}};
  };
  nlohmann::json results = nlohmann::json::array();
  results.push_back({{"op", "sequential_write"},
                     {"bytes", r.file_bytes},
                     {"throughput_bytes_per_s", r.write_bytes_per_s}});
  results.push_back({{"op", "sequential_read"},
                     {"bytes", r.file_bytes},
                     {"throughput_bytes_per_s", r.read_bytes_per_s}});
  results.push_back({{"op", "random_read_4k"},
                     {"bytes", 4096},
                     {"iops", r.random_iops},
                     {"throughput_bytes_per_s", r.random_iops * 4096},
                     {"latency", lat(r.random_read)}});
  results.push_back(
      {{"op", "fsync"}, {"bytes", 4096}, {"latency", lat(r.fsync)}, {"time_s", r.fsync.p50_s}});
  results.push_back({{"op", "metadata"},
                     {"bytes", 0},
                     {"creates_per_s", r.creates_per_s},
                     {"stats_per_s", r.stats_per_s},
                     {"unlinks_per_s", r.unlinks_per_s}});
  if (r.checkpoint_bytes > 0) {
    results.push_back(
        {{"op", "checkpoint"},
         {"bytes", r.checkpoint_bytes},
         {"shards", r.shards},
         {"time_s", r.checkpoint_s},
         {"budget_s", r.checkpoint_budget_s},
         {"throughput_bytes_per_s", static_cast<double>(r.checkpoint_bytes) / r.checkpoint_s}});
  }
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"severity", f.severity}, {"message", f.message}});
  nlohmann::json doc = BenchDocument("storage", r.passed());
  doc.update({{"path", r.path},
              {"filesystem", r.filesystem},
              {"direct", r.direct},
              {"results", results},
              {"findings", findings}});
  return doc;
}

}  // namespace gpufleet::bench
