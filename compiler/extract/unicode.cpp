// Unicode normalization through ICU (see unicode.hpp).
#include "compiler/extract/unicode.hpp"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <cstdio>

#include "base/text.hpp"

namespace kb {
namespace {

std::string normalize_with(const icu::Normalizer2* (*instance)(UErrorCode&), std::string_view s) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = instance(status);
  if (U_FAILURE(status) || !n) return std::string(s);  // ICU data missing: compare as written
  const icu::UnicodeString in = icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
  const icu::UnicodeString out = n->normalize(in, status);
  if (U_FAILURE(status)) return std::string(s);
  std::string utf8;
  out.toUTF8String(utf8);
  return utf8;
}

bool is_open_bracket(char32_t cp) { return u_getIntPropertyValue(static_cast<UChar32>(cp), UCHAR_BIDI_PAIRED_BRACKET_TYPE) == U_BPT_OPEN; }
bool is_close_bracket(char32_t cp) {
  return u_getIntPropertyValue(static_cast<UChar32>(cp), UCHAR_BIDI_PAIRED_BRACKET_TYPE) == U_BPT_CLOSE;
}

}  // namespace

std::string nfkc(std::string_view s) { return normalize_with(&icu::Normalizer2::getNFKCInstance, s); }

std::string nfkc_casefold(std::string_view s) { return normalize_with(&icu::Normalizer2::getNFKCCasefoldInstance, s); }

std::string name_key(std::string_view s) {
  const std::string folded = nfkc_casefold(s);
  std::string out;
  size_t i = 0;
  while (i < folded.size()) {
    const size_t at = i;
    const char32_t cp = next_code_point(folded, i);
    if (!u_isUWhiteSpace(static_cast<UChar32>(cp))) out.append(folded, at, i - at);
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
    if (u_isUWhiteSpace(static_cast<UChar32>(cp))) {
      pending_space = !out.empty();
      continue;
    }
    const bool after_open = !out.empty() && is_open_bracket(out.back());
    if (is_close_bracket(cp)) pending_space = false;
    if (is_open_bracket(cp) && !out.empty() && u_isalnum(static_cast<UChar32>(out.back()))) pending_space = true;
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
    const auto cp = static_cast<UChar32>(next_code_point(s, i));
    if (cp == ' ') continue;
    const auto type = static_cast<UCharCategory>(u_charType(cp));
    if (type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || u_hasBinaryProperty(cp, UCHAR_DEFAULT_IGNORABLE_CODE_POINT) ||
        (u_isUWhiteSpace(cp) && cp != '\t'))
      return at;
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
