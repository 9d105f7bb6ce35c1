// gpufleet-mpi.so's one exported symbol (mpi_plugin.h). Everything else in the
// plugin is hidden (-fvisibility=hidden), so its copies of gpufleet's code
// never interpose on the helper's.

#include "bench/mpi_plugin.h"

extern "C" __attribute__((visibility("default"))) const gpufleet::bench::MpiPlugin*
gpufleet_mpi_plugin_v1() {
  static const gpufleet::bench::MpiPlugin plugin{gpufleet::bench::kMpiPluginAbi,
                                                 &gpufleet::bench::InitMpiWorld,
                                                 &gpufleet::bench::NewMpiPlane};
  return &plugin;
}
