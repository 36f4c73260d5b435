// Derive stage: what kbc computes from the KB's own tables, once per KB,
// inside the build's write transaction (after emit):
//   recipes          one row per name the newest code snapshot exports: its
//                    layout, batch, dataset and precision from the code facts
//                    of its function, its model, the kind of model its
//                    forward step trains (data/steps.tsv), its minimum GPU
//                    count and what its canonical name encodes;
//   recipe_facts     the code facts as kbq reads them (with fact_targets,
//                    fact_fields, fact_values, code_files): each function,
//                    field, file and value once, integers as integers, a
//                    function's facts packed in one value;
//   quick_ref_picks  each quick-reference row's question (mode, intents,
//                    scale, GPUs), read with the query lexicon, and the
//                    recipes it names.
// docs/schema.md documents both tables.
#pragma once

#include "base/sqlite.hpp"

namespace kb {

void derive(kb::Db& db);

}  // namespace kb
