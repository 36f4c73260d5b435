// The compiler's view of kb-sources/data: every word, heading, column
// header, cell word and pattern the extractor needs, loaded from the TSV
// files, never from code. Also the source of the text-export hints.
#pragma once

#include <re2/re2.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/tsv.hpp"
#include "compiler/extract/headings.hpp"
#include "compiler/ingest/ingest.hpp"

namespace kb {

// What a section of a kind holds, by which its heading is classified when
// its words are not in data/sections.tsv (data/section-kinds.tsv, `holds`).
struct SectionSignature {
  enum class What {
    FirstHeading,  // `first-heading`: the document's first heading, at the kind's level
    Table,         // `table:f1+f2`: a table whose columns name at least these fields
    ChildTable,    // `child-table:f1+f2`: subsections holding such a table (a recipe index)
    Tree,          // `tree`: a code block drawing a tree
  };
  std::string kind;
  What what = What::Table;
  std::set<std::string> fields;  // Table, ChildTable
};

struct Vocab {
  std::string dir;  // the data folder
  // Raw tables, kept for emit (the KB stores them too).
  TsvTable models, gpus, lexicon, columns, cells, sections, section_kinds, heading_words, config_keys, datasets, editions, patterns,
      planner, checks, labels;
  // What the planner and the memory model read: more model rows (same
  // columns as models), architecture facts, GPU memory properties, the memory
  // model's constants, forward steps' modalities, the ranking order.
  TsvTable models_extra, model_arch, gpu_memory, memory, steps, ranking;
  // Precisions and the GPUs that run them; what each dataset config class trains on.
  TsvTable precisions, dataset_kinds;
  // Systems and racks (DGX B200, GB200 NVL72): GPUs of one type and nodes per system.
  TsvTable systems;

  std::set<std::string> languages;  // languages the data knows (sections.tsv)
  // The language the skill is written in (planner.tsv base_language): the
  // one every other falls back to, and whose headings, column headers and
  // cell words other editions also use (parts of them are left in it).
  std::string base_language;

  // Section kind of a heading of a level in a language: data/sections.tsv
  // matched on words (headings.hpp). Match.kind is "" when no row matches
  // or two kinds match equally (Match.others).
  HeadingLexicon::Match section_kind(const std::string& lang, const std::string& heading, int level) const;
  int section_level(const std::string& kind) const;  // from section-kinds.tsv, 0 if unknown
  const std::vector<SectionSignature>& section_signatures() const { return signatures_; }
  // Field of a table header cell ("" when unknown).
  std::string column_field(const std::string& lang, const std::string& header) const;
  // Normalized value of a cell word for a field (field "*" rows apply to all).
  std::optional<std::string> cell_value(const std::string& lang, const std::string& field, const std::string& word) const;
  // All words of a cell pseudo-field (list_sep, range_sep, open_max, alt_sep, plus).
  std::vector<std::string> cell_words(const std::string& lang, const std::string& field) const;
  // Lexicon lookup: value of a word of a kind in any language, or nullopt.
  std::optional<std::string> lexicon_value(const std::string& kind, const std::string& word) const;
  // Multiplier of a magnitude suffix (kind seq_magnitude / param_magnitude).
  std::optional<double> magnitude(const std::string& kind, const std::string& word) const;
  // Longest models.tsv key that `name` starts with (followed by '_'), or "".
  std::string model_key_of(const std::string& name) const;
  // models.tsv key whose display name matches `display` letters and digits
  // only ("Qwen3 30B-A3B" = "Qwen3-30B-A3B"), ignoring a parenthesized tail; or "".
  std::string model_key_by_display(const std::string& display) const;
  // GPU key of a GPU type word ("H100" → "h100"), or "".
  std::string gpu_key(const std::string& lang, const std::string& word) const;
  const RE2* pattern(const std::string& name) const;

  TextExportHints text_export_hints() const;
  // The data/editions.tsv row of a markdown edition, by its path relative to
  // the sources root (rows with a `path`), or nullptr.
  const EditionRow* markdown_edition(const std::string& path) const;

 private:
  friend bool load_vocab(const std::string&, Vocab&, Diagnostics&);
  std::map<std::string, std::unique_ptr<RE2>> patterns_;
  // columns.tsv by folded header: (lang, field) rows in file order, so a
  // header is looked up in O(log n) however wide the table.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> columns_by_header_;
  std::vector<std::string> model_keys_;  // longest first
  // lexicon.tsv by (kind, folded word): the value of the first such row.
  std::map<std::pair<std::string, std::string>, std::string> lexicon_values_;
  std::vector<EditionRow> edition_rows_;  // every row of editions.tsv, in file order
  HeadingLexicon headings_;
  std::vector<SectionSignature> signatures_;
};

// Loads every data file of `data_dir`; reports missing files and bad rows.
bool load_vocab(const std::string& data_dir, Vocab& vocab, Diagnostics& diags);

}  // namespace kb
