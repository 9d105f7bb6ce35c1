#include "agent/http_server.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <unordered_map>

#include "base/strings.h"

namespace gpufleet::agent {

namespace {

constexpr size_t kMaxHead = 8192;

// OpenSSL, loaded with dlopen when a certificate is configured: a plain-HTTP agent
// never maps libssl and libcrypto (1.7 MiB of resident memory, docs/performance.md).
// The headers give the types and constants; the functions come from here.
struct Tls {
  void* lib = nullptr;
  const SSL_METHOD* (*server_method)() = nullptr;
  SSL_CTX* (*ctx_new)(const SSL_METHOD*) = nullptr;
  void (*ctx_free)(SSL_CTX*) = nullptr;
  long (*ctx_ctrl)(SSL_CTX*, int, long, void*) = nullptr;  // NOLINT(google-runtime-int)
  int (*use_chain)(SSL_CTX*, const char*) = nullptr;
  int (*use_key)(SSL_CTX*, const char*, int) = nullptr;
  int (*check_key)(const SSL_CTX*) = nullptr;
  SSL* (*ssl_new)(SSL_CTX*) = nullptr;
  void (*ssl_free)(SSL*) = nullptr;
  int (*set_fd)(SSL*, int) = nullptr;
  long (*ssl_ctrl)(SSL*, int, long, void*) = nullptr;  // NOLINT(google-runtime-int)
  int (*accept)(SSL*) = nullptr;
  int (*read)(SSL*, void*, int) = nullptr;
  int (*write)(SSL*, const void*, int) = nullptr;
  int (*get_error)(const SSL*, int) = nullptr;
  void (*clear_error)() = nullptr;
  unsigned long (*get_err)() = nullptr;                        // NOLINT(google-runtime-int)
  void (*err_string)(unsigned long, char*, size_t) = nullptr;  // NOLINT(google-runtime-int)

  // Loads libssl.so.3 (and through it libcrypto); kUnavailable names what is missing.
  static Result<std::unique_ptr<Tls>> Load() {
    auto t = std::make_unique<Tls>();
    for (const char* name : {"libssl.so.3", "libssl.so"}) {
      t->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (t->lib) break;
    }
    if (!t->lib) return Unavailable(fmt::format("TLS: cannot load OpenSSL: {}", dlerror()));
    auto sym = [&](const char* name, auto* fn) {
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(t->lib, name));
      return *fn != nullptr;
    };
    const bool ok =
        sym("TLS_server_method", &t->server_method) && sym("SSL_CTX_new", &t->ctx_new) &&
        sym("SSL_CTX_free", &t->ctx_free) && sym("SSL_CTX_ctrl", &t->ctx_ctrl) &&
        sym("SSL_CTX_use_certificate_chain_file", &t->use_chain) &&
        sym("SSL_CTX_use_PrivateKey_file", &t->use_key) &&
        sym("SSL_CTX_check_private_key", &t->check_key) && sym("SSL_new", &t->ssl_new) &&
        sym("SSL_free", &t->ssl_free) && sym("SSL_set_fd", &t->set_fd) &&
        sym("SSL_ctrl", &t->ssl_ctrl) && sym("SSL_accept", &t->accept) &&
        sym("SSL_read", &t->read) && sym("SSL_write", &t->write) &&
        sym("SSL_get_error", &t->get_error) && sym("ERR_clear_error", &t->clear_error) &&
        sym("ERR_get_error", &t->get_err) && sym("ERR_error_string_n", &t->err_string);
    if (!ok) {
      dlclose(t->lib);
      return Unavailable("TLS: OpenSSL 1.1 or newer needed (an entry point is missing)");
    }
    return t;
  }
  ~Tls() {
    if (lib) dlclose(lib);
  }
  std::string LastError() const {
    char err[256] = {};
    err_string(get_err(), err, sizeof(err));
    return err;
  }
};

std::string Lower(std::string_view s) { return strings::ToLower(s); }

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string HttpRequest::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

Result<HttpRequest> ParseRequestHead(std::string_view head) {
  HttpRequest r;
  size_t eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos ||
      line.find(' ', sp2 + 1) != std::string_view::npos) {
    return InvalidArgument("malformed request line");
  }
  r.method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return InvalidArgument("HTTP version");
  if (target.empty() || target[0] != '/') return InvalidArgument("request target");
  const size_t q = target.find('?');
  r.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) r.query = std::string(target.substr(q + 1));
  r.headers["_version"] = std::string(version);
  while (eol != std::string_view::npos) {
    const size_t start = eol + 2;
    eol = head.find("\r\n", start);
    const std::string_view h =
        head.substr(start, eol == std::string_view::npos ? eol : eol - start);
    if (h.empty()) continue;
    const size_t colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0 || h[0] == ' ' || h[0] == '\t') {
      return InvalidArgument("malformed header line");  // includes obsolete line folding
    }
    const std::string name = Lower(h.substr(0, colon));
    if (name.find_first_of(" \t") != std::string::npos) return InvalidArgument("header name");
    r.headers[name] = std::string(strings::Trim(h.substr(colon + 1)));
  }
  return r;
}

struct HttpServer::Impl {
  struct Conn {
    int fd = -1;
    SSL* ssl = nullptr;
    bool handshake_done = false;
    std::string in;
    std::string out_head;
    std::shared_ptr<const std::string> out_body;
    size_t out_off = 0;  // into head, then body
    bool close_after = false;
    bool want_write = false;  // TLS needs the socket writable to go on
    double last_active = 0;
    uint32_t events = EPOLLIN | EPOLLRDHUP;  // what epoll watches for now
  };

  HttpServerOptions opt;
  HttpHandler handler;
  int listen_fd = -1, epoll_fd = -1, stop_fd = -1;
  int port = 0;
  std::unique_ptr<Tls> tls;  // declared before ctx and conns: destroyed after them
  SSL_CTX* ctx = nullptr;
  std::unordered_map<int, Conn> conns;

  ~Impl() {
    for (auto& [fd, c] : conns) Drop(c);
    if (listen_fd >= 0) close(listen_fd);
    if (epoll_fd >= 0) close(epoll_fd);
    if (stop_fd >= 0) close(stop_fd);
    if (ctx) tls->ctx_free(ctx);
  }

  void Drop(Conn& c) {
    if (c.ssl) tls->ssl_free(c.ssl);
    c.ssl = nullptr;
    if (c.fd >= 0) close(c.fd);
    c.fd = -1;
  }

  // Re-arms epoll only when the interest changes: a keep-alive scrape whose answer
  // goes out in one write costs no epoll_ctl.
  void Watch(Conn& c) {
    const uint32_t want =
        EPOLLIN | EPOLLRDHUP | (c.want_write || Pending(c) ? uint32_t{EPOLLOUT} : 0u);
    if (want == c.events) return;
    epoll_event ev{};
    ev.data.fd = c.fd;
    ev.events = want;
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
    c.events = want;
  }

  // Reads what is there; false when the peer closed or failed.
  bool ReadSome(Conn& c) {
    char buf[4096];
    for (;;) {
      ssize_t n;
      if (c.ssl) {
        tls->clear_error();
        n = tls->read(c.ssl, buf, sizeof(buf));
        if (n <= 0) {
          const int e = tls->get_error(c.ssl, static_cast<int>(n));
          if (e == SSL_ERROR_WANT_READ) return true;
          if (e == SSL_ERROR_WANT_WRITE) {
            c.want_write = true;
            return true;
          }
          return false;
        }
      } else {
        n = read(c.fd, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
      }
      c.in.append(buf, static_cast<size_t>(n));
      if (c.in.size() > kMaxHead * 2) return true;  // enough to decide 431
    }
  }

  // Writes what is pending; false on a write error.
  bool WriteSome(Conn& c) {
    c.want_write = false;
    const size_t head = c.out_head.size();
    const size_t total = head + (c.out_body ? c.out_body->size() : 0);
    while (c.out_off < total) {
      const char* p = c.out_off < head ? c.out_head.data() + c.out_off
                                       : c.out_body->data() + (c.out_off - head);
      const size_t len = c.out_off < head ? head - c.out_off : total - c.out_off;
      ssize_t n;
      if (c.ssl) {
        tls->clear_error();
        n = tls->write(c.ssl, p, static_cast<int>(std::min<size_t>(len, 1 << 30)));
        if (n <= 0) {
          const int e = tls->get_error(c.ssl, static_cast<int>(n));
          if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) return true;
          return false;
        }
      } else {
        n = send(c.fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
      }
      c.out_off += static_cast<size_t>(n);
    }
    c.out_head.clear();
    c.out_body.reset();
    c.out_off = 0;
    return true;
  }

  bool Pending(const Conn& c) const { return !c.out_head.empty(); }

  void Respond(Conn& c, const HttpResponse& r, bool head_only) {
    std::string h =
        fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n", r.status,
                    ReasonPhrase(r.status), r.content_type, r.body ? r.body->size() : 0);
    for (const auto& [k, v] : r.headers) h += k + ": " + v + "\r\n";
    if (c.close_after) h += "Connection: close\r\n";
    h += "\r\n";
    c.out_head = std::move(h);
    c.out_body = head_only ? nullptr : r.body;
    c.out_off = 0;
  }

  void Error(Conn& c, int status, const std::string& why) {
    c.close_after = true;
    HttpResponse r;
    r.status = status;
    r.SetBody(why + "\n");
    Respond(c, r, false);
  }

  // Handles every complete request head in the buffer, one response at a time.
  void Process(Conn& c) {
    while (!Pending(c) && !c.close_after) {
      const size_t end = c.in.find("\r\n\r\n");
      if (end == std::string::npos) {
        if (c.in.size() > kMaxHead) Error(c, 431, "request head larger than 8 KiB");
        return;
      }
      if (end > kMaxHead) {
        Error(c, 431, "request head larger than 8 KiB");
        return;
      }
      auto req = ParseRequestHead(std::string_view(c.in).substr(0, end));
      c.in.erase(0, end + 4);
      if (!req) {
        Error(c, 400, req.error().message);
        return;
      }
      if (!req->Header("transfer-encoding").empty() ||
          (!req->Header("content-length").empty() && req->Header("content-length") != "0")) {
        Error(c, 413, "this server takes no request bodies");
        return;
      }
      const std::string conn_hdr = Lower(req->Header("connection"));
      c.close_after = conn_hdr == "close" ||
                      (req->Header("_version") == "HTTP/1.0" && conn_hdr != "keep-alive");
      if (req->method != "GET" && req->method != "HEAD") {
        HttpResponse r;
        r.status = 405;
        r.headers.emplace_back("Allow", "GET, HEAD");
        r.SetBody("only GET and HEAD\n");
        Respond(c, r, false);
        return;
      }
      Respond(c, handler(*req), req->method == "HEAD");
    }
  }

  void Progress(Conn& c) {
    c.last_active = Now();
    if (c.ssl && !c.handshake_done) {
      tls->clear_error();
      const int r = tls->accept(c.ssl);
      if (r != 1) {
        const int e = tls->get_error(c.ssl, r);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
          c.want_write = e == SSL_ERROR_WANT_WRITE;
          Watch(c);
          return;
        }
        Close(c);  // not TLS, or a failed handshake
        return;
      }
      c.handshake_done = true;
    }
    if (Pending(c) && !WriteSome(c)) return Close(c);
    const bool open = ReadSome(c);
    Process(c);
    if (Pending(c) && !WriteSome(c)) return Close(c);
    while (!Pending(c) && !c.close_after && c.in.find("\r\n\r\n") != std::string::npos) {
      Process(c);  // pipelined requests
      if (Pending(c) && !WriteSome(c)) return Close(c);
    }
    if (!Pending(c) && (c.close_after || !open)) return Close(c);
    if (!open && Pending(c)) c.close_after = true;
    Watch(c);
  }

  void Close(Conn& c) {
    const int fd = c.fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    Drop(c);
    conns.erase(fd);
  }

  void Accept() {
    for (;;) {
      const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or the peer went away
      if (static_cast<int>(conns.size()) >= opt.max_connections) {
        static constexpr char kBusy[] =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        if (!ctx) (void)!send(fd, kBusy, sizeof(kBusy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(fd);
        continue;
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      Conn& c = conns[fd];
      c.fd = fd;
      c.last_active = Now();
      if (ctx) {
        c.ssl = tls->ssl_new(ctx);
        tls->set_fd(c.ssl, fd);
        tls->ssl_ctrl(c.ssl, SSL_CTRL_MODE,
                      SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, nullptr);
      }
      epoll_event ev{};
      ev.data.fd = fd;
      ev.events = EPOLLIN | EPOLLRDHUP;
      epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
    }
  }

  void Sweep() {
    const double now = Now();
    std::vector<int> idle;
    for (auto& [fd, c] : conns) {
      if (now - c.last_active > opt.timeout_s) idle.push_back(fd);
    }
    for (int fd : idle) Close(conns[fd]);
  }
};

Result<std::unique_ptr<HttpServer>> HttpServer::Create(const HttpServerOptions& o,
                                                       HttpHandler handler) {
  auto impl = std::make_unique<Impl>();
  impl->opt = o;
  impl->handler = std::move(handler);
  if (!o.cert_file.empty()) {
    GPUFLEET_ASSIGN_OR_RETURN(impl->tls, Tls::Load());
    const Tls& t = *impl->tls;
    impl->ctx = t.ctx_new(t.server_method());
    if (!impl->ctx) return Unavailable("TLS: cannot create an OpenSSL context");
    t.ctx_ctrl(impl->ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, nullptr);
    if (t.use_chain(impl->ctx, o.cert_file.c_str()) != 1 ||
        t.use_key(impl->ctx, o.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        t.check_key(impl->ctx) != 1) {
      return InvalidArgument(
          fmt::format("TLS: cannot use {} and {}: {}", o.cert_file, o.key_file, t.LastError()));
    }
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(o.port);
  if (int e = getaddrinfo(o.host.empty() ? nullptr : o.host.c_str(), port.c_str(), &hints, &res);
      e != 0) {
    return InvalidArgument(fmt::format("--listen {}:{}: {}", o.host, o.port, gai_strerror(e)));
  }
  std::string why = "no address";
  // No host (":9401", the deployed default, as node_exporter's ":9100"): every address, IPv6
  // and IPv4 on one dual-stack socket where the kernel has IPv6, else IPv4 alone.
  std::vector<addrinfo*> order;
  for (addrinfo* a = res; a; a = a->ai_next) order.push_back(a);
  if (o.host.empty()) {
    std::stable_sort(order.begin(), order.end(), [](const addrinfo* x, const addrinfo* y) {
      return x->ai_family == AF_INET6 && y->ai_family != AF_INET6;
    });
  }
  for (addrinfo* a : order) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    const int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (o.host.empty() && a->ai_family == AF_INET6) {
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    }
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0) {
      impl->listen_fd = fd;
      break;
    }
    why = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(res);
  if (impl->listen_fd < 0) {
    return Unavailable(fmt::format("--listen {}:{}: cannot listen: {}", o.host, o.port, why));
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  getsockname(impl->listen_fd, reinterpret_cast<sockaddr*>(&ss), &len);
  impl->port = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  impl->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  impl->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl->epoll_fd < 0 || impl->stop_fd < 0) return Unavailable("epoll/eventfd failed");
  for (int fd : {impl->listen_fd, impl->stop_fd}) {
    epoll_event ev{};
    ev.data.fd = fd;
    ev.events = EPOLLIN;
    epoll_ctl(impl->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;

int HttpServer::port() const { return impl_->port; }

void HttpServer::Stop() {
  const uint64_t one = 1;
  (void)!write(impl_->stop_fd, &one, sizeof(one));
}

Status HttpServer::Run() {
  Impl& s = *impl_;
  epoll_event events[64];
  double last_sweep = Now();
  for (;;) {
    const int n = epoll_wait(s.epoll_fd, events, 64, 1000);
    if (n < 0 && errno != EINTR)
      return Unavailable(fmt::format("epoll_wait: {}", std::strerror(errno)));
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == s.stop_fd) return OkStatus();
      if (fd == s.listen_fd) {
        s.Accept();
        continue;
      }
      auto it = s.conns.find(fd);
      if (it == s.conns.end()) continue;
      if ((events[i].events & (EPOLLERR | EPOLLHUP)) && !s.Pending(it->second)) {
        s.Close(it->second);
        continue;
      }
      s.Progress(it->second);
    }
    if (Now() - last_sweep >= 1) {
      s.Sweep();
      last_sweep = Now();
    }
  }
}

}  // namespace gpufleet::agent
