// The code front end of kbc: Megatron Bridge snapshots as facts. A snapshot
// is a folder kb-sources/code/<commit>/ written by `kbc extract-code`
// (compiler/code/extract_mbridge.py, which reads a checkout statically with
// Python's ast module): the exported recipe names, each recipe function's
// evaluated facts, the launchers' flags and rules, the override keys, the
// dataset presets and the model providers, every fact with its path:line in
// the checkout. This stage reads those files back (no Python needed to
// build) into the IR below; resolve compares them with the documents
// (drift.hpp) and emit writes them into the KB.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/diag.hpp"
#include "base/kinds.hpp"
#include "base/value_ranges.hpp"

namespace kb {

// One evaluated fact of a recipe function.
struct CodeFact {
  std::string field;  // a field of data/code-fields.tsv (tp, pp, seq_length, hf_id, arch.num_layers, ...)
  FactState state = FactState::Unknown;
  std::string value;  // the value as the extractor writes it (Python's true/false/none for those types)
  std::string type;   // its Python type (int, bool, none, str, ...), '|'-joined like value
  std::string at;     // path:line in the checkout that set it
  std::string note;   // why unknown, which default, which condition
  int line = 0;       // line in recipe-facts.tsv
};

// One exported recipe name.
struct CodeRecipe {
  std::string name;
  RecipeKind kind = RecipeKind::Library;                        // which package exports it
  std::string target;                                           // module.function that defines it
  std::string defined_at, exported_at;                          // path:line of the def and of the export
  std::string alias_of;                                         // the defining function's name when it differs
  std::string mode;                                             // the launcher's mode inferred from the name (pretrain, sft, lora, dora)
  std::string family;                                           // benchmark family package (the launcher's rule), or ""
  std::string model, task, gpus, hardware, precision, variant;  // the name parsed with the launcher's benchmark pattern
  std::string step;                                             // the forward step the launcher runs it with
  int line = 0;                                                 // line in recipes.tsv
};

// A row of one of the snapshot's other tables, kept as its columns.
struct CodeRow {
  std::vector<std::string> cells;  // in the file's column order
  int line = 0;
};

struct CodeSnapshot {
  std::string folder;                                               // relative to the sources root, e.g. "code/067f987df"
  std::string commit;                                               // full sha
  std::string date;                                                 // ISO date of the commit
  std::string repo;                                                 // e.g. NVIDIA-NeMo/Megatron-Bridge
  std::string extractor;                                            // extractor version that wrote the files
  std::vector<CodeRecipe> recipes;                                  // sorted by name, kind
  std::map<std::string, std::vector<CodeFact>> facts;               // target → its facts, by field
  std::vector<CodeRow> launcher, config_keys, datasets, providers;  // the other files, as rows
  std::string short_commit() const { return commit.substr(0, 9); }
  // "path:line@short-commit": how a code fact is cited.
  std::string cite(const std::string& at) const { return at + "@" + short_commit(); }
  // The facts of an exported name (through its target); null when unknown.
  const std::vector<CodeFact>* facts_of(const CodeRecipe& r) const;
  const CodeFact* fact(const CodeRecipe& r, const std::string& field) const;
  // The exported recipe of this name and kind; null when there is none.
  const CodeRecipe* recipe(const std::string& name, RecipeKind kind) const;
};

// What changed between two snapshots (code/changes-<old>-<new>.tsv).
struct CodeChange {
  std::string change;  // name-added | name-removed | target-changed | fact-changed | fact-added | fact-removed
  std::string name, kind, field, old_value, new_value;
  int line = 0;
};
struct CodeChanges {
  std::string file;                    // relative to the sources root
  std::string old_commit, new_commit;  // short commits, from the file name
  std::vector<CodeChange> rows;
};

struct CodeFacts {
  std::vector<CodeSnapshot> snapshots;  // oldest first (by date, then commit)
  std::vector<CodeChanges> changes;
  const CodeSnapshot* newest() const { return snapshots.empty() ? nullptr : &snapshots.back(); }
};

// The code facts that become whole-number columns of the KB's recipes
// table (compiler/derive/derive.cpp), each with the range kbq checks when it
// reads the column (base/value_ranges.hpp). A fact of these fields stated
// by the code (state value or default) must be an int in the range or
// Python's None: anything else is an error at its recipe-facts.tsv line and
// column, so a bad snapshot fails the build instead of every answer.
struct NumericFact {
  std::string_view field;  // the field of data/code-fields.tsv
  const IntRange& range;   // its column of recipes
};
inline constexpr NumericFact kNumericFacts[] = {
    {"tp", int_range("recipes", "tp")},
    {"pp", int_range("recipes", "pp")},
    {"vp", int_range("recipes", "vp")},
    {"cp", int_range("recipes", "cp")},
    {"ep", int_range("recipes", "ep")},
    {"etp", int_range("recipes", "etp")},
    {"seq_length", int_range("recipes", "seq_len")},
    {"global_batch_size", int_range("recipes", "gbs")},
    {"micro_batch_size", int_range("recipes", "mbs")},
};

// The fewest GPUs a layout spans: PP x max(TP x CP, EP x ETP) (an MoE
// layout also spreads its experts; derive uses the dense product for a
// dense model). Each size is at most 2^20, so the product cannot overflow.
inline long long layout_gpus(long long tp, long long pp, long long cp, long long ep, long long etp, bool moe) {
  return pp * std::max(tp * cp, moe ? ep * etp : 1);
}

// Reads every <sources>/code/<commit>/ folder (one with a snapshot.tsv) and
// every code/changes-*.tsv. A missing code/ folder is no error (a KB of
// documents only); a malformed file is an error at its line.
// code_dir: the code-facts folder (default: <sources_root>/code); paths in
// diagnostics are relative to the folder that holds it.
CodeFacts load_code_facts(const std::string& sources_root, const std::string& code_dir, Diagnostics& diags);

// The value of a fact as one integer, when it is a single int value or default.
std::optional<long long> fact_int(const CodeFact* f);
// A single boolean value or default.
std::optional<bool> fact_bool(const CodeFact* f);
// A single value or default as text ("" for Python's None).
std::optional<std::string> fact_text(const CodeFact* f);

}  // namespace kb
