// The HTTP endpoint: routes, Content-Type, basic auth from a web-config file,
// the HTTP server's limits against hostile clients, and web-config errors. TLS
// is exercised end to end with curl and Prometheus (tests/e2e/agent_prometheus.sh).
#include "agent/server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "../common/tree.h"
#include "agent/http_server.h"
#include "model/spec.h"

namespace gpufleet::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

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

// One connection: sends `request` (raw bytes) and reads until the server closes it.
std::string Exchange(int port, const std::string& request, int recv_timeout_s = 5) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{recv_timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return "connect failed";
  }
  if (!request.empty()) (void)!send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

std::string Get(int port, const std::string& path, const std::string& extra = "") {
  return Exchange(port,
                  "GET " + path + " HTTP/1.1\r\nHost: x\r\n" + extra + "Connection: close\r\n\r\n");
}

TEST(HttpParseTest, RequestHeads) {
  auto r = ParseRequestHead("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept-Encoding:  gzip \r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->path, "/metrics");
  EXPECT_EQ(r->query, "x=1");
  EXPECT_EQ(r->Header("accept-encoding"), "gzip");
  EXPECT_FALSE(ParseRequestHead("GET /metrics\r\n"));
  EXPECT_FALSE(ParseRequestHead("GET /metrics HTTP/2.0\r\n"));
  EXPECT_FALSE(ParseRequestHead("GET metrics HTTP/1.1\r\n"));
  EXPECT_FALSE(ParseRequestHead("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n"));
  EXPECT_FALSE(ParseRequestHead("GET / HTTP/1.1\r\nNo colon\r\n"));
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
    port_ = server_->port();
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
  int port_ = 0;
};

TEST_F(ServerTest, HealthzIsUnavailableUntilTheFirstCollection) {
  Serve({});
  EXPECT_THAT(Get(port_, "/healthz"), StartsWith("HTTP/1.1 503 "));
  EXPECT_THAT(Get(port_, "/metrics"), StartsWith("HTTP/1.1 503 "));
  agent_->CollectOnce();
  EXPECT_THAT(Get(port_, "/healthz"), StartsWith("HTTP/1.1 200 OK\r\n"));
}

TEST_F(ServerTest, MetricsPlainOrGzipWithTheExpositionContentType) {
  Serve({});
  agent_->CollectOnce();
  std::string r = Get(port_, "/metrics");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(r, HasSubstr("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_THAT(r, HasSubstr("# TYPE gpufleet_node_cpu_seconds_total counter\n"));
  EXPECT_THAT(r, Not(HasSubstr("Content-Encoding")));
  r = Get(port_, "/metrics", "Accept-Encoding: deflate, gzip;q=0.8\r\n");
  EXPECT_THAT(r, HasSubstr("\r\nContent-Encoding: gzip\r\n"));
  const size_t body = r.find("\r\n\r\n") + 4;
  ASSERT_LT(body + 2, r.size());
  EXPECT_EQ(static_cast<unsigned char>(r[body]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(r[body + 1]), 0x8b);
  EXPECT_THAT(Get(port_, "/metrics", "Accept-Encoding: gzip;q=0\r\n"), Not(HasSubstr("gzip")));
  EXPECT_THAT(Get(port_, "/checks"), HasSubstr("\"schema\": \"gpufleet.check/v1\""));
  EXPECT_THAT(Get(port_, "/nothing"), StartsWith("HTTP/1.1 404 "));
}

TEST_F(ServerTest, KeepAlivePipeliningHeadAndMethods) {
  Serve({});
  agent_->CollectOnce();
  const std::string r = Exchange(port_,
                                 "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                                 "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                                 "POST /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  // Three answers on one connection, in order; HEAD has a length but no body.
  const size_t a = r.find("HTTP/1.1 200 OK"), b = r.find("HTTP/1.1 200 OK", a + 1),
               c = r.find("HTTP/1.1 405 Method Not Allowed");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(c, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_THAT(r.substr(a, b - a), Not(HasSubstr("# TYPE")));
  EXPECT_THAT(r, HasSubstr("Allow: GET, HEAD"));
}

TEST_F(ServerTest, HostileRequestsGetAnErrorAndAClose) {
  Serve({});
  EXPECT_THAT(Exchange(port_, "garbage\r\n\r\n"), StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Exchange(port_, "GET / HTTP/1.1\r\nX: " + std::string(10000, 'a') + "\r\n\r\n"),
              StartsWith("HTTP/1.1 431 "));
  EXPECT_THAT(Exchange(port_, "GET / HTTP/1.1\r\n" + std::string(20000, 'b')),
              StartsWith("HTTP/1.1 431 "));
  EXPECT_THAT(Exchange(port_, "GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"),
              StartsWith("HTTP/1.1 413 "));
  EXPECT_THAT(Exchange(port_, "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
              StartsWith("HTTP/1.1 413 "));
  // The server still serves after all that.
  EXPECT_THAT(Get(port_, "/"), StartsWith("HTTP/1.1 200 OK"));
}

TEST_F(ServerTest, ConnectionLimitAndIdleTimeout) {
  ServerOptions so;
  so.max_connections = 2;
  so.timeout_s = 1;
  Serve(so);
  auto open_idle = [&] {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return fd;
  };
  const int c1 = open_idle(), c2 = open_idle();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both accepted
  EXPECT_THAT(Get(port_, "/"), StartsWith("HTTP/1.1 503 "));
  // Idle connections are closed after the timeout, and the limit frees up.
  char b;
  timeval tv{5, 0};
  setsockopt(c1, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  EXPECT_EQ(recv(c1, &b, 1, 0), 0);  // closed by the server, not by our 5 s timeout
  close(c1);
  close(c2);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_THAT(Get(port_, "/"), StartsWith("HTTP/1.1 200 OK"));
}

TEST_F(ServerTest, BasicAuthFromTheWebConfig) {
  ServerOptions so;
  so.web.users["prom"] = kHash;
  Serve(so);
  agent_->CollectOnce();
  std::string r = Get(port_, "/metrics");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 401 "));
  EXPECT_THAT(r, HasSubstr("WWW-Authenticate: Basic realm=\"gpufleet\""));
  // "prom:wrong" and "prom:s3cret" in base64.
  EXPECT_THAT(Get(port_, "/metrics", "Authorization: Basic cHJvbTp3cm9uZw==\r\n"),
              StartsWith("HTTP/1.1 401 "));
  for (int i = 0; i < 2; ++i) {  // the second time from the cache
    EXPECT_THAT(Get(port_, "/metrics", "Authorization: Basic cHJvbTpzM2NyZXQ=\r\n"),
                StartsWith("HTTP/1.1 200 OK"));
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
  // A certificate that is not PEM.
  testing::Tree t("tls");
  so.web.cert_file = t.Write("c.pem", "not a certificate");
  so.web.key_file = t.Write("k.pem", "not a key");
  s = Server::Create(so, &a);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("TLS: cannot use"));
  // A port in use.
  so.web = {};
  auto first = Server::Create(so, &a);
  ASSERT_TRUE(first);
  so.listen = "127.0.0.1:" + std::to_string((*first)->port());
  s = Server::Create(so, &a);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("cannot listen"));
}

}  // namespace
}  // namespace gpufleet::agent
