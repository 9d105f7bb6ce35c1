// gpufleet: one command-line tool for a GPU cluster's life (DESIGN.md).
// The only place that parses argv, prints errors and picks exit codes.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <vector>

#include "cli/cmd_agent.h"
#include "cli/cmd_bench.h"
#include "cli/cmd_check.h"
#include "cli/cmd_emit.h"
#include "cli/cmd_plan.h"
#include "cli/cmd_sim.h"
#include "cli/cmd_topo.h"
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
};

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
  };
  return kCommands;
}

}  // namespace

int main(int argc, char** argv) {
  using gpufleet::cli::kExitBadInput;
  CLI::App app{"gpufleet: plan, bring up, validate, run, watch and survive a GPU cluster",
               "gpufleet"};
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
