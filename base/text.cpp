// UTF-8 and text helpers (see text.hpp).
#include "base/text.hpp"

#include <utf8proc.h>
#include <cstdio>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "base/bytes8.hpp"
#include "base/files.hpp"

namespace kb {

std::optional<size_t> find_invalid_utf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      // ASCII eight bytes at a time: none has its high bit set.
      if (n - i >= 8 && bytes8::high(bytes8::load(s.data() + i)) == 0) {
        i += 8;
        continue;
      }
      ++i;
      continue;
    }
    int len = 0;
    char32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else
      return i;
    if (i + static_cast<size_t>(len) > n) return i;
    for (int k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return i;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += static_cast<size_t>(len);
  }
  return std::nullopt;
}

char32_t next_code_point(std::string_view s, size_t& i) {
  const auto c = static_cast<unsigned char>(s[i]);
  int len = 1;
  char32_t cp = c;
  if (c >= 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else if (c >= 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xC0) {
    len = 2;
    cp = c & 0x1F;
  }
  for (int k = 1; k < len && i + static_cast<size_t>(k) < s.size(); ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<size_t>(k)]) & 0x3F);
  i += static_cast<size_t>(len);
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int code_point_column(std::string_view s, size_t byte_offset) {
  int col = 0;
  for (size_t i = 0; i < byte_offset && i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++col;
  return col;
}

std::string fold(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {  // ASCII, most of every question and word: no table lookup
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      ++i;
      continue;
    }
    auto cp = static_cast<utf8proc_int32_t>(next_code_point(s, i));
    if (utf8proc_get_property(cp)->decomp_type == UTF8PROC_DECOMP_TYPE_WIDE) {
      utf8proc_int32_t narrow[4];
      int last_boundclass = 0;
      if (utf8proc_decompose_char(cp, narrow, 4, static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT), &last_boundclass) ==
          1)
        cp = narrow[0];
    }
    append_utf8(out, static_cast<char32_t>(utf8proc_tolower(cp)));
  }
  return out;
}

namespace {
std::string normalize(std::string_view s, utf8proc_option_t options) {
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()),
                                          &mapped, static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  if (n < 0) return std::string(s);  // not valid UTF-8: compared as written
  std::string out(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
  std::free(mapped);
  return out;
}
}  // namespace

std::string nfkc(std::string_view s) { return normalize(s, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_COMPAT)); }

std::string nfkc_casefold(std::string_view s) {
  return normalize(s, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD | UTF8PROC_IGNORE));
}

bool is_white_space(char32_t cp) {
  if (cp == 0x85 || (cp >= 0x09 && cp <= 0x0D)) return true;
  if (cp < 0x80) return cp == 0x20;  // the one ASCII character of Zs, Zl or Zp (tests/test_base.cpp)
  const utf8proc_category_t c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

bool is_alnum(char32_t cp) {
  const utf8proc_category_t c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) || c == UTF8PROC_CATEGORY_ND;
}

bool is_mark(char32_t cp) {
  const utf8proc_category_t c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_MC;
}

bool is_invisible(char32_t cp) {
  const auto c = static_cast<utf8proc_int32_t>(cp);
  const utf8proc_category_t cat = utf8proc_category(c);
  return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF || utf8proc_get_property(c)->ignorable;
}

static bool is_space_byte(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string normalize_space(std::string_view s) {
  std::string out;
  bool pending = false;
  for (char c : s) {
    if (is_space_byte(c)) {
      pending = !out.empty();
      continue;
    }
    if (pending) {
      out += ' ';
      pending = false;
    }
    out += c;
  }
  return out;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space_byte(s[b])) ++b;
  while (e > b && is_space_byte(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view x) { return s.size() >= x.size() && s.substr(s.size() - x.size()) == x; }

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

namespace {

BreakClass break_class_of(char32_t cp) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PI:
      return BreakClass::Opening;
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
    case UTF8PROC_CATEGORY_LM:  // the prolonged sound and iteration marks (ー, 々) continue the word before
      return BreakClass::Closing;
    default:
      return BreakClass::Other;
  }
}

}  // namespace

// ASCII's widths and classes, asked of utf8proc once: wrapping a text
// answer asks for both at every character.
const AsciiProperties& ascii_properties() {
  static const AsciiProperties props = [] {
    AsciiProperties p;
    for (char32_t c = 0; c < 128; ++c) {
      p.width[c] = utf8proc_charwidth(static_cast<utf8proc_int32_t>(c));
      p.breaks[c] = break_class_of(c);
    }
    return p;
  }();
  return props;
}

int display_width(char32_t cp) { return cp < 128 ? ascii_properties().width[cp] : utf8proc_charwidth(static_cast<utf8proc_int32_t>(cp)); }

BreakClass break_class(char32_t cp) { return cp < 128 ? ascii_properties().breaks[cp] : break_class_of(cp); }

bool is_kana(char32_t cp) {
  return (cp >= 0x3040 && cp <= 0x30FF && cp != 0x30FB) || (cp >= 0x31F0 && cp <= 0x31FF) || (cp >= 0xFF66 && cp <= 0xFF9F);
}

bool is_han(char32_t cp) {
  return (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
         (cp >= 0x20000 && cp <= 0x2FFFF);
}

bool is_cjk(char32_t cp) {
  return (cp >= 0x2E80 && cp <= 0x9FFF) ||  // radicals, CJK punctuation, kana, unified ideographs
         (cp >= 0xF900 && cp <= 0xFAFF) ||  // compatibility ideographs
         (cp >= 0xFF00 && cp <= 0xFFEF) ||  // half/full-width forms
         (cp >= 0x20000 && cp <= 0x2FFFF);  // extension planes
}

std::optional<std::string> read_file(const std::string& path, std::uint64_t max_bytes) { return read_regular_file(path, max_bytes).bytes; }

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

size_t edit_distance(std::string_view a, std::string_view b, size_t max) {
  if (a.size() < b.size()) std::swap(a, b);  // the row runs over the shorter
  if (a.size() - b.size() > max) return max + 1;
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    size_t row_min = row[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
      row_min = std::min(row_min, row[j]);
    }
    if (row_min > max) return max + 1;  // every later row is at least as far
  }
  return std::min(row[b.size()], max + 1);
}

std::vector<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates, size_t n) {
  std::vector<std::pair<size_t, std::string_view>> best;  // sorted, at most n
  for (const auto& c : candidates) {
    const size_t limit = best.size() < n ? std::numeric_limits<size_t>::max() - 1 : best.back().first;
    const std::pair<size_t, std::string_view> key{edit_distance(word, c, limit), c};
    if (best.size() == n && !(key < best.back())) continue;
    if (std::find_if(best.begin(), best.end(), [&](const auto& b) { return b.second == key.second; }) != best.end()) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), key), key);
    if (best.size() > n) best.pop_back();
  }
  std::vector<std::string> out;
  for (const auto& b : best) out.emplace_back(b.second);
  return out;
}

std::string fill_placeholders(std::string_view text, const std::vector<std::pair<std::string, std::string>>& vars) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('{', i);
    if (open == std::string_view::npos) break;
    const size_t close = text.find('}', open + 1);
    if (close == std::string_view::npos) break;
    // The innermost "{": in "{{name}" the placeholder is the second.
    const size_t inner = text.rfind('{', close);
    out.append(text, i, inner - i);
    const std::string_view name = text.substr(inner + 1, close - inner - 1);
    const auto it = std::find_if(vars.begin(), vars.end(), [&](const auto& kv) { return kv.first == name; });
    if (it != vars.end())
      out += it->second;
    else
      out.append(text, inner, close + 1 - inner);
    i = close + 1;
  }
  out.append(text, i, std::string_view::npos);
  return out;
}

std::string one_decimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

size_t shared_prefix(std::string_view a, std::string_view b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

std::string upper_ascii(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = ch == '_' ? ' ' : (ch >= 'a' && ch <= 'z') ? static_cast<char>(ch - 'a' + 'A') : ch;
  return out;
}

}  // namespace kb
