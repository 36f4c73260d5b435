// Plan stage (private to the engine): candidate recipes for a question, each
// fitted to the user's GPUs and sequence length (the layout), with its
// dataset preset, overrides, notes and launch command. Candidates are chosen
// with the ranker's score (query/rank), so the best `limit` are found without
// scoring every recipe in full; check and rank run after this stage.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/dsl/parse.hpp"
#include "query/kb/kb.hpp"
#include "query/kbq.hpp"
#include "query/rank/rank.hpp"

namespace kbq {

// What every stage of one answer shares.
struct Context {
  Kb& kb;
  std::string lang;         // language of the answer's prose
  long long threshold = 0;  // long-context threshold in tokens (data/planner.tsv)
};
Context make_context(Kb& kb, const std::string& lang);

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// The candidates for a parsed question, best first, each with its layout,
// dataset, overrides, notes and command. Adds dataset advice to a.warnings.
std::variant<std::vector<Result>, Error> plan_question(Context& c, const kbq::dsl::Query& q, Ranker& ranker, size_t limit, Answer& a);

// One recipe on `gpus` GPUs (0 = its own minimum) of `hardware` ("" = the
// KB's default), with the user's own overrides (KEY=VALUE, keys of the KB).
Result plan_recipe(Context& c, const Recipe& recipe, long long gpus, const std::string& hardware, const KeyValues& overrides);

// The user's overrides, checked: every key known, every parallel size a
// positive whole number.
std::optional<Error> check_overrides(Kb& kb, const KeyValues& overrides);

}  // namespace kbq
