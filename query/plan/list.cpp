// `kbq list` (see list.hpp). The words resolve as a question's do
// (resolve_terms, resolve_words); unlike a question, a word that means
// nothing here is an error, and nothing is substituted: the list is what
// the code exports, filtered.
#include "query/plan/list.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/text.hpp"
#include "query/plan/plan_int.hpp"

namespace kbq {

using plan_int::has_token;
using plan_int::in_family;

namespace {

bool keep(const Context& c, const Ask& ask, const std::string& hardware, const Recipe& r) {
  if (!ask.mode.empty() && r.mode != ask.mode) return false;
  if (!ask.launch_mode.empty() && r.launch_mode != ask.launch_mode) return false;
  if (!ask.model.empty() && !in_family(r.name, ask.model) && !in_family(r.model_key, ask.model)) return false;
  if (const ModelBrief* m = c.kb.model(r.model_key);
      !ask.size_token.empty() && !plan_int::of_size(r, ask.size_token, ask.size_params, m ? m->total_params_b : 0))
    return false;
  for (const auto& w : ask.name_words)
    if (!has_token(r.name, w)) return false;
  if (!ask.modalities.empty() && ask.modalities.count(r.modality) == 0) return false;
  // A recipe whose name encodes a GPU type runs on that one; the others on any.
  if (!hardware.empty() && !r.native_hardware.empty() && r.native_hardware != hardware) return false;
  if (!ask.precision.empty() && !r.native_precision.empty() && !kb::starts_with(r.native_precision, ask.precision)) return false;
  if (ask.gpus > 0) {
    if (r.native_gpus) return *r.native_gpus == ask.gpus;
    if (!r.min_gpus || *r.min_gpus <= 0 || *r.min_gpus > ask.gpus || ask.gpus % *r.min_gpus != 0) return false;
  }
  return true;
}

}  // namespace

std::variant<RecipeList, Error> list_recipes(const Context& c, const kbq::dsl::Query& q, const ListOptions& opts, const Catalog& library,
                                             const Catalog& benchmark) {
  auto resolved = resolve_terms(c, q);
  if (auto* err = std::get_if<Error>(&resolved)) return *err;
  Ask& ask = std::get<Ask>(resolved);

  RecipeList out;
  out.query = kb::join(opts.words, " ");
  out.lang = c.lang;
  std::vector<RecipeKind> kinds;
  if (!opts.kind.empty()) {
    const auto kind = kb::parse_kind<RecipeKind>(kb::fold(opts.kind));
    if (!kind)
      return Error{"unknown --kind '" + opts.kind + "'",
                   "one of " + std::string(kb::to_string(RecipeKind::Library)) + ", " + std::string(kb::to_string(RecipeKind::Benchmark))};
    kinds.push_back(*kind);
    ask.benchmark = *kind == RecipeKind::Benchmark;
  } else if (ask.benchmark) {
    kinds.push_back(RecipeKind::Benchmark);
  } else {
    kinds = {RecipeKind::Library, RecipeKind::Benchmark};
  }
  if (kinds.size() == 1) out.kind = std::string(kb::to_string(kinds.front()));

  std::string hardware = ask.hardware_assumed ? std::string() : ask.hardware;
  if (!opts.hardware.empty()) {
    const std::string key = kb::fold(opts.hardware);
    if (!c.kb.gpu(key)) return Error{"unknown GPU type '" + opts.hardware + "'", "the KB has " + kb::join(plan_int::gpu_keys(c.kb), ", ")};
    if (!hardware.empty() && hardware != key)
      return Error{"two GPU types: '" + hardware + "' in the words and --hardware " + opts.hardware, "name one"};
    hardware = key;
  }
  out.hardware = hardware;

  // Every word must mean something: a term of the lexicon, or a word of
  // some recipe's name (of the kinds listed).
  NameTokens tokens;
  for (RecipeKind k : kinds) tokens.merge(name_tokens(k == RecipeKind::Library ? library : benchmark));
  Answer scratch;
  resolve_words(c, q, tokens, ask, scratch);
  if (!ask.unknown_model_words.empty())
    return Error{"no recipe of model '" + kb::join(ask.unknown_model_words, " ") + "'", "kbq list shows every model's recipes"};
  using kbq::dsl::TermKind;
  for (const auto& t : q.terms) {
    if (t.kind == TermKind::FreeText && tokens.count(kb::fold(t.text)) > 0) continue;
    if (t.kind == TermKind::FreeText || t.kind == TermKind::Unknown) {
      std::string hint = "e.g. kbq list sft llama3";
      for (const auto& w : q.warnings)
        if (w.span == t.span && !w.suggestion.empty()) hint = "did you mean '" + w.suggestion + "'?";
      return Error{"'" + t.text + "' is not a mode, model, size or word of a recipe name", hint, t.span.col, t.span.len};
    }
    // What a list cannot filter by (a sequence length, a budget, tp:2) is
    // said, never dropped.
    const bool used = t.kind == TermKind::Mode || t.kind == TermKind::Model || t.kind == TermKind::Size || t.kind == TermKind::Gpus ||
                      t.kind == TermKind::Nodes || t.kind == TermKind::Hardware || t.kind == TermKind::Precision ||
                      t.kind == TermKind::Intent || t.kind == TermKind::Stopword || (t.kind == TermKind::Filter && t.field == "kind");
    if (!used)
      return Error{
          "'" + t.text + "' (" + std::string(kbq::dsl::to_string(t.kind)) + ") is not something kbq list filters by",
          "kbq list takes a mode, a model and size, a GPU count and type, a precision; ask the question instead: kbq \"" + q.text + "\"",
          t.span.col, t.span.len};
  }
  out.mode = ask.mode;
  out.model = ask.model + (ask.size_token.empty() ? "" : (ask.model.empty() ? "" : " ") + ask.size_token);

  for (RecipeKind k : kinds)
    for (const auto& r : (k == RecipeKind::Library ? library : benchmark).recipes)
      if (keep(c, ask, hardware, r)) out.recipes.push_back(r);
  std::stable_sort(out.recipes.begin(), out.recipes.end(), [](const Recipe& x, const Recipe& y) {
    return std::make_pair(static_cast<int>(x.kind), x.name) < std::make_pair(static_cast<int>(y.kind), y.name);
  });
  return out;
}

}  // namespace kbq
