// The MPI control plane and watchdog (mpi_world.h), inside the MPI plugin.

#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "bench/mpi_plugin.h"

namespace gpufleet::bench {
namespace {

constexpr int kTagRollCall = 7001;
constexpr int kTagAnswer = 7002;

// What a rank says about itself in a roll call.
struct Answer {
  int64_t epoch = 0;
  int64_t iteration = -1;
  int64_t armed = 0;
  int64_t pid = 0;
  char label[112] = {};
};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Answer MakeAnswer(uint64_t epoch, int64_t iteration, bool armed, const std::string& label) {
  Answer a;
  a.epoch = static_cast<int64_t>(epoch);
  a.iteration = iteration;
  a.armed = armed ? 1 : 0;
  a.pid = getpid();
  std::snprintf(a.label, sizeof(a.label), "%s", label.c_str());
  return a;
}

std::vector<int64_t> g_pids;  // by rank, for messages

// A fatal signal after MPI_Init says so in one line that names this rank, then dies as it would
// have. Open MPI's own handler (installed inside MPI_Init) prints an unsymbolised frame; a crash
// report without this line came from inside MPI_Init (tests/cluster's scenario tells Open MPI's
// start-up race, open-mpi/ompi#12495, from a crash of ours this way).
char g_crash_line[256];
size_t g_crash_len = 0;

void OnFatalSignal(int sig) {
  char tail[16];
  size_t n = 0;
  char digits[8];
  size_t d = 0;
  for (int v = sig; v > 0 && d < sizeof(digits); v /= 10)
    digits[d++] = static_cast<char>('0' + v % 10);
  while (d > 0) tail[n++] = digits[--d];
  tail[n++] = '\n';
  (void)!write(2, g_crash_line, g_crash_len);
  (void)!write(2, tail, n);
  signal(sig, SIG_DFL);
  raise(sig);
}

void InstallCrashLine(int rank, const std::string& host) {
  const int len = std::snprintf(g_crash_line, sizeof(g_crash_line),
                                "gpufleet-bench: rank %d on %s: fatal signal ", rank, host.c_str());
  g_crash_len = len > 0 ? std::min(static_cast<size_t>(len), sizeof(g_crash_line) - 1) : 0;
  struct sigaction sa {};
  sa.sa_handler = OnFatalSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
}

class MpiWorldImpl final : public MpiWorld {
 public:
  ~MpiWorldImpl() override;

  void Barrier() override;
  uint64_t SumToRoot(uint64_t v) override;
  std::vector<double> GatherToRoot(double v) override;
  std::vector<double> MaxToRoot(const std::vector<double>& v) override;
  std::vector<double> AllGather(double v) override;
  void Broadcast(void* data, size_t bytes, int root) override;

  void StartWatchdog(double timeout_s) override;
  void Arm(const std::string& label, int64_t iteration) override;
  void Tick() override {
    ++iteration_;
    if (armed_since_ns_.load(std::memory_order_relaxed) != 0) armed_since_ns_ = NowNs();
  }
  void Disarm() override;

 private:
  friend Result<std::unique_ptr<MpiWorld>> gpufleet::bench::InitMpiWorld(int*, char***);
  void WatchdogLoop();
  std::string Label();  // the armed phase's label, under mu_
  [[noreturn]] void RollCallAndExit();

  MPI_Comm control_ = MPI_COMM_NULL;  // the watchdog's
  double timeout_s_ = 300;
  std::thread watchdog_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // guards label_ (the atomics are read without it)
  std::string label_;
  std::atomic<int64_t> iteration_{-1};
  std::atomic<int64_t> armed_since_ns_{0};  // 0: disarmed
  std::atomic<uint64_t> epoch_{0};          // bumps on every Arm: a progress counter
};

}  // namespace

Result<std::unique_ptr<MpiWorld>> InitMpiWorld(int* argc, char*** argv) {
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    return Unavailable("MPI_Init_thread failed; launch with mpirun or srun --mpi=pmix");
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    return Unavailable(
        "this MPI library gives no MPI_THREAD_MULTIPLE, which the watchdog needs to answer "
        "while a collective blocks");
  }
  // Errors come back as codes, never as an abort inside the library.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  auto w = std::make_unique<MpiWorldImpl>();
  MPI_Comm_rank(MPI_COMM_WORLD, &w->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &w->size_);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<size_t>(w->size_) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < w->size_; ++r) {
    w->hosts_.emplace_back(&all[static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
  }
  int64_t pid = getpid();
  g_pids.assign(static_cast<size_t>(w->size_), 0);
  MPI_Allgather(&pid, 1, MPI_INT64_T, g_pids.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
  MPI_Comm_dup(MPI_COMM_WORLD, &w->control_);
  InstallCrashLine(w->rank_, w->hosts_[static_cast<size_t>(w->rank_)]);
  return std::unique_ptr<MpiWorld>(std::move(w));
}

MpiWorldImpl::~MpiWorldImpl() {
  stop_ = true;
  if (watchdog_.joinable()) watchdog_.join();
  // Every rank leaves together, so no roll call is in flight.
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_free(&control_);
  MPI_Finalize();
}

void MpiWorldImpl::Barrier() { MPI_Barrier(MPI_COMM_WORLD); }

uint64_t MpiWorldImpl::SumToRoot(uint64_t v) {
  uint64_t sum = 0;
  MPI_Reduce(&v, &sum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  return sum;
}

std::vector<double> MpiWorldImpl::GatherToRoot(double v) {
  std::vector<double> out(rank_ == 0 ? static_cast<size_t>(size_) : 0);
  MPI_Gather(&v, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return out;
}

std::vector<double> MpiWorldImpl::MaxToRoot(const std::vector<double>& v) {
  std::vector<double> out(rank_ == 0 ? v.size() : 0);
  MPI_Reduce(v.data(), out.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, 0,
             MPI_COMM_WORLD);
  return out;
}

std::vector<double> MpiWorldImpl::AllGather(double v) {
  std::vector<double> out(static_cast<size_t>(size_));
  MPI_Allgather(&v, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
  return out;
}

void MpiWorldImpl::Broadcast(void* data, size_t bytes, int root) {
  MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD);
}

void MpiWorldImpl::StartWatchdog(double timeout_s) {
  timeout_s_ = timeout_s;
  watchdog_ = std::thread([this] { WatchdogLoop(); });
}

void MpiWorldImpl::Arm(const std::string& label, int64_t iteration) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    label_ = label;
  }
  iteration_ = iteration;
  ++epoch_;
  armed_since_ns_ = NowNs();
}

void MpiWorldImpl::Disarm() { armed_since_ns_ = 0; }

std::string MpiWorldImpl::Label() {
  std::lock_guard<std::mutex> lock(mu_);
  return label_;
}

namespace {

// Answers every pending roll call. `sent` keeps the answers alive until MPI is done with them.
void ServeRollCalls(MPI_Comm control, const Answer& me,
                    std::deque<std::pair<Answer, MPI_Request>>* sent) {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagRollCall, control, &flag, &st);
    if (!flag) break;
    int64_t from = 0;
    MPI_Recv(&from, 1, MPI_INT64_T, st.MPI_SOURCE, kTagRollCall, control, MPI_STATUS_IGNORE);
    sent->push_back({me, MPI_REQUEST_NULL});
    MPI_Isend(&sent->back().first, sizeof(Answer), MPI_BYTE, st.MPI_SOURCE, kTagAnswer, control,
              &sent->back().second);
  }
  while (!sent->empty()) {
    int done = 0;
    MPI_Test(&sent->front().second, &done, MPI_STATUS_IGNORE);
    if (!done) break;
    sent->pop_front();
  }
}

}  // namespace

void MpiWorldImpl::WatchdogLoop() {
  std::deque<std::pair<Answer, MPI_Request>> sent;
  const auto timeout_ns = static_cast<int64_t>(timeout_s_ * 1e9);
  while (!stop_) {
    const int64_t since = armed_since_ns_;
    const Answer me = MakeAnswer(epoch_, iteration_, since != 0, Label());
    ServeRollCalls(control_, me, &sent);
    if (since != 0 && NowNs() - since > timeout_ns && armed_since_ns_ == since) RollCallAndExit();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void MpiWorldImpl::RollCallAndExit() {
  const MPI_Comm control = control_;
  const std::string label = Label();
  const Answer me = MakeAnswer(epoch_, iteration_, true, label);

  // Ask everyone; answers to others' roll calls keep flowing meanwhile.
  const int64_t me_rank = rank_;
  std::vector<MPI_Request> asks;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    asks.push_back(MPI_REQUEST_NULL);
    MPI_Isend(&me_rank, 1, MPI_INT64_T, r, kTagRollCall, control, &asks.back());
  }
  const double grace_s = std::clamp(timeout_s_ * 0.2, 1.0, 20.0);
  std::map<int, Answer> answers;
  answers[rank_] = me;
  std::deque<std::pair<Answer, MPI_Request>> sent;
  const int64_t deadline = NowNs() + static_cast<int64_t>(grace_s * 1e9);
  while (static_cast<int>(answers.size()) < size_ && NowNs() < deadline) {
    ServeRollCalls(control, me, &sent);
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagAnswer, control, &flag, &st);
    if (flag) {
      Answer a;
      MPI_Recv(&a, sizeof(Answer), MPI_BYTE, st.MPI_SOURCE, kTagAnswer, control, MPI_STATUS_IGNORE);
      answers[st.MPI_SOURCE] = a;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  std::vector<std::string> missing, behind;
  for (int r = 0; r < size_; ++r) {
    auto it = answers.find(r);
    const std::string who =
        fmt::format("rank {} (host {}, pid {})", r, hosts_[static_cast<size_t>(r)],
                    g_pids[static_cast<size_t>(r)]);
    if (it == answers.end()) {
      missing.push_back(who);
    } else if (it->second.epoch < me.epoch ||
               (it->second.epoch == me.epoch && it->second.iteration + 1 < me.iteration)) {
      // Ranks of a blocking collective may be one operation apart; more is a straggler.
      behind.push_back(fmt::format("{} is behind, {} {}", who, it->second.armed ? "in" : "last in",
                                   it->second.label));
    }
  }
  // The lowest rank that answered speaks for everyone.
  if (answers.begin()->first == rank_) {
    std::string why;
    if (!missing.empty()) {
      why = fmt::format("{} did not answer within {:.0f} s: dead or stalled",
                        fmt::join(missing, ", "), grace_s);
    }
    if (!behind.empty())
      why += (why.empty() ? "" : "; ") + fmt::format("{}", fmt::join(behind, "; "));
    if (why.empty()) {
      why =
          "every rank answered and waits in this operation: the transport itself is hung "
          "(network, NCCL, a switch)";
    }
    std::fprintf(stderr, "gpufleet-bench: %s: no progress for %.0f s; %s\n", label.c_str(),
                 timeout_s_, why.c_str());
    std::fflush(stderr);
  }
  // Stay a moment to answer the others' roll calls, so none of them names us.
  const int64_t linger = NowNs() + static_cast<int64_t>(grace_s * 1e9);
  while (NowNs() < linger) {
    ServeRollCalls(control, me, &sent);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::fflush(stdout);
  _exit(3);
}

}  // namespace gpufleet::bench
