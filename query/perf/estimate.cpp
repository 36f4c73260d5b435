// The throughput estimator (see estimate.hpp and docs/throughput.md).
#include "query/perf/estimate.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <limits>
#include <set>
#include <string_view>

#include "base/kinds.hpp"

namespace kbq::perf {

namespace {

std::string platform(const std::string& gpu, const std::string& precision) { return gpu + "/" + precision; }

// The estimator asks for a peak per measurement it weighs (tens of
// thousands per --batch of the finder): the key is put together on the
// stack, not in a new string each time.
double peak_of(const Params& p, const std::string& gpu, const std::string& precision) {
  std::array<char, 64> buf{};
  std::string long_key;  // a key longer than buf (none in the KB)
  std::string_view key;
  if (const std::size_t n = gpu.size() + 1 + precision.size(); n <= buf.size()) {
    std::copy(gpu.begin(), gpu.end(), buf.begin());
    buf[gpu.size()] = '/';
    std::copy(precision.begin(), precision.end(), buf.begin() + static_cast<std::ptrdiff_t>(gpu.size() + 1));
    key = std::string_view(buf.data(), n);
  } else {
    long_key = platform(gpu, precision);
    key = long_key;
  }
  auto it = p.peak.find(key);
  return it == p.peak.end() ? 0 : it->second;
}

std::string precision_class_of(const Params& p, const std::string& precision) {
  auto it = p.precision_class.find(precision);
  return it == p.precision_class.end() ? precision : it->second;
}

double bubble_of(const Measurement& m) { return bubble(m.gpus, m.gbs, m.mbs, m.tp, m.pp, m.cp, m.vp); }
double bubble_of(const Target& t) { return bubble(t.gpus, t.gbs, t.mbs, t.tp, t.pp, t.cp, t.vp); }

// log of the bubble-free achieved MFU of a measurement.
double log_mfu(const Measurement& m, const Params& p) {
  const double peak = peak_of(p, m.gpu, m.precision);
  return std::log(m.tokens * m.flops / 1e12 / peak * (1 + bubble_of(m)));
}

// (Its peak lookup is the dearest test: callers filter on cheaper fields first.)
bool can_source(const Measurement& m, const Params& p) {
  return m.usable && m.flops > 0 && m.tokens > 0 && peak_of(p, m.gpu, m.precision) > 0;
}

long long domain(const Params& p, const std::string& gpu) {
  auto it = p.nvlink_domain.find(gpu);
  return it == p.nvlink_domain.end() ? 0 : it->second;
}

int generation(const Params& p, const std::string& gpu) {
  auto it = p.generation.find(gpu);
  return it == p.generation.end() ? -1 : it->second;
}

// A group of `group` GPUs leaves an NVLink domain of `domain` GPUs (0:
// not known): its all-to-all crosses the network.
bool leaves_domain(long long group, long long domain) { return domain > 0 && group > domain; }

// The EP group leaves its GPU type's NVLink domain.
bool ep_crosses(const Params& p, const std::string& gpu, long long ep, long long tp) {
  if (ep * tp <= 1) return false;  // one GPU is within any domain: no look-up
  return leaves_domain(ep * tp, domain(p, gpu));
}

// How far a measurement is from the target (docs/throughput.md, "Nearest").
// The target's facts by GPU type and precision are looked up once, a row's
// once per run of rows of one GPU type or precision: the estimator weighs
// hundreds of rows per answer, and each look-up is a map's by name.
class Distance {
 public:
  Distance(const Target& t, int target_release, const Params& p)
      : t_(t),
        release_(target_release),
        p_(p),
        t_gpu_{domain(p, t.gpu), generation(p, t.gpu)},
        t_class_(precision_class_of(p, t.precision)),
        t_ep_crosses_(ep_crosses(p, t.gpu, t.ep, 1)) {}

  double operator()(const Measurement& s) {
    double d = 0;
    if (s.gpu != t_.gpu) {
      d += p_.w_gpu;
      const GpuFacts& g = gpu(s.gpu);
      if ((g.domain > 8) != (t_gpu_.domain > 8)) d += p_.w_gpu_fabric;
      if (g.generation != t_gpu_.generation) d += p_.w_gpu_generation;
    }
    if (s.precision != t_.precision) {
      if (s.precision != class_of_) {
        class_of_ = s.precision;
        class_ = precision_class_of(p_, s.precision);
      }
      d += class_ != t_class_ ? p_.w_precision_class : p_.w_precision;  // another datasheet rate, or the same
    }
    if (s.gpus != t_.gpus && s.gpus > 0 && t_.gpus > 0)
      d += p_.w_gpus * std::fabs(std::log2(static_cast<double>(s.gpus) / static_cast<double>(t_.gpus)));
    if (s.seq != t_.seq) d += p_.w_seq;
    if (s.gbs != t_.gbs) d += p_.w_gbs;
    // ep_crosses for the row, its domain from its GPU type's facts (none looked up for an EP of one)
    if ((s.ep > 1 && leaves_domain(s.ep, gpu(s.gpu).domain)) != t_ep_crosses_) d += p_.w_ep_fabric;
    d += p_.w_release * std::abs(s.release_order - release_);
    return d;
  }

 private:
  struct GpuFacts {
    long long domain = 0;
    int generation = -1;
  };
  const GpuFacts& gpu(const std::string& key) {
    if (!gpu_known_ || key != gpu_of_) {
      gpu_of_ = key;
      gpu_ = {domain(p_, key), generation(p_, key)};
      gpu_known_ = true;
    }
    return gpu_;
  }
  const Target& t_;
  int release_;
  const Params& p_;
  GpuFacts t_gpu_;
  std::string t_class_;
  bool t_ep_crosses_;
  bool gpu_known_ = false;
  std::string gpu_of_;  // the GPU type gpu_ holds
  GpuFacts gpu_;
  std::string class_of_;  // the precision class_ is the class of (at first "", whose class is "")
  std::string class_;
};

bool same_layout(const Measurement& s, const Target& t) {
  return s.tp == t.tp && s.pp == t.pp && s.cp == t.cp && s.vp == t.vp && s.ep == t.ep && s.mbs == t.mbs && s.gbs == t.gbs;
}

double factor(const PlatformFactors& f, const std::string& plat) {
  auto it = f.log_factor.find(plat);
  return it == f.log_factor.end() ? 0 : it->second;
}

// The FP8 platform of a GPU with the most measured pairs ("" none).
std::string fp8_platform(const PlatformFactors& f, const Params& p, const std::string& gpu) {
  std::string best;
  int most = -1;
  for (const auto& [pl, lf] : f.log_factor) {
    const auto slash = pl.find('/');
    if (pl.compare(0, slash, gpu) != 0 || slash != gpu.size() || precision_class_of(p, pl.substr(slash + 1)) != "fp8") continue;
    auto n = f.pairs.find(pl);
    const int count = n == f.pairs.end() ? 0 : n->second;
    if (count > most) {
      most = count;
      best = pl;
    }
  }
  return best;
}

// The log factor of the target's platform over the source's. Across BF16 and
// a lower precision, for an architecture class no measured pair bridges, the
// fitted BF16 factors are another class's: the BF16 side is then its GPU's
// FP8 platform with the class's sourced FP8-over-BF16 gain (*gain set).
double log_factor_between(const Measurement& s, const Target& t, const PlatformFactors& f, const Params& p, double* gain) {
  const double fitted = factor(f, platform(t.gpu, t.precision)) - factor(f, platform(s.gpu, s.precision));
  const bool s_bf16 = precision_class_of(p, s.precision) == "bf16", t_bf16 = precision_class_of(p, t.precision) == "bf16";
  if (s_bf16 == t_bf16 || f.bf16_bridged.count(t.arch_class)) return fitted;
  const std::string& gpu = t_bf16 ? t.gpu : s.gpu;
  auto g = p.fp8_gain_over_bf16.find({t.arch_class, gpu});
  const std::string fp8 = fp8_platform(f, p, gpu);
  if (g == p.fp8_gain_over_bf16.end() || fp8.empty()) return fitted;
  const std::string bf16 = platform(gpu, t_bf16 ? t.precision : s.precision);
  // MFU(bf16) / MFU(fp8) on one GPU = (peak fp8 / peak bf16) / gain.
  const double bf16_over_fp8 =
      std::log(peak_of(p, gpu, fp8.substr(gpu.size() + 1)) / peak_of(p, gpu, bf16.substr(gpu.size() + 1)) / g->second);
  if (gain) *gain = g->second;
  return t_bf16 ? factor(f, fp8) + bf16_over_fp8 - factor(f, platform(s.gpu, s.precision))
                : factor(f, platform(t.gpu, t.precision)) - factor(f, fp8) - bf16_over_fp8;
}

// tokens/s/GPU of the target from one source's MFU.
double transfer(const Measurement& s, const Target& t, const PlatformFactors& f, const Params& p, Estimate* e = nullptr) {
  double gain = 0;
  const double lf = log_factor_between(s, t, f, p, &gain);
  const double mfu = std::exp(log_mfu(s, p) + lf) / (1 + bubble_of(t));
  if (e) {
    e->platform_factor = std::exp(lf);
    e->bubble_source = bubble_of(s);
    e->bubble_target = bubble_of(t);
    e->flops_ratio = s.flops / t.flops;
    e->precision_gain = gain;
  }
  return mfu * peak_of(p, t.gpu, t.precision) * 1e12 / t.flops;
}

void finish(Estimate& e, const Target& t, const Params& p) {
  if (t.flops > 0) e.tflops_per_gpu = e.tokens_per_gpu * t.flops / 1e12;
  const double peak = peak_of(p, t.gpu, t.precision);
  if (peak > 0 && e.tflops_per_gpu > 0) e.mfu = e.tflops_per_gpu / peak;
}

// The error band of a method, widened (root sum of squares) by a sourced precision gain's.
double band(double method_band, const Estimate& e, const Params& p) {
  return e.precision_gain > 0 ? std::hypot(method_band, p.band_precision_prior) : method_band;
}

// A task's measurements may stand in for another's: the same task, or
// pretraining for full fine-tuning (the same FLOPs per token and step).
bool task_fits(const std::string& source, const std::string& target) {
  return source == target || (target == kb::kSftMode && source == kb::kPretrainMode);
}

}  // namespace

double bubble(long long gpus, long long gbs, long long mbs, long long tp, long long pp, long long cp, long long vp) {
  if (pp <= 1) return 0;
  const long long dp = std::max(1LL, gpus / std::max(1LL, tp * pp * cp));
  const double m = std::max(1.0, static_cast<double>(gbs) / static_cast<double>(dp * std::max(1LL, mbs)));
  return static_cast<double>(pp - 1) / (static_cast<double>(std::max(1LL, vp)) * m);
}

Target target_of(const Measurement& m) {
  Target t;
  t.model_key = m.model_key;
  t.variant = m.variant;
  t.arch_class = m.arch_class;
  t.task = m.task;
  t.gpu = m.gpu;
  t.precision = m.precision;
  t.gpus = m.gpus;
  t.gbs = m.gbs;
  t.mbs = m.mbs;
  t.seq = m.seq;
  t.tp = m.tp;
  t.pp = m.pp;
  t.cp = m.cp;
  t.vp = m.vp;
  t.ep = m.ep;
  t.flops = m.flops;
  t.release_order = m.release_order;
  return t;
}

std::variant<Params, std::string> params_from_rows(const std::map<std::string, std::string>& rows,
                                                   const std::map<std::pair<std::string, std::string>, double>& peaks,
                                                   const std::map<std::string, std::string>& precision_class,
                                                   const std::map<std::string, long long>& nvlink_domain) {
  Params p;
  auto num = [&](const char* key, double& into) -> std::string {
    auto it = rows.find(key);
    if (it == rows.end()) return std::string("perf-params.tsv has no '") + key + "'";
    const std::string& v = it->second;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), into);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size() || !std::isfinite(into) || into < 0)
      return std::string("perf-params.tsv: ") + key + " is '" + v + "', not a non-negative number";
    return {};
  };
  struct Key {
    const char* name;
    double Params::*member;
  };
  static const Key keys[] = {{"w_gpu", &Params::w_gpu},
                             {"w_gpu_fabric", &Params::w_gpu_fabric},
                             {"w_gpu_generation", &Params::w_gpu_generation},
                             {"w_precision", &Params::w_precision},
                             {"w_precision_class", &Params::w_precision_class},
                             {"w_gpus", &Params::w_gpus},
                             {"w_seq", &Params::w_seq},
                             {"w_gbs", &Params::w_gbs},
                             {"w_release", &Params::w_release},
                             {"w_flops", &Params::w_flops},
                             {"w_ep_fabric", &Params::w_ep_fabric},
                             {"band_same_configuration", &Params::band_same_configuration},
                             {"band_same_model", &Params::band_same_model},
                             {"band_other_models", &Params::band_other_models},
                             {"band_precision_prior", &Params::band_precision_prior},
                             {"slow_plan_ratio", &Params::slow_plan_ratio}};
  for (const auto& k : keys)
    if (auto err = num(k.name, p.*(k.member)); !err.empty()) return err;
  // The two whole numbers are cast to int: a value past int's range (a
  // crafted KB's perf_params) is refused, never cast.
  constexpr double kMaxWhole = std::numeric_limits<int>::max();
  double n = 0;
  if (auto err = num("neighbours", n); !err.empty()) return err;
  if (n < 1 || n > kMaxWhole || n != std::floor(n))
    return "perf-params.tsv: neighbours is not a whole number from 1 to " + std::to_string(std::numeric_limits<int>::max());
  p.neighbours = static_cast<int>(n);
  auto ref = rows.find("reference_platform");
  if (ref == rows.end()) return std::string("perf-params.tsv has no 'reference_platform'");
  p.reference_platform = ref->second;
  for (const auto& [key, value] : rows) {
    static const std::string kGen = "gpu_generation.";
    if (key.rfind(kGen, 0) != 0) continue;
    double g = 0;
    if (auto err = num(key.c_str(), g); !err.empty()) return err;
    if (g > kMaxWhole || g != std::floor(g))
      return "perf-params.tsv: " + key + " is not a whole number from 0 to " + std::to_string(std::numeric_limits<int>::max());
    p.generation[key.substr(kGen.size())] = static_cast<int>(g);
  }
  for (const auto& [key, value] : rows) {
    static const std::string kGain = "fp8_gain_over_bf16.";
    if (key.rfind(kGain, 0) != 0) continue;
    const std::string rest = key.substr(kGain.size());
    const auto dot = rest.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == rest.size())
      return "perf-params.tsv: " + key + " is not fp8_gain_over_bf16.<architecture class>.<gpu>";
    double g = 0;
    if (auto err = num(key.c_str(), g); !err.empty()) return err;
    if (g <= 0) return "perf-params.tsv: " + key + " is not a positive number";
    p.fp8_gain_over_bf16[{rest.substr(0, dot), rest.substr(dot + 1)}] = g;
  }
  for (const auto& [precision, cls] : precision_class)
    for (const auto& [gp, tflops] : peaks)
      if (gp.second == cls) p.peak[platform(gp.first, precision)] = tflops;
  p.nvlink_domain = nvlink_domain;
  p.precision_class = precision_class;
  return p;
}

PlatformFactors fit_platform_factors(const std::vector<Measurement>& ms, const Params& p) {
  // Pairs: one model, variant, task, release, sequence and GPU count; two platforms.
  std::map<std::tuple<std::string, std::string, std::string, int, long long, long long>, std::vector<const Measurement*>> groups;
  for (const auto& m : ms)
    if (can_source(m, p)) groups[{m.model_key, m.variant, m.task, m.release_order, m.seq, m.gpus}].push_back(&m);
  std::map<std::pair<std::string, std::string>, std::vector<double>> ratios;
  PlatformFactors f;
  // What the pairs compare, once per row of a group (a group of n rows makes
  // n² pairs): its platform, its log MFU and whether it trains in BF16.
  struct Side {
    std::string platform;
    double log_mfu;
    bool bf16;
  };
  std::vector<Side> sides;
  for (const auto& [key, rows] : groups) {
    sides.clear();
    for (const auto* m : rows)
      sides.push_back({platform(m->gpu, m->precision), log_mfu(*m, p), precision_class_of(p, m->precision) == "bf16"});
    for (size_t i = 0; i < rows.size(); ++i)
      for (size_t j = 0; j < rows.size(); ++j) {
        const Side &a = sides[i], &b = sides[j];
        if (a.platform < b.platform) ratios[{a.platform, b.platform}].push_back(a.log_mfu - b.log_mfu);
        if (a.bf16 && !b.bf16) f.bf16_bridged.insert(rows[i]->arch_class);
      }
  }
  struct Eq {
    std::string a, b;
    double median;
    double weight;
  };
  std::vector<Eq> eqs;
  std::set<std::string> platforms;
  for (auto& [ab, v] : ratios) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    const double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    eqs.push_back({ab.first, ab.second, med, static_cast<double>(n)});
    f.pairs[ab.first] += static_cast<int>(n);
    f.pairs[ab.second] += static_cast<int>(n);
    platforms.insert(ab.first);
    platforms.insert(ab.second);
  }
  // Platforms connected to the reference through pairs; the others keep no factor.
  std::set<std::string> reached{p.reference_platform};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& e : eqs)
      if (reached.count(e.a) != reached.count(e.b)) {
        reached.insert(e.a);
        reached.insert(e.b);
        grew = true;
      }
  }
  if (!platforms.count(p.reference_platform)) return f;
  // Weighted least squares of f[a] - f[b] = median, by Gauss-Seidel sweeps
  // (the reference fixed at 0), over the reached platforms by index.
  std::vector<std::string> names(reached.begin(), reached.end());
  std::map<std::string, int> index;
  for (size_t i = 0; i < names.size(); ++i) index[names[i]] = static_cast<int>(i);
  struct Edge {
    int other;
    double sign_median;  // f[this] - f[other] = sign_median
    double weight;
  };
  std::vector<std::vector<Edge>> edges(names.size());
  for (const auto& e : eqs) {
    auto ia = index.find(e.a), ib = index.find(e.b);
    if (ia == index.end() || ib == index.end()) continue;
    edges[static_cast<size_t>(ia->second)].push_back({ib->second, e.median, e.weight});
    edges[static_cast<size_t>(ib->second)].push_back({ia->second, -e.median, e.weight});
  }
  std::vector<double> value(names.size(), 0.0);
  const int ref = index.at(p.reference_platform);
  for (int sweep = 0; sweep < 500; ++sweep) {
    double moved = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      if (static_cast<int>(i) == ref || edges[i].empty()) continue;
      double num = 0, den = 0;
      for (const auto& e : edges[i]) {
        num += e.weight * (e.sign_median + value[static_cast<size_t>(e.other)]);
        den += e.weight;
      }
      moved = std::max(moved, std::fabs(num / den - value[i]));
      value[i] = num / den;
    }
    if (moved < 1e-9) break;
  }
  for (size_t i = 0; i < names.size(); ++i) f.log_factor[names[i]] = value[i];
  return f;
}

Estimate estimate(const Target& t, const std::vector<Measurement>& ms, const PlatformFactors& f, const Params& p) {
  Estimate e;
  int newest = 0;
  for (const auto& m : ms) newest = std::max(newest, m.release_order);
  const int release = t.release_order > 0 ? t.release_order : newest;

  // 1. The configuration itself: measured with this layout, else estimated from it.
  const Measurement* exact = nullptr;
  const Measurement* same_config = nullptr;
  auto nearer = [&](const Measurement* a, const Measurement& b) {
    if (!a) return true;
    const int da = std::abs(a->release_order - release), db = std::abs(b.release_order - release);
    return db < da || (db == da && b.release_order > a->release_order);
  };
  for (const auto& m : ms) {
    if (!m.usable || m.model_key != t.model_key || m.variant != t.variant || m.task != t.task || m.gpu != t.gpu ||
        m.precision != t.precision || m.gpus != t.gpus || m.seq != t.seq)
      continue;
    if (!t.layout_known || same_layout(m, t)) {
      if (nearer(exact, m)) exact = &m;
    } else if (m.flops > 0 && nearer(same_config, m)) {
      same_config = &m;
    }
  }
  if (exact) {
    e.basis = Basis::Measured;
    e.method = Method::SameConfiguration;
    e.tokens_per_gpu = exact->tokens;
    e.sources = {exact->id};
    finish(e, t, p);
    if (e.tflops_per_gpu <= 0) e.tflops_per_gpu = exact->tflops;
    return e;
  }
  if (t.flops <= 0) {
    e.none = NoneReason::NoFlops;
    e.detail = t.flops_error;
    return e;
  }
  if (peak_of(p, t.gpu, t.precision) <= 0) {
    e.none = NoneReason::NoPeak;
    return e;
  }
  const bool gpu_measured = std::any_of(ms.begin(), ms.end(), [&](const Measurement& m) { return m.gpu == t.gpu && can_source(m, p); });
  if (!gpu_measured) {
    e.none = NoneReason::NoMeasurement;
    return e;
  }
  if (same_config && can_source(*same_config, p)) {
    e.basis = Basis::Estimated;
    e.method = Method::SameConfiguration;
    e.tokens_per_gpu = transfer(*same_config, t, f, p, &e);
    e.sources = {same_config->id};
    e.band_pct = band(p.band_same_configuration, e, p);
    finish(e, t, p);
    return e;
  }
  // 2. The same model and task elsewhere: the nearest measurement.
  Distance distance(t, release, p);
  const Measurement* best = nullptr;
  double best_d = std::numeric_limits<double>::infinity();
  for (const auto& m : ms) {
    if (m.model_key != t.model_key || m.task != t.task || !can_source(m, p)) continue;
    const double d = distance(m) + (m.variant != t.variant ? p.w_seq : 0);
    if (d < best_d) {
      best_d = d;
      best = &m;
    }
  }
  if (best) {
    e.basis = Basis::Estimated;
    e.method = Method::SameModel;
    e.tokens_per_gpu = transfer(*best, t, f, p, &e);
    e.sources = {best->id};
    e.band_pct = band(p.band_same_model, e, p);
    finish(e, t, p);
    return e;
  }
  // 3. Other models of the same architecture class and task: the nearest row of each, the nearest models averaged.
  std::map<std::string, std::pair<double, const Measurement*>> per_model;
  for (const auto& m : ms) {
    if (t.arch_class.empty() || m.arch_class != t.arch_class || m.model_key == t.model_key || !task_fits(m.task, t.task) ||
        !can_source(m, p))
      continue;
    const double d = distance(m) + p.w_flops * std::fabs(std::log(m.flops / t.flops));
    auto it = per_model.find(m.model_key);
    if (it == per_model.end() || d < it->second.first) per_model[m.model_key] = {d, &m};
  }
  if (per_model.empty()) {
    e.none = NoneReason::NoMeasurement;
    return e;
  }
  std::vector<std::pair<double, const Measurement*>> near;
  for (const auto& [key, v] : per_model) near.push_back(v);
  std::sort(near.begin(), near.end(),
            [](const auto& a, const auto& b) { return a.first < b.first || (a.first == b.first && a.second->id < b.second->id); });
  if (near.size() > static_cast<size_t>(p.neighbours)) near.resize(static_cast<size_t>(p.neighbours));
  double log_sum = 0;
  for (const auto& [d, m] : near) {
    log_sum += std::log(transfer(*m, t, f, p));
    e.sources.push_back(m->id);
  }
  transfer(*near.front().second, t, f, p, &e);  // the adjustments shown: the nearest source's
  e.basis = Basis::Estimated;
  e.method = Method::OtherModels;
  e.tokens_per_gpu = std::exp(log_sum / static_cast<double>(near.size()));
  e.band_pct = band(p.band_other_models, e, p);
  finish(e, t, p);
  return e;
}

}  // namespace kbq::perf
