// The MPI data plane (in the MPI plugin, mpi_plugin.h): host buffers, OpenMPI's collectives as a
// user's MPI job would call them (blocking; tuned algorithms), timed per operation with MPI_Wtime.

#include <fmt/format.h>
#include <mpi.h>

#include <cstring>

#include "bench/mpi_plugin.h"

namespace gpufleet::bench {
namespace {

MPI_Datatype MpiType(DataType t) {
  switch (t) {
    case DataType::kInt8:
      return MPI_INT8_T;
    case DataType::kUint8:
      return MPI_UINT8_T;
    case DataType::kInt32:
      return MPI_INT32_T;
    case DataType::kUint32:
      return MPI_UINT32_T;
    case DataType::kInt64:
      return MPI_INT64_T;
    case DataType::kUint64:
      return MPI_UINT64_T;
    case DataType::kFloat:
      return MPI_FLOAT;
    case DataType::kDouble:
      return MPI_DOUBLE;
    default:
      return MPI_DATATYPE_NULL;
  }
}

MPI_Op MpiOp(RedOp op) {
  switch (op) {
    case RedOp::kSum:
      return MPI_SUM;
    case RedOp::kProd:
      return MPI_PROD;
    case RedOp::kMin:
      return MPI_MIN;
    case RedOp::kMax:
      return MPI_MAX;
    default:
      return MPI_OP_NULL;
  }
}

Status MpiError(int rc, std::string_view what) {
  if (rc == MPI_SUCCESS) return OkStatus();
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return Unavailable(fmt::format("{}: {}", what, text));
}

// MPI counts are int; bigger sizes would need MPI-4's _c calls.
constexpr uint64_t kMaxCount = 0x7fffffff;

class MpiPlane final : public DataPlane {
 public:
  explicit MpiPlane(MpiWorld* world) : world_(world) {}

  std::string_view name() const override { return "mpi"; }
  std::string device() const override { return "host memory"; }

  Status Supports(DataType type, RedOp redop) const override {
    if (MpiType(type) == MPI_DATATYPE_NULL) {
      return InvalidArgument(
          fmt::format("--dtype {}: the mpi backend has no such type; int8..uint64, float or double",
                      DataTypeName(type)));
    }
    if (MpiOp(redop) == MPI_OP_NULL) {
      return InvalidArgument(
          fmt::format("--redop {}: the mpi backend has no such reduction", RedOpName(redop)));
    }
    return OkStatus();
  }

  Status Reserve(size_t send_bytes, size_t recv_bytes) override {
    // Touch the pages now so first-touch faults are not timed.
    if (send_.size() < send_bytes) send_.assign(send_bytes, 0);
    if (recv_.size() < recv_bytes) recv_.assign(recv_bytes, 0);
    return OkStatus();
  }
  Status SetSend(const void* host, size_t bytes) override {
    std::memcpy(send_.data(), host, bytes);
    return OkStatus();
  }
  Status SetRecv(const void* host, size_t bytes) override {
    std::memcpy(recv_.data(), host, bytes);
    return OkStatus();
  }
  Status GetResult(const Call& c, void* host, size_t bytes) override {
    std::memcpy(host, ResultBuffer(c), bytes);
    return OkStatus();
  }
  Status Corrupt(const Call& c) override {
    auto* p = static_cast<unsigned char*>(ResultBuffer(c));
    p[0] ^= 0x40;
    return OkStatus();
  }

  Result<std::vector<double>> Run(const Call& c, int iters) override {
    if (c.shape.send_count > kMaxCount || c.shape.recv_count > kMaxCount) {
      return InvalidArgument(
          fmt::format("{} elements: above the MPI backend's 2^31-1 per call", c.shape.recv_count));
    }
    std::vector<double> times(static_cast<size_t>(iters));
    for (int i = 0; i < iters; ++i) {
      const double t0 = MPI_Wtime();
      GPUFLEET_RETURN_IF_ERROR(MpiError(Once(c), OpName(c.op)));
      times[static_cast<size_t>(i)] = MPI_Wtime() - t0;
      world_->Tick();
    }
    return times;
  }

  Result<std::vector<double>> Exchange(int peer, size_t bytes, int iters) override {
    GPUFLEET_RETURN_IF_ERROR(Reserve(bytes, bytes));
    std::vector<double> times(static_cast<size_t>(iters));
    for (int i = 0; i < iters; ++i) {
      const double t0 = MPI_Wtime();
      GPUFLEET_RETURN_IF_ERROR(MpiError(
          MPI_Sendrecv(send_.data(), static_cast<int>(bytes), MPI_BYTE, peer, 11, recv_.data(),
                       static_cast<int>(bytes), MPI_BYTE, peer, 11, comm_, MPI_STATUS_IGNORE),
          "sendrecv"));
      times[static_cast<size_t>(i)] = MPI_Wtime() - t0;
      world_->Tick();
    }
    return times;
  }

  Result<std::vector<double>> PingPong(int peer, bool first, size_t bytes, int iters) override {
    GPUFLEET_RETURN_IF_ERROR(Reserve(bytes, bytes));
    std::vector<double> times(static_cast<size_t>(iters));
    const int n = static_cast<int>(bytes);
    for (int i = 0; i < iters; ++i) {
      const double t0 = MPI_Wtime();
      int rc;
      if (first) {
        rc = MPI_Send(send_.data(), n, MPI_BYTE, peer, 12, comm_);
        if (rc == MPI_SUCCESS)
          rc = MPI_Recv(recv_.data(), n, MPI_BYTE, peer, 12, comm_, MPI_STATUS_IGNORE);
      } else {
        rc = MPI_Recv(recv_.data(), n, MPI_BYTE, peer, 12, comm_, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) rc = MPI_Send(send_.data(), n, MPI_BYTE, peer, 12, comm_);
      }
      GPUFLEET_RETURN_IF_ERROR(MpiError(rc, "ping-pong"));
      times[static_cast<size_t>(i)] = MPI_Wtime() - t0;
      world_->Tick();
    }
    return times;
  }

 private:
  void* ResultBuffer(const Call& c) {
    return c.op == Op::kBroadcast && world_->rank() == c.root ? send_.data() : recv_.data();
  }

  int Once(const Call& c) {
    const MPI_Datatype t = MpiType(c.type);
    const MPI_Op op = MpiOp(c.redop);
    const int n = world_->size(), rank = world_->rank();
    const auto count = static_cast<int>(c.shape.count);
    void* s = send_.data();
    void* r = recv_.data();
    switch (c.op) {
      case Op::kAllReduce:
        return MPI_Allreduce(s, r, count, t, op, comm_);
      case Op::kAllGather:
        return MPI_Allgather(s, count, t, r, count, t, comm_);
      case Op::kReduceScatter:
        return MPI_Reduce_scatter_block(s, r, count, t, op, comm_);
      case Op::kBroadcast:
        return MPI_Bcast(rank == c.root ? s : r, count, t, c.root, comm_);
      case Op::kReduce:
        return MPI_Reduce(s, r, count, t, op, c.root, comm_);
      case Op::kAllToAll: {
        const int block = count / n;
        return MPI_Alltoall(s, block, t, r, block, t, comm_);
      }
      case Op::kSendRecv:
        return MPI_Sendrecv(s, count, t, (rank + 1) % n, 10, r, count, t, (rank - 1 + n) % n, 10,
                            comm_, MPI_STATUS_IGNORE);
    }
    return MPI_ERR_OTHER;
  }

  MpiWorld* world_;
  MPI_Comm comm_ = MPI_COMM_WORLD;
  std::vector<unsigned char> send_, recv_;
};

}  // namespace

std::unique_ptr<DataPlane> NewMpiPlane(MpiWorld* world) {
  return std::make_unique<MpiPlane>(world);
}

}  // namespace gpufleet::bench
