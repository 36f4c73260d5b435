// Validation of the throughput estimator (see validate.hpp).
#include "query/perf/validate.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace kbq::perf {

namespace {

bool predictable(const Measurement& m) { return m.usable && m.flops > 0 && m.tokens > 0; }

std::string config_of(const Measurement& m) {
  return m.model_key + "|" + m.variant + "|" + m.task + "|" + m.gpu + "|" + std::to_string(m.gpus) + "|" + m.precision + "|" +
         std::to_string(m.seq);
}

void add(Validation& v, const Measurement& target, const Estimate& e) {
  if (e.basis == Basis::None) {
    ++v.none;
    return;
  }
  PredictedRow r;
  r.id = target.id;
  r.predicted = e.tokens_per_gpu;
  r.measured = target.tokens;
  r.error_pct = (e.tokens_per_gpu / target.tokens - 1) * 100;
  r.method = e.method;
  r.basis = e.basis;
  r.sources = e.sources;
  v.rows.push_back(std::move(r));
}

void summarize(Validation& v) {
  std::vector<double> all;
  std::map<Method, std::vector<double>> by;
  for (const auto& r : v.rows) {
    all.push_back(std::fabs(r.error_pct));
    by[r.method].push_back(std::fabs(r.error_pct));
  }
  v.all = figures(all);
  for (auto& [m, e] : by) v.by_method[m] = figures(e);
}

}  // namespace

Figures figures(std::vector<double> e) {
  Figures f;
  f.n = e.size();
  if (e.empty()) return f;
  std::sort(e.begin(), e.end());
  const size_t n = e.size();
  f.median = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
  const size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n)));
  f.p90 = e[std::max<size_t>(1, rank) - 1];
  f.max = e.back();
  return f;
}

Validation hold_out(const std::vector<Measurement>& ms, const std::function<bool(const Measurement&)>& held, const Params& p) {
  std::vector<Measurement> rest;
  for (const auto& m : ms)
    if (!held(m)) rest.push_back(m);
  const PlatformFactors f = fit_platform_factors(rest, p);
  Validation v;
  for (const auto& m : ms)
    if (held(m) && predictable(m)) add(v, m, estimate(target_of(m), rest, f, p));
  summarize(v);
  return v;
}

Validation leave_one_out(const std::vector<Measurement>& ms, const PlatformFactors& f, const Params& p) {
  Validation v;
  std::vector<Measurement> rest;
  for (size_t i = 0; i < ms.size(); ++i) {
    if (!predictable(ms[i])) continue;
    rest.clear();
    for (size_t j = 0; j < ms.size(); ++j)
      if (j != i) rest.push_back(ms[j]);
    add(v, ms[i], estimate(target_of(ms[i]), rest, f, p));
  }
  summarize(v);
  return v;
}

Validation leave_config_out(const std::vector<Measurement>& ms, const PlatformFactors& f, const Params& p) {
  Validation v;
  std::vector<Measurement> rest;
  for (const auto& m : ms) {
    if (!predictable(m)) continue;
    const std::string c = config_of(m);
    rest.clear();
    for (const auto& o : ms)
      if (config_of(o) != c) rest.push_back(o);
    add(v, m, estimate(target_of(m), rest, f, p));
  }
  summarize(v);
  return v;
}

Validation leave_model_out(const std::vector<Measurement>& ms, const Params& p) {
  Validation v;
  std::set<std::string> models;
  for (const auto& m : ms) models.insert(m.model_key);
  for (const auto& model : models) {
    std::vector<Measurement> rest;
    for (const auto& o : ms)
      if (o.model_key != model) rest.push_back(o);
    const PlatformFactors f = fit_platform_factors(rest, p);
    for (const auto& m : ms)
      if (m.model_key == model && predictable(m)) add(v, m, estimate(target_of(m), rest, f, p));
  }
  // Back to measurement order.
  std::map<long long, size_t> order;
  for (size_t i = 0; i < ms.size(); ++i) order[ms[i].id] = i;
  std::sort(v.rows.begin(), v.rows.end(), [&](const PredictedRow& a, const PredictedRow& b) { return order[a.id] < order[b.id]; });
  summarize(v);
  return v;
}

}  // namespace kbq::perf
