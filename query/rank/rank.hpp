// Rank stage, public interface: scores a candidate recipe against the
// query, part by part (mode, model, GPU fit, sequence fit, hardware,
// intent, quick-reference recommendation, pattern, text), and drops the
// candidates the query rules out.
#pragma once

#include <map>
#include <set>

#include "plan/plan.hpp"

namespace kbq {

class Ranker {
 public:
  Ranker(Kb& kb, const kbq::dsl::Query& q, long long long_context_threshold);
  // Fills r.score and r.parts; false when the recipe is ruled out.
  bool score(Result& r, const std::optional<Model>& model, long long gpus, const std::string& hardware);
  // GPUs to plan with when the query names none: the quick-reference
  // row's count when it recommended the recipe, else 0 (recipe minimum).
  long long suggested_gpus(const Result& r) const;
  // Notes about the recommendation (older revisions that said otherwise).
  std::vector<std::string> notes_for(const Result& r, const std::string& lang) const;

 private:
  struct Pick {
    std::string row;    // quick_ref key
    int rank = 0;       // position among the row's recipes
    long long gpus = 0; // the row's GPU count (lower bound), 0 if none
  };
  Kb& kb_;
  const kbq::dsl::Query& q_;
  long long threshold_;
  std::set<std::string> intents_;           // query intents plus derived ones
  std::map<std::string, Pick> picks_;       // recipe name → quick-reference pick
  std::set<long long> text_hits_;           // recipes matching the free text
};

}  // namespace kbq
