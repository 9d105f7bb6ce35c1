#include "agent/imex.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include "base/strings.h"

namespace gpufleet::agent {

namespace {

using strings::ParseInteger;
using strings::Split;
using strings::Trim;

// "KEY=VALUE" lines, '#' comments; the value of `key` or "".
std::string ConfigValue(std::string_view text, std::string_view key) {
  std::string value;
  for (const std::string& raw : Split(text, '\n')) {
    std::string_view line = Trim(raw);
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || Trim(line.substr(0, eq)) != key) continue;
    value = std::string(Trim(line.substr(eq + 1)));
  }
  return value;
}

std::set<std::string> LocalAddresses() {
  std::set<std::string> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    if (a->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, buf, sizeof(buf));
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr, buf,
                sizeof(buf));
    } else {
      continue;
    }
    out.insert(buf);
  }
  freeifaddrs(list);
  return out;
}

// Connects to every address on `port` at once; what did not answer, with why.
std::vector<std::string> Unreachable(const std::vector<std::string>& nodes, int port,
                                     std::chrono::milliseconds timeout) {
  struct Probe {
    std::string node;
    int fd = -1;
    std::string why;  // "" while pending or once connected
    bool done = false;
  };
  std::vector<Probe> probes;
  for (const auto& n : nodes) {
    Probe p;
    p.node = n;
    sockaddr_storage ss{};
    socklen_t len = 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (inet_pton(AF_INET, n.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(static_cast<uint16_t>(port));
      len = sizeof(*v4);
    } else if (inet_pton(AF_INET6, n.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(static_cast<uint16_t>(port));
      len = sizeof(*v6);
    } else {
      p.why = "not an IP address";
      p.done = true;
      probes.push_back(std::move(p));
      continue;
    }
    p.fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (p.fd < 0) {
      p.why = std::strerror(errno);
      p.done = true;
    } else if (connect(p.fd, reinterpret_cast<sockaddr*>(&ss), len) == 0) {
      p.done = true;
    } else if (errno != EINPROGRESS) {
      p.why = std::strerror(errno);
      p.done = true;
    }
    probes.push_back(std::move(p));
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Probe*> pending;
    for (auto& p : probes) {
      if (p.done) continue;
      fds.push_back({p.fd, POLLOUT, 0});
      pending.push_back(&p);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (fds.empty() || left.count() <= 0) break;
    if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fds[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
      pending[i]->done = true;
      if (err != 0) pending[i]->why = std::strerror(err);
    }
  }
  std::vector<std::string> out;
  for (auto& p : probes) {
    if (p.fd >= 0) close(p.fd);
    if (!p.done) p.why = fmt::format("no answer within {} ms", timeout.count());
    if (!p.why.empty()) out.push_back(fmt::format("{}:{} ({})", p.node, port, p.why));
  }
  return out;
}

}  // namespace

checks::ImexState ReadImex(const SysRoot& root, const std::string& config,
                           std::chrono::milliseconds timeout) {
  checks::ImexState s;
  s.checked = true;
  s.config = config;
  auto text = root.Read(config);
  if (!text) {
    s.config_error = text.error().message;
    return s;
  }
  s.nodes_file = ConfigValue(*text, "IMEX_NODE_CONFIG_FILE");
  if (s.nodes_file.empty()) s.nodes_file = "/etc/nvidia-imex/nodes_config.cfg";
  if (std::string port = ConfigValue(*text, "SERVER_PORT"); !port.empty()) {
    auto p = ParseInteger(port);
    if (!p || *p < 1 || *p > 65535) {
      s.config_error = fmt::format("{}: SERVER_PORT={} is not a TCP port", config, port);
      return s;
    }
    s.port = static_cast<int>(*p);
  }
  auto nodes = root.Read(s.nodes_file);
  if (!nodes) {
    s.config_error =
        fmt::format("{} (IMEX_NODE_CONFIG_FILE): {}", s.nodes_file, nodes.error().message);
    return s;
  }
  for (const std::string& raw : Split(*nodes, '\n')) {
    const std::string_view line = Trim(raw);
    if (!line.empty() && line[0] != '#') s.nodes.emplace_back(line);
  }
  if (auto pids = root.List("/proc")) {
    for (const auto& pid : *pids) {
      if (!ParseInteger(pid)) continue;
      auto comm = root.Read("/proc/" + pid + "/comm");
      if (comm && Trim(*comm) == "nvidia-imex") s.daemon_running = true;
    }
  }
  // The peers: every listed node but this one (the local daemon's own answer says nothing
  // about the network).
  const std::set<std::string> mine = LocalAddresses();
  std::vector<std::string> peers;
  for (const auto& n : s.nodes) {
    if (mine.count(n)) {
      s.self_listed = true;
    } else {
      peers.push_back(n);
    }
  }
  s.peers = static_cast<int>(peers.size());
  s.unreachable = Unreachable(peers, s.port, timeout);
  return s;
}

}  // namespace gpufleet::agent
