// Measured throughput, public interface of kbc's fourth source: NVIDIA's
// performance tables (Megatron Bridge docs/performance-summary.md, the newest
// release, and performance-summary-archive.md, the past ones), kept byte for
// byte under kb-sources/upstream/megatron-bridge/<commit>/docs/ and listed in
// data/perf-sources.tsv. The stages mirror the documents' ones:
//   ingest  ingest_markdown_page (compiler/ingest): cmark-gfm's AST → Document
//   extract extract_perf: the Document's headings (release, task, model or
//           system), tables and notes → one PerfRow per measured row (two for a
//           row whose cells hold a second measurement in parentheses), every
//           word read through data/perf-vocab.tsv and data/perf-models.tsv
//   resolve resolve_perf: which copy of a release wins (the newest edition),
//           which release's row is current for a configuration (the newest;
//           the older are history), the benchmark recipe that runs it, and
//           where its layout differs from that recipe's code (drift)
//   emit    emit_perf: the KB's perf tables (base/schema.sql)
// docs/throughput.md describes the whole path, docs/schema.md the tables.
#pragma once

#include <re2/re2.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/diag.hpp"
#include "base/sqlite.hpp"
#include "base/tsv.hpp"
#include "compiler/code/code.hpp"
#include "compiler/ingest/document.hpp"

namespace kb {

// A copy of a performance page (a row of data/perf-sources.tsv).
struct PerfSource {
  std::string path;    // relative to the sources root
  std::string commit;  // the Megatron Bridge commit whose docs/ it was copied from
  std::string date;    // that commit's date: editions are ordered by it
  std::string role;    // newest | archive
  Span span;           // the row in perf-sources.tsv
};

// What a model name of the tables is (a row of data/perf-models.tsv).
struct PerfModel {
  std::string model_key;     // the KB's model (models.tsv, models-extra.tsv or a model-arch.tsv key)
  std::string recipe_model;  // the model part of the benchmark recipes' names
};

// The data that reads the tables (data/perf-sources.tsv, perf-vocab.tsv,
// perf-models.tsv, with their lookups) and the data the query engine's
// estimator reads from the KB (gpu-peaks.tsv, perf-params.tsv,
// flops-arch.tsv, perf-flops-exceptions.tsv). Loaded once per compile.
struct PerfData {
  TsvTable sources, vocab, models;
  TsvTable peaks, params, flops_arch, exceptions;
  // `kind` → word → value (perf-vocab.tsv), words compared as written.
  std::map<std::string, std::map<std::string, std::string>> words;
  std::map<std::string, std::unique_ptr<RE2>> patterns;  // perf-vocab.tsv kind `pattern`
  std::map<std::string, PerfModel> model_names;          // perf-models.tsv name → model
  std::vector<PerfSource> files;                         // perf-sources.tsv rows, oldest edition first

  const PerfSource* source(const std::string& path) const;  // nullptr: the file is no performance page
  const RE2* pattern(const std::string& name) const;        // nullptr when the data has no such pattern
  // The value of a word of a kind; nullopt when the data does not know it.
  std::optional<std::string> word(const std::string& kind, const std::string& w) const;
};

// Loads the files from the data folder. Errors (a missing file or
// column, a row without a source, a pattern RE2 rejects, an unknown kind)
// go to `diags`; false when any was found.
bool load_perf_data(const std::string& data_dir, PerfData& d, Diagnostics& diags);

// Where a PerfRow stands among the rows of its configuration.
enum class PerfStatus : std::uint8_t {
  Current,     // the newest release's row of its configuration, in the newest edition that has it
  Superseded,  // an older release's row of a configuration a newer release measured again (history)
  Copy,        // the same release's row in an older edition (the newer copy wins)
};
std::string_view to_string(PerfStatus s);

// One measured configuration as a table states it.
struct PerfRow {
  // Where: the table row (col: its first cell) in a copy of a page.
  std::string file;
  int line = 0, col = 0;
  int edition = 0;               // index of the copy's edition, 0 = oldest (perf-sources.tsv dates)
  std::string commit;            // the commit the copy comes from (short)
  std::string release;           // NeMo container release, as the heading writes it ("26.06.01")
  std::vector<int> release_key;  // its numbers, for ordering
  std::string task;              // pretrain | sft | peft (perf-vocab.tsv task)
  std::string model_written;     // the model as written, qualifier included ("DeepSeekV3 (w/o MTP)")
  std::string model_key, recipe_model;
  std::string variant;        // a qualifier's label ("token drop"), "" for none
  std::string arch_override;  // what the qualifier changes in the FLOPs count ("mtp_layers=0"), "" for none
  std::string system;         // as written ("DGX-GB300")
  std::string gpu;            // GPU key (gb300)
  long long gpus = 0;
  std::string precision_written;  // as written ("MXFP8", "FP8-CS (FP8-MX)"), "" when the table has no column
  std::string precision;          // bf16 | fp8cs | fp8mx | fp8sc | nvfp4
  long long gbs = 0, mbs = 0, seq = 0;
  std::optional<long long> fsdp, tp, pp, cp, vp, ep, ga;  // empty: n/a, or no such column
  double tokens = 0;                                      // tokens / s / GPU
  double tflops = 0;                                      // model TFLOP / s / GPU, as published
  bool alternate = false;                                 // the values in parentheses (a second measurement in the same row)
  std::vector<std::string> footnotes;                     // labels the row's cells cite
  std::vector<Span> footnote_spans;                       // the cell of each
  std::string note_kind;                                  // "" | caveat | regression (the strongest of its footnotes)
  std::vector<std::string> notes;                         // the texts of its footnotes and of its section's notes

  // Resolution (resolve_perf).
  PerfStatus status = PerfStatus::Current;
  int winner = -1;          // index of the current row of its configuration (the one with its batch when there is one)
  std::string recipe;       // the benchmark recipe that runs this configuration ("" when none)
  std::string arch_recipe;  // a benchmark recipe of the same model and task (its facts give the architecture)

  // The configuration a newer release measures again: model (with its
  // qualifier), task, GPU type and count, precision and sequence. The
  // global batch is not part of it (a release may measure it with another
  // batch: its rows are then the current ones); the rows of one release
  // that differ only in their batch are all current.
  std::string config() const;
};

// Two editions' copies of one release disagree about a configuration.
struct PerfConflict {
  int older = -1, newer = -1;  // row indexes
  std::string field;           // tokens, tflops, tp, ...
  std::string older_value, newer_value;
};

// A current row whose layout differs from the benchmark recipe that runs its
// configuration (or which no recipe runs).
struct PerfDrift {
  int row = -1;
  std::string field;  // tp, pp, cp, vp, ep, mbs, gbs, seq; "" when no recipe runs the configuration
  std::string table_value, code_value;
  std::string code_at;  // path:line@commit of the code fact ("" when none)
  std::string note;
};

struct PerfCompiled {
  std::vector<PerfRow> rows;  // in edition, file and line order
  std::vector<PerfConflict> conflicts;
  std::vector<PerfDrift> drift;
  std::vector<std::pair<std::string, std::string>> files;  // (path, sha256) of every page compiled
};

// Reads the measured rows of one page. Bad rows are errors at the cell
// (file:line:col) with a hint naming the data row to add; the rest of the
// page is still read.
void extract_perf(const Document& doc, const PerfSource& src, int edition, const PerfData& d, PerfCompiled& out, Diagnostics& diags);

// Editions, current rows, recipes and drift against the newest code snapshot.
void resolve_perf(PerfCompiled& p, const CodeFacts& code);

// The perf tables of the KB (the schema is already created; `sources` holds
// the pages), and the copies of the data the query engine reads (gpu-peaks,
// perf-params, flops-arch, perf-flops-exceptions, perf-vocab).
void emit_perf(Db& db, const PerfCompiled& p, const PerfData& d);

// `kbc lint` lines: perf-conflict and drift (perf-layout, perf-recipe).
std::vector<std::string> perf_lint_lines(const PerfCompiled& p);

}  // namespace kb
