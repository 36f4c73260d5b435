// Faults and malformed input: what kbq and kbc do when the world is wrong.
//
// - The malformed-query corpus, tests/bad-queries/*.test: each file is one
//   kbq run (or one parse, for what argv cannot carry), in a golden-like
//   format:
//
//     # what the case shows (and, for a regression, what it found)
//     arg: <one argv element, as written>
//     arg-bytes: "<piece>"*N "<piece>" ...   one argv element built from quoted
//                pieces, each optionally repeated; escapes \xNN \n \t \r \0 \\ \"
//     via: parse       call kbq::dsl::parse with the kb-sources lexicon instead
//                      of running kbq (NUL bytes, queries over argv's 128 KiB);
//                      exit 0 = parses (and its canonical form reads back as
//                      the same constraints; 3 when it does not), 2 = a
//                      ParseError; stderr is then
//                      "kbq: error: <message>\n  hint: <hint>\n"
//     exit: <expected exit code>
//     stdout-has: <substring>   (any number)
//     stderr-has: <substring>   (any number)
//     seconds: <time limit>     (default 10)
//
//   Never a crash (a signal), never a hang (killed at the limit).
// - kbq against a missing KB, a folder, an empty, truncated or non-SQLite
//   file, a KB of another schema version, a KB missing tables: one line on
//   stderr naming the file, exit 2. A KB in a read-only folder answers.
// - kbc with an output it cannot write: one error, the summary, exit 2.
// - tests/fixtures/good/*: sources that look odd but are fine (CRLF, BOM,
//   SQL and shell text in prose, an empty table) compile, with the same
//   recipes as tests/fixtures/good/minimal where they are its variants.
// - Pathological sources too big to check in (half-MiB lines and cells, deep
//   nesting), written at test time: an exact outcome within a time limit.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "base/diag.hpp"
#include "base/dsl/parse.hpp"
#include "base/schema_version.hpp"
#include "base/sqlite.hpp"
#include "base/tsv.hpp"
#include "cases.hpp"
#include "process.hpp"

#ifndef KB_SOURCE_DIR
#error "KB_SOURCE_DIR must name the repository root"
#endif

namespace {

namespace fs = std::filesystem;

const std::string kRoot = KB_SOURCE_DIR;
const std::string kData = kRoot + "/kb-sources/data";
const std::string kCode = kRoot + "/kb-sources/code";

// Sanitizer builds run several times slower; time limits stretch with them.
constexpr int kSlowdown = kbtest::kSanitized ? 6 : 1;

using kbtest::TempDir;

using kbtest::Outcome;
using kbtest::run_limited;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// ---------------------------------------------------------------------------
// The malformed-query corpus

struct QueryCase {
  std::vector<std::string> args;
  bool via_parse = false;
  int exit_code = 0;
  std::vector<std::string> stdout_has, stderr_has;
  double seconds = 10;
};

QueryCase parse_query_case(const std::string& text) {
  QueryCase c;
  bool has_exit = false;
  for (const auto& line : lines_of(text)) {
    if (line.empty() || line[0] == '#') continue;
    const auto colon = line.find(": ");
    const std::string key = line.substr(0, colon == std::string::npos ? line.find(':') : colon);
    const std::string value = colon == std::string::npos ? std::string{} : line.substr(colon + 2);
    if (key == "arg")
      c.args.push_back(value);
    else if (key == "arg-bytes")
      c.args.push_back(kbtest::decode_bytes(value));
    else if (key == "via")
      c.via_parse = value == "parse";
    else if (key == "exit") {
      c.exit_code = std::stoi(value);
      has_exit = true;
    } else if (key == "stdout-has")
      c.stdout_has.push_back(value);
    else if (key == "stderr-has")
      c.stderr_has.push_back(value);
    else if (key == "seconds")
      c.seconds = std::stod(value);
    else
      throw std::runtime_error("unknown line: " + line);
  }
  if (c.args.empty()) throw std::runtime_error("no arg line");
  if (!has_exit) throw std::runtime_error("no exit line");
  return c;
}

const kbq::dsl::Lexicon& source_lexicon() {
  static const kbq::dsl::Lexicon lex = [] {
    kb::Diagnostics diags;
    const auto rows = kb::load_tsv(kData + "/lexicon.tsv", diags, {"lang", "kind", "word", "value"});
    const auto gpus = kb::load_tsv(kData + "/gpus.tsv", diags);
    if (!rows || !gpus) throw std::runtime_error("cannot load kb-sources/data/lexicon.tsv or gpus.tsv");
    std::vector<std::string> keys;
    for (const auto& row : gpus->rows) keys.push_back(gpus->get(row, "gpu_key"));
    return kbq::dsl::Lexicon(kbq::dsl::lexicon_rows_from_tsv(*rows), keys);
  }();
  return lex;
}

Outcome run_query_case(const QueryCase& c) {
  if (!c.via_parse) return run_limited(KBQ_PATH, c.args, c.seconds * kSlowdown);
  Outcome r;
  const auto start = std::chrono::steady_clock::now();
  const auto p = kbq::dsl::parse(source_lexicon(), c.args.front());
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.timed_out = r.seconds > c.seconds * kSlowdown;
  if (p) {
    r.exit_code = 0;
    const std::string canonical = kbq::dsl::to_canonical(p.query);
    r.out = canonical + "\n";
    // A query that parses round-trips: its canonical form reads back as the
    // same constraints (docs/query-language.md); else report it as an error.
    const auto again = kbq::dsl::parse(source_lexicon(), canonical);
    if (!again || !(again.query.constraints() == p.query.constraints())) {
      r.exit_code = 3;
      r.err = "round trip: '" + canonical + "' reads back as [" + kbq::dsl::describe(again.query) + "], not [" +
              kbq::dsl::describe(p.query) + "]\n";
    }
  } else {
    r.exit_code = 2;
    r.err = "kbq: error: " + p.error->message + "\n";
    if (!p.error->hint.empty()) r.err += "  hint: " + p.error->hint + "\n";
  }
  return r;
}

// The KB kbq embeds (built by the build from kb-sources).
std::string built_kb() { return std::string(KB_BINARY_DIR) + "/kb.sqlite"; }

// One kbq run against --kb `path`: exit 2 and exactly one stderr line that
// names the file and says `what`.
void require_one_line_error(const std::string& path, const std::string& what) {
  const auto r = run_limited(KBQ_PATH, {"--kb", path, "sft qwen3 8 gpus"}, 10.0 * kSlowdown);
  INFO("stderr: " << r.err);
  CHECK(r.signal == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = lines_of(r.err);
  REQUIRE(lines.size() == 2);  // the error, then its hint
  CHECK(lines[0].rfind("kbq: error: ", 0) == 0);
  CHECK(lines[1].rfind("  hint: ", 0) == 0);
  CHECK(r.err.find(path) != std::string::npos);
  CHECK(r.err.find(what) != std::string::npos);
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// The documents' recipe rows of a KB, sorted, comma-separated.
std::string recipe_names(const std::string& kb_path) {
  kb::Db db(kb_path, kb::Db::Mode::ReadOnly);
  kb::Stmt st(db,
              "SELECT group_concat(name || '/' || coalesce(mode, '') || '/' || tp_min || '/' || coalesce(gpus_min, ''), ',') "
              "FROM (SELECT * FROM doc_recipes ORDER BY name, mode)");
  return st.step() ? st.text(0) : std::string{};
}

}  // namespace

// One malformed query: the expected exit code and message, never a crash or a hang.
void run_bad_query(const fs::path& f) {
  QueryCase c;
  REQUIRE_NOTHROW(c = parse_query_case(kbtest::read_file(f.string())));
  const auto r = run_query_case(c);
  INFO("exit " << r.exit_code << ", signal " << r.signal << ", " << r.seconds << " s");
  INFO("stderr (first 2000 bytes):\n" << r.err.substr(0, 2000));
  INFO("stdout (first 500 bytes):\n" << r.out.substr(0, 500));
  CHECK(r.signal == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == c.exit_code);
  for (const auto& s : c.stdout_has) {
    INFO("stdout should contain: " << s);
    CHECK(r.out.find(s) != std::string::npos);
  }
  for (const auto& s : c.stderr_has) {
    INFO("stderr should contain: " << s);
    CHECK(r.err.find(s) != std::string::npos);
  }
  if (c.exit_code == 2 && !c.via_parse) CHECK(r.out.empty());
}

KB_REGISTER_CASES(register_bad_queries) {
  for (const auto& f : kbtest::files_in(kRoot + "/tests/bad-queries", ".test"))
    kbtest::add_case("malformed query: " + f.filename().string(), "[faults][bad_queries]", [f] { run_bad_query(f); });
}

TEST_CASE("malformed queries: the corpus is there", "[faults][bad_queries]") {
  CHECK(kbtest::files_in(kRoot + "/tests/bad-queries", ".test").size() >= 20);
}

TEST_CASE("the bad-input corpus holds at least 40 malformed sources and queries", "[faults]") {
  size_t sources = 0;
  for (const auto& e : fs::directory_iterator(kRoot + "/tests/fixtures/bad"))
    if (e.is_directory() && fs::exists(e.path() / "expected.txt")) ++sources;
  const size_t queries = kbtest::files_in(kRoot + "/tests/bad-queries", ".test").size();
  INFO(sources << " bad sources, " << queries << " bad queries");
  CHECK(sources + queries >= 40);
}

TEST_CASE("kbq refuses a bad knowledge base with one line naming it, exit 2", "[faults]") {
  TempDir tmp("kbtests-faults");
  const std::string good = kbtest::read_file(built_kb());
  REQUIRE(good.size() > 8192);

  SECTION("missing file") { require_one_line_error(tmp / "nope.sqlite", "knowledge base not found"); }
  SECTION("a folder") {
    fs::create_directories(tmp / "kb-folder");
    require_one_line_error(tmp / "kb-folder", "is a folder");
  }
  SECTION("an empty file") {
    kbtest::write_file(tmp / "empty.sqlite", "");
    require_one_line_error(tmp / "empty.sqlite", "not a kbq knowledge base");
  }
  SECTION("a text file") {
    kbtest::write_file(tmp / "notes.sqlite", "these are not the tables you are looking for\n");
    require_one_line_error(tmp / "notes.sqlite", "not a readable SQLite knowledge base");
  }
  SECTION("an SQLite header followed by garbage") {
    std::string bytes("SQLite format 3\0", 16);
    for (int i = 0; i < 8000; ++i) bytes += static_cast<char>((i * 7919) & 0xff);
    kbtest::write_file(tmp / "garbage.sqlite", bytes);
    require_one_line_error(tmp / "garbage.sqlite", "not a readable SQLite knowledge base");
  }
  SECTION("truncated at various points") {
    for (size_t n : {size_t{100}, size_t{4096}, size_t{65536}, good.size() / 2, good.size() - 4096}) {
      INFO("truncated to " << n << " bytes of " << good.size());
      const std::string path = tmp / (std::to_string(n) + "-bytes.sqlite");
      kbtest::write_file(path, good.substr(0, n));
      require_one_line_error(path, "error:");
    }
  }
  SECTION("another schema version") {
    for (int version : {0, kb::kSchemaVersion - 1, kb::kSchemaVersion + 1, 99}) {
      const std::string path = tmp / (std::to_string(version) + "-version.sqlite");
      kbtest::write_file(path, good);
      {
        kb::Db db(path, kb::Db::Mode::ReadWriteCreate);
        db.exec("PRAGMA user_version = " + std::to_string(version));
      }
      require_one_line_error(
          path, "schema version " + std::to_string(version) + ", this kbq reads version " + std::to_string(kb::kSchemaVersion));
    }
  }
  SECTION("another application's SQLite file") {
    {
      kb::Db db(tmp / "other.sqlite", kb::Db::Mode::ReadWriteCreate);
      db.exec("CREATE TABLE t(x); INSERT INTO t VALUES (1)");
    }
    require_one_line_error(tmp / "other.sqlite", "not a kbq knowledge base");
  }
  SECTION("a KB of the right version missing a table (found: the error named no file and quoted SQL)") {
    for (const char* table : {"lexicon", "recipes"}) {
      const std::string path = tmp / (std::string("no-") + table + ".sqlite");
      kbtest::write_file(path, good);
      {
        kb::Db db(path, kb::Db::Mode::ReadWriteCreate);
        db.exec(std::string("DROP TABLE ") + table);
      }
      INFO("dropped " << table);
      require_one_line_error(path, "error:");
    }
  }
  SECTION("a KB holding some of the tables a runtime KB leaves out, not all") {
    // A full KB holds them all, a runtime KB none (base/schema.sql marks
    // them 'runtime: left out'); a runtime KB lacks no other table.
    const std::string runtime = kbtest::read_file(std::string(KB_BINARY_DIR) + "/kbq.sqlite");
    const std::string some = tmp / "some-left-out.sqlite", lacking = tmp / "runtime-no-models.sqlite";
    kbtest::write_file(some, good);
    kbtest::write_file(lacking, runtime);
    {
      kb::Db db(some, kb::Db::Mode::ReadWriteCreate);
      db.exec("DROP TABLE labels; DROP TABLE code_facts");
      kb::Db rt(lacking, kb::Db::Mode::ReadWriteCreate);
      rt.exec("DROP TABLE models");
    }
    require_one_line_error(some, "knowledge base is incomplete: no table");
    require_one_line_error(lacking, "knowledge base is incomplete: no table 'models'");
  }
  SECTION("an unreadable file") {
    if (::geteuid() == 0) {
      WARN("running as root: file permissions do not apply, skipped");
    } else {
      kbtest::write_file(tmp / "locked.sqlite", good);
      ::chmod((tmp / "locked.sqlite").c_str(), 0);
      require_one_line_error(tmp / "locked.sqlite", "error:");
    }
  }
}

TEST_CASE("kbq answers from a KB in a read-only folder", "[faults]") {
  TempDir tmp("kbtests-faults");
  const std::string dir = tmp / "ro";
  fs::create_directories(dir);
  fs::copy_file(built_kb(), dir + "/kb.sqlite");
  ::chmod((dir + "/kb.sqlite").c_str(), 0444);
  ::chmod(dir.c_str(), 0555);
  const auto r = run_limited(KBQ_PATH, {"--kb", dir + "/kb.sqlite", "sft qwen3 8 gpus"}, 10.0 * kSlowdown);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("qwen3") != std::string::npos);
  // Nothing written beside it (no journal, no -shm / -wal).
  std::vector<std::string> beside;
  for (const auto& e : fs::directory_iterator(dir)) beside.push_back(e.path().filename().string());
  CHECK(beside == std::vector<std::string>{"kb.sqlite"});
}

TEST_CASE("kbc with an output it cannot write: one error, the summary, exit 2", "[faults]") {
  TempDir tmp("kbtests-faults");
  const std::string sources = kRoot + "/tests/fixtures/good/minimal";
  auto check_unwritable = [&](const std::string& out) {
    const auto r = run_limited(KBC_PATH, {"build", "--sources", sources, "--data", kData, "-o", out}, 60.0 * kSlowdown);
    INFO("stderr: " << r.err);
    CHECK(r.signal == 0);
    CHECK(r.exit_code == 2);
    const auto lines = lines_of(r.err);
    const auto errors =
        std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find(": error: ") != std::string::npos; });
    CHECK(errors == 1);
    CHECK(r.err.find("left unchanged") != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  };
  SECTION("the output's folder is a file") {
    kbtest::write_file(tmp / "a-file", "x");
    check_unwritable(tmp / "a-file/kb.sqlite");
  }
  SECTION("a read-only folder") {
    const std::string dir = tmp / "ro";
    fs::create_directories(dir);
    ::chmod(dir.c_str(), 0555);
    if (::geteuid() == 0) WARN("running as root: a read-only folder is writable; using /proc instead");
    check_unwritable(::geteuid() == 0 ? std::string("/proc/kbtests-cannot-write/kb.sqlite") : dir + "/kb.sqlite");
  }
}

// A good fixture is good/minimal with one oddity: it compiles to the same recipes.
Outcome build_good(const std::string& sources, const std::string& out) {
  return run_limited(KBC_PATH, {"build", "--sources", sources, "--data", kData, "--code", kCode, "-o", out, "--quiet"}, 60.0 * kSlowdown);
}

// The recipes of good/minimal, built once per process: the good fixtures
// run in one ([good-fixtures], tests/CMakeLists.txt).
const std::string& minimal_recipes() {
  static const std::string names = [] {
    TempDir tmp("kbtests-faults");
    const auto base = build_good(kRoot + "/tests/fixtures/good/minimal", tmp / "minimal.sqlite");
    INFO("stderr: " << base.err);
    REQUIRE(base.exit_code == 0);
    return recipe_names(tmp / "minimal.sqlite");
  }();
  return names;
}

void run_good_fixture(const std::string& name) {
  const std::string good = kRoot + "/tests/fixtures/good";
  TempDir tmp("kbtests-faults");
  const std::string& base_recipes = minimal_recipes();
  REQUIRE_FALSE(base_recipes.empty());
  const fs::path dir = fs::path(good) / name;
  const std::string out = tmp / (name + ".sqlite");
  const auto r = build_good(dir.string(), out);
  INFO("stderr: " << r.err);
  CHECK(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("error") == std::string::npos);
  // Every good fixture is good/minimal with one oddity: the same recipes.
  CHECK(recipe_names(out) == base_recipes);
}

KB_REGISTER_CASES(register_good_fixtures) {
  std::error_code ec;
  std::vector<std::string> names;
  for (auto it = fs::directory_iterator(kRoot + "/tests/fixtures/good", ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->is_directory() && it->path().filename() != "minimal") names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  for (const auto& name : names)
    kbtest::add_case("good fixture compiles: " + name, "[faults][good-fixtures]", [name] { run_good_fixture(name); });
}

TEST_CASE("kbq answers from sources with SQL and shell text in their prose", "[faults]") {
  TempDir tmp("kbtests-faults");
  const std::string out = tmp / "kb.sqlite";
  const auto b = run_limited(KBC_PATH,
                             {"build", "--sources", kRoot + "/tests/fixtures/good/sql_metacharacters_in_text", "--data", kData, "--code",
                              kCode, "-o", out, "--quiet"},
                             60.0 * kSlowdown);
  REQUIRE(b.exit_code == 0);
  const auto r = run_limited(KBQ_PATH, {"--kb", out, "show", "llama3_8b_pretrain_config"}, 10.0 * kSlowdown);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("llama3_8b_pretrain_config") != std::string::npos);
  // The text was stored, not run: every table is still there.
  kb::Db db(out, kb::Db::Mode::ReadOnly);
  kb::Stmt st(db, "SELECT count(*) FROM doc_recipes");
  REQUIRE(st.step());
  CHECK(st.integer(0) == 2);
}

// Pathological sources, too big to check in: written at test time from
// good/minimal. Each has an exact outcome and a time limit.
struct PathologicalCase {
  const char* name;
  std::string text;
  int exit_code;
  const char* stderr_has;  // "" = nothing required
  double seconds;
};

std::vector<PathologicalCase> pathological_cases() {
  const std::string minimal = kbtest::read_file(kRoot + "/tests/fixtures/good/minimal/skill/SKILL.en.md");
  const auto first_row = minimal.find("| llama3_8b_pretrain_config");
  const std::string before_rows = minimal.substr(0, first_row);
  const std::string rows = minimal.substr(first_row);
  const std::string para_at = "All recipes";  // the paragraph of line 11
  const auto para = minimal.find(para_at);

  // Half a MiB: a markdown edition is at most kMaxMarkdownBytes (1 MiB).
  const std::string mb(1 << 19, 'x');
  const char* kTooDeep = "error: blocks nested more than 64 levels deep";
  std::string indented;  // a list 1000 deep by indentation (about 1 MB)
  for (int i = 0; i < 1000; ++i) indented += std::string(static_cast<size_t>(2 * i), ' ') + "- item\n";
  std::string many_rows;  // 10 000 recipes in one table (750 KB): no quadratic work per row
  for (int i = 0; i < 10000; ++i)
    many_rows += "| llama3_8b_r" + std::to_string(i) + "_pretrain_config | Pretrain | 2 | 1 | — | ✓ | 2 | 8K |\n";
  return {
      // A paragraph, a code line or a bracket run longer than the 16 KiB a
      // KB text may hold (base/limits.hpp) is refused at its line: kbq
      // would refuse the KB (kbq --kb), so kbc never writes it.
      {"a 512 KiB paragraph line", minimal.substr(0, para) + mb + "\n\n" + minimal.substr(para), 2, "holds a value of 524", 20},
      {"a 512 KiB heading",
       before_rows.substr(0, before_rows.find("### Llama")) + "## " + mb + "\n\n" + before_rows.substr(before_rows.find("### Llama")) +
           rows,
       0, "", 20},
      {"a 512 KiB code block line", minimal + "\n```text\n" + mb + "\n```\n", 2, "holds a value of 524", 20},
      {"a 512 KiB TP cell (found: the error quoted all of it)",
       before_rows + "| llama3_8b_pretrain_config | Pretrain | " + std::string(1 << 19, '8') + " | 1 | — | ✓ | 2 | 8K |\n", 2, "TP cell '",
       20},
      // Lists and block quotes nest at most 64 levels (kMaxNesting); deeper is
      // an error, never a recursion per level (found by the corpus: the
      // markdown walker overflowed the stack at 10 000 quotes in a Release
      // build). 64 levels compile, as the message says.
      {"64 nested block quotes (the limit)", minimal + "\n" + std::string(64, '>') + " deep\n", 0, "", 20},
      {"a list 64 deep (the limit)", minimal + "\n" + repeat("- ", 64) + "item\n", 0, "", 20},
      {"65 nested block quotes", minimal + "\n" + std::string(65, '>') + " deep\n", 2, kTooDeep, 20},
      {"a list 1000 deep by indentation", minimal + "\n" + indented, 2, kTooDeep, 30},
      {"10 000 nested block quotes", minimal + "\n" + std::string(10000, '>') + " deep\n", 2, kTooDeep, 20},
      {"100 000 nested block quotes", minimal + "\n" + std::string(100000, '>') + " deep\n", 2, kTooDeep, 20},
      {"a list 100 000 deep", minimal + "\n" + repeat("- ", 100000) + "item\n", 2, kTooDeep, 30},
      {"20 000 lists in block quotes", minimal + "\n" + repeat("> 1. ", 20000) + "item\n", 2, kTooDeep, 30},
      {"10 000 nested emphasis markers", minimal + "\n" + std::string(10000, '*') + "x" + std::string(10000, '*') + "\n", 0, "", 20},
      {"10 000 nested brackets", minimal + "\n" + std::string(10000, '[') + "x" + std::string(10000, ']') + "\n", 2,
       "over the limit of 16384", 20},
      {"a table of 10 000 recipes", before_rows + many_rows, 0, "", 60},
  };
}

// One pathological source: its exact outcome within its time limit.
void run_pathological(const PathologicalCase& c) {
  TempDir tmp("kbtests-faults");
  kbtest::write_file(tmp / "src/skill/SKILL.en.md", c.text);
  const auto r = run_limited(KBC_PATH, {"build", "--sources", tmp / "src", "--data", kData, "-o", tmp / "kb.sqlite", "--quiet"},
                             c.seconds * kSlowdown);
  INFO("exit " << r.exit_code << ", " << r.seconds << " s; stderr (first 1000 bytes): " << r.err.substr(0, 1000));
  CHECK(r.signal == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == c.exit_code);
  CHECK(r.err.find(c.stderr_has) != std::string::npos);
  // A diagnostic quotes a bounded excerpt, never a whole megabyte.
  CHECK(r.err.size() < 4096);
}

KB_REGISTER_CASES(register_pathological) {
  const auto cases = pathological_cases();
  for (size_t i = 0; i < cases.size(); ++i)
    kbtest::add_case(std::string("pathological source: ") + cases[i].name, "[faults]",
                     [i] { run_pathological(pathological_cases().at(i)); });
}

TEST_CASE("pathological sources: the fixture they are made from is there", "[faults]") {
  const std::string minimal = kbtest::read_file(kRoot + "/tests/fixtures/good/minimal/skill/SKILL.en.md");
  CHECK(minimal.find("| llama3_8b_pretrain_config") != std::string::npos);
  CHECK(minimal.find("All recipes") != std::string::npos);
  CHECK(pathological_cases().size() >= 10);
}
