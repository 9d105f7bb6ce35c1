#pragma once
// The seam between the bench helpers and MPI. gpufleet-mpi.so (mpi_world.cc,
// mpi_plane.cc, mpi_plugin.cc) is the only file of gpufleet linked to an MPI
// library; it exports one symbol, gpufleet_mpi_plugin_v1, the table below.
// The helpers dlopen it from `<their folder>/../lib/gpufleet/` (the build
// tree, /usr, and the relocatable bundle are laid out alike), and the
// dynamic loader then finds the site's libmpi.so.40 the way it finds any
// library (ld.so.conf, LD_LIBRARY_PATH, the module environment of the site's
// Open MPI). Both sides come from one build with one compiler and standard
// library, so the table passes C++ types; `abi` (a digest of the version and
// of these headers, src/CMakeLists.txt) refuses a plugin left from another build.

#include <memory>

#include "base/result.h"
#include "bench/data_plane.h"
#include "bench/mpi_world.h"

namespace gpufleet::bench {

inline constexpr const char* kMpiPluginAbi = GPUFLEET_MPI_ABI;
inline constexpr const char* kMpiPluginSymbol = "gpufleet_mpi_plugin_v1";

struct MpiPlugin {
  const char* abi = kMpiPluginAbi;
  Result<std::unique_ptr<MpiWorld>> (*init)(int* argc, char*** argv) = nullptr;
  std::unique_ptr<DataPlane> (*make_plane)(MpiWorld* world) = nullptr;
};

// Where the helpers look for the plugin: `<executable's folder>/../lib/gpufleet/gpufleet-mpi.so`.
std::string MpiPluginPath();

// Loads the plugin once per process (later calls return the same table).
// kUnavailable, naming the file and the loader's reason (most often the site's
// libmpi.so.40 not on the library path), when it does not load.
Result<const MpiPlugin*> LoadMpiPlugin();

// Inside the plugin: the two entries of its table.
Result<std::unique_ptr<MpiWorld>> InitMpiWorld(int* argc, char*** argv);
std::unique_ptr<DataPlane> NewMpiPlane(MpiWorld* world);

}  // namespace gpufleet::bench
