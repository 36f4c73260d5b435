// UTF-8 and text helpers (see text.hpp).
#include "base/text.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <vector>

#include "base/files.hpp"

namespace kb {

std::optional<size_t> find_invalid_utf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
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
    char32_t cp = next_code_point(s, i);
    if (cp >= 0xFF01 && cp <= 0xFF5E)
      cp = cp - 0xFF01 + 0x21;  // full-width ASCII
    else if (cp == 0x3000)
      cp = ' ';  // ideographic space
    if (cp >= 'A' && cp <= 'Z')
      cp = cp - 'A' + 'a';
    else if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7))
      cp += 0x20;  // Latin-1 capitals
    else if (cp >= 0x100 && cp <= 0x17F && (cp % 2 == 0) && cp != 0x130 && cp != 0x138)
      cp += 1;
    append_utf8(out, cp);
  }
  return out;
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

bool is_cjk(char32_t cp) {
  return (cp >= 0x2E80 && cp <= 0x9FFF) ||  // radicals, CJK punctuation, kana, unified ideographs
         (cp >= 0xF900 && cp <= 0xFAFF) ||  // compatibility ideographs
         (cp >= 0xFF00 && cp <= 0xFFEF) ||  // half/full-width forms
         (cp >= 0x20000 && cp <= 0x2FFFF);  // extension planes
}

// --- SHA-256 (FIPS 180-4) ---------------------------------------------------
namespace {
constexpr std::array<uint32_t, 64> K = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
    0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
    0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
    0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
    0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
    0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
}  // namespace

std::string sha256_hex(std::string_view bytes) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string msg(bytes);
  const uint64_t bit_len = static_cast<uint64_t>(bytes.size()) * 8;
  msg += static_cast<char>(0x80);
  while (msg.size() % 64 != 56) msg += '\0';
  for (int i = 7; i >= 0; --i) msg += static_cast<char>((bit_len >> (i * 8)) & 0xFF);
  for (size_t off = 0; off < msg.size(); off += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      const auto* p = reinterpret_cast<const unsigned char*>(msg.data() + off + static_cast<size_t>(i) * 4);
      w[i] = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
    }
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const uint32_t ch = (e & f) ^ (~e & g);
      const uint32_t t1 = hh + S1 + ch + K[static_cast<size_t>(i)] + w[i];
      const uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const uint32_t mj = (a & b) ^ (a & c) ^ (b & c);
      const uint32_t t2 = S0 + mj;
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint32_t v : h)
    for (int i = 7; i >= 0; --i) out += hex[(v >> (i * 4)) & 0xF];
  return out;
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

std::string upper_ascii(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = ch == '_' ? ' ' : (ch >= 'a' && ch <= 'z') ? static_cast<char>(ch - 'a' + 'A') : ch;
  return out;
}

}  // namespace kb
