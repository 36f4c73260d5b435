// The query lexicon as a knowledge base stores it (see kb_lexicon.hpp).
#include "base/dsl/kb_lexicon.hpp"

#include <stdexcept>
#include <string_view>
#include <vector>

#include "base/checked.hpp"
#include "base/dsl/detail.hpp"
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

bool recipe_name_word(kb::Db& db, std::string_view word) {
  if (word.empty() || word.size() > kb::limits::kMaxLexiconWordBytes || word.find('_') != std::string_view::npos) return false;
  kb::Stmt st(db, "SELECT EXISTS (SELECT 1 FROM recipes WHERE instr('_' || name || '_', ?1) > 0)");
  st.bind(1, "_" + std::string(word) + "_");
  return st.step() && st.integer(0) != 0;
}

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
  // Words of recipe names: free text that narrows the recipes, never
  // corrected as a typo. Looked up in the recipes table for the word the
  // corrector would change, not cut from every name for every question (the
  // names grow with the recipes; a typo is rare).
  extras.is_name_word = [&db](std::string_view word) { return recipe_name_word(db, word); };
  // The language of a question no word places, and of each script
  // (data/planner.tsv base_language, script_languages "kana:ja,han:zh").
  kb::Stmt pl(db, "SELECT key, value FROM planner WHERE key IN ('base_language', 'script_languages') ORDER BY key");
  while (pl.step()) {
    const std::string key = pl.text(0), value = word_at(pl, 1, "planner", "value", 0);
    if (key == "base_language") {
      extras.base_language = kb::trim(value);
      continue;
    }
    for (const auto& pair : kb::split(value, ',')) {
      const auto colon = pair.find(':');
      if (kb::trim(pair).empty()) continue;
      const std::string script = colon == std::string::npos ? std::string() : kb::trim(pair.substr(0, colon));
      if (!is_script(script))
        throw kb::KbValueError("planner", "value", key,
                               "'" + pair + "' is not script:language with a script the parser tells apart (" + script_names() + ")");
      extras.script_languages[script] = kb::trim(pair.substr(colon + 1));
    }
  }
  return Lexicon(rows, std::move(extras));
}

void store_compiled_lexicon(kb::Db& db) {
  const std::string bytes = load_lexicon(db).to_stored();
  // kbc writes no lexicon kbq would refuse: read back before it is kept
  // (its size, kMaxCompiledLexiconBytes, is a column limit: write_kb_file
  // checks the file against every limit before it keeps it).
  (void)Lexicon::from_stored(bytes, {});
  db.exec("DELETE FROM lexicon_compiled");
  kb::Stmt st(db, "INSERT INTO lexicon_compiled(id, bytes) VALUES (1, ?)");
  st.bind_blob(1, bytes).run();
}

Lexicon load_compiled_lexicon(kb::Db& db) {
  kb::Stmt st(db, "SELECT bytes FROM lexicon_compiled WHERE id = 1");
  if (!st.step()) throw kb::KbValueError("lexicon_compiled", "bytes", "row 1", "missing: kbc writes the compiled lexicon in every KB");
  // Its size is bounded when a --kb file is opened (kKbColumnLimits), and
  // kbc checked the embedded one against the same limits.
  const std::string_view bytes = st.blob(0);
  try {
    return Lexicon::from_stored(bytes, [&db](std::string_view word) { return recipe_name_word(db, word); });
  } catch (const std::runtime_error& e) {
    throw kb::KbValueError("lexicon_compiled", "bytes", "row 1", e.what());
  }
}

}  // namespace kbq::dsl
