// Query results kbc runs once and stores, for kbq to read without SQL
// (rows_compiled; docs/schema.md). Compiling one SQL statement costs kbq
// more than reading the few dozen rows it returns: the small tables every
// answer reads (the planner's settings, the GPUs, the config keys, the
// launcher's flags, ...) are compiled by kbc into one value, the rows of
// each query in order, and kbq reads them with StoredRows, which answers
// what a kb::Stmt would: each value's SQLite type, and the integer, real
// and text SQLite converts it to (as SQLite gave them when compiled), so
// the readers and their checks stay those of the rows.
//
// Layout (base/stored_bytes.hpp):
//   u32 format (kStoredRowsFormat), u32 count of queries, then each:
//   vtext SQL, var count of parameters, each a vtext, var columns,
//   var rows, var byte length of the cells, then the cells, row by row:
//   u8 tag (bits 0-2 the SQLite type, 1 to 5; bit 3 an integer follows,
//   svar; bit 4 a real, f64; bit 5 a text, vtext; bits 6-7 zero). A missing
//   integer is 0, a missing real the integer's value, a missing text empty.
//
// Reading checks every length and count against the bytes left, every tag,
// every number's finiteness; a query read must be the one stored (its SQL
// and parameters), so a value compiled by another kbc is refused, never
// misread. Texts are not checked as UTF-8 here: the readers check them as
// they check a column's (kb_text).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/stored_bytes.hpp"

namespace kb {

// One query whose rows are stored: SQL text, its parameters bound as text in order.
struct StoredQuery {
  std::string_view sql;
  std::vector<std::string> params;
};

// Runs every query on `db` and returns their rows as one value. Throws
// SqliteError on a statement SQLite refuses, std::runtime_error on a value
// past `max_text` bytes.
std::string compile_rows(sqlite3* db, const std::vector<StoredQuery>& queries, std::size_t max_text);

class Db;

// A compiled value stored as rows_compiled's part `part`: its rows replaced
// by the value cut in chunks of limits::kRowsChunkBytes. Throws SqliteError.
void store_rows_part(sqlite3* db, std::string_view part, std::string_view bytes);
// The value of rows_compiled's part `part`, its chunks joined; "" when the
// KB has none. A chunk missing from 0, 1, ... or a value past
// limits::kMaxCompiledRowsBytes is a KbValueError.
std::string read_rows_part(Db& db, std::string_view part);

// One query's rows as stored, read like a kb::Stmt: step() to the next row,
// then its columns. A column past the row's reads as NULL (as SQLite's).
class StoredRows {
 public:
  bool step();
  int columns() const { return columns_; }
  int type(int c) const { return in(c) ? cells_[static_cast<std::size_t>(c)].type : SQLITE_NULL; }
  bool is_null(int c) const { return type(c) == SQLITE_NULL; }
  std::string_view view(int c) const { return in(c) ? cells_[static_cast<std::size_t>(c)].text : std::string_view(); }
  std::string text(int c) const { return std::string(view(c)); }
  long long integer(int c) const { return in(c) ? cells_[static_cast<std::size_t>(c)].integer : 0; }
  double real(int c) const { return in(c) ? cells_[static_cast<std::size_t>(c)].real : 0.0; }

 private:
  friend class StoredResults;
  struct Cell {
    int type = SQLITE_NULL;
    long long integer = 0;
    double real = 0;
    std::string_view text;
  };
  StoredRows(stored::Reader cells, int columns, std::uint64_t rows);
  bool in(int c) const { return on_row_ && c >= 0 && c < columns_; }
  stored::Reader r_;
  int columns_ = 0;
  std::uint64_t rows_left_ = 0;
  std::vector<Cell> cells_;  // the current row's
  bool on_row_ = false;      // step() gave a row
};

// What compile_rows wrote: its queries read in the order compiled.
class StoredResults {
 public:
  // Throws stored::Error when the bytes do not begin a value of this format.
  StoredResults(std::string_view bytes, std::size_t max_text);
  // The rows of the next query, which must be `q`: stored::Error otherwise
  // (another query, or none left, or past limits::kMaxStoredValues values
  // with those read before).
  StoredRows next(const StoredQuery& q);
  // stored::Error unless every query was read and no byte follows.
  void finish();

 private:
  stored::Reader r_;
  std::uint32_t left_ = 0;
  std::uint64_t values_ = 0;  // of the queries read so far
};

}  // namespace kb
