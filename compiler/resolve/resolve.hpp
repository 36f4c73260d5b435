// Resolve stage, public interface: fact records of every edition →
// aligned entities (the same rule, pitfall, row or command across
// languages and revisions), winning values (newest revision), conflicts,
// dataset renames, missing translations, and recipes known by mention.
#pragma once

#include <string>
#include <vector>

#include "compiler/extract/facts.hpp"
#include "compiler/extract/vocab.hpp"

namespace kb {

// A fact the winning edition does not state (its row is missing, or the
// cell that would say it cannot be read), taken from another edition that
// does: the value used and where it was read. Never silent: each is a
// `fallback` finding of kbc lint.
struct Fallback {
  std::string field;  // tp, pp, ..., gpus, seq_len, sp, gpu_types; "" for a whole recipe row
  std::string value;  // as compared (format_range with kFactWords, ...)
  Provenance prov;    // the edition that states it
  int newest = 0;     // the newest revision, which does not state it
};

// One entity with all its editions, newest first (at equal revision the
// original before a translation, then by language).
struct Entity {
  std::string kind;                            // entity kind
  std::string key;                             // alignment key
  std::vector<const EntityEdition*> editions;  // newest first; editions[0] wins
  std::vector<std::string> missing;            // languages with no edition
  bool superseded = false;                     // its section was replaced in a newer revision
  std::vector<Fallback> fallbacks;             // facts the winner cannot read, from older editions (e.g. a quick-reference GPU count)
  const EntityEdition& winner() const { return *editions.front(); }
};

// One value of a disputed field, with where it was read.
struct ConflictValue {
  std::string value;  // the field's value in that edition (set members joined by ", ")
  Provenance prov;
  bool wins = false;  // the newest revision's value
};

struct Conflict {
  std::string type;                   // "revision": an older revision differs; "translation": same revision differs
  std::string entity_kind;            // entity kind, or "recipe"
  std::string entity_key;             // entity key, or "name/mode"
  std::string field;                  // fact field: dataset, recipe, path, override, formula, tp, ...
  std::vector<ConflictValue> values;  // winner first
};

struct Rename {
  std::string from, to;  // dataset preset names (older → newer)
  Provenance old_prov, new_prov;
};

// A lint finding that is not a conflict (removed entity, unknown mention, ...).
struct Finding {
  std::string kind;  // removed | fallback | unknown-recipe | dataset
  std::string message;
  Provenance prov;
};

struct Resolved {
  std::vector<Entity> entities;               // sorted by kind, then key
  std::vector<RecipeRow> recipes;             // one per (name, mode): the winning row, its unstated fields filled from older rows, sorted
  std::vector<RecipeRow> superseded_recipes;  // older rows whose values differ
  std::vector<Conflict> conflicts;            // sorted
  std::vector<Rename> renames;                // sorted, unique
  std::vector<Finding> findings;              // sorted
};

// Aligns and resolves. Row-like entities (quick-reference rows, pitfalls,
// commands, override examples) are first re-keyed in `facts` so that the
// same row has the same key in every edition, whatever rows an edition
// adds or drops (align_rows). Same-revision disagreements between recipe
// rows are errors (the sources contradict themselves); everything else is a
// conflict or a finding.
Resolved resolve(Extracted& facts, const Vocab& vocab, Diagnostics& diags);

}  // namespace kb
