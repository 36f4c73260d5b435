// Rank stage (see rank.hpp).
#include "query/rank/rank.hpp"

#include <algorithm>

#include "base/text.hpp"

namespace kbq {

bool low_precision(const Recipe& r, const std::string& default_precision) {
  return !r.low_precision.empty() || (!r.native_precision.empty() && r.native_precision != default_precision);
}

QuickRefPicks quick_ref_picks(Kb& kb, const Ask& ask) {
  QuickRefPicks out;
  for (const auto& row : kb.quick_ref_rows()) {
    const bool has_mode = !row.mode.empty();
    if (!has_mode && row.intents.empty()) continue;
    if (has_mode && !ask.mode.empty() && row.mode != ask.mode) continue;
    const bool intents_ok =
        std::all_of(row.intents.begin(), row.intents.end(), [&](const std::string& i) { return ask.intents.count(i) > 0; });
    if (!intents_ok || (!row.scale.empty() && row.scale != ask.scale)) continue;

    // A row for one GPU is a hard constraint; ranges are advice.
    if (ask.gpus > 0 && row.gpus == 1 && row.single_gpu_count && ask.gpus != 1) continue;
    if (!row.intents.empty() && has_mode && ask.mode.empty() && out.intent_mode.empty()) out.intent_mode = row.mode;
    int position = 0;
    for (const auto& name : row.recipes) {
      out.by_name.try_emplace(name, QuickRefPicks::Pick{row.row, position++});
      if (!row.intents.empty() && ask.model.empty())
        if (auto r = kb.recipe(name); r && !r->model_key.empty()) out.intent_models.insert(r->model_key + "/" + r->mode);
    }
  }
  return out;
}

namespace {

// Natural order: digit runs compare as numbers (llama3_8b before llama3_70b).
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      const std::string x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

int changes_of(Context& c, const Result& r) {
  int n = 0;
  const auto pretrained = c.kb.config_keys_for("pretrained");
  // Sequence parallelism follows TP (rule 5) and the starting checkpoint is
  // every fine-tune's: neither is a choice between recipes.
  const auto sp = c.kb.config_keys_for("sp");
  for (const auto& o : r.overrides)
    if (!o.pinned_only && (pretrained.empty() || o.key != pretrained.front().key) && (sp.empty() || o.key != sp.front().key)) ++n;
  return n;
}

// One criterion's key for a result (lower ranks first) and why.
ScorePart part(Context& c, const Ask& ask, const QuickRefPicks& picks, const Result& r, const std::string& criterion) {
  const Recipe& rc = r.recipe;
  ScorePart p;
  p.name = criterion;
  if (criterion == "mode") {
    const std::string& want = ask.mode.empty() ? picks.intent_mode : ask.mode;
    p.points = want.empty() || rc.mode == want ? 0 : 1;
    p.why = c.label("part.mode", {{"mode", rc.mode}});
  } else if (criterion == "model") {
    const bool other = !picks.intent_models.empty() && !picks.intent_models.count(rc.model_key + "/" + rc.mode);
    p.points = r.substitute || other ? 1 : 0;
    p.why = c.label(r.substitute ? "part.model_substitute"
                    : other      ? "part.model_other"
                                 : "part.model",
                    {{"model", rc.model.empty() ? rc.model_key : rc.model}});
  } else if (criterion == "modality") {
    const bool wanted = ask.modalities.empty() ? rc.modality == "text" : ask.modalities.count(rc.modality) > 0;
    p.points = wanted ? 0 : 1;
    p.why = c.label("part.modality", {{"modality", rc.modality}});
  } else if (criterion == "feasible") {
    // Known to fit, then fits the rules with memory not estimated, then does not fit.
    p.points = r.runnable ? (r.memory.known ? 0 : 1) : 2;
    p.why = c.label(r.runnable ? "part.feasible" : "part.not_feasible",
                    {{"gpus", std::to_string(r.layout.gpus)}, {"hardware", r.layout.hardware_name}});
  } else if (criterion == "sequence") {
    const long long own = rc.seq_len.value_or(0);
    if (ask.seq > 0) {
      p.points = own == ask.seq ? 0 : own > ask.seq ? 1 : 2;
      p.why = c.label(p.points == 0   ? "part.seq_native"
                      : p.points == 1 ? "part.seq_longer"
                                      : "part.seq_shorter",
                      {{"own", std::to_string(own)}, {"asked", std::to_string(ask.seq)}});
    } else {
      p.points = own > c.threshold && c.threshold > 0 ? 1 : 0;
      p.why = c.label(p.points == 0 ? "part.seq_plain" : "part.seq_long_variant", {{"own", std::to_string(own)}});
    }
  } else if (criterion == "precision") {
    // The precision asked; without one, the default (data/planner.tsv default_precision).
    // A recipe trains in the default precision unless its code sets FP8 or
    // FP4 (the code wins over a name's "bf16"); a benchmark's name says
    // which low precision (fp8cs, fp8mx, nvfp4).
    const std::string def = c.kb.planner("default_precision");
    const std::string want = ask.precision.empty() ? def : ask.precision;
    const bool low = low_precision(rc, def);
    const std::string family = rc.low_precision.substr(0, rc.low_precision.find(' '));
    bool match;
    if (want == def)
      match = !low;
    else if (!rc.native_precision.empty() && rc.native_precision != def)
      match = kb::starts_with(rc.native_precision, want);
    else
      match = !family.empty() && want.find(family) != std::string::npos;
    p.points = match ? 0 : 1;
    p.why = c.label("part.precision", {{"precision", !rc.native_precision.empty() ? rc.native_precision
                                                     : !rc.low_precision.empty()  ? rc.low_precision
                                                                                  : def}});
  } else if (criterion == "changes") {
    p.points = changes_of(c, r);
    p.why = c.label("part.changes", {{"n", std::to_string(p.points)}});
  } else if (criterion == "quick_reference") {
    // The recipe the row names, then another recipe of a model the row names.
    auto it = picks.by_name.find(rc.name);
    if (it != picks.by_name.end()) {
      p.points = it->second.position;
      p.why = c.label("part.quick_ref", {{"row", it->second.row}});
    } else {
      p.points = 1000;
      for (const auto& [name, pick] : picks.by_name)
        if (auto picked = c.kb.recipe(name); picked && !picked->model_key.empty() && picked->model_key == rc.model_key)
          p.points = std::min(p.points, 100 + pick.position);
      p.why = p.points < 1000 ? c.label("part.quick_ref_model", {{"model", rc.model.empty() ? rc.model_key : rc.model}})
                              : c.label("part.no_quick_ref");
    }
  } else if (criterion == "own_gpus") {
    const long long own = rc.native_gpus.value_or(rc.min_gpus.value_or(0));
    p.points = own == r.layout.gpus ? 0 : 1;
    p.why = c.label(p.points == 0 ? "part.own_gpus" : "part.scaled_gpus",
                    {{"own", std::to_string(own)}, {"gpus", std::to_string(r.layout.gpus)}});
  } else if (criterion == "name") {
    p.points = 0;  // compared by name below
    p.why = rc.name;
  }
  return p;
}

}  // namespace

void rank(Context& c, const Ask& ask, const QuickRefPicks& picks, std::vector<Result>& results) {
  const auto criteria = c.kb.ranking();
  for (auto& r : results) {
    r.parts.clear();
    for (const auto& cr : criteria) r.parts.push_back(part(c, ask, picks, r, cr));
  }
  std::stable_sort(results.begin(), results.end(), [](const Result& a, const Result& b) {
    for (size_t i = 0; i < a.parts.size() && i < b.parts.size(); ++i) {
      if (a.parts[i].name == "name") {
        if (a.recipe.name.size() != b.recipe.name.size()) return a.recipe.name.size() < b.recipe.name.size();
        if (a.recipe.name != b.recipe.name) return natural_less(a.recipe.name, b.recipe.name);
        continue;
      }
      if (a.parts[i].points != b.parts[i].points) return a.parts[i].points < b.parts[i].points;
    }
    return natural_less(a.recipe.name, b.recipe.name);
  });
  int position = 0;
  for (auto& r : results) {
    r.score = ++position;
    // One line: why this recipe.
    auto pick = picks.by_name.find(r.recipe.name);
    const std::string model = r.recipe.model.empty() ? kb::upper_ascii(r.recipe.model_key) : r.recipe.model;
    if (r.substitute)
      r.why = c.label("why.substitute", {{"model", model}});
    else if (pick != picks.by_name.end())
      r.why = c.label("why.quick_ref", {{"model", model}, {"mode", c.label("mode." + r.recipe.mode)}});
    else
      r.why = c.label("why.match", {{"model", model}, {"mode", c.label("mode." + r.recipe.mode)}});
  }
}

}  // namespace kbq
