#include "cli/cmd_topo.h"

#include <fmt/format.h>

#include "base/json.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "report/topo_report.h"
#include "topo/affinity.h"
#include "topo/capture.h"
#include "topo/discover.h"
#include "topo/lint.h"
#include "topo/nccl_gen.h"
#include "topo/nccl_xml.h"
#include "topo/smi_matrix.h"
#include "topo/topo_json.h"

namespace gpufleet::cli {

namespace {

void AddSource(CLI::App* c, TopoOptions* o) {
  c->add_option("--hwloc-xml", o->hwloc_xml, "Read this hwloc XML instead of the live node");
  c->add_option("--root", o->root,
                "Read this captured tree (gpufleet topo capture, or hwloc-gather-topology)");
  c->add_flag("--no-nvml", o->no_nvml, "Do not load NVML (GPU details and NVLink)");
}

void AddFormat(CLI::App* c, TopoOptions* o, const std::vector<std::string>& formats) {
  c->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember(formats))
      ->capture_default_str();
  c->add_option("-o,--output", o->output, "Write to this file instead of stdout");
}

Result<topo::NodeTopology> DiscoverFrom(const TopoOptions& o) {
  topo::DiscoverOptions d;
  d.hwloc_xml = o.hwloc_xml;
  d.root = o.root;
  d.nvml = !o.no_nvml;
  if (!d.hwloc_xml.empty() && !d.root.empty()) {
    return InvalidArgument("--hwloc-xml and --root are alternatives; give one");
  }
  return topo::Discover(d);
}

int Emit(const TopoOptions& o, const std::string& text) {
  if (Status s = WriteOutput(o.output, text); !s) return ReportError(s.error());
  return kExitOk;
}

int Show(const TopoOptions& o) {
  auto t = DiscoverFrom(o);
  if (!t) return ReportError(t.error());
  if (o.format == "json") return Emit(o, DumpJson(topo::ToJson(*t)));
  return Emit(o, report::TopologyText(*t));
}

int Matrix(const TopoOptions& o) {
  topo::SmiMatrix m;
  if (!o.parse.empty()) {
    std::string text;
    if (Status s = ReadText(o.parse, &text); !s) return ReportError(s.error());
    auto parsed = topo::ParseSmiMatrix(text, o.parse);
    if (!parsed) return ReportError(parsed.error());
    m = *parsed;
  } else {
    auto t = DiscoverFrom(o);
    if (!t) return ReportError(t.error());
    if (t->gpus.empty() && t->nics.empty()) {
      std::fprintf(stderr, "gpufleet: no GPU or NIC found (%s): the matrix is empty\n",
                   t->source.c_str());
    }
    m = topo::MatrixOf(*t, o.pcie_only);
  }
  if (!o.compare.empty()) {
    std::string text;
    if (Status s = ReadText(o.compare, &text); !s) return ReportError(s.error());
    auto theirs = topo::ParseSmiMatrix(text, o.compare);
    if (!theirs) return ReportError(theirs.error());
    const auto diffs = topo::CompareMatrices(m, *theirs);
    std::string out;
    for (const auto& d : diffs) {
      out += fmt::format("{}/{}: ours {}, {} says {}\n", d.row, d.column,
                         d.ours.empty() ? "(absent)" : d.ours, o.compare,
                         d.theirs.empty() ? "(absent)" : d.theirs);
    }
    out += fmt::format("{} difference(s) between our discovery and {}\n", diffs.size(), o.compare);
    if (int rc = Emit(o, out); rc != kExitOk) return rc;
    return diffs.empty() ? kExitOk : kExitFailed;
  }
  if (o.format == "json") return Emit(o, DumpJson(topo::ToJson(m)));
  return Emit(o, topo::RenderSmiMatrix(m));
}

int NcclXml(const TopoOptions& o) {
  topo::XmlElement root;
  if (!o.file.empty()) {
    auto doc = topo::ReadNcclXmlFile(o.file);
    if (!doc) return ReportError(doc.error());
    for (const auto& s : doc->syntax) {
      std::fprintf(stderr, "gpufleet: %s:%d: fixed: %s\n", o.file.c_str(), s.line,
                   s.message.c_str());
    }
    root = doc->root;
  } else {
    auto t = DiscoverFrom(o);
    if (!t) return ReportError(t.error());
    if (t->gpus.empty()) {
      std::fprintf(stderr, "gpufleet: no GPU found (%s): the file lists NICs only\n",
                   t->source.c_str());
    }
    topo::NcclGenOptions g;
    g.include_nics = !o.no_nics;
    g.include_nvlinks = !o.no_nvlinks;
    root = topo::NcclXmlOf(*t, g);
  }
  return Emit(o, topo::WriteNcclXml(root));
}

int Lint(const TopoOptions& o) {
  auto doc = topo::ReadNcclXmlFile(o.file);
  if (!doc) return ReportError(doc.error());
  topo::LintReport r = topo::LintNcclXml(*doc);
  if (!o.against.empty()) {
    topo::DiscoverOptions src = topo::DiscoverOptionsFor(o.against);
    src.nvml = !o.no_nvml;
    auto t = topo::Discover(src);
    if (!t) return ReportError(t.error());
    topo::LintAgainstNode(*doc, *t, &r);
  }
  const std::string text = o.format == "json" ? DumpJson(topo::ToJson(r)) : report::LintText(r);
  if (int rc = Emit(o, text); rc != kExitOk) return rc;
  return r.Errors() > 0 ? kExitFailed : kExitOk;
}

int Capture(const TopoOptions& o) {
  if (o.output.empty()) return ReportError(InvalidArgument("capture needs -o FILE.tar.gz"));
  auto t = DiscoverFrom(o);
  if (!t) return ReportError(t.error());
  auto c = topo::Capture(*t);
  if (!c) return ReportError(c.error());
  if (Status s = WriteOutput(o.output, c->archive, /*binary=*/true); !s) {
    return ReportError(s.error());
  }
  for (const auto& n : c->notes) std::fprintf(stderr, "gpufleet: note: %s\n", n.c_str());
  for (const auto& n : t->notes) std::fprintf(stderr, "gpufleet: note: %s\n", n.c_str());
  std::fprintf(stderr, "gpufleet: wrote %s: %d files in %s/ (%zu bytes)\n", o.output.c_str(),
               c->files, c->folder.c_str(), c->archive.size());
  return kExitOk;
}

int Affinity(const TopoOptions& o) {
  auto t = DiscoverFrom(o);
  if (!t) return ReportError(t.error());
  auto a = topo::AffinityOf(*t);
  if (o.format == "json") return Emit(o, DumpJson(topo::ToJson(a)));
  if (a.empty()) std::fprintf(stderr, "gpufleet: no GPU found (%s)\n", t->source.c_str());
  return Emit(o, report::AffinityText(a));
}

}  // namespace

CLI::App* AddTopoCommand(CLI::App& app, TopoOptions* o) {
  CLI::App* topo = app.add_subcommand("topo", "A node's real topology and its NCCL topology file");
  topo->require_subcommand(1);
  auto sub = [&](const char* name, const char* help) {
    CLI::App* c = topo->add_subcommand(name, help);
    c->callback([o, name] { o->command = name; });
    return c;
  };
  CLI::App* show = sub("show", "The node: NUMA nodes, PCI tree, GPUs, NICs, NVMe");
  AddSource(show, o);
  AddFormat(show, o, {"text", "json"});

  CLI::App* matrix = sub("matrix", "The GPU/NIC path matrix `nvidia-smi topo -m` prints");
  AddSource(matrix, o);
  AddFormat(matrix, o, {"text", "json"});
  matrix->add_flag("--pcie-only", o->pcie_only, "PCIe paths between GPUs, ignoring NVLink (-mp)");
  matrix->add_option("--parse", o->parse, "Parse this saved `nvidia-smi topo -m` output instead");
  matrix->add_option("--compare", o->compare,
                     "Compare our matrix with this saved `nvidia-smi topo -m` output; exit 1 if "
                     "they differ");

  CLI::App* xml = sub("nccl-xml", "Write the node's NCCL topology file (NCCL_TOPO_FILE)");
  AddSource(xml, o);
  xml->add_option("-o,--output", o->output, "Write to this file instead of stdout");
  xml->add_flag("--no-nics", o->no_nics, "Leave NICs to NCCL's auto-detection");
  xml->add_flag("--no-nvlinks", o->no_nvlinks, "Leave NVLink to NCCL's auto-detection");
  xml->add_option("--normalize", o->file,
                  "Read this NCCL topology file and write it back in NCCL's own format");

  CLI::App* lint = sub("lint", "Check an NCCL topology file against NCCL's rules and the node");
  lint->add_option("FILE", o->file, "NCCL topology file")->required();
  lint->add_option("--against", o->against,
                   "The node it is meant for: a capture folder or an hwloc XML");
  AddFormat(lint, o, {"text", "json"});

  CLI::App* cap = sub("capture", "Bundle this node's topology for offline analysis (.tar.gz)");
  cap->add_option("-o,--output", o->output, "Archive to write")->required();
  cap->add_flag("--no-nvml", o->no_nvml, "Do not load NVML");

  CLI::App* aff = sub("affinity", "Per GPU: nearest NICs (NCCL_IB_HCA order), NUMA node, cores");
  AddSource(aff, o);
  AddFormat(aff, o, {"text", "json"});
  return topo;
}

int RunTopo(const TopoOptions& o) {
  if (o.command == "show") return Show(o);
  if (o.command == "matrix") return Matrix(o);
  if (o.command == "nccl-xml") return NcclXml(o);
  if (o.command == "lint") return Lint(o);
  if (o.command == "capture") return Capture(o);
  if (o.command == "affinity") return Affinity(o);
  return ReportError(InvalidArgument("topo: unknown subcommand"));
}

}  // namespace gpufleet::cli
