#pragma once
// Self-contained HTML reports of `gpufleet bench`: bus bandwidth against
// message size (measured beside expected) for each collective, the pair
// matrix as a heat map, storage and GPU tables. Pure; thread-safe.

#include <string>
#include <vector>

#include "bench/gpu.h"
#include "bench/pairs.h"
#include "bench/results.h"
#include "bench/storage.h"

namespace gpufleet::report {

std::string BenchCollectiveHtml(const bench::CollectiveReport& r);
std::string BenchPairsHtml(const bench::PairsReport& r);
std::string BenchStorageHtml(const bench::StorageReport& r);
std::string BenchGpuHtml(const std::vector<bench::GpuMeasurement>& m);

}  // namespace gpufleet::report
