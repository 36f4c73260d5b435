// Extract stage, public interface: a normalized Document → fact records
// (facts.hpp). Sections are classified by data/sections.tsv, table columns
// by data/columns.tsv, cell words by data/cells.tsv, identifiers found by
// the RE2 patterns of data/patterns.tsv.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/extract/facts.hpp"
#include "compiler/extract/vocab.hpp"
#include "compiler/ingest/document.hpp"

namespace kb {

// Appends the document's sections, entity editions and recipe rows to
// `out`. Bad cells (a TP that is not a number or range, an unknown column)
// are reported in `diags`; extraction goes on with the next row.
void extract(const Document& doc, const Vocab& vocab, Extracted& out, Diagnostics& diags);

// Most names one brace pattern may stand for (docs/kbc.md, "Limits"). The
// editions' largest is 8 (`qwen25_vl_{3b,7b,32b,72b}_{sft,peft}_config`); a
// pattern past the limit is an error, never a flood of recipes.
inline constexpr size_t kMaxBraceExpansion = 64;

// The names a brace pattern stands for, or why it stands for none.
struct BraceExpansion {
  std::vector<std::string> names;  // in order; empty when `error` is set
  std::string error;               // "" or what is wrong: unbalanced, nested, empty alternative, too many names
  size_t at = 0;                   // error: byte offset of the brace it is about
};

// Expands brace alternatives: "a_{x,y}_{p,q}_c" → a_x_p_c, a_x_q_c, a_y_p_c,
// a_y_q_c. An unclosed `{`, a stray `}`, a `{` inside braces, an empty
// alternative, or more than `limit` names is an error at that brace.
BraceExpansion expand_braces(std::string_view pattern, size_t limit = kMaxBraceExpansion);

// Parses a parallelism / GPU-count cell: "2", "1–8", "512+", "—", "Varies".
// Returns nullopt (and leaves the range unknown) when the cell is none of these.
std::optional<Range> parse_range(const std::string& cell, const std::string& lang, const std::string& field, const Vocab& vocab);

// What a free-text cell (notes, key features) states in the grammar
// of the table's columns: a column header of a parallel dimension followed
// by a number or range ("TP1/PP1/EP8", "TP=4", "EP 64–128"); a number with
// a sequence magnitude ("2K", "128K sequence"); a number or range counting
// GPUs ("16 GPUs", "8–16 GPU", "16 个 GPU"). Headers, magnitudes, GPU units,
// separators and the words skipped between a number and its unit all come
// from the data (columns.tsv, lexicon.tsv, cells.tsv).
struct CellFacts {
  std::map<std::string, Range> dims;  // field (tp, pp, cp, ep, vp) → range
  std::optional<Range> gpus;          // GPU count
  long seq_len = 0;                   // tokens, 0 = none stated
  std::vector<std::string> twice;     // fields stated twice with different values (the first is kept)
};
CellFacts read_cell_facts(const std::string& text, const std::string& lang, const Vocab& vocab);

// Does `name` match the `*` pattern (each `*` standing for one or more
// name characters)?
bool glob_match(const std::string& pattern, const std::string& name);

}  // namespace kb
