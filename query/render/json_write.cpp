// Compact JSON as nlohmann's dump() writes it (see json_write.hpp).
#include "query/render/json_write.hpp"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "base/bytes8.hpp"
#include "base/text.hpp"

namespace kbq {

namespace {

// Whether none of 8 bytes needs a look: none is a control character, '"'
// or '\\', and, until the string is known to be UTF-8 (`utf8_checked`),
// none is the start or part of a multi-byte sequence.
bool plain8(const char* p, bool utf8_checked) {
  const std::uint64_t x = kb::bytes8::load(p);
  const std::uint64_t multibyte = utf8_checked ? 0 : kb::bytes8::high(x);
  return (multibyte | kb::bytes8::below(x, 0x20) | kb::bytes8::has(x, '"') | kb::bytes8::has(x, '\\')) == 0;
}

void write_string(std::string_view s, std::string& out) {
  const size_t start = out.size();
  out += '"';
  bool checked = false;  // the bytes from the first non-ASCII one on are valid UTF-8
  size_t run = 0;        // the first byte not copied yet
  size_t i = 0;
  while (i < s.size()) {
    if (i + 8 <= s.size() && plain8(s.data() + i, checked)) {
      i += 8;
      continue;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80 && !checked) {
      if (kb::find_invalid_utf8(s.substr(i))) {
        out.resize(start);
        out += nlohmann::json(std::string(s)).dump();  // nlohmann's own refusal, as dump() gives it
        return;
      }
      checked = true;
    }
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out.append(s.data() + run, i - run);
    run = ++i;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        char u[8];
        std::snprintf(u, sizeof u, "\\u%04x", static_cast<unsigned>(c));
        out += u;
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

template <typename T>
void write_integer(T v, std::string& out) {
  char digits[24];
  const auto r = std::to_chars(std::begin(digits), std::end(digits), v);
  out.append(digits, static_cast<size_t>(r.ptr - digits));
}

}  // namespace

void write_compact(const nlohmann::json& j, std::string& out) {
  using V = nlohmann::json::value_t;
  switch (j.type()) {
    case V::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : j.get_ref<const nlohmann::json::object_t&>()) {
        if (!first) out += ',';
        first = false;
        write_string(key, out);
        out += ':';
        write_compact(value, out);
      }
      out += '}';
      return;
    }
    case V::array: {
      out += '[';
      bool first = true;
      for (const auto& value : j.get_ref<const nlohmann::json::array_t&>()) {
        if (!first) out += ',';
        first = false;
        write_compact(value, out);
      }
      out += ']';
      return;
    }
    case V::string:
      write_string(j.get_ref<const std::string&>(), out);
      return;
    case V::boolean:
      out += j.get<bool>() ? "true" : "false";
      return;
    case V::number_integer:
      write_integer(j.get<nlohmann::json::number_integer_t>(), out);
      return;
    case V::number_unsigned:
      write_integer(j.get<nlohmann::json::number_unsigned_t>(), out);
      return;
    case V::null:
      out += "null";
      return;
    case V::number_float:  // nlohmann's shortest round-trip form ("0.5", "1e+20", "null" when not finite)
    case V::binary:
    case V::discarded:
      out += j.dump();
      return;
  }
  out += j.dump();
}

std::string compact(const nlohmann::json& j) {
  std::string out;
  out.reserve(1 << 15);  // a whole --batch record is about 23 KB: grown rarely, not doubled from nothing
  write_compact(j, out);
  return out;
}

}  // namespace kbq
