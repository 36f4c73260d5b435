// The engine behind query/kbq.hpp: opens the KB and runs each request
// through the stages in order, parse → plan → check → rank (→ render in
// respond()). The only file of the engine that calls more than one stage.
#include <algorithm>

#include "base/dsl/parse.hpp"
#include "base/schema_version.hpp"
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

Range& Layout::at(Dim d) { return const_cast<Range&>(static_cast<const Layout&>(*this).at(d)); }

const Range& Layout::at(Dim d) const {
  switch (d) {
    case Dim::TP:
      return tp;
    case Dim::PP:
      return pp;
    case Dim::CP:
      return cp;
    case Dim::EP:
      return ep;
    case Dim::ETP:
      return etp;
    case Dim::VP:
      break;
  }
  return vp;
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

std::variant<Answer, Error> Engine::ask(const std::string& question, const AskOptions& opts) {
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
  // plan
  Ranker ranker(kb, q, c.threshold);
  auto planned = plan_question(c, q, ranker, static_cast<size_t>(std::max(opts.limit, 0)), a);
  if (auto* err = std::get_if<Error>(&planned)) return *err;
  a.results = std::move(std::get<std::vector<Result>>(planned));
  // check
  for (auto& r : a.results) kbq::check(c, r);
  // rank
  rank(a.results);
  return a;
}

namespace {

Error unknown_recipe(const std::string& name) {
  return Error{"unknown recipe '" + name + "'", "find recipe names with a question, e.g. kbq \"<model> <mode>\""};
}

}  // namespace

std::variant<Answer, Error> Engine::show(const std::string& recipe, const std::string& lang, const std::string& mode) {
  Kb& kb = impl_->kb;
  auto rc = kb.recipe(recipe, mode);
  if (!rc) return unknown_recipe(recipe);
  Context c = make_context(kb, lang);
  Answer a;
  a.request = Request::Show;
  a.query = recipe;
  a.lang = lang;
  a.results.push_back(plan_recipe(c, *rc, 0, {}, {}));
  kbq::check(c, a.results.back());
  return a;
}

std::variant<Answer, Error> Engine::check(const std::string& recipe, long long gpus, const KeyValues& overrides,
                                          const std::string& hardware, const std::string& lang) {
  Kb& kb = impl_->kb;
  auto rc = kb.recipe(recipe);
  if (!rc) return unknown_recipe(recipe);
  if (auto err = check_overrides(kb, overrides)) return *err;
  Context c = make_context(kb, lang);
  Answer a;
  a.request = Request::Check;
  a.query = recipe;
  a.lang = lang;
  a.results.push_back(plan_recipe(c, *rc, gpus, hardware, overrides));
  kbq::check(c, a.results.back());
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
  out.exit_code = a.results.empty() ? 1 : 0;
  return out;
}

}  // namespace kbq
