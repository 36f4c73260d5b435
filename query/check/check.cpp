// Check stage (see check.hpp).
#include "query/check/check.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "query/rules/rules.hpp"

namespace kbq {

namespace {

std::string gib(double v) { return kb::one_decimal(v); }

// The verdict of a check: its words filled with its numbers' texts, the
// documented rule it enforces and that rule's text.
void add_verdict(const Context& c, Result& r, const std::string& check, Status s, std::vector<VerdictValue> numbers,
                 const std::string& variant = "") {
  Verdict v;
  v.id = check;
  v.status = s;
  std::vector<std::pair<std::string, std::string>> vars;
  for (const auto& n : numbers) vars.emplace_back(n.name, n.text);
  v.detail = c.label("rule." + check + "." + std::string(to_string(s)) + (variant.empty() ? "" : "_" + variant), vars);
  v.numbers = std::move(numbers);
  if (const EntityRef* e = c.kb.check_entity(check)) {
    v.enforces = e->kind + "/" + e->key;
    v.rule = c.prose(*e);
  }
  r.rules.push_back(std::move(v));
}

VerdictValue real(const char* name, double v) { return {name, v, gib(v)}; }
VerdictValue whole(const char* name, long long v) { return {name, v, std::to_string(v)}; }
VerdictValue text(const char* name, const std::string& v) { return {name, v, v}; }

void add_pitfall(const Context& c, Result& r, const std::string& check) {
  const EntityRef* e = c.kb.check_entity(check);
  if (!e) return;
  Prose p = c.prose(*e);
  if (p.text.empty()) return;
  const Prose symptom = c.prose(*e, "symptom");
  const Prose fix = c.prose(*e, "fix");
  p.text += " — " + symptom.text + " → " + fix.text;
  r.pitfalls.push_back(std::move(p));
}

// The verdicts check_verdicts adds after the sizing rules': memory_fits,
// batch_divisible, precision_runs.
constexpr std::size_t kVerdictsAfterRules = 3;

// The sizing rules on the layout, with the model numbers the plan sized.
void rules(const Context& c, const RuleModel& model, Result& r) {
  const Layout& L = r.layout;
  const Gpu* gpu = c.kb.gpu(L.hardware);
  RuleInput in = rule_input(model, gpu ? gpu->nvlink : 0, r.recipe.moe, c.settings().long_context_threshold);
  in.world = L.gpus;
  in.tp = L.tp;
  in.pp = L.pp;
  in.vp = L.vp;
  in.cp = L.cp;
  in.ep = L.ep;
  in.etp = L.etp;
  in.sp = L.sp;
  in.seq = L.seq;
  auto outcomes = evaluate_rules(in);
  // One block for every verdict of check_verdicts, not a doubling vector's
  // (kbq's arena keeps each block size apart): these rules' and the
  // kVerdictsAfterRules that memory_and_batch and precision_runs add.
  r.rules.reserve(r.rules.size() + outcomes.size() + kVerdictsAfterRules);
  for (auto& o : outcomes) add_verdict(c, r, o.check, o.status, std::move(o.numbers), o.variant);
}

// Memory per GPU against capacity, and the batch arithmetic.
void memory_and_batch(const Context& c, Result& r) {
  const Memory& M = r.memory;
  if (!M.known)
    add_verdict(c, r, "memory_fits", Status::Unknown, {text("reason", M.unknown_reason)});
  else
    add_verdict(c, r, "memory_fits", M.fits ? Status::Pass : Status::Fail,
                {real("per_gpu", M.per_gpu_gib), real("capacity", M.capacity_gib), text("hardware", r.layout.hardware_name)});
  const Batch& B = r.batch;
  if (B.gbs <= 0 || r.recipe.kind == RecipeKind::Benchmark)
    add_verdict(c, r, "batch_divisible", Status::Unknown, {});
  else
    add_verdict(c, r, "batch_divisible", B.grad_accum > 0 ? Status::Pass : Status::Fail,
                {whole("gbs", B.gbs), whole("mbs", B.mbs), whole("dp", B.dp), whole("accum", B.grad_accum)});
}

// The precision the recipe's code sets, on the GPU it is planned on
// (data/precisions.tsv: the architectures that run it).
void precision_runs(const Context& c, Result& r) {
  const Gpu* g = c.kb.gpu(r.layout.hardware);
  const PrecisionInfo* p = c.kb.precision(r.recipe.runs_in);
  const auto runs = g ? c.kb.runs(r.recipe.runs_in, *g) : std::nullopt;
  if (!runs || !p) {
    add_verdict(c, r, "precision_runs", Status::Unknown, {});
    return;
  }
  // A precision the user's override set (`kbq check ... mixed_precision=NAME`)
  // is said to be the override's, at the registry entry it names.
  std::vector<VerdictValue> values{text("precision", p->display), text("at", r.recipe.runs_in_at), text("needs", c.archs(p->archs)),
                                   text("hardware", r.layout.hardware_name), text("arch", c.arch(g->arch))};
  if (!r.recipe.runs_in_override.empty()) values.push_back(text("override", r.recipe.runs_in_override));
  add_verdict(c, r, "precision_runs", *runs ? Status::Pass : Status::Fail, std::move(values),
              r.recipe.runs_in_override.empty() ? "" : "override");
}

void pitfalls(const Context& c, Result& r) {
  const Layout& L = r.layout;
  const auto status = [&](const char* id) {
    for (const auto& v : r.rules)
      if (v.id == id) return v.status;
    return Status::Unknown;
  };
  if (status("tp_divides_kv_heads") == Status::Fail) add_pitfall(c, r, "tp_exceeds_kv_heads");
  if (L.pp > 1 && L.vp == 0) add_pitfall(c, r, "pp_without_vp");
  if (r.recipe.moe && r.recipe.ep && L.ep < *r.recipe.ep) add_pitfall(c, r, "moe_ep_too_small");
  if (status("cp_for_long_context") == Status::Fail) add_pitfall(c, r, "long_context_without_cp");
  const Settings& s = c.settings();
  if (r.recipe.moe && !L.hardware_assumed && L.hardware == s.moe_overlap_hardware) add_pitfall(c, r, "moe_overlap_h100");
  bool cuda_graphs = false;
  for (const auto& o : r.overrides)
    if (const ConfigKey* k = c.kb.config_key(o.key); k && k->dimension == s.cuda_graph_dimension) cuda_graphs = true;
  if (cuda_graphs)
    for (const char* p : {"cuda_graphs_packed", "cuda_graphs_recompute", "cuda_graphs_rng"}) add_pitfall(c, r, p);
  if (r.recipe.modality == s.vlm_sft_images_modality && r.recipe.mode == s.vlm_sft_images_mode) add_pitfall(c, r, "vlm_sft_images");
}

// At most three caveats that concern this answer, most important first;
// the others go to the notes (shown with --explain).
void caveats(const Context& c, Result& r) {
  std::vector<std::string> all = r.departures;
  for (const auto& v : r.rules)
    if (v.status == Status::Fail) all.push_back(c.label("caveat.fail", {{"detail", v.detail}}));
  if (!r.runnable && r.min_gpus > 0)
    all.push_back(c.label("caveat.min_gpus", {{"gpus", std::to_string(r.min_gpus)}, {"hardware", r.layout.hardware_name}}));
  const double border = c.settings().borderline_memory;
  // What to do on OOM: a smaller micro batch while it is above 1, then the
  // memory lever (full recompute) unless the job already runs with it,
  // never "reduce" a micro batch of 1.
  const auto on_oom = [&] {
    if (r.batch.mbs > 1) return c.label("oom.mbs", {{"key", c.kb.key_for("mbs")}});
    if (r.memory.lever_set) return c.label("oom.more_gpus_lever");
    std::vector<std::string> lever;
    for (const auto& [key, value] : c.settings().memory_lever) lever.push_back(key + "=" + value);
    return lever.empty() ? c.label("oom.more_gpus") : c.label("oom.lever", {{"overrides", kb::join(lever, " ")}});
  };
  if (r.memory.known && r.memory.fits && r.memory.per_gpu_gib > r.memory.capacity_gib)
    all.push_back(c.label("caveat.within_error", {{"per_gpu", gib(r.memory.per_gpu_gib)},
                                                  {"capacity", gib(r.memory.capacity_gib)},
                                                  {"gpus", std::to_string(r.layout.gpus)},
                                                  {"hardware", r.layout.hardware_name},
                                                  {"on_oom", on_oom()}}));
  else if (r.memory.known && r.memory.fits && r.memory.per_gpu_gib > border * r.memory.capacity_gib)
    all.push_back(c.label("caveat.borderline",
                          {{"per_gpu", gib(r.memory.per_gpu_gib)}, {"capacity", gib(r.memory.capacity_gib)}, {"on_oom", on_oom()}}));
  if (r.recipe.kind == RecipeKind::Benchmark) all.push_back(c.label("caveat.benchmark"));
  const std::string pretrained = c.kb.key_for("pretrained");
  for (const auto& o : r.overrides) {
    if (o.pinned_only) continue;
    if (!pretrained.empty() && o.key == pretrained) {
      all.push_back(c.label("caveat.pretrained", {{"key", o.key}}));
      continue;
    }
    if (o.impact == Impact::Convergence)
      all.push_back(c.label("caveat.convergence",
                            {{"key", o.key}, {"value", o.value}, {"recipe_value", o.recipe_value.empty() ? "—" : o.recipe_value}}));
    else if (o.impact == Impact::BenchmarkOnly)
      all.push_back(c.label("caveat.benchmark_only", {{"key", o.key}, {"value", o.value}}));
  }
  if (!r.memory.known && !r.memory.unknown_reason.empty())
    all.push_back(c.label("caveat.memory_unknown", {{"reason", r.memory.unknown_reason}}));
  for (size_t i = 0; i < all.size(); ++i) (i < 3 ? r.caveats : r.notes).push_back(all[i]);
}

// Citations: the rules' and pitfalls' sources, older revisions of the rules
// checked, the overrides' sentences; where the documents disagree with the
// code about this recipe; each once.
void cite(const Context& c, const std::vector<DriftRow>& drift, Result& r) {
  std::set<EntityRef> noted;
  for (const auto& v : r.rules) {
    if (!v.rule.source.file.empty()) r.sources.push_back(v.rule.source);
    const EntityRef* e = c.kb.check_entity(v.id);
    if (!e || !noted.insert(*e).second) continue;
    if (auto it = c.kb.superseded.find(*e); it != c.kb.superseded.end())
      for (auto& n : superseded_notes(it->second, *e, c.labels("superseded"))) r.notes.push_back(std::move(n));
  }
  for (const auto& p : r.pitfalls) r.sources.push_back(p.source);
  for (const auto& o : r.overrides)
    if (!o.source.file.empty()) r.sources.push_back(o.source);
  // One note per disagreement, however many editions repeat it: its
  // editions' lines, grouped by revision (newest first), in first-seen order.
  struct Said {
    const DriftRow* first;
    std::map<int, std::vector<std::string>, std::greater<>> where;  // revision -> file:line
  };
  std::vector<Said> said;
  for (const auto& d : drift) {
    if (d.kind != "recipe-fact") continue;
    auto same = std::find_if(said.begin(), said.end(), [&](const Said& s) {
      return s.first->field == d.field && s.first->doc_value == d.doc_value && s.first->code_value == d.code_value &&
             s.first->code_at == d.code_at;
    });
    if (same == said.end()) same = said.insert(said.end(), Said{&d, {}});
    same->where[d.revision].push_back(d.file + ":" + std::to_string(d.line));
  }
  for (const auto& s : said) {
    std::vector<std::string> groups;
    for (const auto& [revision, lines] : s.where)
      groups.push_back(c.label("note.drift_where", {{"lines", kb::join(lines, ", ")}, {"revision", std::to_string(revision)}}));
    r.notes.push_back(c.label("note.drift", {{"field", s.first->field},
                                             {"doc", s.first->doc_value},
                                             {"where", kb::join(groups, "; ")},
                                             {"code", s.first->code_value},
                                             {"code_at", s.first->code_at}}));
  }
  for (const auto& a : r.memory.assumptions) r.notes.push_back(c.label("note.assumption", {{"text", a}}));
  std::vector<SourceRef> unique;
  std::set<std::string> seen;
  for (auto& s : r.sources)
    if (seen.insert(s.file + ":" + std::to_string(s.line) + s.what).second) unique.push_back(s);
  r.sources = unique;
}

}  // namespace

void check_verdicts(const Context& c, const RuleModel& model, Result& r) {
  rules(c, model, r);
  memory_and_batch(c, r);
  precision_runs(c, r);
  r.runnable = r.runnable && !r.any_fail();
}

void annotate(const Context& c, const std::vector<DriftRow>& drift, Result& r) {
  pitfalls(c, r);
  caveats(c, r);
  cite(c, drift, r);
}

void check(const Context& c, const RuleModel& model, const std::vector<DriftRow>& drift, Result& r) {
  check_verdicts(c, model, r);
  annotate(c, drift, r);
}

}  // namespace kbq
