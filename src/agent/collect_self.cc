// self collector: what the agent knows about itself and its last check run.
#include "agent/collector.h"

namespace gpufleet::agent {

Status CollectSelf(const CollectInput& in, MetricSet* out) {
  constexpr MetricType kG = MetricType::kGauge;
  constexpr MetricType kC = MetricType::kCounter;
  for (const auto& s : in.stats) {
    out->Add("gpufleet_scrape_collector_duration_seconds", kG, "How long the collector took",
             {{"collector", s.name}}, s.seconds);
    out->Add("gpufleet_scrape_collector_success", kG, "1 if the collector read its source",
             {{"collector", s.name}}, s.ok ? 1 : 0);
  }
  for (const auto& [key, n] : in.nvml_errors) {
    out->Add("gpufleet_nvml_errors_total", kC,
             "NVML calls that failed (other than NOT_SUPPORTED), by function and nvmlReturn_t",
             {{"function", key.first}, {"code", std::to_string(key.second)}}, n);
  }
  out->Family("gpufleet_nvml_errors_total", kC,
              "NVML calls that failed (other than NOT_SUPPORTED), by function and nvmlReturn_t");
  out->Add("gpufleet_nvml_loaded", kG, "1 if NVML loaded and initialised", {}, in.nvml ? 1 : 0);
  if (in.last_check_time > 0) {
    out->Add("gpufleet_check_last_run_timestamp_seconds", kG, "When the checks last ran", {},
             in.last_check_time);
    // One series per check: its worst finding (0 pass, 1 warn, 2 fail, 3 unknown).
    for (const auto& c : checks::Checks()) {
      std::vector<checks::Finding> mine;
      for (const auto& f : in.findings) {
        if (f.check == c.name) mine.push_back(f);
      }
      const checks::Status s = checks::Worst(mine);
      const int code = s == checks::Status::kPass   ? 0
                       : s == checks::Status::kWarn ? 1
                       : s == checks::Status::kFail ? 2
                                                    : 3;
      out->Add("gpufleet_check_status", kG,
               "Worst result of the check: 0 pass, 1 warn, 2 fail, 3 cannot evaluate",
               {{"check", c.name}}, code);
    }
    const checks::Status worst = checks::Worst(in.findings);
    out->Add("gpufleet_node_healthy", kG, "1 if no check fails", {},
             worst == checks::Status::kFail ? 0 : 1);
    const checks::Action a = checks::StrongestAction(in.findings);
    for (checks::Action x :
         {checks::Action::kNone, checks::Action::kDrain, checks::Action::kDrainAndReboot}) {
      out->Add("gpufleet_node_action", kG, "What the checks ask for: one series per action, 1 set",
               {{"action", std::string(checks::ActionName(x))}}, a == x ? 1 : 0);
    }
  }
  return OkStatus();
}

}  // namespace gpufleet::agent
