// UTF-8 and text helpers used by every stage: validation, code-point
// columns, case and width folding, whitespace normalization, splitting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/limits.hpp"

namespace kb {

// Byte offset of the first invalid UTF-8 sequence, or nullopt when valid.
// Overlong forms, surrogates and code points above U+10FFFF are invalid.
std::optional<size_t> find_invalid_utf8(std::string_view s);

// Decodes one code point at s[i], advancing i. Assumes valid UTF-8.
char32_t next_code_point(std::string_view s, size_t& i);
void append_utf8(std::string& out, char32_t cp);

// Number of code points in s[0, byte_offset): a 0-based column.
int code_point_column(std::string_view s, size_t byte_offset);

// Lower-cases ASCII and Latin-1/Latin Extended-A letters, folds full-width
// ASCII (U+FF01..U+FF5E) to ASCII and the ideographic space to a space.
std::string fold(std::string_view s);

// Collapses runs of whitespace to one space and trims.
std::string normalize_space(std::string_view s);

std::string trim(std::string_view s);
// U+2500..U+257F: the lines a drawn tree (├─ └─ │) is made of.
inline bool is_box_drawing(char32_t cp) { return cp >= 0x2500 && cp <= 0x257F; }
std::vector<std::string> split(std::string_view s, char sep);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string join(const std::vector<std::string>& parts, std::string_view sep);

// True for code points of the CJK scripts (Han, Hiragana, Katakana, CJK
// punctuation, full-width forms): text with no spaces between words.
bool is_cjk(char32_t cp);

// Reads a whole regular file of at most `max_bytes` (base/files.hpp,
// read_regular_file, says why not); nullopt when it cannot.
std::optional<std::string> read_file(const std::string& path, std::uint64_t max_bytes = limits::kMaxSourceFileBytes);

// Levenshtein distance in bytes (for ASCII identifiers: nearest-key hints).
size_t edit_distance(std::string_view a, std::string_view b);

// ASCII letters upper-cased, '_' as a space: a short name of a data key ("a100_40gb" → "A100 40GB").
std::string upper_ascii(std::string_view s);

}  // namespace kb
