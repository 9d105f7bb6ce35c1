#pragma once
// `bench storage --path DIR`: what training asks of a filesystem. Sequential
// write and read (O_DIRECT where the filesystem allows it, else buffered and
// said so), fsync latency, 4 KiB random-read IOPS with latency percentiles,
// metadata rates (create, stat, unlink), and a checkpoint test: N shards written
// in parallel and fsynced, timed against the 2-minute budget. Everything lives
// in one folder of its own under DIR, removed at the end, on error and on
// SIGINT/SIGTERM. docs/bench.md.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/result.h"
#include "bench/results.h"

namespace gpufleet::bench {

struct StorageOptions {
  std::string path;
  uint64_t file_bytes = 1ull << 30;  // sequential test file
  uint64_t block_bytes = 1ull << 20;
  int fsyncs = 200;
  int jobs = 4;               // random-read threads
  double random_seconds = 5;  // random-read duration
  int metadata_files = 2000;
  uint64_t checkpoint_bytes = 0;  // 0: no checkpoint test
  int shards = 8;
  double checkpoint_budget_s = 120;
  double read_needed_bytes_per_s = 0;  // the GPUs' input rate per node; 0: not judged
  std::string direct = "auto";         // auto, on, off
  bool progress = false;
};

struct Latency {
  double p50_s = 0, p90_s = 0, p99_s = 0, max_s = 0;
};

struct StorageReport {
  std::string path;
  std::string filesystem;  // from /proc/mounts
  bool direct = false;
  std::string direct_note;  // why not O_DIRECT
  uint64_t file_bytes = 0, block_bytes = 0;
  double write_bytes_per_s = 0;
  double read_bytes_per_s = 0;
  Latency fsync;
  int fsyncs = 0;
  double random_iops = 0;
  Latency random_read;
  int jobs = 0;
  double creates_per_s = 0, stats_per_s = 0, unlinks_per_s = 0;
  int metadata_files = 0;
  uint64_t checkpoint_bytes = 0;
  int shards = 0;
  double checkpoint_s = 0;
  double checkpoint_budget_s = 0;
  double read_needed_bytes_per_s = 0;
  std::vector<Finding> findings;
  bool passed() const;
};

// Runs every test. kUnavailable when DIR is missing, not writable or lacks
// the free space the tests need (said in bytes); kDeadlineExceeded-free:
// a SIGINT/SIGTERM stops it with kUnavailable "interrupted", after cleanup.
Result<StorageReport> RunStorage(const StorageOptions& options);

// Installs SIGINT/SIGTERM handlers that make a running RunStorage stop and
// clean up; returns the signal that stopped it (0 if none).
void InstallStorageSignalHandlers();
int StorageInterruptSignal();

std::string StorageText(const StorageReport& r);
nlohmann::json StorageJson(const StorageReport& r);  // kind "storage"

}  // namespace gpufleet::bench
