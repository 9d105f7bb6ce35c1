// The HTTP endpoint: routes, Content-Type, basic auth from a web-config file,
// and web-config errors. TLS is exercised end to end with curl (tests/e2e).
#include "agent/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "../common/tree.h"
#include "model/spec.h"

namespace gpufleet::agent {
namespace {

using ::testing::HasSubstr;

// bcrypt of "s3cret" (cost 4, to keep the test fast), as htpasswd -B writes it.
constexpr const char* kHash = "$2b$04$9m61N.EeAx.kaFl84XDhJOPa0GeP3RvMlH8kcC41GytfGlGR0fbbm";

TEST(WebConfigTest, ReadsTlsAndUsersAndRejectsWhatItWouldIgnore) {
  testing::Tree t("web-config");
  auto w = LoadWebConfig(t.Write("ok.yml", std::string("basic_auth_users:\n  prom: ") + kHash +
                                               "\ntls_server_config:\n  cert_file: a.crt\n"
                                               "  key_file: a.key\n"));
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w->users.at("prom"), kHash);
  EXPECT_EQ(w->cert_file, "a.crt");
  auto bad = LoadWebConfig(t.Write("bad.yml", "http_server_config:\n  http2: true\n"));
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("bad.yml:1: http_server_config: not supported"));
  bad = LoadWebConfig(t.Write("plain.yml", "basic_auth_users:\n  prom: s3cret\n"));
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("want a bcrypt hash"));
  bad = LoadWebConfig(t.Write("half.yml", "tls_server_config:\n  cert_file: a.crt\n"));
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("needs both cert_file and key_file"));
}

TEST(WebConfigTest, BcryptPasswords) {
  EXPECT_TRUE(CheckPassword("s3cret", kHash));
  EXPECT_FALSE(CheckPassword("secret", kHash));
  EXPECT_FALSE(CheckPassword("s3cret", "$2b$04$short"));
}

class ServerTest : public ::testing::Test {
 protected:
  ServerTest() : spec_(*model::ReferenceSpec({})) {
    AgentOptions o;
    o.sources.nvml = false;
    o.sources.kmsg = "";
    o.collectors = {"node", "self"};
    agent_ = std::make_unique<Agent>(o, &spec_, &node_);
  }
  void Serve(ServerOptions so) {
    so.listen = "127.0.0.1:0";
    auto s = Server::Create(so, agent_.get());
    ASSERT_TRUE(s) << s.error().message;
    server_ = std::move(*s);
    thread_ = std::thread([this] { (void)server_->Run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  ~ServerTest() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  model::Spec spec_;
  topo::NodeTopology node_;
  std::unique_ptr<Agent> agent_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ServerTest, HealthzIsUnavailableUntilTheFirstCollection) {
  Serve({});
  auto r = client_->Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  agent_->CollectOnce();
  r = client_->Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(ServerTest, MetricsWithTheExpositionContentType) {
  Serve({});
  agent_->CollectOnce();
  auto r = client_->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(r->body, HasSubstr("# TYPE gpufleet_node_cpu_seconds_total counter\n"));
  r = client_->Get("/checks");
  ASSERT_TRUE(r);
  EXPECT_THAT(r->body, HasSubstr("\"schema\": \"gpufleet.check/v1\""));
  r = client_->Get("/nothing");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

TEST_F(ServerTest, BasicAuthFromTheWebConfig) {
  ServerOptions so;
  so.web.users["prom"] = kHash;
  Serve(so);
  agent_->CollectOnce();
  auto r = client_->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Basic realm=\"gpufleet\"");
  client_->set_basic_auth("prom", "wrong");
  r = client_->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  client_->set_basic_auth("prom", "s3cret");
  for (int i = 0; i < 2; ++i) {  // the second time from the cache
    r = client_->Get("/metrics");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
}

TEST(ServerCreateTest, BadListenAddressesAndTlsFiles) {
  auto spec = *model::ReferenceSpec({});
  topo::NodeTopology node;
  AgentOptions o;
  o.sources.nvml = false;
  o.sources.kmsg = "";
  Agent a(o, &spec, &node);
  ServerOptions so;
  so.listen = "localhost";
  auto s = Server::Create(so, &a);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("want HOST:PORT"));
  so.listen = "127.0.0.1:99999";
  EXPECT_FALSE(Server::Create(so, &a));
  so.listen = "127.0.0.1:0";
  so.web.cert_file = "/nonexistent.crt";
  so.web.key_file = "/nonexistent.key";
  s = Server::Create(so, &a);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("/nonexistent.crt"));
}

}  // namespace
}  // namespace gpufleet::agent
