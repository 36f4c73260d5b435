// Check stage (private to the engine): every sizing rule's verdict on a
// planned result's layout, with its numbers in the answer's language
// (query/check/rules.hpp does the arithmetic), the memory and batch
// verdicts, the pitfalls that apply, the caveats a person must see (at most
// three), and the citations of everything the result states. A result that
// fails a verdict is never runnable.
#pragma once

#include "query/plan/plan.hpp"

namespace kbq {

void check(Context& c, Result& r);

}  // namespace kbq
