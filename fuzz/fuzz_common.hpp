// Shared set-up of the libFuzzer targets: where the data tables are (the
// real kb-sources/data, found through KB_FUZZ_DATA_DIR in the environment or
// the KB_SOURCE_DIR the build baked in), loaded once per process, and the
// one check every target makes on what the front ends return. A broken
// invariant is reported on stderr and aborts, so libFuzzer saves the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include <optional>

#include "base/diag.hpp"
#include "compiler/extract/extract.hpp"
#include "compiler/extract/vocab.hpp"
#include "compiler/ingest/document.hpp"
#include "compiler/resolve/resolve.hpp"

namespace kbfuzz {

inline std::string data_dir() {
  if (const char* env = std::getenv("KB_FUZZ_DATA_DIR")) return env;
  return std::string(KB_SOURCE_DIR) + "/kb-sources/data";
}

// The compiler's vocabulary, loaded from data_dir() on first use.
inline const kb::Vocab& vocab() {
  static const kb::Vocab* v = [] {
    auto* out = new kb::Vocab;  // lives as long as the process
    kb::Diagnostics diags;
    if (!kb::load_vocab(data_dir(), *out, diags) || diags.has_errors()) {
      diags.print(stderr);
      std::fprintf(stderr, "fuzz: cannot load the data tables from %s (set KB_FUZZ_DATA_DIR)\n", data_dir().c_str());
      std::abort();
    }
    return out;
  }();
  return *v;
}

[[noreturn]] inline void invariant_failed(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "fuzz: invariant broken: %s: %s\n", what.c_str(), detail.c_str());
  std::abort();
}

// What every front end promises about a document (ingest/document.hpp):
// every table row has the header's cell count, spans are inside the file,
// heading levels are 1..6. Also renders every diagnostic (columns are
// computed from the bytes there).
inline void check_document(const kb::Document& doc, const kb::Diagnostics& diags, int line_count) {
  for (const auto& b : doc.blocks) {
    if (b.span.line < 1 || b.span.line > line_count + 1) invariant_failed("block line outside the file", std::to_string(b.span.line));
    if (b.kind == kb::BlockKind::Heading && (b.level < 1 || b.level > 6)) invariant_failed("heading level", std::to_string(b.level));
    if (b.kind == kb::BlockKind::Table) {
      if (b.rows.empty()) invariant_failed("table without a header row", std::to_string(b.span.line));
      for (const auto& row : b.rows)
        if (row.size() != b.rows.front().size()) invariant_failed("ragged table row in a normalized document", std::to_string(b.span.line));
    }
  }
  for (const auto& d : diags.all()) (void)d.render();
}

inline int count_lines(const std::string& bytes) {
  int n = 1;
  for (char c : bytes) n += c == '\n';
  return n;
}

// The rest of a front end's run, as `kbc build` does it on one edition: a
// missing document must come with an error; a document must keep the
// promises above; one without errors goes through extract and resolve.
inline void finish_document(const std::optional<kb::Document>& doc, kb::Diagnostics& diags, const kb::SourceFile& file,
                            const char* front_end) {
  if (!doc) {
    if (!diags.has_errors()) invariant_failed(std::string(front_end) + " gave no document and no error", file.path);
    return;
  }
  check_document(*doc, diags, count_lines(file.bytes));
  if (diags.has_errors() || !vocab().languages.count(doc->meta.lang)) return;
  kb::Extracted extracted;
  kb::extract(*doc, vocab(), extracted, diags);
  (void)kb::resolve(extracted, vocab(), diags);
  for (const auto& d : diags.all()) (void)d.render();
}

}  // namespace kbfuzz
