#include "topo/nccl_xml.h"

#include <fmt/format.h>

#include <cctype>

#include "base/files.h"

namespace gpufleet::topo {

const std::string* XmlElement::Get(std::string_view key) const {
  for (const auto& a : attrs) {
    if (a.key == key) return &a.value;
  }
  return nullptr;
}

std::string XmlElement::GetOr(std::string_view key, std::string_view fallback) const {
  const std::string* v = Get(key);
  return v ? *v : std::string(fallback);
}

void XmlElement::Set(std::string_view key, std::string value) {
  for (auto& a : attrs) {
    if (a.key == key) {
      a.value = std::move(value);
      return;
    }
  }
  attrs.push_back({std::string(key), std::move(value), 0});
}

namespace {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ':' ||
         c == '.';
}

class Reader {
 public:
  Reader(std::string_view text, std::string file) : s_(text), file_(std::move(file)) {}

  Result<NcclXml> Read() {
    NcclXml doc;
    doc.file = file_;
    // A UTF-8 byte-order mark is not whitespace to NCCL.
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") {
      Issue("nccl.whitespace",
            "a UTF-8 byte-order mark before '<': NCCL fails with "
            "\"XML Parse error : expecting '<'\"");
      Advance(3);
    }
    bool have_root = false;
    while (true) {
      SkipSpace();
      if (AtEnd()) break;
      if (Peek() != '<') {
        if (!have_root) {
          return Hard(fmt::format("not an NCCL topology file: expected '<', found '{}'",
                                  Printable(Peek())));
        }
        Issue("nccl.text", "text after the root element: NCCL fails to parse it");
        SkipToLt();
        continue;
      }
      if (Starts("<!--")) {
        GPUFLEET_RETURN_IF_ERROR(SkipComment());
        continue;
      }
      if (Starts("<?")) {
        Issue("nccl.xml-declaration",
              "an XML declaration: NCCL's reader fails (\"expected >, got '?'\"); delete it");
        GPUFLEET_RETURN_IF_ERROR(SkipPast("?>", "XML declaration"));
        continue;
      }
      if (Starts("<!")) {
        Issue("nccl.doctype", "a DOCTYPE: NCCL's reader fails on it; delete it");
        GPUFLEET_RETURN_IF_ERROR(SkipPast(">", "DOCTYPE"));
        continue;
      }
      if (Starts("</")) return Hard("a closing tag with no element open");
      if (have_root) {
        Issue("nccl.second-root", "a second top-level element: NCCL reads only the first");
        XmlElement ignored;
        GPUFLEET_RETURN_IF_ERROR(ReadElement(&ignored, 0));
        continue;
      }
      GPUFLEET_RETURN_IF_ERROR(ReadElement(&doc.root, 0));
      have_root = true;
    }
    if (!have_root) return Hard("not an NCCL topology file: no element found");
    if (doc.root.name == "graphs") {
      return HardAt(doc.root.line, doc.root.column,
                    "this is an NCCL graph file (<graphs>, for NCCL_GRAPH_FILE), not a topology "
                    "file (<system version=\"1\">, for NCCL_TOPO_FILE)");
    }
    if (doc.root.name != "system") {
      return HardAt(doc.root.line, doc.root.column,
                    fmt::format("root element <{}>; an NCCL topology file starts with "
                                "<system version=\"1\">",
                                doc.root.name));
    }
    const std::string* version = doc.root.Get("version");
    if (version == nullptr || *version != "1") {
      return HardAt(doc.root.line, doc.root.column,
                    fmt::format("<system version=\"{}\">: NCCL fails with \"XML Topology has "
                                "wrong version\"; only version=\"1\" exists",
                                version ? *version : ""));
    }
    doc.syntax = std::move(issues_);
    doc.element_count = elements_;
    return doc;
  }

 private:
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek() const { return s_[pos_]; }
  bool Starts(std::string_view t) const { return s_.substr(pos_, t.size()) == t; }
  void Advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < s_.size(); ++i) {
      if (s_[pos_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
      ++pos_;
    }
  }
  static std::string Printable(char c) {
    if (c == '\t') return "\\t";
    if (std::isprint(static_cast<unsigned char>(c))) return std::string(1, c);
    return fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  }

  void Issue(std::string id, std::string message, bool fatal = true) {
    issues_.push_back({line_, col_, std::move(id), std::move(message), fatal});
  }
  Error Hard(std::string_view message) const { return HardAt(line_, col_, message); }
  Error HardAt(int line, int col, std::string_view message) const {
    return InvalidArgument(fmt::format("{}:{}:{}: {}", file_, line, col, message));
  }

  // NCCL's whitespace between elements is ' ', '\n', '\r' only.
  void SkipSpace() {
    while (!AtEnd()) {
      char c = Peek();
      if (c == ' ' || c == '\n' || c == '\r') {
        Advance();
      } else if (c == '\t') {
        if (tab_line_ != line_) {
          tab_line_ = line_;
          Issue("nccl.whitespace",
                "a TAB between elements: NCCL fails with \"XML Parse error : expecting '<', got "
                "'\\t'\"; indent with spaces");
        }
        Advance();
      } else {
        return;
      }
    }
  }
  void SkipToLt() {
    while (!AtEnd() && Peek() != '<') Advance();
  }
  Status SkipComment() {
    const int line = line_;
    const int col = col_;
    size_t end = s_.find("-->", pos_ + 4);
    if (end == std::string_view::npos) return HardAt(line, col, "truncated: a comment never ends");
    Advance(end + 3 - pos_);
    return OkStatus();
  }
  Status SkipPast(std::string_view end_mark, std::string_view what) {
    const int line = line_;
    const int col = col_;
    size_t end = s_.find(end_mark, pos_);
    if (end == std::string_view::npos) {
      return HardAt(line, col, fmt::format("truncated: the {} never ends", what));
    }
    Advance(end + end_mark.size() - pos_);
    return OkStatus();
  }

  std::string ReadName() {
    std::string name;
    while (!AtEnd() && IsNameChar(Peek())) {
      name += Peek();
      Advance();
    }
    return name;
  }

  // Reads one element at '<' (not a comment or closing tag), with its children.
  Status ReadElement(XmlElement* e, int depth) {
    if (depth > 64) return Hard("elements nested more than 64 deep");
    e->line = line_;
    e->column = col_;
    ++elements_;
    Advance();  // '<'
    e->name = ReadName();
    if (e->name.empty()) return Hard("expected an element name after '<'");
    if (static_cast<int>(e->name.size()) > kMaxNameOrValue) {
      Issue("nccl.limit", fmt::format("element name longer than {} characters", kMaxNameOrValue));
    }
    bool self_closed = false;
    // Attributes: NCCL wants them separated by spaces on the tag's own line.
    while (true) {
      bool broke_line = false;
      while (!AtEnd() && (Peek() == ' ' || Peek() == '\n' || Peek() == '\r' || Peek() == '\t')) {
        if (Peek() != ' ') broke_line = true;
        Advance();
      }
      if (AtEnd())
        return HardAt(e->line, e->column, fmt::format("truncated: <{}> never ends", e->name));
      if (Starts("/>")) {
        Advance(2);
        self_closed = true;
        break;
      }
      if (Peek() == '>') {
        Advance();
        break;
      }
      if (broke_line) {
        Issue("nccl.attribute-line-break",
              fmt::format("an attribute of <{}> after a line break or TAB: NCCL fails with "
                          "\"XML Parse : expected >\"; keep every attribute on the tag's line",
                          e->name));
      }
      XmlAttr a;
      a.line = line_;
      a.key = ReadName();
      if (a.key.empty()) {
        return Hard(fmt::format("unexpected '{}' in <{}>", Printable(Peek()), e->name));
      }
      while (!AtEnd() && Peek() == ' ') Advance();
      if (AtEnd() || Peek() != '=') {
        return Hard(fmt::format("attribute '{}' of <{}> has no value", a.key, e->name));
      }
      Advance();
      while (!AtEnd() && Peek() == ' ') Advance();
      if (AtEnd())
        return HardAt(e->line, e->column, fmt::format("truncated: <{}> never ends", e->name));
      char q = Peek();
      if (q == '"' || q == '\'') {
        if (q == '\'') {
          Issue("nccl.single-quote",
                fmt::format("{}='...' uses single quotes: NCCL accepts them only since 2.27.3",
                            a.key),
                /*fatal=*/false);
        }
        Advance();
        size_t end = s_.find(q, pos_);
        if (end == std::string_view::npos) {
          return Hard(fmt::format("truncated: the value of '{}' never ends", a.key));
        }
        a.value = std::string(s_.substr(pos_, end - pos_));
        Advance(end - pos_ + 1);
      } else {
        Issue("nccl.unquoted-value",
              fmt::format("{}= has an unquoted value: NCCL fails with \"Expected (double) "
                          "quote\"",
                          a.key));
        while (!AtEnd() && Peek() != ' ' && Peek() != '>' && !Starts("/>") && Peek() != '\n') {
          a.value += Peek();
          Advance();
        }
      }
      if (a.value.find('\n') != std::string::npos) {
        Issue("nccl.attribute-line-break", fmt::format("the value of '{}' spans lines", a.key));
      }
      if (a.value.find('&') != std::string::npos) {
        Issue("nccl.entity",
              fmt::format("'{}' contains '&': NCCL does not decode XML entities", a.key), false);
      }
      if (static_cast<int>(a.value.size()) > kMaxNameOrValue) {
        Issue("nccl.limit", fmt::format("the value of '{}' is longer than {} characters", a.key,
                                        kMaxNameOrValue));
      }
      e->attrs.push_back(std::move(a));
    }
    if (static_cast<int>(e->attrs.size()) > kMaxAttributes) {
      issues_.push_back({e->line, e->column, "nccl.limit",
                         fmt::format("<{}> has {} attributes; NCCL keeps the first {}", e->name,
                                     e->attrs.size(), kMaxAttributes),
                         false});
    }
    if (self_closed) return OkStatus();
    // Children until the matching closing tag.
    while (true) {
      SkipSpace();
      if (AtEnd()) {
        return HardAt(e->line, e->column,
                      fmt::format("truncated: <{}> opened here is never closed", e->name));
      }
      if (Peek() != '<') {
        Issue("nccl.text",
              fmt::format("text inside <{}>: NCCL's reader fails on text content", e->name));
        SkipToLt();
        continue;
      }
      if (Starts("<!--")) {
        GPUFLEET_RETURN_IF_ERROR(SkipComment());
        continue;
      }
      if (Starts("</")) {
        const int line = line_;
        const int col = col_;
        Advance(2);
        std::string name = ReadName();
        while (!AtEnd() && Peek() == ' ') Advance();
        if (AtEnd() || Peek() != '>') {
          return HardAt(line, col, fmt::format("truncated: </{}> never ends", name));
        }
        Advance();
        if (name != e->name) {
          return HardAt(line, col,
                        fmt::format("</{}> closes <{}> opened at line {}: NCCL fails with \"XML "
                                    "Mismatch\"",
                                    name, e->name, e->line));
        }
        break;
      }
      if (Starts("<?") || Starts("<!")) {
        Issue("nccl.xml-declaration", "a processing instruction inside an element");
        GPUFLEET_RETURN_IF_ERROR(SkipPast(">", "instruction"));
        continue;
      }
      XmlElement child;
      GPUFLEET_RETURN_IF_ERROR(ReadElement(&child, depth + 1));
      e->children.push_back(std::move(child));
    }
    if (static_cast<int>(e->children.size()) > kMaxChildren) {
      issues_.push_back({e->line, e->column, "nccl.limit",
                         fmt::format("<{}> has {} children; NCCL allows {}", e->name,
                                     e->children.size(), kMaxChildren),
                         true});
    }
    return OkStatus();
  }

  std::string_view s_;
  std::string file_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  int tab_line_ = 0;
  int elements_ = 0;
  std::vector<SyntaxIssue> issues_;
};

void Write(const XmlElement& e, int depth, std::string* out) {
  out->append(static_cast<size_t>(depth) * 2, ' ');
  *out += "<" + e.name;
  for (const auto& a : e.attrs) *out += " " + a.key + "=\"" + a.value + "\"";
  if (e.children.empty()) {
    *out += "/>\n";
    return;
  }
  *out += ">\n";
  for (const auto& c : e.children) Write(c, depth + 1, out);
  out->append(static_cast<size_t>(depth) * 2, ' ');
  *out += "</" + e.name + ">\n";
}

}  // namespace

Result<NcclXml> ReadNcclXml(std::string_view text, const std::string& file) {
  return Reader(text, file).Read();
}

Result<NcclXml> ReadNcclXmlFile(const std::string& path) {
  GPUFLEET_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path, "an NCCL topology file"));
  return ReadNcclXml(text, path);
}

std::string WriteNcclXml(const XmlElement& root) {
  std::string out;
  Write(root, 0, &out);
  return out;
}

bool IsCanonicalBusId(std::string_view b) {
  if (b.size() != 12 || b[4] != ':' || b[7] != ':' || b[10] != '.') return false;
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    char c = b[i];
    if (!(std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string CanonicalBusId(std::string_view b) {
  // [domain:]bus:device.function, domain of any width.
  size_t dot = b.rfind('.');
  size_t c2 = b.rfind(':', dot);
  if (dot == std::string_view::npos || c2 == std::string_view::npos) return "";
  size_t c1 = c2 == 0 ? std::string_view::npos : b.rfind(':', c2 - 1);
  std::string_view dom = c1 == std::string_view::npos ? "0" : b.substr(0, c1);
  std::string_view bus = b.substr(c1 == std::string_view::npos ? 0 : c1 + 1,
                                  c2 - (c1 == std::string_view::npos ? 0 : c1 + 1));
  std::string_view dev = b.substr(c2 + 1, dot - c2 - 1);
  std::string_view fn = b.substr(dot + 1);
  auto hex = [](std::string_view s, unsigned long* v) {
    if (s.empty() || s.size() > 8) return false;
    *v = 0;
    for (char c : s) {
      int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
              : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
              : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                          : -1;
      if (d < 0) return false;
      *v = *v * 16 + static_cast<unsigned long>(d);
    }
    return true;
  };
  unsigned long d = 0, bb = 0, dd = 0, f = 0;
  if (!hex(dom, &d) || !hex(bus, &bb) || !hex(dev, &dd) || !hex(fn, &f)) return "";
  if (d > 0xffff || bb > 0xff || dd > 0x1f || f > 7) return "";
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", d, bb, dd, f);
}

}  // namespace gpufleet::topo
