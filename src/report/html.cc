#include "report/html.h"

#include <fmt/format.h>

#include "report/svg.h"

namespace gpufleet::report {

std::string HtmlPage(const std::string& title, const std::string& subtitle,
                     const std::string& body) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{0}</title>
<style>
body {{ font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1em; font-size: 13px; }}
th, td {{ border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }}
td.n {{ text-align: right; font-variant-numeric: tabular-nums; }}
table.kv th {{ background: #f6f6f6; }}
li.critical {{ color: #b00; }} li.warning {{ color: #a60; }}
</style></head><body>
<h1>{0}</h1>
<p>{1}</p>
{2}</body></html>
)",
                     EscapeXml(title), EscapeXml(subtitle), body);
}

}  // namespace gpufleet::report
