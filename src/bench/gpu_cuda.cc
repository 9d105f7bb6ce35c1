// `bench gpu` on CUDA: cuBLAS GEMMs, device-to-device copies and pinned
// host<->device copies, timed with CUDA events. Host API only (no kernels), so
// it compiles with the C++ compiler against the toolkit's headers.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "bench/cuda_status.h"
#include "bench/gpu.h"
#include "model/catalog.h"

namespace gpufleet::bench {
namespace {

Status Cublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return OkStatus();
  return Unavailable(fmt::format("{}: cuBLAS status {}", what, static_cast<int>(s)));
}

int NumaNodeOf(const std::string& bus_id) {
  std::string id = bus_id;
  std::transform(id.begin(), id.end(), id.begin(), ::tolower);
  // cudaDeviceGetPCIBusId gives "0000:1B:00.0"; sysfs spells it in lower case.
  std::ifstream f("/sys/bus/pci/devices/" + id + "/numa_node");
  int node = -1;
  f >> node;
  return node;
}

const model::GpuSpec* CatalogGpu(const std::string& name) {
  const auto& cat = model::Catalog::Builtin();
  if (const auto* g = cat.FindGpu(name)) return g;
  std::string n = name;
  if (n.rfind("NVIDIA ", 0) == 0) n = n.substr(7);
  if (const auto* g = cat.FindGpu(n)) return g;
  // "H100 80GB HBM3" -> "H100"
  return cat.FindGpu(n.substr(0, n.find(' ')));
}

// Times `iters` calls of `f` on the current stream with events; seconds per call.
template <typename F>
Result<double> TimeIt(int iters, F f) {
  cudaEvent_t a, b;
  GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&a), "cudaEventCreate"));
  GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&b), "cudaEventCreate"));
  for (int i = 0; i < 2; ++i) GPUFLEET_RETURN_IF_ERROR(f());  // warm-up
  GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(a), "cudaEventRecord"));
  for (int i = 0; i < iters; ++i) GPUFLEET_RETURN_IF_ERROR(f());
  GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(b), "cudaEventRecord"));
  GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaEventSynchronize(b), "cudaEventSynchronize"));
  float ms = 0;
  GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime"));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / 1e3 / iters;
}

struct GemmType {
  cudaDataType_t ab, c;
  cublasComputeType_t compute;
  size_t elem;
};

Result<GemmType> GemmTypeOf(const std::string& dtype) {
  if (dtype == "bf16") return GemmType{CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2};
  if (dtype == "fp16") return GemmType{CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2};
  if (dtype == "tf32") return GemmType{CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4};
  if (dtype == "fp32") return GemmType{CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4};
  return InvalidArgument(fmt::format("--dtype {}: one of bf16, fp16, tf32, fp32", dtype));
}

double PeakOf(const model::GpuSpec* g, const std::string& dtype) {
  if (g == nullptr) return 0;
  if (dtype == "bf16") return g->bf16_flop_per_s;
  if (dtype == "fp16") return g->fp16_flop_per_s;
  if (dtype == "tf32") return g->tf32_flop_per_s;
  return g->fp32_flop_per_s;
}

// One direction of PCIe x16 at the catalog's generation (128b/130b from Gen3).
double PciePeak(const model::GpuSpec* g) {
  if (g == nullptr || g->pcie_gen < 3) return 0;
  const double gts = 8.0 * (1 << (g->pcie_gen - 3));
  return gts * 1e9 * 16 * 128 / 130 / 8;
}

// Pinned host memory on `node`: mmap, bind with mbind(2), touch, register.
struct HostBuffer {
  void* p = nullptr;
  size_t bytes = 0;
  ~HostBuffer() {
    if (p != nullptr) {
      cudaHostUnregister(p);
      munmap(p, bytes);
    }
  }
};

Status AllocHost(size_t bytes, int node, HostBuffer* out) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return Unavailable(fmt::format("mmap {} bytes failed", bytes));
  out->p = p;
  out->bytes = bytes;
  if (node >= 0 && node < 64) {
    const unsigned long mask = 1ul << node;
    constexpr int kMpolBind = 2;
    // Best effort: without the permission the pages land where the kernel puts them.
    syscall(SYS_mbind, p, bytes, kMpolBind, &mask, sizeof(mask) * 8, 0);
  }
  std::memset(p, 1, bytes);
  return CudaStatus(cudaHostRegister(p, bytes, cudaHostRegisterDefault), "cudaHostRegister");
}

Status BenchOne(int dev, const GpuBenchOptions& o, std::vector<GpuMeasurement>* out) {
  GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(dev), "cudaSetDevice"));
  cudaDeviceProp prop;
  GPUFLEET_RETURN_IF_ERROR(
      CudaStatus(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties"));
  char bus[32] = {};
  GPUFLEET_RETURN_IF_ERROR(
      CudaStatus(cudaDeviceGetPCIBusId(bus, sizeof(bus), dev), "cudaDeviceGetPCIBusId"));
  GpuMeasurement base;
  base.gpu = dev;
  base.name = prop.name;
  base.bus_id = bus;
  base.numa_node = NumaNodeOf(bus);
  const model::GpuSpec* spec = CatalogGpu(prop.name);

  cublasHandle_t h;
  GPUFLEET_RETURN_IF_ERROR(Cublas(cublasCreate(&h), "cublasCreate"));
  const size_t n = static_cast<size_t>(o.gemm_size);
  for (const auto& dtype : o.dtypes) {
    auto t = GemmTypeOf(dtype);
    if (!t) {
      cublasDestroy(h);
      return t.error();
    }
    void *a = nullptr, *b = nullptr, *c = nullptr;
    const size_t bytes = n * n * t->elem;
    Status s = CudaStatus(cudaMalloc(&a, bytes), "cudaMalloc");
    if (s) s = CudaStatus(cudaMalloc(&b, bytes), "cudaMalloc");
    if (s) s = CudaStatus(cudaMalloc(&c, bytes), "cudaMalloc");
    if (s) s = CudaStatus(cudaMemset(a, 0, bytes), "cudaMemset");
    if (s) s = CudaStatus(cudaMemset(b, 0, bytes), "cudaMemset");
    const float alpha = 1, beta = 0;
    const int in = static_cast<int>(n);
    auto secs =
        s ? TimeIt(o.iters,
                   [&]() -> Status {
                     return Cublas(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, in, in, in, &alpha, a,
                                                t->ab, in, b, t->ab, in, &beta, c, t->c, in,
                                                t->compute, CUBLAS_GEMM_DEFAULT),
                                   "cublasGemmEx");
                   })
          : Result<double>(s.error());
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    if (!secs) {
      cublasDestroy(h);
      return secs.error();
    }
    GpuMeasurement m = base;
    m.test = "gemm";
    m.dtype = dtype;
    m.unit = "FLOP/s";
    m.value = 2.0 * n * n * n / *secs;
    m.peak = PeakOf(spec, dtype);
    m.floor = GpuFloor("gemm", dtype);
    out->push_back(m);
  }
  cublasDestroy(h);

  // HBM: a device-to-device copy reads and writes every byte.
  {
    const auto bytes = static_cast<size_t>(o.copy_bytes);
    void *src = nullptr, *dst = nullptr;
    GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&src, bytes), "cudaMalloc"));
    Status s = CudaStatus(cudaMalloc(&dst, bytes), "cudaMalloc");
    auto secs =
        s ? TimeIt(o.iters,
                   [&] {
                     return CudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice),
                                       "cudaMemcpyAsync");
                   })
          : Result<double>(s.error());
    cudaFree(src);
    cudaFree(dst);
    if (!secs) return secs.error();
    GpuMeasurement m = base;
    m.test = "hbm";
    m.unit = "B/s";
    m.value = 2.0 * static_cast<double>(bytes) / *secs;
    m.peak = spec ? spec->memory_bandwidth_bytes_per_s : 0;
    m.floor = GpuFloor("hbm", "");
    out->push_back(m);
  }

  // Host <-> device with pinned memory on the GPU's NUMA node.
  {
    const auto bytes = static_cast<size_t>(o.host_bytes);
    HostBuffer host;
    GPUFLEET_RETURN_IF_ERROR(AllocHost(bytes, base.numa_node, &host));
    void* d = nullptr;
    GPUFLEET_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&d, bytes), "cudaMalloc"));
    for (const char* dir : {"h2d", "d2h"}) {
      const bool h2d = std::strcmp(dir, "h2d") == 0;
      auto secs = TimeIt(o.iters, [&] {
        return CudaStatus(h2d ? cudaMemcpyAsync(d, host.p, bytes, cudaMemcpyHostToDevice)
                              : cudaMemcpyAsync(host.p, d, bytes, cudaMemcpyDeviceToHost),
                          "cudaMemcpyAsync");
      });
      if (!secs) {
        cudaFree(d);
        return secs.error();
      }
      GpuMeasurement m = base;
      m.test = dir;
      m.unit = "B/s";
      m.value = static_cast<double>(bytes) / *secs;
      m.peak = PciePeak(spec);
      m.floor = GpuFloor(dir, "");
      out->push_back(m);
    }
    cudaFree(d);
  }
  return OkStatus();
}

}  // namespace

bool GpuBuiltIn() { return true; }

Result<std::vector<GpuMeasurement>> RunGpuBench(const GpuBenchOptions& o) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    return Unavailable("bench gpu: no CUDA device visible (driver loaded? CUDA_VISIBLE_DEVICES?)");
  }
  std::vector<int> devices = o.devices;
  if (devices.empty()) {
    for (int i = 0; i < count; ++i) devices.push_back(i);
  }
  std::vector<GpuMeasurement> out;
  for (int d : devices) {
    if (d < 0 || d >= count) {
      return InvalidArgument(fmt::format("--device {}: {} GPUs are visible", d, count));
    }
    GPUFLEET_RETURN_IF_ERROR(BenchOne(d, o, &out));
  }
  return out;
}

}  // namespace gpufleet::bench
