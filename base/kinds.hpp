// The closed sets of states both programs share, as enums with one spelling
// table each: how a recipe is launched, a rule's verdict, an override's
// impact class, what a parallelism cell says, how a code fact is known. The spellings are the ones the
// KB stores and the JSON outputs print; a typo is a compile error, not a
// silent mismatch. Open sets (modes, intents, languages, GPU keys) are data
// of the KB and stay strings.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace kb {

// A recipe's package, which decides its launcher.
enum class RecipeKind : std::uint8_t {
  Library,    // megatron.bridge.recipes: functional training, scripts/training/run_recipe.py
  Benchmark,  // megatron.bridge.perf_recipes: throughput benchmarks, scripts/training/train.sh
};

// A sizing rule's verdict on a layout.
enum class Status : std::uint8_t {
  Pass,     // the layout satisfies the rule
  Fail,     // the layout breaks the rule: the command would not run as intended
  Unknown,  // a fact the rule needs is missing
};

// What an override changes (the skill's configuration layers).
enum class Impact : std::uint8_t {
  Convergence,    // a new convergence experiment
  Execution,      // semantics-preserving; validate numerics
  BenchmarkOnly,  // a benchmark shortcut; not convergence evidence
  Unknown,        // the key's layer is not documented
};

// What a parallelism or GPU-count cell says.
enum class RangeState : std::uint8_t {
  Unknown,  // nothing stated
  Value,    // a number, a range (1–8) or an open range (512+)
  None,     // "—": not used, i.e. size 1
  Varies,   // "varies": depends on the size or the setup
};

// How a fact of the Megatron Bridge code is known (kb-sources/code/*/recipe-facts.tsv).
enum class FactState : std::uint8_t {
  Value,         // set by the code
  Default,       // not set: a dataclass default (of the snapshot, or cited outside it)
  Alternatives,  // depends on a condition the extractor cannot decide: the value holds them '|'-joined
  Unknown,       // not computable: the note says why
};

// The mode ids (an open set, data of the KB) that code relates by rule:
// PEFT is a kind of fine-tuning, so a PEFT word refines a descriptive
// fine-tuning word (base/dsl/resolve.cpp), and a PEFT recipe is launched
// with its own flag. Code names these constants, never the literals.
inline constexpr std::string_view kPretrainMode = "pretrain";
inline constexpr std::string_view kSftMode = "sft";
inline constexpr std::string_view kPeftMode = "peft";

// The kinds of perf_fit rows (base/schema.sql): kbc writes them
// (compiler/generate/perf_fit.cpp), kbq reads them (query/kb/perf.cpp).
inline constexpr std::string_view kPerfFitPlatform = "platform";
inline constexpr std::string_view kPerfFitBridged = "bf16_bridged";

// The spelling tables. Each enum's spellings, in declaration order.
inline constexpr std::array<std::pair<RecipeKind, std::string_view>, 2> kRecipeKindNames{{
    {RecipeKind::Library, "library"},
    {RecipeKind::Benchmark, "benchmark"},
}};
inline constexpr std::array<std::pair<Status, std::string_view>, 3> kStatusNames{{
    {Status::Pass, "pass"},
    {Status::Fail, "fail"},
    {Status::Unknown, "unknown"},
}};
inline constexpr std::array<std::pair<Impact, std::string_view>, 4> kImpactNames{{
    {Impact::Convergence, "convergence"},
    {Impact::Execution, "execution"},
    {Impact::BenchmarkOnly, "benchmark-only"},
    {Impact::Unknown, "unknown"},
}};
inline constexpr std::array<std::pair<RangeState, std::string_view>, 4> kRangeStateNames{{
    {RangeState::Unknown, "unknown"},
    {RangeState::Value, "value"},
    {RangeState::None, "none"},
    {RangeState::Varies, "varies"},
}};

inline constexpr std::array<std::pair<FactState, std::string_view>, 4> kFactStateNames{{
    {FactState::Value, "value"},
    {FactState::Default, "default"},
    {FactState::Alternatives, "alternatives"},
    {FactState::Unknown, "unknown"},
}};

namespace detail {
template <typename E, std::size_t N>
constexpr std::string_view spell(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [v, s] : table)
    if (v == e) return s;
  return {};
}
template <typename E, std::size_t N>
constexpr std::optional<E> read(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) {
  for (const auto& [v, name] : table)
    if (name == s) return v;
  return std::nullopt;
}
}  // namespace detail

constexpr std::string_view to_string(RecipeKind e) { return detail::spell(kRecipeKindNames, e); }
constexpr std::string_view to_string(Status e) { return detail::spell(kStatusNames, e); }
constexpr std::string_view to_string(Impact e) { return detail::spell(kImpactNames, e); }
constexpr std::string_view to_string(RangeState e) { return detail::spell(kRangeStateNames, e); }
constexpr std::string_view to_string(FactState e) { return detail::spell(kFactStateNames, e); }

// Spelling → enum; nullopt for a spelling the table does not have.
template <typename E>
constexpr std::optional<E> parse_kind(std::string_view s);
template <>
constexpr std::optional<RecipeKind> parse_kind<RecipeKind>(std::string_view s) {
  return detail::read(kRecipeKindNames, s);
}
template <>
constexpr std::optional<Status> parse_kind<Status>(std::string_view s) {
  return detail::read(kStatusNames, s);
}
template <>
constexpr std::optional<Impact> parse_kind<Impact>(std::string_view s) {
  return detail::read(kImpactNames, s);
}
template <>
constexpr std::optional<RangeState> parse_kind<RangeState>(std::string_view s) {
  return detail::read(kRangeStateNames, s);
}
template <>
constexpr std::optional<FactState> parse_kind<FactState>(std::string_view s) {
  return detail::read(kFactStateNames, s);
}

}  // namespace kb
