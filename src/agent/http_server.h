#pragma once
// A small HTTP/1.1 server for the agent: GET and HEAD only, keep-alive,
// optional TLS (OpenSSL, loaded with dlopen only when a certificate is given,
// so a plain agent never maps libssl and libcrypto). One thread runs an epoll loop over
// non-blocking sockets: a scrape is a memcpy of a prepared snapshot, so one
// thread serves hundreds of connections, and a slow or idle client costs a
// file descriptor, never a thread. Work that is slow on purpose (bcrypt) runs on
// a bounded worker pool, never on the loop.
//
// It faces the network as root on every node, so every resource a client can
// make it hold is bounded: `max_connections` open at once (at the limit a
// newcomer takes the slot of the connection idle or stalled longest) and
// `max_connections_per_client` from one address (the next is answered 503 and
// closed, so one client cannot take the slots a scraper needs); one request head
// of at most `max_request_head` bytes buffered at a time (431 beyond), and no
// reading while a response is pending (a client that pipelines without reading
// holds one response, not a growing buffer); deadlines for a whole TLS handshake,
// a whole request head from its first byte, a response the client stops taking,
// and an idle keep-alive connection (a byte now and then does not reset them:
// slowloris); SIGPIPE ignored (a peer that closes mid-write gets EPIPE, never
// the process's death). Framing per RFC 9112: a duplicate Content-Length,
// Content-Length with Transfer-Encoding, a missing or duplicate Host, control
// bytes (NUL included) in a header are 400.
//
// Why not a library: Debian's cpp-httplib initialises OpenSSL when it is
// loaded, 3 MiB of resident memory before the first request (docs/performance.md),
// and runs a thread per keep-alive connection.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace gpufleet::agent {

struct HttpRequest {
  std::string client;  // the peer's address, "127.0.0.1" or "::1" (IPv4-mapped ones as IPv4)
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

// `fast` runs on the event loop and must not block; when it cannot answer at once it returns
// nullopt and the request goes to `slow` on a worker thread (bcrypt), after which the response
// is sent from the loop. `slow` may be empty when `fast` always answers.
struct HttpHandlers {
  std::function<std::optional<HttpResponse>(const HttpRequest&)> fast;
  HttpHandler slow;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 9401;                  // 0: any free port
  std::string cert_file, key_file;  // both set: TLS
  int max_connections = 256;
  int max_connections_per_client = 32;  // from one client address
  double idle_timeout_s = 10;           // keep-alive: between requests
  double request_timeout_s = 10;        // a whole request head, from its first byte
  double handshake_timeout_s = 10;      // a whole TLS handshake, from the accept
  double write_timeout_s = 10;          // a response the client stops taking
  size_t max_request_head = 8192;       // bytes; 431 beyond
  // Threads for HttpHandlers::slow. One: the agent's login limit counts on its bcrypts running
  // one at a time (with more, a burst costs up to the limit + workers - 1 of them).
  int slow_workers = 1;
  size_t slow_queue = 64;  // requests waiting for a worker; 503 beyond
};

class HttpServer {
 public:
  // Binds and listens (kUnavailable if the address is taken, kInvalidArgument for
  // unusable TLS files).
  static Result<std::unique_ptr<HttpServer>> Create(const HttpServerOptions& o,
                                                    HttpHandlers handlers);
  static Result<std::unique_ptr<HttpServer>> Create(const HttpServerOptions& o,
                                                    HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  // Serves until Stop(), or for `seconds` when it is not negative; the handler runs on this
  // thread.
  Status Run(double seconds = -1);
  // Serves `fd`, an already connected socket, as if accepted from `client` (the fuzzer drives
  // the server over a socket pair this way). The server owns and closes it.
  void Adopt(int fd, const std::string& client);
  // From any thread or a signal handler (it writes to an eventfd).
  void Stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Parses a request head (up to and without the blank line), RFC 9112 strictly:
// kInvalidArgument says what is wrong; exposed for tests and the fuzzer.
Result<HttpRequest> ParseRequestHead(std::string_view head);
std::string_view ReasonPhrase(int status);

}  // namespace gpufleet::agent
