// Emit stage, public interface: resolved facts → the SQLite KB (written in
// one transaction to a temporary file, then renamed into place so a failed
// or killed build leaves the previous KB intact), and deterministic text
// exports of a KB (`kbc dump`).
#pragma once

#include <string>
#include <vector>

#include "base/schema_version.hpp"
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

// Writes the KB to `path` atomically. Throws SqliteError / std::runtime_error.
void emit_kb(const std::string& path, const EmitInput& in);

// Text export of every table, rows in a total order: "sql" (INSERT
// statements) or "json" (one object: table → array of row objects).
std::string dump_kb(const std::string& kb_path, const std::string& format);

}  // namespace kb
