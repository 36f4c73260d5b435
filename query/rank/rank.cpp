// Rank stage (see rank.hpp).
#include "query/rank/rank.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include "base/text.hpp"

namespace kbq {

using namespace std::string_view_literals;  // a criterion's name compared as a view: its length first

bool low_precision(const Recipe& r, const std::string& default_precision) {
  if (!r.runs_in.empty()) return r.runs_in != default_precision;  // the code's precision, never the name's
  return !r.low_precision.empty() || (!r.native_precision.empty() && r.native_precision != default_precision);
}

QuickRefPicks quick_ref_picks(const std::vector<QuickRefRow>& rows, const Ask& ask) {
  QuickRefPicks out;
  for (const auto& row : rows) {
    const bool has_mode = !row.mode.empty();
    if (!has_mode && row.intents.empty()) continue;
    if (has_mode && !ask.mode.empty() && row.mode != ask.mode) continue;
    const bool intents_ok =
        std::all_of(row.intents.begin(), row.intents.end(), [&](const std::string& i) { return ask.intents.count(i) > 0; });
    if (!intents_ok || (!row.scale.empty() && row.scale != ask.scale)) continue;

    // A row for one GPU is a hard constraint; ranges are advice. The row's
    // models still say which size of a family the mode starts from.
    if (ask.gpus > 0 && row.gpus == 1 && row.single_gpu_count && ask.gpus != 1) {
      for (size_t i = 0; i < row.recipes.size(); ++i) {
        const auto& pick = row.recipes[i];
        if (has_mode && pick.exported && !pick.model_key.empty())
          out.mode_models.try_emplace(pick.model_key + "/" + row.mode, static_cast<int>(i));
      }
      continue;
    }
    // Fewer GPUs asked than the row starts from ("smoke test on one GPU",
    // the first-try row says 2): its models and mode are advice, what runs
    // decides.
    const bool row_fits_count = ask.gpus <= 0 || row.gpus <= 0 || ask.gpus >= row.gpus;
    // The mode a row matched by intent implies: its own, else the one mode
    // its exported recipes train in ("Try Bridge for the first time":
    // llama3_8b_pretrain_config + mock data, a pretraining).
    std::string& implied = row_fits_count ? out.intent_mode : out.advised_mode;
    if (!row.intents.empty() && ask.mode.empty() && implied.empty()) {
      std::set<std::string> modes;
      for (const auto& pick : row.recipes)
        if (pick.exported && !pick.mode.empty()) modes.insert(pick.mode);
      if (has_mode)
        implied = row.mode;
      else if (modes.size() == 1)
        implied = *modes.begin();
    }
    int position = 0;
    for (const auto& pick : row.recipes) {
      out.by_name.try_emplace(pick.name, QuickRefPicks::Pick{row.row, position++, pick.model_key});
      if (!row.intents.empty() && ask.model.empty() && pick.exported && !pick.model_key.empty() && row_fits_count)
        out.intent_models.insert(pick.model_key + "/" + pick.mode);
    }
  }
  return out;
}

namespace {

// The feasible criterion's key of a result that does not fit (planned_part).
constexpr int kNotFeasible = 2;

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

int changes_of(const Context& c, const Result& r) {
  int n = 0;
  // Sequence parallelism follows TP (rule 5) and the starting checkpoint is
  // every fine-tune's: neither is a choice between recipes.
  const std::string pretrained = c.kb.key_for("pretrained"), sp = c.kb.key_for("sp");
  for (const auto& o : r.overrides)
    if (!o.pinned_only && (pretrained.empty() || o.key != pretrained) && (sp.empty() || o.key != sp)) ++n;
  return n;
}

// The words of a score part, or nothing when only its key is wanted (the
// bound of a candidate not planned yet).
class Why {
 public:
  Why(const Context& c, bool on) : c_(c), on_(on) {}
  // Whether words are wanted: a bound's parts have none, and their words'
  // values are not even built.
  explicit operator bool() const { return on_; }
  std::string operator()(const std::string& key, const std::vector<std::pair<std::string, std::string>>& vars = {}) const {
    return on_ ? c_.label(key, vars) : std::string();
  }

 private:
  const Context& c_;
  bool on_;
};

// Whether a criterion ranks this question's results: `size` only when the
// question asks for the largest model (planner.tsv largest_intent), and
// `hardware` only when it asks for a benchmark and names no GPU type, so
// other answers carry no part that compares nothing.
bool applies(const Context& c, const Ask& ask, const std::string& criterion) {
  if (criterion == "size"sv) return !c.settings().largest_intent.empty() && ask.intents.count(c.settings().largest_intent) > 0;
  if (criterion == "hardware"sv) return ask.kind() == RecipeKind::Benchmark && ask.hardware_assumed;
  return true;
}

// The criteria that need the result planned: its fit, its changes, its GPU count.
bool needs_plan(const std::string& criterion) { return criterion == "feasible"sv || criterion == "changes"sv || criterion == "own_gpus"sv; }

// The sequence points of a recipe shorter than the length asked: after
// every longer one, however many doublings longer.
constexpr int kShorterSeq = 64;

// A criterion the recipe and the question decide, with no plan.
ScorePart recipe_part(const Context& c, const Ask& ask, const QuickRefPicks& picks, const Recipe& rc, bool substitute,
                      const std::string& criterion, const Why& why) {
  ScorePart p;
  p.name = criterion;
  if (criterion == "mode"sv) {
    const std::string& want = ask.mode.empty() ? picks.intent_mode : ask.mode;
    p.points = want.empty() || rc.mode == want ? 0 : 1;
    if (why) p.why = why("part.mode", {{"mode", rc.mode}});
  } else if (criterion == "advised_mode"sv) {
    const std::string& want = ask.mode.empty() && picks.intent_mode.empty() ? picks.advised_mode : std::string();
    p.points = want.empty() || rc.mode == want ? 0 : 1;
    if (why) p.why = why("part.mode", {{"mode", rc.mode}});
  } else if (criterion == "model"sv) {
    const bool other = !picks.intent_models.empty() && !picks.intent_models.count(rc.model_key + "/" + rc.mode);
    p.points = substitute || other ? 1 : 0;
    if (why)
      p.why = why(substitute ? "part.model_substitute"
                  : other    ? "part.model_other"
                             : "part.model",
                  {{"model", rc.model.empty() ? rc.model_key : rc.model}});
  } else if (criterion == "modality"sv) {
    const bool wanted = ask.modalities.empty() ? rc.modality == "text" : ask.modalities.count(rc.modality) > 0;
    p.points = wanted ? 0 : 1;
    if (why) p.why = why("part.modality", {{"modality", rc.modality}});
  } else if (criterion == "sequence"sv) {
    const long long own = rc.seq_len.value_or(0);
    if (ask.seq > 0) {
      // The exact length, then the nearest longer one by doublings (32K
      // before 128K for 16K asked: less to shorten, a layout written for a
      // length closer to the one trained), then a shorter one.
      int doublings = 0;
      for (long long covered = ask.seq; covered < own && doublings < kShorterSeq - 2; covered *= 2) ++doublings;
      p.points = own == ask.seq ? 0 : own > ask.seq ? doublings : kShorterSeq;
      if (why)
        p.why = why(own == ask.seq  ? "part.seq_native"
                    : own > ask.seq ? "part.seq_longer"
                                    : "part.seq_shorter",
                    {{"own", std::to_string(own)}, {"asked", std::to_string(ask.seq)}});
    } else {
      const long long threshold = c.settings().long_context_threshold;
      p.points = own > threshold && threshold > 0 ? 1 : 0;
      if (why) p.why = why(p.points == 0 ? "part.seq_plain" : "part.seq_long_variant", {{"own", std::to_string(own)}});
    }
  } else if (criterion == "precision"sv) {
    // The precision asked; without one, the default (data/planner.tsv default_precision).
    // A recipe trains in the default precision unless its code sets FP8 or
    // FP4 (the code wins over a name's "bf16"); a benchmark's name says
    // which low precision (fp8cs, fp8mx, nvfp4).
    const std::string& def = c.settings().default_precision;
    const std::string& want = ask.precision.empty() ? def : ask.precision;
    const bool low = low_precision(rc, def);
    const std::string_view family = std::string_view(rc.low_precision).substr(0, rc.low_precision.find(' '));
    bool match;
    if (want == def)
      match = !low;
    else if (!rc.runs_in.empty())
      match = kb::starts_with(rc.runs_in, want);
    else if (!rc.native_precision.empty() && rc.native_precision != def)
      match = kb::starts_with(rc.native_precision, want);
    else
      match = !family.empty() && want.find(family) != std::string::npos;
    p.points = match ? 0 : 1;
    if (why)
      p.why = why("part.precision", {{"precision", !rc.runs_in.empty()            ? rc.runs_in
                                                   : !rc.native_precision.empty() ? rc.native_precision
                                                   : !rc.low_precision.empty()    ? rc.low_precision
                                                                                  : def}});
  } else if (criterion == "size"sv) {
    // Asked for the largest model (largest_intent): the more total
    // parameters (data/models.tsv), the earlier; whole tenths of a billion.
    const ModelBrief* m = c.kb.model(rc.model_key);
    const double b = m ? m->total_params_b : 0;
    p.points = -static_cast<int>(std::llround(b * 10));
    if (why) p.why = why(b > 0 ? "part.size" : "part.size_unknown", {{"params", kb::one_decimal(b)}});
  } else if (criterion == "hardware"sv) {
    // A benchmark asked with no GPU type: those written for the one
    // assumed (the answer's warning names it) first; the others run on
    // their own GPUs.
    const bool own = rc.native_hardware.empty() || rc.native_hardware == ask.hardware;
    p.points = own ? 0 : 1;
    if (why)
      p.why = why(own ? "part.hardware_assumed" : "part.hardware_other",
                  {{"hardware", c.kb.gpu_name(own ? ask.hardware : rc.native_hardware)}, {"assumed", c.kb.gpu_name(ask.hardware)}});
  } else if (criterion == "quick_reference"sv) {
    // The recipe the row names, then another recipe of a model the row names.
    auto it = picks.by_name.find(rc.name);
    if (it != picks.by_name.end()) {
      p.points = it->second.position;
      if (why) p.why = why("part.quick_ref", {{"row", it->second.row}, {"n", std::to_string(it->second.position + 1)}});
    } else {
      p.points = 1000;
      for (const auto& [name, pick] : picks.by_name)
        if (!pick.model_key.empty() && pick.model_key == rc.model_key) p.points = std::min(p.points, 100 + pick.position);
      if (p.points == 1000 && !picks.mode_models.empty())
        if (const auto m = picks.mode_models.find(rc.model_key + "/" + rc.mode); m != picks.mode_models.end()) p.points = 200 + m->second;
      if (why)
        p.why = p.points < 1000 ? why("part.quick_ref_model", {{"model", rc.model.empty() ? rc.model_key : rc.model}})
                                : why("part.no_quick_ref");
    }
  } else if (criterion == "name"sv) {
    p.points = 0;  // compared by name (ranks_before)
    if (why) p.why = rc.name;
  }
  return p;
}

// A criterion of a planned result.
ScorePart planned_part(const Context& c, const Result& r, const std::string& criterion, const Why& why) {
  const Recipe& rc = r.recipe;
  ScorePart p;
  p.name = criterion;
  if (criterion == "feasible"sv) {
    // Known to fit, then fits the rules with memory not estimated, then does not fit.
    p.points = r.runnable ? (r.memory.known ? 0 : 1) : kNotFeasible;
    p.why = why(r.runnable ? "part.feasible" : "part.not_feasible",
                {{"gpus", std::to_string(r.layout.gpus)}, {"hardware", r.layout.hardware_name}});
  } else if (criterion == "changes"sv) {
    p.points = changes_of(c, r);
    p.why = why("part.changes", {{"n", std::to_string(p.points)}});
  } else if (criterion == "own_gpus"sv) {
    const long long own = own_count(rc);
    p.points = own == r.layout.gpus ? 0 : 1;
    p.why =
        why(p.points == 0 ? "part.own_gpus" : "part.scaled_gpus", {{"own", std::to_string(own)}, {"gpus", std::to_string(r.layout.gpus)}});
  }
  return p;
}

}  // namespace

std::vector<ScorePart> score_parts(const Context& c, const Ask& ask, const QuickRefPicks& picks, const Result& r) {
  const Why why(c, true);
  std::vector<ScorePart> parts;
  parts.reserve(c.kb.ranking.size());  // one block per result, not a doubling vector's (kbq's arena keeps each size apart)
  for (const auto& cr : c.kb.ranking)
    if (applies(c, ask, cr))
      parts.push_back(needs_plan(cr) ? planned_part(c, r, cr, why) : recipe_part(c, ask, picks, r.recipe, r.substitute, cr, why));
  return parts;
}

long long own_count(const Recipe& r) { return r.native_gpus.value_or(r.min_gpus.value_or(0)); }

std::vector<ScorePart> bound(const Context& c, const Ask& ask, const QuickRefPicks& picks, const Recipe& r, bool substitute) {
  const Why none(c, false);
  std::vector<ScorePart> parts;
  parts.reserve(c.kb.ranking.size());
  const Foreseen f = foresee(c, r, ask);
  for (const auto& cr : c.kb.ranking) {
    if (!applies(c, ask, cr)) continue;
    if (!needs_plan(cr)) {
      parts.push_back(recipe_part(c, ask, picks, r, substitute, cr, none));
      continue;
    }
    // At their least, but what the plan is known to give (foresee): a
    // recipe sure not to fit does not; the GPUs it runs on are known, so
    // whether they are its own; and one whose layout must change to fit
    // changes at least one size (if it does not fit, it ranks after this
    // bound by feasible already).
    int points = 0;
    if (cr == "feasible"sv) {
      points = f.never_fits ? kNotFeasible : 0;
    } else if (cr == "own_gpus"sv) {
      if (f.world > 0) points = own_count(r) == f.world ? 0 : 1;
    } else if (cr == "changes"sv) {
      points = !f.never_fits && f.changes_layout ? 1 : 0;
    }
    parts.push_back(ScorePart{cr, points, {}});
  }
  return parts;
}

bool ranks_before(const std::vector<ScorePart>& a, const std::string& a_name, const std::vector<ScorePart>& b, const std::string& b_name) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].name == "name"sv) {
      if (a_name.size() != b_name.size()) return a_name.size() < b_name.size();
      if (a_name != b_name) return natural_less(a_name, b_name);
      continue;
    }
    if (a[i].points != b[i].points) return a[i].points < b[i].points;
  }
  return natural_less(a_name, b_name);
}

std::string distinct_key(const Recipe& rc, const std::string& default_precision) {
  if (rc.model_key.empty()) return rc.name;
  return rc.model_key + "|" + rc.mode + "|" + std::to_string(rc.seq_len.value_or(0)) + "|" +
         (low_precision(rc, default_precision) ? "low" : "") + "|" + std::string(to_string(rc.kind));
}

bool shadowed(const std::vector<Result>& planned, const Recipe& r, const std::vector<ScorePart>& bound,
              const std::string& default_precision) {
  const std::string key = distinct_key(r, default_precision);
  const auto first =
      std::find_if(planned.begin(), planned.end(), [&](const Result& x) { return distinct_key(x.recipe, default_precision) == key; });
  return first != planned.end() && ranks_before(first->parts, first->recipe.name, bound, r.name);
}

std::string no_model_headline(const Context& c, const std::vector<Result>& ranked) {
  if (ranked.empty()) return {};
  const Result& top = ranked.front();
  const auto name = [](const Recipe& r) { return r.model.empty() ? kb::upper_ascii(r.model_key) : r.model; };
  const auto runner =
      std::find_if(ranked.begin(), ranked.end(), [&](const Result& r) { return r.recipe.model_key != top.recipe.model_key; });
  if (runner == ranked.end()) return c.label("headline.only_model", {{"model", name(top.recipe)}, {"recipe", top.recipe.name}});
  std::string reason, runner_reason;
  for (size_t i = 0; i < top.parts.size() && i < runner->parts.size(); ++i)
    if (top.parts[i].name != "name" && top.parts[i].points != runner->parts[i].points) {
      reason = top.parts[i].why;
      runner_reason = runner->parts[i].why;
      break;
    }
  return c.label(runner_reason.empty() ? "headline.no_model_tie" : "headline.no_model", {{"model", name(top.recipe)},
                                                                                         {"recipe", top.recipe.name},
                                                                                         {"reason", reason},
                                                                                         {"runner_up", name(runner->recipe)},
                                                                                         {"runner_recipe", runner->recipe.name},
                                                                                         {"runner_reason", runner_reason}});
}

void rank(const Context& c, const Ask& ask, const QuickRefPicks& picks, std::vector<Result>& results) {
  for (auto& r : results) r.parts = score_parts(c, ask, picks, r);
  std::stable_sort(results.begin(), results.end(),
                   [](const Result& a, const Result& b) { return ranks_before(a.parts, a.recipe.name, b.parts, b.recipe.name); });
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
