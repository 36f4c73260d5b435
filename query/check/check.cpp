// Check stage (see check.hpp).
#include "query/check/check.hpp"

#include <set>

#include <algorithm>

#include "base/text.hpp"

namespace kbq {
namespace {

std::string n(long long v) { return std::to_string(v); }

std::string divisors(long long v) {
  std::vector<std::string> out;
  for (long long d = 1; d <= v; ++d)
    if (v % d == 0) out.push_back(n(d));
  return kb::join(out, ", ");
}

void check_layout(Kb& kb, Result& r, const std::optional<Model>& model, const std::string& lang, long long threshold) {
  const Layout& L = r.layout;
  const bool moe = kb.is_moe(r.recipe);
  const auto gpu = kb.gpu(L.hardware);
  bool cuda_graphs = false;
  for (const auto& o : r.overrides)
    if (auto k = kb.config_key(o.key); k && k->dimension == kb.planner("cuda_graph_dimension")) cuda_graphs = true;

  auto verdict = [&](const std::string& id, Status status, const std::string& detail) {
    Verdict v;
    v.id = id;
    v.status = status;
    v.detail = detail;
    const std::string entity = kb.check_entity(id);
    if (auto slash = entity.find('/'); slash != std::string::npos)
      v.rule = prose(kb, entity.substr(0, slash), entity.substr(slash + 1), lang);
    r.rules.push_back(std::move(v));
  };
  auto pitfall = [&](const std::string& id) {
    const std::string entity = kb.check_entity(id);
    if (auto slash = entity.find('/'); slash != std::string::npos) {
      Prose p = prose(kb, entity.substr(0, slash), entity.substr(slash + 1), lang);
      if (p.text.empty()) return;
      const Prose symptom = prose(kb, entity.substr(0, slash), entity.substr(slash + 1), lang, "symptom");
      const Prose fix = prose(kb, entity.substr(0, slash), entity.substr(slash + 1), lang, "fix");
      p.text += " — " + symptom.text + " → " + fix.text;
      r.pitfalls.push_back(std::move(p));
    }
  };

  // 1. TP divides the kv heads (GQA).
  if (!L.tp.exact()) {
    verdict("tp_divides_kv_heads", Status::Unknown,
            L.tp.state == kb::RangeState::Unknown ? "the recipe row states no TP"
                                                  : "TP is a range (" + kb::format_range(L.tp) + "), not a number");
  } else if (!model) {
    verdict("tp_divides_kv_heads", Status::Unknown, "TP " + n(L.tp.value()) + ": model facts unknown");
  } else if (!model->kv_heads) {
    verdict("tp_divides_kv_heads", Status::Unknown,
            "TP " + n(L.tp.value()) + ": " + model->display + " has " + model->kv_raw + " attention (no plain kv-head count)");
  } else if (*model->kv_heads % L.tp.value() == 0) {
    verdict("tp_divides_kv_heads", Status::Pass, "TP " + n(L.tp.value()) + " divides " + n(*model->kv_heads) + " kv heads");
  } else {
    verdict("tp_divides_kv_heads", Status::Fail,
            "TP " + n(L.tp.value()) + " does not divide " + n(*model->kv_heads) + " kv heads; valid TP: " + divisors(*model->kv_heads));
    pitfall("tp_exceeds_kv_heads");
  }
  // 2. TP within one NVLink domain.
  if (!L.tp.exact() || !gpu) {
    verdict("tp_within_nvlink", Status::Unknown, "TP " + kb::format_range(L.tp) + ", hardware " + (L.hardware.empty() ? "?" : L.hardware));
  } else if (L.tp.value() <= gpu->nvlink) {
    verdict("tp_within_nvlink", Status::Pass, "TP " + n(L.tp.value()) + " ≤ NVLink domain " + n(gpu->nvlink) + " (" + gpu->key + ")");
  } else {
    verdict("tp_within_nvlink", Status::Fail,
            "TP " + n(L.tp.value()) + " > NVLink domain " + n(gpu->nvlink) + " (" + gpu->key + "): TP leaves the NVLink domain");
  }
  // 3. SP on whenever TP > 1.
  if (!L.tp.exact())
    verdict("sp_when_tp", Status::Unknown, "TP " + kb::format_range(L.tp));
  else if (L.tp.value() == 1)
    verdict("sp_when_tp", Status::Pass, "TP 1: SP not needed");
  else
    verdict("sp_when_tp", L.sp ? Status::Pass : Status::Fail, "TP " + n(L.tp.value()) + ", SP " + (L.sp ? "on" : "off"));
  // 4. CP for long context.
  if (L.seq > threshold) {
    const bool ok = L.cp.exact() && L.cp.value() > 1;
    verdict("cp_for_long_context", ok ? Status::Pass : (L.cp.exact() ? Status::Fail : Status::Unknown),
            "sequence " + n(L.seq) + " > " + n(threshold) + ": CP " + kb::format_range(L.cp));
    if (L.cp.exact() && L.cp.value() == 1) pitfall("long_context_without_cp");
  } else {
    verdict("cp_for_long_context", Status::Pass, "sequence " + (L.seq ? n(L.seq) : std::string("default")) + " ≤ " + n(threshold));
  }
  // 5. World size divisible by the dense mesh (and the expert mesh for MoE).
  const bool known = L.tp.exact() && L.pp.exact() && L.cp.exact() && (!moe || L.ep.exact());
  if (!known) {
    verdict("world_size_divisible", Status::Unknown, "world size " + n(L.gpus) + ": a parallel size is a range");
  } else {
    const long long dense = L.tp.value() * L.pp.value() * L.cp.value();
    std::string detail = "world " + n(L.gpus) + " / (TP " + n(L.tp.value()) + " × PP " + n(L.pp.value()) + " × CP " + n(L.cp.value()) +
                         ") = " + (L.gpus % dense == 0 ? "DP " + n(L.gpus / dense) : "not whole");
    bool ok = L.gpus % dense == 0 && L.gpus >= dense;
    if (moe) {
      const long long ex = L.pp.value() * L.ep.value() * L.etp.value();
      detail += "; world " + n(L.gpus) + " / (PP " + n(L.pp.value()) + " × EP " + n(L.ep.value()) + " × ETP " + n(L.etp.value()) +
                ") = " + (L.gpus % ex == 0 ? "EDP " + n(L.gpus / ex) : "not whole");
      ok = ok && L.gpus % ex == 0 && L.gpus >= ex;
    }
    verdict("world_size_divisible", ok ? Status::Pass : Status::Fail, detail);
  }
  // 6. Experts divisible by EP (MoE).
  if (moe) {
    if (!model || model->experts == 0 || !L.ep.exact())
      verdict("experts_divisible_by_ep", Status::Unknown, "EP " + kb::format_range(L.ep) + ", expert count unknown");
    else
      verdict("experts_divisible_by_ep", model->experts % L.ep.value() == 0 ? Status::Pass : Status::Fail,
              n(model->experts) + " experts / EP " + n(L.ep.value()) +
                  (model->experts % L.ep.value() == 0 ? " = " + n(model->experts / L.ep.value()) + " per rank" : ": not whole"));
    if (L.ep.exact() && r.recipe.ep.exact() && L.ep.value() < r.recipe.ep.value()) pitfall("moe_ep_too_small");
    if (!L.hardware_assumed && L.hardware == kb.planner("moe_overlap_hardware")) pitfall("moe_overlap_h100");
  }
  // 7. Layers divisible by PP.
  if (!L.pp.exact() || !model || model->layers == 0) {
    verdict("layers_divisible_by_pp", Status::Unknown, "PP " + kb::format_range(L.pp) + (model ? "" : ", layer count unknown"));
  } else {
    const bool ok = model->layers % L.pp.value() == 0;
    verdict("layers_divisible_by_pp", ok ? Status::Pass : Status::Fail,
            n(model->layers) + " layers / PP " + n(L.pp.value()) +
                (ok ? " = " + n(model->layers / L.pp.value()) + " per stage" : ": uneven stages"));
  }
  // Pitfalls that follow from the layout.
  if (L.pp.exact() && L.pp.value() > 1 && !L.vp.is_value()) pitfall("pp_without_vp");
  if (cuda_graphs) {
    pitfall("cuda_graphs_packed");
    pitfall("cuda_graphs_recompute");
    pitfall("cuda_graphs_rng");
  }
  const auto& intents = r.recipe.family_intents;
  if (std::find(intents.begin(), intents.end(), kb.planner("vlm_sft_images_intent")) != intents.end() &&
      r.recipe.mode == kb.planner("vlm_sft_images_mode"))
    pitfall("vlm_sft_images");
}

// Citations: the rules' and pitfalls' sources, older revisions of the rules
// checked, the overrides' sentences and the model facts; each once.
void cite(Context& c, Result& r, const std::optional<Model>& model) {
  std::set<std::string> noted;
  for (const auto& v : r.rules) {
    if (!v.rule.source.file.empty()) r.sources.push_back(v.rule.source);
    const std::string entity = c.kb.check_entity(v.id);
    const auto slash = entity.find('/');
    if (slash == std::string::npos || !noted.insert(entity).second) continue;
    for (auto& n : superseded_notes(c.kb, entity.substr(0, slash), entity.substr(slash + 1), c.lang)) r.notes.push_back(std::move(n));
  }
  for (const auto& p : r.pitfalls) r.sources.push_back(p.source);
  for (const auto& o : r.overrides)
    if (!o.source.file.empty()) r.sources.push_back(o.source);
  if (model) r.sources.push_back({"data/models.tsv", 0, 0, "model " + model->key + " (" + kb::split(model->source, ';').front() + ")"});
  std::vector<SourceRef> unique;
  std::set<std::string> seen;
  for (auto& s : r.sources)
    if (seen.insert(s.file + ":" + std::to_string(s.line) + s.what).second) unique.push_back(s);
  r.sources = unique;
}

}  // namespace

void check(Context& c, Result& r) {
  const auto model = c.kb.model(r.recipe.model_key);
  check_layout(c.kb, r, model, c.lang, c.threshold);
  cite(c, r, model);
}

}  // namespace kbq
