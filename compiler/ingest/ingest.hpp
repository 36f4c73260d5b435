// Ingest stage, public interface: bytes of a source file → normalized
// Document (document.hpp). Two front ends: markdown with YAML front matter,
// read through cmark-gfm's AST (GitHub tables), and the plain-text export
// the seed documents arrived as.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/diag.hpp"
#include "compiler/ingest/document.hpp"

namespace kb {

struct SourceFile {
  std::string path;   // relative path shown in diagnostics and provenance
  std::string bytes;  // file content
};

// Markdown edition: YAML front matter (lang, revision, date, origin, ...)
// then CommonMark + GitHub tables. Errors go to `diags`; nullopt when the
// document cannot be used at all.
std::optional<Document> ingest_markdown(const SourceFile& file, Diagnostics& diags);

// What the text-export front end needs to know that a text export lost:
// the edition facts (from data/editions.tsv, keyed by file name) and the
// known section headings with their levels (data/sections.tsv joined with
// data/section-kinds.tsv).
struct TextExportHints {
  struct Edition {
    std::string origin;  // file name, e.g. "000_e4869d421d2240c2.txt"
    FrontMatter meta;
  };
  struct KnownHeading {
    std::string lang;
    std::string text;  // whitespace-normalized heading text
    int level = 2;
  };
  std::vector<Edition> editions;
  std::vector<KnownHeading> headings;
  int family_level = 3;  // level of an unknown bare title line (a family heading)
};

// Plain-text export: tab-separated lines → tables, bare title lines →
// headings, `# comment` + command lines and indented continuations → code,
// box-drawing trees → a text code block, `•` and `1.` lines → list items.
std::optional<Document> ingest_text_export(const SourceFile& file, const TextExportHints& hints, Diagnostics& diags);

}  // namespace kb
