// Plan stage: what fits when the answer's first result does not (see
// plan.hpp), each the first that runs of its kind: the same recipe on the
// fewest GPUs of the type where it fits; LoRA instead of full training on
// the same GPUs; a GPU with more memory on the same count; a smaller model
// of the family, same mode, on the same GPUs.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "query/plan/plan_int.hpp"

namespace kbq {

namespace {

// One name per recipe function: the generic alias over the canonical name.
// The alternatives are library recipes or of best's kind, and no function is
// exported under both kinds (their modules differ).
// Built for every answer's alternatives, so as views into the catalogs
// (which outlive it) in a hash map: no string is copied.
class Preferred {
 public:
  Preferred(const Catalog& library, const Catalog& same_kind, RecipeKind best_kind) {
    name_of_.reserve(library.recipes.size() + (best_kind != RecipeKind::Library ? same_kind.recipes.size() : 0));
    add(library);
    if (best_kind != RecipeKind::Library) add(same_kind);
  }
  bool operator()(const Recipe& r) const {
    auto it = name_of_.find(r.target);
    return it != name_of_.end() && it->second == r.name;
  }

 private:
  void add(const Catalog& c) {
    for (const auto& r : c.recipes) {
      auto [it, fresh] = name_of_.try_emplace(r.target, r.name);
      if (!fresh && plan_int::generic_name_first(r.name, it->second)) it->second = r.name;
    }
  }
  std::unordered_map<std::string_view, std::string_view> name_of_;  // target → preferred name
};

Alternative alternative(const Context& c, const char* kind, const char* label, const Result& res, const std::string& hardware) {
  return {kind,
          res.recipe.name,
          res.layout.gpus,
          hardware,
          c.label(label, {{"recipe", res.recipe.name}, {"gpus", std::to_string(res.layout.gpus)}, {"hardware", c.kb.gpu_name(hardware)}}),
          command_of(c, res)};
}

// The smaller models of best's family with recipes of its mode and
// modality, largest first; of models as large, the one whose name shares
// more of best's (llama31_8b for Llama 3.1 405B, not llama3_8b); then the
// shorter name, as the ranking's name criterion has it (the plain name
// before its hardware-specific variants).
std::vector<std::pair<double, const Recipe*>> smaller_models(const Context& c, const Recipe& best, const Catalog& same_kind,
                                                             const Preferred& preferred) {
  std::vector<std::pair<double, const Recipe*>> smaller;
  const ModelBrief* model = c.kb.model(best.model_key);
  if (!model || model->total_params_b <= 0 || model->family.empty()) return smaller;
  for (const auto& r : same_kind.recipes)
    if (r.mode == best.mode && r.modality == best.modality && r.model_key != best.model_key && r.tp && r.pp && r.cp && preferred(r))
      if (const ModelBrief* m = c.kb.model(r.model_key);
          m && m->family == model->family && m->total_params_b > 0 && m->total_params_b < model->total_params_b)
        smaller.emplace_back(m->total_params_b, &r);
  std::sort(smaller.begin(), smaller.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    const size_t sa = kb::shared_prefix(a.second->name, best.name), sb = kb::shared_prefix(b.second->name, best.name);
    if (sa != sb) return sa > sb;
    if (a.second->name.size() != b.second->name.size()) return a.second->name.size() < b.second->name.size();
    return a.second->name < b.second->name;
  });
  return smaller;
}

}  // namespace

std::vector<Alternative> alternatives(const Context& c, const Ask& ask, const Result& best_result, const Catalog& library,
                                      const Catalog& same_kind, const PlanFn& plan) {
  std::vector<Alternative> out;
  const Recipe& best = best_result.recipe;
  const Preferred preferred(library, same_kind, best.kind);
  const long long gpus = ask.gpus;
  auto runs = [&](const Recipe& r, const std::string& hw) {
    Ask a = ask;
    a.hardware = hw;
    a.hardware_assumed = false;
    a.launch_mode.clear();
    return plan(r, a, Fewest::Later).result;
  };
  // The same recipe on the same GPUs with the memory levers the code has,
  // first: they change execution, not convergence. Full activation recompute
  // (data/planner.tsv memory_lever), then with the optimizer's moments on
  // the CPU as well (optimizer_lever, a far slower step); the first that
  // makes the layout fit, and only then.
  if (!best_result.runnable) {
    auto with = [](Ask a, const std::vector<std::pair<std::string, std::string>>& lever, bool& adds) {
      for (const auto& kv : lever)
        if (std::none_of(a.fixed.begin(), a.fixed.end(), [&](const auto& f) { return f.first == kv.first; })) {
          a.fixed.push_back(kv);
          adds = true;
        }
      return a;
    };
    Ask base = ask;
    base.gpus = best_result.layout.gpus;
    bool recompute_adds = false, offload_adds = false;
    const Ask recompute = with(base, c.settings().memory_lever, recompute_adds);
    const Ask offload = with(recompute, c.settings().optimizer_lever, offload_adds);
    std::optional<Planned> recomputed;
    if (recompute_adds) {
      recomputed = plan(best, recompute, Fewest::Now);
      const Result& res = recomputed->result;
      if (res.runnable && res.memory.known && res.layout.gpus == best_result.layout.gpus)
        out.push_back(alternative(c, "recompute", "alt.recompute", res, res.layout.hardware));
    }
    if (out.empty() && offload_adds) {
      const Result res = plan(best, offload, Fewest::Later).result;
      if (res.runnable && res.memory.known && res.layout.gpus == best_result.layout.gpus)
        out.push_back(alternative(c, "offload", "alt.offload", res, res.layout.hardware));
    }
    const bool recompute_here = !out.empty() && out.front().kind == "recompute";
    if (!recompute_here && recomputed) {
      // Not enough on these GPUs, but recompute fits on fewer more GPUs than without it.
      const Result& res = recomputed->result;
      if (res.min_gpus > 0 && (best_result.min_gpus == 0 || res.min_gpus < best_result.min_gpus)) {
        Ask a = recompute;
        a.gpus = res.min_gpus;
        const Result fewer = plan(best, a, Fewest::Later).result;
        if (fewer.runnable && fewer.memory.known) out.push_back(alternative(c, "recompute", "alt.recompute", fewer, fewer.layout.hardware));
      }
    }
  }
  // The same recipe on the fewest GPUs of this type where it fits (best
  // was planned with this question: its fewest GPUs are known).
  if (!best_result.runnable && best_result.min_gpus > 0) {
    Ask a = ask;
    a.gpus = best_result.min_gpus;
    const Result more = plan(best, a, Fewest::Later).result;
    if (more.runnable) out.push_back(alternative(c, "more_gpus", "alt.more_gpus", more, more.layout.hardware));
  }
  // LoRA instead of full training, on the same GPUs.
  if (best.mode != kb::kPeftMode && best.kind == RecipeKind::Library)
    for (const auto& r : library.recipes)
      if (r.mode == kb::kPeftMode && r.model_key == best.model_key && !r.model_key.empty() && preferred(r)) {
        const Result res = runs(r, ask.hardware);
        if (res.runnable && res.memory.known && r.tp && r.pp) {
          out.push_back(alternative(c, "lora", "alt.lora", res, res.layout.hardware));
          break;
        }
      }
  // A GPU with more memory, on the same count.
  const Gpu* here = c.kb.gpu(ask.hardware);
  std::vector<const Gpu*> bigger;
  for (const auto& g : c.kb.gpus)
    if (here && g.memory_gib > here->memory_gib) bigger.push_back(&g);
  std::sort(bigger.begin(), bigger.end(), [](const Gpu* a, const Gpu* b) { return a->memory_gib < b->memory_gib; });
  for (const Gpu* g : bigger) {
    const Result res = runs(best, g->key);
    if (res.runnable && res.memory.known && (gpus == 0 || res.layout.gpus == gpus)) {
      out.push_back(alternative(c, "hardware", "alt.hardware", res, g->key));
      break;
    }
  }
  // A smaller model of the family, same mode, on the same GPUs.
  for (const auto& [params, r] : smaller_models(c, best, same_kind, preferred)) {
    const Result res = runs(*r, ask.hardware);
    if (res.runnable && res.memory.known && (gpus == 0 || res.layout.gpus == gpus)) {
      out.push_back(alternative(c, "smaller_model", "alt.smaller", res, res.layout.hardware));
      break;
    }
  }
  return out;
}

}  // namespace kbq
