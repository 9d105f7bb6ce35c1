#pragma once
// NCCL topology files ("<system version="1">"), read the way NCCL's own
// hand-written reader reads them (reference/topology.md §1.2) and written the
// way NCCL writes them (NCCL_TOPO_DUMP_FILE). The reader is lenient where
// NCCL is fatal but the intent is still clear (an XML declaration, a TAB, an
// attribute on its own line): it keeps going and records each such problem as
// a SyntaxIssue for `topo lint`. Pure; thread-safe.
//
// Why not pugixml: NCCL's reader is not an XML parser. It rejects valid XML
// (declarations, TABs, line breaks between attributes) and accepts files no
// XML parser would flag. Only a reader with NCCL's rules can say what NCCL
// will do with a file, line by line.

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace gpufleet::topo {

struct XmlAttr {
  std::string key;
  std::string value;
  int line = 0;
};

struct XmlElement {
  std::string name;
  std::vector<XmlAttr> attrs;
  std::vector<XmlElement> children;
  int line = 0;
  int column = 0;

  // The attribute's value, or nullptr.
  const std::string* Get(std::string_view key) const;
  std::string GetOr(std::string_view key, std::string_view fallback) const;
  void Set(std::string_view key, std::string value);
};

// Something NCCL's reader would reject (init fails) or silently change, found
// while reading. `id` is stable (docs/topo.md lists them).
struct SyntaxIssue {
  int line = 0;
  int column = 0;
  std::string id;
  std::string message;
  bool fatal_in_nccl = true;  // false: NCCL accepts it (e.g. single quotes since 2.27.3)
};

struct NcclXml {
  std::string file;
  XmlElement root;  // <system>
  std::vector<SyntaxIssue> syntax;
  int element_count = 0;
};

// Limits of NCCL's reader (src/graph/xml.h, v2.30.7).
inline constexpr int kMaxNameOrValue = 255;
inline constexpr int kMaxAttributes = 16;
inline constexpr int kMaxChildren = 640;
inline constexpr int kMaxTopoNodes = 256;

// Reads `text`. Fails (kInvalidArgument, "file:line:column: ...") when it is
// not an NCCL topology file at all: no element, a truncated or mismatched
// element, a root other than <system>, or a version other than 1.
Result<NcclXml> ReadNcclXml(std::string_view text, const std::string& file);
// Reads the file at `path`: kNotFound if missing, kInvalidArgument for a directory.
Result<NcclXml> ReadNcclXmlFile(const std::string& path);

// NCCL's writer format: no declaration, two-space indent, key="value" in
// order, childless elements self-closed. Comments are not kept.
std::string WriteNcclXml(const XmlElement& root);

// True if `busid` is NCCL's canonical form: lower-case "dddd:bb:dd.f".
bool IsCanonicalBusId(std::string_view busid);
// "00000000:3B:00.0" or "0000:3B:00.0" -> "0000:3b:00.0"; "" if not a bus id.
std::string CanonicalBusId(std::string_view busid);

}  // namespace gpufleet::topo
