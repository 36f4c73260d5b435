// The throughput stage (see throughput.hpp). Every word it writes is a
// label of the answer's language (data/answer-labels.tsv, keys tp.*).
#include "query/perf/throughput.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "base/text.hpp"

namespace kbq {

std::string_view to_string(ThroughputBasis v) {
  for (const auto& [b, name] : kThroughputBasisNames)
    if (b == v) return name;
  return {};
}

namespace perf {

namespace {

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// A count of tokens or tokens/s in a few significant digits with its SI
// prefix ("6288", "1.61 M", "2.4 B", "1 T").
std::string si(double v) {
  static const std::pair<double, const char*> units[] = {{1e15, " P"}, {1e12, " T"}, {1e9, " B"}, {1e6, " M"}};
  for (const auto& [scale, unit] : units)
    if (v >= scale) return kb::trim(fixed(v / scale, v / scale >= 100 ? 0 : v / scale >= 10 ? 1 : 2)) + unit;
  return fixed(v, 0);
}

std::string pct(double fraction) { return fixed(fraction * 100, fraction * 100 >= 10 ? 0 : 1); }

std::string fact(const CodeFacts& f, const char* field) {
  auto it = f.find(field);
  return it == f.end() || it->second.state == kb::FactState::Unknown ? std::string() : it->second.value;
}

const Measurement* by_id(const PerfSet& set, long long id) {
  for (const auto& m : set.measurements)
    if (m.id == id) return &m;
  return nullptr;
}

const MeasuredRow* row_of(const PerfSet& set, long long id) {
  for (const auto& r : set.rows)
    if (r.m.id == id) return &r;
  return nullptr;
}

// "DeepSeek-V3 on 256 × DGX-GB300, MXFP8, release 26.08".
std::string described(const Context& c, const PerfSet& set, long long id) {
  const MeasuredRow* r = row_of(set, id);
  if (!r) return {};
  // The model by its display name (data/models.tsv), as every other line
  // names it; the table's own heading ("LLAMA3_70B") only when the KB has
  // no such model.
  const ModelBrief* model = r->m.model_key.empty() ? nullptr : c.kb.model(r->m.model_key);
  return c.label("tp.row", {{"model", model && !model->display.empty() ? model->display : r->model_written},
                            {"gpus", std::to_string(r->m.gpus)},
                            {"system", r->system},
                            {"precision", r->precision_written.empty() ? r->m.precision : r->precision_written},
                            {"release", r->m.release},
                            {"source", r->m.file + ":" + std::to_string(r->m.line)}});
}

// The estimator's target for a result.
Target target_of(const PerfSet& set, const RecipeData& d, const memory::Architecture* arch, const Result& r, FlopsMode mode) {
  Target t;
  t.model_key = r.recipe.model_key;
  t.task = r.recipe.mode;
  t.gpu = r.layout.hardware;
  t.precision = precision_of(d.facts);
  t.gpus = r.layout.gpus;
  t.gbs = r.batch.gbs > 0 ? r.batch.gbs : r.recipe.gbs.value_or(0);
  t.mbs = std::max(1LL, r.batch.mbs > 0 ? r.batch.mbs : r.recipe.mbs.value_or(1));
  t.seq = r.layout.seq;
  t.tp = std::max(1LL, r.layout.tp);
  t.pp = std::max(1LL, r.layout.pp);
  t.cp = std::max(1LL, r.layout.cp);
  t.vp = std::max(1LL, r.layout.vp);
  t.ep = std::max(1LL, r.layout.ep);
  if (arch) {
    t.arch_class = arch_class(*arch);
    auto f = flops_of(set, t.model_key, *arch, t.seq, t.tp, mode);
    if (auto* v = std::get_if<double>(&f))
      t.flops = *v;
    else
      t.flops_error = std::get<std::string>(f);
  }
  return t;
}

}  // namespace

std::string precision_of(const CodeFacts& facts) {
  const std::string fp4 = fact(facts, "fp4"), fp8 = fact(facts, "fp8"), recipe = fact(facts, "fp8_recipe");
  if (!fp4.empty() && fp4 != "none") return "nvfp4";
  if (fp8.empty() || fp8 == "none") return "bf16";
  if (recipe == "mxfp8") return "fp8mx";
  if (recipe == "blockwise") return "fp8sc";
  return "fp8cs";
}

void add_throughput(const Context& c, const PerfSet& set, const RecipeData& d, const memory::Architecture* arch, double budget_tokens,
                    Result& r) {
  Throughput& T = r.throughput;
  if (budget_tokens > 0) r.time_to_train = TimeToTrain{budget_tokens, 0};
  if (!set.error.empty()) {
    T.how = c.label("tp.none.data", {{"error", set.error}});
    return;
  }
  const FlopsMode mode = flops_mode(set, d.facts);
  const Target t = target_of(set, d, arch, r, mode);
  T.bubble_pct = bubble(t.gpus, t.gbs, t.mbs, t.tp, t.pp, t.cp, t.vp) * 100;
  if (t.gpus <= 0 || t.seq <= 0 || t.gbs <= 0) {
    T.how = c.label("tp.none.layout");
    return;
  }
  const Estimate e = estimate(t, set.measurements, set.factors, set.params);
  for (long long id : e.sources)
    if (const Measurement* m = by_id(set, id)) T.sources.push_back({m->file, m->line, 0, described(c, set, id)});
  const std::string precision = kb::upper_ascii(t.precision);
  switch (e.none) {
    case NoneReason::NoFlops:
      T.how = c.label("tp.none.flops", {{"model", r.recipe.model.empty() ? r.recipe.model_key : r.recipe.model},
                                        {"why", t.flops_error.empty() ? std::string("?") : t.flops_error}});
      return;
    case NoneReason::NoPeak:
      T.how = c.label("tp.none.peak", {{"gpu", c.kb.gpu_name(t.gpu)}, {"precision", precision}});
      return;
    case NoneReason::NoMeasurement:
      T.how = c.label("tp.none.measurement", {{"gpu", c.kb.gpu_name(t.gpu)}, {"task", t.task}, {"class", t.arch_class}});
      return;
    case NoneReason::Ok:
      break;
  }
  T.basis = e.basis == Basis::Measured ? ThroughputBasis::Measured : ThroughputBasis::Estimated;
  T.tokens_per_s_per_gpu = e.tokens_per_gpu;
  T.tokens_per_s = e.tokens_per_gpu * static_cast<double>(t.gpus);
  T.tflops_per_gpu = e.tflops_per_gpu;
  T.mfu = e.mfu;
  T.step_time_s = T.tokens_per_s > 0 ? static_cast<double>(t.gbs) * static_cast<double>(t.seq) / T.tokens_per_s : 0;
  T.error_band_pct = e.band_pct;
  T.method = e.method == Method::SameConfiguration ? "same_configuration" : e.method == Method::SameModel ? "same_model" : "other_models";
  const std::string first = T.sources.empty() ? std::string() : T.sources.front().what;
  if (e.basis == Basis::Measured) {
    T.how = c.label("tp.measured", {{"row", first}});
  } else {
    const std::vector<std::pair<std::string, std::string>> vars = {{"row", first},
                                                                   {"band", fixed(e.band_pct, 0)},
                                                                   {"factor", fixed(e.platform_factor, 2)},
                                                                   {"bubble_from", pct(e.bubble_source)},
                                                                   {"bubble_to", pct(e.bubble_target)},
                                                                   {"count", std::to_string(e.sources.size())}};
    T.how = c.label(e.method == Method::SameConfiguration ? "tp.estimated.configuration"
                    : e.method == Method::SameModel       ? "tp.estimated.model"
                    : e.sources.size() == 1               ? "tp.estimated.other"
                                                          : "tp.estimated.others",
                    vars);
    if (e.precision_gain > 0)
      T.how +=
          c.label("tp.precision_prior", {{"gain", fixed(e.precision_gain, 2)}, {"class", t.arch_class}, {"gpu", c.kb.gpu_name(t.gpu)}});
  }
  if (r.time_to_train && T.tokens_per_s > 0) r.time_to_train->seconds = budget_tokens / T.tokens_per_s;

  // Slow plans: a large pipeline bubble a nearby layout would shrink.
  const double slow = set.params.slow_plan_ratio;
  if (slow > 1 && t.pp > 1 && arch && arch->layers > 0) {
    struct Alt {
      Target t;
      std::string what;
    };
    std::vector<Alt> alts;
    if (arch->layers % (t.pp * t.vp * 2) == 0) {
      Alt a{t, c.label("tp.alt.vp", {{"vp", std::to_string(t.vp * 2)}})};
      a.t.vp = t.vp * 2;
      alts.push_back(a);
    }
    if (t.mbs > 1) {
      Alt a{t, c.label("tp.alt.mbs", {{"mbs", std::to_string(t.mbs / 2)}})};
      a.t.mbs = t.mbs / 2;
      alts.push_back(a);
    }
    const double here = 1 + bubble(t.gpus, t.gbs, t.mbs, t.tp, t.pp, t.cp, t.vp);
    auto gain_of = [&](const Target& a) { return here / (1 + bubble(a.gpus, a.gbs, a.mbs, a.tp, a.pp, a.cp, a.vp)); };
    const Alt* best = nullptr;
    double best_gain = 1;
    for (const auto& a : alts) {
      const double gain = gain_of(a.t);
      if (gain > best_gain) {
        best_gain = gain;
        best = &a;
      }
    }
    // Only when no change of the layout alone is enough: a larger global batch (it changes the optimization).
    Alt gbs{t, c.label("tp.alt.gbs", {{"gbs", std::to_string(t.gbs * 2)}})};
    gbs.t.gbs = t.gbs * 2;
    if (best_gain < slow && gain_of(gbs.t) >= slow) {
      best_gain = gain_of(gbs.t);
      best = &gbs;
    }
    if (best && best_gain >= slow)
      r.caveats.push_back(
          c.label("tp.slow_plan",
                  {{"pp", std::to_string(t.pp)},
                   {"bubble", pct(here - 1)},
                   {"tokens", si(T.tokens_per_s_per_gpu)},
                   {"alt", best->what},
                   {"alt_bubble", pct(bubble(best->t.gpus, best->t.gbs, best->t.mbs, best->t.tp, best->t.pp, best->t.cp, best->t.vp))},
                   {"alt_tokens", si(T.tokens_per_s_per_gpu * best_gain)}}));
  }
}

}  // namespace perf
}  // namespace kbq
