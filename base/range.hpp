// An integer range as the documents state parallelism and GPU counts ("2",
// "1–8", "512+", "—" not used, "varies"), and its one formatter. The
// compiler reads cells into it, the KB stores it (*_min, *_max, *_state),
// kbq reads it back; every program prints it through format_range.
#pragma once

#include <string>

#include "base/kinds.hpp"

namespace kb {

struct Range {
  RangeState state = RangeState::Unknown;  // what the cell says
  long long lo = 0;                        // lower bound (state Value)
  long long hi = 0;                        // upper bound (state Value, not open); equals lo for one number
  bool open = false;                       // state Value with no upper bound ("512+")
  std::string raw;                         // the cell as written, when read from a document; else ""

  static Range of(long long v) { return {RangeState::Value, v, v, false, {}}; }
  bool known() const { return state != RangeState::Unknown; }
  bool is_value() const { return state == RangeState::Value; }
  // One size: a single number, or "not used" (size 1).
  bool exact() const { return state == RangeState::None || (state == RangeState::Value && !open && lo == hi); }
  // The size to compute with: the number (lower bound of a range), 1 when not used or not known.
  long long value() const { return state == RangeState::Value ? lo : 1; }
  bool operator==(const Range& o) const {
    return state == o.state && lo == o.lo && hi == o.hi && open == o.open;  // raw is how, not what
  }
};

// The words a range is printed with. The defaults are kbq's; the document
// generator passes the cell words of a language (data/cells.tsv).
struct RangeWords {
  std::string none = "—";         // not used
  std::string varies = "varies";  // depends on the setup
  std::string unknown = "?";      // not stated
  std::string sep = "–";          // between the bounds of a range
  std::string open = "+";         // after the lower bound of an open range
};

// How facts spell a range where they are compared across editions (conflicts,
// lint, quick-reference GPU counts): "none", "varies", "1-8", "512+", "".
inline const RangeWords kFactWords{"none", "varies", "", "-", "+"};

// "8", "1–8", "512+", "—", "varies", "?".
std::string format_range(const Range& r, const RangeWords& words = {});

}  // namespace kb
