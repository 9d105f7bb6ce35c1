#pragma once
// Flag hygiene shared by gpufleet and gpufleet-bench: every floating-point option must be a
// finite number of sane size. CLI11 parses "nan" and "inf" into doubles, and a range test such
// as `v < 0 || v > 100` lets NaN through: --disk-full nan passed every disk, --interval nan spun
// the agent at 100 % CPU, --gpu-timeout 3e6 overflowed into "every GPU hung".

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <string>

namespace gpufleet::cli {

// Adds the check to every FLOAT option of `app` and, recursively, of its subcommands. Call it
// once every option exists.
inline void RequireFiniteNumbers(CLI::App* app) {
  const CLI::Validator finite(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end == s.c_str()) return "";  // not a number at all: CLI11's own message says so
        if (!std::isfinite(v)) return "want a finite number";
        if (std::fabs(v) > 1e15) return "out of range";
        return "";
      },
      "", "finite");
  for (CLI::Option* opt : app->get_options()) {
    if (opt->get_type_name().rfind("FLOAT", 0) == 0) opt->check(finite);
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    RequireFiniteNumbers(sub);
  }
}

}  // namespace gpufleet::cli
