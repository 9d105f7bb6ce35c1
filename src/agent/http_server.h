#pragma once
// A small HTTP/1.1 server for the agent: GET and HEAD only, keep-alive,
// optional TLS (OpenSSL, loaded with dlopen only when a certificate is given,
// so a plain agent never maps libssl and libcrypto). One thread runs an epoll loop over
// non-blocking sockets: a scrape is a memcpy of a prepared snapshot, so one
// thread serves hundreds of connections, and a slow or idle client costs a
// file descriptor, never a thread. Limits: `max_connections` open at once (the
// next is answered 503 and closed), request heads up to 8 KiB (431 beyond),
// `timeout_s` of inactivity before a connection is closed. Why not a library:
// Debian's cpp-httplib initialises OpenSSL when it is loaded, 3 MiB of resident
// memory before the first request (docs/performance.md), and runs a thread per
// keep-alive connection.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace gpufleet::agent {

struct HttpRequest {
  std::string method;  // GET, HEAD
  std::string path;    // without the query
  std::string query;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string Header(const std::string& lower_name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones
  std::shared_ptr<const std::string> body;                   // shared: no copy of a snapshot
  void SetBody(std::string text) { body = std::make_shared<const std::string>(std::move(text)); }
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 9401;                  // 0: any free port
  std::string cert_file, key_file;  // both set: TLS
  int max_connections = 256;
  int timeout_s = 10;
};

class HttpServer {
 public:
  // Binds and listens (kUnavailable if the address is taken, kInvalidArgument for
  // unusable TLS files).
  static Result<std::unique_ptr<HttpServer>> Create(const HttpServerOptions& o,
                                                    HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  // Serves until Stop(); the handler runs on this thread.
  Status Run();
  // From any thread or a signal handler (it writes to an eventfd).
  void Stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Parses a request head (up to and without the blank line). kInvalidArgument
// says what is wrong; exposed for tests.
Result<HttpRequest> ParseRequestHead(std::string_view head);
std::string_view ReasonPhrase(int status);

}  // namespace gpufleet::agent
