// Private to compiler/ingest: the checks both front ends make on the raw
// bytes of a source before reading it as text (invalid UTF-8, NUL bytes,
// carriage returns without a line feed), and where such a byte is.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/diag.hpp"

namespace kb {

// Offset of the first CR that is not followed by an LF, or nullopt.
// cmark-gfm ends a line at a lone CR, kbc's line index does not, so every
// later line number would differ between them.
std::optional<std::size_t> find_lone_carriage_return(std::string_view text);

}  // namespace kb
