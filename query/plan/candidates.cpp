// Plan stage: the recipes a question's constraints allow (see plan.hpp).
// Step by step, each one able to end the answer with what exists instead:
// (a) the mode and the free words recipe names carry, (b) the model family
// and size (the nearest size or a sibling of the family as a marked
// substitute), (c) the modality, then, for benchmarks, the GPU count,
// hardware and precision their names encode; one name per recipe function.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "query/plan/plan_int.hpp"

namespace kbq {

using plan_int::asked_precision_name;
using plan_int::has_token;
using plan_int::in_family;
using plan_int::precisions_asked;

namespace {

using Pool = std::vector<const Recipe*>;

// The recipes of a model prefix's family, by name or model key.
bool of_family(const Recipe& r, const std::string& prefix) { return in_family(r.name, prefix) || in_family(r.model_key, prefix); }

bool of_size(const Context& c, const Ask& ask, const Recipe& r) {
  const ModelBrief* m = c.kb.model(r.model_key);
  return plan_int::of_size(r, ask.size_token, ask.size_params, m ? m->total_params_b : 0);
}

std::string joined(const std::set<std::string>& words) { return kb::join(std::vector<std::string>(words.begin(), words.end()), ", "); }

// The display name of a family prefix: its models' name when they share
// one model, else the prefix as asked.
std::string fam_display(const Catalog& recipes, const std::string& prefix) {
  std::set<std::string> names;
  for (const auto& r : recipes.recipes)
    if (of_family(r, prefix)) names.insert(r.model.empty() ? prefix : r.model);
  return names.size() == 1 ? *names.begin() : prefix;
}

// A recipe the planner can offer: its layout is known and its function
// returns (one that raises at run time is named, never offered).
bool offerable(const Recipe& r) { return r.tp && r.pp && r.cp && r.raises.empty(); }

// (b) The family asked; when it has no recipe of the mode, the answer says
// which modes it has, and when its recipe of the mode raises, why.
bool keep_family(const Context& c, const Ask& ask, const Catalog& recipes, Pool& pool, Answer& a) {
  Pool fam;
  for (const auto* r : pool)
    if (of_family(*r, ask.model)) fam.push_back(r);
  if (fam.empty()) {
    std::set<std::string> modes;
    const Recipe* raising = nullptr;
    for (const auto& r : recipes.recipes) {
      if (!of_family(r, ask.model) || r.mode.empty()) continue;
      if (offerable(r)) modes.insert(c.label("mode." + r.mode));
      // the function's generic name, as one_per_function picks it
      if (r.mode == ask.mode && !r.raises.empty() && (!raising || plan_int::generic_name_first(r.name, raising->name))) raising = &r;
    }
    if (raising) {
      a.no_match = c.label("no_match.mode_raises", {{"mode", c.label("mode." + ask.mode)},
                                                    {"model", fam_display(recipes, ask.model)},
                                                    {"recipe", raising->name},
                                                    {"raises", raising->raises},
                                                    {"at", raising->raises_at}});
      if (!modes.empty()) a.no_match += " " + c.label("no_match.modes_offered", {{"modes", joined(modes)}});
    } else {
      a.no_match =
          modes.empty() || ask.mode.empty()
              ? c.label("no_match.family", {{"model", ask.model}})
              : c.label("no_match.mode_has",
                        {{"mode", c.label("mode." + ask.mode)}, {"model", fam_display(recipes, ask.model)}, {"modes", joined(modes)}});
    }
    return false;
  }
  pool = fam;
  return true;
}

// (b) A bare family name means its flagship model (lexicon flagship:
// "Nemotron 3 Nano" is the 30B-A3B); when the flagship has no recipe that
// matches, the family's others are answered and the answer says so.
void keep_flagship(const Context& c, const Ask& ask, Pool& pool, Answer& a) {
  if (ask.flagship.empty() || pool.empty()) return;
  Pool kept;
  for (const auto* r : pool)
    if (r->model_key == ask.flagship) kept.push_back(r);
  if (!kept.empty()) {
    pool = kept;
    return;
  }
  const ModelBrief* m = c.kb.model(ask.flagship);
  a.warnings.push_back(
      c.label("warn.flagship_missing", {{"flagship", m && !m->display.empty() ? m->display : ask.flagship},
                                        {"model", pool.front()->model.empty() ? pool.front()->model_key : pool.front()->model}}));
}

// A PEFT scheme named in the question (DoRA) runs only where the recipe's
// function takes a scheme; the runner refuses it elsewhere
// (recipe_launch.peft_modes), so those are left out, and said when none is left.
bool keep_launch_mode(const Context& c, const Ask& ask, Pool& pool, Answer& a) {
  if (ask.launch_mode.empty()) return true;
  Pool kept;
  const Recipe* refused = nullptr;
  for (const auto* r : pool) {
    const bool runs =
        r->peft_modes.empty() || std::find(r->peft_modes.begin(), r->peft_modes.end(), ask.launch_mode) != r->peft_modes.end();
    if (runs)
      kept.push_back(r);
    else if (!refused || plan_int::generic_name_first(r->name, refused->name))
      refused = r;  // the function's generic name, as one_per_function picks it
  }
  if (kept.empty() && refused) {
    a.no_match = c.label("no_match.launch_mode", {{"launch_mode", ask.launch_mode},
                                                  {"recipe", refused->name},
                                                  {"modes", kb::join(refused->peft_modes, ", ")},
                                                  {"at", refused->peft_at}});
    return false;
  }
  pool = kept;
  return true;
}

// (b) The size asked; else the same size in a sibling of the family
// (models.tsv family: "llama3 405b" → Llama 3.1 405B), else the nearest
// size of the family; both marked as substitutes.
Pool keep_size(const Context& c, const Ask& ask, const Pool& pool, const Pool& all_of_mode, bool& substitute, Answer& a,
               CatalogPart* part) {
  Pool sized;
  for (const auto* r : pool)
    if (of_size(c, ask, *r)) sized.push_back(r);
  if (sized.empty() && !pool.empty()) {
    if (part && part->of == CatalogPart::Of::Family) {
      part->enough = false;  // a sibling family may have the size: every recipe is needed
      return {};
    }
    std::set<std::string> families;
    for (const auto* r : pool)
      if (const auto* m = c.kb.model(r->model_key); m && !m->family.empty()) families.insert(m->family);
    for (const auto* r : all_of_mode)
      if (const auto* m = c.kb.model(r->model_key); m && families.count(m->family) && of_size(c, ask, *r)) sized.push_back(r);
    if (!sized.empty()) {
      substitute = true;
      a.warnings.push_back(
          c.label("warn.substitute_sibling", {{"asked", ask.model + " " + ask.size_token},
                                              {"model", sized.front()->model.empty() ? sized.front()->model_key : sized.front()->model}}));
    }
  }
  if (sized.empty() && !pool.empty()) {
    std::map<std::string, double> params;
    for (const auto* r : pool)
      if (const auto* m = c.kb.model(r->model_key); m && m->total_params_b > 0) params[r->model_key] = m->total_params_b * 1e9;
    std::string best;
    double best_d = 1e300;
    for (const auto& [key, p] : params) {
      const double d = ask.size_params > 0 ? std::abs(std::log(p / ask.size_params)) : 0;
      if (d < best_d) best_d = d, best = key;
    }
    for (const auto* r : pool)
      if (r->model_key == best) sized.push_back(r);
    substitute = true;
    if (!sized.empty())
      a.warnings.push_back(c.label("warn.substitute", {{"asked", ask.model + " " + ask.size_token},
                                                       {"model", sized.front()->model.empty() ? best : sized.front()->model}}));
  }
  return sized;
}

// (c) Text unless the question asks for another modality; a model that
// only has other modalities (flux, wan) keeps its own.
bool keep_modality(const Context& c, const Ask& ask, Pool& pool, Answer& a) {
  Pool kept;
  for (const auto* r : pool)
    if (ask.modalities.empty() ? r->modality == "text" : ask.modalities.count(r->modality) > 0) kept.push_back(r);
  if (kept.empty() && ask.modalities.empty()) kept = pool;
  if (kept.empty()) {
    a.no_match = c.label("no_match.modality", {{"modality", joined(ask.modalities)}});
    return false;
  }
  pool = kept;
  return true;
}

// Benchmark names encode their GPU count, hardware and precision.
bool keep_benchmark(const Context& c, const Ask& ask, Pool& pool, Answer& a) {
  // The recipes written for the GPU count asked; without one, those the
  // launcher weak-scales to it (plan_int::weak_scaled_gbs).
  Pool kept, scaled;
  for (const auto* r : pool)
    if ((ask.hardware_assumed || r->native_hardware == ask.hardware) &&
        (ask.precision.empty() || kb::starts_with(r->runs_in.empty() ? r->native_precision : r->runs_in, ask.precision))) {
      if (ask.gpus == 0 || r->native_gpus == ask.gpus)
        kept.push_back(r);
      else if (plan_int::weak_scaled_gbs(*r, ask.gpus) > 0)
        scaled.push_back(r);
    }
  if (kept.empty()) kept = scaled;
  if (kept.empty()) {
    // Per GPU type (in data/gpus.tsv's order), its GPU counts and precisions:
    // "H100 × 8, 16, 1024 (BF16, FP8 current scaling)".
    std::map<std::string, std::pair<std::set<long long>, std::set<std::string>>> by_gpu;
    for (const auto* r : pool) {
      const PrecisionInfo* p = c.kb.precision(r->native_precision);
      auto& [counts, precisions] = by_gpu[r->native_hardware];
      counts.insert(r->native_gpus.value_or(0));
      precisions.insert(p ? p->display : kb::upper_ascii(r->native_precision));
    }
    std::vector<std::string> have;
    const auto describe = [&](const std::string& key) {
      const auto& [counts, precisions] = by_gpu.at(key);
      std::vector<std::string> n;
      for (long long k : counts) n.push_back(std::to_string(k));
      have.push_back(c.kb.gpu_name(key) + " × " + kb::join(n, ", ") + " (" + joined(precisions) + ")");
    };
    for (const auto& g : c.kb.gpus)
      if (by_gpu.count(g.key)) describe(g.key);
    for (const auto& [key, _] : by_gpu)
      if (!c.kb.gpu(key)) describe(key);
    a.no_match = c.label("no_match.benchmark", {{"available", kb::join(have, "; ")}});
    return false;
  }
  pool = kept;
  return true;
}

// One name per recipe function: the generic alias over the canonical name.
std::vector<Candidate> one_per_function(const Pool& pool, bool substitute) {
  std::map<std::string, const Recipe*> by_target;
  for (const auto* r : pool) {
    auto [it, fresh] = by_target.try_emplace(r->target, r);
    if (!fresh && plan_int::generic_name_first(r->name, it->second->name)) it->second = r;
  }
  std::vector<Candidate> out;
  for (const auto& [t, r] : by_target) out.push_back({r, substitute});
  std::sort(out.begin(), out.end(), [](const Candidate& x, const Candidate& y) { return x.recipe->name < y.recipe->name; });
  return out;
}

// The GPU architectures that run any of `ps`, for a message.
std::string needs_of(const Context& c, const std::vector<const PrecisionInfo*>& ps) {
  std::set<std::string> archs;
  for (const auto* p : ps) archs.insert(p->archs.begin(), p->archs.end());
  return c.archs(archs);
}

}  // namespace

void benchmarks_for_benchmark_only_family(const Context& c, const Catalog& library, const std::function<const Catalog&()>& benchmark,
                                          Ask& ask, Answer& a) {
  if (ask.benchmark || ask.model.empty()) return;
  const auto has = [&](const Catalog& cat) {
    return std::any_of(cat.recipes.begin(), cat.recipes.end(), [&](const Recipe& r) { return of_family(r, ask.model) && offerable(r); });
  };
  if (has(library)) return;
  const Catalog& bench = benchmark();
  if (!has(bench)) return;
  ask.benchmark = true;
  a.warnings.push_back(c.label("warn.benchmark_only", {{"model", fam_display(bench, ask.model)}}));
}

void keep_runnable_precision(const Context& c, Ask& ask, std::vector<Candidate>& cands, Answer& a) {
  const Snapshot& kb = c.kb;
  // The precision asked, on the GPU asked: when that GPU runs none of the
  // precisions the word stands for, the closest one it runs (the next in
  // data/precisions.tsv's order that a candidate trains in, else the
  // default), said. A benchmark without a GPU asked runs on its own.
  const Gpu* asked_gpu = kb.gpu(ask.hardware);
  const bool own_gpus = ask.kind() == RecipeKind::Benchmark && ask.hardware_assumed;
  if (!ask.precision.empty() && asked_gpu && !asked_gpu->arch.empty() && !own_gpus) {
    const std::vector<const PrecisionInfo*> asked = precisions_asked(kb, ask.precision);
    const size_t last = asked.empty() ? 0 : static_cast<size_t>(asked.back() - kb.precisions.data());
    const bool runs = std::any_of(asked.begin(), asked.end(), [&](const PrecisionInfo* p) { return p->archs.count(asked_gpu->arch) > 0; });
    if (!asked.empty() && !runs) {
      std::string closest = c.settings().default_precision;
      for (size_t i = last + 1; i < kb.precisions.size(); ++i) {
        const PrecisionInfo& p = kb.precisions[i];
        const bool trained = std::any_of(cands.begin(), cands.end(), [&](const Candidate& k) { return k.recipe->runs_in == p.key; });
        if (p.archs.count(asked_gpu->arch) && trained) {
          closest = p.key;
          break;
        }
      }
      const PrecisionInfo* to = kb.precision(closest);
      a.warnings.push_back(c.label("warn.precision_hardware", {{"precision", asked_precision_name(asked, ask.precision)},
                                                               {"needs", needs_of(c, asked)},
                                                               {"hardware", c.kb.gpu_name(asked_gpu->key)},
                                                               {"arch", c.arch(asked_gpu->arch)},
                                                               {"closest", to ? to->display : closest}}));
      ask.precision = closest;
    }
  }
  // Every candidate on the GPU it would be planned on: never one whose
  // precision (as its code sets it, not as its name says) that GPU lacks.
  std::vector<Candidate> kept;
  std::optional<std::string> why;
  const Recipe* named = nullptr;  // the rejected recipe the message names: the shortest name (the plain recipe)
  for (const auto& k : cands) {
    const Gpu g = planned_gpu(c, *k.recipe, ask);
    if (kb.runs(k.recipe->runs_in, g).value_or(true)) {
      kept.push_back(k);
    } else if (!named || k.recipe->name.size() < named->name.size()) {
      named = k.recipe;
      const PrecisionInfo* p = kb.precision(k.recipe->runs_in);
      why = c.label("no_match.precision_hardware", {{"hardware", c.kb.gpu_name(g.key)},
                                                    {"arch", c.arch(g.arch)},
                                                    {"recipe", k.recipe->name},
                                                    {"precision", p ? p->display : k.recipe->runs_in},
                                                    {"needs", p ? needs_of(c, {p}) : std::string()}});
    }
  }
  if (kept.empty() && why) a.no_match = *why;
  cands = std::move(kept);
}

std::vector<Candidate> candidates(const Context& c, const Ask& ask, const Catalog& recipes, Answer& a, CatalogPart* part) {
  // Recipes whose layout the code leaves unknown (one that raises by
  // design, say) are never offered.
  Pool pool;
  for (const auto& r : recipes.recipes)
    if ((ask.mode.empty() || r.mode == ask.mode) && offerable(r)) pool.push_back(&r);
  if (!ask.other_mode.empty()) {
    a.no_match = c.label("no_match.other_mode", {{"mode", ask.other_mode}});
    return {};
  }
  if (!ask.unknown_model_words.empty()) {
    a.no_match = c.label("no_match.model", {{"model", kb::join(ask.unknown_model_words, " ")}});
    return {};
  }
  if (!ask.understood && ask.name_words.empty()) {
    a.no_match = c.label("no_match.not_understood");
    return {};
  }
  // (a) Free words that recipe names carry ("vl", "thinking", "instruct").
  // With a family named, a word no recipe of that family carries (a stray
  // "1" after "llama3 8b", a name part of another family) is left out and
  // said: it would otherwise empty the answer and blame the mode.
  std::vector<std::string> words = ask.name_words;
  if (!ask.model.empty() && !words.empty()) {
    std::vector<std::string> stray;
    for (const auto& w : words)
      if (std::none_of(recipes.recipes.begin(), recipes.recipes.end(),
                       [&](const Recipe& r) { return of_family(r, ask.model) && has_token(r.name, w); }))
        stray.push_back(w);
    if (!stray.empty()) {
      a.warnings.push_back(c.label("warn.ignored", {{"words", kb::join(stray, " ")}}));
      words.erase(std::remove_if(words.begin(), words.end(),
                                 [&](const std::string& w) { return std::find(stray.begin(), stray.end(), w) != stray.end(); }),
                  words.end());
    }
  }
  if (!words.empty()) {
    Pool kept;
    for (const auto* r : pool)
      if (std::all_of(words.begin(), words.end(), [&](const std::string& w) { return has_token(r->name, w); })) kept.push_back(r);
    if (kept.empty()) {
      if (part) {
        part->enough = false;  // the message names the modes whose recipes carry the words: every recipe is needed
        return {};
      }
      // The words name recipes of other modes ("deepseek v4 pro sft": Pro
      // pretrains only): said, with the modes it has.
      std::set<std::string> modes, models;
      for (const auto& r : recipes.recipes)
        if (offerable(r) && (ask.model.empty() || of_family(r, ask.model)) &&
            std::all_of(words.begin(), words.end(), [&](const std::string& w) { return has_token(r.name, w); })) {
          modes.insert(c.label("mode." + r.mode));
          if (!r.model.empty()) models.insert(r.model);
        }
      a.no_match =
          modes.empty() || ask.mode.empty() || models.size() != 1
              ? c.label("no_match.model", {{"model", kb::join(words, " ")}})
              : c.label("no_match.mode_has", {{"mode", c.label("mode." + ask.mode)}, {"model", *models.begin()}, {"modes", joined(modes)}});
      return {};
    }
    pool = kept;
  }
  // (b) The model family and size asked.
  const Pool all_of_mode = pool;
  if (!ask.model.empty() && !keep_family(c, ask, recipes, pool, a)) return {};
  bool substitute = false;
  if (!ask.size_token.empty()) pool = keep_size(c, ask, pool, all_of_mode, substitute, a, part);
  if (part && !part->enough) return {};
  if (pool.empty()) {
    const std::string asked = ask.model + (ask.size_token.empty() ? "" : " " + ask.size_token);
    a.no_match = ask.mode.empty() ? c.label("no_match.family", {{"model", asked}})
                                  : c.label("no_match.mode", {{"mode", c.label("mode." + ask.mode)}, {"model", asked}});
    return {};
  }
  // (c) The modality, then the family's flagship and the PEFT scheme.
  if (!keep_modality(c, ask, pool, a)) return {};
  keep_flagship(c, ask, pool, a);
  if (!keep_launch_mode(c, ask, pool, a)) return {};
  if (ask.kind() == RecipeKind::Benchmark && !keep_benchmark(c, ask, pool, a)) return {};
  return one_per_function(pool, substitute);
}

}  // namespace kbq
