// Emit stage, public interface: resolved facts → the tables of the SQLite
// KB, the atomic KB file writer, and deterministic text exports of a KB
// (`kbc dump`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/schema_version.hpp"
#include "base/sqlite.hpp"
#include "compiler/extract/vocab.hpp"
#include "compiler/ingest/document.hpp"
#include "compiler/resolve/resolve.hpp"

namespace kb {

extern const char* const kSchemaSql;  // base/schema.sql, embedded at build time

struct EmitInput {
  const std::vector<Document>* documents;  // compiled editions, in path order
  const Vocab* vocab;
  const Resolved* resolved;
  const std::vector<SectionRecord>* sections;                   // every heading of every edition
  std::vector<std::pair<std::string, std::string>> data_files;  // (relative path, sha256)
};

// Creates a KB file at `path` atomically: a new temporary file beside it,
// the schema's pragmas, one write transaction in which `fill` writes every
// table (emit_tables, then the derive stage), then a rename over `path`, so
// a failed or killed build leaves the previous KB intact. Throws
// SqliteError / std::runtime_error.
void write_kb_file(const std::string& path, const std::function<void(Db&)>& fill);

// The emit stage proper: the schema and every table of the resolved facts.
void emit_tables(Db& db, const EmitInput& in);

// Text export of every table, rows in a total order: "sql" (INSERT
// statements) or "json" (one object: table → array of row objects).
std::string dump_kb(const std::string& kb_path, const std::string& format);

}  // namespace kb
