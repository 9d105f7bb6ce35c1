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
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "base/strings.h"

namespace gpufleet::agent {

namespace {

constexpr size_t kMaxHead = 8192;
// The worker threads' nice value (Work()).
constexpr int kWorkerNice = 10;

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
    case 429:
      return "Too Many Requests";
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

namespace {

// RFC 9110 token characters (header names, methods).
bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (c <= 0x20 || c >= 0x7f) return false;
    if (std::strchr("\"(),/:;<=>?@[\\]{}", c) != nullptr) return false;
  }
  return true;
}

// Field values: visible bytes, spaces and tabs, obs-text (0x80-0xff); no other control byte.
bool IsFieldValue(std::string_view s) {
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return true;
}

}  // namespace

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
  const std::string_view method = line.substr(0, sp1);
  if (!IsToken(method)) return InvalidArgument("malformed method");
  r.method = std::string(method);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return InvalidArgument("HTTP version");
  if (target.empty() || target[0] != '/') return InvalidArgument("request target");
  for (unsigned char c : target) {
    if (c <= 0x20 || c >= 0x7f) return InvalidArgument("request target");
  }
  const size_t q = target.find('?');
  r.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) r.query = std::string(target.substr(q + 1));
  r.headers["_version"] = std::string(version);
  int hosts = 0, lengths = 0;
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
    if (!IsToken(h.substr(0, colon))) return InvalidArgument("header name");
    const std::string_view value = h.substr(colon + 1);
    if (!IsFieldValue(value)) return InvalidArgument("control byte in a header value");
    const std::string name = Lower(h.substr(0, colon));
    // A second Host or Content-Length is how requests are smuggled past a proxy (RFC 9112
    // §3.2, §6.3): refused, never merged.
    if (name == "host" && ++hosts > 1) return InvalidArgument("more than one Host header");
    if (name == "content-length" && ++lengths > 1) {
      return InvalidArgument("more than one Content-Length header");
    }
    std::string v(strings::Trim(value));
    if (name == "content-length" &&
        (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 18)) {
      return InvalidArgument("Content-Length is not a number");
    }
    auto [it, fresh] = r.headers.emplace(name, v);
    if (!fresh) it->second += ", " + v;  // a list header repeated: one comma-joined value
  }
  if (lengths > 0 && r.headers.count("transfer-encoding")) {
    return InvalidArgument("both Content-Length and Transfer-Encoding");
  }
  if (version == "HTTP/1.1" && hosts == 0) return InvalidArgument("no Host header");
  return r;
}

struct HttpServer::Impl {
  struct Conn {
    int fd = -1;
    uint64_t id = 0;  // unique for the server's life: a worker's answer finds its connection
    std::string client;
    SSL* ssl = nullptr;
    bool handshake_done = false;
    std::string in;
    std::string out_head;
    std::shared_ptr<const std::string> out_body;
    size_t out_off = 0;  // into head, then body
    bool close_after = false;
    bool want_write = false;   // TLS needs the socket writable to go on
    bool peer_closed = false;  // read() saw the peer's end of stream
    bool rdhup = false;        // epoll said the peer shut its side
    bool waiting = false;      // a worker has the request
    double opened_at = 0;
    double request_started = 0;  // first byte of the request head being read; 0 = none
    double idle_since = 0;       // the last response went out (or the connection opened)
    double write_progress = 0;   // the last time the client took bytes of a response
    double wait_started = 0;
    uint32_t events = 0;  // what epoll watches for now
  };
  struct Job {
    int fd;
    uint64_t id;
    HttpRequest request;
  };
  struct Done {
    int fd;
    uint64_t id;
    HttpResponse response;
    bool head_only;
  };

  HttpServerOptions opt;
  HttpHandlers handlers;
  int listen_fd = -1, epoll_fd = -1, stop_fd = -1, done_fd = -1;
  int port = 0;
  uint64_t next_id = 1;
  std::unique_ptr<Tls> tls;  // declared before ctx and conns: destroyed after them
  SSL_CTX* ctx = nullptr;
  std::unordered_map<int, Conn> conns;
  std::unordered_map<std::string, int> per_client;
  std::vector<int> ready;  // connections with buffered work left after their turn

  // The worker pool for HttpHandlers::slow.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Job> jobs;
  std::deque<Done> done;
  bool stopping = false;
  std::vector<std::thread> workers;

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stopping = true;
    }
    cv.notify_all();
    for (auto& t : workers) t.join();
    for (auto& [fd, c] : conns) Drop(c);
    if (listen_fd >= 0) close(listen_fd);
    if (epoll_fd >= 0) close(epoll_fd);
    if (stop_fd >= 0) close(stop_fd);
    if (done_fd >= 0) close(done_fd);
    if (ctx) tls->ctx_free(ctx);
  }

  void Work() {
    // Work that is slow on purpose (bcrypt) runs below the event loop's priority, so that a flood
    // of logins takes less of the loop's CPU from the scrapes it serves (nice 10 weighs 110
    // against the loop's 1024 on a contended core). Best effort: a thread may always lower its
    // own priority, and nothing depends on it.
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kWorkerNice);
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stopping || !jobs.empty(); });
        if (stopping) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      HttpResponse r = handlers.slow(job.request);
      {
        std::lock_guard<std::mutex> lock(mu);
        done.push_back({job.fd, job.id, std::move(r), job.request.method == "HEAD"});
      }
      const uint64_t one = 1;
      (void)!write(done_fd, &one, sizeof(one));
    }
  }

  void Drop(Conn& c) {
    if (c.ssl) tls->ssl_free(c.ssl);
    c.ssl = nullptr;
    if (c.fd >= 0) close(c.fd);
    c.fd = -1;
  }

  bool Pending(const Conn& c) const { return !c.out_head.empty(); }

  // Reads more only while nothing is owed to the client and no worker has its request, and only
  // up to one request head: a client that pipelines without reading holds one response.
  bool WantsRead(const Conn& c) const {
    return !Pending(c) && !c.waiting && !c.close_after && !c.peer_closed &&
           c.in.size() <= opt.max_request_head;
  }

  // Re-arms epoll only when the interest changes: a keep-alive scrape whose answer
  // goes out in one write costs no epoll_ctl.
  void Watch(Conn& c) {
    uint32_t want = (c.peer_closed || c.rdhup ? 0u : uint32_t{EPOLLRDHUP});
    if (WantsRead(c) || (c.ssl && !c.handshake_done)) want |= EPOLLIN;
    if (c.want_write || Pending(c)) want |= EPOLLOUT;
    if (want == c.events) return;
    epoll_event ev{};
    ev.data.fd = c.fd;
    ev.events = want;
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
    c.events = want;
  }

  enum class Read { kData, kNone, kClosed };
  // Reads what is there, up to one request head past the bytes already buffered.
  Read ReadSome(Conn& c, double now) {
    char buf[4096];
    Read got = Read::kNone;
    while (c.in.size() <= opt.max_request_head) {
      const size_t room = std::min(sizeof(buf), opt.max_request_head + 1 - c.in.size());
      ssize_t n;
      if (c.ssl) {
        tls->clear_error();
        n = tls->read(c.ssl, buf, static_cast<int>(room));
        if (n <= 0) {
          const int e = tls->get_error(c.ssl, static_cast<int>(n));
          if (e == SSL_ERROR_WANT_READ) return got;
          if (e == SSL_ERROR_WANT_WRITE) {
            c.want_write = true;
            return got;
          }
          return Read::kClosed;
        }
      } else {
        n = read(c.fd, buf, room);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return got;
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return Read::kClosed;
      }
      if (c.in.empty()) c.request_started = now;
      c.in.append(buf, static_cast<size_t>(n));
      got = Read::kData;
    }
    return got;
  }

  // Writes what is pending; false on a write error.
  bool WriteSome(Conn& c, double now) {
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
      c.write_progress = now;
    }
    c.out_head.clear();
    c.out_body.reset();
    c.out_off = 0;
    c.idle_since = now;
    return true;
  }

  void Respond(Conn& c, const HttpResponse& r, bool head_only, double now) {
    std::string h =
        fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n", r.status,
                    ReasonPhrase(r.status), r.content_type, r.body ? r.body->size() : 0);
    for (const auto& [k, v] : r.headers) h += k + ": " + v + "\r\n";
    if (c.close_after) h += "Connection: close\r\n";
    h += "\r\n";
    c.out_head = std::move(h);
    c.out_body = head_only ? nullptr : r.body;
    c.out_off = 0;
    c.write_progress = now;
  }

  void Error(Conn& c, int status, const std::string& why, double now) {
    c.close_after = true;
    c.in.clear();
    HttpResponse r;
    r.status = status;
    r.SetBody(why + "\n");
    Respond(c, r, false, now);
  }

  // Takes one complete request head from the buffer and answers it (or hands it to a worker).
  void Process(Conn& c, double now) {
    if (Pending(c) || c.waiting || c.close_after) return;
    const size_t end = c.in.find("\r\n\r\n");
    if (end == std::string::npos || end > opt.max_request_head) {
      if (c.in.size() > opt.max_request_head) {
        Error(c, 431, fmt::format("request head larger than {} bytes", opt.max_request_head), now);
      }
      return;
    }
    auto req = ParseRequestHead(std::string_view(c.in).substr(0, end));
    c.in.erase(0, end + 4);
    c.request_started = c.in.empty() ? 0 : now;  // a pipelined request has begun
    if (!req) return Error(c, 400, req.error().message, now);
    req->client = c.client;
    const std::string length = req->Header("content-length");
    if (!req->Header("transfer-encoding").empty() || (!length.empty() && length != "0")) {
      return Error(c, 413, "this server takes no request bodies", now);
    }
    const std::string conn_hdr = Lower(req->Header("connection"));
    c.close_after =
        conn_hdr == "close" || (req->Header("_version") == "HTTP/1.0" && conn_hdr != "keep-alive");
    if (req->method != "GET" && req->method != "HEAD") {
      HttpResponse r;
      r.status = 405;
      r.headers.emplace_back("Allow", "GET, HEAD");
      r.SetBody("only GET and HEAD\n");
      return Respond(c, r, false, now);
    }
    if (std::optional<HttpResponse> r = handlers.fast(*req)) {
      return Respond(c, *r, req->method == "HEAD", now);
    }
    std::unique_lock<std::mutex> lock(mu);
    if (!handlers.slow || jobs.size() >= opt.slow_queue) {
      lock.unlock();
      c.close_after = true;
      HttpResponse busy;
      busy.status = 503;
      busy.headers.emplace_back("Retry-After", "1");
      busy.SetBody("busy: too many requests waiting\n");
      return Respond(c, busy, false, now);
    }
    jobs.push_back({c.fd, c.id, std::move(*req)});
    lock.unlock();
    cv.notify_one();
    c.waiting = true;
    c.wait_started = now;
  }

  // Moves a connection on as far as it can without blocking. At most a few requests per turn,
  // so one pipelining client does not hold the loop; the rest is picked up from `ready`.
  void Progress(Conn& c, uint32_t events) {
    const double now = Now();
    // The peer shut its side: what it sent before is still read (and answered); the event is
    // not watched again, so a response the peer is slow to take does not spin the loop.
    if (events & EPOLLRDHUP) c.rdhup = true;
    if (c.ssl && !c.handshake_done) {
      tls->clear_error();
      const int r = tls->accept(c.ssl);
      if (r != 1) {
        const int e = tls->get_error(c.ssl, r);
        if ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) && !c.rdhup) {
          c.want_write = e == SSL_ERROR_WANT_WRITE;
          Watch(c);
          return;
        }
        return Close(c);  // not TLS, a failed handshake, or a peer gone mid-handshake
      }
      c.handshake_done = true;
      c.idle_since = now;
    }
    for (int turn = 0; turn < 8; ++turn) {
      if (Pending(c)) {
        if (!WriteSome(c, now)) return Close(c);
        if (Pending(c)) break;  // the client takes no more for now
      }
      if (c.waiting) break;
      if (c.close_after) return Close(c);
      Process(c, now);
      if (Pending(c) || c.waiting) continue;
      if (c.peer_closed) return Close(c);  // nothing complete left to answer
      const Read r = ReadSome(c, now);
      if (r == Read::kClosed) c.peer_closed = true;
      if (r == Read::kNone) break;
    }
    if (!Pending(c) && !c.waiting && !c.close_after && c.in.find("\r\n\r\n") != std::string::npos) {
      ready.push_back(c.fd);
    }
    Watch(c);
  }

  void Close(Conn& c) {
    const int fd = c.fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    auto it = per_client.find(c.client);
    if (it != per_client.end() && --it->second <= 0) per_client.erase(it);
    Drop(c);
    conns.erase(fd);
  }

  static std::string ClientAddress(const sockaddr_storage& ss) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (ss.ss_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, buf, sizeof(buf));
    } else if (ss.ss_family == AF_INET6) {
      const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&ss);
      if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
        inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], buf, sizeof(buf));
      } else {
        inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof(buf));
      }
    }
    return buf;
  }

  void Accept() {
    for (;;) {
      sockaddr_storage ss{};
      socklen_t len = sizeof(ss);
      const int fd =
          accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or the peer went away
      const std::string client = ClientAddress(ss);
      const auto pc = per_client.find(client);
      const bool client_full =
          pc != per_client.end() && pc->second >= opt.max_connections_per_client;
      if (!client_full && static_cast<int>(conns.size()) >= opt.max_connections) MakeRoom();
      if (client_full || static_cast<int>(conns.size()) >= opt.max_connections) {
        static constexpr char kBusy[] =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        if (!ctx) (void)!send(fd, kBusy, sizeof(kBusy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(fd);
        continue;
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      Add(fd, client);
    }
  }

  void Add(int fd, const std::string& client) {
    const double now = Now();
    Conn& c = conns[fd];
    c = Conn{};
    c.fd = fd;
    c.id = next_id++;
    c.client = client;
    c.opened_at = c.idle_since = now;
    ++per_client[client];
    if (ctx) {
      c.ssl = tls->ssl_new(ctx);
      tls->set_fd(c.ssl, fd);
      tls->ssl_ctrl(c.ssl, SSL_CTRL_MODE,
                    SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, nullptr);
    }
    epoll_event ev{};
    ev.data.fd = fd;
    ev.events = c.events = EPOLLIN | EPOLLRDHUP;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  }

  // At the connection limit, a newcomer takes the slot of the connection that has done least
  // for longest: an idle keep-alive one first, else the oldest unfinished handshake or request
  // head. Connections with a response owed or a worker busy are never taken. So clients that
  // hold slots open from many addresses (slowloris) cannot lock a scraper out, even before
  // their deadlines expire.
  void MakeRoom() {
    int victim = -1;
    double oldest = 0;
    bool victim_idle = false;
    for (const auto& [fd, c] : conns) {
      if (Pending(c) || c.waiting) continue;
      const bool idle = c.in.empty() && (!c.ssl || c.handshake_done);
      const double since = idle                    ? c.idle_since
                           : c.request_started > 0 ? c.request_started
                                                   : c.opened_at;
      if (victim < 0 || (idle && !victim_idle) || (idle == victim_idle && since < oldest)) {
        victim = fd;
        oldest = since;
        victim_idle = idle;
      }
    }
    if (victim >= 0) Close(conns[victim]);
  }

  // Answers that workers finished.
  void Collect() {
    uint64_t n;
    (void)!read(done_fd, &n, sizeof(n));
    std::deque<Done> finished;
    {
      std::lock_guard<std::mutex> lock(mu);
      finished.swap(done);
    }
    for (auto& d : finished) {
      auto it = conns.find(d.fd);
      if (it == conns.end() || it->second.id != d.id) continue;  // closed meanwhile
      Conn& c = it->second;
      c.waiting = false;
      Respond(c, d.response, d.head_only, Now());
      Progress(c, 0);
    }
  }

  // Deadlines: a handshake, a request head, a response the client does not take, a worker's
  // answer, and an idle keep-alive connection each have a whole-duration limit.
  void Sweep() {
    const double now = Now();
    std::vector<int> expired;
    for (auto& [fd, c] : conns) {
      const bool late =
          (c.ssl && !c.handshake_done && now - c.opened_at > opt.handshake_timeout_s) ||
          (c.request_started > 0 && !c.waiting &&
           now - c.request_started > opt.request_timeout_s) ||
          (Pending(c) && now - c.write_progress > opt.write_timeout_s) ||
          (c.waiting && now - c.wait_started > opt.request_timeout_s) ||
          (!Pending(c) && !c.waiting && c.in.empty() && now - c.idle_since > opt.idle_timeout_s);
      if (late) expired.push_back(fd);
    }
    for (int fd : expired) Close(conns[fd]);
  }
};

Result<std::unique_ptr<HttpServer>> HttpServer::Create(const HttpServerOptions& o,
                                                       HttpHandler handler) {
  HttpHandlers h;
  h.fast = [handler = std::move(handler)](const HttpRequest& r) {
    return std::optional<HttpResponse>(handler(r));
  };
  return Create(o, std::move(h));
}

Result<std::unique_ptr<HttpServer>> HttpServer::Create(const HttpServerOptions& o,
                                                       HttpHandlers handlers) {
  // A peer that closes while a response is written must cost an EPIPE, not the process:
  // OpenSSL writes with write(2), which cannot take MSG_NOSIGNAL.
  signal(SIGPIPE, SIG_IGN);
  auto impl = std::make_unique<Impl>();
  impl->opt = o;
  impl->handlers = std::move(handlers);
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
  impl->done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl->epoll_fd < 0 || impl->stop_fd < 0 || impl->done_fd < 0) {
    return Unavailable("epoll/eventfd failed");
  }
  for (int fd : {impl->listen_fd, impl->stop_fd, impl->done_fd}) {
    epoll_event ev{};
    ev.data.fd = fd;
    ev.events = EPOLLIN;
    epoll_ctl(impl->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  }
  if (impl->handlers.slow) {
    Impl* p = impl.get();
    for (int i = 0; i < std::max(1, o.slow_workers); ++i) {
      impl->workers.emplace_back([p] { p->Work(); });
    }
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

void HttpServer::Adopt(int fd, const std::string& client) {
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  impl_->Add(fd, client);
}

Status HttpServer::Run(double seconds) {
  Impl& s = *impl_;
  epoll_event events[64];
  double last_sweep = Now();
  const double end = seconds < 0 ? 0 : Now() + seconds;
  for (;;) {
    int wait_ms = s.ready.empty() ? 250 : 0;
    if (seconds >= 0) {
      wait_ms = std::max(0, std::min(wait_ms, static_cast<int>((end - Now()) * 1000)));
    }
    const int n = epoll_wait(s.epoll_fd, events, 64, wait_ms);
    if (n < 0 && errno != EINTR)
      return Unavailable(fmt::format("epoll_wait: {}", std::strerror(errno)));
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == s.stop_fd) return OkStatus();
      if (fd == s.listen_fd) {
        s.Accept();
        continue;
      }
      if (fd == s.done_fd) {
        s.Collect();
        continue;
      }
      auto it = s.conns.find(fd);
      if (it == s.conns.end()) continue;
      if ((events[i].events & EPOLLERR) ||
          ((events[i].events & EPOLLHUP) && !s.Pending(it->second))) {
        s.Close(it->second);
        continue;
      }
      s.Progress(it->second, events[i].events);
    }
    std::vector<int> again;
    again.swap(s.ready);
    for (int fd : again) {
      auto it = s.conns.find(fd);
      if (it != s.conns.end()) s.Progress(it->second, 0);
    }
    if (Now() - last_sweep >= 0.25) {
      s.Sweep();
      last_sweep = Now();
    }
    if (seconds >= 0 && Now() >= end) return OkStatus();  // at least one pass, even for 0 s
  }
}

}  // namespace gpufleet::agent
