// Rank stage (see rank.hpp).
#include "query/rank/rank.hpp"

#include <algorithm>
#include <string>

#include "base/text.hpp"

namespace kbq {
namespace {

// Points of the parts that read recipe names (see name_parts_bound).
constexpr int kModelPoints = 25;
constexpr int kSizePoints = 20;

bool name_has_token(const std::string& name, const std::string& token) {
  return !token.empty() && ("_" + name + "_").find("_" + token + "_") != std::string::npos;
}

}  // namespace

Ranker::Ranker(Kb& kb, const kbq::dsl::Query& q, long long threshold) : kb_(kb), q_(q), threshold_(threshold) {
  moe_intent_ = kb.planner("moe_intent");
  long_context_intent_ = kb.planner("long_context_intent");
  for (auto& i : kb::split(kb.planner("modality_intents"), ','))
    if (!i.empty()) modality_intents_.push_back(i);
  intents_ = q.intents;
  if (q.seq_len && *q.seq_len > threshold) intents_.insert(long_context_intent_);
  intents_.erase("");
  // Quick-reference rows (what each row asks was read with the lexicon at
  // build time): a row applies when its mode, intents and scale agree with
  // the query.
  for (const auto& row : kb.quick_ref_rows()) {
    const bool has_mode = !row.mode.empty();
    if (!has_mode && row.intents.empty()) continue;
    if (has_mode && q.mode && row.mode != *q.mode) continue;
    const bool ok = std::all_of(row.intents.begin(), row.intents.end(), [&](const std::string& i) { return intents_.count(i) > 0; });
    if (!ok || (!row.scale.empty() && row.scale != q.scale)) continue;
    if (has_mode && !q.mode && row.intents.empty()) continue;  // a mode-only row needs the query's mode
    // A row for one GPU is a hard constraint; ranges are advice.
    if (q.gpus && row.gpus == 1 && row.single_gpu_count && *q.gpus != 1) continue;
    int rank = 0;
    for (const auto& name : row.recipes) {
      if (!picks_.count(name)) picks_[name] = {row.row, rank, row.gpus};
      ++rank;
    }
  }
  if (!q.free_text.empty()) {
    auto hits = kb.search_recipes(q.free_text);
    text_hits_.insert(hits.begin(), hits.end());
  }
}

bool Ranker::score(Result& r, long long gpus, const std::string& hardware, Parts parts) {
  const Recipe& rc = r.recipe;
  const bool name_parts = parts != Parts::Shape;
  const bool shape_parts = parts != Parts::Names;
  auto part = [&](const char* name, int points, std::string why) {
    r.parts.push_back({name, points, std::move(why)});
    r.score += points;
  };
  const auto filter = [&](const std::string& f) {
    auto it = q_.filters.find(f);
    return it == q_.filters.end() ? std::string{} : it->second;
  };
  if (shape_parts && q_.mode) {
    if (!rc.mode.empty() && rc.mode != *q_.mode) return false;
    if (!rc.mode.empty()) part("mode", 30, rc.mode);
  }
  if (name_parts && !q_.model.empty()) {
    if (!(kb::starts_with(rc.name, q_.model + "_") || rc.model_key == q_.model || kb::starts_with(rc.model_key, q_.model + "_")))
      return false;
    part("model", kModelPoints, q_.model);
  }
  if (name_parts && !q_.size_token.empty()) {
    if (name_has_token(rc.name, q_.size_token) || name_has_token(rc.model_key, q_.size_token)) {
      part("model", kSizePoints, "size " + q_.size_token);
    } else if (rc.pattern && !rc.sizes.empty()) {
      part("model", 5, "pattern covers sizes " + rc.sizes);
    } else {
      const std::string first = kb::split(q_.size_token, '_').front();
      if (name_has_token(rc.name, first) || name_has_token(rc.model_key, first))
        part("model", 15, "size " + first);
      else
        part("model", -20, "size differs");
    }
  }
  if (auto fam = filter("family"); name_parts && !fam.empty() && q_.model.empty() && !kb::starts_with(rc.name, fam)) return false;
  if (shape_parts && gpus > 0) {
    if (rc.gpus.is_value()) {
      if (rc.gpus.lo <= gpus)
        part("gpus", 15, "fits " + std::to_string(gpus) + " GPUs (min " + kb::format_range(rc.gpus) + ")");
      else if (rc.ep.exact() && rc.ep.value() > 1)
        part("gpus", -10, "needs " + kb::format_range(rc.gpus) + " GPUs; EP can shrink");
      else
        part("gpus", -30, "needs " + kb::format_range(rc.gpus) + " GPUs");
    } else {
      const long long prod = rc.tp.value() * rc.pp.value() * rc.cp.value();
      if (rc.tp.exact() && rc.pp.exact() && prod > gpus)
        part("gpus", -30, "TP×PP×CP = " + std::to_string(prod));
      else
        part("gpus", 5, "GPU minimum not stated");
    }
  }
  if (shape_parts && q_.seq_len) {
    const long long s = *q_.seq_len;
    if (rc.seq_len == s)
      part("seq", 15, "native " + std::to_string(s));
    else if (rc.seq_len > s)
      part("seq", 8, "native " + std::to_string(rc.seq_len) + " ≥ " + std::to_string(s));
    else if (rc.seq_len > 0)
      part("seq", 5, std::to_string(rc.seq_len) + " + CP override");
  }
  if (shape_parts && !q_.hardware.empty() && rc.kind == RecipeKind::Benchmark) {
    if (std::find(rc.gpu_types.begin(), rc.gpu_types.end(), hardware) != rc.gpu_types.end())
      part("hardware", 10, hardware + " listed");
    else
      part("hardware", -15, hardware + " not listed");
  }
  const auto& fam_intents = rc.family_intents;
  const auto has = [](const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  const bool moe = kb_.is_moe(rc);
  if (shape_parts) {
    for (const auto& i : intents_) {
      if (i == moe_intent_)
        part("intent", moe ? 10 : -15, moe ? "MoE" : "dense");
      else if (i == long_context_intent_) {
        if (rc.seq_len > threshold_) part("intent", 5, i);
      } else if (has(fam_intents, i))
        part("intent", 15, i);
      else if (has(modality_intents_, i))
        part("intent", -25, "not " + i);
    }
  }
  if (name_parts) {
    if (auto it = picks_.find(rc.name); it != picks_.end())
      part("quick_ref", 40 - 4 * it->second.rank, "quick reference row " + it->second.row);
  }
  if (shape_parts && rc.pattern) part("pattern", -10, "pattern row");
  if (name_parts && !q_.free_text.empty() && text_hits_.count(rc.id)) part("text", 5, kb::join(q_.free_text, " "));
  return true;
}

int Ranker::name_parts_bound() const { return (q_.model.empty() ? 0 : kModelPoints) + (q_.size_token.empty() ? 0 : kSizePoints); }

bool Ranker::names_matter() const { return !q_.model.empty() || !q_.size_token.empty() || q_.filters.count("family") > 0; }

std::vector<std::string> Ranker::named() const {
  std::vector<std::string> out;
  for (const auto& [name, pick] : picks_) out.push_back(name);
  return out;
}

long long Ranker::suggested_gpus(const Result& r) const {
  auto it = picks_.find(r.recipe.name);
  return it == picks_.end() ? 0 : it->second.gpus;
}

std::vector<std::string> Ranker::notes_for(const Result& r, const std::string& lang) const {
  auto it = picks_.find(r.recipe.name);
  if (it == picks_.end()) return {};
  return superseded_notes(kb_, "quick_ref", it->second.row, lang, {"recipe", "gpus"}, false);
}

void rank(std::vector<Result>& results) {
  std::stable_sort(results.begin(), results.end(), [](const Result& a, const Result& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.recipe.pattern != b.recipe.pattern) return !a.recipe.pattern;
    if (a.recipe.name != b.recipe.name) return a.recipe.name < b.recipe.name;
    return a.recipe.mode < b.recipe.mode;
  });
}

}  // namespace kbq
