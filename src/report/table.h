#pragma once
// A small table for people: aligned text columns or a Markdown table. Numbers
// are right-aligned. Not thread-safe; build one per rendering.

#include <string>
#include <vector>

namespace gpufleet::report {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  // A two-column list of labels and values: no header line, values left-aligned.
  static Table KeyValue() {
    Table t({"", ""});
    t.key_value_ = true;
    return t;
  }
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }

  // Columns padded to their widest cell, two spaces apart, `indent` spaces first.
  std::string Text(int indent = 2) const;
  std::string Markdown() const;
  // An HTML <table>; cells are escaped.
  std::string Html() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  bool key_value_ = false;
};

// Display width of UTF-8 text (code points; our text has no wide glyphs).
size_t DisplayWidth(const std::string& s);

}  // namespace gpufleet::report
