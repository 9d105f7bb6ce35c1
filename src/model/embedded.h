#pragma once
// Text compiled into the binary by CMake (gpufleet_embed_text): the catalog and
// the reference cluster spec, so gpufleet runs with no data files installed.

#include <string_view>

namespace gpufleet::embedded {

std::string_view GpusYaml();
std::string_view NicsYaml();
std::string_view SwitchesYaml();
std::string_view CpusYaml();
std::string_view ReferenceSpecYaml();  // examples/reference-32gpu.yaml

}  // namespace gpufleet::embedded
