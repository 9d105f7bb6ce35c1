// emit: golden files for every target on the reference cluster and the 1,024-GPU example, the
// published schemas' keys for every Kubernetes object, and hostile names that must stay inert.
// Regenerate goldens after an intended change: GPUFLEET_UPDATE_GOLDEN=1 build/dev/tests/emit_test

#include "emit/emit.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "../common/tree.h"
#include "../topo/fixtures.h"
#include "topo/node_topology.h"

namespace gpufleet::emit {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
const fs::path kGolden = fs::path(GPUFLEET_SOURCE_DIR) / "tests/golden/emit";

model::Spec Load(const std::string& file) {
  auto s = model::LoadSpecFile(std::string(GPUFLEET_SOURCE_DIR) + "/examples/" + file);
  if (!s) ADD_FAILURE() << s.error().message;
  return *s;
}

std::vector<GeneratedFile> Generate(const std::string& target, const model::Spec& spec,
                                    const EmitOptions& o = {}) {
  const Target* t = FindTarget(target);
  EXPECT_NE(t, nullptr) << target;
  auto files = t->generate(spec, o);
  EXPECT_TRUE(files) << target << ": " << (files ? "" : files.error().message);
  return files ? *files : std::vector<GeneratedFile>{};
}

class EmitGoldenTest : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EmitGoldenTest, MatchesTheGoldenFile) {
  const auto& [example, target] = GetParam();
  const model::Spec spec = Load(example);
  for (const auto& f : Generate(target, spec)) {
    const fs::path path = kGolden / fs::path(example).stem() / f.name;
    if (const char* u = std::getenv("GPUFLEET_UPDATE_GOLDEN"); u && *u == '1') {
      fs::create_directories(path.parent_path());
      std::ofstream(path, std::ios::binary) << f.content;
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << path;
    std::stringstream want;
    want << in.rdbuf();
    EXPECT_EQ(f.content, want.str()) << path;
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryTarget, EmitGoldenTest,
    ::testing::Combine(::testing::Values("reference-32gpu.yaml", "h100-1024gpu.yaml"),
                       ::testing::Values("nccl-env", "torchrun", "sbatch", "slurm-conf", "volcano",
                                         "kubelet", "prometheus-scrape", "prometheus-rules",
                                         "dcgm-rules", "grafana", "daemonset")),
    [](const auto& param_info) {
      std::string n = std::get<0>(param_info.param) + "_" + std::get<1>(param_info.param);
      for (char& c : n) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return n;
    });

// Keys of the published schemas (Volcano batch.volcano.sh/v1alpha1 JobSpec, TaskSpec and
// LifecyclePolicy in volcano-sh/apis pkg/apis/batch/v1alpha1/job.go; Kubernetes core/v1 PodSpec,
// Container, ResourceRequirements, SecurityContext, Volume; kubelet.config.k8s.io/v1beta1
// KubeletConfiguration in k8s.io/kubelet/config/v1beta1/types.go; Prometheus configuration docs).
const std::set<std::string> kVolcanoJob = {"apiVersion", "kind", "metadata", "spec"};
const std::set<std::string> kMetadata = {"name", "namespace", "labels", "annotations"};
const std::set<std::string> kJobSpec = {
    "schedulerName",     "minAvailable",    "volumes",        "tasks",    "policies",
    "plugins",           "runningEstimate", "queue",          "maxRetry", "ttlSecondsAfterFinished",
    "priorityClassName", "minSuccess",      "networkTopology"};
const std::set<std::string> kTaskSpec = {"name",     "replicas",       "minAvailable", "template",
                                         "policies", "topologyPolicy", "maxRetry",     "dependsOn"};
const std::set<std::string> kPolicy = {"event", "events", "action", "exitCode", "timeout"};
const std::set<std::string> kPodTemplate = {"metadata", "spec"};
const std::set<std::string> kPodSpec = {
    "restartPolicy",  "containers",         "volumes",  "nodeSelector",  "affinity",
    "tolerations",    "hostNetwork",        "hostIPC",  "schedulerName", "priorityClassName",
    "initContainers", "serviceAccountName", "dnsPolicy"};
const std::set<std::string> kContainer = {"name",  "image",      "command",         "args",
                                          "env",   "resources",  "securityContext", "volumeMounts",
                                          "ports", "workingDir", "imagePullPolicy"};
const std::set<std::string> kKubelet = {"apiVersion",           "kind",
                                        "cpuManagerPolicy",     "cpuManagerPolicyOptions",
                                        "memoryManagerPolicy",  "topologyManagerPolicy",
                                        "topologyManagerScope", "topologyManagerPolicyOptions",
                                        "reservedSystemCPUs",   "systemReserved",
                                        "kubeReserved",         "evictionHard",
                                        "reservedMemory",       "cpuManagerReconcilePeriod",
                                        "featureGates"};

void ExpectKeys(const YAML::Node& n, const std::set<std::string>& allowed,
                const std::string& where) {
  ASSERT_TRUE(n.IsMap()) << where;
  for (const auto& kv : n) {
    EXPECT_TRUE(allowed.count(kv.first.Scalar())) << where << ": unknown key " << kv.first.Scalar();
  }
}

TEST(EmitSchemaTest, VolcanoJobUsesOnlyPublishedFields) {
  const model::Spec spec = Load("h100-1024gpu.yaml");
  YAML::Node job = YAML::Load(Generate("volcano", spec)[0].content);
  ExpectKeys(job, kVolcanoJob, "Job");
  EXPECT_EQ(job["apiVersion"].Scalar(), "batch.volcano.sh/v1alpha1");
  EXPECT_EQ(job["kind"].Scalar(), "Job");
  ExpectKeys(job["metadata"], kMetadata, "metadata");
  ExpectKeys(job["spec"], kJobSpec, "spec");
  EXPECT_EQ(job["spec"]["minAvailable"].as<int>(), 128);  // gang: every pod
  int replicas = 0;
  for (const auto& p : job["spec"]["policies"]) ExpectKeys(p, kPolicy, "policy");
  for (const auto& task : job["spec"]["tasks"]) {
    ExpectKeys(task, kTaskSpec, "task");
    replicas += task["replicas"].as<int>();
    ExpectKeys(task["template"], kPodTemplate, "template");
    ExpectKeys(task["template"]["spec"], kPodSpec, "podSpec");
    for (const auto& c : task["template"]["spec"]["containers"]) {
      ExpectKeys(c, kContainer, "container");
      EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"].as<int>(), 8);
      EXPECT_EQ(c["resources"]["limits"]["rdma/rdma_shared_device_a"].as<int>(), 1);
      // Issue 12: Guaranteed QoS (requests equal to limits for CPU and memory too), which the
      // kubelet's static CPU and memory managers need to pin the pod.
      for (const char* r : {"cpu", "memory", "nvidia.com/gpu", "rdma/rdma_shared_device_a"}) {
        ASSERT_TRUE(c["resources"]["requests"][r]) << r;
        EXPECT_EQ(c["resources"]["requests"][r].Scalar(), c["resources"]["limits"][r].Scalar())
            << r;
      }
      EXPECT_EQ(c["resources"]["limits"]["cpu"].as<int>() % 2, 0);  // whole cores
    }
  }
  EXPECT_EQ(replicas, 128);
}

TEST(EmitSchemaTest, KubeletConfigurationIsTheRealKind) {
  YAML::Node k = YAML::Load(Generate("kubelet", Load("reference-32gpu.yaml"))[0].content);
  ExpectKeys(k, kKubelet, "KubeletConfiguration");
  EXPECT_EQ(k["apiVersion"].Scalar(), "kubelet.config.k8s.io/v1beta1");
  EXPECT_EQ(k["kind"].Scalar(), "KubeletConfiguration");
  EXPECT_EQ(k["cpuManagerPolicy"].Scalar(), "static");
  EXPECT_EQ(k["memoryManagerPolicy"].Scalar(), "Static");
  // Static memory manager: reservedMemory adds up to system + kube reserved + eviction.
  int mib = 0;
  for (const auto& r : k["reservedMemory"]) mib += std::stoi(r["limits"]["memory"].Scalar());
  const int want = (std::stoi(k["systemReserved"]["memory"].Scalar()) + 1 + 1) * 1024;
  EXPECT_EQ(mib, want);
}

TEST(EmitSchemaTest, EveryYamlTargetParses) {
  for (const char* t : {"volcano", "kubelet", "prometheus-scrape"}) {
    for (const auto& f : Generate(t, Load("reference-32gpu.yaml"))) {
      EXPECT_NO_THROW(YAML::Load(f.content)) << t;
    }
  }
}

TEST(EmitTest, HostileNamesStayInert) {
  const gpufleet::testing::Tree tree("emit-hostile");  // removed at the end
  const std::string flag = tree.path() + "/gpufleet-pwned";
  const std::string payload = "$(touch " + flag + ")`touch " + flag + "`";
  model::Spec spec = Load("reference-32gpu.yaml");
  spec.cluster.name = "x'; " + payload + " #\n" + payload + "\"";
  EmitOptions o;
  o.job_name = spec.cluster.name;
  o.script = "train.py'; " + payload;
  o.image = "img\"\n  evil: true";
  o.socket_ifname = "eth0'\n" + payload;
  o.topo_file = "/x'" + payload;
  o.namespace_name = "ns\nevil: true";
  for (const auto& t : Targets()) {
    for (const auto& f : Generate(t.name, spec, o)) {
      const std::string path = tree.path() + "/hostile-" + f.name;
      std::ofstream(path, std::ios::binary) << f.content;
      if (f.name.size() > 3 && f.name.substr(f.name.size() - 3) == ".sh") {
        // Syntax is valid, and running it (with no torchrun/srun on PATH) runs no payload.
        EXPECT_EQ(std::system(("bash -n " + path).c_str()), 0) << t.name;
        std::system(("cd " + tree.path() +
                     " && env -i PATH=/nonexistent MASTER_ADDR=h "
                     "/bin/bash " +
                     path + " >/dev/null 2>&1")
                        .c_str());
        EXPECT_FALSE(std::filesystem::exists(flag)) << t.name << " ran the payload";
      } else if (f.name.find(".conf") != std::string::npos) {
        std::istringstream lines(f.content);
        for (std::string line; std::getline(lines, line);) {
          EXPECT_TRUE(line.empty() || line[0] == '#' || line.rfind("NodeName=", 0) == 0 ||
                      line.rfind("SwitchName=", 0) == 0 || line.rfind("AutoDetect=", 0) == 0)
              << t.name << ": " << line;
        }
      } else {
        YAML::Node y = YAML::Load(f.content);
        std::function<void(const YAML::Node&)> walk = [&](const YAML::Node& n) {
          if (n.IsMap()) {
            for (const auto& kv : n) {
              EXPECT_NE(kv.first.Scalar(), "evil") << t.name;
              walk(kv.second);
            }
          } else if (n.IsSequence()) {
            for (const auto& c : n) walk(c);
          }
        };
        walk(y);
      }
    }
  }
}

// Issue 12: `--time 01:00:00` and `--partition a,b` were dropped without a word.
TEST(SbatchTest, KeepsEverySlurmTimeFormatAndPartitionLists) {
  const model::Spec spec = Load("reference-32gpu.yaml");
  for (const char* t : {"30", "30:00", "01:00:00", "2-12", "2-12:30", "2-12:30:15", "UNLIMITED",
                        "infinite", "90:00"}) {
    EmitOptions o;
    o.time_limit = t;
    o.partition = "gpu,gpu-long";
    const std::string out = Generate("sbatch", spec, o)[0].content;
    EXPECT_NE(out.find(std::string("\n#SBATCH --time=") + t + "\n"), std::string::npos) << t;
    EXPECT_NE(out.find("\n#SBATCH --partition=gpu,gpu-long\n"), std::string::npos);
  }
  for (const char* t : {"1:2:3:4", "abc", "1-", "-5", "1h", "2-", ":30", "1-2-3"}) {
    EmitOptions o;
    o.time_limit = t;
    auto r = EmitSbatch(spec, o);
    ASSERT_FALSE(r) << t;
    EXPECT_EQ(r.error().message,
              std::string("--time ") + t +
                  ": not a Slurm time; use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or "
                  "UNLIMITED");
  }
  for (const char* p : {"a b", "a,,b", ",a", "a,", "a;b"}) {
    EmitOptions o;
    o.partition = p;
    EXPECT_FALSE(EmitSbatch(spec, o)) << p;
  }
}

// Issue 12: since Slurm 22.05 srun does not take --cpus-per-task from sbatch, so torchrun's step
// got one CPU; and the prolog check ran without the spec, judging H100 nodes against the
// embedded A100 cluster.
TEST(SbatchTest, StepsGetTheirCpusAndThePrologTheSpec) {
  const model::Spec spec = Load("h100-1024gpu.yaml");  // 2 x 56 cores, 8 GPUs: 14 per GPU
  EmitOptions o;
  o.node_spec = "/etc/gpufleet/cluster.yaml";
  std::string out = Generate("sbatch", spec, o)[0].content;
  EXPECT_NE(out.find("\n#SBATCH --cpus-per-task=112\n"), std::string::npos);
  EXPECT_NE(out.find("\nexport SRUN_CPUS_PER_TASK=\"$SLURM_CPUS_PER_TASK\"\n"), std::string::npos);
  EXPECT_NE(out.find("'gpufleet' check --spec '/etc/gpufleet/cluster.yaml' --slurm --unknown-ok"),
            std::string::npos);
  o.bench = true;
  o.cpus_per_task = 7;
  out = Generate("sbatch", spec, o)[0].content;
  EXPECT_NE(out.find("\n#SBATCH --ntasks-per-node=8\n"), std::string::npos);
  EXPECT_NE(out.find("\n#SBATCH --cpus-per-task=7\n"), std::string::npos);
  EXPECT_NE(out.find("srun --mpi=pmix --kill-on-bad-exit=1"), std::string::npos);
  EXPECT_NE(out.find("'gpufleet' bench collective \"${BENCH_ARGS[@]}\" --spec "
                     "'/etc/gpufleet/cluster.yaml' --format json"),
            std::string::npos);
  EXPECT_EQ(out.find("torchrun"), std::string::npos);
  o.node_spec.clear();  // no spec given: the nodes' own default
  out = Generate("sbatch", spec, o)[0].content;
  EXPECT_NE(out.find("'gpufleet' check --slurm --unknown-ok"), std::string::npos);
}

// Issue 12: the scrape config named gpu001:9401 while the agent listened on 127.0.0.1 only.
// The targets, scheme, CA and basic auth now follow the agents' deployment.
TEST(ScrapeTest, MatchesTheAgentsDeployment) {
  const model::Spec spec = Load("reference-32gpu.yaml");
  EmitOptions o;
  o.agent_scheme = "https";
  o.agent_ca_file = "/etc/prometheus/gpufleet-ca.pem";
  o.agent_user = "prometheus";
  o.agent_password_file = "/etc/prometheus/gpufleet.pw";
  o.alertmanager = "alertmanager:9093";
  YAML::Node c = YAML::Load(Generate("prometheus-scrape", spec, o)[0].content);
  const YAML::Node job = c["scrape_configs"][0];
  EXPECT_EQ(job["scheme"].Scalar(), "https");
  EXPECT_EQ(job["tls_config"]["ca_file"].Scalar(), o.agent_ca_file);
  EXPECT_EQ(job["basic_auth"]["username"].Scalar(), "prometheus");
  EXPECT_EQ(job["basic_auth"]["password_file"].Scalar(), o.agent_password_file);
  EXPECT_EQ(job["static_configs"][0]["targets"][0].Scalar(), "gpu001:9401");
  EXPECT_EQ(c["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"][0].Scalar(),
            "alertmanager:9093");
  o.agent_scheme = "http";
  EXPECT_FALSE(EmitPrometheusScrape(spec, o));  // a CA without TLS
  o.agent_ca_file.clear();
  o.agent_password_file.clear();
  EXPECT_FALSE(EmitPrometheusScrape(spec, o));  // a user without a password file
}

// The workload flags carry the pipeline's whole shape: interleaving, the embedding and the loss
// in the split, expert parallelism, selective recompute's modules; a default one adds nothing.
TEST(EmitTest, TrainingArgsCarryThePipelinesShape) {
  model::Spec spec = Load("h100-1024gpu.yaml");  // TP8 PP2 VP5
  const std::string plain = Generate("torchrun", Load("reference-32gpu.yaml"))[0].content;
  EXPECT_THAT(plain, Not(HasSubstr("--virtual-stages")));
  EXPECT_THAT(plain, Not(HasSubstr("pipeline-split")));
  spec.workload.pipeline_split = {true, true};
  spec.workload.expert = 4;
  for (const char* target : {"torchrun", "sbatch", "volcano"}) {
    const std::string out = Generate(target, spec)[0].content;
    EXPECT_THAT(out, HasSubstr("--pipeline-parallel 2 --context-parallel 1 --virtual-stages 5 "
                               "--embedding-in-pipeline-split --loss-in-pipeline-split "
                               "--expert-parallel 4 --sequence-parallel"))
        << target;
  }
  // The h100-1024gpu spec recomputes selectively, the attention core alone: no module flag; other
  // modules are named in Megatron-Core's order.
  ASSERT_EQ(spec.workload.recompute, model::Recompute::kSelective);
  EXPECT_THAT(Generate("torchrun", spec)[0].content,
              Not(HasSubstr("--activation-checkpointing-modules")));
  spec.workload.recompute_modules = {.core_attn = true, .mlp = true};
  EXPECT_THAT(Generate("torchrun", spec)[0].content,
              HasSubstr("--activation-checkpointing selective "
                        "--activation-checkpointing-modules core_attn,mlp"));
}

TEST(EmitTest, SlurmRejectsUnsafeNodeNames) {
  EmitOptions o;
  o.nodes = "a b,c;d,e,f";
  auto r = FindTarget("slurm-conf")->generate(Load("reference-32gpu.yaml"), o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("is not a valid Slurm name"));
}

TEST(EmitTest, ShellQuotingAndHostLists) {
  EXPECT_EQ(ShellQuote("a'b"), "'a'\\''b'");
  EXPECT_EQ(HostList({"gpu001", "gpu002", "gpu003", "gpu007", "login"}), "gpu[001-003,007],login");
  EmitOptions o;
  o.nodes = "node[08-11]";
  EXPECT_EQ(NodeNames(Load("reference-32gpu.yaml"), o),
            (std::vector<std::string>{"node08", "node09", "node10", "node11"}));
}

// The dashboard against Grafana's dashboard model (schemaVersion 39, as Grafana 10/11 write it):
// known panel types, unique ids, grid positions inside the 24-column grid and not overlapping,
// every panel, target and annotation on the ${datasource} variable, every $variable used defined,
// drill-down links into this dashboard. Grafana publishes no standalone JSON schema for
// dashboards (its model is CUE in grafana/kinds); these are the rules that model states.
TEST(EmitSchemaTest, GrafanaDashboardFollowsGrafanasModel) {
  const auto d =
      nlohmann::json::parse(Generate("grafana", Load("h100-16384gpu.yaml"), {})[0].content);
  EXPECT_GE(d.at("schemaVersion").get<int>(), 36);
  EXPECT_LE(d.at("schemaVersion").get<int>(), 41);
  const std::string uid = d.at("uid");
  EXPECT_FALSE(uid.empty());
  std::set<std::string> vars = {"__all", "__interval", "__rate_interval", "__data"};
  for (const auto& v : d.at("templating").at("list")) {
    EXPECT_TRUE(vars.insert(v.at("name").get<std::string>()).second) << v.at("name");
  }
  for (const char* want : {"datasource", "cluster", "instance", "gpu"}) {
    EXPECT_TRUE(vars.count(want)) << "no $" << want << " variable";
  }
  EXPECT_EQ(d["templating"]["list"][0].at("type"), "datasource");
  static const std::regex kVar(R"(\$\{?([A-Za-z_][A-Za-z0-9_]*))");
  auto check_vars = [&](const std::string& text, const std::string& where) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kVar);
         it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[1];
      // PromQL's own $1 in label_replace is not a Grafana variable; names are.
      EXPECT_TRUE(vars.count(name) || std::isdigit(static_cast<unsigned char>(name[0])))
          << where << " uses $" << name << ", which no variable defines";
    }
  };
  const nlohmann::json ds = {{"type", "prometheus"}, {"uid", "${datasource}"}};
  static const std::set<std::string> kTypes = {
      "row",   "timeseries", "stat",     "table",    "heatmap",        "text",
      "gauge", "bargauge",   "barchart", "piechart", "state-timeline", "status-history",
      "logs",  "histogram",  "nodeGraph"};
  std::set<int> ids;
  // Visible panels must not overlap; a collapsed row's panels are checked among themselves.
  auto no_overlap = [](const std::vector<nlohmann::json>& grid, const std::string& where) {
    for (size_t i = 0; i < grid.size(); ++i) {
      for (size_t j = i + 1; j < grid.size(); ++j) {
        const auto& a = grid[i];
        const auto& b = grid[j];
        const bool apart = a["x"].get<int>() + a["w"].get<int>() <= b["x"].get<int>() ||
                           b["x"].get<int>() + b["w"].get<int>() <= a["x"].get<int>() ||
                           a["y"].get<int>() + a["h"].get<int>() <= b["y"].get<int>() ||
                           b["y"].get<int>() + b["h"].get<int>() <= a["y"].get<int>();
        EXPECT_TRUE(apart) << where << ": panels " << a.dump() << " and " << b.dump() << " overlap";
      }
    }
  };
  std::function<void(const nlohmann::json&, std::vector<nlohmann::json>*)> panel;
  panel = [&](const nlohmann::json& p, std::vector<nlohmann::json>* grid) {
    const std::string title = p.at("title");
    EXPECT_TRUE(kTypes.count(p.at("type").get<std::string>())) << title << ": " << p["type"];
    EXPECT_TRUE(ids.insert(p.at("id").get<int>()).second) << title << ": id reused";
    const auto& gp = p.at("gridPos");
    EXPECT_GE(gp.at("w").get<int>(), 1) << title;
    EXPECT_LE(gp.at("x").get<int>() + gp.at("w").get<int>(), 24) << title;
    EXPECT_GE(gp.at("h").get<int>(), 1) << title;
    grid->push_back(gp);
    if (p["type"] == "row") {
      std::vector<nlohmann::json> inner;
      for (const auto& c : p.at("panels")) panel(c, &inner);
      EXPECT_EQ(p.at("collapsed").get<bool>(), !p.at("panels").empty()) << title;
      no_overlap(inner, title);
      return;
    }
    EXPECT_EQ(p.at("datasource"), ds) << title;
    std::set<std::string> refs;
    for (const auto& t : p.at("targets")) {
      EXPECT_EQ(t.at("datasource"), ds) << title;
      EXPECT_TRUE(refs.insert(t.at("refId").get<std::string>()).second) << title;
      EXPECT_FALSE(t.at("expr").get<std::string>().empty()) << title;
      check_vars(t.at("expr"), title);
    }
    EXPECT_FALSE(refs.empty()) << title << " has no query";
    for (const auto& l : p["fieldConfig"]["defaults"].value("links", nlohmann::json::array())) {
      const std::string url = l.at("url");
      EXPECT_EQ(url.rfind("/d/" + uid + "/", 0), 0u) << title << ": " << url;
      check_vars(url, title);
    }
  };
  std::vector<nlohmann::json> top;
  for (const auto& p : d.at("panels")) panel(p, &top);
  no_overlap(top, "the dashboard");
  EXPECT_GE(ids.size(), 30u);
  for (const auto& v : d["templating"]["list"]) {
    if (v["type"] == "query") check_vars(v.at("definition"), v.at("name"));
  }
  int builtin = 0;
  for (const auto& a : d.at("annotations").at("list")) {
    if (a.value("builtIn", 0) == 1) {
      ++builtin;
      continue;
    }
    EXPECT_EQ(a.at("datasource"), ds) << a["name"];
    check_vars(a.at("expr"), a.at("name"));
  }
  EXPECT_EQ(builtin, 1);
  EXPECT_EQ(d["annotations"]["list"].size(), 3u);  // XIDs, failing checks
}

// Every series NVIDIA's DCGM dashboard queries has a recording rule (the real-Prometheus check is
// e2e.agent_prometheus_real), and the rules file is what promtool reads.
TEST(EmitTest, DcgmRulesCoverNvidiasDashboard) {
  GPUFLEET_REQUIRE_FIXTURES();
  std::ifstream in(std::string(GPUFLEET_SHARED_DIR) +
                   "/fixtures/dcgm/dcgm-exporter-dashboard.json");
  std::stringstream text;
  text << in.rdbuf();
  const std::string dash = text.str();
  const auto names = DcgmSeriesNames();
  const std::set<std::string> recorded(names.begin(), names.end());
  static const std::regex kName("DCGM_FI_[A-Z0-9_]+");
  int used = 0;
  for (auto it = std::sregex_iterator(dash.begin(), dash.end(), kName);
       it != std::sregex_iterator(); ++it) {
    ++used;
    EXPECT_TRUE(recorded.count(it->str())) << it->str() << " has no recording rule";
  }
  EXPECT_GE(used, 6);
  const std::string rules = Generate("dcgm-rules", Load("reference-32gpu.yaml"), {})[0].content;
  YAML::Node y = YAML::Load(rules);
  ASSERT_EQ(y["groups"][0]["rules"].size(), names.size());
  EXPECT_EQ(y["groups"][0]["rules"][0]["record"].as<std::string>(), "DCGM_FI_DEV_SM_CLOCK");
}

// A rack-scale NVLink domain names NCCL's multi-node NVLink switch in the environment; an HGX
// cluster does not.
TEST(EmitTest, RackScaleDomainNamesMultiNodeNvlink) {
  const std::string env = Generate("nccl-env", Load("gb200-nvl72-576gpu.yaml"), {})[0].content;
  EXPECT_THAT(env, ::testing::HasSubstr("export NCCL_MNNVL_ENABLE='2'"));
  EXPECT_THAT(Generate("nccl-env", Load("reference-32gpu.yaml"), {})[0].content,
              ::testing::Not(::testing::HasSubstr("NCCL_MNNVL_ENABLE")));
}

TEST(EmitTest, TopologyGivesHcaOrderAndBinding) {
  model::Spec spec = Load("reference-32gpu.yaml");
  topo::NodeTopology t;
  t.numa = {{0, "0-3", {0, 1, 2, 3}, 0}, {1, "4-7", {4, 5, 6, 7}, 0}};
  t.host_bridge_numa = {0, 1};
  for (int g = 0; g < 8; ++g) {
    topo::PciDevice gpu;
    gpu.busid = fmt::format("0000:{:02x}:00.0", 0x10 + g);
    gpu.kind = topo::DeviceKind::kGpu;
    gpu.host_bridge = g / 4;
    gpu.numa = g / 4;
    t.pci.push_back(gpu);
    t.gpus.push_back({static_cast<int>(t.pci.size()) - 1, g, "A100", "", 80, {}});
  }
  for (int n = 0; n < 2; ++n) {
    topo::PciDevice nic;
    nic.busid = fmt::format("0000:{:02x}:00.0", 0x80 + n);
    nic.kind = topo::DeviceKind::kNic;
    nic.host_bridge = n;
    nic.numa = n;
    t.pci.push_back(nic);
    t.nics.push_back({static_cast<int>(t.pci.size()) - 1, fmt::format("mlx5_{}", n), "", {}});
  }
  EmitOptions o;
  o.topology = &t;
  const std::string env = Generate("nccl-env", spec, o)[0].content;
  EXPECT_THAT(env, ::testing::HasSubstr("export NCCL_IB_HCA='=mlx5_0,mlx5_1'"));
  const std::string run = Generate("torchrun", spec, o)[0].content;
  EXPECT_THAT(run, ::testing::HasSubstr("7) exec numactl --cpunodebind=1 --membind=1"));
}

}  // namespace
}  // namespace gpufleet::emit
