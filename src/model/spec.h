#pragma once
// A spec: one YAML document with the cluster and the workload (docs/spec.md).
// LoadSpec parses, fills defaults from the catalog, and validates; every user
// error comes back as one line "file:line:column: path: what is wrong; fix".
// Thread-compatible: a Spec is a value.

#include <map>
#include <string>
#include <string_view>

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

// Parses and validates `text`; `file` names it in messages.
Result<Spec> ParseSpec(std::string_view text, std::string file,
                       const Catalog& catalog = Catalog::Builtin());
// Reads the file at `path` (kNotFound if it cannot be read) and parses it.
Result<Spec> LoadSpecFile(const std::string& path, const Catalog& catalog = Catalog::Builtin());
// The embedded reference cluster (DESIGN.md): 4 x 8 A100-SXM4-80GB, 13B FSDP.
Result<Spec> ReferenceSpec(const Catalog& catalog = Catalog::Builtin());

}  // namespace gpufleet::model
