// The normalized document: what every front end (markdown through
// cmark-gfm, plain-text export) produces and what extract reads. A document
// is a flat sequence of blocks in source order, each with its source span;
// the heading hierarchy is rebuilt by extract from heading levels.
#pragma once

#include <string>
#include <vector>

#include "base/diag.hpp"

namespace kb {

// Front matter of a kb-source (YAML between `---` lines), or, for a text
// export, the edition facts looked up in data/editions.tsv by file name.
struct FrontMatter {
  std::string name;             // skill name, e.g. the recommender's id; may be empty
  std::string lang;             // en, fr, ja, zh: must be a language the data knows
  int revision = 0;             // 1 = oldest; higher wins in answers
  std::string date;             // ISO date the edition states, empty if none
  std::string origin;           // seed file the edition was restored from
  std::string translated_from;  // language this edition was translated from, or empty
  Span span;                    // where the front matter starts
};

enum class BlockKind {
  Heading,        // level 1..6, text = heading text
  Paragraph,      // text = inline content flattened to plain text
  ListItem,       // text = item text; ordered/ordinal say which list marker
  Table,          // rows[0] is the header row; every row has the header's cell count
  Code,           // text = literal content (lines joined by \n, no trailing \n); info = info string
  ThematicBreak,  // `---`
};

struct Cell {
  std::string text;  // plain text of the cell, trimmed
  Span span;         // where the cell starts
};

struct Block {
  BlockKind kind = BlockKind::Paragraph;
  int level = 0;                        // Heading: 1..6. ListItem: nesting depth, 1 = top
  bool ordered = false;                 // ListItem: in an ordered (1. 2. 3.) list
  int ordinal = 0;                      // ListItem: the item's number (ordered) or 1-based position
  std::string text;                     // see BlockKind
  std::string info;                     // Code: info string (e.g. "bash", "text")
  std::vector<std::vector<Cell>> rows;  // Table only
  Span span;                            // first line of the block
  int end_line = 0;                     // last line of the block
  int text_line = 0;                    // Code: file line of the first line of `text` (after an opening fence)
  bool html = false;                    // Paragraph: an HTML block (a comment, a tag), text = its literal
};

// Same content: kind, level, list marker, text, info and cell texts (spans
// and line numbers aside). A restored markdown edition and the text export it
// was restored from must agree block for block.
bool same_content(const Block& a, const Block& b);

struct Document {
  std::string path;    // relative to the sources root, e.g. "skill/SKILL.ja.md"
  std::string sha256;  // of the file's bytes, hex
  FrontMatter meta;
  std::vector<Block> blocks;
};

}  // namespace kb
