// The engine behind query/kbq.hpp: opens the KB and runs each request
// through the stages in order (Engine::ask: parse, resolve, candidates,
// quick-reference picks, plan and check, rank, finish the shown, conclude;
// render in respond(); docs/architecture.md lists the steps and its test
// checks their order here). The only file of the engine that calls more
// than one stage, and the one that loads what they read: it asks the KB reader
// (query/kb/kb.hpp) for values and hands them to the stages, which compute.
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "base/dsl/parse.hpp"
#include "base/schema_version.hpp"
#include "base/text.hpp"
#include "query/check/check.hpp"
#include "query/kb/kb.hpp"
#include "query/kbq.hpp"
#include "query/perf/listing.hpp"
#include "query/perf/stored.hpp"
#include "query/perf/throughput.hpp"
#include "query/plan/layout.hpp"
#include "query/plan/list.hpp"
#include "query/plan/plan.hpp"
#include "query/rank/rank.hpp"
#include "query/stage.hpp"

namespace kbq {

// --- the IR's small helpers ------------------------------------------------------

bool Result::any_fail() const {
  return std::any_of(rules.begin(), rules.end(), [](const Verdict& v) { return v.status == Status::Fail; });
}

std::optional<Dim> parse_dim(std::string_view id) {
  for (const auto& [d, name] : kDimNames)
    if (name == id) return d;
  return std::nullopt;
}

std::string_view to_string(Dim d) {
  for (const auto& [v, name] : kDimNames)
    if (v == d) return name;
  return {};
}

std::string_view to_string(Outcome v) {
  for (const auto& [o, name] : kOutcomeNames)
    if (o == v) return name;
  return {};
}

// --- the engine --------------------------------------------------------------------

struct Engine::Impl {
  explicit Impl(const std::string& path) : kb(path) {}
  Kb kb;
  std::optional<perf::PerfSet> perf;             // the measured rows and the estimator's inputs, read at their first use
  Sizings sizings;                               // each recipe's own sizing, computed at its first plan
  bool keep_facts = true;                        // AskOptions::keep_facts of the answer being made
  std::map<RecipeKind, NameTokens> name_tokens;  // the words of each kind's recipe names, read at their first use
  std::map<std::string, ConfigLayers> layers;    // by language: the config keys' layers classified so far
  const NameTokens& name_tokens_of(RecipeKind kind) {
    if (auto it = name_tokens.find(kind); it != name_tokens.end()) return it->second;
    return name_tokens.emplace(kind, kbq::name_tokens(kb.recipe_names(kind))).first->second;
  }
  const perf::PerfSet& perf_set() {
    if (!perf) perf = perf::build_perf(std::move(*kb.perf_estimate_tables()));
    return *perf;
  }

  // What every stage of an answer in `lang` shares.
  Context context(const std::string& lang) { return Context{kb.snapshot(), kb.labels(lang), kb.cited_texts(lang), lang, &layers[lang]}; }
  // The facts of the recipes planned through it stay read while it lives
  // (a recipe planned again, or shown and read again for its throughput,
  // reads them once), and are dropped when it ends; unless the answer
  // keeps them (AskOptions::keep_facts), then they stay for the next.
  class Held {
   public:
    explicit Held(Impl& e) : e_(e) {}
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held() {
      for (const std::string& target : targets_) release(target);
    }
    void add(const Recipe& r) { targets_.insert(r.target); }
    // Dropped before the end: a recipe the answer will not read again.
    void drop(const Recipe& r) {
      if (targets_.erase(r.target) > 0) release(r.target);
    }

   private:
    void release(const std::string& target) {
      if (!e_.keep_facts) e_.kb.release_facts(target);
    }
    Impl& e_;
    std::set<std::string> targets_;  // the recipe functions whose facts it holds
  };
  // One recipe planned (its facts and model loaded first). An answer to a
  // question passes `held`, which drops its facts when it ends (the plan
  // keeps what it needs of them); show, check and fewest keep every fact
  // they read (keep_facts is true outside ask).
  Planned plan(const Context& c, const Recipe& r, const Ask& ask, bool substitute, Fewest fewest = Fewest::Now,
               Command command = Command::Now, Held* held = nullptr) {
    Planned p = plan_recipe(c, kb.data_of(r), ask, substitute, fewest, &sizings, command);
    if (held) held->add(r);
    return p;
  }
  // One planned recipe checked.
  void check(const Context& c, Planned& p) { kbq::check(c, p.model, kb.drift(p.result.recipe.name), p.result); }
  // Its expected throughput and time to train (query/perf/throughput.hpp), for a result kept in the answer.
  void throughput(const Context& c, const std::optional<memory::Architecture>& arch, double budget, Result& r) {
    perf::add_throughput(c, perf_set(), kb.data_of(r.recipe), arch ? &*arch : nullptr, budget, r);
  }
};

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;
Engine::~Engine() = default;

Engine Engine::embedded() { return Engine(std::make_unique<Impl>(std::string())); }
Engine Engine::open(const std::string& path) {
  if (path.empty()) throw std::runtime_error("error: --kb needs a file name");
  return Engine(std::make_unique<Impl>(path));
}

const std::vector<std::string>& Engine::languages() const { return impl_->kb.languages(); }
int Engine::schema_version() const { return kb::kSchemaVersion; }
std::vector<std::string> Engine::source_files() const { return impl_->kb.source_files(); }
const Labels& Engine::labels(const std::string& lang) { return impl_->kb.labels(lang); }
const std::string& Engine::base_language() { return impl_->kb.settings().base_language; }
std::vector<Engine::CodeSnapshot> Engine::code_snapshots() { return impl_->kb.code_snapshots(); }
std::vector<std::string> Engine::gpu_keys() {
  std::vector<std::string> out;
  for (const auto& g : impl_->kb.snapshot().gpus) out.push_back(g.key);
  return out;
}

namespace {

// A layout whose data parallelism cannot keep the recipe's global batch
// (12 GPUs, GBS 512: 510) changes convergence, and the answer says so; it
// then also names the nearest GPU counts of this type, one below and one
// above, on which the recipe runs with its own batch. The counts tried are
// whole nodes or fewer than one node, at most kTries on each side.
void same_batch(Engine::Impl& e, const Context& c, const Ask& ask, Result& top) {
  constexpr int kTries = 8;
  const Batch& B = top.batch;
  if (B.recipe_gbs <= 0 || B.gbs == B.recipe_gbs || top.recipe.kind == RecipeKind::Benchmark) return;
  const std::string gbs_key = c.kb.key_for("gbs");
  for (const auto& [key, value] : ask.fixed)
    if (key == gbs_key) return;  // the user's own batch
  const Gpu* gpu = c.kb.gpu(top.layout.hardware);
  const long long n = top.layout.gpus, per_node = gpu && gpu->per_node > 0 ? gpu->per_node : 1;
  Engine::Impl::Held held(e);  // the same recipe planned up to 2 × kTries times: its facts read once
  auto keeps = [&](long long m) {
    if (m < 1 || (m > per_node && m % per_node != 0)) return false;
    Ask a = ask;
    a.gpus = m;
    const Result r = e.plan(c, top.recipe, a, false, Fewest::Later, Command::None, &held).result;
    return r.runnable && r.batch.gbs == B.recipe_gbs;
  };
  // The nearest count from n in one direction (step -1 or +1) that keeps the batch.
  std::vector<std::string> counts;
  for (const long long step : {-1LL, 1LL}) {
    int tried = 0;
    for (long long m = n + step; m >= 1 && m <= 2 * n + per_node && tried < kTries; m += step) {
      if (m > per_node && m % per_node != 0) continue;
      ++tried;
      if (keeps(m)) {
        counts.push_back(std::to_string(m));
        break;
      }
    }
  }
  if (counts.empty()) return;
  const std::string said = c.label("caveat.same_batch", {{"gbs", std::to_string(B.recipe_gbs)},
                                                         {"counts", kb::join(counts, " " + c.label("or") + " ")},
                                                         {"hardware", top.layout.hardware_name}});
  // Beside the batch's own caveat when the default text shows it; the
  // caveats stay at most three (the rest are notes).
  const std::string batch_caveat = gbs_key + "=";
  auto at = std::find_if(top.caveats.begin(), top.caveats.end(), [&](const std::string& x) { return x.rfind(batch_caveat, 0) == 0; });
  if (at == top.caveats.end()) {
    top.notes.insert(top.notes.begin(), said);
    return;
  }
  top.caveats.insert(at + 1, said);
  while (top.caveats.size() > 3) {
    top.notes.insert(top.notes.begin(), top.caveats.back());
    top.caveats.pop_back();
  }
}

// The registered name that trains `rc` in the precision asked, on its
// GPU (the config key of dimension precision, config-keys.tsv, and the
// names the code registers for it): the override the user can add,
// said as a convergence change. Of several, a factory's own name (not its
// hyphenated alias), the one sharing the longest start with the name of
// the recipe's own precision (bf16_mixed: bf16_with_mxfp8_mixed, not
// fp16_with_mxfp8_mixed), then the shortest.
std::optional<std::string> precision_override(const Context& c, Kb& kb, const Recipe& rc, const std::string& asked, const Gpu* gpu) {
  const std::string key = c.kb.key_for("precision");
  if (key.empty() || asked.empty()) return std::nullopt;
  const std::vector<Kb::RegistryEntry> names = kb.registry(key);
  std::string own;
  for (const auto& e : names)
    if (e.canonical && e.precision == rc.runs_in && (own.empty() || e.name.size() < own.size())) own = e.name;
  const auto shared = [&](const std::string& n) { return kb::shared_prefix(n, own); };
  std::optional<Kb::RegistryEntry> best;
  for (const auto& e : names) {
    if (!e.canonical || !kb::starts_with(e.precision, asked) || (gpu && !c.kb.runs(e.precision, *gpu).value_or(false))) continue;
    if (!best || std::make_tuple(shared(e.name), -static_cast<long>(e.name.size())) >
                     std::make_tuple(shared(best->name), -static_cast<long>(best->name.size())))
      best = e;
  }
  if (!best) return std::nullopt;
  const PrecisionInfo* p = c.kb.precision(best->precision);
  return c.label(
      "warn.precision_override",
      {{"precision", p ? p->display : best->precision}, {"override", key + "=" + best->name}, {"at", best->at}, {"recipe", rc.name}});
}

// The verdict of an answer from its first result, with the fewest GPUs and
// what fits instead when nothing runs.
void conclude(Engine::Impl& e, const Context& c, const Ask& ask, Answer& a) {
  if (a.results.empty()) {
    a.verdict = Outcome::NoMatch;
    return;
  }
  const Result& top = a.results.front();
  // A benchmark asked with no GPU type, none of which is written for the
  // GPU type assumed: the top one runs on its own GPUs, and the warning
  // says so instead of naming a GPU type the answer does not use.
  if (ask.kind() == RecipeKind::Benchmark && ask.hardware_assumed && top.layout.hardware != ask.hardware) {
    const std::string assumed = c.label("warn.hardware_assumed", {{"hardware", c.kb.gpu_name(ask.hardware)}});
    for (auto& w : a.warnings)
      if (w == assumed)
        w = c.label("warn.hardware_benchmark_own", {{"assumed", c.kb.gpu_name(ask.hardware)},
                                                    {"hardware", c.kb.gpu_name(top.layout.hardware)},
                                                    {"model", top.recipe.model.empty() ? top.recipe.model_key : top.recipe.model}});
  }
  // A precision asked that no recipe has: said, not silently dropped.
  for (const auto& p : top.parts)
    if (p.name == "precision" && p.points > 0 && !ask.precision.empty()) {
      const Recipe& rc = top.recipe;
      const PrecisionInfo* code = c.kb.precision(rc.runs_in);
      const std::string has = code                           ? code->display
                              : !rc.native_precision.empty() ? rc.native_precision
                              : !rc.low_precision.empty()    ? rc.low_precision
                                                             : c.settings().default_precision;
      a.warnings.push_back(c.label("warn.precision", {{"precision", ask.precision}, {"recipe", rc.name}, {"has", has}}));
      // A benchmark recipe of the same model and mode that trains in the
      // asked precision on this GPU type (the launcher loads it by name as
      // well): named, the one for the asked GPUs first.
      if (rc.kind == RecipeKind::Library) {
        const Gpu* gpu = c.kb.gpu(top.layout.hardware);
        const Recipe* twin = nullptr;
        const auto rank_of = [&](const Recipe& b) {
          return std::make_pair(b.native_hardware != top.layout.hardware,
                                b.native_gpus ? std::llabs(*b.native_gpus - top.layout.gpus) : std::numeric_limits<long long>::max());
        };
        for (const auto& b : e.kb.catalog(RecipeKind::Benchmark).recipes)
          if (b.model_key == rc.model_key && b.mode == rc.mode && kb::starts_with(b.runs_in, ask.precision) && b.raises.empty() &&
              (!gpu || c.kb.runs(b.runs_in, *gpu).value_or(true)) && (!twin || rank_of(b) < rank_of(*twin)))
            twin = &b;
        if (twin) {
          const PrecisionInfo* tp = c.kb.precision(twin->runs_in);
          a.warnings.push_back(
              c.label("warn.precision_benchmark", {{"recipe", twin->name}, {"precision", tp ? tp->display : twin->runs_in}}));
        }
        if (auto hint = precision_override(c, e.kb, rc, ask.precision, gpu)) a.warnings.push_back(*hint);
      }
    }
  if (a.results.front().runnable) {
    a.verdict = Outcome::Ok;
    if (a.request == Request::Ask) same_batch(e, c, ask, a.results.front());
    return;
  }
  a.verdict = Outcome::NotPossible;
  a.min_gpus = a.results.front().min_gpus;
  if (a.request != Request::Ask) return;
  // No count asked, and none fits: the verdict is about every count tried,
  // not the recipe's own one the layout shows.
  if (ask.gpus == 0 && a.min_gpus == 0) a.searched_up_to = c.settings().max_world;
  const Result& best = a.results.front();
  // An alternative is offered only if it fits: its fewest GPUs are never
  // searched. The alternatives plan best again and again (with recompute,
  // on its fewest GPUs, on each larger GPU): the facts of what they plan
  // are kept until they are done.
  Engine::Impl::Held held(e);
  const PlanFn plan = [&](const Recipe& r, const Ask& asked, Fewest fewest) {
    return e.plan(c, r, asked, false, fewest, Command::Later, &held);
  };
  // The alternatives read the recipes of best's model and of its family's
  // (models.tsv), and of the functions they share (a smaller model, LoRA of
  // the same model, each function's preferred name): not every recipe, unless loaded already.
  std::vector<std::string> models{best.recipe.model_key};
  if (const ModelBrief* m = c.kb.model(best.recipe.model_key); m && !m->family.empty())
    for (const auto& [key, brief] : c.kb.models)
      if (brief.family == m->family && key != best.recipe.model_key) models.push_back(key);
  const auto recipes = [&](RecipeKind kind) -> const Catalog& {
    return e.kb.has_catalog(kind) ? e.kb.catalog(kind) : e.kb.catalog_of_models(kind, models);  // --batch: loaded
  };
  a.alternatives = alternatives(c, ask, best, recipes(RecipeKind::Library), recipes(best.recipe.kind), plan);
}

// The exported names nearest a name the code does not export (a bounded
// edit distance: a name of kMaxQuestionBytes costs no more than a short one).
std::vector<std::string> nearest_names(Kb& kb, const std::string& name) {
  std::vector<std::string> names;
  for (RecipeKind kind : {RecipeKind::Library, RecipeKind::Benchmark})
    for (const auto& r : kb.catalog(kind).recipes) names.push_back(r.name);
  return kb::nearest(name, names, 3);
}

// A text the user gave (a question, a recipe name, an override) over the
// limits of kbq::dsl::check_input: the error, else nothing. Only a
// question is printed back with a caret under the offending byte.
std::optional<Error> input_error(std::string_view text, std::string_view what, bool question = false) {
  const auto e = kbq::dsl::check_input(text, what);
  if (!e) return std::nullopt;
  return Error{e->message, e->hint, question ? e->span.col : 0, question ? e->span.len : 0};
}

Error unknown_recipe(Kb& kb, const std::string& name) {
  const auto docs = kb.doc_recipe(name);
  std::string message =
      kb.commit().empty() ? "unknown recipe '" + name + "': the KB has no code facts (compiled without kb-sources/code), so no recipe runs"
                          : "unknown recipe '" + name + "': Megatron Bridge (" + kb.commit() + ") exports no recipe of that name";
  if (!docs.empty())
    message += "; the documents name it (" + docs.front().file + ":" + std::to_string(docs.front().line) + ", revision " +
               std::to_string(docs.front().revision) + ")";
  return Error{message, "did you mean " + kb::join(nearest_names(kb, name), ", ") + "?"};
}

// The answer to a request about one recipe, before its result is planned.
Answer one_recipe_answer(Request request, const std::string& recipe, const std::string& lang) {
  Answer a;
  a.request = request;
  a.query = recipe;
  a.lang = lang;
  return a;
}

// Checks, ranks and concludes an answer of one planned result.
void finish_one(Engine::Impl& e, const Context& c, const Ask& ask, Planned& p, Answer& a) {
  e.check(c, p);
  e.throughput(c, p.arch, a.token_budget, p.result);
  a.results.push_back(std::move(p.result));
  rank(c, ask, {}, a.results);
  conclude(e, c, ask, a);
}

// The tokens a question asks to train on: its budget (tokens:) times its
// epochs (epochs:, 1 when it gives none); 0 without a budget.
double token_budget(const kbq::dsl::Query& q) {
  const auto tokens = q.filters.find("tokens");
  if (tokens == q.filters.end()) return 0;
  const auto epochs = q.filters.find("epochs");
  return std::atof(tokens->second.c_str()) * (epochs == q.filters.end() ? 1.0 : std::atof(epochs->second.c_str()));
}

// One result per model, mode, sequence and precision class (distinct_key),
// numbered, then the first `limit`.
void keep_distinct(const Context& c, size_t limit, std::vector<Result>& results) {
  std::set<std::string> seen;
  std::vector<Result> kept;
  for (auto& r : results)
    if (seen.insert(distinct_key(r.recipe, c.settings().default_precision)).second) kept.push_back(std::move(r));
  results = std::move(kept);
  for (size_t i = 0; i < results.size(); ++i) results[i].score = static_cast<int>(i + 1);
  if (results.size() > limit) results.resize(limit);
}

// Plans only the candidates that can still be shown. The candidates are
// taken best bound first (rank.hpp: the key a candidate can at best reach,
// without a plan); once `limit` distinct results are planned, a candidate
// whose bound ranks after the last of them cannot be shown, nor can any
// after it. Nor can a candidate whose bound ranks after a planned result of
// its own distinct key (rank.hpp, shadowed; keep_distinct keeps the first of
// a key): it is skipped, as are most of a model's benchmarks on a throughput
// question (one per GPU type, count and precision, few keys). The results
// planned are every candidate that ranks before that last one, less those
// skipped: ranked, they give the answer planning all would (a skipped one
// is neither the first of its key nor of its model, so neither what counts
// toward `last` nor the headline's runner-up). Each gets its
// verdicts (what ranking reads); the fewest GPUs of one that does not fit
// are searched, its launch command built, and its pitfalls, caveats and
// citations written, only if it is shown, and so is its throughput
// (finish_shown; `later` keeps what they read).
struct Later {
  std::shared_ptr<const FewestSearch> fewest;  // set when it does not fit
  std::optional<memory::Architecture> arch;    // the model as sized (the throughput's FLOPs)
};
std::vector<Result> plan_shown(Engine::Impl& e, const Context& c, const Ask& ask, const QuickRefPicks& picks,
                               const std::vector<Candidate>& cands, size_t limit, size_t models, std::map<std::string, Later>& later,
                               Engine::Impl::Held& held) {
  struct Bounded {
    const Candidate* cand;
    std::vector<ScorePart> parts;
  };
  std::vector<Bounded> order;
  order.reserve(cands.size());
  for (const auto& cand : cands) order.push_back({&cand, bound(c, ask, picks, *cand.recipe, cand.substitute)});
  std::stable_sort(order.begin(), order.end(), [](const Bounded& a, const Bounded& b) {
    return ranks_before(a.parts, a.cand->recipe->name, b.parts, b.cand->recipe->name);
  });
  std::vector<Result> planned;   // in rank order, by their score parts
  const Result* last = nullptr;  // the limit-th distinct planned result
  for (const auto& b : order) {
    if (last && ranks_before(last->parts, last->recipe.name, b.parts, b.cand->recipe->name)) break;
    if (shadowed(planned, *b.cand->recipe, b.parts, c.settings().default_precision)) continue;
    Planned p = e.plan(c, *b.cand->recipe, ask, b.cand->substitute, Fewest::Later, Command::Later, &held);
    later.emplace(p.result.recipe.name, Later{p.fewest, p.arch});
    check_verdicts(c, p.model, p.result);
    p.result.parts = score_parts(c, ask, picks, p.result);
    auto at = std::upper_bound(planned.begin(), planned.end(), p.result, [](const Result& x, const Result& y) {
      return ranks_before(x.parts, x.recipe.name, y.parts, y.recipe.name);
    });
    planned.insert(at, std::move(p.result));
    std::set<std::string> seen, models_seen;
    last = nullptr;
    for (const auto& r : planned) {
      const bool fresh = seen.insert(distinct_key(r.recipe, c.settings().default_precision)).second;
      const bool fresh_model = models_seen.insert(r.recipe.model_key).second;
      if ((fresh || fresh_model) && seen.size() >= limit && models_seen.size() >= models) {
        last = &r;
        break;
      }
    }
    // A result ranked after the last shown stays after it (a later plan
    // goes before it or after): its facts are dropped, the others' held for
    // their throughput.
    for (auto it = planned.end(); last && it != planned.begin() && &*(it - 1) != last;) held.drop((--it)->recipe);
  }
  return planned;
}

// A warning of the query language in the answer's language (answer labels).
std::string dsl_warning(const Context& c, const kbq::dsl::Warning& w) {
  auto quoted = [](const std::string& s) { return "'" + s + "'"; };
  switch (w.kind) {
    case kbq::dsl::WarningKind::Typo:
      if (w.candidates.size() > 1) {
        std::vector<std::string> each;
        for (const auto& x : w.candidates) each.push_back(quoted(x));
        return c.label("warn.typo", {{"word", quoted(w.word)}, {"suggestion", kb::join(each, " " + c.label("or") + " ")}});
      }
      return c.label("warn.typo", {{"word", quoted(w.word)}, {"suggestion", quoted(w.suggestion)}});
    case kbq::dsl::WarningKind::Corrected:
      return c.label("warn.corrected", {{"word", quoted(w.word)}, {"corrected", quoted(w.suggestion)}});
    case kbq::dsl::WarningKind::UnknownGpu:
      return c.label("warn.unknown_gpu", {{"gpu", quoted(w.shown)}});
  }
  return w.message;
}

// The shown results completed as check() would have: their launch command,
// the fewest GPUs of those that do not fit, then their pitfalls, caveats and
// citations; then their throughput and time to train a token budget of
// `budget` tokens.
void finish_shown(Engine::Impl& e, const Context& c, const std::map<std::string, Later>& later, double budget,
                  std::vector<Result>& results) {
  for (auto& r : results) {
    finish_command(c, r);
    const auto it = later.find(r.recipe.name);
    if (it != later.end() && it->second.fewest) r.min_gpus = fewest_gpus(c, *it->second.fewest);
    annotate(c, e.kb.drift(r.recipe.name), r);
    if (it != later.end()) e.throughput(c, it->second.arch, budget, r);
  }
}

}  // namespace

std::variant<Answer, Error> Engine::ask(const std::string& question, const AskOptions& opts) {
  if (auto err = input_error(question, "the question", true)) return *err;
  Kb& kb = impl_->kb;
  // For this answer only: show and check keep what they read.
  struct KeepFacts {
    bool& keep;
    ~KeepFacts() { keep = true; }
  } const restore{impl_->keep_facts};
  impl_->keep_facts = opts.keep_facts;
  // parse
  const auto parsed = kbq::dsl::parse(kb.lexicon(), question);
  if (parsed.error) return Error{parsed.error->message, parsed.error->hint, parsed.error->span.col, parsed.error->span.len};
  const kbq::dsl::Query& q = parsed.query;
  Answer a;
  a.request = Request::Ask;
  a.query = q.text;
  a.canonical = kbq::dsl::to_canonical(q);
  a.lang = !opts.lang.empty() ? opts.lang : !q.lang.empty() ? q.lang : base_language();
  const Context c = impl_->context(a.lang);
  auto resolved = resolve_terms(c, q);
  if (auto* err = std::get_if<Error>(&resolved)) return *err;
  Ask& ask = std::get<Ask>(resolved);
  // A question naming a model reads the recipes of its family (and of
  // names that start alike), one naming none those of its mode; every
  // recipe where the answer depends on the others (candidates() says so),
  // or once every recipe is read anyway (--batch).
  const bool by_family = !ask.model.empty();
  const auto family = [&](RecipeKind kind) -> const Catalog& {
    return kb.has_catalog(kind) ? kb.catalog(kind) : kb.catalog(kind, ask.model);
  };
  if (by_family)
    benchmarks_for_benchmark_only_family(
        c, family(RecipeKind::Library), [&]() -> const Catalog& { return family(RecipeKind::Benchmark); }, ask, a);
  resolve_words(
      c, q, [&]() -> const NameTokens& { return impl_->name_tokens_of(ask.kind()); }, ask, a);
  // The query language's warnings come first, once the words recipe names
  // carry are known: such a word is no typo.
  std::vector<std::string> parse_warnings;
  for (const auto& w : q.warnings)
    if (w.kind != kbq::dsl::WarningKind::Typo || std::find(ask.name_words.begin(), ask.name_words.end(), w.word) == ask.name_words.end())
      parse_warnings.push_back(dsl_warning(c, w));
  a.warnings.insert(a.warnings.begin(), parse_warnings.begin(), parse_warnings.end());
  // plan and check: the candidates on a GPU that runs their precision, then
  // those that can still be shown
  const RecipeKind kind = ask.kind();
  const bool whole = kb.has_catalog(kind) || (!by_family && ask.mode.empty());
  CatalogPart part{by_family ? CatalogPart::Of::Family : CatalogPart::Of::Mode};
  const Answer before = whole ? Answer{} : a;
  auto cands = whole ? candidates(c, ask, kb.catalog(kind), a)
                     : candidates(c, ask, by_family ? kb.catalog(kind, ask.model) : kb.catalog_of_mode(kind, ask.mode), a, &part);
  if (!part.enough) {
    a = before;
    cands = candidates(c, ask, kb.catalog(kind), a);
  }
  if (!cands.empty()) keep_runnable_precision(c, ask, cands, a);
  const QuickRefPicks picks = quick_ref_picks(kb.quick_ref_rows(), ask);
  const auto limit = static_cast<size_t>(std::max(opts.limit, 1));
  std::map<std::string, Later> later;
  // A question naming no model says which model wins and the runner-up:
  // planned until two models are (limit or not).
  const bool no_model = ask.model.empty();
  Impl::Held held(*impl_);  // the facts of the results shown, until the answer is made
  a.results = plan_shown(*impl_, c, ask, picks, cands, limit, no_model ? 2 : 0, later, held);
  // rank
  rank(c, ask, picks, a.results);
  if (no_model) a.headline = no_model_headline(c, a.results);
  keep_distinct(c, limit, a.results);
  a.token_budget = token_budget(q);
  finish_shown(*impl_, c, later, a.token_budget, a.results);
  conclude(*impl_, c, ask, a);
  return a;
}

std::variant<Answer, Error> Engine::show(const std::string& recipe, const std::string& lang) {
  if (auto err = input_error(recipe, "the recipe name")) return *err;
  Kb& kb = impl_->kb;
  auto rc = kb.recipe(recipe);
  if (!rc) return unknown_recipe(kb, recipe);
  const Context c = impl_->context(lang);
  Answer a = one_recipe_answer(Request::Show, recipe, lang);
  // A library name the benchmark package exports too: run_recipe.py
  // --recipe NAME loads the benchmark definition (recipe_runner.py
  // load_recipe), so that is what the command runs and what is shown; the
  // library function is reached through its generic alias, said.
  std::optional<Recipe> shadowed_library;
  if (rc->kind == RecipeKind::Library && rc->shadowed)
    if (auto twin = kb.recipe(recipe, RecipeKind::Benchmark)) {
      shadowed_library = rc;
      rc = twin;
    }
  Ask ask;
  ask.hardware = !rc->native_hardware.empty() ? rc->native_hardware : c.settings().default_gpu;
  ask.hardware_assumed = rc->native_hardware.empty();
  Planned p = impl_->plan(c, *rc, ask, false);
  if (shadowed_library) {
    std::string alias;
    for (const auto& r : kb.catalog(RecipeKind::Library).recipes)
      if (r.target == shadowed_library->target && r.name != recipe && !r.shadowed && (alias.empty() || r.name < alias)) alias = r.name;
    const auto n = [](const std::optional<long long>& v) { return v ? std::to_string(*v) : std::string("?"); };
    p.result.departures.push_back(c.label(alias.empty() ? "caveat.runner_benchmark" : "caveat.runner_benchmark_alias",
                                          {{"name", recipe},
                                           {"at", shadowed_library->shadowed_at},
                                           {"layout", "TP " + n(shadowed_library->tp) + " · PP " + n(shadowed_library->pp) + " · CP " +
                                                          n(shadowed_library->cp) + " · EP " + n(shadowed_library->ep)},
                                           {"alias", alias}}));
  }
  finish_one(*impl_, c, ask, p, a);
  return a;
}

std::variant<Answer, Error> Engine::fewest(const std::string& recipe, const std::string& hardware, const std::string& lang) {
  if (auto err = input_error(recipe, "the recipe name")) return *err;
  Kb& kb = impl_->kb;
  auto rc = kb.recipe(recipe);
  if (!rc) return unknown_recipe(kb, recipe);
  const Context c = impl_->context(lang);
  if (!c.kb.gpu(hardware)) return Error{"unknown GPU type '" + hardware + "'", {}};
  Answer a = one_recipe_answer(Request::Show, recipe, lang);
  Ask ask;
  ask.hardware = hardware;
  ask.fewest = true;
  Planned p = impl_->plan(c, *rc, ask, false);
  finish_one(*impl_, c, ask, p, a);
  return a;
}

namespace {

// An override naming an entry of a registry the code looks a str value up in
// (`mixed_precision=bf16_with_fp8_current_scaling_mixed`): a name the code
// does not register fails at start-up, so it is an error here; a registered
// one sets what the recipe runs in, which the check stage then judges on the
// user's GPU (precision_runs) as it judges a recipe's own precision.
std::optional<Error> registry_overrides(const Context& c, Kb& kb, const KeyValues& fixed, Recipe& r, std::vector<std::string>& notes) {
  for (const auto& [k, v] : fixed) {
    const std::vector<Kb::RegistryEntry> names = kb.registry(k);
    if (names.empty() || v == c.settings().none_literal) continue;
    const auto it = std::find_if(names.begin(), names.end(), [&v = v](const Kb::RegistryEntry& e) { return e.name == v; });
    if (it == names.end()) {
      std::vector<std::string> all;
      for (const auto& e : names) all.push_back(e.name);
      const std::string& at = names.front().at;
      return Error{"override '" + k + "=" + v + "': the code registers no " + k + " named '" + v + "', and raises at start-up for it",
                   "did you mean " + kb::join(kb::nearest(v, all, 3), ", ") + "? (the " + std::to_string(all.size()) + " names " +
                       at.substr(0, at.rfind(':')) + " registers)"};
    }
    const PrecisionInfo *own = c.kb.precision(r.runs_in), *to = c.kb.precision(it->precision);
    if (to && own && own != to)
      notes.push_back(c.label("note.override_precision",
                              {{"override", k + "=" + v}, {"precision", to->display}, {"at", it->at}, {"own", own->display}}));
    r.runs_in = it->precision;
    r.runs_in_at = it->at;
    r.runs_in_override = k + "=" + v;
  }
  return std::nullopt;
}

}  // namespace

std::variant<Answer, Error> Engine::check(const std::string& recipe, long long gpus, const KeyValues& overrides,
                                          const std::string& hardware, const std::string& lang) {
  if (auto err = input_error(recipe, "the recipe name")) return *err;
  if (auto err = input_error(hardware, "the --hardware value")) return *err;
  for (const auto& [k, v] : overrides)
    if (auto err = input_error(k + "=" + v, "the override")) return *err;
  Kb& kb = impl_->kb;
  auto rc = kb.recipe(recipe);
  if (!rc) return unknown_recipe(kb, recipe);
  const Context c = impl_->context(lang);
  Answer a = one_recipe_answer(Request::Check, recipe, lang);
  Ask ask;
  ask.gpus = gpus;
  ask.hardware = hardware.empty() ? c.settings().default_gpu : hardware;
  ask.hardware_assumed = hardware.empty();
  if (!c.kb.gpu(ask.hardware)) {
    std::vector<std::string> known;
    for (const auto& g : c.kb.gpus) known.push_back(g.key);
    return Error{"unknown GPU type '" + hardware + "'", "--hardware takes one of " + kb::join(known, ", ")};
  }
  std::vector<std::string> notes;
  auto fixed = resolve_overrides(c, kb.code_config_keys(), overrides, notes, a.warnings);
  if (auto* err = std::get_if<Error>(&fixed)) return *err;
  ask.fixed = std::get<KeyValues>(fixed);
  if (auto err = registry_overrides(c, kb, ask.fixed, *rc, notes)) return *err;
  // Every size the user did not set stays the recipe's own: `check` judges
  // the user's layout, it does not plan another.
  for (const auto& [d, name] : kDimNames) {
    const std::string key = c.kb.key_for(name);
    if (key.empty()) continue;
    const bool set = std::any_of(ask.fixed.begin(), ask.fixed.end(), [&](const auto& kv) { return kv.first == key; });
    const std::optional<long long> own = d == Dim::TP    ? rc->tp
                                         : d == Dim::PP  ? rc->pp
                                         : d == Dim::CP  ? rc->cp
                                         : d == Dim::EP  ? rc->ep
                                         : d == Dim::ETP ? rc->etp
                                                         : rc->vp;
    if (!set && own) ask.fixed.emplace_back(key, std::to_string(*own));
  }
  if (ask.hardware_assumed) a.warnings.push_back(c.label("warn.hardware_assumed", {{"hardware", c.kb.gpu_name(ask.hardware)}}));
  Planned p = impl_->plan(c, *rc, ask, false);
  for (auto& n : notes) p.result.notes.insert(p.result.notes.begin(), n);
  finish_one(*impl_, c, ask, p, a);
  return a;
}

namespace {

Listing listing(Kb& kb, const std::string& kind, const std::string& lang) {
  Listing l;
  l.kind = kind;
  l.lang = lang;
  const std::string& base = kb.snapshot().settings.base_language;
  for (const auto& key : kb.entity_keys(kind)) {
    const EntityRef e{kind, key};
    const auto& texts = kb.entity(kind, key);
    ListItem it;
    it.id = kind + "/" + key;
    it.key = key;
    it.prose = prose(texts, e, lang, base);
    it.text = it.prose.text;
    if (kind == "pitfall") it.text += " — " + prose(texts, e, lang, base, "symptom").text + " → " + prose(texts, e, lang, base, "fix").text;
    l.items.push_back(std::move(it));
  }
  return l;
}

}  // namespace

Listing Engine::rules(const std::string& lang) { return listing(impl_->kb, "rule", lang); }
Listing Engine::pitfalls(const std::string& lang) { return listing(impl_->kb, "pitfall", lang); }
SourcesReport Engine::sources() { return impl_->kb.sources_report(); }

std::variant<PerfListing, Error> Engine::perf(const std::string& model, bool history) {
  const auto tables = impl_->kb.perf_listing_tables();
  return perf::perf_listing(*tables, perf::build_perf(*tables), model, history);
}

PerfDerivation Engine::derive_perf() {
  const perf::PerfSet set = perf::build_perf(std::move(*impl_->kb.perf_sources()));
  PerfDerivation d;
  d.rows.reserve(set.rows.size());
  for (const auto& r : set.rows)
    d.rows.push_back({r.m.id, r.m.arch_class, r.flops_error.empty() ? std::optional<double>(r.m.flops) : std::nullopt, r.flops_error});
  for (const auto& [platform, pairs] : set.factors.pairs) {
    const auto f = set.factors.log_factor.find(platform);
    d.platforms.push_back({platform, pairs, f == set.factors.log_factor.end() ? std::nullopt : std::optional<double>(f->second)});
  }
  d.bf16_bridged.assign(set.factors.bf16_bridged.begin(), set.factors.bf16_bridged.end());
  return d;
}

std::string Engine::compile_perf() {
  std::string bytes = perf::to_stored(*impl_->kb.perf_estimate_rows());
  (void)perf::from_stored(bytes);  // kbc writes nothing kbq would refuse
  return bytes;
}

std::vector<std::string> Engine::compile_recipes() {
  Kb& kb = impl_->kb;
  // Each with the floor under its parameter state, from its own sizing (the
  // one an answer's plan makes when the question overrides nothing): an
  // answer then knows a recipe cannot fit before it plans it (rank.hpp bound).
  std::vector<Recipe> recipes = kb.recipes_from_tables();
  const memory::Params& params = kb.snapshot().memory;
  for (Recipe& r : recipes) {
    const Sizing s = size_recipe(kb.data_of(r));
    if (s.sized) r.state_floor = memory::state_floor(s.arch, s.training, params);
  }
  std::vector<std::string> chunks = stored_recipes::to_stored(recipes);
  // kbc writes nothing kbq would refuse: every recipe read back.
  stored_recipes::Index index(chunks);
  Recipe r;
  for (const auto& e : index.entries()) index.read(e, r);
  return chunks;
}

std::variant<RecipeList, Error> Engine::list(const ListOptions& opts) {
  Kb& kb = impl_->kb;
  const std::string text = kb::join(opts.words, " ");
  kbq::dsl::Query q;
  if (!kb::trim(text).empty()) {
    auto parsed = kbq::dsl::parse(kb.lexicon(), text);
    if (parsed.error) return Error{parsed.error->message, parsed.error->hint, parsed.error->span.col, parsed.error->span.len};
    q = std::move(parsed.query);
  }
  const Context c = impl_->context(opts.lang.empty() ? base_language() : opts.lang);
  return list_recipes(c, q, opts, kb.catalog(RecipeKind::Library), kb.catalog(RecipeKind::Benchmark));
}

Response respond(Engine& engine, const std::string& question, const AskOptions& ask, const RenderOptions& ro) {
  Response out;
  auto res = engine.ask(question, ask);
  if (auto* err = std::get_if<Error>(&res)) {
    out.err = render_error(*err, question, ro);
    out.exit_code = 2;
    return out;
  }
  const Answer& a = std::get<Answer>(res);
  if (ro.format == Format::Slurm) {  // the script, or why there is none (exit 1)
    auto script = render_slurm(a, engine.labels(a.lang));
    if (auto* e = std::get_if<Error>(&script)) {
      out.err = render_error(*e, question, ro);
      out.exit_code = 1;
    } else {
      out.out = std::get<std::string>(script);
    }
    return out;
  }
  out.out = render(a, engine.labels(a.lang), ro);
  out.exit_code = a.verdict == Outcome::Ok ? 0 : 1;
  return out;
}

}  // namespace kbq
