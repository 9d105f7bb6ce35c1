#include "agent/server.h"

#include <crypt.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include "agent/http_server.h"
#include "agent/metrics.h"
#include "base/files.h"
#include "base/strings.h"

namespace gpufleet::agent {

namespace {

// The exporter-toolkit web-config keys gpufleet does not implement: named in the error, so a
// setting is never silently dropped (exporter-toolkit docs/web-configuration.md).
constexpr const char* kToolkitTlsKeys[] = {
    "client_auth_type", "client_ca_file", "client_allowed_sans", "min_version",
    "max_version",      "cipher_suites",  "curve_preferences",   "prefer_server_cipher_suites"};

std::string Where(const std::string& path, const YAML::Node& n) {
  return fmt::format("{}:{}", path, n.Mark().line + 1);
}

// A YAML scalar as a string; kInvalidArgument naming `what` for anything else (yaml-cpp
// would throw TypedBadConversion).
Result<std::string> Scalar(const std::string& path, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar()) {
    return InvalidArgument(fmt::format("{}: {}: want a string, got {}", Where(path, n), what,
                                       n.IsMap()        ? "a mapping"
                                       : n.IsSequence() ? "a list"
                                                        : "nothing"));
  }
  return n.Scalar();
}

Result<WebConfig> ParseWebConfig(const std::string& path, const YAML::Node& root) {
  WebConfig w;
  if (!root || root.IsNull()) return w;
  if (!root.IsMap()) return InvalidArgument(fmt::format("{}: want a YAML mapping", path));
  for (const auto& kv : root) {
    GPUFLEET_ASSIGN_OR_RETURN(const std::string key, Scalar(path, kv.first, "a key"));
    const YAML::Node& v = kv.second;
    if (key == "tls_server_config") {
      if (!v.IsMap()) {
        return InvalidArgument(
            fmt::format("{}: tls_server_config: want a mapping with cert_file and key_file",
                        Where(path, kv.first)));
      }
      for (const auto& t : v) {
        GPUFLEET_ASSIGN_OR_RETURN(const std::string k, Scalar(path, t.first, "a key"));
        const std::string what = "tls_server_config." + k;
        if (k == "cert_file" || k == "key_file") {
          GPUFLEET_ASSIGN_OR_RETURN(std::string file, Scalar(path, t.second, what));
          if (file.empty()) {
            return InvalidArgument(fmt::format("{}: {}: empty", Where(path, t.first), what));
          }
          (k == "cert_file" ? w.cert_file : w.key_file) = std::move(file);
        } else {
          const bool known = std::find(std::begin(kToolkitTlsKeys), std::end(kToolkitTlsKeys), k) !=
                             std::end(kToolkitTlsKeys);
          return InvalidArgument(
              fmt::format("{}: {}: {}; gpufleet reads cert_file and key_file", Where(path, t.first),
                          what, known ? "not supported" : "not an exporter-toolkit setting"));
        }
      }
      if (w.cert_file.empty() || w.key_file.empty()) {
        return InvalidArgument(fmt::format(
            "{}: tls_server_config needs both cert_file and key_file", Where(path, kv.first)));
      }
    } else if (key == "basic_auth_users") {
      // Never a silent downgrade to no authentication: anything but a mapping (or an empty
      // value, meaning no users) is an error.
      if (v.IsNull()) continue;
      if (!v.IsMap()) {
        return InvalidArgument(fmt::format(
            "{}: basic_auth_users: want a mapping of user names to bcrypt hashes, got {}",
            Where(path, kv.first), v.IsSequence() ? "a list" : "'" + v.Scalar() + "'"));
      }
      for (const auto& u : v) {
        GPUFLEET_ASSIGN_OR_RETURN(const std::string user, Scalar(path, u.first, "a user name"));
        const std::string what = "basic_auth_users." + user;
        GPUFLEET_ASSIGN_OR_RETURN(const std::string hash, Scalar(path, u.second, what));
        if (user.empty() || user.find(':') != std::string::npos ||
            user.find_first_of(std::string("\0\r\n", 3)) != std::string::npos) {
          return InvalidArgument(fmt::format(
              "{}: basic_auth_users: '{}' cannot be a basic-auth user name (empty, ':' or a "
              "control character)",
              Where(path, u.first), user));
        }
        if (hash.size() < 7 || hash.rfind("$2", 0) != 0 || hash[3] != '$' ||
            !std::isdigit(static_cast<unsigned char>(hash[4])) ||
            !std::isdigit(static_cast<unsigned char>(hash[5]))) {
          return InvalidArgument(
              fmt::format("{}: {}: want a bcrypt hash ($2y$...), e.g. from "
                          "`htpasswd -nBC 10 \"\" | tr -d ':\\n'`",
                          Where(path, u.first), what));
        }
        w.users[user] = hash;
      }
    } else {
      return InvalidArgument(fmt::format(
          "{}: {}: not supported; gpufleet reads tls_server_config and basic_auth_users",
          Where(path, kv.first), key));
    }
  }
  return w;
}

}  // namespace

Result<WebConfig> LoadWebConfig(const std::string& path) {
  GPUFLEET_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path, "a web-config YAML file"));
  // yaml-cpp's exceptions stop here (STYLE.md §4): a malformed or mis-typed file is exit 2.
  try {
    return ParseWebConfig(path, YAML::Load(text));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(
        fmt::format("{}:{}:{}: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

bool CheckPassword(std::string_view password, const std::string& hash) {
  // crypt(3) takes C strings: a password with a NUL would be checked only up to it
  // ("s3cret\0junk" passed as "s3cret"). Such a password matches nothing.
  if (password.find('\0') != std::string_view::npos) return false;
  crypt_data data;
  std::memset(&data, 0, sizeof(data));
  const std::string pw(password);
  const char* out = crypt_r(pw.c_str(), hash.c_str(), &data);
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
  int failures_per_minute = 10;
  // A hash with the cost of the configured ones, checked for unknown users so that they cost
  // the same bcrypt as known ones.
  std::string dummy_hash;

  std::mutex mu;  // guards the caches below (the loop and the worker both use them)
  // Verified credentials (the exact bytes), so bcrypt runs once per user and password.
  std::set<std::string> good;
  struct Failures {
    double window_start = 0;
    int count = 0;
  };
  std::map<std::string, Failures> failures;  // by client address

  // The HTTP server's worker calls Slow() on this object: stop it before the members it uses go.
  ~Impl() { http.reset(); }

  static HttpResponse Unauthorized(const char* why) {
    HttpResponse res;
    res.status = 401;
    res.headers.emplace_back("WWW-Authenticate", "Basic realm=\"gpufleet\"");
    res.SetBody(std::string(why) + "\n");
    return res;
  }

  // "user:password" from an Authorization header, or nullopt when it is not well-formed Basic
  // credentials (control bytes, NUL included, are refused: crypt(3) would stop at a NUL).
  static std::optional<std::string> Credentials(const HttpRequest& req) {
    const std::string h = req.Header("authorization");
    if (h.rfind("Basic ", 0) != 0) return std::nullopt;
    const std::string cred = DecodeBase64(h.substr(6));
    const size_t colon = cred.find(':');
    if (colon == std::string::npos || colon == 0) return std::nullopt;
    for (unsigned char c : cred) {
      if (c < 0x20 || c == 0x7f) return std::nullopt;
    }
    return cred;
  }

  bool Verified(const std::string& cred) {
    std::lock_guard<std::mutex> lock(mu);
    return good.count(cred) > 0;
  }

  bool Throttled(const std::string& client, double now) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = failures.find(client);
    if (it == failures.end()) return false;
    if (now - it->second.window_start > 60) {
      failures.erase(it);
      return false;
    }
    return it->second.count >= failures_per_minute;
  }

  void Failed(const std::string& client, double now) {
    std::lock_guard<std::mutex> lock(mu);
    if (failures.size() > 4096) failures.clear();  // bounded: an address flood forgets, not grows
    Failures& f = failures[client];
    if (now - f.window_start > 60) f = {now, 0};
    ++f.count;
  }

  // On the event loop: answers at once, or leaves the request to the worker (nullopt).
  std::optional<HttpResponse> Fast(const HttpRequest& req) {
    if (web.users.empty()) return Route(req);
    const std::optional<std::string> cred = Credentials(req);
    if (!cred) {
      // No credentials (a first request) is not a failure; malformed ones are.
      if (!req.Header("authorization").empty()) Failed(req.client, UnixNow());
      return Unauthorized("unauthorized");
    }
    if (Verified(*cred)) return Route(req);
    if (Throttled(req.client, UnixNow())) return TooMany();
    return std::nullopt;  // a bcrypt: the worker's
  }

  static HttpResponse TooMany() {
    HttpResponse res;
    res.status = 429;
    res.headers.emplace_back("Retry-After", "60");
    res.SetBody("too many failed logins from this address; try again in a minute\n");
    return res;
  }

  // On the worker: the bcrypt, for a known user against its hash, for an unknown one against
  // the dummy of the same cost. The limit is checked again here: a burst of wrong passwords
  // queues up to max_connections_per_client requests before the first has failed, and those
  // past the limit get 429 without the bcrypt they queued for.
  // Credentials verified while this request waited (the same scrape queued twice) are served
  // from the cache, as the event loop would.
  HttpResponse Slow(const HttpRequest& req) {
    const std::optional<std::string> cred = Credentials(req);
    if (!cred) return Unauthorized("unauthorized");
    if (Verified(*cred)) return Route(req);
    if (Throttled(req.client, UnixNow())) return TooMany();
    const size_t colon = cred->find(':');
    const auto it = web.users.find(cred->substr(0, colon));
    const bool known = it != web.users.end();
    const bool ok =
        CheckPassword(std::string_view(*cred).substr(colon + 1), known ? it->second : dummy_hash) &&
        known;
    if (!ok) {
      Failed(req.client, UnixNow());
      return Unauthorized("unauthorized");
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      if (good.size() >= 64) good.clear();
      good.insert(*cred);
    }
    return Route(req);
  }

  HttpResponse Route(const HttpRequest& req) {
    HttpResponse res;
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

// A bcrypt hash of a random password with the given configured hash's cost.
std::string DummyHash(const std::map<std::string, std::string>& users) {
  int cost = 0;  // the most expensive configured: no unknown user answers faster than a known one
  for (const auto& [user, hash] : users) cost = std::max(cost, std::atoi(hash.c_str() + 4));
  if (cost < 4 || cost > 31) cost = 10;
  static constexpr char kAlphabet[] =
      "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string salt = fmt::format("$2b${:02d}$", cost);
  for (int i = 0; i < 22; ++i) salt += kAlphabet[rd() % 64];
  crypt_data data;
  std::memset(&data, 0, sizeof(data));
  const std::string password = std::to_string(rd());
  const char* out = crypt_r(password.c_str(), salt.c_str(), &data);
  return out != nullptr && out[0] != '*' ? out : salt;
}

Result<std::unique_ptr<Server>> Server::Create(const ServerOptions& o, Agent* agent) {
  auto impl = std::make_unique<Impl>();
  GPUFLEET_ASSIGN_OR_RETURN(auto hp, ParseListen(o.listen));
  impl->agent = agent;
  impl->web = o.web;
  impl->failures_per_minute = o.auth_failures_per_minute;
  if (!o.web.users.empty()) impl->dummy_hash = DummyHash(o.web.users);
  HttpServerOptions h;
  h.host = hp.first;
  h.port = hp.second;
  h.max_connections = o.max_connections;
  h.max_connections_per_client = o.max_connections_per_client;
  h.idle_timeout_s = h.request_timeout_s = h.handshake_timeout_s = h.write_timeout_s = o.timeout_s;
  if (!o.web.cert_file.empty()) {
    GPUFLEET_RETURN_IF_ERROR(CheckPath(o.web.cert_file, false, "a PEM certificate"));
    GPUFLEET_RETURN_IF_ERROR(CheckPath(o.web.key_file, false, "a PEM private key"));
    h.cert_file = o.web.cert_file;
    h.key_file = o.web.key_file;
  }
  Impl* p = impl.get();
  HttpHandlers handlers;
  handlers.fast = [p](const HttpRequest& r) { return p->Fast(r); };
  handlers.slow = [p](const HttpRequest& r) { return p->Slow(r); };
  GPUFLEET_ASSIGN_OR_RETURN(impl->http, HttpServer::Create(h, std::move(handlers)));
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;
int Server::port() const { return impl_->http->port(); }
Status Server::Run() { return impl_->http->Run(); }
void Server::Stop() { impl_->http->Stop(); }

}  // namespace gpufleet::agent
