// Data-driven test cases registered one by one: each file of a folder (or
// each row of a table) becomes its own Catch2 test case, so CTest lists,
// runs and times every case by name (catch_discover_tests) instead of
// hiding them in one test's loop.
//
//   KB_REGISTER_CASES(register_golden) {
//     for (const auto& f : kbtest::files_in(dir, ".test"))
//       kbtest::add_case("golden: " + name, "[golden]", [f] { run_golden(f); });
//   }
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace kbtest {

// Registers a test case named `name` with `tags` ("[a][b]") that runs `body`.
// Call it while static objects are built (KB_REGISTER_CASES), before the
// Catch2 session starts.
void add_case(const std::string& name, const std::string& tags, std::function<void()> body);

// The regular files under `dir` (recursively) whose name ends with `ext`, sorted.
std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir, const std::string& ext);

// The bytes a case file writes in its BYTES notation: quoted pieces, each
// optionally repeated (`"abc"*3 "\x00"`), with the escapes \n \t \r \0
// \\ \" and \xHH (two hex digits). Anything else (a short or non-hex \x, an
// unknown escape, a dangling backslash, a missing quote or count) throws
// std::runtime_error naming what is wrong: a case file with a typo fails,
// it never decodes to other bytes. The one decoder of tests/bad-queries and
// tests/fixtures/hostile.
std::string decode_bytes(const std::string& spec);

}  // namespace kbtest

#define KB_CASES_CONCAT2(a, b) a##b
#define KB_CASES_CONCAT(a, b) KB_CASES_CONCAT2(a, b)
// Runs the block that follows once at start-up, to add cases.
#define KB_REGISTER_CASES(fn)                                 \
  static void fn();                                           \
  namespace {                                                 \
  const bool KB_CASES_CONCAT(registered_, fn) = (fn(), true); \
  }                                                           \
  static void fn()
