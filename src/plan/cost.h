#pragma once
// Cost: capex, yearly opex, cloud rent for the same GPU-hours, break-even
// month, and cost per trained token, as low/high ranges where the inputs are
// ranges (reference/formulas-and-facts.md §1.8). Pure; thread-safe.

#include "model/spec.h"

namespace gpufleet::plan {

struct Money {
  double low = 0;
  double high = 0;
};

struct CostPlan {
  bool has_capex = false;
  bool has_cloud = false;
  Money capex_usd;  // stated, or nodes x node price + fabric
  bool capex_includes_fabric = false;
  double energy_usd_per_year = 0;  // IT power x PUE x hours x $/kWh
  double opex_usd_per_year = 0;    // stated opex, else the energy cost
  bool opex_stated = false;
  double gpu_hours_per_year = 0;  // GPUs x 8,760 h x utilisation
  Money cloud_usd_per_year;       // the same GPU-hours rented
  Money build_usd_per_year;       // capex / depreciation + opex
  Money break_even_months;        // capex / (cloud - opex) per month; low = best case
  bool breaks_even = false;
  double tokens_per_year = 0;
  Money build_usd_per_million_tokens;
  Money cloud_usd_per_million_tokens;
  double train_days = 0;  // for workload.train_tokens, at the expected throughput
  Money train_cloud_usd;
};

CostPlan PlanCost(const model::Spec& spec, double tokens_per_s, double it_load_w, double it_idle_w,
                  double fabric_cost_usd, bool fabric_priced);

}  // namespace gpufleet::plan
