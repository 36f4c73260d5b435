// `kbq list`: the recipes the code exports that a few words allow (mode,
// model, size, recipe-name words, read with the query language's lexicon),
// a GPU type and a kind. Pure: the engine hands in the parsed words and the
// catalogs (query/engine.cpp, Engine::list).
#pragma once

#include <variant>

#include "base/dsl/parse.hpp"
#include "query/kb/snapshot.hpp"
#include "query/kbq.hpp"
#include "query/stage.hpp"

namespace kbq {

std::variant<RecipeList, Error> list_recipes(const Context& c, const kbq::dsl::Query& q, const ListOptions& opts, const Catalog& library,
                                             const Catalog& benchmark);

}  // namespace kbq
