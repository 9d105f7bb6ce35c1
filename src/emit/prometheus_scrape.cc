// prometheus-scrape: a Prometheus configuration scraping every node's agent, with the same
// scheme, CA and basic auth the agents serve (gpufleet agent --listen :9401 --web.config.file),
// the emitted alerting rules, and Alertmanager when one is named.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "emit/emit.h"

namespace gpufleet::emit {

Result<std::vector<GeneratedFile>> EmitPrometheusScrape(const model::Spec& spec,
                                                        const EmitOptions& o) {
  const Result<double> interval_s = AgentScrapeSeconds(o);
  if (!interval_s) return interval_s.error();
  if (!o.agent_ca_file.empty() && o.agent_scheme != "https") {
    return InvalidArgument("--agent-ca-file: needs --agent-scheme https");
  }
  if (o.agent_user.empty() != o.agent_password_file.empty()) {
    return InvalidArgument(
        "--agent-user and --agent-password-file go together (basic auth: a user and the file "
        "holding its password)");
  }
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "global" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "scrape_interval" << YAML::Value << o.scrape_interval;
  y << YAML::Key << "evaluation_interval" << YAML::Value << o.scrape_interval;
  y << YAML::EndMap;
  // A glob, relative to this file: Prometheus (and promtool) accept it before the rules exist.
  y << YAML::Key << "rule_files" << YAML::Value << YAML::Flow << YAML::BeginSeq
    << "gpufleet-rules*.yml" << YAML::EndSeq;
  if (!o.alertmanager.empty()) {
    y << YAML::Key << "alerting" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "alertmanagers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    y << YAML::Key << "static_configs" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    y << YAML::Key << "targets" << YAML::Value << YAML::Flow << YAML::BeginSeq << o.alertmanager
      << YAML::EndSeq;
    y << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  }
  y << YAML::Key << "scrape_configs" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "job_name" << YAML::Value << "gpufleet";
  // The scrape timeout may not exceed the interval: 10 s, or the interval when shorter.
  y << YAML::Key << "scrape_interval" << YAML::Value << o.scrape_interval;
  y << YAML::Key << "scrape_timeout" << YAML::Value
    << (*interval_s < 10 ? o.scrape_interval : std::string("10s"));
  if (o.agent_scheme == "https") {
    y << YAML::Key << "scheme" << YAML::Value << "https";
    if (!o.agent_ca_file.empty()) {
      y << YAML::Key << "tls_config" << YAML::Value << YAML::BeginMap << YAML::Key << "ca_file"
        << YAML::Value << o.agent_ca_file << YAML::EndMap;
    }
  }
  if (!o.agent_user.empty()) {
    y << YAML::Key << "basic_auth" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "username" << YAML::Value << o.agent_user;
    y << YAML::Key << "password_file" << YAML::Value << o.agent_password_file;
    y << YAML::EndMap;
  }
  y << YAML::Key << "static_configs" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "targets" << YAML::Value << YAML::BeginSeq;
  for (const auto& node : NodeNames(spec, o)) y << fmt::format("{}:{}", node, o.agent_port);
  y << YAML::EndSeq;
  y << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "cluster" << YAML::Value << YAML::DoubleQuoted << spec.cluster.name;
  y << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  // `node` = the target's host name, so alerts and dashboards say "gpu001", not "gpu001:9401".
  y << YAML::Key << "relabel_configs" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "source_labels" << YAML::Value << YAML::Flow << YAML::BeginSeq << "__address__"
    << YAML::EndSeq;
  y << YAML::Key << "regex" << YAML::Value << YAML::SingleQuoted << "(.+):[0-9]+";
  y << YAML::Key << "target_label" << YAML::Value << "node";
  y << YAML::Key << "replacement" << YAML::Value << YAML::SingleQuoted << "$1";
  y << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  if (!y.good()) return Error{ErrorCode::kInternal, "YAML emitter: " + y.GetLastError()};
  const std::string agent = fmt::format("gpufleet agent --listen :{}{}", o.agent_port,
                                        o.agent_scheme == "https" || !o.agent_user.empty()
                                            ? " --web.config.file /etc/gpufleet/web-config.yml"
                                            : "");
  return std::vector<GeneratedFile>{
      {"prometheus.yml",
       fmt::format("# Prometheus scraping the gpufleet agent on every node of {} (gpufleet emit "
                   "prometheus-scrape).\n"
                   "# Each node runs: {}\n"
                   "# The node names must resolve from the Prometheus server (DNS or /etc/hosts);\n"
                   "# put gpufleet-rules.yml (gpufleet emit prometheus-rules) beside this file.\n"
                   "{}\n",
                   CommentSafe(spec.cluster.name), agent, y.c_str())}};
}

}  // namespace gpufleet::emit
