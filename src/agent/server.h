#pragma once
// The agent's HTTP endpoint (on agent/http_server.h): /metrics (text format
// 0.0.4 with its Content-Type, gzip when the client accepts it, from the
// pre-compressed snapshot), /healthz (200 while the data is fresh, 503
// otherwise), /checks (the last check run, JSON), / (links). Optional TLS and
// basic auth from a Prometheus exporter-toolkit web-config file.

#include <map>
#include <memory>
#include <string>

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
bool CheckPassword(const std::string& password, const std::string& hash);

struct ServerOptions {
  std::string listen = ":9401";  // every address, as node_exporter's :9100
  WebConfig web;
  int max_connections = 256;  // open at once; the next gets 503
  int timeout_s = 10;         // idle seconds before a connection is closed
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
