// The throughput estimator against NVIDIA's published measurements
// (docs/throughput.md): our FLOPs per token against the two published
// columns of every measured row, and the estimator's validation (hold-out of
// the newest release, leave-one-out, leave-config-out, leave-model-out)
// against the figures and error bands the documentation and
// data/perf-params.tsv state. KB_PRINT_VALIDATION=1 prints the figures and
// every held-out row (what docs/throughput.md quotes).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <variant>

#include "base/sqlite.hpp"
#include "base/stored_bytes.hpp"
#include "base/text.hpp"
#include "base/tsv.hpp"
#include "query/kb/kb.hpp"
#include "query/perf/measured.hpp"
#include "query/perf/stored.hpp"
#include "query/perf/validate.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kKb = std::string(KB_BINARY_DIR) + "/kb.sqlite";

kbq::Kb& kb_of_tests() {
  static kbq::Kb kb(kKb);
  return kb;
}

const kbq::perf::PerfSet& perf_set() {
  // The whole read: the FLOPs test reads the published-FLOPs exceptions.
  static const kbq::perf::PerfSet set = kbq::perf::build_perf(*kb_of_tests().perf_listing_tables());
  return set;
}

bool printing() { return std::getenv("KB_PRINT_VALIDATION") != nullptr; }

std::string method_name(kbq::perf::Method m) {
  switch (m) {
    case kbq::perf::Method::SameConfiguration:
      return "same configuration";
    case kbq::perf::Method::SameModel:
      return "same model";
    case kbq::perf::Method::OtherModels:
      return "other models";
    case kbq::perf::Method::None:
      break;
  }
  return "none";
}

void print(const std::string& name, const kbq::perf::Validation& v) {
  if (!printing()) return;
  std::printf("%s: n=%zu none=%zu median %.1f%% p90 %.1f%% max %.1f%%\n", name.c_str(), v.all.n, v.none, v.all.median, v.all.p90,
              v.all.max);
  for (const auto& [m, f] : v.by_method)
    std::printf("  %s: n=%zu median %.1f%% p90 %.1f%% max %.1f%%\n", method_name(m).c_str(), f.n, f.median, f.p90, f.max);
}

double param(const std::string& key) { return std::atof(perf_set().raw_params.at(key).c_str()); }

// The figures docs/throughput.md states: its table rows "| <name> | n | none | median % | p90 % | max % |".
std::map<std::string, std::vector<double>> documented_figures() {
  std::map<std::string, std::vector<double>> out;
  std::ifstream in(std::string(KB_SOURCE_DIR) + "/docs/throughput.md");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) cells.push_back(kb::trim(cell));
    if (cells.size() < 6) continue;
    std::vector<double> v;
    for (size_t i = 1; i < 6; ++i) {
      std::string c = cells[i];
      if (!c.empty() && c.back() == '%') c = kb::trim(c.substr(0, c.size() - 1));
      char* end = nullptr;
      const double d = std::strtod(c.c_str(), &end);
      if (c.empty() || *end) break;
      v.push_back(d);
    }
    if (v.size() == 5) out[cells[0]] = v;
  }
  return out;
}

// A validation's figures are the documented ones (to their rounding).
void matches_documented(const std::string& name, const kbq::perf::Validation& v) {
  static const auto doc = documented_figures();
  INFO(name << " (docs/throughput.md, table of the validation)");
  REQUIRE(doc.count(name));
  const auto& d = doc.at(name);
  CHECK(static_cast<double>(v.all.n) == d[0]);
  CHECK(static_cast<double>(v.none) == d[1]);
  CHECK(std::fabs(v.all.median - d[2]) <= 0.051);
  CHECK(std::fabs(v.all.p90 - d[3]) <= 0.051);
  CHECK(std::fabs(v.all.max - d[4]) <= 0.051);
}

}  // namespace

TEST_CASE("throughput: our FLOPs per token match the two published columns of every measured row within 3 %, except the listed",
          "[throughput]") {
  const auto& set = perf_set();
  REQUIRE(set.error.empty());
  REQUIRE(set.rows.size() > 250);
  size_t checked = 0, excepted = 0;
  for (const auto& r : set.rows) {
    const auto& m = r.m;
    INFO(m.file << ":" << m.line << " " << r.model_written << " " << m.gpu << " " << m.precision << " release " << m.release);
    INFO("our FLOPs: " << (r.flops_error.empty() ? std::to_string(m.flops) : r.flops_error));
    REQUIRE(m.flops > 0);
    const double implied = m.tflops * 1e12 / m.tokens;
    const double off = std::fabs(m.flops / implied - 1);
    INFO("implied by the published columns: " << implied << " (ours " << (m.flops / implied - 1) * 100 << " %)");
    if (!r.flops_exception.empty()) {
      CHECK(off > 0.03);  // a listed exception that matches is stale: remove its row
      ++excepted;
    } else {
      CHECK(off <= 0.03);
      ++checked;
    }
  }
  CHECK(checked > 250);
  CHECK(excepted > 0);
}

// The KB reader gives a benchmark recipe of the tables only the facts
// arch_source_reads names: a fact the architecture or the FLOPs mode reads
// and the list leaves out would change them here.
TEST_CASE("throughput: the benchmark recipes' architecture and FLOPs mode are the same from their few facts as from all", "[throughput]") {
  auto& kb = kb_of_tests();
  size_t compared = 0, fewer = 0;
  const auto sources = kb.perf_sources();
  for (const auto& [name, source] : sources->archs) {
    if (!source.recipe) continue;
    INFO(name);
    kbq::perf::PerfArchSource whole = source;
    whole.facts = kb.data_of(*source.recipe).facts;
    std::string why_few, why_all;
    const auto few = kbq::perf::architecture_of(source, why_few);
    const auto all = kbq::perf::architecture_of(whole, why_all);
    REQUIRE(few.has_value() == all.has_value());
    if (few) CHECK(*few == *all);
    CHECK(why_few == why_all);
    CHECK(kbq::perf::flops_mode(perf_set(), source.facts) == kbq::perf::flops_mode(perf_set(), whole.facts));
    ++compared;
    if (source.facts.size() < whole.facts.size()) ++fewer;
  }
  CHECK(compared >= 10);
  CHECK(fewer == compared);
}

// kbc stores each row's FLOPs and architecture class and the platforms'
// fit (compiler/generate/perf_fit.cpp); answers read them. Both KBs kbc
// writes hold exactly what the estimator computes from the rows' benchmark
// recipes and models.
TEST_CASE("throughput: the FLOPs and fit kbc stored are what the estimator computes from the sources", "[throughput]") {
  for (const std::string& file : {kKb, std::string(KB_BINARY_DIR) + "/kbq.sqlite"}) {
    INFO(file);
    kbq::Kb kb(file);
    const kbq::perf::PerfSet stored = kbq::perf::build_perf(*kb.perf_listing_tables());
    const kbq::perf::PerfSet computed = kbq::perf::build_perf(*kb.perf_sources());
    REQUIRE(stored.error.empty());
    REQUIRE(stored.rows.size() == computed.rows.size());
    size_t counted = 0;
    for (size_t i = 0; i < stored.rows.size(); ++i) {
      const auto &a = stored.rows[i], &b = computed.rows[i];
      INFO(a.m.id);
      CHECK(a.m.id == b.m.id);
      CHECK(a.m.arch_class == b.m.arch_class);
      CHECK(a.m.flops == b.m.flops);  // exactly: a REAL holds the double
      CHECK(a.flops_error == b.flops_error);
      if (a.m.flops > 0) ++counted;
    }
    CHECK(counted > 250);
    CHECK(stored.factors.log_factor == computed.factors.log_factor);
    CHECK(stored.factors.pairs == computed.factors.pairs);
    CHECK(stored.factors.bf16_bridged == computed.factors.bf16_bridged);
    CHECK(stored.factors.log_factor.size() > 10);
    CHECK_FALSE(stored.factors.bf16_bridged.empty());
  }
}

// An answer reads the rows without what only `kbq perf` lists
// (PerfRead::Estimate): the estimator's inputs are those of the whole read,
// field by field, and the listing's own columns were not read.
TEST_CASE("throughput: the estimator's read of the rows gives what the whole read gives it, and no more", "[throughput]") {
  for (const std::string& file : {kKb, std::string(KB_BINARY_DIR) + "/kbq.sqlite"}) {
    INFO(file);
    kbq::Kb kb(file);
    const auto whole_tables = kb.perf_listing_tables();
    const auto light_tables = kb.perf_estimate_tables();
    CHECK(light_tables->drift.empty());
    const kbq::perf::PerfSet light = kbq::perf::build_perf(std::move(*light_tables)), whole = kbq::perf::build_perf(*whole_tables);
    REQUIRE(light.error.empty());
    REQUIRE(light.rows.size() == whole.rows.size());
    REQUIRE(light.measurements.size() == whole.measurements.size());
    const auto fields = [](const kbq::perf::Measurement& m) {
      return std::tie(m.id, m.model_key, m.variant, m.arch_class, m.task, m.gpu, m.precision, m.gpus, m.gbs, m.mbs, m.seq, m.tp, m.pp, m.cp,
                      m.vp, m.ep, m.release, m.release_order, m.file, m.line, m.tokens, m.tflops, m.flops, m.usable);
    };
    size_t listed = 0;
    for (size_t i = 0; i < light.rows.size(); ++i) {
      const auto &a = light.rows[i], &b = whole.rows[i];
      INFO(b.m.id);
      CHECK(fields(a.m) == fields(b.m));
      CHECK(fields(light.measurements[i]) == fields(whole.measurements[i]));
      // What an answer's sources say of a row (query/perf/throughput.cpp, described).
      CHECK(std::tie(a.model_written, a.system, a.precision_written) == std::tie(b.model_written, b.system, b.precision_written));
      CHECK(a.status.empty());
      CHECK(a.notes.empty());
      CHECK(a.edition.empty());
      if (!b.status.empty() && !b.edition.empty()) ++listed;
    }
    CHECK(listed == whole.rows.size());
    CHECK(light.factors.log_factor == whole.factors.log_factor);
    CHECK(light.factors.pairs == whole.factors.pairs);
    CHECK(light.factors.bf16_bridged == whole.factors.bf16_bridged);
    CHECK(light.raw_params == whole.raw_params);
    CHECK(light.flops_arch == whole.flops_arch);
    CHECK_FALSE(whole_tables->drift.empty());
  }
}

// kbc compiles the estimator's tables into one value (perf_compiled) that
// answers read in place of the rows: in both KBs it is what compiling the
// rows gives now (not stale), and reading it back gives every table it
// holds, value for value (the test above compares what the estimator
// builds from it with the whole read).
TEST_CASE("throughput: the compiled estimator's tables are the rows' read, byte for byte and value for value", "[throughput]") {
  for (const std::string& file : {kKb, std::string(KB_BINARY_DIR) + "/kbq.sqlite"}) {
    INFO(file);
    kbq::Kb kb(file);
    const auto rows = kb.perf_estimate_rows();
    const auto compiled = kb.perf_estimate_tables();
    {
      kb::Db db(file, kb::Db::Mode::ReadOnly);
      kb::Stmt st(db, "SELECT bytes FROM perf_compiled WHERE id = 1");
      REQUIRE(st.step());
      CHECK(std::string(st.blob(0)) == kbq::perf::to_stored(*rows));
    }
    CHECK(compiled->read == kbq::perf::PerfRead::Estimate);
    CHECK(compiled->params == rows->params);
    CHECK(compiled->flops_arch == rows->flops_arch);
    CHECK(compiled->peaks == rows->peaks);
    CHECK(compiled->precision_class == rows->precision_class);
    CHECK(compiled->nvlink == rows->nvlink);
    CHECK(compiled->bf16_bridged == rows->bf16_bridged);
    REQUIRE(compiled->platforms.size() == rows->platforms.size());
    for (const auto& [platform, fit] : rows->platforms) {
      INFO(platform);
      REQUIRE(compiled->platforms.count(platform));
      CHECK(compiled->platforms.at(platform).pairs == fit.pairs);
      CHECK(compiled->platforms.at(platform).log_factor == fit.log_factor);
    }
    REQUIRE(compiled->rows.size() == rows->rows.size());
    CHECK(rows->rows.size() > 250);
    const auto fields = [](const kbq::perf::PerfTableRow& r) {
      return std::tie(r.id, r.file, r.line, r.col, r.edition, r.release, r.release_order, r.task, r.model_written, r.model_key,
                      r.recipe_model, r.variant, r.arch_override, r.system, r.gpu, r.precision, r.precision_written, r.gpus, r.gbs, r.mbs,
                      r.seq, r.fsdp, r.tp, r.pp, r.cp, r.vp, r.ep, r.ga, r.tokens, r.tflops, r.alternate, r.note_kind, r.notes, r.status,
                      r.superseded_by, r.recipe, r.arch_recipe, r.arch_class, r.flops, r.flops_error);
    };
    for (size_t i = 0; i < rows->rows.size(); ++i) {
      INFO(rows->rows[i].id);
      CHECK(fields(compiled->rows[i]) == fields(rows->rows[i]));
    }
  }
}

// The stored value is read as untrusted input: every value the rows' read
// checks is checked, and every cut of it is refused (never read past).
TEST_CASE("throughput: a crafted compiled estimator's value is refused with where it is wrong", "[throughput][hostile]") {
  const auto base = kb_of_tests().perf_estimate_rows();
  const auto refused = [&](const std::function<void(kbq::perf::PerfTables&)>& craft, const std::string& what) {
    kbq::perf::PerfTables t = *base;
    craft(t);
    const std::string bytes = kbq::perf::to_stored(t);
    CHECK_THROWS_WITH(kbq::perf::from_stored(bytes), Catch::Contains(what));
  };
  REQUIRE_FALSE(base->rows.empty());
  REQUIRE_FALSE(base->platforms.empty());
  refused([](auto& t) { t.rows.front().flops = 1e19; }, "perf_rows.flops of row " + std::to_string(base->rows.front().id));
  refused([](auto& t) { t.rows.back().flops = -1; }, "is out of range");
  refused([](auto& t) { t.rows.front().tokens = std::numeric_limits<double>::infinity(); }, "a number that is not finite");
  refused([](auto& t) { t.platforms.begin()->second.pairs = -3; }, "perf_fit.pairs of '" + base->platforms.begin()->first + "': -3");
  refused([](auto& t) { t.platforms.begin()->second.log_factor = 1e300; }, "perf_fit.log_factor");
  refused([](auto& t) { t.params.begin()->second = std::string(2000, 'x'); }, "a text of 2000 bytes");
  refused([](auto& t) { t.rows.front().gpu = "\xff"; }, "a text that is not UTF-8");

  const std::string good = kbq::perf::to_stored(*base);
  CHECK(kbq::perf::to_stored(kbq::perf::from_stored(good)) == good);
  // Every cut, at every tenth byte: refused where the bytes end, or at the
  // count whose items the bytes left cannot hold.
  for (size_t n = 0; n < good.size(); n += 10) {
    INFO(n);
    CHECK_THROWS_WITH(kbq::perf::from_stored(std::string_view(good).substr(0, n)),
                      Catch::Contains("the bytes end early") || Catch::Contains("past the bytes left"));
  }
  // A byte more is refused too.
  CHECK_THROWS_WITH(kbq::perf::from_stored(good + "x"), Catch::Contains("bytes after the bf16-bridged classes"));
  // A row's string index past the table.
  {
    kb::stored::Writer w;
    w.u32(1);
    for (int i = 0; i < 4; ++i) w.count(0);  // params, flops_arch, peaks, precision_class
    w.count(1);                              // one string
    w.text("a");
    w.count(1);  // one row
    w.svar(1);
    w.var(7);  // its file: string 7 of 1
    const std::string crafted = w.take() + std::string(60, '\0');
    CHECK_THROWS_WITH(kbq::perf::from_stored(crafted), Catch::Contains("string 7 of 1"));
  }
}

// An older edition's copies of a release's rows are for lint and generate:
// the runtime KB (kbq's) leaves them out and keeps every other row as is.
TEST_CASE("throughput: the runtime KB holds every perf row but the copies, the full KB all of them", "[throughput]") {
  auto rows = [](const std::string& file, const char* where) {
    kb::Db db(file, kb::Db::Mode::ReadOnly);
    kb::Stmt st(db, std::string("SELECT count(*), total(id * tokens_per_gpu) FROM perf_rows WHERE ") + where);
    REQUIRE(st.step());
    return std::make_pair(st.integer(0), st.real(1));
  };
  const std::string runtime = std::string(KB_BINARY_DIR) + "/kbq.sqlite";
  CHECK(rows(runtime, "status = 'copy'").first == 0);
  CHECK(rows(kKb, "status = 'copy'").first > 0);
  CHECK(rows(runtime, "status != 'copy'") == rows(kKb, "status != 'copy'"));
  CHECK(rows(runtime, "1").first > 250);
}

TEST_CASE("throughput: every performance page data/perf-sources.tsv lists is among the sources", "[throughput]") {
  kb::Diagnostics diags;
  const auto t = kb::load_tsv(std::string(KB_SOURCE_DIR) + "/kb-sources/data/perf-sources.tsv", diags, {"path"});
  REQUIRE(t);
  REQUIRE(t->rows.size() >= 2);
  for (const auto& row : t->rows) {
    INFO(t->get(row, "path"));
    CHECK(fs::is_regular_file(std::string(KB_SOURCE_DIR) + "/kb-sources/" + t->get(row, "path")));
  }
}

TEST_CASE("throughput: the estimator's validation reaches the figures docs/throughput.md states", "[throughput]") {
  using namespace kbq::perf;
  const auto& set = perf_set();
  REQUIRE(set.error.empty());
  // Hold out the newest release: the rows of the newest page.
  int newest = 0;
  for (const auto& m : set.measurements) newest = std::max(newest, m.release_order);
  const Validation held = hold_out(
      set.measurements, [&](const Measurement& m) { return m.release_order == newest; }, set.params);
  print("hold-out of the newest release", held);
  if (printing())
    for (const auto& r : held.rows)
      for (const auto& m : set.measurements)
        if (m.id == r.id)
          std::printf("  %s:%d %s %s %lld %s: measured %.0f, predicted %.0f (%+.1f%%, %s)\n", m.file.c_str(), m.line, m.model_key.c_str(),
                      m.gpu.c_str(), m.gpus, m.precision.c_str(), r.measured, r.predicted, r.error_pct, method_name(r.method).c_str());
  if (printing())
    for (const auto& [platform, lf] : set.factors.log_factor)
      std::printf("  platform factor %s: %.2f (%d pairs)\n", platform.c_str(), std::exp(lf), set.factors.pairs.at(platform));
  const Validation loo = leave_one_out(set.measurements, set.factors, set.params);
  print("leave-one-out", loo);
  const Validation lco = leave_config_out(set.measurements, set.factors, set.params);
  print("leave-config-out", lco);
  const Validation lmo = leave_model_out(set.measurements, set.params);
  print("leave-model-out", lmo);
  CHECK(held.all.n >= 15);
  CHECK(held.none == 0);
  matches_documented("hold-out of the newest release", held);
  matches_documented("leave-one-out", loo);
  matches_documented("leave-config-out", lco);
  matches_documented("leave-model-out", lmo);
  // The goals of docs/throughput.md where they are reached (the hold-out's median; every method's median but other models').
  CHECK(held.all.median <= 10);
  CHECK(loo.all.median <= 10);
  CHECK(loo.all.p90 <= 25);
  CHECK(lco.all.median <= 10);
  CHECK(lco.all.p90 <= 25);
  // Each error band of data/perf-params.tsv is the 90th percentile of its method's validation, rounded up (within 2 points).
  auto band = [&](const char* key, const Figures& f) {
    INFO(key << ": band " << param(key) << " %, validation p90 " << f.p90 << " %");
    CHECK(param(key) >= f.p90);
    CHECK(param(key) <= f.p90 + 2);
  };
  band("band_same_configuration", loo.by_method.at(Method::SameConfiguration));
  band("band_same_model", lco.by_method.at(Method::SameModel));
  band("band_other_models", lmo.by_method.at(Method::OtherModels));
}

TEST_CASE("throughput: a dense model in BF16 takes the sourced FP8-over-BF16 gain, a MoE model the fitted factors", "[throughput]") {
  using namespace kbq::perf;
  const auto& set = perf_set();
  REQUIRE(set.error.empty());
  // NVIDIA measured no dense model in BF16: the class has no pair between BF16 and FP8.
  CHECK_FALSE(set.factors.bf16_bridged.count("dense"));
  CHECK(set.factors.bf16_bridged.count("moe"));
  auto row = [&](const std::string& model, const std::string& gpu, const std::string& precision) -> const Measurement* {
    const Measurement* found = nullptr;
    for (const auto& m : set.measurements)
      if (m.model_key == model && m.gpu == gpu && m.precision == precision && m.task == "pretrain" && m.usable &&
          (!found || m.release_order > found->release_order))
        found = &m;
    return found;
  };
  // Llama 3 70B on 64 H100: the FP8-CS row, asked in BF16 with the same layout.
  const Measurement* fp8 = row("llama3_70b", "h100", "fp8cs");
  REQUIRE(fp8);
  Target t = target_of(*fp8);
  t.precision = "bf16";
  const double gain = set.params.fp8_gain_over_bf16.at({"dense", "h100"});
  const Estimate e = estimate(t, set.measurements, set.factors, set.params);
  REQUIRE(e.basis == Basis::Estimated);
  CHECK(e.sources.front() == fp8->id);
  CHECK(e.precision_gain == Approx(gain));
  // Same GPU and layout: the BF16 estimate is the FP8 measurement over the gain.
  CHECK(e.tokens_per_gpu == Approx(fp8->tokens / gain).epsilon(1e-9));
  CHECK(e.band_pct == Approx(std::hypot(set.params.band_same_model, set.params.band_precision_prior)));
  // Without the gain row the fitted (MoE) factors would make BF16 nearly as fast as FP8.
  Params no_gain = set.params;
  no_gain.fp8_gain_over_bf16.clear();
  const Estimate fitted = estimate(t, set.measurements, set.factors, no_gain);
  CHECK(fitted.precision_gain == 0);
  CHECK(fitted.tokens_per_gpu > e.tokens_per_gpu * 1.5);
  // Qwen3-235B-A22B (MoE) in BF16 on H100: its class has pairs, the fitted factors stand.
  const Measurement* moe = row("qwen3_235b_a22b", "h100", "fp8cs");
  REQUIRE(moe);
  Target m = target_of(*moe);
  m.precision = "bf16";
  const Estimate em = estimate(m, set.measurements, set.factors, set.params);
  REQUIRE(em.basis == Basis::Estimated);
  CHECK(em.precision_gain == 0);
}

TEST_CASE("throughput: a whole-number parameter past int's range or with a fraction is refused, not cast", "[throughput][hostile]") {
  // A crafted KB's perf_params reach params_from_rows as text; the two whole
  // numbers are cast to int, which a value like 1e300 would make undefined.
  using namespace kbq::perf;
  const auto tables = kb_of_tests().perf_listing_tables();
  const auto params = [&](const std::string& key, const std::string& value) {
    auto rows = tables->params;
    REQUIRE(rows.count(key));
    rows[key] = value;
    return params_from_rows(rows, tables->peaks, tables->precision_class, tables->nvlink);
  };
  REQUIRE(std::holds_alternative<Params>(params_from_rows(tables->params, tables->peaks, tables->precision_class, tables->nvlink)));
  for (const std::string key : {"neighbours", "gpu_generation.h100"}) {
    for (const std::string bad : {"1e300", "2147483648", "2.5"}) {
      INFO(key << " = " << bad);
      const auto p = params(key, bad);
      REQUIRE(std::holds_alternative<std::string>(p));
      CHECK_THAT(std::get<std::string>(p), Catch::Matchers::Contains(key) && Catch::Matchers::Contains("whole number"));
    }
    const auto fine = params(key, "2147483647");
    REQUIRE(std::holds_alternative<Params>(fine));
  }
  CHECK(std::get<Params>(params("neighbours", "2147483647")).neighbours == 2147483647);
  CHECK(std::get<Params>(params("gpu_generation.h100", "12")).generation.at("h100") == 12);
  CHECK(std::holds_alternative<std::string>(params("neighbours", "0")));
}
