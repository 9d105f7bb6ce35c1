#include "plan/cost.h"

#include <limits>

namespace gpufleet::plan {

namespace {
constexpr double kHoursPerYear = 8760;
}  // namespace

CostPlan PlanCost(const model::Spec& spec, double tokens_per_s, double it_load_w, double it_idle_w,
                  double fabric_cost_usd, bool fabric_priced) {
  const model::Cluster& c = spec.cluster;
  const model::Costs& in = c.costs;
  CostPlan p;
  const double util = in.utilization;

  if (in.capex_usd.set()) {
    p.has_capex = true;
    p.capex_usd = {in.capex_usd.low, in.capex_usd.high};
  } else if (in.node_usd.set()) {
    p.has_capex = true;
    const double fabric = fabric_priced ? fabric_cost_usd : 0;
    p.capex_usd = {in.node_usd.low * c.nodes.count + fabric,
                   in.node_usd.high * c.nodes.count + fabric};
    p.capex_includes_fabric = fabric_priced;
  }

  // Energy: training draw for the utilised share of the year, idle draw for the
  // rest, times PUE (facility over IT power).
  const double avg_it_kw = (util * it_load_w + (1 - util) * it_idle_w) / 1000;
  p.energy_usd_per_year =
      avg_it_kw * c.facility.pue * kHoursPerYear * c.facility.electricity_usd_per_kwh;
  p.opex_stated = in.opex_usd_per_year > 0;
  p.opex_usd_per_year = p.opex_stated ? in.opex_usd_per_year : p.energy_usd_per_year;

  // Rent/yr = GPUs x 8,760 h x utilisation x $/GPU-h (formulas-and-facts §1.8).
  p.gpu_hours_per_year = spec.TotalGpus() * kHoursPerYear * util;
  if (in.cloud_usd_per_gpu_hour.set()) {
    p.has_cloud = true;
    p.cloud_usd_per_year = {p.gpu_hours_per_year * in.cloud_usd_per_gpu_hour.low,
                            p.gpu_hours_per_year * in.cloud_usd_per_gpu_hour.high};
  }
  if (p.has_capex) {
    p.build_usd_per_year = {p.capex_usd.low / in.depreciation_years + p.opex_usd_per_year,
                            p.capex_usd.high / in.depreciation_years + p.opex_usd_per_year};
  }
  if (p.has_capex && p.has_cloud) {
    // Best case: cheapest build against the dearest cloud.
    const double save_hi = (p.cloud_usd_per_year.high - p.opex_usd_per_year) / 12;
    const double save_lo = (p.cloud_usd_per_year.low - p.opex_usd_per_year) / 12;
    p.breaks_even = save_hi > 0;
    const double inf = std::numeric_limits<double>::infinity();
    p.break_even_months = {save_hi > 0 ? p.capex_usd.low / save_hi : inf,
                           save_lo > 0 ? p.capex_usd.high / save_lo : inf};
  }
  p.tokens_per_year = tokens_per_s * 3600 * kHoursPerYear * util;
  if (p.tokens_per_year > 0) {
    if (p.has_capex) {
      p.build_usd_per_million_tokens = {p.build_usd_per_year.low / p.tokens_per_year * 1e6,
                                        p.build_usd_per_year.high / p.tokens_per_year * 1e6};
    }
    if (p.has_cloud) {
      p.cloud_usd_per_million_tokens = {p.cloud_usd_per_year.low / p.tokens_per_year * 1e6,
                                        p.cloud_usd_per_year.high / p.tokens_per_year * 1e6};
    }
  }
  if (spec.workload.train_tokens > 0 && tokens_per_s > 0) {
    const double seconds = spec.workload.train_tokens / tokens_per_s;
    p.train_days = seconds / 86400;
    const double gpu_hours = seconds / 3600 * spec.TotalGpus();
    p.train_cloud_usd = {gpu_hours * in.cloud_usd_per_gpu_hour.low,
                         gpu_hours * in.cloud_usd_per_gpu_hour.high};
  }
  return p;
}

}  // namespace gpufleet::plan
