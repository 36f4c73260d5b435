// What kbc derives for kbq's ranking, once per knowledge base (inside the
// build's write transaction, after every table is filled):
//   recipes.family_intents  the intents of the recipe's family headings in
//                           every edition (read with the query lexicon);
//   recipes.model_moe       1 when the model facts list experts;
//   recipes.shape, shapes   recipes that every query term not naming a
//                           recipe scores alike share a shape;
//   quick_ref_picks         each quick-reference row's question (mode,
//                           intents, scale, GPUs) and the recipes it names.
// A query that names no model, size, family or free text scores one row per
// shape and reads only the best shapes' members (query/plan/plan.cpp), so
// its cost follows the number of shapes, not of recipes.
#pragma once

#include <set>
#include <string>

#include "base/dsl/parse.hpp"
#include "base/sqlite.hpp"

namespace kb {

// Intent words of a family heading: single words and word pairs looked up
// in the lexicon (a full parse would also rank typo suggestions, which
// headings do not need).
void heading_intents(const kbq::dsl::Lexicon& lexicon, const std::string& heading, std::set<std::string>& into);

// Fills recipes.family_intents, model_moe, shape, the shapes table and
// quick_ref_picks.
void derive_ranking_columns(kb::Db& db);

}  // namespace kb
