// Values from input kbq and kbc did not write, checked before they are used:
// arithmetic that reports overflow instead of wrapping, and the readers of
// KB values that refuse a value out of its documented range
// (base/limits.hpp) with a KbValueError naming where it is:
//
//   kb: recipes.tp_min of 'qwen3_8b_sft_config': 0 is out of range (1 to 1048576)
//
// Every integer a KB reader uses as a count, a size or a divisor goes
// through kb_int / kb_opt_int; see docs/security.md.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "base/sqlite.hpp"
#include "base/stored_rows.hpp"

namespace kb {

// --- checked arithmetic ------------------------------------------------------

// a × b and a + b, or nullopt when the result does not fit a long long.
inline std::optional<long long> checked_mul(long long a, long long b) {
  long long r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<long long> checked_add(long long a, long long b) {
  long long r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The smallest power of two ≥ v (1 for v ≤ 1), or nullopt when it would
// not fit a long long (v > 2^62). At most 63 steps.
std::optional<long long> next_pow2(long long v);

// --- KB values ---------------------------------------------------------------

// A value of the KB that kbq cannot use: out of range, of the wrong type, a
// zero divisor, malformed JSON. what() is "kb: <table>.<column> of <row>:
// <problem>", one line (control characters escaped); kbq prints it after
// the KB's name and exits 2.
class KbValueError : public std::runtime_error {
 public:
  KbValueError(std::string_view table, std::string_view column, std::string_view row, std::string_view problem);
  // The table and the row as the message names them (kbc maps a planner
  // row back to its line of data/planner.tsv).
  const std::string& table() const { return table_; }
  const std::string& row() const { return row_; }

 private:
  std::string table_, row_;
};

// Where a value is read: its table and column, and the statement column
// whose value names the row (its key, name or id) in the message, or when
// the statement has none (-1), `row` as the reader knows it ("a row" when
// empty).
struct ValueAt {
  std::string_view table, column;
  int row_col = -1;
  std::string_view row = {};
};

// The readers below read a row of a statement (Stmt) or of stored query
// results (StoredRows, base/stored_rows.hpp) alike.

// How a row is named in a KbValueError: 'text' (escaped, at most 80 code
// points) for a text column, "id N" for an integer one.
template <class Row>
std::string row_name(const Row& st, const ValueAt& at);

// Column c of the current row as an integer in [lo, hi]. NULL, text, a real
// or a blob, or a value outside the range, is a KbValueError.
template <class Row>
long long kb_int(const Row& st, int c, const ValueAt& at, long long lo, long long hi);
// The same, NULL allowed (nullopt).
template <class Row>
std::optional<long long> kb_opt_int(const Row& st, int c, const ValueAt& at, long long lo, long long hi);

// The same, with the column's range from base/value_ranges.hpp (the one
// table kbc checks too): NULL only where the range allows it.
struct IntRange;
template <class Row>
std::optional<long long> kb_opt_int(const Row& st, int c, const IntRange& r, int row_col = -1, std::string_view row = {});
template <class Row>
long long kb_int(const Row& st, int c, const IntRange& r, int row_col = -1, std::string_view row = {});

// Column c of the current row as text: NULL reads as "", an integer or a
// real as its decimal form; a blob, or text that is not UTF-8, is a
// KbValueError (a JSON answer could not hold it, a terminal would get raw
// bytes). Lengths are bounded by SQLITE_LIMIT_LENGTH already.
template <class Row>
std::string kb_text(const Row& st, int c, const ValueAt& at);

}  // namespace kb
