#include "agent/server.h"

#include <crypt.h>
#include <fmt/format.h>
#include <httplib.h>
#include <yaml-cpp/yaml.h>

#include <cstring>
#include <mutex>
#include <set>

#include "agent/metrics.h"
#include "base/files.h"

namespace gpufleet::agent {

Result<WebConfig> LoadWebConfig(const std::string& path) {
  GPUFLEET_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path, "a web-config YAML file"));
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(
        fmt::format("{}:{}:{}: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  WebConfig w;
  if (!root || root.IsNull()) return w;
  if (!root.IsMap()) return InvalidArgument(fmt::format("{}: want a YAML mapping", path));
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    const int line = kv.first.Mark().line + 1;
    if (key == "tls_server_config") {
      for (const auto& t : v) {
        const std::string k = t.first.as<std::string>();
        if (k == "cert_file") {
          w.cert_file = t.second.as<std::string>();
        } else if (k == "key_file") {
          w.key_file = t.second.as<std::string>();
        } else {
          return InvalidArgument(
              fmt::format("{}:{}: tls_server_config.{}: not supported; only cert_file and key_file",
                          path, t.first.Mark().line + 1, k));
        }
      }
      if (w.cert_file.empty() || w.key_file.empty()) {
        return InvalidArgument(
            fmt::format("{}:{}: tls_server_config needs both cert_file and key_file", path, line));
      }
    } else if (key == "basic_auth_users") {
      for (const auto& u : v) {
        const std::string hash = u.second.as<std::string>();
        if (hash.rfind("$2", 0) != 0) {
          return InvalidArgument(
              fmt::format("{}:{}: basic_auth_users.{}: want a bcrypt hash ($2y$...), e.g. from "
                          "`htpasswd -nBC 10 \"\" | tr -d ':\\n'`",
                          path, u.first.Mark().line + 1, u.first.as<std::string>()));
        }
        w.users[u.first.as<std::string>()] = hash;
      }
    } else {
      return InvalidArgument(fmt::format(
          "{}:{}: {}: not supported; gpufleet reads tls_server_config and basic_auth_users", path,
          line, key));
    }
  }
  return w;
}

bool CheckPassword(const std::string& password, const std::string& hash) {
  crypt_data data;
  std::memset(&data, 0, sizeof(data));
  const char* out = crypt_r(password.c_str(), hash.c_str(), &data);
  if (out == nullptr || out[0] == '*') return false;
  // Constant-time comparison of equal-length strings.
  const size_t n = std::strlen(out);
  if (n != hash.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(out[i] ^ hash[i]);
  return diff == 0;
}

namespace {

// "host:port", "[v6]:port", ":port" -> (host, port). Port 0 = any free port.
Result<std::pair<std::string, int>> ParseListen(const std::string& s) {
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument(fmt::format("--listen {}: want HOST:PORT, e.g. 127.0.0.1:9401", s));
  }
  std::string host = s.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  char* end = nullptr;
  const long port = std::strtol(s.c_str() + colon + 1, &end, 10);  // NOLINT(google-runtime-int)
  if (end == s.c_str() + colon + 1 || *end != 0 || port < 0 || port > 65535) {
    return InvalidArgument(fmt::format("--listen {}: the port must be 0-65535", s));
  }
  return std::make_pair(host, static_cast<int>(port));
}

// Base64 decoding for the Authorization header.
std::string DecodeBase64(std::string_view in) {
  static constexpr std::string_view kChars =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buf = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const size_t v = kChars.find(c);
    if (v == std::string_view::npos) return "";
    buf = (buf << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xff);
    }
  }
  return out;
}

}  // namespace

struct Server::Impl {
  std::unique_ptr<httplib::Server> http;
  std::string host;
  int port = 0;
  Agent* agent = nullptr;
  std::atomic<bool> stopping{false};
  WebConfig web;
  std::mutex auth_mu;
  std::set<std::string> good_credentials;  // verified "user:password": bcrypt is slow on purpose

  bool Authorized(const httplib::Request& req) {
    if (web.users.empty()) return true;
    const std::string h = req.get_header_value("Authorization");
    if (h.rfind("Basic ", 0) != 0) return false;
    const std::string cred = DecodeBase64(h.substr(6));
    const size_t colon = cred.find(':');
    if (colon == std::string::npos) return false;
    {
      std::lock_guard<std::mutex> lock(auth_mu);
      if (good_credentials.count(cred)) return true;
    }
    auto it = web.users.find(cred.substr(0, colon));
    if (it == web.users.end() || !CheckPassword(cred.substr(colon + 1), it->second)) return false;
    std::lock_guard<std::mutex> lock(auth_mu);
    if (good_credentials.size() < 64) good_credentials.insert(cred);
    return true;
  }
};

Result<std::unique_ptr<Server>> Server::Create(const ServerOptions& o, Agent* agent) {
  auto impl = std::make_unique<Impl>();
  GPUFLEET_ASSIGN_OR_RETURN(auto hp, ParseListen(o.listen));
  impl->host = hp.first;
  impl->agent = agent;
  impl->web = o.web;
  if (!o.web.cert_file.empty()) {
    GPUFLEET_RETURN_IF_ERROR(CheckPath(o.web.cert_file, false, "a PEM certificate"));
    GPUFLEET_RETURN_IF_ERROR(CheckPath(o.web.key_file, false, "a PEM private key"));
    auto ssl =
        std::make_unique<httplib::SSLServer>(o.web.cert_file.c_str(), o.web.key_file.c_str());
    if (!ssl->is_valid()) {
      return InvalidArgument(
          fmt::format("TLS: cannot load {} and {} (not PEM, or they do not match)", o.web.cert_file,
                      o.web.key_file));
    }
    impl->http = std::move(ssl);
  } else {
    impl->http = std::make_unique<httplib::Server>();
  }
  httplib::Server& s = *impl->http;
  const int threads = std::max(1, o.threads);
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  s.set_read_timeout(o.timeout_s, 0);
  s.set_write_timeout(o.timeout_s, 0);
  s.set_keep_alive_timeout(5);
  s.set_keep_alive_max_count(100);
  s.set_payload_max_length(64 * 1024);
  Impl* p = impl.get();
  s.set_pre_routing_handler([p](const httplib::Request& req, httplib::Response& res) {
    if (p->Authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
    res.status = 401;
    res.set_header("WWW-Authenticate", "Basic realm=\"gpufleet\"");
    res.set_content("unauthorized\n", "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });
  s.Get("/metrics", [p](const httplib::Request&, httplib::Response& res) {
    res.set_content(p->agent->Metrics(), kTextContentType);
  });
  s.Get("/healthz", [p](const httplib::Request&, httplib::Response& res) {
    std::string why;
    res.status = p->agent->Healthy(&why) ? 200 : 503;
    res.set_content(why + "\n", "text/plain");
  });
  s.Get("/checks", [p](const httplib::Request&, httplib::Response& res) {
    res.set_content(p->agent->ChecksJson(), "application/json");
  });
  s.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        "<html><head><title>gpufleet agent</title></head><body><h1>gpufleet agent</h1>"
        "<p><a href=\"/metrics\">/metrics</a> <a href=\"/checks\">/checks</a> "
        "<a href=\"/healthz\">/healthz</a></p></body></html>\n",
        "text/html");
  });
  int port = hp.second;
  if (port == 0) {
    port = s.bind_to_any_port(impl->host);
    if (port <= 0) return Unavailable(fmt::format("--listen {}: cannot bind", o.listen));
  } else if (!s.bind_to_port(impl->host, port)) {
    return Unavailable(fmt::format("--listen {}: cannot bind: {}", o.listen, std::strerror(errno)));
  }
  impl->port = port;
  auto server = std::unique_ptr<Server>(new Server(std::move(impl)));
  server->port_ = port;
  return server;
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;

Status Server::Run() {
  if (!impl_->http->listen_after_bind() && !impl_->stopping) {
    return Unavailable(
        fmt::format("HTTP server on {}:{} stopped with an error", impl_->host, impl_->port));
  }
  return OkStatus();
}

void Server::Stop() {
  impl_->stopping = true;
  impl_->http->stop();
}

}  // namespace gpufleet::agent
