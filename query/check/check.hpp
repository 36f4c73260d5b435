// Check stage (private to the engine): the sizing rules evaluated on a
// result's layout with the model's facts (pass / fail / unknown, with the
// numbers), the pitfalls that apply, and the citations of everything the
// result states. Which documented rule or pitfall each check cites comes
// from the KB (data/checks.tsv); the arithmetic is here.
#pragma once

#include "query/plan/plan.hpp"

namespace kbq {

void check(Context& c, Result& r);

}  // namespace kbq
