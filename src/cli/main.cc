// gpufleet: one command-line tool for a GPU cluster's life (DESIGN.md).
// The only place that parses argv, prints errors and picks exit codes.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <vector>

#include "base/files.h"
#include "base/gzip.h"
#include "cli/bench_flags.h"
#include "cli/cmd_agent.h"
#include "cli/cmd_bench.h"
#include "cli/cmd_check.h"
#include "cli/cmd_emit.h"
#include "cli/cmd_plan.h"
#include "cli/cmd_sim.h"
#include "cli/cmd_topo.h"
#include "cli/docgen.h"
#include "cli/exit_codes.h"
#include "cli/flags.h"

namespace {

struct Options {
  gpufleet::cli::PlanOptions plan;
  gpufleet::cli::TopoOptions topo;
  gpufleet::cli::EmitCliOptions emit;
  gpufleet::cli::CheckOptions check;
  gpufleet::cli::AgentCliOptions agent;
  gpufleet::cli::SimOptions sim;
  gpufleet::cli::BenchOptions bench;
  std::string shell;    // completion
  std::string man_dir;  // man-pages
  std::string man_date;
};

constexpr const char* kDescription =
    "gpufleet: plan, bring up, validate, run, watch and survive a GPU cluster";

int RunCompletion(const Options& o);
int RunManPages(const Options& o);

// Every subcommand, in one table (ninja's kTools[]): how to add it, how to run it.
struct Command {
  std::function<CLI::App*(CLI::App&, Options*)> add;
  std::function<int(const Options&)> run;
};

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {[](CLI::App& app, Options* o) { return gpufleet::cli::AddPlanCommand(app, &o->plan); },
       [](const Options& o) { return gpufleet::cli::RunPlan(o.plan); }},
      {[](CLI::App& app, Options* o) { return gpufleet::cli::AddTopoCommand(app, &o->topo); },
       [](const Options& o) { return gpufleet::cli::RunTopo(o.topo); }},
      {[](CLI::App& app, Options* o) { return gpufleet::cli::AddEmitCommand(app, &o->emit); },
       [](const Options& o) { return gpufleet::cli::RunEmit(o.emit); }},
      {[](CLI::App& app, Options* o) { return gpufleet::cli::AddCheckCommand(app, &o->check); },
       [](const Options& o) { return gpufleet::cli::RunCheck(o.check); }},
      {[](CLI::App& app, Options* o) { return gpufleet::cli::AddAgentCommand(app, &o->agent); },
       [](const Options& o) { return gpufleet::cli::RunAgent(o.agent); }},
      {[](CLI::App& app, Options* o) { return gpufleet::cli::AddSimCommand(app, &o->sim); },
       [](const Options& o) { return gpufleet::cli::RunSim(o.sim); }},
      {[](CLI::App& app, Options* o) { return gpufleet::cli::AddBenchCommand(app, &o->bench); },
       [](const Options& o) { return gpufleet::cli::RunBench(o.bench); }},
      {[](CLI::App& app, Options* o) {
         CLI::App* cmd = app.add_subcommand(
             "completion", "Print the shell completion script (bash or zsh) for gpufleet");
         cmd->add_option("SHELL", o->shell, "Shell")
             ->required()
             ->check(CLI::IsMember({"bash", "zsh"}));
         return cmd;
       },
       RunCompletion},
      {[](CLI::App& app, Options* o) {
         // The build's: writes the man pages (docs/install.md); not for users, so not listed.
         CLI::App* cmd = app.add_subcommand("man-pages", "Write gpufleet's man pages");
         cmd->group("");
         cmd->add_option("DIR", o->man_dir, "Folder")->required();
         cmd->add_option("--date", o->man_date, "The pages' date, YYYY-MM-DD")->required();
         return cmd;
       },
       RunManPages},
  };
  return kCommands;
}

// What completion and man pages describe: the commands as they parse, except that `bench
// collective|pairs|gpu`, forwarded unparsed to gpufleet-bench, get gpufleet-bench's own flags.
gpufleet::cli::CliCommand DocumentedCli() {
  CLI::App app{kDescription, "gpufleet"};
  app.set_version_flag("--version", GPUFLEET_VERSION);
  Options options;
  for (const auto& c : Commands()) c.add(app, &options);
  CLI::App* bench = app.get_subcommand("bench");
  for (const char* forwarded : {"collective", "pairs", "gpu"}) {
    bench->remove_subcommand(bench->get_subcommand(forwarded));
  }
  gpufleet::cli::BenchFlags flags;
  gpufleet::cli::AddBenchCommands(bench, &flags);
  return gpufleet::cli::DescribeCli(&app);
}

int RunCompletion(const Options& o) {
  const auto cli = DocumentedCli();
  const std::string text = o.shell == "zsh" ? gpufleet::cli::ZshCompletion(cli, "gpufleet")
                                            : gpufleet::cli::BashCompletion(cli, "gpufleet");
  std::fputs(text.c_str(), stdout);
  return std::fflush(stdout) == 0 ? gpufleet::cli::kExitOk : gpufleet::cli::kExitEnvironment;
}

// Writes NAME.1.gz for every page, compressed as Debian wants man pages (gzip -9n: no name, no
// time stamp), into o.man_dir.
int RunManPages(const Options& o) {
  for (const auto& [name, text] :
       gpufleet::cli::ManPages(DocumentedCli(), "gpufleet", GPUFLEET_VERSION, o.man_date)) {
    const auto gz = gpufleet::Gzip(text, 9);
    if (!gz) return gpufleet::cli::ReportError(gz.error());
    const std::filesystem::path path = std::filesystem::path(o.man_dir) / (name + ".gz");
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << *gz;
    if (!out.flush()) {
      std::fprintf(stderr, "gpufleet: man-pages: cannot write %s\n", path.c_str());
      return gpufleet::cli::kExitEnvironment;
    }
  }
  return gpufleet::cli::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  using gpufleet::cli::kExitBadInput;
  // The relocatable bundle carries hwloc's PCI plugin in lib/hwloc (docs/install.md).
  if (std::getenv("HWLOC_PLUGINS_PATH") == nullptr) {
    const std::string plugins = gpufleet::ExecutableDir() + "/../lib/hwloc";
    if (access(plugins.c_str(), R_OK) == 0) setenv("HWLOC_PLUGINS_PATH", plugins.c_str(), 0);
  }
  CLI::App app{kDescription, "gpufleet"};
  app.set_version_flag("--version", GPUFLEET_VERSION);
  app.require_subcommand(1);
  Options options;
  std::vector<CLI::App*> subs;
  for (const auto& c : Commands()) subs.push_back(c.add(app, &options));
  gpufleet::cli::RequireFiniteNumbers(&app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other user error; usage goes with --help.
    std::fprintf(stderr, "gpufleet: %s (see gpufleet --help)\n", e.what());
    return kExitBadInput;
  }
  for (size_t i = 0; i < subs.size(); ++i) {
    if (subs[i]->parsed()) return Commands()[i].run(options);
  }
  return kExitBadInput;
}
