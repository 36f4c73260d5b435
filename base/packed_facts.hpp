// A recipe's code facts as kbc packs them for kbq (recipe_facts.facts, one
// value per function, docs/schema.md): kbq reads a recipe's hundred facts
// with one row, not a hundred (a row of SQLite costs about 1 300
// instructions, a packed fact under 100; docs/performance.md), and the
// embedded KB holds them in 0.5 MB, not 1.3.
//
// Layout (base/stored_bytes.hpp):
//   var format (kPackedFactsFormat)
//   var count
//   per fact, in field id order:
//     var field id (fact_fields.id), var value id (fact_values.id),
//     u8 flags (1: a file id follows, 2: a line follows),
//     [var file id (code_files.id)], [var line], vtext the rest of its site
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/limits.hpp"
#include "base/stored_bytes.hpp"

namespace kb {

inline constexpr std::uint64_t kPackedFactsFormat = 1;

struct PackedFact {
  std::uint64_t field_id = 0, value_id = 0;
  std::optional<std::uint64_t> file_id, line;
  std::string_view more;  // the rest of its site ("" when none)
};

std::string pack_facts(const std::vector<PackedFact>& facts);

// Calls each(const PackedFact&) for every fact, in stored order. Throws
// stored::Error ("at byte N: what is wrong") on bytes pack_facts did
// not write: another format, a count past the bytes left, flags it does not
// set, a text too long or not UTF-8.
template <typename Each>
void for_each_packed_fact(std::string_view bytes, Each&& each) {
  stored::Reader r(bytes, limits::kMaxKbValueBytes);
  if (const std::uint64_t format = r.var(); format != kPackedFactsFormat)
    r.fail("format " + std::to_string(format) + ", not " + std::to_string(kPackedFactsFormat));
  // A fact takes at least 4 bytes: two ids, its flags, its text's length.
  const std::uint64_t count = r.var();
  if (count > bytes.size() / 4) r.fail("a count of " + std::to_string(count) + " past the bytes left");
  for (std::uint64_t n = count; n-- > 0;) {
    PackedFact f;
    f.field_id = r.var();
    f.value_id = r.var();
    const unsigned flags = r.u8();
    if (flags > 3) r.fail("flags " + std::to_string(flags));
    if (flags & 1u) f.file_id = r.var();
    if (flags & 2u) f.line = r.var();
    f.more = r.vtext();
    each(static_cast<const PackedFact&>(f));
  }
  if (!r.done()) r.fail("bytes after the facts");
}

}  // namespace kb
