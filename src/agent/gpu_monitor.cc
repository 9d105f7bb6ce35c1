#include "agent/gpu_monitor.h"

namespace gpufleet::agent {

struct GpuMonitor::Worker {
  int index = 0;
  uint64_t requested = 0;  // generation asked for
  uint64_t done = 0;       // generation finished
  bool busy = false;
  std::atomic<const char*> current_call{nullptr};
  uint64_t last_util_ts = 0;
  GpuReading result;
  sys::GpuSample last_good;  // identity for the series of a GPU that hangs
};

struct GpuMonitor::State {
  std::mutex mu;
  std::condition_variable cv;  // workers wait for requests; Collect waits for results
  bool stop = false;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
};

GpuMonitor::GpuMonitor(sys::Nvml* nvml, int gpus, std::chrono::milliseconds deadline)
    : nvml_(nvml), deadline_(deadline), st_(std::make_shared<State>()) {
  for (int i = 0; i < gpus; ++i) {
    auto w = std::make_unique<Worker>();
    w->index = i;
    w->last_good.index = i;
    st_->workers.push_back(std::move(w));
  }
  for (auto& w : st_->workers) {
    st_->threads.emplace_back(&GpuMonitor::Run, st_, w.get(), nvml_);
  }
}

GpuMonitor::~GpuMonitor() {
  std::vector<bool> busy;
  {
    std::lock_guard<std::mutex> lock(st_->mu);
    st_->stop = true;
    for (auto& w : st_->workers) busy.push_back(w->busy);
  }
  st_->cv.notify_all();
  for (size_t i = 0; i < st_->threads.size(); ++i) {
    // A worker stuck in a driver call cannot be interrupted: let it go. It holds the
    // shared state, and stops when the call returns.
    if (busy[i]) {
      st_->threads[i].detach();
    } else {
      st_->threads[i].join();
    }
  }
}

void GpuMonitor::Run(std::shared_ptr<State> st, Worker* w, sys::Nvml* nvml) {
  std::unique_lock<std::mutex> lock(st->mu);
  for (;;) {
    st->cv.wait(lock, [&] { return st->stop || w->requested > w->done; });
    if (st->stop) return;
    const uint64_t gen = w->requested;
    w->busy = true;
    uint64_t ts = w->last_util_ts;
    lock.unlock();
    const auto start = std::chrono::steady_clock::now();
    sys::GpuSample s = nvml->Sample(w->index, &ts, &w->current_call);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    lock.lock();
    w->busy = false;
    w->last_util_ts = ts;
    w->result.up = !s.lost;
    w->result.hung_call.clear();
    w->result.seconds = secs;
    if (!s.uuid.empty()) w->last_good = s;
    w->result.sample = std::move(s);
    w->done = gen;
    st->cv.notify_all();
  }
}

std::vector<GpuReading> GpuMonitor::Collect() {
  State& st = *st_;
  std::unique_lock<std::mutex> lock(st.mu);
  const auto start = std::chrono::steady_clock::now();
  for (auto& w : st.workers) {
    if (!w->busy && w->requested == w->done) ++w->requested;  // a hung one is not asked again
  }
  st.cv.notify_all();
  st.cv.wait_until(lock, start + deadline_, [&] {
    for (auto& w : st.workers) {
      if (w->requested > w->done) return false;
    }
    return true;
  });
  std::vector<GpuReading> out;
  for (auto& w : st.workers) {
    if (w->requested == w->done) {
      out.push_back(w->result);
      continue;
    }
    GpuReading r;
    r.sample.index = w->index;
    r.sample.uuid = w->last_good.uuid;
    r.sample.name = w->last_good.name;
    r.sample.busid = w->last_good.busid;
    r.up = false;
    const char* call = w->current_call.load();
    r.hung_call = call ? call : "nvml";
    r.sample.hung_call = r.hung_call;
    r.seconds = std::chrono::duration<double>(deadline_).count();
    out.push_back(std::move(r));
  }
  return out;
}

bool GpuMonitor::AnyHung() const {
  std::lock_guard<std::mutex> lock(st_->mu);
  for (const auto& w : st_->workers) {
    if (w->busy) return true;
  }
  return false;
}

}  // namespace gpufleet::agent
