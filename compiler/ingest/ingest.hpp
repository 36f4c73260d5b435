// Ingest stage, public interface: bytes of a source file → normalized
// Document (document.hpp). Two front ends: markdown with YAML front matter,
// read through cmark-gfm's AST (GitHub tables), and the plain-text export
// the seed documents arrived as.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/diag.hpp"
#include "compiler/ingest/document.hpp"

namespace kb {

struct SourceFile {
  std::string path;   // relative path shown in diagnostics and provenance
  std::string bytes;  // file content
};

// A row of data/editions.tsv: the edition facts a file does not state
// itself. A text export lost its front matter and is found by its file name
// (`origin`); a markdown edition copied byte for byte from upstream (its own
// front matter says name, license and description, not lang or revision)
// is found by its path.
struct EditionRow {
  std::string origin;  // text export: its file name, e.g. "000_e4869d421d2240c2.txt"; markdown: where the file comes from
  std::string path;    // markdown: path relative to the sources root; "" for a text export
  FrontMatter meta;    // the facts of the row (meta.span: the row in data/editions.tsv)
};

// Markdown edition: YAML front matter (lang, revision, date, origin, ...)
// then CommonMark + GitHub tables. `sidecar`, when given, is the file's row
// of data/editions.tsv: it supplies the keys the front matter lacks (or the
// whole front matter), and a key both state differently is an error.
// Errors go to `diags`; nullopt when the document cannot be used at all.
std::optional<Document> ingest_markdown(const SourceFile& file, Diagnostics& diags, const EditionRow* sidecar = nullptr);

// A markdown page that is no edition (NVIDIA's performance tables, kept as
// published: no front matter, no language or revision): its blocks only,
// read through cmark-gfm's AST as an edition's body is. Byte-level problems
// are errors; nullopt when the bytes cannot be read.
std::optional<Document> ingest_markdown_page(const SourceFile& file, Diagnostics& diags);

// What the text-export front end needs to know that a text export lost:
// the edition facts (from data/editions.tsv, keyed by file name) and the
// known section headings with their levels (data/sections.tsv joined with
// data/section-kinds.tsv).
struct TextExportHints {
  using Edition = EditionRow;  // rows with an empty `path`
  struct KnownHeading {
    std::string lang;
    std::string text;  // whitespace-normalized heading text
    int level = 2;
  };
  std::vector<Edition> editions;
  std::vector<KnownHeading> headings;
  int family_level = 3;       // level of an unknown bare title line (a family heading)
  std::string base_language;  // data/planner.tsv: its headings are known in every edition (parts are left in it)
};

// Plain-text export: tab-separated lines → tables, bare title lines →
// headings, `# comment` + command lines and indented continuations → code,
// box-drawing trees → a text code block, `•` and `1.` lines → list items.
std::optional<Document> ingest_text_export(const SourceFile& file, const TextExportHints& hints, Diagnostics& diags);

// The lowercase hex SHA-256 of `bytes` (nettle): the digest the KB records
// for every source and data file (docs/schema.md, `sha256`).
std::string sha256_hex(std::string_view bytes);

}  // namespace kb
