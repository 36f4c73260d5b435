// Golden answers: every tests/golden/**/*.test file is one kbq run, in a
// self-describing text format:
//
//   # what this example shows (and the issue it comes from)
//   arg: <one argv element per line>
//   exit: <expected exit code>
//   --- stdout
//   <expected standard output, exactly>
//   --- stderr
//   <expected standard error, exactly>   (optional section)
//
// `make golden` (KBQ_UPDATE_GOLDEN=1) rewrites the expected sections from
// the current output; review the diff before committing.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "cases.hpp"
#include "process.hpp"

namespace fs = std::filesystem;

namespace {

struct GoldenCase {
  std::string header;  // comment and arg/exit lines, as written
  std::vector<std::string> args;
  int exit_code = 0;
  std::string out, err;
  bool has_err = false;
};

GoldenCase parse_case(const std::string& text) {
  GoldenCase g;
  size_t pos = 0;
  std::string* section = nullptr;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line == "--- stdout") {
      section = &g.out;
      continue;
    }
    if (line == "--- stderr") {
      section = &g.err;
      g.has_err = true;
      continue;
    }
    if (section) {
      *section += line + "\n";
      continue;
    }
    g.header += line + "\n";
    if (line.rfind("arg: ", 0) == 0)
      g.args.push_back(line.substr(5));
    else if (line.rfind("exit: ", 0) == 0)
      g.exit_code = std::atoi(line.c_str() + 6);
  }
  return g;
}

std::string format_case(const GoldenCase& g, const kbtest::RunResult& r) {
  std::string out = g.header + "--- stdout\n" + r.out;
  if (!r.out.empty() && r.out.back() != '\n') out += "\n";
  if (!r.err.empty()) out += "--- stderr\n" + r.err;
  return out;
}

const fs::path kGoldenDir = fs::path(KB_SOURCE_DIR) / "tests" / "golden";

// One golden file: run kbq with its arguments and compare (or, under
// `make golden`, rewrite its expected sections).
void run_golden(const fs::path& f) {
  auto g = parse_case(kbtest::read_file(f.string()));
  REQUIRE(!g.args.empty());
  const auto r = kbtest::run(KBQ_PATH, g.args);
  if (std::getenv("KBQ_UPDATE_GOLDEN") != nullptr) {
    kbtest::write_file(f.string(), format_case(g, r));
    return;
  }
  CHECK(r.exit_code == g.exit_code);
  CHECK(r.out == g.out);
  CHECK(r.err == (g.has_err ? g.err : std::string{}));
}

}  // namespace

KB_REGISTER_CASES(register_golden_cases) {
  for (const auto& f : kbtest::files_in(kGoldenDir, ".test"))
    kbtest::add_case("golden: " + fs::relative(f, kGoldenDir).generic_string(), "[golden]", [f] { run_golden(f); });
}

TEST_CASE("golden: the folder holds the answers of the documented examples", "[golden]") {
  CHECK(kbtest::files_in(kGoldenDir, ".test").size() >= 10);
}
