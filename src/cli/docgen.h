#pragma once
// Shell completion and man pages, generated from the same CLI11 definitions that parse argv and
// print --help, so neither can drift from the commands (`gpufleet completion bash|zsh`, and the
// build's `gpufleet man-pages DIR`; docs/install.md).

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

namespace gpufleet::cli {

// One option or positional argument as the user types it.
struct CliOption {
  std::vector<std::string> names;    // "-o", "--output"; empty for a positional-only argument
  std::string positional;            // "SPEC" where the option is (also) positional
  std::string value;                 // "TEXT", "INT", ... for an option that takes a value
  std::vector<std::string> choices;  // the allowed values, when there is a fixed set
  std::string help;
  std::string default_value;
  bool required = false;
  bool repeated = false;  // several values (OPS..., --set)
};

// A command and its subcommands ("topo", "topo lint").
struct CliCommand {
  std::string path;  // words after the program name; "" for the program itself
  std::string help;
  std::vector<CliOption> options;
  std::vector<CliCommand> subcommands;
};

// The visible tree under `app` (options in group "" are test-only and left out).
CliCommand DescribeCli(CLI::App* app);

std::string BashCompletion(const CliCommand& root, const std::string& program);
// zsh, through its bash compatibility (bashcompinit): the same tables, one generator.
std::string ZshCompletion(const CliCommand& root, const std::string& program);

// gpufleet(1) and one page per top-level command, "gpufleet-plan.1" and so on: file name and roff.
// `date` is the pages' date (YYYY-MM-DD), given so that a build is reproducible.
std::vector<std::pair<std::string, std::string>> ManPages(const CliCommand& root,
                                                          const std::string& program,
                                                          const std::string& version,
                                                          const std::string& date);

}  // namespace gpufleet::cli
