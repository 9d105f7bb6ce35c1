#include "report/table.h"

#include <algorithm>
#include <cctype>

namespace gpufleet::report {

size_t DisplayWidth(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++w;
  }
  return w;
}

namespace {
bool LooksNumeric(const std::string& s) {
  if (s.empty()) return false;
  unsigned char c = static_cast<unsigned char>(s[0]);
  return std::isdigit(c) || c == '$' || ((c == '-' || c == '+') && s.size() > 1);
}
}  // namespace

std::string Table::Text(int indent) const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], DisplayWidth(row[i]));
    }
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row, bool header) {
    std::string line(static_cast<size_t>(indent), ' ');
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      const size_t pad = width[i] - DisplayWidth(cell);
      const bool right = !header && !key_value_ && i > 0 && LooksNumeric(cell);
      if (i > 0) line += "  ";
      if (right)
        line += std::string(pad, ' ') + cell;
      else if (i + 1 < width.size())
        line += cell + std::string(pad, ' ');
      else
        line += cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  if (!key_value_) emit(header_, true);
  for (const auto& r : rows_) emit(r, false);
  return out;
}

std::string Table::Markdown() const {
  auto escape = [](const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '|')
        o += "\\|";
      else
        o += c;
    }
    return o;
  };
  std::string out = "|";
  for (const auto& h : header_) out += " " + escape(h.empty() && key_value_ ? " " : h) + " |";
  out += "\n|";
  for (size_t i = 0; i < header_.size(); ++i) {
    out += (i == 0 || key_value_) ? " --- |" : " ---: |";
  }
  out += "\n";
  for (const auto& r : rows_) {
    out += "|";
    for (size_t i = 0; i < header_.size(); ++i)
      out += " " + escape(i < r.size() ? r[i] : "") + " |";
    out += "\n";
  }
  return out;
}

std::string Table::Html() const {
  auto escape = [](const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '<')
        o += "&lt;";
      else if (c == '>')
        o += "&gt;";
      else if (c == '&')
        o += "&amp;";
      else
        o += c;
    }
    return o;
  };
  // Wrapped so a wide table scrolls inside its own box on a narrow screen, not the page.
  std::string out = key_value_ ? "<div class=\"table-wrap\"><table class=\"kv\">\n"
                               : "<div class=\"table-wrap\"><table>\n<tr>";
  if (!key_value_) {
    for (const auto& h : header_) out += "<th>" + escape(h) + "</th>";
    out += "</tr>\n";
  }
  for (const auto& r : rows_) {
    out += "<tr>";
    for (size_t i = 0; i < header_.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      const bool num = !key_value_ && i > 0 && LooksNumeric(cell);
      out += (num ? "<td class=\"n\">" : (key_value_ && i == 0 ? "<th>" : "<td>")) + escape(cell) +
             (key_value_ && i == 0 ? "</th>" : "</td>");
    }
    out += "</tr>\n";
  }
  return out + "</table></div>\n";
}

}  // namespace gpufleet::report
