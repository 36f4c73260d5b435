// Internals of the plan stage (query/plan/*.cpp only): small helpers the
// stage's files share.
#pragma once

#include <cctype>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/checked.hpp"
#include "base/kinds.hpp"
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
inline bool generic_name_first(std::string_view a, std::string_view b) { return a.size() != b.size() ? a.size() < b.size() : a < b; }

// The override that records a change of the launcher's mode (LoRA to
// DoRA): keyed by the PEFT mode's id, passed by the launcher's own flag,
// never as a config override.
inline constexpr std::string_view kLaunchModeKey = kb::kPeftMode;

// The world a benchmark recipe runs on besides its own: the launcher
// weak-scales it (scripts/training/run_recipe.py _apply_benchmark_weak_scaling,
// scripts/common/benchmark_parallelism.py data_parallel_size and
// weak_scaled_global_batch_size): the world must divide by TP x PP x CP and
// by ETP x EP x PP, and the global batch, scaled with the data-parallel
// size, must stay whole. The scaled global batch, 0 when it cannot run there.
inline long long weak_scaled_gbs(const Recipe& r, long long world) {
  const long long tp = r.tp.value_or(1), pp = r.pp.value_or(1), cp = r.cp.value_or(1), ep = r.ep.value_or(1), etp = r.etp.value_or(tp),
                  own = r.native_gpus.value_or(0), gbs = r.gbs.value_or(0);
  const long long dense = tp * pp * cp, expert = etp * ep * pp;
  if (world <= 0 || own <= 0 || gbs <= 0 || dense <= 0 || expert <= 0) return 0;
  if (world % dense != 0 || world % expert != 0 || own % dense != 0) return 0;
  const long long own_dp = own / dense, dp = world / dense;
  return (gbs * dp) % own_dp == 0 ? gbs * dp / own_dp : 0;
}

// A '_'-separated word of a recipe name ("8b" in llama3_8b_pretrain_config).
inline bool has_token(const std::string& name, const std::string& token) {
  return !token.empty() && ("_" + name + "_").find("_" + token + "_") != std::string::npos;
}

// A recipe of the model size asked: the size token as a word of its name or
// model key ("8b"); the token with its decimal point written as the names
// write it ("1p3b": wan_1_3b); or a model whose nominal parameter count
// (models.tsv total_params_b) is the one asked ("0.6b": qwen3_600m) when
// the size states no active parameters (a MoE size "236b_a23b" is matched
// by its words only: DeepSeek-V2 is 236B too, with 21B active).
inline bool of_size(const Recipe& r, const std::string& token, double asked_params, double model_params_b) {
  std::string underscored = token;
  for (char& ch : underscored)
    if (ch == 'p') ch = '_';
  const auto named = [&](const std::string& t) { return has_token(r.name, t) || has_token(r.model_key, t); };
  if (named(token) || (underscored != token && named(underscored))) return true;
  const double model = model_params_b * 1e9;
  const bool states_active = token.find("_a") != std::string::npos;
  return !states_active && asked_params > 0 && model > 0 && std::abs(model - asked_params) <= 1e-3 * asked_params;
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

// The precisions a word asked stands for: every key it starts ("fp8": current,
// delayed, blockwise), in the KB's order.
inline std::vector<const PrecisionInfo*> precisions_asked(const Snapshot& kb, const std::string& asked) {
  std::vector<const PrecisionInfo*> out;
  for (const auto& p : kb.precisions)
    if (kb::starts_with(p.key, asked)) out.push_back(&p);
  return out;
}

// A precision asked, as answers name it: its display name, or the word in
// capitals when it stands for several.
inline std::string asked_precision_name(const std::vector<const PrecisionInfo*>& matching, const std::string& asked) {
  return matching.size() == 1 ? matching.front()->display : kb::upper_ascii(asked);
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
