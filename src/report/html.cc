#include "report/html.h"

#include <fmt/format.h>

#include "report/svg.h"

namespace gpufleet::report {

std::string HtmlPage(const std::string& title, const std::string& subtitle,
                     const std::string& body) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{0}</title>
<style>
body {{ font-family: sans-serif; max-width: 1100px; margin: 1.5em auto; padding: 0 1em; color: #222;
  overflow-wrap: break-word; }}
h1 {{ font-size: 1.6em; }} h2 {{ font-size: 1.25em; margin-top: 1.6em; }}
svg {{ display: block; margin: 0.5em 0; }}
.table-wrap, pre {{ max-width: 100%; overflow-x: auto; }}
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
