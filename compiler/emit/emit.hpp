// Emit stage, public interface: resolved facts → the tables of the SQLite
// KB, the atomic KB file writer, and deterministic text exports of a KB
// (`kbc dump`).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/schema_version.hpp"
#include "base/sqlite.hpp"
#include "compiler/code/code.hpp"
#include "compiler/extract/vocab.hpp"
#include "compiler/ingest/document.hpp"
#include "compiler/resolve/drift.hpp"
#include "compiler/resolve/resolve.hpp"

namespace kb {

extern const char* const kSchemaSql;  // base/schema.sql, embedded at build time

struct EmitInput {
  const std::vector<Document>* documents;  // compiled editions, in path order
  const Vocab* vocab;
  const Resolved* resolved;
  const std::vector<SectionRecord>* sections;                   // every heading of every edition
  const std::vector<EntityEdition>* editions = nullptr;         // every entity edition extracted (which may be shown)
  std::vector<std::pair<std::string, std::string>> data_files;  // (relative path, sha256)
  const CodeFacts* code = nullptr;                              // Megatron Bridge snapshots (may be empty)
  const std::vector<Drift>* drift = nullptr;                    // documents against the newest snapshot
  std::vector<std::pair<std::string, std::string>> perf_pages;  // (path, sha256) of the performance pages (compiler/perf)
};

// What a KB file holds: everything kbc compiles (`full`: lint's and
// generate's tables, the code facts with their notes, the full-text index),
// or only the tables kbq reads at run time (`runtime`: the KB kbq embeds,
// docs/schema.md "Full and runtime KBs"). Written as meta.contents.
enum class KbContents : std::uint8_t { Full, Runtime };
inline constexpr std::array<std::pair<KbContents, std::string_view>, 2> kKbContentsNames{{
    {KbContents::Full, "full"},
    {KbContents::Runtime, "runtime"},
}};

// Creates a KB file at `path` atomically: a new temporary file beside it,
// the schema's pragmas, one write transaction in which `fill` writes every
// table (emit_tables, then the derive stage), then a rename over `path`, so
// a failed or killed build leaves the previous KB intact. `derive`, when
// given, runs after that transaction is committed and before the rename,
// with the temporary file's name: it may read the committed KB through a
// connection of its own and write in a transaction of its own (kbc's is
// compiler/generate/perf_fit.hpp, which reads it with kbq's engine). Throws
// SqliteError / std::runtime_error.
using KbDerive = std::function<void(Db& db, const std::string& file)>;
void write_kb_file(const std::string& path, const std::function<void(Db&)>& fill, KbContents contents = KbContents::Full,
                   const KbDerive& derive = {});

// The emit stage proper: the schema and every table of the resolved facts.
void emit_tables(Db& db, const EmitInput& in);

// The formats of the text export (`kbc dump --format`).
enum class DumpFormat : std::uint8_t {
  Sql,   // INSERT statements, one per row, after a comment line
  Json,  // one object: table → array of row objects
};
// Their spellings (the --format values), in declaration order.
inline constexpr std::array<std::pair<DumpFormat, std::string_view>, 2> kDumpFormatNames{{
    {DumpFormat::Sql, "sql"},
    {DumpFormat::Json, "json"},
}};
// Spelling → format; nullopt for a spelling the table does not have.
constexpr std::optional<DumpFormat> parse_dump_format(std::string_view s) {
  for (const auto& [f, name] : kDumpFormatNames)
    if (name == s) return f;
  return std::nullopt;
}

// Text export of every table, rows in a total order.
std::string dump_kb(const std::string& kb_path, DumpFormat format);

}  // namespace kb
