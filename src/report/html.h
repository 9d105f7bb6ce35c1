#pragma once
// The frame of every self-contained HTML report: one page, inline style, no
// scripts. Pure; thread-safe.

#include <string>

namespace gpufleet::report {

// `title` and `subtitle` are escaped; `body` is HTML.
std::string HtmlPage(const std::string& title, const std::string& subtitle,
                     const std::string& body);

}  // namespace gpufleet::report
