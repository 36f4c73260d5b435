// The query lexicon as a knowledge base stores it: the lexicon table's rows
// plus every GPU key of the gpus table as a hardware word. kbc reads it to
// parse the quick-reference rows at build time (compiler/derive), kbq to
// parse questions.
#pragma once

#include <string_view>

#include "base/dsl/parse.hpp"
#include "base/sqlite.hpp"

namespace kbq::dsl {

// The lexicon asks `db` for words of recipe names while it parses
// (recipe_name_word): `db` must outlive it.
Lexicon load_lexicon(kb::Db& db);

// kbc: the lexicon load_lexicon builds, stored ready to use in the table
// lexicon_compiled (Lexicon::to_stored), after a check that it reads back.
void store_compiled_lexicon(kb::Db& db);
// kbq: the stored lexicon (Lexicon::from_stored); a KB without one, or
// with one that does not read back, is refused (kb::KbValueError). `db`
// must outlive it, as for load_lexicon.
Lexicon load_compiled_lexicon(kb::Db& db);

// Whether `word` is one of the `_`-separated words of a recipe name in the
// recipes table (words longer than limits::kMaxLexiconWordBytes never are).
bool recipe_name_word(kb::Db& db, std::string_view word);

}  // namespace kbq::dsl
