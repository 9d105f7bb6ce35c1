// Fuzz target: the agent's HTTP server over a socket pair. The input is what a client sends
// (split at 0xff bytes into several writes); the server must answer or close, never crash, and
// let go of every connection (no descriptor or memory leak). The handler is the agent's shape:
// a fast path, and a slow path on the worker for requests with credentials.
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "agent/http_server.h"
#include "fuzz/fuzz_common.h"

namespace {

gpufleet::agent::HttpServer* Server() {
  using namespace gpufleet::agent;
  static std::unique_ptr<HttpServer> server = [] {
    HttpServerOptions o;
    o.port = 0;
    o.max_connections = 4;
    o.max_connections_per_client = 2;
    o.max_request_head = 1024;
    o.idle_timeout_s = o.request_timeout_s = o.write_timeout_s = 0.05;
    HttpHandlers h;
    h.fast = [](const HttpRequest& r) -> std::optional<HttpResponse> {
      if (!r.Header("authorization").empty()) return std::nullopt;
      HttpResponse res;
      res.SetBody(r.path == "/big" ? std::string(1 << 16, 'x') : "ok\n");
      return res;
    };
    h.slow = [](const HttpRequest&) {
      HttpResponse res;
      res.status = 401;
      res.SetBody("no\n");
      return res;
    };
    auto s = HttpServer::Create(o, std::move(h));
    return s ? std::move(*s) : nullptr;
  }();
  return server.get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpufleet;
  agent::HttpServer* server = Server();
  if (server == nullptr || size > (64 << 10)) return 0;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  server->Adopt(sv[0], "127.0.0.1");
  const std::string_view text = fuzz::Text(data, size);
  size_t at = 0;
  char buf[65536];
  bool closed = false;
  for (int round = 0; round < 64 && !closed; ++round) {
    if (at < text.size()) {
      const size_t cut = text.find('\xff', at);
      const size_t end = cut == std::string_view::npos ? text.size() : cut;
      (void)!send(sv[1], text.data() + at, end - at, MSG_NOSIGNAL);
      at = end + 1;
      if (at >= text.size()) shutdown(sv[1], SHUT_WR);
    }
    (void)server->Run(0);
    for (;;) {
      const ssize_t n = recv(sv[1], buf, sizeof(buf), 0);
      if (n == 0) closed = true;
      if (n <= 0) break;
    }
  }
  close(sv[1]);
  // Let the server see the close (a worker's answer may still be on its way) so the connection
  // is released.
  for (int i = 0; i < 8; ++i) (void)server->Run(i < 4 ? 0 : 0.001);
  return 0;
}
