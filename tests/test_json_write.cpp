// A --batch record is written by query/render/json_write.hpp, not by
// nlohmann's dump(): both must give the same bytes for every value, and
// refuse the same strings. Table-driven, then strings drawn at random (a
// fixed seed) from the bytes that matter: controls, '"', '\\', every UTF-8
// length, invalid sequences, around the 8-byte steps the writer reads in.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "query/render/json_write.hpp"

namespace {

// compact(j) and j.dump(): the same text, or both refuse.
void same(const nlohmann::json& j) {
  std::string want, got;
  bool want_throws = false, got_throws = false;
  try {
    want = j.dump();
  } catch (const nlohmann::json::exception&) {
    want_throws = true;
  }
  try {
    got = kbq::compact(j);
  } catch (const nlohmann::json::exception&) {
    got_throws = true;
  }
  CHECK(got_throws == want_throws);
  CHECK(got == want);
}

}  // namespace

TEST_CASE("json write: every kind of value as nlohmann's dump() writes it", "[render][json]") {
  using nlohmann::json;
  const std::vector<json> values = {
      nullptr,
      true,
      false,
      0,
      -1,
      42,
      std::numeric_limits<std::int64_t>::min(),
      std::numeric_limits<std::int64_t>::max(),
      std::numeric_limits<std::uint64_t>::max(),
      0.5,
      -0.0,
      1e20,
      1.0 / 3,
      3.0,
      std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::infinity(),
      "",
      "plain",
      "\"quoted\" and \\backslash\\",
      "tab\there\nnewline\rreturn\bback\fform",
      std::string("nul\0byte", 8),
      "\x01\x1f\x7f",
      "×·→ 日本語 — 😀",
      "\xff",
      "ok then \xc3\x28 broken",
      "\xed\xa0\x80 surrogate",
      "\xf4\x90\x80\x80 past U+10FFFF",
      "overlong \xc0\xaf",
      "cut short \xe6\x97",
      json::array(),
      json::object(),
      json::array({1, "two", nullptr, json::object({{"k", "v"}})}),
      json::object({{"b", 1}, {"a", json::array({"x\"y", 2.5})}, {"key \"q\"\n", json::object()}}),
  };
  for (const auto& v : values) {
    INFO(v.dump(-1, ' ', true, json::error_handler_t::replace));
    same(v);
    same(json::array({v, v}));
    same(json::object({{"k", v}}));
  }
}

TEST_CASE("json write: random strings over the bytes that need care, at every offset", "[render][json]") {
  // Pieces, each a byte or a sequence: ASCII, controls, quote, backslash,
  // 2-, 3- and 4-byte UTF-8, and bytes that are not UTF-8 where they stand.
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           " ",
                                           "/",
                                           "\"",
                                           "\\",
                                           "\n",
                                           "\t",
                                           "\x01",
                                           "\x1f",
                                           "\x7f",
                                           "\xc3\xa9",
                                           "\xe6\x97\xa5",
                                           "\xf0\x9f\x98\x80",
                                           "\x80",
                                           "\xc3",
                                           "\xe6\x97",
                                           "\xed\xa0\x80",
                                           "\xc0\x80",
                                           std::string(1, '\0'),
                                           "0123456"};
  std::mt19937 rng(20261206);
  std::uniform_int_distribution<size_t> piece(0, pieces.size() - 1), length(0, 24);
  std::uniform_int_distribution<int> invalid(0, 9);
  size_t refused = 0, written = 0;
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    const size_t count = length(rng);
    const bool may_break = invalid(rng) == 0;  // most strings are valid UTF-8, as answers are
    for (size_t k = 0; k < count; ++k) {
      std::string p = pieces[piece(rng)];
      while (!may_break && (p == "\x80" || p == "\xc3" || p == "\xe6\x97" || p == "\xed\xa0\x80" || p == "\xc0\x80"))
        p = pieces[piece(rng)];
      s += p;
    }
    INFO(nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
    same(s);
    try {
      (void)nlohmann::json(s).dump();
      ++written;
    } catch (const nlohmann::json::exception&) {
      ++refused;
    }
  }
  CHECK(written > 15000);
  CHECK(refused > 500);
}
