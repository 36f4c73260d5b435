// The one rule that picks which edition of an entity a reader sees in a
// language, shared by kbq (over the KB's entity_texts) and kbc generate
// (over the compiler's entities), so an answer and a generated page never
// show different text for the same rule or pitfall:
//   1. the language's own newest usable edition;
//   2. else the base language's (the skill is written in it), marked;
//   3. else the winning edition (the newest revision's), marked unless it is
//      in the language asked.
// "Usable" is decided once, at compile time (compiler/resolve/usable.hpp):
// not overruled by a newer revision.
#pragma once

#include <string>

namespace kb {

// candidates: newest first (the winner first). lang_of(c) → its language,
// usable(c) → whether it may be shown. Returns the index chosen (or npos
// when there is no candidate) and the language shown instead of `lang`
// ("" when none).
template <typename Range, typename LangOf, typename Usable>
std::pair<std::size_t, std::string> choose_edition(const Range& candidates, const std::string& lang, const std::string& base,
                                                   LangOf lang_of, Usable usable) {
  constexpr std::size_t npos = static_cast<std::size_t>(-1);
  std::size_t i = 0;
  for (const auto& c : candidates) {
    if (lang_of(c) == lang && usable(c)) return {i, ""};
    ++i;
  }
  if (lang != base) {
    i = 0;
    for (const auto& c : candidates) {
      if (lang_of(c) == base && usable(c)) return {i, base};
      ++i;
    }
  }
  if (i == 0 && std::begin(candidates) == std::end(candidates)) return {npos, ""};
  const auto& w = *std::begin(candidates);
  return {0, lang_of(w) == lang ? std::string() : lang_of(w)};
}

}  // namespace kb
