// Helpers of the normalized document (see document.hpp).
#include "compiler/ingest/document.hpp"

namespace kb {

bool same_content(const Block& a, const Block& b) {
  if (a.kind != b.kind || a.level != b.level || a.ordered != b.ordered || a.ordinal != b.ordinal || a.text != b.text || a.info != b.info ||
      a.rows.size() != b.rows.size())
    return false;
  for (size_t r = 0; r < a.rows.size(); ++r) {
    if (a.rows[r].size() != b.rows[r].size()) return false;
    for (size_t c = 0; c < a.rows[r].size(); ++c)
      if (a.rows[r][c].text != b.rows[r][c].text) return false;
  }
  return true;
}

}  // namespace kb
