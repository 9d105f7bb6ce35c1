#pragma once
// A spec: one YAML document with the cluster and the workload (docs/spec.md).
// LoadSpec parses, fills defaults from the catalog, and validates; every user
// error comes back as one line "file:line:column: path: what is wrong; fix".
// Thread-compatible: a Spec is a value.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/cluster.h"
#include "model/spec_reader.h"
#include "model/workload.h"

namespace gpufleet::model {

struct Spec {
  std::string file;  // where it came from ("<reference>" for the embedded one)
  Cluster cluster;
  Workload workload;
  std::map<std::string, SourceLocation> locations;  // dotted path -> place in file

  int TotalGpus() const { return cluster.nodes.TotalGpus(); }
  int DataParallel() const { return TotalGpus() / workload.ModelParallel(); }
  // "file:line:column: path: message", using the location of `path` (or of
  // the closest enclosing path that has one).
  std::string Where(std::string_view path, std::string_view message) const;
};

// A change applied to a spec before it is read, as given on the command line:
// `--set nodes.count=64`, `--set nodes.nics[0].speed="200 Gb/s"`. The value is
// YAML, so lists work too: `--set costs.capex_usd=[1M,2M]`.
struct SpecOverride {
  std::string path;   // dotted keys, with [i] for list items
  std::string value;  // YAML text
};
// Splits "path=value"; kInvalidArgument when there is no '=' or no path.
Result<SpecOverride> ParseOverride(std::string_view text);

// Parses and validates `text` with `overrides` applied; `file` names it in messages
// (errors in an overridden value name the --set instead of a line).
Result<Spec> ParseSpec(std::string_view text, std::string file,
                       const std::vector<SpecOverride>& overrides = {},
                       const Catalog& catalog = Catalog::Builtin());
// Reads the file at `path` (kNotFound if it cannot be read) and parses it.
Result<Spec> LoadSpecFile(const std::string& path, const std::vector<SpecOverride>& overrides = {},
                          const Catalog& catalog = Catalog::Builtin());
// What every command does with its SPEC argument and --set flags: the file at
// `path`, or the embedded reference cluster when `path` is empty, with each
// "PATH=VALUE" of `set` applied.
Result<Spec> LoadSpec(const std::string& path, const std::vector<std::string>& set);
// Why Transformer Engine's fused grouped MLP (software.moe_expert_gemm: fused) cannot run `w` on
// `gpu`, as its rules and the spec's refuse it; empty when it can.
std::string FusedGroupedMlpRefusal(const Workload& w, const GpuSpec& gpu);
// The embedded reference cluster (DESIGN.md): 4 x 8 A100-SXM4-80GB, 13B FSDP.
Result<Spec> ReferenceSpec(const std::vector<SpecOverride>& overrides = {},
                           const Catalog& catalog = Catalog::Builtin());

}  // namespace gpufleet::model
