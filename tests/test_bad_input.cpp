// Bad-input tests of `kbc build`, run as a process (KBC_PATH) on the cases
// of tests/fixtures/bad/. Each case is a folder: a minimal sources tree (a
// skill/ or references/ markdown file or two, compiled against the real
// kb-sources/data) and an expected.txt listing the exact diagnostic lines
// (`file:line:col: error: message`) the build must print, one per line;
// blank lines and lines starting with `#` describe the case and are
// ignored; `<sources>` stands for the sources folder given to kbc.
//
// For every case: exit code 2, every expected line on stderr, exactly as
// many error lines as expected (no cascades), and a KB that existed at the
// output path before is byte-identical afterwards, with nothing beside it.
// Adding a case is adding a folder. Byte-level cases too small for a
// fixture (lone carriage returns) call the markdown front end directly.
#include <catch2/catch.hpp>

#include "cases.hpp"
#include "process.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "base/process.hpp"
#include "base/text.hpp"
#include "compiler/generate/perf_fit.hpp"
#include "compiler/ingest/ingest.hpp"
#include "compiler/pipeline.hpp"

#ifndef KB_SOURCE_DIR
#error "KB_SOURCE_DIR must name the repository root"
#endif
#ifndef KBC_PATH
#error "KBC_PATH must name the kbc executable"
#endif

namespace {

namespace fs = std::filesystem;

const std::string kRoot = KB_SOURCE_DIR;
const std::string kData = kRoot + "/kb-sources/data";
const std::string kBad = kRoot + "/tests/fixtures/bad";
const std::string kGood = kRoot + "/tests/fixtures/good/minimal";

// Each test's scratch folder (tests/process.hpp), named after this file.
struct TempDir : kbtest::TempDir {
  TempDir() : kbtest::TempDir("kbtests-bad") {}
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (auto& l : kb::split(text, '\n')) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    out.push_back(l);
  }
  return out;
}

struct RunResult {
  int exit_code = -1;  // exit status, or -signal
  std::string err;     // stderr
};

// Runs argv[0] with stdout discarded and stderr captured.
RunResult run(const std::vector<std::string>& argv) {
  kb::RunOptions o;
  o.out = kb::Stream::Null;
  o.err = kb::Stream::Pipe;
  const kb::RunResult k = kb::run(argv, o);
  RunResult r;
  r.exit_code = k.status.signal ? -k.status.signal : k.status.code;
  r.err = k.err;
  return r;
}

// A valid KB (from the good fixture), the "previous KB" of every case.
const std::string& previous_kb_bytes() {
  static const std::string bytes = [] {
    TempDir tmp;
    kb::CompileOptions opts;
    opts.sources = kGood;
    opts.data = kData;
    kb::Diagnostics diags;
    const std::string path = tmp / "kb.sqlite";
    if (!kb::build_kb(opts, path, diags, kb::store_perf_derivation)) throw std::runtime_error("the good fixture does not build");
    return slurp(path);
  }();
  return bytes;
}

std::vector<std::string> case_names() {
  std::vector<std::string> out;
  std::error_code ec;  // runs at start-up (case registration): never throws
  for (auto it = fs::directory_iterator(kBad, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->is_directory()) out.push_back(it->path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The expected diagnostics of a case, with <sources> substituted.
std::vector<std::string> expected_lines(const std::string& case_dir, const std::string& sources) {
  std::vector<std::string> out;
  for (auto line : lines_of(slurp(case_dir + "/expected.txt"))) {
    if (kb::trim(line).empty() || line[0] == '#') continue;
    for (size_t at; (at = line.find("<sources>")) != std::string::npos;) line.replace(at, 9, sources);
    out.push_back(line);
  }
  return out;
}

// Copies a case's sources (everything but expected.txt) into `to`.
void copy_sources(const std::string& case_dir, const std::string& to) {
  fs::create_directories(to);
  for (const auto& e : fs::recursive_directory_iterator(case_dir)) {
    const fs::path rel = fs::relative(e.path(), case_dir);
    if (rel == "expected.txt") continue;
    if (e.is_directory())
      fs::create_directories(fs::path(to) / rel);
    else if (e.is_regular_file())
      fs::copy_file(e.path(), fs::path(to) / rel);
  }
}

}  // namespace

TEST_CASE("markdown: a carriage return without a line feed is an error where it is", "[bad_input]") {
  // cmark-gfm ends a line at a lone CR, kbc's line index does not: the
  // first lone CR is reported at its line (counted by LF) and column.
  const std::string head = "---\nlang: en\nrevision: 1\n---\n\n# Title\n";  // 6 lines
  struct Case {
    std::string body;  // after `head`
    std::string want;  // the diagnostic's first line, or empty: no error
  };
  for (const auto& c : std::vector<Case>{
           {"\nText\r\nmore\r\n", ""},                                                             // CRLF only
           {"\nText\rmore\n", "in/cr.md:8:5: error: carriage return without a line feed"},         // mid-line
           {"\nText\r\r\n", "in/cr.md:8:5: error: carriage return without a line feed"},           // CR before CRLF
           {"\n\xC3\xA9t\xC3\xA9\r", "in/cr.md:8:4: error: carriage return without a line feed"},  // at the end
       }) {
    INFO("body: " << c.body);
    kb::Diagnostics diags;
    const auto doc = kb::ingest_markdown(kb::SourceFile{"in/cr.md", head + c.body}, diags);
    if (c.want.empty()) {
      CHECK(doc);
      CHECK_FALSE(diags.has_errors());
    } else {
      CHECK_FALSE(doc);
      REQUIRE(diags.error_count() == 1);
      CHECK(kb::split(diags.all()[0].render(), '\n')[0] == c.want);
    }
  }
  // In the front matter too (yaml-cpp would read it as a line end).
  kb::Diagnostics diags;
  CHECK_FALSE(kb::ingest_markdown(kb::SourceFile{"in/cr.md", "---\nlang: en\rrevision: 1\n---\n"}, diags));
  REQUIRE(diags.error_count() == 1);
  CHECK(diags.all()[0].span.line == 2);
  CHECK(diags.all()[0].span.col == 9);
}

TEST_CASE("every required bad-input case has a fixture", "[bad_input]") {
  const auto names = case_names();
  const std::set<std::string> have(names.begin(), names.end());
  for (const char* required : {"missing_front_matter", "malformed_front_matter", "unknown_lang", "missing_revision",
                               "revision_not_a_number", "duplicate_lang_revision", "ragged_table_row", "tp_not_a_number",
                               "same_revision_conflict", "invalid_utf8", "unterminated_code_fence", "empty_sources", "two_bad_documents"}) {
    INFO(required);
    CHECK(have.count(required));
    CHECK(fs::exists(kBad + "/" + required + "/expected.txt"));
  }
}

TEST_CASE("the good fixture builds (the bad cases differ from it in one defect)", "[bad_input]") {
  TempDir tmp;
  const auto r = run({KBC_PATH, "build", "--sources", kGood, "--data", kData, "-o", tmp / "kb.sqlite"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("error") == std::string::npos);
  CHECK(fs::file_size(tmp / "kb.sqlite") > 0);
}

// A value of data/planner.tsv a reader refuses (a number that is not one,
// a script the query parser does not tell apart) is an error at its cell
// there, not at the output file with a hint about its folder; the previous
// KB is kept.
TEST_CASE("kbc build: a bad planner value is an error at its line of data/planner.tsv", "[bad_input]") {
  const std::string& before = previous_kb_bytes();
  for (const auto& [key, value, says] :
       {std::tuple{std::string("own_layout_tolerance"), std::string("abc"), std::string("'abc' is not a number")},
        std::tuple{std::string("script_languages"), std::string("kana:ja,hangul:ko"),
                   std::string("'hangul:ko' is not script:language with a script the parser tells apart (kana, han)")}}) {
    TempDir tmp;
    const std::string data = tmp / "data";
    fs::copy(kData, data, fs::copy_options::recursive);
    std::string planner = slurp(data + "/planner.tsv");
    const size_t at = planner.find("\n" + key + "\t");
    REQUIRE(at != std::string::npos);
    const size_t cell = at + 1 + key.size() + 1, end = planner.find('\t', cell);
    planner.replace(cell, end - cell, value);
    {
      std::ofstream f(data + "/planner.tsv", std::ios::binary);
      f << planner;
    }
    const int line = static_cast<int>(std::count(planner.begin(), planner.begin() + static_cast<std::ptrdiff_t>(at) + 1, '\n')) + 1;
    const std::string out = tmp / "kb.sqlite";
    {
      std::ofstream f(out, std::ios::binary);
      f << before;
    }
    const auto r = run({KBC_PATH, "build", "--sources", kGood, "--data", data, "-o", out});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(data + "/planner.tsv:" + std::to_string(line) + ":" + std::to_string(key.size() + 2) +
                     ": error: kb: planner.value of " + key + ": " + says + "\n  hint: fix the value") != std::string::npos);
    CHECK(slurp(out) == before);
  }
}

// The language the skill is written in is data (planner.tsv base_language):
// every fallback to it, in kbc and kbq, reads that row, so a data folder
// without it is an error, not a silent "en".
TEST_CASE("kbc build: a data folder without base_language is an error", "[bad_input]") {
  TempDir tmp;
  const std::string data = tmp / "data";
  fs::copy(kData, data, fs::copy_options::recursive);
  std::string planner = slurp(data + "/planner.tsv");
  const size_t at = planner.find("\nbase_language\t");
  REQUIRE(at != std::string::npos);
  planner.erase(at, planner.find('\n', at + 1) - at);
  {
    std::ofstream f(data + "/planner.tsv", std::ios::binary);
    f << planner;
  }
  const auto r = run({KBC_PATH, "build", "--sources", kGood, "--data", data, "-o", tmp / "kb.sqlite"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(data + "/planner.tsv: error: no base_language row\n  hint: add one") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp / "kb.sqlite"));
}

// One bad case: kbc build exits 2 with exactly the expected diagnostics
// and leaves the previous KB as it was, with nothing beside it.
void run_bad_case(const std::string& name) {
  const std::string& before = previous_kb_bytes();
  REQUIRE(before.size() > 0);
  const std::string case_dir = kBad + "/" + name;
  TempDir tmp;
  const std::string sources = tmp / "sources";
  copy_sources(case_dir, sources);
  const auto expected = expected_lines(case_dir, sources);
  REQUIRE_FALSE(expected.empty());

  const std::string out_dir = tmp / "out";
  fs::create_directories(out_dir);
  const std::string out = out_dir + "/kb.sqlite";
  {
    std::ofstream f(out, std::ios::binary);
    f << before;
  }
  const auto r = run({KBC_PATH, "build", "--sources", sources, "--data", kData, "-o", out});
  INFO("stderr:\n" << r.err);
  CHECK(r.exit_code == 2);
  const auto got = lines_of(r.err);
  for (const auto& want : expected) {
    INFO("expected line: " << want);
    CHECK(std::find(got.begin(), got.end(), want) != got.end());
  }
  const auto errors = std::count_if(got.begin(), got.end(), [](const std::string& l) { return l.find(": error: ") != std::string::npos; });
  CHECK(static_cast<size_t>(errors) == expected.size());
  CHECK(slurp(out) == before);
  std::vector<std::string> beside;
  for (const auto& e : fs::directory_iterator(out_dir)) beside.push_back(e.path().filename().string());
  CHECK(beside == std::vector<std::string>{"kb.sqlite"});
}

KB_REGISTER_CASES(register_bad_input_cases) {
  for (const auto& name : case_names())
    kbtest::add_case("kbc build rejects bad sources: " + name, "[bad_input]", [name] { run_bad_case(name); });
}
