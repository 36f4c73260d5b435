// Rank stage (private to the engine): the order of checked results. The
// criteria and their order are data (data/ranking.tsv, docs/ranking.md):
// constraints first (mode, model and size, modality, feasible on the user's
// GPUs), then preferences (the sequence variant that covers the request,
// the fewest changes from the recipe's own layout, the quick reference's pick
// as a tie-break). Each result keeps, per criterion, its key and why (shown
// with --explain), and one line saying why it is recommended.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "query/plan/plan.hpp"

namespace kbq {

// The quick-reference rows a question matches, and the recipes they name.
struct QuickRefPicks {
  struct Pick {
    std::string row;        // quick_ref key
    int position = 0;       // the recipe's place among the row's recipes
    std::string model_key;  // the model of the recipe ("" when the code does not export it or it names none)
  };
  std::map<std::string, Pick> by_name;  // recipe name → pick
  // A question that names no model but an intent a row answers ("first time
  // trying Bridge"): the row's models, each in its recipe's mode, are the
  // model asked (constraint b). Keys: model_key + '/' + mode.
  std::set<std::string> intent_models;
  // The mode of a row matched by intent when the question names none
  // ("benchmark throughput": the row's pretraining).
  std::string intent_mode;
  // The mode such a row implies when the question asks fewer GPUs than the
  // row starts from ("smoke test on one GPU", the first-try row's
  // pretraining on 2): a preference after fit (criterion advised_mode), so
  // a mode that runs on the user's GPUs comes first.
  std::string advised_mode;
  // The models a row of the asked mode recommends when the row itself does
  // not apply to the question's GPU count ("LoRA on 1 GPU" asked on 8): the
  // quick reference's size of a family, a tie-break after its picks (a
  // family named without a size: "qwen3 lora 8 gb200" → Qwen3 8B).
  // model_key + '/' + mode → the pick's place in its row.
  std::map<std::string, int> mode_models;
};
QuickRefPicks quick_ref_picks(const std::vector<QuickRefRow>& rows, const Ask& ask);

// Trains below the default precision: the code sets FP8 or FP4, or the name says so.
bool low_precision(const Recipe& r, const std::string& default_precision);

// Every criterion's key and words for a planned result.
std::vector<ScorePart> score_parts(const Context& c, const Ask& ask, const QuickRefPicks& picks, const Result& r);

// The GPU count a recipe is written for (the own_gpus criterion): the count
// its name states, else the fewest its layout runs on; 0 when neither.
long long own_count(const Recipe& r);

// The best key a candidate not yet planned can reach: the criteria that
// need no plan as its result will have them, the others (feasible, changes,
// own GPUs) at their least but for what the plan is known to give (plan.hpp
// foresee): "does not fit" for a recipe whose state floor rules out the
// GPUs asked, its own GPUs or not once the count it runs on is known, one
// change for a layout that must change to fit. Its planned result never
// ranks before it (tests/test_state_floor.cpp), so the engine plans only
// candidates whose bound can still make the answer.
std::vector<ScorePart> bound(const Context& c, const Ask& ask, const QuickRefPicks& picks, const Recipe& r, bool substitute);

// The order of data/ranking.tsv: the first criterion whose keys differ, the
// name by length then in natural order; then the name.
bool ranks_before(const std::vector<ScorePart>& a, const std::string& a_name, const std::vector<ScorePart>& b, const std::string& b_name);

// The class an answer shows once: model, mode, sequence, precision class and
// kind (the other names of a recipe, its FP8 twins, are one `kbq show` or a
// precision word away); the name when the recipe has no model.
std::string distinct_key(const Recipe& r, const std::string& default_precision);

// Whether a candidate not planned yet, of bound `bound`, cannot be shown
// because a planned result of its own distinct key ranks before it
// (`planned` in rank order): an answer keeps only the first of a key. Never
// for a recipe without a model, whose key is its own name.
bool shadowed(const std::vector<Result>& planned, const Recipe& r, const std::vector<ScorePart>& bound,
              const std::string& default_precision);

// A question that names no model: one line saying which model the ranked
// results start with, the first criterion (data/ranking.tsv) that put it
// before the best result of another model, and that runner-up; "" when the
// results are empty.
std::string no_model_headline(const Context& c, const std::vector<Result>& ranked);

// Scores, orders and explains the results.
void rank(const Context& c, const Ask& ask, const QuickRefPicks& picks, std::vector<Result>& results);

}  // namespace kbq
