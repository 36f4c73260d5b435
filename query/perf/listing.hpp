// `kbq perf MODEL`: the measured rows of one model, as the engine hands them
// to render (PerfListing, query/kbq.hpp). The model is found by its KB key,
// its display name or the name NVIDIA's tables give it, compared on letters
// and digits only ("llama3 70b", "Llama 3 70B", "LLAMA3_70B" are one).
#pragma once

#include <string>
#include <variant>

#include "query/kbq.hpp"
#include "query/perf/measured.hpp"
#include "query/perf/tables.hpp"

namespace kbq::perf {

std::variant<PerfListing, Error> perf_listing(const PerfTables& tables, const PerfSet& set, const std::string& model, bool history);

// The KB model a name means among the models that have measured rows
// ("" when none; `candidates` lists them when the name is ambiguous).
std::string find_measured_model(const PerfTables& tables, const PerfSet& set, const std::string& name,
                                std::vector<std::string>& candidates);

}  // namespace kbq::perf
