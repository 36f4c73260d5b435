// A JSON value written as nlohmann's dump() writes it with no indent, byte
// for byte: keys in the object's own order, strings kept as UTF-8 with only
// '"', '\\' and the control characters escaped (\b \f \n \r \t, the others
// as \u00xx), integers in decimal, a number with a fraction as nlohmann
// prints it. A --batch record is mostly strings, which are copied here in
// runs between the bytes that need escaping; nlohmann's serializer decodes
// every byte of them (a sixth of a whole-record --batch answer's
// instructions; docs/performance.md). A string that is not UTF-8 is left to
// nlohmann, so it is refused exactly as dump() refuses it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kbq {

// Appends `j` as j.dump() would write it.
void write_compact(const nlohmann::json& j, std::string& out);

// `j` as j.dump() writes it.
std::string compact(const nlohmann::json& j);

}  // namespace kbq
