// The query lexicon as a knowledge base stores it (see kb_lexicon.hpp).
#include "base/dsl/kb_lexicon.hpp"

namespace kbq::dsl {

Lexicon load_lexicon(kb::Db& db) {
  std::vector<LexiconRow> rows;
  kb::Stmt lx(db, "SELECT lang, kind, word, value FROM lexicon ORDER BY lang, kind, word");
  while (lx.step()) rows.push_back({lx.text(0), lx.text(1), lx.text(2), lx.text(3)});
  std::vector<std::string> hardware;
  kb::Stmt g(db, "SELECT gpu_key FROM gpus ORDER BY gpu_key");
  while (g.step()) hardware.push_back(g.text(0));
  return Lexicon(rows, hardware);
}

}  // namespace kbq::dsl
