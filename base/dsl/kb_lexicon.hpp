// The query lexicon as a knowledge base stores it: the lexicon table's rows
// plus every GPU key of the gpus table as a hardware word. kbc reads it to
// parse the quick-reference rows at build time (compiler/derive), kbq to
// parse questions.
#pragma once

#include "base/dsl/parse.hpp"
#include "base/sqlite.hpp"

namespace kbq::dsl {

Lexicon load_lexicon(kb::Db& db);

}  // namespace kbq::dsl
