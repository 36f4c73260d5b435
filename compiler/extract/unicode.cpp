// Names compared and shown across editions (see unicode.hpp): the Unicode
// data comes from utf8proc through base/text.hpp, like every fold of both
// programs; ICU only for what utf8proc does not carry, the character names
// of diagnostics and Bidi_Paired_Bracket_Type.
#include "compiler/extract/unicode.hpp"

#include <unicode/uchar.h>

#include <cstdio>

#include "base/text.hpp"

namespace kb {
namespace {

bool is_open_bracket(char32_t cp) { return u_getIntPropertyValue(static_cast<UChar32>(cp), UCHAR_BIDI_PAIRED_BRACKET_TYPE) == U_BPT_OPEN; }
bool is_close_bracket(char32_t cp) {
  return u_getIntPropertyValue(static_cast<UChar32>(cp), UCHAR_BIDI_PAIRED_BRACKET_TYPE) == U_BPT_CLOSE;
}

}  // namespace

std::string name_key(std::string_view s) {
  const std::string folded = nfkc_casefold(s);
  std::string out;
  size_t i = 0;
  while (i < folded.size()) {
    const size_t at = i;
    const char32_t cp = next_code_point(folded, i);
    if (!is_white_space(cp)) out.append(folded, at, i - at);
  }
  return out;
}

std::string display_name(std::string_view s) {
  const std::string n = nfkc(s);
  std::u32string cps;
  size_t i = 0;
  while (i < n.size()) cps.push_back(next_code_point(n, i));
  std::u32string out;
  bool pending_space = false;
  for (char32_t cp : cps) {
    if (is_white_space(cp)) {
      pending_space = !out.empty();
      continue;
    }
    const bool after_open = !out.empty() && is_open_bracket(out.back());
    if (is_close_bracket(cp)) pending_space = false;
    if (is_open_bracket(cp) && !out.empty() && is_alnum(out.back())) pending_space = true;
    if (pending_space && !after_open) out.push_back(U' ');
    pending_space = false;
    out.push_back(cp);
  }
  std::string utf8;
  for (char32_t cp : out) append_utf8(utf8, cp);
  return utf8;
}

size_t find_invisible(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t at = i;
    const char32_t cp = next_code_point(s, i);
    if (cp == ' ') continue;
    if (is_invisible(cp) || (is_white_space(cp) && cp != '\t')) return at;
  }
  return std::string_view::npos;
}

std::string describe_code_point(std::string_view s, size_t at) {
  size_t i = at;
  const auto cp = static_cast<UChar32>(next_code_point(s, i));
  char hex[16];
  std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp));
  char name[128] = {0};
  UErrorCode status = U_ZERO_ERROR;
  u_charName(cp, U_UNICODE_CHAR_NAME, name, sizeof name, &status);
  if (U_FAILURE(status) || name[0] == '\0') return hex;
  return std::string(hex) + " " + name;
}

}  // namespace kb
