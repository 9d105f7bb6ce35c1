#include "agent/server.h"

#include <crypt.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstring>
#include <set>

#include "agent/http_server.h"
#include "agent/metrics.h"
#include "base/files.h"
#include "base/strings.h"

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
  char* end = nullptr;
  const long port = std::strtol(s.c_str() + colon + 1, &end, 10);  // NOLINT(google-runtime-int)
  if (end == s.c_str() + colon + 1 || *end != 0 || port < 0 || port > 65535) {
    return InvalidArgument(fmt::format("--listen {}: the port must be 0-65535", s));
  }
  return std::make_pair(host, static_cast<int>(port));
}

namespace {

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

// Does an Accept-Encoding header take gzip? ("gzip", "gzip;q=0.5", not "gzip;q=0").
bool AcceptsGzip(std::string_view h) {
  for (const auto& part : strings::Split(h, ',')) {
    const std::string t(strings::Trim(part));
    if (t.rfind("gzip", 0) != 0) continue;
    const size_t q = t.find("q=");
    return q == std::string::npos || std::strtod(t.c_str() + q + 2, nullptr) > 0;
  }
  return false;
}

}  // namespace

struct Server::Impl {
  std::unique_ptr<HttpServer> http;
  Agent* agent = nullptr;
  WebConfig web;
  // Verified credentials, so bcrypt (slow on purpose) runs once per user and password;
  // wrong ones are remembered too, so guessing costs the server no more than once each.
  std::set<std::string> good, bad;

  bool Authorized(const HttpRequest& req) {
    if (web.users.empty()) return true;
    const std::string h = req.Header("authorization");
    if (h.rfind("Basic ", 0) != 0) return false;
    const std::string cred = DecodeBase64(h.substr(6));
    const size_t colon = cred.find(':');
    if (colon == std::string::npos) return false;
    if (good.count(cred)) return true;
    if (bad.count(cred)) return false;
    auto it = web.users.find(cred.substr(0, colon));
    const bool ok = it != web.users.end() && CheckPassword(cred.substr(colon + 1), it->second);
    std::set<std::string>& cache = ok ? good : bad;
    if (cache.size() >= 64) cache.clear();
    cache.insert(cred);
    return ok;
  }

  HttpResponse Handle(const HttpRequest& req) {
    HttpResponse res;
    if (!Authorized(req)) {
      res.status = 401;
      res.headers.emplace_back("WWW-Authenticate", "Basic realm=\"gpufleet\"");
      res.SetBody("unauthorized\n");
      return res;
    }
    if (req.path == "/metrics") {
      Agent::Snapshot s = agent->MetricsSnapshot();
      res.content_type = kTextContentType;
      res.headers.emplace_back("Vary", "Accept-Encoding");
      if (!s.text) {
        res.status = 503;
        res.SetBody("no collection yet\n");
      } else if (s.gzip && AcceptsGzip(req.Header("accept-encoding"))) {
        res.headers.emplace_back("Content-Encoding", "gzip");
        res.body = s.gzip;
      } else {
        res.body = s.text;
      }
    } else if (req.path == "/healthz") {
      std::string why;
      res.status = agent->Healthy(&why) ? 200 : 503;
      res.SetBody(why + "\n");
    } else if (req.path == "/checks") {
      res.content_type = "application/json";
      res.SetBody(agent->ChecksJson());
    } else if (req.path == "/") {
      res.content_type = "text/html; charset=utf-8";
      res.SetBody(
          "<html><head><title>gpufleet agent</title></head><body><h1>gpufleet agent</h1>"
          "<p><a href=\"/metrics\">/metrics</a> <a href=\"/checks\">/checks</a> "
          "<a href=\"/healthz\">/healthz</a></p></body></html>\n");
    } else {
      res.status = 404;
      res.SetBody("not found; try /metrics, /checks or /healthz\n");
    }
    return res;
  }
};

Result<std::unique_ptr<Server>> Server::Create(const ServerOptions& o, Agent* agent) {
  auto impl = std::make_unique<Impl>();
  GPUFLEET_ASSIGN_OR_RETURN(auto hp, ParseListen(o.listen));
  impl->agent = agent;
  impl->web = o.web;
  HttpServerOptions h;
  h.host = hp.first;
  h.port = hp.second;
  h.max_connections = o.max_connections;
  h.timeout_s = o.timeout_s;
  if (!o.web.cert_file.empty()) {
    GPUFLEET_RETURN_IF_ERROR(CheckPath(o.web.cert_file, false, "a PEM certificate"));
    GPUFLEET_RETURN_IF_ERROR(CheckPath(o.web.key_file, false, "a PEM private key"));
    h.cert_file = o.web.cert_file;
    h.key_file = o.web.key_file;
  }
  Impl* p = impl.get();
  GPUFLEET_ASSIGN_OR_RETURN(
      impl->http, HttpServer::Create(h, [p](const HttpRequest& r) { return p->Handle(r); }));
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;
int Server::port() const { return impl_->http->port(); }
Status Server::Run() { return impl_->http->Run(); }
void Server::Stop() { impl_->http->Stop(); }

}  // namespace gpufleet::agent
