#pragma once
// Field readers shared by the catalog parser and the spec loader, so a spec's
// override of a catalog field ("nodes.gpu.tdp: 500 W") is read by the same
// code, with the same units and errors, as the catalog itself. Internal to model/.

#include <string_view>

#include "model/catalog.h"
#include "model/spec_reader.h"

namespace gpufleet::model {

// Reads the fields of `map` into `*gpu`. With `required`, every core field must
// be present (catalog entries); otherwise present fields override (spec).
void ReadGpuFields(SpecReader& r, const YAML::Node& map, std::string_view path, bool required,
                   GpuSpec* gpu);
void ReadSwitchFields(SpecReader& r, const YAML::Node& map, std::string_view path, bool required,
                      SwitchSpec* sw);

// The GPU keys a spec may override, for Keys() checks.
inline constexpr std::string_view kGpuOverrideKeys[] = {"memory",
                                                        "memory_bandwidth",
                                                        "bf16",
                                                        "fp16",
                                                        "tf32",
                                                        "fp8",
                                                        "fp32",
                                                        "fp4",
                                                        "scale_up",
                                                        "tdp",
                                                        "idle",
                                                        "pcie_gen",
                                                        "matmul_efficiency",
                                                        "fp8_matmul_efficiency",
                                                        "sustained_clock",
                                                        "memory_efficiency"};

}  // namespace gpufleet::model
