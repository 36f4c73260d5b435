// Byte-level checks of the ingest front ends (bytes.hpp).
#include "compiler/ingest/bytes.hpp"

#include "base/text.hpp"

namespace kb {

Span span_of_byte(const std::string& path, std::string_view text, std::size_t offset) {
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return Span{path, line, code_point_column(text.substr(line_start), offset - line_start) + 1};
}

std::optional<std::size_t> find_lone_carriage_return(std::string_view text) {
  for (std::size_t at = text.find('\r'); at != std::string_view::npos; at = text.find('\r', at + 1))
    if (at + 1 == text.size() || text[at + 1] != '\n') return at;
  return std::nullopt;
}

}  // namespace kb
