// Fuzz target: an NCCL topology file read as NCCL's reader would, linted, written back in
// NCCL's format (normalised) and re-read, and the lint report rendered as JSON and text.
#include "base/json.h"
#include "fuzz/fuzz_common.h"
#include "report/topo_report.h"
#include "topo/lint.h"
#include "topo/nccl_xml.h"
#include "topo/topo_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpufleet;
  auto doc = topo::ReadNcclXml(fuzz::Text(data, size), "fuzz.xml");
  if (!doc) return 0;
  topo::LintReport r = topo::LintNcclXml(*doc);
  r.file = "fuzz.xml";
  (void)DumpJson(topo::ToJson(r));
  (void)report::LintText(r);
  const std::string again = topo::WriteNcclXml(doc->root);
  (void)topo::ReadNcclXml(again, "again.xml");
  return 0;
}
