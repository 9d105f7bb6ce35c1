#include "cli/cmd_agent.h"

#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "agent/agent.h"
#include "agent/server.h"
#include "base/files.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "model/spec.h"
#include "topo/discover.h"

namespace gpufleet::cli {

CLI::App* AddAgentCommand(CLI::App& app, AgentCliOptions* o) {
  CLI::App* cmd = app.add_subcommand(
      "agent", "Serve /metrics for Prometheus and run the health checks on a schedule");
  cmd->add_option("SPEC,--spec", o->spec,
                  fmt::format("Cluster spec (YAML); default: $GPUFLEET_SPEC, else {} if it exists, "
                              "else none (only what needs no spec is judged)",
                              kDefaultSpecPath));
  cmd->add_option("--set", o->set, "Change a spec value, PATH=VALUE");
  cmd->add_option("--listen", o->listen,
                  "HOST:PORT to serve on; :PORT is every address (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--web.config.file", o->web_config,
                  "TLS and basic auth, Prometheus exporter-toolkit web-config format");
  cmd->add_option("--root", o->root, "Read /proc and /sys under this folder (tests, captures)");
  cmd->add_option("--topology", o->topology,
                  "Expected topology: a captured tree or hwloc XML (default: discover this node)");
  cmd->add_flag("--no-nvml", o->no_nvml, "Do not load NVML");
  cmd->add_option("--bench-dir", o->bench_dir, "Folder of gpufleet bench JSON results");
  cmd->add_option("--interval", o->interval_s, "Seconds between collections")
      ->capture_default_str();
  cmd->add_option("--check-interval", o->check_interval_s, "Seconds between check runs")
      ->capture_default_str();
  cmd->add_option("--web.max-connections", o->max_connections,
                  "Connections open at once; the next is answered 503")
      ->capture_default_str();
  cmd->add_option("--web.max-connections-per-client", o->max_connections_per_client,
                  "Connections open at once from one client address (so a scraper keeps a slot)")
      ->capture_default_str();
  cmd->add_option("--web.timeout", o->timeout_s,
                  "Seconds for a whole request head, a whole TLS handshake, and an idle "
                  "keep-alive connection")
      ->capture_default_str();
  cmd->add_flag("--once", o->once, "Collect once, print /metrics to stdout and exit");
  // --collector.NAME / --no-collector.NAME, one pair per registered collector.
  for (const auto& c : agent::Collectors()) {
    const std::string name = c.name;
    cmd->add_flag_callback(
        "--collector." + name, [o, name] { o->collectors_on.push_back(name); },
        fmt::format("Enable the {} collector{}: {}", name, c.enabled_by_default ? " (default)" : "",
                    c.description));
    cmd->add_flag_callback(
        "--no-collector." + name, [o, name] { o->collectors_off.push_back(name); },
        fmt::format("Disable the {} collector", name));
  }
  AddCheckLimitFlags(cmd, &o->limits);
  return cmd;
}

namespace {
agent::Server* g_server = nullptr;

void OnSignal(int) {
  // Stop() writes to an eventfd: async-signal-safe.
  if (g_server) g_server->Stop();
}
}  // namespace

int RunAgent(const AgentCliOptions& o) {
  Result<NodeSpec> spec = LoadNodeSpec(o.spec, o.set);
  if (!spec) return ReportError(spec.error());
  agent::AgentOptions ao;
  if (Status s = ApplyCheckLimitFlags(o.limits, &ao.limits, &ao.xid_table); !s) {
    return ReportError(s.error());
  }
  auto collectors = agent::SelectCollectors(o.collectors_on, o.collectors_off);
  if (!collectors) return ReportError(collectors.error());
  if (!(o.interval_s >= 0.1 && o.interval_s <= 86400 && o.check_interval_s >= 0.1 &&
        o.check_interval_s <= 86400)) {
    return ReportError(
        InvalidArgument("--interval and --check-interval: want 0.1 to 86400 seconds"));
  }
  if (o.max_connections < 1 || o.max_connections > 4096) {
    return ReportError(InvalidArgument(
        fmt::format("--web.max-connections {}: want 1 to 4096", o.max_connections)));
  }
  if (o.max_connections_per_client < 1 || o.max_connections_per_client > o.max_connections) {
    return ReportError(InvalidArgument(
        fmt::format("--web.max-connections-per-client {}: want 1 to --web.max-connections ({})",
                    o.max_connections_per_client, o.max_connections)));
  }
  if (o.timeout_s < 1 || o.timeout_s > 3600) {
    return ReportError(
        InvalidArgument(fmt::format("--web.timeout {}: want 1 to 3600 seconds", o.timeout_s)));
  }
  agent::ServerOptions so;
  so.listen = o.listen;
  so.max_connections = o.max_connections;
  so.max_connections_per_client = o.max_connections_per_client;
  so.timeout_s = o.timeout_s;
  if (!o.web_config.empty()) {
    auto web = agent::LoadWebConfig(o.web_config);
    if (!web) return ReportError(web.error());
    so.web = std::move(*web);
  }
  if (!o.bench_dir.empty()) {
    if (Status s = CheckPath(o.bench_dir, true, "a folder of bench results"); !s) {
      return ReportError(s.error());
    }
  }
  ao.sources.nvml = !o.no_nvml;
  ao.sources.kmsg = o.limits.kmsg;
  ao.sources.imex_config = o.limits.imex_config;
  ao.sources.root = o.root.empty() ? "/" : o.root;
  ao.sources.gpu_deadline =
      std::chrono::milliseconds(static_cast<int>(o.limits.gpu_timeout_s * 1000));
  // NVML is loaded and initialised once: discovery asks the agent's instance.
  auto sources = agent::NodeSources::Open(ao.sources);
  topo::DiscoverOptions d =
      o.topology.empty() ? topo::DiscoverOptions{} : topo::DiscoverOptionsFor(o.topology);
  if (o.topology.empty() && !o.root.empty()) d.root = o.root;
  d.nvml = sources->nvml() && o.topology.empty() && o.root.empty();
  d.nvml_handle = sources->nvml_handle();
  auto node = topo::Discover(d);
  if (!node) return ReportError(node.error());
  ao.collectors = std::move(*collectors);
  ao.bench_dir = o.bench_dir;
  ao.interval_s = o.interval_s;
  ao.check_interval_s = o.check_interval_s;
  ao.disks = o.limits.disks.empty() ? std::vector<std::string>{"/"} : o.limits.disks;
  if (auto usage = agent::DiskUsageOf(ao.disks); !usage) return ReportError(usage.error());
  ao.version = GPUFLEET_VERSION;

  agent::Agent a(ao, std::move(sources), spec->spec ? &*spec->spec : nullptr, &*node);
  auto say_spec = [&] {
    if (!spec->note.empty()) std::fprintf(stderr, "gpufleet agent: %s\n", spec->note.c_str());
  };
  if (o.once) {
    say_spec();
    a.CollectOnce();
    if (Status s = WriteOutput("", a.Metrics()); !s) return ReportError(s.error());
    return kExitOk;
  }
  auto server = agent::Server::Create(so, &a);
  if (!server) return ReportError(server.error());
  say_spec();
  a.Start();
  g_server = server->get();
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::fprintf(stderr, "gpufleet agent: serving http%s://%s (port %d)\n",
               so.web.cert_file.empty() ? "" : "s", o.listen.c_str(), (*server)->port());
  Status s = (*server)->Run();
  g_server = nullptr;
  if (!s) return ReportError(s.error());
  return kExitOk;
}

}  // namespace gpufleet::cli
