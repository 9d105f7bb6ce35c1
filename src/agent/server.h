#pragma once
// The agent's HTTP endpoint: /metrics (text format 0.0.4 with its
// Content-Type), /healthz (200 while the data is fresh, 503 otherwise),
// /checks (the last check run, JSON), / (links). Optional TLS and basic auth
// from a Prometheus exporter-toolkit web-config file. At most `max_requests`
// requests in flight (503 beyond, as node_exporter's --web.max-requests), a
// fixed worker pool, and read/write timeouts so a slow client cannot hold a
// worker.

#include <atomic>
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
  std::string listen = "127.0.0.1:9401";
  WebConfig web;
  int threads = 4;
  int max_requests = 40;
  int timeout_s = 10;
};

class Server {
 public:
  static Result<std::unique_ptr<Server>> Create(const ServerOptions& o, Agent* agent);
  ~Server();
  // Serves until Stop() (from a signal handler's thread or another thread).
  Status Run();
  void Stop();
  int port() const { return port_; }

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace gpufleet::agent
