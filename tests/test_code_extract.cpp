// Tests of the code front end, compiler/code/extract_mbridge.py (and its package
// mbridge_extractor/), run as a process (`python3 extract_mbridge.py ...`) on the fake Megatron Bridge checkouts of
// tests/fixtures/mbridge/<case>/checkout (written by make_fixtures.py there).
//
// Good cases: the extractor writes into a temp folder and every file must be
// byte-identical to <case>/expected/ (and no other file may appear). Bad-input
// cases: exit code 2, the first stderr line is exactly expected-error.txt, the
// second starts with `hint:`, and nothing is written. The last test checks the
// checked-in kb-sources/code/067f987df against the real snapshot; it prints a
// line containing `SKIPPED:` and returns when the snapshot (KB_MBRIDGE_SNAPSHOT,
// or ../shared/upstream/megatron-bridge/067f987df beside the repository) or the
// checked-in folder is missing.
#include <catch2/catch.hpp>

#include "base/text.hpp"
#include "base/tsv.hpp"
#include "process.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#ifndef KB_SOURCE_DIR
#error "KB_SOURCE_DIR must name the repository root"
#endif

namespace {

namespace fs = std::filesystem;

const std::string kRoot = KB_SOURCE_DIR;
const std::string kScript = kRoot + "/compiler/code/extract_mbridge.py";
const std::string kFields = kRoot + "/kb-sources/data/code-fields.tsv";
const std::string kFixtures = kRoot + "/tests/fixtures/mbridge";
// The commit and date every fixture's expected/snapshot.tsv was written with.
const std::string kFixtureCommit(40, '0');
const std::string kFixtureDate = "2026-01-01";

struct TempDir : kbtest::TempDir {
  TempDir() : kbtest::TempDir("kbtests-code") {}
};

// python3 -B extract_mbridge.py ARGS, found on PATH through /usr/bin/env (-B:
// no __pycache__ written into the source tree).
kbtest::RunResult extract(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"python3", "-B", kScript};
  argv.insert(argv.end(), args.begin(), args.end());
  return kbtest::run("/usr/bin/env", argv);
}

std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
  return out;
}

std::string first_line(const std::string& text, size_t n = 0) {
  size_t start = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string::npos) return {};
    start = nl + 1;
  }
  const size_t end = text.find('\n', start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// A good case: extract into a temp folder, compare every file with expected/.
void check_good_case(const std::string& name) {
  const std::string dir = kFixtures + "/" + name;
  TempDir tmp;
  const std::string out = tmp / "out";
  const auto r =
      extract({"--mbridge", dir + "/checkout", "--fields", kFields, "--commit", kFixtureCommit, "--date", kFixtureDate, "--out", out});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const auto expected = files_in(dir + "/expected");
  REQUIRE_FALSE(expected.empty());
  CHECK(files_in(out) == expected);
  for (const auto& f : expected) {
    INFO("file " << f << " (regenerate with tests/fixtures/mbridge/make_fixtures.py --expected, review the diff)");
    CHECK(kbtest::read_file(out + "/" + f) == kbtest::read_file(dir + "/expected/" + f));
  }
  // --check against expected/ agrees, and writes nothing.
  const auto c = extract({"--mbridge", dir + "/checkout", "--fields", kFields, "--commit", kFixtureCommit, "--date", kFixtureDate,
                          "--check", dir + "/expected"});
  INFO("check stdout: " << c.out);
  CHECK(c.exit_code == 0);
}

// A bad case: exit 2, the exact first error line, a hint, nothing written.
void check_bad_case(const std::string& name) {
  const std::string dir = kFixtures + "/" + name;
  TempDir tmp;
  const std::string out = tmp / "out";
  const auto r =
      extract({"--mbridge", dir + "/checkout", "--fields", kFields, "--commit", kFixtureCommit, "--date", kFixtureDate, "--out", out});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.err) == first_line(kbtest::read_file(dir + "/expected-error.txt")));
  CHECK(first_line(r.err, 1).rfind("hint: ", 0) == 0);
  CHECK_FALSE(fs::exists(out));
}

}  // namespace

TEST_CASE("code: exports follow star imports, aliases and x = y to the defining function", "[code]") { check_good_case("alias-chain"); }

TEST_CASE("code: helper calls bind positional, keyword and default arguments", "[code]") { check_good_case("helper-kwargs"); }

TEST_CASE("code: a benchmark recipe that calls a library recipe keeps the library's facts", "[code]") {
  check_good_case("recipe-calls-recipe");
}

TEST_CASE("code: an undecidable condition gives alternatives, a decidable one a value", "[code]") { check_good_case("conditional"); }

TEST_CASE("code: a replaced model config takes the new provider and its dataclass defaults", "[code]") {
  check_good_case("replaced-model");
}

TEST_CASE("code: a value computed at run time is unknown with a reason", "[code]") { check_good_case("unknown-value"); }

TEST_CASE("code: a pipeline layout builder is read as the (PP, VP) pairs it has a layout for", "[code]") {
  check_good_case("layout-builder");
  // The pairs themselves, not only agreement with expected/: a builder that
  // raised for every pair, or a partial read without its keyword, would differ.
  const std::string facts = kbtest::read_file(kFixtures + "/layout-builder/expected/recipe-facts.tsv");
  CHECK(facts.find("toy_1b_pretrain_4gpu_h100_bf16_config\tlayout_pairs\tvalue\t1x1 2x1 4x2\t") != std::string::npos);
  CHECK(facts.find("toy_1b_sft_4gpu_h100_bf16_config\tlayout_pairs\tvalue\t1x1 2x1 4x2 8x1\t") != std::string::npos);
  CHECK(facts.find("toy_1b_pretrain_1gpu_h100_bf16_config\tlayout_pairs\tdefault\tnone\t") != std::string::npos);
}

TEST_CASE("code: a recipe's parameters, its raise and its facts as --mode dora calls it", "[code]") {
  check_good_case("peft-scheme");
  // What the planner reads from these rows, spelled out (the comparison above checks every byte).
  const std::string facts = kbtest::read_file(kFixtures + "/peft-scheme/expected/recipe-facts.tsv");
  const std::string t = "megatron.bridge.recipes.toy.h100.toy.";
  CHECK(facts.find(t + "toy_1b_peft_1gpu_h100_bf16_config\tpeft@dora\tvalue\tmegatron.bridge.peft.lora.DoRA\t") != std::string::npos);
  CHECK(facts.find(t + "toy_1b_fixed_peft_1gpu_h100_bf16_config\tpeft@dora\t") == std::string::npos);  // takes no scheme
  CHECK(facts.find(t + "toy_moe_peft_1gpu_h100_bf16_config\traises\tvalue\tNotImplementedError('PEFT is not supported") !=
        std::string::npos);
  CHECK(facts.find(t + "toy_1b_peft_1gpu_h100_bf16_config\traises\tvalue\tfalse\tbool\t") != std::string::npos);
}

TEST_CASE("code: override keys nest into a dataclass field, not into a callable, dict or list of one", "[code]") {
  check_good_case("config-keys");
  const std::string keys = kbtest::read_file(kFixtures + "/config-keys/expected/config-keys.tsv");
  CHECK(keys.find("\nmodel.vision_parallelism.tensor_model_parallel_size\tfield\t") != std::string::npos);  // Optional['X']
  CHECK(keys.find("\nmodel.layer_spec\tfield\t") != std::string::npos);
  CHECK(keys.find("\nmodel.layer_spec.") == std::string::npos);           // Callable[['ToyModelProvider'], ModuleSpec]: no section
  CHECK(keys.find("\nmodel.module_parallelisms.") == std::string::npos);  // dict[str, X]: free keys
  CHECK(keys.find("\nmodel.stage_parallelisms.") == std::string::npos);   // list[X]: indexed
}

TEST_CASE("code: a syntax error in a recipe file is file:line: error, exit 2, nothing written", "[code]") { check_bad_case("bad-syntax"); }

TEST_CASE("code: a package without __init__.py on the export chain is an error", "[code]") { check_bad_case("bad-missing-init"); }

TEST_CASE("code: a circular import on the export chain is an error", "[code]") { check_bad_case("bad-circular"); }

TEST_CASE("code: --compare lists added and removed names and changed facts", "[code]") {
  TempDir tmp;
  const auto r = extract(
      {"--compare", kFixtures + "/alias-chain/expected", kFixtures + "/recipe-calls-recipe/expected", "--out", tmp / "changes.tsv"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string text = kbtest::read_file(tmp / "changes.tsv");
  CHECK(text.find("name-added\ttoy_1b_pretrain_8gpu_b200_bf16_config\tbenchmark") != std::string::npos);
  CHECK(text.find("name-removed\ttoy_1b_short_pretrain_config\tlibrary") != std::string::npos);
  CHECK(text.find("target-changed\ttoy_1b_pretrain_config\tlibrary") != std::string::npos);
}

TEST_CASE("code: the checked-in facts of snapshot 067f987df are what the extractor writes", "[code]") {
  const char* env = std::getenv("KB_MBRIDGE_SNAPSHOT");
  const std::string snapshot = env && *env ? env : kRoot + "/../shared/upstream/megatron-bridge/067f987df";
  const std::string facts = kRoot + "/kb-sources/code/067f987df";
  if (!fs::is_directory(snapshot + "/src/megatron/bridge")) {
    std::cout << "SKIPPED: no Megatron Bridge snapshot at " << snapshot << " (set KB_MBRIDGE_SNAPSHOT)\n";
    return;
  }
  if (!fs::is_directory(facts)) {
    std::cout << "SKIPPED: no checked-in facts at " << facts << "\n";
    return;
  }
  // commit and date come from the checked-in snapshot.tsv
  std::string commit, date;
  for (const auto& line : [&] {
         std::vector<std::string> v;
         const std::string t = kbtest::read_file(facts + "/snapshot.tsv");
         size_t s = 0;
         for (size_t e; (e = t.find('\n', s)) != std::string::npos; s = e + 1) v.push_back(t.substr(s, e - s));
         return v;
       }()) {
    if (line.rfind("commit\t", 0) == 0) commit = line.substr(7);
    if (line.rfind("date\t", 0) == 0) date = line.substr(5);
  }
  REQUIRE(commit.size() == 40);
  const auto r = extract({"--mbridge", snapshot, "--fields", kFields, "--commit", commit, "--date", date, "--check", facts});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  // The same through kbc, which runs the extractor of the source tree it was built from.
  const auto k = kbtest::run(
      KBC_PATH, {"extract-code", "--mbridge", snapshot, "--sources", kRoot + "/kb-sources", "--commit", commit, "--date", date, "--check"});
  INFO("kbc stdout: " << k.out << "\nkbc stderr: " << k.err);
  CHECK(k.exit_code == 0);
}

TEST_CASE("code: kbc extract-code reports a syntax error at its line and writes nothing", "[code]") {
  kbtest::TempDir tmp("kbtests-code");
  const std::string sources = tmp / "sources";
  fs::create_directories(sources + "/data");
  for (const char* f : {"code-fields.tsv", "code-layout.tsv"}) fs::copy_file(kRoot + "/kb-sources/data/" + f, sources + "/data/" + f);
  const auto r = kbtest::run(KBC_PATH, {"extract-code", "--mbridge", kRoot + "/tests/fixtures/mbridge/bad-syntax/checkout", "--sources",
                                        sources, "--commit", "0123456789abcdef0123456789abcdef01234567", "--date", "2026-01-01"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(": error: ") != std::string::npos);
  // Nothing under code/, whatever the snapshot folder would have been named.
  CHECK(files_in(sources + "/code").empty());
  CHECK_FALSE(fs::exists(sources + "/code"));
}

TEST_CASE("code: the extractor reads data files by kbc's one TSV rule", "[code]") {
  TempDir tmp;
  kb::Diagnostics diags;
  const auto fields = kb::load_tsv(kFields, diags);
  REQUIRE(fields);
  REQUIRE_FALSE(diags.has_errors());
  const std::string alias = kFixtures + "/alias-chain";
  const std::vector<std::string> args = {"--mbridge", alias + "/checkout", "--commit", kFixtureCommit, "--date", kFixtureDate};

  SECTION("a byte-order mark, CRLF line ends and cells padded with spaces read as the plain file") {
    std::string text = "\xEF\xBB\xBF";
    for (const auto& line : kb::split(kbtest::read_file(kFields), '\n')) {
      if (line.empty()) continue;
      std::string padded = line;
      if (line[0] != '#') {
        padded.clear();
        for (const auto& cell : kb::split(line, '\t')) padded += (padded.empty() ? "" : "\t") + std::string(" ") + cell + "  ";
      }
      text += padded + "\r\n";
    }
    const std::string path = tmp / "code-fields.tsv";
    kbtest::write_file(path, text);
    kb::Diagnostics d;
    const auto base = kb::load_tsv(path, d);
    REQUIRE(base);
    CHECK_FALSE(d.has_errors());
    CHECK(base->header == fields->header);
    REQUIRE(base->rows.size() == fields->rows.size());
    for (size_t i = 0; i < base->rows.size(); ++i) CHECK(base->rows[i].cells == fields->rows[i].cells);
    auto argv = args;
    argv.insert(argv.end(), {"--fields", path, "--layout", kRoot + "/kb-sources/data/code-layout.tsv", "--out", tmp / "out"});
    const auto r = extract(argv);
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    for (const auto& f : files_in(alias + "/expected")) {
      INFO(f);
      CHECK(kbtest::read_file(tmp / ("out/" + f)) == kbtest::read_file(alias + "/expected/" + f));
    }
  }

  SECTION("a row with fewer or more cells than the header is the same error at the same line in both") {
    for (const int delta : {-1, +1}) {
      std::string text = kbtest::read_file(kFields);
      const size_t cells = fields->header.size() + static_cast<size_t>(delta);
      std::vector<std::string> row(cells, "x");
      text += kb::join(row, "\t") + "\n";
      const int line = static_cast<int>(kb::split(text, '\n').size()) - 1;
      const std::string path = tmp / "ragged.tsv";
      kbtest::write_file(path, text);
      kb::Diagnostics d;
      kb::load_tsv(path, d);
      REQUIRE(d.error_count() == 1);
      const kb::Diagnostic& e = d.all().front();
      CHECK(e.span.line == line);
      auto argv = args;
      argv.insert(argv.end(), {"--fields", path, "--layout", kRoot + "/kb-sources/data/code-layout.tsv", "--out", tmp / "out-ragged"});
      const auto r = extract(argv);
      INFO("stderr: " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(first_line(r.err) == path + ":" + std::to_string(line) + ": error: " + e.message);
      CHECK_FALSE(fs::exists(tmp / "out-ragged"));
    }
  }
}

// kbc runs the extractor by its path, never from stdin: a Python traceback
// names the real file and line (with `python3 -` it would say `<stdin>`).
TEST_CASE("code: kbc extract-code runs the extractor by path, so a traceback names its file", "[code]") {
  kbtest::TempDir tmp("kbtests-code");
  const std::string script = tmp / "extract_mbridge.py";
  kbtest::write_file(script, "import sys\n\n\ndef crash():\n    raise RuntimeError('boom')\n\n\ncrash()\n");
  const auto r = kbtest::run(KBC_PATH, {"extract-code", "--mbridge", kRoot + "/tests/fixtures/mbridge/alias-chain/checkout", "--sources",
                                        tmp / "sources", "--commit", std::string(40, '0'), "--date", "2026-01-01", "--extractor", script});
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("File \"" + script + "\", line 5, in crash") != std::string::npos);
  CHECK(r.err.find("<stdin>") == std::string::npos);
}

TEST_CASE("code: kbc extract-code names the extractor it cannot find", "[code]") {
  kbtest::TempDir tmp("kbtests-code");
  const std::string missing = tmp / "nowhere/extract_mbridge.py";
  const auto r = kbtest::run(KBC_PATH, {"extract-code", "--mbridge", kRoot + "/tests/fixtures/mbridge/alias-chain/checkout", "--sources",
                                        tmp / "sources", "--commit", std::string(40, '0'), "--date", "2026-01-01", "--extractor", missing});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot find the extractor extract_mbridge.py (looked at " + missing + ")") != std::string::npos);
  CHECK(r.err.find("hint: ") != std::string::npos);
}
