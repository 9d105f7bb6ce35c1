#pragma once
// `topo lint`: checks an NCCL topology file against NCCL's real reader rules
// (reference/topology.md §1-§6: what NCCL rejects, what it silently ignores or
// changes) and, optionally, against the node it is meant for. Every finding
// has a severity, a line, what NCCL will do with it, and the fix. Pure.

#include <string>
#include <vector>

#include "topo/nccl_xml.h"
#include "topo/node_topology.h"

namespace gpufleet::topo {

enum class LintSeverity { kInfo, kWarning, kError };
std::string_view LintSeverityName(LintSeverity s);

struct LintFinding {
  LintSeverity severity = LintSeverity::kWarning;
  std::string id;  // stable, docs/topo.md lists them with the mistakes-table row
  int line = 0;
  std::string message;    // what is wrong
  std::string nccl_does;  // what NCCL will do with it
  std::string fix;
};

struct LintReport {
  // A hostile file can make a finding of every element: at most kMaxFindings are kept (at most
  // kMaxPerId of one kind), the rest only counted, so a report's size is bounded (a 200 MB file
  // used to take 2 KB a finding, and abort at 4 GiB).
  static constexpr size_t kMaxFindings = 1000;
  static constexpr size_t kMaxPerId = 100;
  std::string file;
  std::vector<LintFinding> findings;  // ordered by line
  int omitted_errors = 0, omitted_warnings = 0, omitted_notes = 0;
  int Errors() const;    // kept and omitted
  int Warnings() const;  // kept and omitted
  int Omitted() const { return omitted_errors + omitted_warnings + omitted_notes; }
  // Keeps `f` or counts it, by the bounds above.
  void Add(LintFinding f);
};

// The file alone.
LintReport LintNcclXml(const NcclXml& doc);
// The file against the node it is meant for (a discovery or capture).
void LintAgainstNode(const NcclXml& doc, const NodeTopology& node, LintReport* report);

}  // namespace gpufleet::topo
