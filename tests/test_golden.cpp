// Golden answers: every tests/golden/**/*.test file is one kbq run, in a
// self-describing text format:
//
//   # what this example shows (checked against the output, see below)
//   arg: <one argv element per line>
//   exit: <expected exit code>
//   --- stdout
//   <expected standard output, exactly>
//   --- stderr
//   <expected standard error, exactly>   (optional section)
//
// `make golden` (KBQ_UPDATE_GOLDEN=1) rewrites the exit code and the
// expected sections from the current output; review the diff before
// committing. The `#` lines are a person's words, so they are checked
// against the output, in either mode: every recipe name (`*_config`) they
// mention is in stdout, every parallel size ("TP 2", "DP 16") and GPU count
// ("16 GPUs") they state is the answer's ("TP 2", "16 × " in text; "tp": 2,
// "gpus": 16 in JSON), and an "exit N" is the exit code. A header that
// contradicts its output fails the case, under `make golden` too.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

#include "cases.hpp"
#include "process.hpp"

namespace fs = std::filesystem;

namespace {

struct GoldenCase {
  std::vector<std::string> comments;  // the `#` lines, as written
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
    if (line.rfind("arg: ", 0) == 0)
      g.args.push_back(line.substr(5));
    else if (line.rfind("exit: ", 0) == 0)
      g.exit_code = std::atoi(line.c_str() + 6);
    else if (line.rfind('#', 0) == 0)
      g.comments.push_back(line);
    else
      FAIL("golden: a header line that is not `# ...`, `arg: ...` or `exit: ...`: " << line);
  }
  return g;
}

std::string format_case(const GoldenCase& g, const kbtest::RunResult& r) {
  std::string out;
  for (const auto& c : g.comments) out += c + "\n";
  for (const auto& a : g.args) out += "arg: " + a + "\n";
  out += "exit: " + std::to_string(r.exit_code) + "\n";
  out += "--- stdout\n" + r.out;
  if (!r.out.empty() && r.out.back() != '\n') out += "\n";
  if (!r.err.empty()) out += "--- stderr\n" + r.err;
  return out;
}

// What the `#` lines claim that the output does not show (empty: they hold).
std::vector<std::string> false_claims(const std::vector<std::string>& comments, const kbtest::RunResult& r) {
  const bool json = !r.out.empty() && r.out.front() == '{';
  const auto has = [&](const std::string& s) { return r.out.find(s) != std::string::npos; };
  // A number as a whole word: "2 × " is not in "32 × ", "TP 2" not in "TP 24".
  const auto has_word = [&](const std::string& s) { return std::regex_search(r.out, std::regex("(^|[^0-9A-Za-z_])" + s + "([^0-9]|$)")); };
  static const std::regex recipe(R"(\b[a-z0-9_]+_config\b)"), size(R"(\b(TP|PP|CP|EP|ETP|VP|DP|EDP) (\d+)\b)"), gpus(R"(\b(\d+) GPUs?\b)"),
      exit_code(R"(\bexit (\d+)\b)");
  std::vector<std::string> wrong;
  for (const auto& line : comments) {
    for (std::sregex_iterator m(line.begin(), line.end(), recipe), end; m != end; ++m)
      if (!has(m->str())) wrong.push_back("names " + m->str() + ", which the output does not");
    for (std::sregex_iterator m(line.begin(), line.end(), size), end; m != end; ++m) {
      std::string dim = (*m)[1];
      for (char& ch : dim) ch = static_cast<char>(ch - 'A' + 'a');
      if (!(json ? has("\"" + dim + "\": " + (*m)[2].str() + ",") : has_word(m->str())))
        wrong.push_back("says " + m->str() + ", which the output does not");
    }
    for (std::sregex_iterator m(line.begin(), line.end(), gpus), end; m != end; ++m)
      if (!(json ? has("\"gpus\": " + (*m)[1].str() + ",") : has_word((*m)[1].str() + " ×")))
        wrong.push_back("says " + m->str() + ", which the output does not");
    for (std::sregex_iterator m(line.begin(), line.end(), exit_code), end; m != end; ++m)
      if (std::stoi((*m)[1]) != r.exit_code) wrong.push_back("says " + m->str() + ", the run exits " + std::to_string(r.exit_code));
  }
  return wrong;
}

const fs::path kGoldenDir = fs::path(KB_SOURCE_DIR) / "tests" / "golden";

// One golden file: run kbq with its arguments and compare (or, under
// `make golden`, rewrite its exit code and expected sections).
void run_golden(const fs::path& f) {
  auto g = parse_case(kbtest::read_file(f.string()));
  REQUIRE(!g.args.empty());
  const auto r = kbtest::run(KBQ_PATH, g.args);
  for (const auto& w : false_claims(g.comments, r)) FAIL_CHECK("the header " << w << " (fix the # line)");
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

TEST_CASE("golden: every required answer has its golden file", "[golden]") {
  // Each golden pins a case (its `#` line says which), named here so that
  // deleting or renaming one fails instead of lowering a count.
  std::set<std::string> have;
  for (const auto& f : kbtest::files_in(kGoldenDir / "answers", ".test")) have.insert(f.stem().string());
  for (const char* required : {"benchmark-llama3-8b-h100",
                               "benchmark-llama3-8b-h100.json",
                               "check-llama3-70b-tp16",
                               "check-llama3-70b-tp16.json",
                               "error-empty",
                               "error-gpus-0",
                               "error-sft-peft",
                               "error-tp3-kv-heads",
                               "first-time",
                               "first-time.json",
                               "ja-qwen3-lora",
                               "llama3-8b-128k-pretrain",
                               "llama3-8b-128k-pretrain.json",
                               "markdown",
                               "peft-1-gpu",
                               "peft-qwen3-1-gpu",
                               "peft-qwen3-1-gpu.json",
                               "pitfalls-fr-fallback",
                               "pitfalls-zh",
                               "qwen3-moe-30b-sft-16-gpus",
                               "qwen3-moe-30b-sft-16-gpus.json",
                               "rules-fr",
                               "sft-8xh100-16k",
                               "sft-8xh100-16k.json",
                               "sft-dataset-mock",
                               "show-llama3-70b",
                               "sources",
                               "warning-typo",
                               "zh-lora-1-gpu"}) {
    INFO(required);
    CHECK(have.count(required) == 1);
  }
}
