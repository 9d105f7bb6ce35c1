#pragma once
// The control plane of the distributed benchmarks: MPI (OpenMPI, launched by
// mpirun or srun) for rank, size and host names, gathers of results to rank 0,
// and a watchdog. The watchdog thread never lets a run hang: while an
// operation is armed it waits at most `timeout`; then it asks every rank,
// over its own communicator, where it is (a roll call), names the ranks that
// did not answer (dead or stalled) or that are behind (stragglers), prints one
// error from the lowest surviving rank and ends the process with exit 3. Ranks
// answer roll calls at any time, even while their main thread is blocked in a
// collective (MPI_THREAD_MULTIPLE). The measured data plane (MPI or NCCL) is
// separate: data_plane.h.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"

namespace gpufleet::bench {

class MpiWorld {
 public:
  // MPI_Init_thread(MPI_THREAD_MULTIPLE); kUnavailable when MPI cannot give
  // threads or was not launched. Call once per process.
  static Result<std::unique_ptr<MpiWorld>> Init(int* argc, char*** argv);
  ~MpiWorld();  // stops the watchdog; MPI_Finalize

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& host() const { return hosts_[static_cast<size_t>(rank_)]; }
  const std::vector<std::string>& hosts() const { return hosts_; }  // by rank
  int nodes() const;                                                // distinct host names
  int max_ranks_per_node() const;

  // Collective helpers on the world (blocking; call from the main thread).
  void Barrier();
  uint64_t SumToRoot(uint64_t v);
  std::vector<double> GatherToRoot(double v);                   // by rank; empty off root
  std::vector<double> MaxToRoot(const std::vector<double>& v);  // element-wise max
  std::vector<double> AllGather(double v);                      // by rank, on every rank
  void Broadcast(void* data, size_t bytes, int root);
  // Point-to-point on the world, for pairs.
  void* world_handle() const;  // MPI_Comm, as an opaque pointer for the data plane

  // Watchdog. `Arm` before a blocking network operation with a label for
  // messages ("all_reduce 4194304 B") and the iteration; `Disarm` after.
  void StartWatchdog(double timeout_s);
  void Arm(const std::string& label, int64_t iteration);
  // Progress inside an armed phase (one operation done): the timeout counts
  // from the last tick, so a long loop of quick operations never trips it.
  void Tick() {
    ++iteration_;
    if (armed_since_ns_.load(std::memory_order_relaxed) != 0) armed_since_ns_ = NowNs();
  }
  void Disarm();

 private:
  MpiWorld() = default;
  static int64_t NowNs();
  void WatchdogLoop();
  std::string Label();  // the armed phase's label, under mu_
  [[noreturn]] void RollCallAndExit();

  int rank_ = 0;
  int size_ = 1;
  std::vector<std::string> hosts_;
  void* control_ = nullptr;  // MPI_Comm of the watchdog

  double timeout_s_ = 300;
  std::thread watchdog_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // guards label_ (the atomics are read without it)
  std::string label_;
  std::atomic<int64_t> iteration_{-1};
  std::atomic<int64_t> armed_since_ns_{0};  // 0: disarmed
  std::atomic<uint64_t> epoch_{0};          // bumps on every Arm: a progress counter
};

}  // namespace gpufleet::bench
