// UTF-8 and text helpers used by every stage: validation, code-point
// columns, case and width folding, whitespace normalization, splitting.
// The Unicode properties (case, width, normalization, categories) come
// from utf8proc, the one Unicode library of both programs' folding: small
// enough that kbq's start-up does not pay for it (ICU costs kbq ~0.7 ms of
// CPU and ~95 page faults per run; docs/dependencies.md).
#pragma once

#include <array>
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

// The columns a code point takes on a terminal (utf8proc_charwidth): 2 for
// East Asian wide and full-width forms, 0 for combining marks and controls,
// else 1.
int display_width(char32_t cp);
// What a line may not break beside: a closing or other punctuation mark
// (Unicode categories Pe, Pf, Po: "）", "」", "、", "。", ",") or a
// modifier letter (Lm: the prolonged sound mark "ー", "々") is not the first
// of a line, an opening mark (Ps, Pi: "（", "「") not the last.
enum class BreakClass : unsigned char { Other, Opening, Closing };
BreakClass break_class(char32_t cp);
// Both for every ASCII code point, as the two functions give them: read
// from the table, a loop over mostly ASCII text makes no call per byte.
struct AsciiProperties {
  std::array<int, 128> width{};
  std::array<BreakClass, 128> breaks{};
};
const AsciiProperties& ascii_properties();

// Number of code points in s[0, byte_offset): a 0-based column.
int code_point_column(std::string_view s, size_t byte_offset);

// The fold words are matched in (the query language, data-table words, the
// generator's names): each code point's <wide> compatibility form made
// narrow (full-width ASCII "ＧＰＵ" → "GPU", the ideographic space → ' ')
// then lower-cased (Unicode's simple lowercase mapping: "É" → "é",
// "Σ" → "σ"). One code point in, one out, so the k-th code point of the
// result is the k-th of `s` (spans map back). Input must be valid UTF-8.
std::string fold(std::string_view s);

// Unicode normalization forms, for names compared across editions:
// NFKC ("（" → "(", "ﬁ" → "fi") and NFKC_Casefold (NFKC, full case
// folding, default-ignorable code points such as U+200B removed). Input
// must be valid UTF-8.
std::string nfkc(std::string_view s);
std::string nfkc_casefold(std::string_view s);

// Unicode's White_Space property: separators (Zs, Zl, Zp), TAB..CR, NEL.
bool is_white_space(char32_t cp);
// A letter (L*) or a decimal digit (Nd).
bool is_alnum(char32_t cp);
// A mark (Mn, Mc): an accent or vowel sign that belongs to the letter before it.
bool is_mark(char32_t cp);
// A control (Cc) or format (Cf) character, or a default-ignorable code
// point: invisible, so two names that look equal would differ.
bool is_invisible(char32_t cp);

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
// punctuation, full-width forms): text with no spaces between words. By
// Unicode block: utf8proc has no Script property.
bool is_cjk(char32_t cp);
// Kana (Hiragana, Katakana and its extensions, half-width Katakana) and Han
// ideographs (the unified blocks and extensions, compatibility ideographs):
// what tells a Japanese question from a Chinese one (base/dsl/resolve.cpp).
// These three are this project's one deliberate table of code points, by
// Unicode block, chosen over a generated set (base/unicode_gen.cpp does
// that for the invisible class) because neither script property fits the
// job: Script leaves the prolonged sound mark U+30FC, part of nearly every
// Katakana loanword, in Common; Script_Extensions puts the ideographic
// comma and full stop (U+3001, U+3002), which Chinese writes too, in
// Hiragana, Katakana and Han alike. kbq links no ICU; utf8proc has neither.
bool is_kana(char32_t cp);
bool is_han(char32_t cp);

// Reads a whole regular file of at most `max_bytes` (base/files.hpp,
// read_regular_file, says why not); nullopt when it cannot.
std::optional<std::string> read_file(const std::string& path, std::uint64_t max_bytes = limits::kMaxSourceFileBytes);

// Levenshtein distance in bytes (for ASCII identifiers: nearest-key hints).
size_t edit_distance(std::string_view a, std::string_view b);
// The same, but stops past `max`: min(distance, max + 1), in time
// O(min(|a|, |b|) x max) at worst and O(1) when the lengths differ by more.
size_t edit_distance(std::string_view a, std::string_view b, size_t max);
// The `n` candidates nearest `word` by edit distance (ties: the smaller
// candidate first), each once. Candidates far from the best found so far
// cost O(1) (bounded distance), so a long word does not cost its length
// times every candidate's.
std::vector<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates, size_t n);

// `text` with each "{name}" of `vars` replaced by its value, in one pass:
// a value is never read again for placeholders, so a value holding
// "{other}" (a crafted KB's label or name) stays as it is, and the result
// is at most |text| + (placeholders in text) x (longest value) bytes. An
// unknown "{name}" stays as written.
std::string fill_placeholders(std::string_view text, const std::vector<std::pair<std::string, std::string>>& vars);

// ASCII letters upper-cased, '_' as a space: a short name of a data key ("a100_40gb" → "A100 40GB").
std::string upper_ascii(std::string_view s);

// How many leading bytes two strings share ("llama31_8b", "llama31_405b": 8).
size_t shared_prefix(std::string_view a, std::string_view b);

// A number with one decimal ("23.2"), as answers print GiB and sizes.
std::string one_decimal(double v);

}  // namespace kb
