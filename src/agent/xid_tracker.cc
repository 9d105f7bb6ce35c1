#include "agent/xid_tracker.h"

#include <cmath>

namespace gpufleet::agent {

bool AddDeduplicated(std::vector<sys::XidEvent>* events, sys::XidEvent e) {
  for (const auto& x : *events) {
    const bool same_gpu = (!e.busid.empty() && x.busid == e.busid) ||
                          (e.busid.empty() && e.gpu >= 0 && x.gpu == e.gpu);
    if (same_gpu && x.xid == e.xid && x.source != e.source &&
        std::fabs(x.time - e.time) <= kSameEventSeconds) {
      return false;
    }
  }
  events->push_back(std::move(e));
  return true;
}

XidTracker::XidTracker(sys::Nvml* nvml, std::unique_ptr<sys::KmsgReader> kmsg)
    : nvml_(nvml), kmsg_(std::move(kmsg)) {}

XidTracker::~XidTracker() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void XidTracker::SetGpus(const std::vector<std::string>& busids) {
  std::lock_guard<std::mutex> lock(mu_);
  busids_ = busids;
  for (auto& e : events_) {
    for (size_t i = 0; i < busids_.size(); ++i) {
      if (e.gpu < 0 && e.busid == busids_[i]) e.gpu = static_cast<int>(i);
    }
  }
}

std::vector<sys::XidEvent> XidTracker::Events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

std::string XidTracker::Problems() const {
  std::lock_guard<std::mutex> lock(mu_);
  return problems_;
}

void XidTracker::PollOnce(unsigned nvml_wait_ms) {
  std::vector<sys::XidEvent> fresh;
  std::string problem;
  if (kmsg_) {
    fresh = kmsg_->Read();
    // A long log file is read through once here (in bounded steps, at most 1 GiB), so a one-shot
    // `check` sees its end; the agent's loop would get there over several polls anyway.
    for (int steps = 0; kmsg_->More() && steps < 64; ++steps) {
      for (auto& e : kmsg_->Read()) fresh.push_back(std::move(e));
    }
  }
  if (nvml_ && !nvml_failed_) {
    auto got = nvml_->WaitXids(nvml_wait_ms);
    if (got) {
      for (auto& e : *got) fresh.push_back(std::move(e));
    } else {
      problem = got.error().message;  // e.g. no event API: the kernel log still counts
      nvml_failed_ = true;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!problem.empty()) problems_ = problem;
  for (auto& e : fresh) {
    for (size_t i = 0; i < busids_.size(); ++i) {
      if (e.gpu < 0 && e.busid == busids_[i]) e.gpu = static_cast<int>(i);
    }
    AddDeduplicated(&events_, std::move(e));
  }
}

void XidTracker::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void XidTracker::Loop() {
  while (!stop_) {
    if (nvml_ && !nvml_failed_) {
      PollOnce(500);  // NVML's wait is the loop's sleep
    } else {
      if (kmsg_) PollOnce(0);
      for (int i = 0; i < 5 && !stop_; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

}  // namespace gpufleet::agent
