#pragma once
// The agent's HTTP endpoint (on agent/http_server.h): /metrics (text format
// 0.0.4 with its Content-Type, gzip when the client accepts it, from the
// pre-compressed snapshot), /healthz (200 while the data is fresh, 503
// otherwise), /checks (the last check run, JSON), / (links). Optional TLS and
// basic auth from a Prometheus exporter-toolkit web-config file. Basic auth's
// bcrypt runs on a worker thread, never the event loop; an unknown user costs
// the same bcrypt as a known one (a dummy hash of the same cost), so the
// answer's timing says nothing about which users exist; repeated failures from
// one address are answered 429 without a bcrypt.

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "agent/agent.h"
#include "base/result.h"

namespace gpufleet::agent {

// The parts of exporter-toolkit's web-config we honour:
//   tls_server_config: {cert_file: F, key_file: F}
//   basic_auth_users: {NAME: BCRYPT_HASH}
// Any other key is an error, so a setting we would ignore is never silently dropped.
struct WebConfig {
  std::string cert_file, key_file;
  std::map<std::string, std::string> users;  // name -> bcrypt hash
};
Result<WebConfig> LoadWebConfig(const std::string& path);

// True if `password` matches the crypt(3) `hash` ($2y$/$2b$ bcrypt as htpasswd -B writes).
// The exact bytes: a password holding a NUL matches nothing.
bool CheckPassword(std::string_view password, const std::string& hash);

struct ServerOptions {
  std::string listen = ":9401";  // every address, as node_exporter's :9100
  WebConfig web;
  int max_connections = 256;            // open at once; the next gets 503
  int max_connections_per_client = 32;  // from one address; the next gets 503
  int timeout_s = 10;  // seconds: idle keep-alive, a whole request head, a TLS handshake
  // Basic auth: after this many wrong credentials from one address within a minute, that
  // address gets 429 without a bcrypt until the minute is over.
  int auth_failures_per_minute = 10;
};

class Server {
 public:
  static Result<std::unique_ptr<Server>> Create(const ServerOptions& o, Agent* agent);
  ~Server();
  // Serves until Stop() (from another thread or a signal handler).
  Status Run();
  void Stop();
  int port() const;

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "host:port", "[v6]:port", ":port" -> (host, port); port 0 = any free port.
Result<std::pair<std::string, int>> ParseListen(const std::string& s);

}  // namespace gpufleet::agent
