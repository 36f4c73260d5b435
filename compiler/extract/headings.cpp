// The heading lexicon (see headings.hpp).
#include "compiler/extract/headings.hpp"

#include <algorithm>
#include <tuple>

#include "base/text.hpp"
#include "compiler/extract/unicode.hpp"

namespace kb {
namespace {

// A letter, a decimal digit or a mark (a Japanese voicing mark, an accent).
bool word_char(char32_t cp) { return is_alnum(cp) || is_mark(cp); }

}  // namespace

void HeadingLexicon::add_word(const std::string& lang, const std::string& what, const std::string& word, const std::string& value) {
  LangWords& lw = words_[lang];
  const std::string w = nfkc_casefold(word);
  if (what == "ignore")
    lw.ignore.insert(w);
  else if (what == "suffix")
    lw.suffixes.push_back(w);
  else if (what == "synonym")
    lw.synonyms[w] = nfkc_casefold(value);
}

void HeadingLexicon::add_heading(const std::string& lang, const std::string& heading, const std::string& kind, int level) {
  rows_.push_back({lang, normalize_space(heading), kind, level, words(lang, heading)});
}

std::string HeadingLexicon::word(const LangWords* lw, std::string token) const {
  auto all = words_.find("*");
  for (const LangWords* w : {lw, all == words_.end() ? nullptr : &all->second}) {
    if (!w) continue;
    if (w->ignore.count(token)) return {};
    if (auto it = w->synonyms.find(token); it != w->synonyms.end()) return it->second;
    for (const auto& suffix : w->suffixes)
      if (token.size() > suffix.size() + 2 && ends_with(token, suffix)) {
        std::string stem = token.substr(0, token.size() - suffix.size());
        if (auto it = w->synonyms.find(stem); it != w->synonyms.end()) return it->second;
        return stem;
      }
  }
  return token;
}

HeadingLexicon::Words HeadingLexicon::words(const std::string& lang, const std::string& heading) const {
  auto it = words_.find(lang);
  const LangWords* lw = it == words_.end() ? nullptr : &it->second;
  const std::string folded = nfkc_casefold(heading);
  Words out;
  int depth = 0;
  std::string token;
  auto flush = [&] {
    if (token.empty()) return;
    if (std::string w = word(lw, token); !w.empty()) (depth > 0 ? out.paren : out.main).insert(std::move(w));
    token.clear();
  };
  size_t i = 0;
  while (i < folded.size()) {
    const size_t at = i;
    const char32_t cp = next_code_point(folded, i);
    if (word_char(cp)) {
      token.append(folded, at, i - at);
      continue;
    }
    flush();
    if (cp == U'(' || cp == U'[') ++depth;
    if ((cp == U')' || cp == U']') && depth > 0) --depth;
  }
  flush();
  return out;
}

HeadingLexicon::Match HeadingLexicon::classify(const std::string& lang, const std::string& heading, int level,
                                               const std::string& base) const {
  Match m;
  const std::string h = normalize_space(heading);
  std::map<std::string, Words> by_lang;     // the heading's words in each row's language
  using Score = std::tuple<int, int, int>;  // level differs, how (exact text, all words, words outside parentheses), language rank
  std::map<std::string, Score> best;        // kind → its best score
  for (const auto& r : rows_) {
    int how = 0;
    if (r.heading == h) {
      how = -1;
    } else {
      auto [it, fresh] = by_lang.try_emplace(r.lang);
      if (fresh) it->second = words(r.lang, heading);
      const Words& w = it->second;
      if (w.main.empty()) continue;
      if (w == r.words)
        how = 0;
      else if (w.main == r.words.main)
        how = 1;
      else
        continue;
    }
    const int rank = r.lang == lang ? 0 : r.lang == base ? 1 : r.lang == "*" ? 2 : 3;
    const Score s{r.level != level ? 1 : 0, how, rank};
    auto [b, added] = best.try_emplace(r.kind, s);
    if (!added) b->second = std::min(b->second, s);
  }
  if (best.empty()) return m;
  const auto winner = std::min_element(best.begin(), best.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  for (const auto& [kind, s] : best)
    if (s == winner->second && kind != winner->first) m.others.push_back(kind);
  m.exact = std::get<1>(winner->second) < 0;
  if (m.others.empty())
    m.kind = winner->first;
  else
    m.others.insert(m.others.begin(), winner->first);
  return m;
}

}  // namespace kb
