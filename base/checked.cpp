// Checked arithmetic and KB value readers (see checked.hpp).
#include "base/checked.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "base/escape.hpp"
#include "base/text.hpp"
#include "base/value_ranges.hpp"

namespace kb {

std::optional<long long> next_pow2(long long v) {
  long long p = 1;
  while (p < v) {
    if (p > (1LL << 61)) return std::nullopt;  // 2p would pass 2^62 and the next doubling overflows
    p *= 2;
  }
  return p;
}

namespace {
std::string message(std::string_view table, std::string_view column, std::string_view row, std::string_view problem) {
  return escape_controls("kb: " + std::string(table) + "." + std::string(column) + " of " + std::string(row) + ": " + std::string(problem),
                         EscapeNewlines::Yes);
}

const char* type_name(int type) {
  switch (type) {
    case SQLITE_NULL:
      return "NULL";
    case SQLITE_FLOAT:
      return "a real number";
    case SQLITE_TEXT:
      return "text";
    case SQLITE_BLOB:
      return "a blob";
    default:
      return "an integer";
  }
}
}  // namespace

KbValueError::KbValueError(std::string_view table, std::string_view column, std::string_view row, std::string_view problem)
    : std::runtime_error(message(table, column, row, problem)), table_(table), row_(row) {}

template <class Row>
std::string row_name(const Row& st, const ValueAt& at) {
  const int row_col = at.row_col;
  if (row_col < 0 || row_col >= st.columns()) return at.row.empty() ? std::string("a row") : std::string(at.row);
  if (st.type(row_col) == SQLITE_INTEGER) return "id " + std::to_string(st.integer(row_col));
  const std::string_view text = st.view(row_col);
  if (find_invalid_utf8(text)) return "a row";
  return "'" + first_code_points(text, 80) + "'";
}

template <class Row>
std::optional<long long> kb_opt_int(const Row& st, int c, const ValueAt& at, long long lo, long long hi) {
  const int type = st.type(c);
  if (type == SQLITE_NULL) return std::nullopt;
  if (type != SQLITE_INTEGER)
    throw KbValueError(at.table, at.column, row_name(st, at), std::string(type_name(type)) + " where a whole number belongs");
  const long long v = st.integer(c);
  if (v < lo || v > hi)
    throw KbValueError(at.table, at.column, row_name(st, at),
                       std::to_string(v) + " is out of range (" + std::to_string(lo) + " to " + std::to_string(hi) + ")");
  return v;
}

template <class Row>
std::string kb_text(const Row& st, int c, const ValueAt& at) {
  if (st.type(c) == SQLITE_BLOB) throw KbValueError(at.table, at.column, row_name(st, at), "a blob where text belongs");
  std::string_view v = st.view(c);
  if (auto bad = find_invalid_utf8(v))
    throw KbValueError(at.table, at.column, row_name(st, at), "text that is not UTF-8 (byte " + std::to_string(*bad + 1) + ")");
  return std::string(v);
}

template <class Row>
long long kb_int(const Row& st, int c, const ValueAt& at, long long lo, long long hi) {
  if (auto v = kb_opt_int(st, c, at, lo, hi)) return *v;
  throw KbValueError(at.table, at.column, row_name(st, at), "NULL where a whole number belongs");
}

// --- the ranges of base/value_ranges.hpp ----------------------------------------

std::string range_problem(const IntRange& r, long long v) {
  if (in_range(r, v)) return {};
  return std::to_string(v) + " is out of range (" + std::to_string(r.lo) + " to " + std::to_string(r.hi) + ")";
}

std::string range_problem(const RealRange& r, double v) {
  if (std::isfinite(v) && v >= r.lo && v < r.below) return {};
  char buf[96];
  std::snprintf(buf, sizeof buf, "%g is out of range (%g to less than %g)", v, r.lo, r.below);
  return buf;
}

std::string int_cell_problem(const IntRange& r, std::string_view cell, long long* value) {
  const std::string t = trim(cell);
  if (t.empty()) return r.null_ok ? std::string() : "an empty cell where a whole number belongs";
  long long v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range)
    return "'" + first_code_points(t, 40) + "' is out of range (" + std::to_string(r.lo) + " to " + std::to_string(r.hi) + ")";
  if (ec != std::errc() || end != t.data() + t.size()) return "'" + first_code_points(t, 40) + "' where a whole number belongs";
  if (value) *value = v;
  return range_problem(r, v);
}

std::string real_cell_problem(const RealRange& r, std::string_view cell) {
  const std::string t = trim(cell);
  if (t.empty()) return {};
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return "'" + first_code_points(t, 40) + "' where a number belongs";
  return range_problem(r, v);
}

template <class Row>
std::optional<long long> kb_opt_int(const Row& st, int c, const IntRange& r, int row_col, std::string_view row) {
  const ValueAt at{r.table, r.column, row_col, row};
  if (!r.null_ok && st.type(c) == SQLITE_NULL)
    throw KbValueError(at.table, at.column, row_name(st, at), "NULL where a whole number belongs");
  return kb_opt_int(st, c, at, r.lo, r.hi);
}

template <class Row>
long long kb_int(const Row& st, int c, const IntRange& r, int row_col, std::string_view row) {
  return kb_int(st, c, ValueAt{r.table, r.column, row_col, row}, r.lo, r.hi);
}

// Every reader, for both kinds of row.
template std::string row_name(const Stmt&, const ValueAt&);
template long long kb_int(const Stmt&, int, const ValueAt&, long long, long long);
template std::optional<long long> kb_opt_int(const Stmt&, int, const ValueAt&, long long, long long);
template std::optional<long long> kb_opt_int(const Stmt&, int, const IntRange&, int, std::string_view);
template long long kb_int(const Stmt&, int, const IntRange&, int, std::string_view);
template std::string kb_text(const Stmt&, int, const ValueAt&);
template std::string row_name(const StoredRows&, const ValueAt&);
template long long kb_int(const StoredRows&, int, const ValueAt&, long long, long long);
template std::optional<long long> kb_opt_int(const StoredRows&, int, const ValueAt&, long long, long long);
template std::optional<long long> kb_opt_int(const StoredRows&, int, const IntRange&, int, std::string_view);
template long long kb_int(const StoredRows&, int, const IntRange&, int, std::string_view);
template std::string kb_text(const StoredRows&, int, const ValueAt&);

}  // namespace kb
