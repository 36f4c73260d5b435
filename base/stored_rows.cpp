// Stored query results (see stored_rows.hpp).
#include "base/stored_rows.hpp"

#include <cstring>
#include <stdexcept>

#include "base/checked.hpp"
#include "base/limits.hpp"
#include "base/sqlite.hpp"

namespace kb {

namespace {

constexpr std::uint32_t kStoredRowsFormat = 1;
constexpr unsigned kTypeBits = 7, kHasInteger = 8, kHasReal = 16, kHasText = 32;
// A statement's columns (SQLite's default SQLITE_MAX_COLUMN is 2 000; the
// readers read a dozen at most).
constexpr std::uint64_t kMaxColumns = 256;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void write_cell(stored::Writer& w, sqlite3_stmt* st, int c, std::size_t max_text) {
  // The type first: SQLite's answer is undefined once a value is converted.
  const int type = sqlite3_column_type(st, c);
  const long long integer = sqlite3_column_int64(st, c);
  const double real = sqlite3_column_double(st, c);
  const auto* text = sqlite3_column_text(st, c);
  const std::string_view s =
      text ? std::string_view(reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_column_bytes(st, c)))
           : std::string_view();
  if (s.size() > max_text)
    throw std::runtime_error("a value of " + std::to_string(s.size()) + " bytes in '" + std::string(sqlite3_sql(st)) + "'");
  unsigned tag = static_cast<unsigned>(type);
  if (integer != 0) tag |= kHasInteger;
  if (!same_bits(real, static_cast<double>(integer))) tag |= kHasReal;
  if (type != SQLITE_NULL) tag |= kHasText;
  w.u8(tag);
  if (tag & kHasInteger) w.svar(integer);
  if (tag & kHasReal) w.f64(real);
  if (tag & kHasText) w.vtext(s);
}

}  // namespace

std::string compile_rows(sqlite3* db, const std::vector<StoredQuery>& queries, std::size_t max_text) {
  stored::Writer w;
  w.u32(kStoredRowsFormat);
  w.count(queries.size());
  for (const StoredQuery& q : queries) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, q.sql.data(), static_cast<int>(q.sql.size()), &st, nullptr) != SQLITE_OK)
      throw SqliteError(std::string(sqlite3_errmsg(db)) + " in '" + std::string(q.sql) + "'");
    stored::Writer cells;
    std::uint64_t rows = 0;
    int rc = SQLITE_OK;
    for (std::size_t i = 0; i < q.params.size() && rc == SQLITE_OK; ++i)
      rc = sqlite3_bind_text(st, static_cast<int>(i + 1), q.params[i].data(), static_cast<int>(q.params[i].size()), SQLITE_STATIC);
    const int columns = sqlite3_column_count(st);
    try {
      while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int c = 0; c < columns; ++c) write_cell(cells, st, c, max_text);
        ++rows;
        rc = SQLITE_OK;
      }
    } catch (...) {
      sqlite3_finalize(st);
      throw;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) throw SqliteError(std::string(sqlite3_errmsg(db)) + " in '" + std::string(q.sql) + "'");
    w.vtext(q.sql);
    w.var(q.params.size());
    for (const auto& p : q.params) w.vtext(p);
    w.var(static_cast<std::uint64_t>(columns));
    w.var(rows);
    const std::string bytes = cells.take();
    w.var(bytes.size());
    w.bytes(bytes);
  }
  return w.take();
}

void store_rows_part(sqlite3* db, std::string_view part, std::string_view bytes) {
  const auto run = [&](const char* sql, long long chunk, std::string_view b) {
    sqlite3_stmt* st = nullptr;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, nullptr);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, part.data(), static_cast<int>(part.size()), SQLITE_STATIC);
    if (rc == SQLITE_OK && chunk >= 0) rc = sqlite3_bind_int64(st, 2, chunk);
    if (rc == SQLITE_OK && chunk >= 0) rc = sqlite3_bind_blob(st, 3, b.data(), static_cast<int>(b.size()), SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) throw SqliteError(std::string(sqlite3_errmsg(db)) + " in '" + sql + "'");
  };
  run("DELETE FROM rows_compiled WHERE part = ?", -1, {});
  long long chunk = 0;
  for (std::size_t at = 0; at < bytes.size(); at += limits::kRowsChunkBytes)
    run("INSERT INTO rows_compiled(part, chunk, bytes) VALUES (?, ?, ?)", chunk++, bytes.substr(at, limits::kRowsChunkBytes));
}

std::string read_rows_part(Db& db, std::string_view part) {
  std::string out;
  Stmt st(db, "SELECT chunk, bytes FROM rows_compiled WHERE part = ? ORDER BY chunk");
  st.bind(1, part);
  const std::string row = "'" + std::string(part) + "'";
  for (long long chunk = 0; st.step(); ++chunk) {
    // The chunks are the primary key's, so a chunk read out of turn is one missing.
    if (st.type(0) != SQLITE_INTEGER || st.integer(0) != chunk)
      throw KbValueError("rows_compiled", "chunk", row, "chunk " + std::to_string(chunk) + " is missing");
    const std::string_view b = st.blob(1);
    if (b.size() > limits::kMaxCompiledRowsBytes - out.size())
      throw KbValueError("rows_compiled", "bytes", row, "past " + std::to_string(limits::kMaxCompiledRowsBytes) + " bytes");
    out.append(b);
  }
  return out;
}

StoredRows::StoredRows(stored::Reader cells, int columns, std::uint64_t rows) : r_(cells), columns_(columns), rows_left_(rows) {}

bool StoredRows::step() {
  on_row_ = false;
  if (rows_left_ == 0) {
    if (!r_.done()) r_.fail("bytes after the last row");
    return false;
  }
  --rows_left_;
  cells_.resize(static_cast<std::size_t>(columns_));
  for (Cell& cell : cells_) {
    const unsigned tag = r_.u8();
    cell.type = static_cast<int>(tag & kTypeBits);
    if (cell.type < SQLITE_INTEGER || cell.type > SQLITE_NULL || tag > (kTypeBits | kHasInteger | kHasReal | kHasText))
      r_.fail("a value tagged " + std::to_string(tag));
    if ((cell.type == SQLITE_NULL) != !(tag & kHasText)) r_.fail("a value whose text does not match its type");
    cell.integer = (tag & kHasInteger) ? r_.svar() : 0;
    cell.real = (tag & kHasReal) ? r_.f64() : static_cast<double>(cell.integer);
    cell.text = (tag & kHasText) ? r_.vbytes() : std::string_view();
  }
  on_row_ = true;
  return true;
}

StoredResults::StoredResults(std::string_view bytes, std::size_t max_text) : r_(bytes, max_text) {
  if (const std::uint32_t format = r_.u32(); format != kStoredRowsFormat)
    r_.fail("format " + std::to_string(format) + ", not " + std::to_string(kStoredRowsFormat));
  left_ = r_.u32();
}

StoredRows StoredResults::next(const StoredQuery& q) {
  if (left_ == 0) r_.fail("no rows stored for '" + std::string(q.sql) + "'");
  --left_;
  bool same = r_.vbytes() == q.sql && r_.var() == q.params.size();
  if (same)
    for (const auto& p : q.params) same = same && r_.vbytes() == p;
  if (!same) r_.fail("the rows of another query than '" + std::string(q.sql) + "' (compiled by another kbc)");
  const std::uint64_t columns = r_.var(), rows = r_.var(), length = r_.var();
  if (columns > kMaxColumns) r_.fail(std::to_string(columns) + " columns");
  // Every value takes a byte at least: never more rows than the bytes hold.
  if (columns == 0 ? rows != 0 : rows > length / columns) r_.fail(std::to_string(rows) + " rows in " + std::to_string(length) + " bytes");
  values_ += rows * columns;
  if (values_ > limits::kMaxStoredValues)
    r_.fail(std::to_string(values_) + " values, more than " + std::to_string(limits::kMaxStoredValues));
  return StoredRows(r_.part(length), static_cast<int>(columns), rows);
}

void StoredResults::finish() {
  if (left_ != 0) r_.fail(std::to_string(left_) + " queries' rows not read");
  if (!r_.done()) r_.fail("bytes after the last query's rows");
}

}  // namespace kb
