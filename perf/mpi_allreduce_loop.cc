// The peer of `gpufleet bench collective all_reduce` in perf/bench_mpi.sh: a
// bare MPI_Allreduce loop over the same sizes, warm-up and iterations, the way
// a user would write it. Prints "size time_s busbw_bytes_per_s" per size (rank
// 0), time averaged over ranks as nccl-tests -a 1 does.
// usage: mpi_allreduce_loop MIN_BYTES MAX_BYTES FACTOR WARMUP ITERS

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 6) {
    std::fprintf(stderr, "usage: mpi_allreduce_loop MIN MAX FACTOR WARMUP ITERS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long lo = std::atol(argv[1]), hi = std::atol(argv[2]), factor = std::atol(argv[3]);
  const int warmup = std::atoi(argv[4]), iters = std::atoi(argv[5]);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  for (long bytes = lo; bytes <= hi; bytes *= factor) {
    const int count = static_cast<int>(bytes / 4);
    std::vector<float> in(static_cast<size_t>(count), 1.0f), out(static_cast<size_t>(count));
    for (int i = 0; i < warmup; ++i) {
      MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    const double mine = (MPI_Wtime() - t0) / iters;
    double sum = 0;
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double t = sum / n;
      std::printf("%ld %.9f %.1f\n", bytes, t, static_cast<double>(bytes) / t * 2.0 * (n - 1) / n);
    }
  }
  MPI_Finalize();
  return 0;
}
