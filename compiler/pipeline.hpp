// The compiler pipeline, end to end: find the sources, ingest every
// document (markdown or text export), extract, resolve, and emit. Used by
// `kbc build`, `kbc lint`, `kbc generate` and the tests.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/code/code.hpp"
#include "compiler/emit/emit.hpp"
#include "compiler/extract/extract.hpp"
#include "compiler/ingest/ingest.hpp"
#include "compiler/perf/perf.hpp"
#include "compiler/resolve/drift.hpp"
#include "compiler/resolve/resolve.hpp"

namespace kb {

struct CompileOptions {
  std::string sources = "kb-sources";  // root: skill/, references/, data/ (or text exports)
  std::string data;                    // data folder; default: <sources>/data
  std::string code;                    // code-facts folder; default: <sources>/code
  // The edition facts (lang, revision) of a markdown file that states
  // neither and has no row in data/editions.tsv: a published skill checked
  // as it is (kbc drift --skill). Unset: such a file is an error.
  std::optional<EditionRow> fallback_edition;
};

// Everything a compile produced, kept together because resolved entities
// point into the extracted facts.
struct Compilation {
  Vocab vocab;
  std::vector<Document> documents;  // sorted by path
  Extracted extracted;
  Resolved resolved;
  std::vector<std::pair<std::string, std::string>> data_files;  // (path, sha256)
  CodeFacts code;                                               // the Megatron Bridge snapshots (kb-sources/code/)
  std::vector<Drift> drift;                                     // where the documents disagree with the newest snapshot
  PerfData perf_data;                                           // how the performance tables are read (data/perf-*.tsv)
  PerfCompiled perf;                                            // NVIDIA's measured rows (compiler/perf)
};

// Runs ingest → extract → resolve. Every bad document is reported in
// `diags`; the result is null only when nothing could be compiled.
std::unique_ptr<Compilation> compile(const CompileOptions& opts, Diagnostics& diags);

// Writes the KB of a compilation to `path` atomically: emit, then derive,
// in one transaction, then `store_derived` over the committed file (kbc passes
// store_perf_derivation, compiler/generate/perf_fit.hpp: the throughput
// estimator's inputs, computed by the query engine, which the compiler's
// passes do not include). Throws on a write error.
void write_kb(const Compilation& c, const std::string& path, const KbDerive& store_derived, KbContents contents = KbContents::Full);

// compile() then write_kb(). Returns false (and leaves `out` untouched) on
// any error.
bool build_kb(const CompileOptions& opts, const std::string& out, Diagnostics& diags, const KbDerive& store_derived,
              KbContents contents = KbContents::Full);

// Lint lines, `file:line: kind: message`, sorted.
std::vector<std::string> lint_lines(const Compilation& c);

}  // namespace kb
