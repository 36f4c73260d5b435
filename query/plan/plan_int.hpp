// Internals of the plan stage (query/plan/*.cpp only): small helpers the
// stage's files share.
#pragma once

#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/checked.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"
#include "query/plan/layout.hpp"
#include "query/plan/plan.hpp"

namespace kbq::plan_int {

// A whole number, or `fallback` when the text is not one.
inline long long to_ll(const std::string& s, long long fallback = 0) {
  try {
    size_t used = 0;
    const long long v = std::stoll(s, &used);
    return used == s.size() ? v : fallback;
  } catch (...) {
    return fallback;
  }
}

// The smallest power of two ≥ v: kb::next_pow2, which cannot overflow
// (a sequence length of 9e18 once made this loop forever, issue 12).
inline long long next_pow2(long long v) { return kb::next_pow2(v).value_or(kb::limits::kMaxParallel); }

// Of two exported names of one recipe function, the one an answer shows:
// the generic alias (shorter) before the canonical name, then by bytes.
inline bool generic_name_first(const std::string& a, const std::string& b) { return a.size() != b.size() ? a.size() < b.size() : a < b; }

// A '_'-separated word of a recipe name ("8b" in llama3_8b_pretrain_config).
inline bool has_token(const std::string& name, const std::string& token) {
  return !token.empty() && ("_" + name + "_").find("_" + token + "_") != std::string::npos;
}

// A recipe name of the family a prefix names: "qwen3" takes qwen3_*, not
// qwen35_*; a family word without a version ("qwen", "llama") takes every
// version.
inline bool in_family(const std::string& name, const std::string& prefix) {
  if (prefix.empty()) return true;
  if (!kb::starts_with(name, prefix) || name.size() == prefix.size()) return false;
  const char next = name[prefix.size()];
  if (next == '_') return true;
  const bool prefix_ends_in_digit = std::isdigit(static_cast<unsigned char>(prefix.back())) != 0;
  return !prefix_ends_in_digit && std::isdigit(static_cast<unsigned char>(next)) != 0;
}

// The keys of every GPU of the KB.
inline std::vector<std::string> gpu_keys(const Snapshot& kb) {
  std::vector<std::string> out;
  for (const auto& g : kb.gpus) out.push_back(g.key);
  return out;
}

// One recipe being planned: the search input and what the user fixed.
struct Plan {
  SearchInput in;
  Sizing sizing;
  Gpu gpu;
  long long seq = 0;
  long long fixed_gbs = 0;
  std::optional<bool> fixed_sp;
  KeyValues other;  // user overrides with no layout dimension: passed through as KEY=VALUE
};

// The preset for --dataset: the one asked (an old name renamed), else the
// documents' preset for the mode, among those the code's launcher offers for
// the recipe's launch mode; a note when the asked one is not offered.
std::string pick_dataset(const Context& c, const Recipe& r, const std::string& launch_mode, const std::string& wanted,
                         std::vector<std::string>& notes);

// Every size the command pins, the changes, and the other overrides, each
// with its impact class (changes.cpp).
void overrides_of(const Context& c, Result& res, const Recipe& r, const Plan& p, const std::string& launch_mode);

}  // namespace kbq::plan_int
