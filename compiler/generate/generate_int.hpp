// Generate stage, internals shared by its files (private: only
// compiler/generate/*.cpp include this). The stage turns one Compilation
// into a set of output files held in memory (OutputFiles), which
// generate.cpp then writes or compares (--check).
//
//   common.cpp   the context: ui labels (data/ui.tsv), header and cell words
//                (data/columns.tsv, data/cells.tsv), edition choice with
//                fallback, Markdown escaping, slugs, YAML scalars
//   index.cpp    references/recipe-index[.<lang>].md, one table per family
//   skill.cpp    skill/SKILL.<lang>.md, regenerated in the newest edition's order
//   status.cpp   translation-status.md
//   drift.cpp    drift[.<lang>].md: the documents against the Megatron Bridge code
//   changes.cpp  CHANGES[.<lang>].md: what the regenerated index changes against the newest edition
//   site.cpp     site/: recipe pages, family pages, kb.json, search-records.json
//   answers.cpp  site/answers/: kbq's JSON answers to the quick-reference questions
//
// The query engine is used through its public header (query/kbq.hpp) only:
// the launch command on a site page and the answers are kbq's own.
//
// Every human-language word of the output comes from the sources or from
// kb-sources/data; the code only arranges them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/sqlite.hpp"
#include "compiler/pipeline.hpp"
#include "compiler/resolve/usable.hpp"
#include "query/kbq.hpp"

namespace kb::gen {

// Is the document an edition of the skill itself (SKILL.md, SKILL.<lang>.md),
// not its recipe index?
bool is_skill_edition(const Document& d);

// Output path (relative to the output folder, '/'-separated) → bytes.
using OutputFiles = std::map<std::string, std::string>;

// The edition chosen to show an entity in one language.
struct Choice {
  const EntityEdition* ed = nullptr;  // null when the entity has no edition at all
  std::string fallback;               // language shown instead of the wanted one; "" = none
};

// A recipe of the index as the generator shows it: the resolved winning
// row(s) of one name (all its modes), or of one benchmark model (the same
// model written in several languages is one entry).
struct IndexEntry {
  RecipeKind kind{};                   // the rows' kind
  std::string index_kind;              // library_index | benchmark_index
  int family_ordinal = 0;              // family position within its index
  std::string name;                    // winning name (recipe function, pattern or model)
  std::vector<const RecipeRow*> rows;  // the winning rows, one per mode, in mode order
  std::vector<std::string> modes;      // modes of `rows`, in mode order ("" when none)
  std::string slug;                    // file name stem of its site page
};

// One family of an index.
struct Family {
  std::string index_kind;                  // library_index | benchmark_index
  int ordinal = 0;                         // 1-based position within the index
  const Entity* entity = nullptr;          // the aligned family heading (kind "family")
  std::vector<const IndexEntry*> entries;  // sorted
  std::string slug;                        // file name stem of its site page
};

// kbq's memory verdict on a recipe at its own layout, on the code's minimum
// GPU count of its own hardware.
enum class Fit : std::uint8_t {
  Unknown,  // not judged: no minimum, the memory model cannot size it, or a rule fails
  Fits,     // it fits there
  Above,    // it fits only on more GPUs (CodeLine::memory_gpus)
  Never,    // it fits on no count kbq searches, at this layout
};

// A library recipe a user can pass to `--recipe` (exported by the newest
// snapshot, no GPU count in its name), with what its code sets and where:
// one row of the generated library index. The values come from the code
// facts (CodeValues) and the KB's derived launch facts (recipe_launch).
struct CodeLine {
  std::string name;
  const CodeValues* cv = nullptr;  // tp, pp, cp, ep, sp, seq_length, min_gpus, each with path:line@commit
  std::string task;                // pretrain | sft | peft (the launcher's mode of the name)
  std::string modality;            // text | vision | audio | diffusion | omni
  std::string precision;           // data/precisions.tsv display of what the code sets ("" unknown)
  std::string precision_at;        // path:line@commit
  std::string dataset;             // its own dataset's name, else the kind of data it builds (mock, corpus, ...)
  std::string dataset_at;
  std::string raises;  // the exception every path of its function raises ("" when it returns)
  std::string raises_at;
  std::string defined_at;                  // path:line@commit of its def
  const IndexEntry* entry = nullptr;       // the documents' row of this exact name, if any (its notes, its site page)
  const RecipeRow* doc_row = nullptr;      // that entry's row of this mode
  const RecipeRow* pattern_row = nullptr;  // else the documents' pattern row that covers it, if any
  std::string placed_by;                   // how its family was found: name | pattern | prefix | catch-all
  // kbq's memory estimate at the code's minimum (CodeValues min_gpus), at
  // its own layout on its own hardware: a note of its row, never the value
  // of its GPUs (min), which is the code's.
  std::string hardware;       // the GPU key it was judged on: its name's, else the KB's default
  Fit fit = Fit::Unknown;     // kbq's verdict on the code's minimum
  long long memory_gpus = 0;  // Fit::Above: the fewest GPUs it fits on at its own layout
  double memory_gib = 0;      // the estimate per GPU on the code's minimum (known memory only)
};

// What a generated document was made from: its front matter states the
// newest revision among the facts shown and the source files they came from.
struct DocState {
  std::set<std::string> sources;  // source paths (relative to the sources root)
  int revision = 0;               // newest revision of a fact shown
  void use(const Provenance& p) {
    if (p.file.empty()) return;
    sources.insert(p.file);
    if (p.revision > revision) revision = p.revision;
  }
};

// A parsed table row of a source document: header fields and cell texts.
struct SourceRow {
  std::string lang;
  std::map<std::string, std::string> cells;  // field → cell text as written
};

// What every generator reads, made once per `kbc generate`: the
// compilation, the query engine over its KB, and lookups in its data tables.
// (Named for what it holds; kbq's per-answer Context is query/stage.hpp's.)
class Inputs {
 public:
  Inputs(const Compilation& c, Diagnostics& diags, kbq::Engine& engine, std::string kb_path);

  const Compilation& c;
  Diagnostics& diags;
  kbq::Engine& engine;                   // the query engine over this compilation's KB (commands, answers)
  std::string kb_path;                   // that KB's file (site/kb.json is its dump)
  std::vector<std::string> languages;    // sorted (data/sections.tsv)
  std::vector<std::string> index_kinds;  // library_index, benchmark_index (section-kinds.tsv order)
  std::vector<std::string> mode_order;   // pretrain, sft, peft: the longest mode list of data/cells.tsv
  std::vector<IndexEntry> entries;       // every library and benchmark entry
  std::vector<Family> families;          // in index order, then ordinal
  int newest_revision = 0;               // newest revision of any document
  // What the newest code snapshot sets for each exported library recipe, by
  // name (empty without a snapshot): the values the recipe tables show.
  std::map<std::string, CodeValues> code_library;
  // What the newest snapshot sets for each exported benchmark recipe, by the
  // model its name encodes (recipes.tsv model): a benchmark row's values.
  std::map<std::string, std::vector<CodeValues>> code_benchmark;
  bool has_code = false;  // a snapshot is compiled: names it does not export are not listed
  // Every library name a user can pass to --recipe, in natural order, and
  // the lines of each library family ((index kind, ordinal) → lines): a name
  // goes to the family of the documents' row naming it, else of the pattern
  // row covering it, else of the family whose recipes of its modality share
  // its model stem, else of the family gathering the most models of its
  // modality (the documents' catch-all). Empty without a snapshot.
  std::vector<CodeLine> code_lines;
  std::map<std::pair<std::string, int>, std::vector<const CodeLine*>> code_lines_of;

  // --- data lookups ----------------------------------------------------------
  // Label of data/ui.tsv in `lang` (else en), {name} placeholders filled.
  std::string ui(const std::string& lang, const std::string& key, const std::map<std::string, std::string>& args = {}) const;
  std::string lang_name(const std::string& shown_in, const std::string& lang) const;
  // The visible fallback marker (Markdown, emphasized), naming `fallback` in `lang`.
  std::string marker(const std::string& lang, const std::string& fallback) const;
  // Header word of a field in a language: its own rows of data/columns.tsv,
  // else en, else *; the first such row in file order.
  std::string header(const std::string& lang, const std::string& field) const;
  // Heading of a section kind in a language: as the newest edition of that
  // language writes it (an original before a translation; for the title, a
  // skill edition's), else data/sections.tsv's, else en's.
  std::string heading(const std::string& lang, const std::string& kind) const;
  // A cell word (data/cells.tsv) whose value is `value` for `field`, in the
  // language's own rows, else *, else en; "" when there is none.
  std::string cell_word(const std::string& lang, const std::string& field, const std::string& value) const;
  // Mode cell for a set of modes ("" when no single word says it).
  std::string mode_word(const std::string& lang, const std::vector<std::string>& modes) const;
  std::string range_cell(const Range& r, const std::string& lang, const std::string& field) const;
  std::string seq_cell(const RecipeRow& r) const;
  std::string gpu_types_cell(const RecipeRow& r, const std::string& lang) const;
  // Display name of a GPU key (cells.tsv word, else gpus.tsv display_name).
  std::string gpu_name(const std::string& key) const;
  // Presets of data/datasets.tsv, in file order, with their modes.
  std::vector<std::pair<std::string, std::set<std::string>>> datasets() const;

  // --- entities ---------------------------------------------------------------
  const Entity* entity(const std::string& kind, const std::string& key) const;
  // The entities of a kind that are not superseded, in their keys' natural order.
  std::vector<const Entity*> entities_of(const std::string& kind) const;
  // The newest revision of a language's documents (0 when it has none), and
  // an entity's edition in it (nullptr when that edition lacks it).
  int newest_revision_of(const std::string& lang) const;
  const EntityEdition* newest_edition(const Entity& e, const std::string& lang) const;
  // The edition to show `e` in `lang`: the language's newest usable edition,
  // else en's, else the winner (see docs/generate.md, "Fallback").
  Choice choose(const Entity& e, const std::string& lang) const;
  // Is `ed` stale: an older revision stating a fact the winner contradicts?
  bool stale(const Entity& e, const EntityEdition& ed) const;
  // Fields on which `ed` contradicts the winner.
  std::vector<std::string> stale_fields(const Entity& e, const EntityEdition& ed) const;
  // Same text in at least two languages: shown without a fallback marker.
  bool neutral(const Entity& e, const std::string& text) const;

  // --- recipe rows --------------------------------------------------------------
  // The source row of a recipe row's table (null for rows known by mention).
  const SourceRow* source_row(const Provenance& p) const;
  // The row to take language-dependent cells (notes, model name) from.
  Choice row_choice(const IndexEntry& e, const RecipeRow& w, const std::string& lang, const RecipeRow** chosen) const;
  std::string family_heading(const Family& f, const std::string& lang, bool with_marker) const;

  // Index entries of a family, and the family of an entry.
  const Family* family_of(const IndexEntry& e) const;

 private:
  void load_ui();
  void build_index();
  void place_code_lines();
  void judge_memory(CodeLine& l);
  EditionUse use_;  // which editions may be shown (shared with the KB: entity_texts.usable)
  TsvTable ui_;
  // ui.tsv by (lang, key), the first row of a pair winning; cells.tsv rows
  // by (field, lang), in file order, each with its set of values: built
  // once, so a label or a cell word is a lookup, not a scan of the table
  // (a generate asks for millions).
  std::map<std::pair<std::string, std::string>, const std::string*> ui_texts_;
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::set<std::string>, const std::string*>>> cell_words_;
  std::map<std::pair<std::string, std::string>, const Entity*> by_key_;
  std::map<std::pair<std::string, int>, SourceRow> source_rows_;
};

// --- Markdown and text helpers (common.cpp) ------------------------------------

// Escapes plain text for a Markdown paragraph, list item, heading or (with
// `in_table`) table cell so that cmark reads back exactly `text`:
// identifier-like runs with '_' or '*' become code spans, other specials are
// backslash-escaped, and line-start block markers are neutralized. The text
// is inert under MyST too (Sphinx + myst-parser, as the site reads it): no
// role, substitution or math ('{', '$' escaped), no colon fence, comment,
// target or block break at a line start (docs/security.md).
std::string md_text(const std::string& text, bool in_table = false);
// A label's {name} placeholders filled from `args` (an unknown name is kept as written).
std::string fill_placeholders(const std::string& text, const std::map<std::string, std::string>& args);
// A code span holding `text` literally.
std::string md_code(const std::string& text, bool in_table = false);
// A fenced code block; a '{' of `info` is escaped, so MyST never reads a
// source's info string as a directive.
std::string md_fence(const std::string& code, const std::string& info);
// A GitHub-style table.
std::string md_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
// GitHub-style heading anchor.
std::string anchor(const std::string& heading);
// File-name stem: ASCII letters, digits, '_', '.', '-'; other runs → '-'.
std::string slug(const std::string& s, bool lower);
// A YAML double-quoted scalar.
std::string yaml_str(const std::string& s);
// A YAML scalar: plain when it is a plain word ([A-Za-z0-9 _.-], no
// leading or trailing space), else double-quoted.
std::string yaml_scalar(const std::string& s);
// Front matter block from (key, value-lines) pairs; values are YAML already.
std::string front_matter(const std::vector<std::pair<std::string, std::string>>& fields);
// YAML block list of strings.
std::string yaml_list(const std::vector<std::string>& items);
// First `n` code points of `s` (whitespace collapsed), with "…" when cut.
std::string first_words(const std::string& s, size_t n);
// Natural order: digit runs compare as numbers ("llama3_8b" < "llama3_70b").
bool natural_less(const std::string& a, const std::string& b);
// A benchmark model written in any language: full-width folded, spaces
// dropped ("DeepSeek V3（671B MoE）" and "DeepSeek V3 (671B MoE)" are one model).
std::string model_key(const std::string& name);
// "file:line".
std::string where(const Provenance& p);
// Newest first; at equal revision the original, then by language, file, line.
bool newer(const Provenance& a, const Provenance& b);
// Output path of a language's page: "<stem>.md" for en, "<stem>.<lang>.md" otherwise.
std::string lang_path(const std::string& stem, const std::string& lang);

// The Markdown table of a family's recipes in `lang` (index.cpp); with
// `link_prefix`, recipe names link to their site pages.
std::string family_table(const Inputs& ctx, const Family& f, const std::string& lang, DocState& st, const std::string& link_prefix = {});
// The section paragraphs of a prose key prefix ("library_index" → library_index/1, /2, ...).
std::vector<const Entity*> prose_of(const Inputs& ctx, const std::string& base);
// A paragraph of an entity in `lang`, with the fallback marker when it falls back.
std::string paragraph(const Inputs& ctx, const Entity& e, const std::string& lang, DocState& st);

// A number or flag of the documents' prose the code contradicts: where, and
// the sentence for a person (data/ui.tsv prose.*), in `lang`.
struct ProseFinding {
  Provenance doc;
  std::string text;
};
// The findings in the newest edition of `lang` (prose_check.cpp): command
// flags the launcher lacks, GPU counts below a recipe's layout, recipe
// names the code does not export.
std::vector<ProseFinding> prose_findings(const Inputs& ctx, const std::string& lang);

// A quick-reference row's GPU cell set as the code has it: from the smallest
// count whose layout runs one of the recipes it recommends, up to the most
// any of them needs (a pattern stands for every exported name it matches).
// `recipe`/`min_gpus`/`code_at`: the recipe that moved a bound.
struct QuickRefGpus {
  Range said, code;
  std::string recipe, code_at;
  long long min_gpus = 0;
};
// nullopt when the edition's cell already says so, or states no count.
std::optional<QuickRefGpus> quick_ref_gpus(const Inputs& ctx, const EntityEdition& ed);

// --- the documents (one file each) ------------------------------------------------
void write_index(const Inputs& ctx, OutputFiles& out);
void write_skill(const Inputs& ctx, OutputFiles& out);
void write_status(const Inputs& ctx, OutputFiles& out);
void write_drift(const Inputs& ctx, OutputFiles& out);
void write_changelog(const Inputs& ctx, OutputFiles& out);
void write_site(const Inputs& ctx, OutputFiles& out);
void write_answers(const Inputs& ctx, OutputFiles& files);
void write_finder(const Inputs& ctx, OutputFiles& out);

// The space-separated words of a planner value of the KB (data/planner.tsv:
// finder_hardware, site_code_fields, ...). A key the KB lacks, or one with
// no words, is an error (kb::KbValueError, "cannot generate: ..."), never a
// page generated without it.
std::vector<std::string> planner_words(Db& db, const std::string& key);
// The same, each word a whole number of at least 1 (finder_gpu_counts).
std::vector<long long> planner_counts(Db& db, const std::string& key);

}  // namespace kb::gen
