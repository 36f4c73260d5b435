// Validation of the throughput estimator on NVIDIA's own measurements
// (docs/throughput.md, "Validation"): each measured row is predicted from
// the others, and the absolute relative error of tokens/s/GPU is
// summarized (median, 90th percentile, maximum), overall and per method.
//   hold-out          the rows of one page (the newest release) from all the
//                     others: what a KB built without that page estimates;
//   leave-one-out     each row from every other row (its configuration's
//                     other releases stay: the same configuration measured);
//   leave-config-out  each row without any row of its configuration (every
//                     release): how well other layouts, GPU counts, types and
//                     precisions of the same model transfer;
//   leave-model-out   each row without any row of its model: how well other
//                     models transfer (the band of a cross-model estimate).
// Platform factors are refitted without the held-out rows where the
// held-out set is large (hold-out, leave-model-out); the per-row variants
// use the factors of all rows (documented as a small leak). Pure.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "query/perf/estimate.hpp"

namespace kbq::perf {

struct Figures {
  size_t n = 0;                         // rows predicted
  double median = 0, p90 = 0, max = 0;  // absolute relative error, percent
};

struct PredictedRow {
  long long id = 0;
  double predicted = 0, measured = 0;  // tokens / s / GPU
  double error_pct = 0;                // signed: (predicted - measured) / measured x 100
  Method method = Method::None;
  Basis basis = Basis::None;
  std::vector<long long> sources;
};

struct Validation {
  std::vector<PredictedRow> rows;  // in measurement order
  size_t none = 0;                 // rows with no estimate
  Figures all;
  std::map<Method, Figures> by_method;
};

// The 90th percentile is the value at rank ceil(0.9 n) of the sorted errors.
Figures figures(std::vector<double> abs_errors);

// Rows predicted: the usable measurements with a FLOPs count.
Validation hold_out(const std::vector<Measurement>& ms, const std::function<bool(const Measurement&)>& held, const Params& p);
Validation leave_one_out(const std::vector<Measurement>& ms, const PlatformFactors& f, const Params& p);
Validation leave_config_out(const std::vector<Measurement>& ms, const PlatformFactors& f, const Params& p);
Validation leave_model_out(const std::vector<Measurement>& ms, const Params& p);

}  // namespace kbq::perf
