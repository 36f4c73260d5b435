// Rank stage (private to the engine): scores a candidate recipe against the
// question, part by part (mode, model, GPU fit, sequence fit, hardware,
// intent, quick-reference recommendation, pattern, text), drops the
// candidates the question rules out, and orders the checked results. The
// plan stage uses the same scores to pick its candidates (query/plan).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/dsl/parse.hpp"
#include "query/kb/kb.hpp"
#include "query/kbq.hpp"

namespace kbq {

class Ranker {
 public:
  Ranker(Kb& kb, const kbq::dsl::Query& q, long long long_context_threshold);
  // Which parts score() adds: all; those the recipe's shape decides (mode,
  // GPUs, sequence, hardware, intents, pattern; compiler/derive); or those
  // that read its name, model key or id (model, size, family filter,
  // quick-reference pick, free text). Shape + Names = All, and a recipe is
  // ruled out by All exactly when one of the two rules it out.
  enum class Parts { All, Shape, Names };
  // Fills r.score and r.parts; false when the recipe is ruled out.
  bool score(Result& r, long long gpus, const std::string& hardware, Parts parts = Parts::All);
  // True when a query term scores recipe names (model, size, family
  // filter), so every candidate must be scored by itself.
  bool names_matter() const;
  // The most the parts that read names (model, size) add to a recipe's
  // shape score; quick-reference picks and free text are scored one by one.
  int name_parts_bound() const;
  // Recipes the quick reference picks for this query, and recipe ids the
  // free text matches: scored by themselves, above their shapes.
  std::vector<std::string> named() const;
  const std::set<long long>& text_hits() const { return text_hits_; }
  // GPUs to plan with when the query names none: the quick-reference
  // row's count when it recommended the recipe, else 0 (recipe minimum).
  long long suggested_gpus(const Result& r) const;
  // Notes about the recommendation (older revisions that said otherwise).
  std::vector<std::string> notes_for(const Result& r, const std::string& lang) const;

 private:
  struct Pick {
    std::string row;     // quick_ref key
    int rank = 0;        // position among the row's recipes
    long long gpus = 0;  // the row's GPU count (lower bound), 0 if none
  };
  Kb& kb_;
  const kbq::dsl::Query& q_;
  long long threshold_;
  std::set<std::string> intents_;                 // query intents plus derived ones
  std::map<std::string, Pick> picks_;             // recipe name → quick-reference pick
  std::set<long long> text_hits_;                 // recipes matching the free text
  std::string moe_intent_, long_context_intent_;  // planner parameters
  std::vector<std::string> modality_intents_;     // intents a recipe family must have, else a penalty
};

// The answer order of checked results: score, then recipe rows before
// patterns, then name and mode.
void rank(std::vector<Result>& results);

}  // namespace kbq
