// Reading the reviewable data files of kb-sources/data: tab-separated,
// a header line, `#` comment lines, every row with a `source` column.
//
// The one rule (docs/sources.md, "The data files"; the code extractor's
// read_tsv follows it too): a leading BOM is ignored, a '\r' before a line
// end dropped; empty lines and lines starting with '#' are skipped; the
// first other line is the header; every cell is trimmed (kb::trim); a row
// with more or fewer cells than the header is an error, never padded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/diag.hpp"

namespace kb {

struct TsvRow {
  std::vector<std::string> cells;
  int line = 0;  // 1-based line in the file
};

struct TsvTable {
  std::string path;                 // as opened
  std::vector<std::string> header;  // column names
  std::vector<TsvRow> rows;

  // Index of a column, or -1.
  int column(std::string_view name) const;
  // Cell of a row by column name; empty when the column is missing.
  const std::string& get(const TsvRow& row, std::string_view name) const;
  Span span(const TsvRow& row, std::string_view column_name = {}) const;
};

// Parses TSV text. Reports ragged rows, a missing header, invalid UTF-8 and
// (when `required` is non-empty) missing required columns, as errors in
// `diags`; returns what could be read.
TsvTable parse_tsv(const std::string& path, std::string_view text, Diagnostics& diags, const std::vector<std::string>& required = {});

// Reads and parses a file of at most `max_bytes` (default: a data file's
// limit); a missing file is an error naming the path.
std::optional<TsvTable> load_tsv(const std::string& path, Diagnostics& diags, const std::vector<std::string>& required = {},
                                 std::uint64_t max_bytes = 0);

// A data file of facts (kb-sources/data/*.tsv): load_tsv with a required
// `source` column, and a row whose source is empty is an error at its cell
// (every data row cites where its fact comes from). An unreadable file is
// an empty table (the error is in `diags`).
TsvTable load_sourced_tsv(const std::string& path, Diagnostics& diags, std::vector<std::string> required);

}  // namespace kb
