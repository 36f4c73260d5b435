// Check stage (private to the engine): every sizing rule's verdict on a
// planned result's layout, with its numbers in the answer's language
// (query/rules/rules.hpp does the arithmetic, on the model numbers the plan
// stage sized), the memory and batch verdicts, the pitfalls that apply, the
// caveats a person must see (at most three), and the citations of
// everything the result states. A result that fails a verdict is never
// runnable. Computes from the values it is given; reads no database.
#pragma once

#include <vector>

#include "query/kb/snapshot.hpp"
#include "query/rules/rules.hpp"
#include "query/stage.hpp"

namespace kbq {

// Checks a planned result: `model` is what the rules read of its model (as
// the plan stage sized it), `drift` where the documents disagree with the
// code about its recipe (cited in the notes).
void check(const Context& c, const RuleModel& model, const std::vector<DriftRow>& drift, Result& r);

}  // namespace kbq
