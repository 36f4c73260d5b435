// Byte-level checks of the ingest front ends (bytes.hpp).
#include "compiler/ingest/bytes.hpp"

#include "base/text.hpp"

namespace kb {

std::optional<std::size_t> find_lone_carriage_return(std::string_view text) {
  for (std::size_t at = text.find('\r'); at != std::string_view::npos; at = text.find('\r', at + 1))
    if (at + 1 == text.size() || text[at + 1] != '\n') return at;
  return std::nullopt;
}

}  // namespace kb
