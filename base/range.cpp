// The range formatter (see range.hpp).
#include "base/range.hpp"

namespace kb {

std::string format_range(const Range& r, const RangeWords& words) {
  switch (r.state) {
    case RangeState::None:
      return words.none;
    case RangeState::Varies:
      return words.varies;
    case RangeState::Unknown:
      return words.unknown;
    case RangeState::Value:
      break;
  }
  if (r.open) return std::to_string(r.lo) + words.open;
  if (r.hi != r.lo) return std::to_string(r.lo) + words.sep + std::to_string(r.hi);
  return std::to_string(r.lo);
}

}  // namespace kb
