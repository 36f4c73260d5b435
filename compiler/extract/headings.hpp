// The heading lexicon: which kind of section a heading opens, matched on
// words rather than exact text. A heading and every row of
// data/sections.tsv are reduced to their words, each reduced the same way:
//
//   1. NFKC with case folding (full-width forms, case, zero-width characters);
//   2. cut at anything that is not a letter, mark or digit (punctuation,
//      symbols, spaces); words inside ( ) or [ ] are the parenthetical;
//   3. data/heading-words.tsv, in the row's language: `ignore` words are
//      dropped (en "and", fr "de"), a `suffix` is cut from a longer word
//      (en "s": "Pitfalls" is "pitfall"), a `synonym` stands for another
//      word (en "adjustment" for "tuning", "performance" for "benchmark");
//   4. word order does not count: the words are a set.
//
// A heading matches a row whose words equal its own, parenthetical
// included, or else whose words outside parentheses equal its own. Among
// several rows the one whose kind's level (data/section-kinds.tsv) is the
// heading's level wins, then a full match over a match without the
// parenthetical, then the heading's own language, English, `*`, any other.
// Two kinds equally good are an ambiguity the caller reports.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kb {

class HeadingLexicon {
 public:
  // The words of a heading in a language, as compared.
  struct Words {
    std::set<std::string> main;   // outside parentheses
    std::set<std::string> paren;  // inside ( ) or [ ]
    bool operator==(const Words& o) const { return main == o.main && paren == o.paren; }
  };
  struct Match {
    std::string kind;                 // the section kind, or "" when no row matches
    std::vector<std::string> others;  // other kinds that match as well: the heading is ambiguous (kind is "")
    bool exact = false;               // the heading is a row's text (after whitespace normalization)
  };

  // data/heading-words.tsv: `what` is ignore, suffix or synonym; `value` the
  // word a synonym stands for.
  void add_word(const std::string& lang, const std::string& what, const std::string& word, const std::string& value);
  // data/sections.tsv, with the level of the row's kind.
  void add_heading(const std::string& lang, const std::string& heading, const std::string& kind, int level);

  Words words(const std::string& lang, const std::string& heading) const;
  // A row of `lang` first, then of `base` (the language the skill is
  // written in, which other editions leave parts in), then of every language.
  Match classify(const std::string& lang, const std::string& heading, int level, const std::string& base) const;

 private:
  struct LangWords {
    std::set<std::string> ignore;
    std::vector<std::string> suffixes;
    std::map<std::string, std::string> synonyms;
  };
  struct Row {
    std::string lang, heading, kind;  // heading: whitespace-normalized
    int level = 0;
    Words words;
  };
  std::string word(const LangWords* lw, std::string token) const;
  std::map<std::string, LangWords> words_;  // by language ("*" applies to all)
  std::vector<Row> rows_;
};

}  // namespace kb
