// The throughput stage (private to the engine): a planned result's expected
// tokens/s/GPU, job tokens/s, step time and, when the question gives a
// token budget, the time to train it (Result::throughput, time_to_train).
// It turns the result's layout into an estimator Target (model, task, GPU
// type and count, precision from the recipe's facts, layout, FLOPs per
// token from its architecture), asks the estimator (estimate.hpp), and says
// in the answer's language what was measured or scaled, or why nothing.
// Slow plans: when the layout's pipeline bubble is large and a nearby
// layout (twice the virtual stages, half the micro batch) would be much
// faster, a caveat gives both figures. Computes from values only.
#pragma once

#include <optional>

#include "query/kb/snapshot.hpp"
#include "query/memory/memory.hpp"
#include "query/perf/measured.hpp"
#include "query/stage.hpp"

namespace kbq::perf {

// `arch` is the model as the planner sized it (nullptr when it could not).
void add_throughput(const Context& c, const PerfSet& set, const RecipeData& d, const memory::Architecture* arch, double budget_tokens,
                    Result& r);

// The precision a recipe trains at, as the tables spell it (bf16, fp8cs,
// fp8mx, fp8sc, nvfp4), from its mixed-precision facts.
std::string precision_of(const CodeFacts& facts);

}  // namespace kbq::perf
