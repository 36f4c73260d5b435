// Fact records: what extract pulls out of a normalized Document and what
// resolve and emit consume. Every record carries its provenance (file,
// line, language, revision) so any value in the KB can be traced back.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/kinds.hpp"
#include "base/range.hpp"

namespace kb {

// Where a fact was read.
struct Provenance {
  std::string file;         // source path relative to the sources root
  int line = 0;             // 1-based line
  std::string lang;         // edition language
  int revision = 0;         // edition revision (1 = oldest)
  bool translated = false;  // edition was translated by us from another language
};

// One heading of a document, with its classification.
struct SectionRecord {
  std::string kind;          // section kind from data/sections.tsv, "family", or "" when unclassified
  std::string heading;       // heading text
  std::string heading_path;  // ancestors' headings joined with " > "
  int level = 0;             // heading level
  int ordinal = 0;           // family: 1-based position within its index
  std::string index_kind;    // family: library_index or benchmark_index
  Provenance prov;
};

// One edition's view of an aligned entity (a rule, a pitfall, a checklist
// item, a quick-reference row, a command, ...). The same (kind, key) in
// several editions is the same entity in several languages/revisions.
struct EntityEdition {
  std::string kind;                                    // entity kind, e.g. "rule", "pitfall", "quick_ref", "command"
  std::string key;                                     // alignment key within the kind (ordinal, path, ...)
  std::string section_kind;                            // kind of the section it was found in
  std::string text;                                    // full text in this edition's language
  std::map<std::string, std::string> parts;            // named parts: symptom, fix, want, title, ...
  std::map<std::string, std::set<std::string>> facts;  // language-independent facts: recipe, path, dataset, ...
  std::set<std::string> unread;                        // fact fields whose cell is there but cannot be read (e.g. gpus)
  Provenance prov;
};

// A recipe row of an index table, after brace expansion.
struct RecipeRow {
  std::string name;                          // exact recipe function name, or a `*` pattern
  bool pattern = false;                      // name contains `*`: not a verified function name
  std::string expanded_from;                 // the brace pattern this row was expanded from, or ""
  RecipeKind kind{};                         // from the table's index: library_index → Library, benchmark_index → Benchmark
  std::string family;                        // family heading as written in its edition
  int family_ordinal = 0;                    // position of the family within its index
  std::string mode;                          // pretrain | sft | peft, or "" when the row does not say
  std::string model_key;                     // models.tsv key the name starts with, or ""
  std::string model;                         // benchmark rows: the model as written ("Llama 3 8B")
  Range tp, pp, cp, ep, vp, gpus;            // parallelism and GPU count (min GPUs for library rows)
  std::optional<bool> sp;                    // sequence parallel: true (✓), false (—), unknown
  long seq_len = 0;                          // sequence length in tokens, 0 = unknown
  std::string sizes;                         // pattern rows: sizes the pattern covers, as written
  std::vector<std::string> gpu_types;        // gpu keys (benchmark rows)
  std::string notes;                         // notes / features as written
  std::map<std::string, std::string> extra;  // cells of columns data/columns.tsv does not know: header as written → cell
  // Filled by resolve. What this winning row does not state itself: each
  // field taken from another edition's row (field → its value as lint
  // compares it, and where it was read), and, when the row itself is an
  // older revision's, the newest revision listing recipes of its kind
  // (which does not list this one); 0 when it does.
  struct FieldSource {
    std::string value;
    Provenance prov;
  };
  std::map<std::string, FieldSource> field_sources;
  int unlisted_in = 0;
  std::string mentioned_in;  // recipes known only from a mention: where ("" for table rows)
  Provenance prov;
};

struct Extracted {
  std::vector<SectionRecord> sections;
  std::vector<EntityEdition> entities;
  std::vector<RecipeRow> recipes;
};

}  // namespace kb
