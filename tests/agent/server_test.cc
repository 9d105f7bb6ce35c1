// The HTTP endpoint: routes, Content-Type, basic auth from a web-config file,
// the HTTP server's limits against hostile clients, and web-config errors. TLS
// is exercised end to end with curl and Prometheus (tests/e2e/agent_prometheus.sh).
#include "agent/server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
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

// Issue 17: `basic_auth_users: 5` was accepted and then served /metrics with no authentication;
// mis-shaped values aborted the agent (yaml-cpp's TypedBadConversion).
TEST(WebConfigTest, EveryMisShapedValueIsAnErrorNamingIt) {
  testing::Tree t("web-config-shapes");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"basic_auth_users: 5\n", "basic_auth_users: want a mapping of user names to bcrypt hashes"},
      {"basic_auth_users: [prom]\n", "got a list"},
      {"basic_auth_users:\n  prom: [a, b]\n", "basic_auth_users.prom: want a string, got a list"},
      {"basic_auth_users:\n  'a:b': $2b$04$x\n", "cannot be a basic-auth user name"},
      {"basic_auth_users:\n  prom: $2b$xx\n", "want a bcrypt hash"},
      {"tls_server_config: yes\n", "tls_server_config: want a mapping"},
      {"tls_server_config:\n  cert_file: {a: 1}\n  key_file: k\n",
       "tls_server_config.cert_file: want a string, got a mapping"},
      {"tls_server_config:\n  cert_file: c\n  key_file: k\n  client_ca_file: ca\n",
       "tls_server_config.client_ca_file: not supported"},
      {"tls_server_config:\n  cert_file: c\n  key_file: k\n  cert_flie: x\n",
       "tls_server_config.cert_flie: not an exporter-toolkit setting"},
      {"[1, 2]\n", "want a YAML mapping"},
      {"{a: b\n", "web-config-shapes"},
  };
  for (const auto& [text, want] : cases) {
    auto w = LoadWebConfig(t.Write("w.yml", text));
    ASSERT_FALSE(w) << text;
    EXPECT_THAT(w.error().message, HasSubstr(want)) << text;
  }
  auto none = LoadWebConfig(t.Write("none.yml", "basic_auth_users:\n"));
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->users.empty());
}

TEST(WebConfigTest, BcryptPasswords) {
  EXPECT_TRUE(CheckPassword("s3cret", kHash));
  EXPECT_FALSE(CheckPassword("secret", kHash));
  EXPECT_FALSE(CheckPassword("s3cret", "$2b$04$short"));
  EXPECT_FALSE(CheckPassword(std::string_view("s3cret\0junk", 11), kHash));
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

// Issue 17: RFC 9112 framing. Two Content-Lengths were accepted and the body run as a second
// request; a missing or repeated Host and NUL bytes in values were accepted.
TEST(HttpParseTest, RefusesWhatSmugglesARequest) {
  const std::string ok = "GET / HTTP/1.1\r\nHost: a\r\n";
  EXPECT_TRUE(ParseRequestHead(ok));
  EXPECT_TRUE(ParseRequestHead("GET / HTTP/1.0\r\n"));  // 1.0 needs no Host
  for (const std::string& bad : std::vector<std::string>{
           ok + "Content-Length: 0\r\nContent-Length: 40\r\n",
           ok + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
           ok + "Content-Length: -1\r\n",
           ok + "Content-Length: 1e3\r\n",
           std::string("GET / HTTP/1.1\r\nAccept: */*\r\n"),
           ok + "Host: b\r\n",
           ok + "X-A: a" + std::string(1, '\0') + "b\r\n",
           ok + "X-A: a\nGET /metrics HTTP/1.1\r\n",
           ok + "X-A: a\rb\r\n",
           ok + "Bad Name: x\r\n",
           std::string("G\x01T / HTTP/1.1\r\nHost: a\r\n"),
           std::string("GET /a\x7f HTTP/1.1\r\nHost: a\r\n"),
       }) {
    EXPECT_FALSE(ParseRequestHead(bad)) << bad;
  }
  // A list header repeated is one comma-joined value.
  auto r = ParseRequestHead(ok + "Accept-Encoding: br\r\nAccept-Encoding: gzip\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->Header("accept-encoding"), "br, gzip");
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
  // Basic auth for "prom" (kHash, "s3cret"), `failures_per_minute` wrong logins allowed, and one
  // collection done, so /metrics answers.
  void ServeWithBasicAuth(int failures_per_minute) {
    ServerOptions so;
    so.web.users["prom"] = kHash;
    so.auth_failures_per_minute = failures_per_minute;
    Serve(so);
    agent_->CollectOnce();
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
  EXPECT_THAT(
      Exchange(port_, "GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(10000, 'a') + "\r\n\r\n"),
      StartsWith("HTTP/1.1 431 "));
  EXPECT_THAT(Exchange(port_, "GET / HTTP/1.1\r\n" + std::string(20000, 'b')),
              StartsWith("HTTP/1.1 431 "));
  EXPECT_THAT(Exchange(port_, "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"),
              StartsWith("HTTP/1.1 413 "));
  EXPECT_THAT(Exchange(port_,
                       "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                       "0\r\n\r\n"),
              StartsWith("HTTP/1.1 413 "));
  // Smuggling: one 400, and the second request in the body is never answered.
  const std::string smuggled =
      Exchange(port_,
               "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 38\r\n"
               "\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(smuggled, StartsWith("HTTP/1.1 400 "));
  EXPECT_EQ(smuggled.find("HTTP/1.1", 1), std::string::npos);
  EXPECT_THAT(Exchange(port_, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 400 "));
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
  // At the limit a newcomer takes the slot of the connection idle longest (c1): it is served.
  EXPECT_THAT(Get(port_, "/"), StartsWith("HTTP/1.1 200 OK"));
  char b;
  timeval tv{5, 0};
  setsockopt(c1, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  EXPECT_EQ(recv(c1, &b, 1, 0), 0);  // c1 was closed at once
  // Idle connections are closed after the timeout.
  setsockopt(c2, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(recv(c2, &b, 1, 0), 0);  // closed by the server, not by our 5 s timeout
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  close(c1);
  close(c2);
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

// Issue 17: a known user with a NUL after the password was accepted ("prom:s3cret\0junk"), a
// wrong password cost a bcrypt on the event loop every time, and an unknown user answered faster.
TEST_F(ServerTest, BasicAuthTakesExactBytesAndThrottlesFailures) {
  ServeWithBasicAuth(3);
  auto with = [&](const std::string& cred) {
    std::string b64;
    static constexpr char kB64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < cred.size(); i += 3) {
      uint32_t v = static_cast<uint8_t>(cred[i]) << 16;
      if (i + 1 < cred.size()) v |= static_cast<uint8_t>(cred[i + 1]) << 8;
      if (i + 2 < cred.size()) v |= static_cast<uint8_t>(cred[i + 2]);
      b64 += kB64[(v >> 18) & 63];
      b64 += kB64[(v >> 12) & 63];
      b64 += i + 1 < cred.size() ? kB64[(v >> 6) & 63] : '=';
      b64 += i + 2 < cred.size() ? kB64[v & 63] : '=';
    }
    return Get(port_, "/metrics", "Authorization: Basic " + b64 + "\r\n");
  };
  EXPECT_THAT(with(std::string("prom:s3cret\0junk", 16)), StartsWith("HTTP/1.1 401 "));
  EXPECT_THAT(with("prom:s3cret"), StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(with("nobody:s3cret"), StartsWith("HTTP/1.1 401 "));
  EXPECT_THAT(with("prom:wrong"), StartsWith("HTTP/1.1 401 "));
  // Three failures from this address: the next wrong one is refused without a bcrypt...
  EXPECT_THAT(with("prom:wrong2"), StartsWith("HTTP/1.1 429 "));
  // ...while verified credentials are still served from the cache.
  EXPECT_THAT(with("prom:s3cret"), StartsWith("HTTP/1.1 200 OK"));
}

// A burst of wrong passwords sent together queues one bcrypt per connection before the first
// has failed; the worker checks the limit again, so only `auth_failures_per_minute` of them
// cost a bcrypt and the rest are answered 429 (before, all twelve were bcrypted: 401).
TEST_F(ServerTest, AQueuedBurstOfWrongPasswordsCostsOnlyTheLimitInBcrypts) {
  ServeWithBasicAuth(3);
  // "prom:wrong" in base64.
  const std::string req =
      "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic cHJvbTp3cm9uZw==\r\n"
      "Connection: close\r\n\r\n";
  std::vector<int> fds;
  for (int i = 0; i < 12; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    fds.push_back(fd);
  }
  for (int fd : fds) ASSERT_EQ(send(fd, req.data(), req.size(), MSG_NOSIGNAL), ssize_t(req.size()));
  int unauthorized = 0, too_many = 0;
  for (int fd : fds) {
    char buf[64] = {};
    const ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
    const std::string head(buf, n > 0 ? static_cast<size_t>(n) : 0);
    unauthorized += head.rfind("HTTP/1.1 401 ", 0) == 0;
    too_many += head.rfind("HTTP/1.1 429 ", 0) == 0;
    close(fd);
  }
  EXPECT_EQ(unauthorized, 3);
  EXPECT_EQ(too_many, 9);
}

// Issue 17: 256 connections sending a byte every few seconds held every slot, and each byte
// reset the idle timer. Now a request head has a whole-duration deadline, and one address
// cannot take the slots another needs.
TEST_F(ServerTest, SlowClientsCannotHoldTheServer) {
  ServerOptions so;
  so.max_connections = 8;
  so.max_connections_per_client = 3;
  so.timeout_s = 1;
  Serve(so);
  auto from = [&](const char* source) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in s{};
    s.sin_family = AF_INET;
    inet_pton(AF_INET, source, &s.sin_addr);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&s), sizeof(s)), 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
  };
  std::vector<int> slow;
  for (int i = 0; i < 5; ++i) slow.push_back(from("127.0.0.2"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Two of the five got 503 and a close; three hold a slot each.
  int refused = 0;
  char b[256];
  for (int fd : slow) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) == 1 && recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0) ++refused;
  }
  EXPECT_EQ(refused, 2);
  // Another address is served at once.
  EXPECT_THAT(Get(port_, "/"), StartsWith("HTTP/1.1 200 OK"));
  // Dripping a byte every 300 ms does not keep a request alive past its 1 s deadline.
  const int drip = from("127.0.0.5");
  const auto start = std::chrono::steady_clock::now();
  bool closed = false;
  for (int i = 0; i < 20 && !closed; ++i) {
    (void)!send(drip, "G", 1, MSG_NOSIGNAL);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    pollfd p{drip, POLLIN, 0};
    closed = poll(&p, 1, 0) == 1 && recv(drip, b, sizeof(b), MSG_DONTWAIT) <= 0;
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  close(drip);
  for (int fd : slow) close(fd);
}

// Issue 17: a client pipelining requests without reading the answers grew the agent's memory
// without limit (4 KiB per wake). It now holds one response and stops reading.
TEST_F(ServerTest, APipelineThatIsNotReadIsNotBuffered) {
  Serve({});
  agent_->CollectOnce();
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port_));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::string req;
  for (int i = 0; i < 64; ++i) req += "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  size_t sent = 0;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1500)) {
    const ssize_t n = send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  // The kernel's socket buffers fill and then the writer is blocked: a few MB at most, not the
  // gigabyte it was when the server kept reading into memory.
  EXPECT_LT(sent, 64u << 20);
  // Others are still served.
  EXPECT_THAT(Get(port_, "/healthz"), StartsWith("HTTP/1.1 200 OK"));
  close(fd);
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
