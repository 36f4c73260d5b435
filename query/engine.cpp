// The engine behind query/kbq.hpp: opens the KB and runs each request
// through the stages in order, parse → plan → check → rank (→ render in
// respond()). The only file of the engine that calls more than one stage.
#include <algorithm>
#include <set>

#include "base/dsl/parse.hpp"
#include "base/schema_version.hpp"
#include "base/text.hpp"
#include "query/check/check.hpp"
#include "query/kb/kb.hpp"
#include "query/kbq.hpp"
#include "query/plan/plan.hpp"
#include "query/rank/rank.hpp"

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
Labels Engine::labels(const std::string& lang) { return impl_->kb.labels(lang); }

namespace {

// The verdict of an answer from its first result, with the fewest GPUs and
// what fits instead when nothing runs.
void conclude(Context& c, const Ask& ask, Answer& a) {
  if (a.results.empty()) {
    a.verdict = Outcome::NoMatch;
    return;
  }
  // A precision asked that no recipe has: said, not silently dropped.
  const Result& top = a.results.front();
  for (const auto& p : top.parts)
    if (p.name == "precision" && p.points > 0 && !ask.precision.empty()) {
      const Recipe& rc = top.recipe;
      const std::string has = !rc.native_precision.empty() ? rc.native_precision
                              : !rc.low_precision.empty()  ? rc.low_precision
                                                           : c.kb.planner("default_precision");
      a.warnings.push_back(c.label("warn.precision", {{"precision", ask.precision}, {"recipe", rc.name}, {"has", has}}));
    }
  if (a.results.front().runnable) {
    a.verdict = Outcome::Ok;
    return;
  }
  a.verdict = Outcome::NotPossible;
  a.min_gpus = a.results.front().min_gpus;
  if (a.request == Request::Ask) a.alternatives = alternatives(c, ask, a.results.front().recipe);
}

// The exported names nearest a name the code does not export (a bounded
// edit distance: a name of kMaxQuestionBytes costs no more than a short one).
std::vector<std::string> nearest_names(Kb& kb, const std::string& name) {
  std::vector<std::string> names;
  for (RecipeKind kind : {RecipeKind::Library, RecipeKind::Benchmark})
    for (const auto& r : kb.recipes(kind)) names.push_back(r.name);
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
void finish_one(Context& c, const Ask& ask, Answer& a) {
  kbq::check(c, a.results.back());
  rank(c, ask, {}, a.results);
  conclude(c, ask, a);
}

}  // namespace

std::variant<Answer, Error> Engine::ask(const std::string& question, const AskOptions& opts) {
  if (auto err = input_error(question, "the question", true)) return *err;
  Kb& kb = impl_->kb;
  // parse
  const auto parsed = kbq::dsl::parse(kb.lexicon(), question);
  if (parsed.error) return Error{parsed.error->message, parsed.error->hint, parsed.error->span.col, parsed.error->span.len};
  const kbq::dsl::Query& q = parsed.query;
  Answer a;
  a.request = Request::Ask;
  a.query = q.text;
  a.canonical = kbq::dsl::to_canonical(q);
  a.lang = !opts.lang.empty() ? opts.lang : !q.lang.empty() ? q.lang : "en";
  for (const auto& w : q.warnings) a.warnings.push_back(w.message);
  Context c = make_context(kb, a.lang);
  auto resolved = resolve_question(c, q, a);
  if (auto* err = std::get_if<Error>(&resolved)) return *err;
  const Ask& ask = std::get<Ask>(resolved);
  // plan
  const auto cands = candidates(c, ask, a);
  const QuickRefPicks picks = quick_ref_picks(kb, ask);
  for (const auto& cand : cands) a.results.push_back(plan_recipe(c, *cand.recipe, ask, cand.substitute));
  // check
  for (auto& r : a.results) kbq::check(c, r);
  // rank
  rank(c, ask, picks, a.results);
  // One result per model, mode, sequence and precision class: the other
  // names of a recipe (its hardware aliases, its FP8 twins) are one
  // `kbq show` or a precision word away, not alternatives.
  {
    const std::string def = kb.planner("default_precision");
    std::set<std::string> seen;
    std::vector<Result> kept;
    for (auto& r : a.results) {
      const Recipe& rc = r.recipe;
      const bool low = low_precision(rc, def);
      const std::string key = rc.model_key.empty() ? rc.name
                                                   : rc.model_key + "|" + rc.mode + "|" + std::to_string(rc.seq_len.value_or(0)) + "|" +
                                                         (low ? "low" : "") + "|" + std::string(to_string(rc.kind));
      if (seen.insert(key).second) kept.push_back(std::move(r));
    }
    a.results = std::move(kept);
    for (size_t i = 0; i < a.results.size(); ++i) a.results[i].score = static_cast<int>(i + 1);
  }
  if (a.results.size() > static_cast<size_t>(std::max(opts.limit, 1))) a.results.resize(static_cast<size_t>(std::max(opts.limit, 1)));
  conclude(c, ask, a);
  return a;
}

std::variant<Answer, Error> Engine::show(const std::string& recipe, const std::string& lang) {
  if (auto err = input_error(recipe, "the recipe name")) return *err;
  Kb& kb = impl_->kb;
  auto rc = kb.recipe(recipe);
  if (!rc) return unknown_recipe(kb, recipe);
  Context c = make_context(kb, lang);
  Answer a = one_recipe_answer(Request::Show, recipe, lang);
  Ask ask;
  ask.hardware = !rc->native_hardware.empty() ? rc->native_hardware : kb.planner("default_gpu");
  ask.hardware_assumed = rc->native_hardware.empty();
  a.results.push_back(plan_recipe(c, *rc, ask, false));
  // A name both packages export is two functions: the library one (what
  // run_recipe.py --recipe runs, shown) and the benchmark one (what the
  // benchmark launcher runs); when their sizes differ, the answer says so.
  if (rc->kind == RecipeKind::Library)
    if (auto twin = kb.recipe(recipe, RecipeKind::Benchmark);
        twin && (twin->tp != rc->tp || twin->pp != rc->pp || twin->cp != rc->cp || twin->ep != rc->ep)) {
      const auto n = [](const std::optional<long long>& v) { return v ? std::to_string(*v) : std::string("?"); };
      a.results.back().departures.push_back(
          c.label("caveat.also_benchmark",
                  {{"layout", "TP " + n(twin->tp) + " · PP " + n(twin->pp) + " · CP " + n(twin->cp) + " · EP " + n(twin->ep)},
                   {"at", kb.cite(twin->target, "tp")}}));
    }
  finish_one(c, ask, a);
  return a;
}

std::variant<Answer, Error> Engine::fewest(const std::string& recipe, const std::string& hardware, const std::string& lang) {
  if (auto err = input_error(recipe, "the recipe name")) return *err;
  Kb& kb = impl_->kb;
  auto rc = kb.recipe(recipe);
  if (!rc) return unknown_recipe(kb, recipe);
  if (!kb.gpu(hardware)) return Error{"unknown GPU type '" + hardware + "'", {}};
  Context c = make_context(kb, lang);
  Answer a = one_recipe_answer(Request::Show, recipe, lang);
  Ask ask;
  ask.hardware = hardware;
  ask.fewest = true;
  a.results.push_back(plan_recipe(c, *rc, ask, false));
  finish_one(c, ask, a);
  return a;
}

std::variant<Answer, Error> Engine::check(const std::string& recipe, long long gpus, const KeyValues& overrides,
                                          const std::string& hardware, const std::string& lang) {
  if (auto err = input_error(recipe, "the recipe name")) return *err;
  if (auto err = input_error(hardware, "the --hardware value")) return *err;
  for (const auto& [k, v] : overrides)
    if (auto err = input_error(k + "=" + v, "the override")) return *err;
  Kb& kb = impl_->kb;
  auto rc = kb.recipe(recipe);
  if (!rc) return unknown_recipe(kb, recipe);
  Context c = make_context(kb, lang);
  Answer a = one_recipe_answer(Request::Check, recipe, lang);
  Ask ask;
  ask.gpus = gpus;
  ask.hardware = hardware.empty() ? kb.planner("default_gpu") : hardware;
  ask.hardware_assumed = hardware.empty();
  if (!kb.gpu(ask.hardware)) {
    std::vector<std::string> known;
    for (const auto& g : kb.gpus()) known.push_back(g.key);
    return Error{"unknown GPU type '" + hardware + "'", "--hardware takes one of " + kb::join(known, ", ")};
  }
  std::vector<std::string> notes;
  auto fixed = resolve_overrides(c, overrides, notes);
  if (auto* err = std::get_if<Error>(&fixed)) return *err;
  ask.fixed = std::get<KeyValues>(fixed);
  // Every size the user did not set stays the recipe's own: `check` judges
  // the user's layout, it does not plan another.
  for (const auto& [d, name] : kDimNames) {
    const auto keys = kb.config_keys_for(std::string(name));
    if (keys.empty()) continue;
    const bool set = std::any_of(ask.fixed.begin(), ask.fixed.end(), [&](const auto& kv) { return kv.first == keys.front().key; });
    const std::optional<long long> own = d == Dim::TP    ? rc->tp
                                         : d == Dim::PP  ? rc->pp
                                         : d == Dim::CP  ? rc->cp
                                         : d == Dim::EP  ? rc->ep
                                         : d == Dim::ETP ? rc->etp
                                                         : rc->vp;
    if (!set && own) ask.fixed.emplace_back(keys.front().key, std::to_string(*own));
  }
  if (ask.hardware_assumed) a.warnings.push_back(c.label("warn.hardware_assumed", {{"hardware", kb::upper_ascii(ask.hardware)}}));
  a.results.push_back(plan_recipe(c, *rc, ask, false));
  for (auto& n : notes) a.results.back().notes.insert(a.results.back().notes.begin(), n);
  finish_one(c, ask, a);
  return a;
}

namespace {

Listing listing(Kb& kb, const std::string& kind, const std::string& lang) {
  Listing l;
  l.kind = kind;
  l.lang = lang;
  for (const auto& key : kb.entity_keys(kind)) {
    ListItem it;
    it.id = kind + "/" + key;
    it.key = key;
    it.prose = prose(kb, kind, key, lang);
    it.text = it.prose.text;
    if (kind == "pitfall") it.text += " — " + prose(kb, kind, key, lang, "symptom").text + " → " + prose(kb, kind, key, lang, "fix").text;
    l.items.push_back(std::move(it));
  }
  return l;
}

}  // namespace

Listing Engine::rules(const std::string& lang) { return listing(impl_->kb, "rule", lang); }
Listing Engine::pitfalls(const std::string& lang) { return listing(impl_->kb, "pitfall", lang); }
SourcesReport Engine::sources() { return impl_->kb.sources_report(); }

Response respond(Engine& engine, const std::string& question, const AskOptions& ask, const RenderOptions& ro) {
  Response out;
  auto res = engine.ask(question, ask);
  if (auto* err = std::get_if<Error>(&res)) {
    out.err = render_error(*err, question, ro);
    out.exit_code = 2;
    return out;
  }
  const Answer& a = std::get<Answer>(res);
  out.out = render(a, engine.labels(a.lang), ro);
  out.exit_code = a.verdict == Outcome::Ok ? 0 : 1;
  return out;
}

}  // namespace kbq
