// Check stage, public interface: the sizing rules evaluated on a layout
// with the model's facts (pass / fail / unknown, with the numbers), and the
// pitfalls that apply. Which documented rule or pitfall each check cites
// comes from the KB (data/checks.tsv); the arithmetic is here.
#pragma once

#include "query/plan/plan.hpp"

namespace kbq {

void check_layout(Kb& kb, Result& r, const std::optional<Model>& model, const std::string& lang, long long long_context_threshold);

}  // namespace kbq
