// The helpers' side of MpiWorld and of the MPI plugin (mpi_plugin.h): finds
// gpufleet-mpi.so beside the executable's folder and loads it with the site's
// MPI library.

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "base/files.h"
#include "bench/mpi_plugin.h"

namespace gpufleet::bench {

std::string MpiPluginPath() {
  const std::string bin = ExecutableDir();
  const size_t slash = bin.rfind('/');
  const std::string prefix = slash == std::string::npos ? bin + "/.." : bin.substr(0, slash);
  return prefix + "/lib/gpufleet/gpufleet-mpi.so";
}

Result<const MpiPlugin*> LoadMpiPlugin() {
  static std::once_flag once;
  static Result<const MpiPlugin*> loaded = Unavailable("not loaded");
  std::call_once(once, [] {
    const std::string path = MpiPluginPath();
    if (access(path.c_str(), R_OK) != 0) {
      loaded = Unavailable(fmt::format(
          "{} is missing: gpufleet-bench reaches MPI through it (reinstall gpufleet)", path));
      return;
    }
    // RTLD_GLOBAL: Open MPI loads its own components (mca_*.so) with dlopen, and they resolve
    // libmpi's and libopen-pal's symbols from the global scope. Never dlclose'd: the world's
    // vtable, its watchdog thread and its crash handler live in the plugin.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      loaded = Unavailable(fmt::format(
          "cannot load the MPI plugin: {} (it needs the site's MPI, the one mpirun or srun "
          "launches with: Open MPI 4 or later, libmpi.so.40 on the library path)",
          why != nullptr ? why : path));
      return;
    }
    using Entry = const MpiPlugin* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, kMpiPluginSymbol));
    const MpiPlugin* plugin = entry != nullptr ? entry() : nullptr;
    if (plugin == nullptr || plugin->abi == nullptr ||
        std::strcmp(plugin->abi, kMpiPluginAbi) != 0) {
      loaded = Unavailable(fmt::format(
          "{} is not this gpufleet-bench's MPI plugin (another version's?); reinstall gpufleet",
          path));
      return;
    }
    loaded = plugin;
  });
  return loaded;
}

int MpiWorld::nodes() const {
  return static_cast<int>(std::set(hosts_.begin(), hosts_.end()).size());
}

int MpiWorld::max_ranks_per_node() const {
  std::map<std::string, int> per;
  int most = 0;
  for (const auto& h : hosts_) most = std::max(most, ++per[h]);
  return most;
}

Result<std::unique_ptr<MpiWorld>> MpiWorld::Init(int* argc, char*** argv) {
  GPUFLEET_ASSIGN_OR_RETURN(const MpiPlugin* plugin, LoadMpiPlugin());
  return plugin->init(argc, argv);
}

Result<std::unique_ptr<DataPlane>> MakeMpiPlane(MpiWorld* world) {
  GPUFLEET_ASSIGN_OR_RETURN(const MpiPlugin* plugin, LoadMpiPlugin());
  return plugin->make_plane(world);
}

}  // namespace gpufleet::bench
