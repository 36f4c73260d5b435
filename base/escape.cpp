// Control characters: finding and escaping them (see escape.hpp).
#include "base/escape.hpp"

#include <cstdio>

namespace kb {

namespace {

// Decodes one UTF-8 sequence at s[i]: its code point and length, or a
// length of 0 when the bytes there are not valid UTF-8.
struct Decoded {
  char32_t cp = 0;
  std::size_t len = 0;
};

Decoded decode(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return {b0, 1};
  std::size_t n = 0;
  char32_t cp = 0, min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2;
    cp = b0 & 0x1F;
    min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3;
    cp = b0 & 0x0F;
    min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4;
    cp = b0 & 0x07;
    min = 0x10000;
  } else {
    return {};
  }
  if (i + n > s.size()) return {};
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, n};
}

void append_escape(std::string& out, const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, format, value);
  out += buf;
}

// Does the text need escaping at all (the common case is no)?
bool clean(std::string_view s, EscapeNewlines nl) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      if ((b < 0x20 && ((b != '\n' && b != '\t') || nl == EscapeNewlines::Yes)) || b == 0x7F) return false;
      ++i;
      continue;
    }
    const Decoded d = decode(s, i);
    if (d.len == 0 || is_control(d.cp)) return false;
    i += d.len;
  }
  return true;
}

}  // namespace

bool is_control(char32_t cp) {
  if (cp < 0x20) return cp != '\t' && cp != '\n';
  if (cp == 0x7F) return true;
  if (cp >= 0x80 && cp <= 0x9F) return true;
  if (cp >= 0x202A && cp <= 0x202E) return true;
  return cp >= 0x2066 && cp <= 0x2069;
}

std::optional<std::size_t> find_control(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      if (b != '\r' && is_control(b)) return i;
      ++i;
      continue;
    }
    const Decoded d = decode(text, i);
    if (d.len == 0) {
      ++i;
      continue;
    }
    if (is_control(d.cp)) return i;
    i += d.len;
  }
  return std::nullopt;
}

std::string code_point_name(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

std::string escape_controls(std::string_view s, EscapeNewlines nl) {
  if (clean(s, nl)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 16);
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      if (nl == EscapeNewlines::Yes && (b == '\n' || b == '\t' || b == '\r'))
        out += b == '\n' ? "\\n" : b == '\t' ? "\\t" : "\\r";
      else if (is_control(b))
        append_escape(out, "\\x%02x", b);
      else
        out += static_cast<char>(b);
      ++i;
      continue;
    }
    const Decoded d = decode(s, i);
    if (d.len == 0) {
      append_escape(out, "\\x%02x", b);
      ++i;
      continue;
    }
    if (is_control(d.cp))
      append_escape(out, "\\u%04x", static_cast<unsigned>(d.cp));
    else
      out.append(s.substr(i, d.len));
    i += d.len;
  }
  return out;
}

std::string escape_controls_keeping(std::string_view s, const std::vector<std::string_view>& keep) {
  std::string out;
  out.reserve(s.size() + 16);
  std::size_t done = 0;
  for (std::size_t at = s.find('\x1b'); at != std::string_view::npos; at = s.find('\x1b', at)) {
    std::string_view kept;
    for (const auto& k : keep)
      if (s.substr(at, k.size()) == k) kept = k;
    if (kept.empty()) {
      ++at;
      continue;
    }
    out += escape_controls(s.substr(done, at - done));
    out.append(kept);
    at += kept.size();
    done = at;
  }
  out += escape_controls(s.substr(done));
  return out;
}

std::string escape_json_controls(std::string_view json) {
  if (clean(json, EscapeNewlines::No)) return std::string(json);
  std::string out;
  out.reserve(json.size() + 16);
  for (std::size_t i = 0; i < json.size();) {
    const auto b = static_cast<unsigned char>(json[i]);
    if (b < 0x80) {
      if (b == 0x7F)
        out += "\\u007f";  // DEL appears in strings only: the serializer escapes every other control
      else
        out += static_cast<char>(b);
      ++i;
      continue;
    }
    const Decoded d = decode(json, i);
    if (d.len == 0) {
      out += "\\ufffd";  // a serializer never writes invalid UTF-8; if one did, it is replaced, not passed on
      ++i;
      continue;
    }
    if (is_control(d.cp))
      append_escape(out, "\\u%04x", static_cast<unsigned>(d.cp));
    else
      out.append(json.substr(i, d.len));
    i += d.len;
  }
  return out;
}

std::string first_code_points(std::string_view s, std::size_t n) {
  std::size_t i = 0, count = 0;
  while (i < s.size() && count < n) {
    const Decoded d = decode(s, i);
    i += d.len == 0 ? 1 : d.len;
    ++count;
  }
  return i >= s.size() ? std::string(s) : std::string(s.substr(0, i)) + "…";
}

}  // namespace kb
