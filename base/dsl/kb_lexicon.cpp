// The query lexicon as a knowledge base stores it (see kb_lexicon.hpp).
#include "base/dsl/kb_lexicon.hpp"

#include "base/checked.hpp"
#include "base/limits.hpp"

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
  std::vector<std::string> hardware;
  kb::Stmt g(db, "SELECT gpu_key FROM gpus ORDER BY gpu_key");
  while (g.step()) hardware.push_back(word_at(g, 0, "gpus", "gpu_key", -1));
  return Lexicon(rows, hardware);
}

}  // namespace kbq::dsl
