// Compact JSON as nlohmann's dump() writes it (see json_write.hpp).
#include "query/render/json_write.hpp"

#include <charconv>
#include <cstdint>
#include <string_view>

#include "base/escape.hpp"

namespace kbq {

namespace {

void write_string(std::string_view s, std::string& out) {
  if (!kb::append_json_string(s, out)) out += nlohmann::json(std::string(s)).dump();  // nlohmann's own refusal, as dump() gives it
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
