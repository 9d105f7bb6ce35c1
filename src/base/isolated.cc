#include "base/isolated.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "base/strings.h"

namespace gpufleet {
namespace {

// The child's answer: "ok\n" and the payload, or the error code's number, "\n" and the message.
void WriteAll(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

Error ChildError(std::string_view code_text, std::string message) {
  const auto code = strings::ParseInteger(code_text);
  for (ErrorCode known :
       {ErrorCode::kInvalidArgument, ErrorCode::kNotFound, ErrorCode::kUnavailable,
        ErrorCode::kDeadlineExceeded, ErrorCode::kInternal}) {
    if (code && *code == static_cast<int64_t>(known)) return Error{known, std::move(message)};
  }
  return Error{ErrorCode::kInternal, std::move(message)};
}

}  // namespace

Result<std::string> RunIsolated(const IsolatedOptions& options,
                                const std::function<Result<std::string>()>& work) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Unavailable(fmt::format("pipe: {}", std::strerror(errno)));
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Unavailable(fmt::format("fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    Result<std::string> r = work();
    WriteAll(fds[1],
             r ? "ok\n" + *r
               : fmt::format("{}\n{}", static_cast<int>(r.error().code), r.error().message));
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string text;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + options.deadline;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buf[65536];
    const ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > options.max_answer_bytes) {
      ::close(fds[0]);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      return InvalidArgument(fmt::format("{}: {} answered more than {} bytes reading it",
                                         options.what, options.library, options.max_answer_bytes));
    }
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return InvalidArgument(fmt::format("{}: {} did not finish reading it in {:g} s", options.what,
                                       options.library,
                                       static_cast<double>(options.deadline.count()) / 1000));
  }
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return InvalidArgument(fmt::format("{}: {} crashed reading it (SIG{}, signal {})", options.what,
                                       options.library, name != nullptr ? name : "?",
                                       WTERMSIG(status)));
  }
  const size_t nl = text.find('\n');
  if (nl == std::string::npos) {
    return Error{ErrorCode::kInternal,
                 fmt::format("{}: reading it in a child process gave no answer (exit {})",
                             options.what, WIFEXITED(status) ? WEXITSTATUS(status) : -1)};
  }
  if (text.compare(0, nl, "ok") != 0) return ChildError(text.substr(0, nl), text.substr(nl + 1));
  return text.substr(nl + 1);
}

}  // namespace gpufleet
