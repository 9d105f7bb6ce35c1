// The NCCL data plane: one GPU per rank (the rank's index on its host, modulo
// the visible GPUs), the NCCL unique id sent over MPI, buffers in device
// memory, each operation timed with CUDA events on the rank's stream.

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <chrono>
#include <thread>

#include "bench/cuda_status.h"
#include "bench/data_plane.h"

namespace gpufleet::bench {
namespace {

Status Nccl(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return OkStatus();
  return Unavailable(fmt::format("{}: {}", what, ncclGetErrorString(r)));
}

ncclDataType_t NcclType(DataType t) {
  switch (t) {
    case DataType::kInt8:
      return ncclInt8;
    case DataType::kUint8:
      return ncclUint8;
    case DataType::kInt32:
      return ncclInt32;
    case DataType::kUint32:
      return ncclUint32;
    case DataType::kInt64:
      return ncclInt64;
    case DataType::kUint64:
      return ncclUint64;
    case DataType::kHalf:
      return ncclFloat16;
    case DataType::kFloat:
      return ncclFloat32;
    case DataType::kDouble:
      return ncclFloat64;
    case DataType::kBf16:
      return ncclBfloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t NcclOp(RedOp op) {
  switch (op) {
    case RedOp::kSum:
      return ncclSum;
    case RedOp::kProd:
      return ncclProd;
    case RedOp::kMin:
      return ncclMin;
    case RedOp::kMax:
      return ncclMax;
    case RedOp::kAvg:
      return ncclAvg;
  }
  return ncclSum;
}

class NcclPlane final : public DataPlane {
 public:
  NcclPlane(MpiWorld* world, int device) : world_(world), device_(device) {}
  ~NcclPlane() override {
    if (comm_ != nullptr) ncclCommDestroy(comm_);
    for (auto* e : events_) cudaEventDestroy(e);
    cudaFree(send_);
    cudaFree(recv_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  Status Init() {
    GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device_), "cudaSetDevice"));
    char bus[32] = {};
    GPUFLEET_RETURN_IF_ERROR(
        CudaStatus(cudaDeviceGetPCIBusId(bus, sizeof(bus), device_), "cudaDeviceGetPCIBusId"));
    bus_id_ = bus;
    GPUFLEET_RETURN_IF_ERROR(
        CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
    ncclUniqueId id;
    if (world_->rank() == 0)
      GPUFLEET_RETURN_IF_ERROR(Nccl(ncclGetUniqueId(&id), "ncclGetUniqueId"));
    world_->Broadcast(&id, sizeof(id), 0);
    world_->Arm("ncclCommInitRank", 0);
    const Status s =
        Nccl(ncclCommInitRank(&comm_, world_->size(), id, world_->rank()), "ncclCommInitRank");
    world_->Disarm();
    return s;
  }

  std::string_view name() const override { return "nccl"; }
  std::string device() const override { return fmt::format("GPU {} {}", device_, bus_id_); }
  Status Supports(DataType, RedOp) const override { return OkStatus(); }

  Status Reserve(size_t send_bytes, size_t recv_bytes) override {
    if (send_bytes > send_cap_) {
      cudaFree(send_);
      send_ = nullptr;
      GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&send_, send_bytes), "cudaMalloc"));
      send_cap_ = send_bytes;
    }
    if (recv_bytes > recv_cap_) {
      cudaFree(recv_);
      recv_ = nullptr;
      GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&recv_, recv_bytes), "cudaMalloc"));
      recv_cap_ = recv_bytes;
    }
    return OkStatus();
  }
  Status SetSend(const void* host, size_t bytes) override {
    return CudaStatus(cudaMemcpy(send_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  Status SetRecv(const void* host, size_t bytes) override {
    return CudaStatus(cudaMemcpy(recv_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  Status GetResult(const Call&, void* host, size_t bytes) override {
    return CudaStatus(cudaMemcpy(host, recv_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
  Status Corrupt(const Call&) override {
    unsigned char b = 0;
    GPUFLEET_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpy(&b, recv_, 1, cudaMemcpyDeviceToHost), "cudaMemcpy"));
    b ^= 0x40;
    return CudaStatus(cudaMemcpy(recv_, &b, 1, cudaMemcpyHostToDevice), "cudaMemcpy");
  }

  Result<std::vector<double>> Run(const Call& c, int iters) override {
    return Timed(iters, [&] { return Once(c); });
  }

  Result<std::vector<double>> Exchange(int peer, size_t bytes, int iters) override {
    GPUFLEET_RETURN_IF_ERROR(Reserve(bytes, bytes));
    return Timed(iters, [&] {
      ncclGroupStart();
      ncclSend(send_, bytes, ncclInt8, peer, comm_, stream_);
      ncclRecv(recv_, bytes, ncclInt8, peer, comm_, stream_);
      return ncclGroupEnd();
    });
  }

  Result<std::vector<double>> PingPong(int peer, bool first, size_t bytes, int iters) override {
    GPUFLEET_RETURN_IF_ERROR(Reserve(bytes, bytes));
    return Timed(iters, [&] {
      ncclResult_t r = first ? ncclSend(send_, bytes, ncclInt8, peer, comm_, stream_)
                             : ncclRecv(recv_, bytes, ncclInt8, peer, comm_, stream_);
      if (r != ncclSuccess) return r;
      return first ? ncclRecv(recv_, bytes, ncclInt8, peer, comm_, stream_)
                   : ncclSend(send_, bytes, ncclInt8, peer, comm_, stream_);
    });
  }

 private:
  template <typename F>
  Result<std::vector<double>> Timed(int iters, F enqueue) {
    while (static_cast<int>(events_.size()) < 2 * iters + 2) {
      cudaEvent_t e;
      GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&e), "cudaEventCreate"));
      events_.push_back(e);
    }
    for (int i = 0; i < iters; ++i) {
      cudaEventRecord(events_[static_cast<size_t>(2 * i)], stream_);
      GPUFLEET_RETURN_IF_ERROR(Nccl(enqueue(), "NCCL"));
      cudaEventRecord(events_[static_cast<size_t>(2 * i + 1)], stream_);
    }
    // Poll rather than block, so an asynchronous NCCL error (a peer gone)
    // surfaces; the watchdog bounds the wait.
    int completed = 0;
    for (;;) {
      // Each finished operation is progress for the watchdog.
      while (completed < iters &&
             cudaEventQuery(events_[static_cast<size_t>(2 * completed + 1)]) == cudaSuccess) {
        ++completed;
        world_->Tick();
      }
      const cudaError_t q = cudaStreamQuery(stream_);
      if (q == cudaSuccess) break;
      if (q != cudaErrorNotReady) return CudaStatus(q, "cudaStreamQuery").error();
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm_, &async);
      if (async != ncclSuccess) {
        ncclCommAbort(comm_);
        comm_ = nullptr;
        return Nccl(async, "NCCL (asynchronous)").error();
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    std::vector<double> times(static_cast<size_t>(iters));
    for (int i = 0; i < iters; ++i) {
      float ms = 0;
      cudaEventElapsedTime(&ms, events_[static_cast<size_t>(2 * i)],
                           events_[static_cast<size_t>(2 * i + 1)]);
      times[static_cast<size_t>(i)] = ms / 1e3;
    }
    return times;
  }

  ncclResult_t Once(const Call& c) {
    const ncclDataType_t t = NcclType(c.type);
    const ncclRedOp_t op = NcclOp(c.redop);
    const int n = world_->size(), rank = world_->rank();
    const size_t count = c.shape.count;
    switch (c.op) {
      case Op::kAllReduce:
        return ncclAllReduce(send_, recv_, count, t, op, comm_, stream_);
      case Op::kAllGather:
        return ncclAllGather(send_, recv_, count, t, comm_, stream_);
      case Op::kReduceScatter:
        return ncclReduceScatter(send_, recv_, count, t, op, comm_, stream_);
      case Op::kBroadcast:
        return ncclBroadcast(send_, recv_, count, t, c.root, comm_, stream_);
      case Op::kReduce:
        return ncclReduce(send_, recv_, count, t, op, c.root, comm_, stream_);
      case Op::kAllToAll: {
        const size_t block = count / static_cast<size_t>(n);
        const size_t bytes = block * DataTypeSize(c.type);
        ncclGroupStart();
        for (int p = 0; p < n; ++p) {
          ncclSend(static_cast<char*>(send_) + p * bytes, block, t, p, comm_, stream_);
          ncclRecv(static_cast<char*>(recv_) + p * bytes, block, t, p, comm_, stream_);
        }
        return ncclGroupEnd();
      }
      case Op::kSendRecv:
        ncclGroupStart();
        ncclSend(send_, count, t, (rank + 1) % n, comm_, stream_);
        ncclRecv(recv_, count, t, (rank - 1 + n) % n, comm_, stream_);
        return ncclGroupEnd();
    }
    return ncclInvalidArgument;
  }

  MpiWorld* world_;
  int device_;
  std::string bus_id_;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  size_t send_cap_ = 0, recv_cap_ = 0;
  std::vector<cudaEvent_t> events_;
};

}  // namespace

bool NcclBuiltIn() { return true; }

Result<std::unique_ptr<DataPlane>> MakeNcclPlane(MpiWorld* world) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  // Every rank decides together, or the ranks with GPUs would wait for the others.
  const auto have = world->AllGather(count > 0 ? 1 : 0);
  for (size_t r = 0; r < have.size(); ++r) {
    if (have[r] == 0) {
      return Unavailable(fmt::format("--backend nccl: no CUDA device visible to rank {} on {}", r,
                                     world->hosts()[r]));
    }
  }
  // The rank's index among the ranks on its host picks its GPU.
  int local = 0;
  for (int r = 0; r < world->rank(); ++r) {
    if (world->hosts()[static_cast<size_t>(r)] == world->host()) ++local;
  }
  auto plane = std::make_unique<NcclPlane>(world, local % count);
  GPUFLEET_RETURN_IF_ERROR(plane->Init());
  return std::unique_ptr<DataPlane>(std::move(plane));
}

}  // namespace gpufleet::bench
