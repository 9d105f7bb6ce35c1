#pragma once
// The measured transport of `bench collective` and `bench pairs`, behind one
// interface: MPI on host buffers (mpi_plane.cc, always built) and NCCL on GPU
// buffers (nccl_plane.cc, built when CMake finds CUDA with nccl.h). Every call
// is blocking from the caller's view; the MpiWorld watchdog bounds it.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "bench/collective_def.h"
#include "bench/mpi_world.h"

namespace gpufleet::bench {

struct Call {
  Op op = Op::kAllReduce;
  DataType type = DataType::kFloat;
  RedOp redop = RedOp::kSum;
  int root = 0;
  Shape shape;
};

class DataPlane {
 public:
  virtual ~DataPlane() = default;
  virtual std::string_view name() const = 0;  // "mpi", "nccl"
  // kInvalidArgument for a type or reduction the transport does not have.
  virtual Status Supports(DataType type, RedOp redop) const = 0;
  // Where the buffers live, for the table's header ("host", "GPU 0 0000:1b:00.0").
  virtual std::string device() const = 0;

  // Send and receive buffers of at least these many bytes (kept between sizes).
  virtual Status Reserve(size_t send_bytes, size_t recv_bytes) = 0;
  // Host <-> buffer copies, outside timing.
  virtual Status SetSend(const void* host, size_t bytes) = 0;
  virtual Status SetRecv(const void* host, size_t bytes) = 0;
  // The bytes of the result of `call` on this rank (the receive buffer, or the
  // send buffer of broadcast's root, which MPI broadcasts in place).
  virtual Status GetResult(const Call& call, void* host, size_t bytes) = 0;
  // Test-only: flips element 0 of the result, as a corrupting link would.
  virtual Status Corrupt(const Call& call) = 0;

  // Runs `iters` back-to-back operations and returns each one's seconds
  // (completion on this rank).
  virtual Result<std::vector<double>> Run(const Call& call, int iters) = 0;

  // Pairs: `bytes` to and from `peer` at once (both directions), `iters`
  // times; and the round trip of `bytes` (a ping-pong) for latency.
  virtual Result<std::vector<double>> Exchange(int peer, size_t bytes, int iters) = 0;
  virtual Result<std::vector<double>> PingPong(int peer, bool first, size_t bytes, int iters) = 0;
};

// The MPI data plane, from the MPI plugin (mpi_plugin.h).
Result<std::unique_ptr<DataPlane>> MakeMpiPlane(MpiWorld* world);
// nullptr with an error when gpufleet-bench was built without NCCL or no GPU is visible.
Result<std::unique_ptr<DataPlane>> MakeNcclPlane(MpiWorld* world);
bool NcclBuiltIn();

}  // namespace gpufleet::bench
