// prometheus-scrape: a Prometheus configuration scraping every node's agent.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "emit/emit.h"

namespace gpufleet::emit {

Result<std::vector<GeneratedFile>> EmitPrometheusScrape(const model::Spec& spec,
                                                        const EmitOptions& o) {
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "global" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "scrape_interval" << YAML::Value << "15s";
  y << YAML::Key << "evaluation_interval" << YAML::Value << "15s";
  y << YAML::EndMap;
  y << YAML::Key << "scrape_configs" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "job_name" << YAML::Value << "gpufleet";
  y << YAML::Key << "scrape_interval" << YAML::Value << "15s";
  y << YAML::Key << "scrape_timeout" << YAML::Value << "10s";
  y << YAML::Key << "static_configs" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "targets" << YAML::Value << YAML::BeginSeq;
  for (const auto& node : NodeNames(spec, o)) y << fmt::format("{}:{}", node, o.agent_port);
  y << YAML::EndSeq;
  y << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "cluster" << YAML::Value << YAML::DoubleQuoted << spec.cluster.name;
  y << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  if (!y.good()) return Error{ErrorCode::kInternal, "YAML emitter: " + y.GetLastError()};
  return std::vector<GeneratedFile>{
      {"prometheus.yml",
       fmt::format("# Prometheus scraping the gpufleet agent on every node of {} (gpufleet emit "
                   "prometheus-scrape).\n{}\n",
                   CommentSafe(spec.cluster.name), y.c_str())}};
}

}  // namespace gpufleet::emit
