// Tests of the notation the data-driven case files share (tests/cases.hpp):
// the BYTES notation of tests/bad-queries and tests/fixtures/hostile.
#include <catch2/catch.hpp>

#include <string>

#include "cases.hpp"

using Catch::Matchers::Contains;

TEST_CASE("case files: the BYTES notation decodes pieces, escapes and counts", "[cases]") {
  CHECK(kbtest::decode_bytes(R"("abc")") == "abc");
  CHECK(kbtest::decode_bytes(R"(  "ab"*3 "c")") == "abababc");
  CHECK(kbtest::decode_bytes(R"("\n\t\r\\\"")") == "\n\t\r\\\"");
  CHECK(kbtest::decode_bytes(R"("\0")") == std::string(1, '\0'));
  CHECK(kbtest::decode_bytes(R"("\x1b[0m\xFF\xc3\xa9")") == "\x1b[0m\xFF\xc3\xa9");
  CHECK(kbtest::decode_bytes(R"("x"*0)").empty());
  CHECK(kbtest::decode_bytes("").empty());
}

TEST_CASE("case files: a short, non-hex or unknown escape in the BYTES notation is an error, not other bytes", "[cases]") {
  // A \x at the very end of the spec: the decoder must not read past it.
  CHECK_THROWS_WITH(kbtest::decode_bytes(R"("\x)"), Contains("short \\x escape"));
  CHECK_THROWS_WITH(kbtest::decode_bytes(R"("\x4)"), Contains("short \\x escape"));
  CHECK_THROWS_WITH(kbtest::decode_bytes(R"("\x4")"), Contains("'\"' is not a hex digit"));
  CHECK_THROWS_WITH(kbtest::decode_bytes(R"("\xg0")"), Contains("'g' is not a hex digit"));
  CHECK_THROWS_WITH(kbtest::decode_bytes(R"("\e[0m")"), Contains("unknown escape \\e"));
  CHECK_THROWS_WITH(kbtest::decode_bytes(R"("abc\)"), Contains("dangling backslash"));
  CHECK_THROWS_WITH(kbtest::decode_bytes(R"("abc)"), Contains("unterminated piece"));
  CHECK_THROWS_WITH(kbtest::decode_bytes(R"(abc)"), Contains("expected '\"'"));
  CHECK_THROWS_WITH(kbtest::decode_bytes(R"("a"*)"), Contains("without a count"));
  CHECK_THROWS_WITH(kbtest::decode_bytes(R"("a"*-2)"), Contains("negative count"));
}
