#pragma once
// The control plane of the distributed benchmarks: MPI (Open MPI, launched by
// mpirun or srun) for rank, size and host names, gathers of results to rank 0,
// and a watchdog. The watchdog thread never lets a run hang: while an
// operation is armed it waits at most `timeout`; then it asks every rank,
// over its own communicator, where it is (a roll call), names the ranks that
// did not answer (dead or stalled) or that are behind (stragglers), prints one
// error from the lowest surviving rank and ends the process with exit 3. Ranks
// answer roll calls at any time, even while their main thread is blocked in a
// collective (MPI_THREAD_MULTIPLE). The measured data plane (MPI or NCCL) is
// separate: data_plane.h.
//
// Nothing here includes mpi.h: MPI lives in a plugin, gpufleet-mpi.so
// (mpi_plugin.h), which the helpers load at run time from lib/gpufleet/ beside
// their bin/. The helpers themselves need no MPI library, so a relocatable
// bundle carries no site runtime in its binaries, `bench gpu` runs where MPI
// is absent, and the MPI that loads is the site's, the one its mpirun or srun
// speaks to.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"

namespace gpufleet::bench {

class MpiWorld {
 public:
  // Loads the MPI plugin and calls MPI_Init_thread(MPI_THREAD_MULTIPLE);
  // kUnavailable when the plugin or the site's MPI library does not load, when
  // MPI cannot give threads, or when the process was not launched by mpirun or
  // srun. Call once per process.
  static Result<std::unique_ptr<MpiWorld>> Init(int* argc, char*** argv);
  virtual ~MpiWorld() = default;  // the plugin's: stops the watchdog, MPI_Finalize

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& host() const { return hosts_[static_cast<size_t>(rank_)]; }
  const std::vector<std::string>& hosts() const { return hosts_; }  // by rank
  int nodes() const;                                                // distinct host names
  int max_ranks_per_node() const;

  // Collective helpers on the world (blocking; call from the main thread).
  virtual void Barrier() = 0;
  virtual uint64_t SumToRoot(uint64_t v) = 0;
  virtual std::vector<double> GatherToRoot(double v) = 0;  // by rank; empty off root
  virtual std::vector<double> MaxToRoot(const std::vector<double>& v) = 0;  // element-wise max
  virtual std::vector<double> AllGather(double v) = 0;  // by rank, on every rank
  virtual void Broadcast(void* data, size_t bytes, int root) = 0;

  // Watchdog. `Arm` before a blocking network operation with a label for
  // messages ("all_reduce 4194304 B") and the iteration; `Disarm` after.
  virtual void StartWatchdog(double timeout_s) = 0;
  virtual void Arm(const std::string& label, int64_t iteration) = 0;
  // Progress inside an armed phase (one operation done): the timeout counts
  // from the last tick, so a long loop of quick operations never trips it.
  virtual void Tick() = 0;
  virtual void Disarm() = 0;

 protected:
  MpiWorld() = default;

  int rank_ = 0;
  int size_ = 1;
  std::vector<std::string> hosts_;
};

}  // namespace gpufleet::bench
