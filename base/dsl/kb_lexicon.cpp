// The query lexicon as a knowledge base stores it (see kb_lexicon.hpp).
#include "base/dsl/kb_lexicon.hpp"

#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/checked.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"

namespace kbq::dsl {

namespace {
// A word of the KB's lexicon: at most limits::kMaxLexiconWordBytes (the
// lexicon's search tree is as deep as its longest word).
std::string word_at(const kb::Stmt& st, int c, const char* table, const char* column, int row_col) {
  if (st.view(c).size() > kb::limits::kMaxLexiconWordBytes)
    throw kb::KbValueError(table, column, kb::row_name(st, {table, column, row_col}),
                           "longer than " + std::to_string(kb::limits::kMaxLexiconWordBytes) + " bytes");
  return st.text(c);
}
}  // namespace

Lexicon load_lexicon(kb::Db& db) {
  std::vector<LexiconRow> rows;
  kb::Stmt lx(db, "SELECT lang, kind, word, value FROM lexicon ORDER BY lang, kind, word");
  while (lx.step()) rows.push_back({lx.text(0), lx.text(1), word_at(lx, 2, "lexicon", "word", -1), word_at(lx, 3, "lexicon", "value", 2)});
  Lexicon::Extras extras;
  kb::Stmt g(db, "SELECT gpu_key FROM gpus ORDER BY gpu_key");
  while (g.step()) extras.hardware_keys.push_back(word_at(g, 0, "gpus", "gpu_key", -1));
  kb::Stmt sys(db, "SELECT system, gpu_key, gpus, nodes FROM systems ORDER BY system");
  while (sys.step())
    extras.systems[word_at(sys, 0, "systems", "system", -1)] = {
        word_at(sys, 1, "systems", "gpu_key", 0), static_cast<int>(kb::kb_int(sys, 2, {"systems", "gpus", 0}, 1, kMaxCount)),
        static_cast<int>(kb::kb_int(sys, 3, {"systems", "nodes", 0}, 1, kMaxCount))};
  // The launcher's --dataset presets (the newest snapshot's code).
  kb::Stmt ds(db, "SELECT DISTINCT preset FROM code_datasets ORDER BY preset");
  while (ds.step()) extras.dataset_presets.push_back(word_at(ds, 0, "code_datasets", "preset", -1));
  // Words of recipe names: free text that narrows the recipes, never corrected as a typo.
  // A thousand names share a few hundred words: each word is looked up as a
  // view of its row (valid until the next step), and copied into the set
  // once; `seen` then views the set's own copy.
  kb::Stmt nm(db, "SELECT DISTINCT name FROM recipes");
  std::unordered_set<std::string_view> seen;
  while (nm.step())
    for (std::string_view rest = nm.view(0); !rest.empty();) {
      const std::size_t cut = rest.find('_');
      const std::string_view word = rest.substr(0, cut);
      rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
      if (word.empty() || word.size() > kb::limits::kMaxLexiconWordBytes || seen.count(word)) continue;
      seen.insert(*extras.name_tokens.emplace(word).first);
    }
  return Lexicon(rows, std::move(extras));
}

}  // namespace kbq::dsl
