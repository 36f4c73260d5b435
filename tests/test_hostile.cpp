// The hostile-input corpus (issue 12): a KB file or a source tree from
// someone else cannot crash kbq or kbc, hang them, exhaust memory, reach the
// terminal, or make them read or write outside the folders they were given.
//
// Each case is a file tests/fixtures/hostile/<name>.case, registered as its
// own test. The harness builds the case's input in a fresh temporary folder
// {tmp}, snapshots that folder, runs kbq or kbc once under a time and a
// memory ceiling that it measures itself (kbtest::run_limited: SIGKILL past
// either), and checks the exact outcome. Format, one directive a line (#
// lines are comments: what the case shows and the issue that found it):
//
//   setup, in order (paths are under {tmp} unless absolute):
//     kb: PATH                    a copy of the KB the build compiled
//     sql: PATH: STATEMENTS       run on that KB (e.g. an UPDATE), with two
//                                 functions for the packed code facts
//                                 (base/packed_facts.hpp):
//                                 kb_pack_facts(field_id, value_id, file_id,
//                                 line, more), an aggregate, packs its rows;
//                                 kb_packed_value_id(facts, field_id) gives a
//                                 field's value id (NULL: no such field);
//                                 kb_packed_concat(a, b), a's facts then b's;
//                                 and one for the compiled recipes
//                                 (query/kb/recipes_stored.hpp):
//                                 kb_packed_recipes(0) packs the tables'
//                                 recipes, unchecked, and returns chunk 0,
//                                 kb_packed_recipes(i) chunk i of that
//                                 packing (NULL past the last)
//     overflow-cycle: PATH        page-level damage: every overflowing labels
//                                 value of the KB declares ~1 MB and points
//                                 into one overflow chain made into a cycle
//     sources: PATH               tests/fixtures/good/minimal with a copy of
//                                 kb-sources/data as PATH/data
//     snapshot: PATH              a small code snapshot (kbc extract-code's
//                                 files) of one recipe, llama3_8b_pretrain_config
//                                 (TP 2, PP 1, CP 1, EP 1), as PATH/
//     write: PATH: BYTES          a file (BYTES as in tests/bad-queries:
//     append: PATH: BYTES           "piece"*N "\x1b" ...)
//     big-file: PATH: N           a file of N bytes ('x' lines)
//     mkdir: PATH / mkfifo: PATH / symlink: PATH -> TARGET / chmod: PATH OCTAL
//     device: PATH                a character device like /dev/full (root only:
//                                 the case is skipped otherwise)
//     sentinel: PATH              a file with known bytes; like everything
//                                 under {tmp} it must be unchanged after the run
//     replace: PATH: "OLD" "NEW"  every OLD in the file becomes NEW (BYTES
//                                 notation; e.g. a label of data/ui.tsv)
//   the run:
//     run: kbq | kbc              the program (the build's own)
//     arg: ARG                    one argument each ({tmp}, {root}, {data})
//     arg-bytes: BYTES            one argument in the BYTES notation
//     env: NAME=VALUE             in its environment
//     stdin: PATH                 this file as its standard input (default
//                                 /dev/null)
//     unprivileged                when the tests run as root, run as nobody
//                                 (so that a folder of mode 000 is unreadable);
//                                 the program is run from a copy nobody can
//                                 reach, wherever the clone is (skipped with a
//                                 message if no such copy can be made)
//     seconds: S                  time ceiling (default 10; ×6 under ASan)
//     mib: M                      memory ceiling, peak resident set (default
//                                 256; ×4 under ASan)
//   what must come out:
//     exit: N
//     stderr: LINE                the exact stderr, line by line ('*' matches
//                                 any run of characters); none = empty
//     stderr-tail: LINE           instead, the last lines of stderr (what comes
//                                 before is free: a Python traceback)
//     stdout-has: TEXT            (any number); without one, stdout is empty
//     stdout-lines: N             stdout holds exactly N lines (--batch records)
//     writes: PATH                the run may create, change or delete under
//                                 PATH (default: nothing under {tmp} changes)
//     keeps: PATH                 but not this file: it is there, unchanged
//     kind: PATH KIND             after the run PATH is: absent | file | dir |
//                                 link | fifo | char-device
//     cmark: DIR                  every .md under DIR rendered with
//                                 cmark-gfm --unsafe holds no raw HTML
//     stdout-cmark                stdout (kbq --format markdown) rendered the
//                                 same way holds no raw HTML either
//     myst: DIR                   the pages under DIR built with Sphinx + MyST
//                                 as the site is (site/conf.py) hold nothing
//                                 the generator did not write, and no file of
//                                 the machine (tests/site/check_myst_inert.py;
//                                 skipped when Sphinx or myst-parser is missing)
//     myst-shows: TEXT            and show TEXT as written (any number)
//
// Always checked too: no signal, no hang, no blow-up, and not one raw
// control character (ESC, C1, bidirectional controls) on stdout or stderr.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "base/checked.hpp"
#include "base/escape.hpp"
#include "base/invisible.hpp"
#include "base/kb_schema.hpp"
#include "base/limits.hpp"
#include "base/packed_facts.hpp"
#include "base/schema_objects.hpp"
#include "base/sqlite.hpp"
#include "base/stored_rows.hpp"
#include "base/text.hpp"
#include "cases.hpp"
#include "process.hpp"
#include "query/kb/recipes_stored.hpp"
#include "query/kbq.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kRoot = KB_SOURCE_DIR;

constexpr int kSlowdown = kbtest::kSanitized ? 6 : 1, kMemoryFactor = kbtest::kSanitized ? 4 : 1;

struct Directive {
  std::string key, value;
  int line = 0;
};

std::vector<Directive> parse_case(const std::string& text) {
  std::vector<Directive> out;
  int n = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    ++n;
    pos = eol == std::string::npos ? text.size() + 1 : eol + 1;
    if (line.empty() || line[0] == '#') continue;
    const auto colon = line.find(": ");
    if (colon == std::string::npos)
      out.push_back({line, "", n});
    else
      out.push_back({line.substr(0, colon), line.substr(colon + 2), n});
  }
  return out;
}

std::string substitute(std::string s, const std::string& tmp) {
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"{tmp}", tmp}, {"{root}", kRoot}, {"{data}", kRoot + "/kb-sources/data"}}) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  }
  return s;
}

// "PATH: REST" → (PATH, REST); PATH may be written in the BYTES notation
// ("a\nb.md") when it holds ": " or a control character.
std::pair<std::string, std::string> path_and_rest(const std::string& v) {
  if (!v.empty() && v[0] == '"') {
    size_t i = 1;
    while (i < v.size() && v[i] != '"') i += v[i] == '\\' ? 2 : 1;
    return {kbtest::decode_bytes(v.substr(0, i + 1)), v.size() > i + 3 ? v.substr(i + 3) : std::string()};
  }
  const auto colon = v.find(": ");
  return {v.substr(0, colon), colon == std::string::npos ? std::string() : v.substr(colon + 2)};
}

std::string under(const std::string& tmp, const std::string& path) {
  const std::string p = substitute(path, tmp);
  return p.empty() || p[0] == '/' ? p : tmp + "/" + p;
}

// '*' matches any run of characters; everything else literally.
bool glob_match(const std::string& pattern, const std::string& text) {
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t eol = text.find('\n', pos);
    out.push_back(text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos));
    pos = eol == std::string::npos ? text.size() : eol + 1;
  }
  return out;
}

// --- the folder snapshot ------------------------------------------------------------

// What is at each path under the case folder, links never followed: kind,
// size, and the bytes of small files (a hash would do; they are small).
std::map<std::string, std::string> snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    std::string what = std::to_string(st.st_mode) + ":" + std::to_string(st.st_size);
    if (S_ISLNK(st.st_mode)) {
      what += ":" + fs::read_symlink(it->path(), ec).string();
    } else if (S_ISREG(st.st_mode)) {
      if (st.st_size <= (1 << 20))
        what += ":" + kbtest::read_file(it->path().string());
      else
        what += ":" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ino);
    }
    out[it->path().string()] = what;
  }
  return out;
}

// --- page-level damage ----------------------------------------------------------------

// An SQLite varint at b[i] (value, length).
std::pair<std::uint64_t, int> varint(const std::string& b, size_t i) {
  std::uint64_t v = 0;
  for (int k = 0; k < 9; ++k) {
    const auto x = static_cast<unsigned char>(b.at(i + static_cast<size_t>(k)));
    if (k == 8) return {(v << 8) | x, 9};
    v = (v << 7) | (x & 0x7F);
    if (!(x & 0x80)) return {v, k + 1};
  }
  return {v, 9};
}

void put3(std::string& b, size_t i, std::uint64_t v) {
  REQUIRE(v < (1u << 21));
  b[i] = static_cast<char>(0x80 | ((v >> 14) & 0x7F));
  b[i + 1] = static_cast<char>(0x80 | ((v >> 7) & 0x7F));
  b[i + 2] = static_cast<char>(v & 0x7F);
}

std::uint32_t be32(const std::string& b, size_t i) {
  std::uint32_t v = 0;
  for (size_t k = 0; k < 4; ++k) v = (v << 8) | static_cast<unsigned char>(b.at(i + k));
  return v;
}
void put32(std::string& b, size_t i, std::uint32_t v) {
  for (size_t k = 0; k < 4; ++k) b[i + k] = static_cast<char>((v >> (8 * (3 - k))) & 0xFF);
}

// The SQL functions `sql:` lines may use on the packed code facts.
struct PackRows {
  std::vector<kb::PackedFact> facts;
  std::vector<std::unique_ptr<std::string>> mores;  // what each fact's `more` views
};

void pack_step(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto** rows = static_cast<PackRows**>(sqlite3_aggregate_context(ctx, sizeof(PackRows*)));
  if (!rows) return;
  if (!*rows) *rows = new PackRows;
  const auto opt = [](sqlite3_value* v) {
    return sqlite3_value_type(v) == SQLITE_NULL ? std::nullopt : std::optional<std::uint64_t>(sqlite3_value_int64(v));
  };
  kb::PackedFact f;
  f.field_id = static_cast<std::uint64_t>(sqlite3_value_int64(argv[0]));
  f.value_id = static_cast<std::uint64_t>(sqlite3_value_int64(argv[1]));
  f.file_id = opt(argv[2]);
  f.line = opt(argv[3]);
  const auto* more = sqlite3_value_text(argv[4]);
  (*rows)->mores.push_back(std::make_unique<std::string>(more ? reinterpret_cast<const char*>(more) : ""));
  f.more = *(*rows)->mores.back();
  (*rows)->facts.push_back(f);
}

void pack_final(sqlite3_context* ctx) {
  auto** rows = static_cast<PackRows**>(sqlite3_aggregate_context(ctx, 0));
  const std::string bytes = kb::pack_facts(rows && *rows ? (*rows)->facts : std::vector<kb::PackedFact>{});
  sqlite3_result_blob(ctx, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  if (rows) delete *rows;
}

void packed_value_id(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const auto* blob = static_cast<const char*>(sqlite3_value_blob(argv[0]));
  const std::string_view bytes(blob ? blob : "", static_cast<size_t>(sqlite3_value_bytes(argv[0])));
  const auto field = static_cast<std::uint64_t>(sqlite3_value_int64(argv[1]));
  std::optional<std::uint64_t> found;
  kb::for_each_packed_fact(bytes, [&](const kb::PackedFact& f) {
    if (f.field_id == field) found = f.value_id;
  });
  if (found)
    sqlite3_result_int64(ctx, static_cast<sqlite3_int64>(*found));
  else
    sqlite3_result_null(ctx);
}

// Two packed values as one: the first's facts, then the second's.
void packed_concat(sqlite3_context* ctx, int, sqlite3_value** argv) {
  std::vector<kb::PackedFact> facts;
  std::vector<std::string> blobs;
  for (int i = 0; i < 2; ++i) {
    const auto* blob = static_cast<const char*>(sqlite3_value_blob(argv[i]));
    blobs.emplace_back(blob ? blob : "", static_cast<size_t>(sqlite3_value_bytes(argv[i])));
  }
  for (const auto& b : blobs) kb::for_each_packed_fact(b, [&](const kb::PackedFact& f) { facts.push_back(f); });
  const std::string bytes = kb::pack_facts(facts);
  sqlite3_result_blob(ctx, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
}

// kb_packed_recipes(0) packs the recipes as the tables hold them
// (recipes, recipe_launch, the launch_sites they cite), unchecked, into the
// chunks kbc writes to recipes_compiled, and returns chunk 0;
// kb_packed_recipes(i) returns chunk i of that packing (NULL past the last).
// A value of the wrong type reads as SQLite converts it (a text as 0).
std::vector<std::string>& packed_recipes() {
  static std::vector<std::string> chunks;
  return chunks;
}

void pack_recipes(sqlite3* db) {
  constexpr const char* kSites[] = {"precision_at", "data_at", "peft_at", "raises_at", "shadowed_at"};
  std::string sites[5];
  for (int i = 0; i < 5; ++i) sites[i] = std::string("(SELECT at FROM launch_sites WHERE id = l.") + kSites[i] + ")";
  const std::string sql =
      "SELECT r.kind, r.name, r.target, r.mode, r.launch_mode, r.model_key, r.modality, r.moe, r.tp, r.pp, r.vp, r.cp, r.ep, r.etp, "
      "r.sp, r.seq_len, r.gbs, r.mbs, r.dataset, r.precision, r.native_gpus, r.native_hardware, r.native_precision, r.variant, "
      "r.min_gpus, r.low_precision, l.precision, " +
      sites[0] + ", l.data, l.data_name, " + sites[1] + ", l.user_data, l.peft_modes, " + sites[2] + ", l.raises, " + sites[3] +
      ", l.shadowed, " + sites[4] +
      " FROM recipes r LEFT JOIN recipe_launch l ON l.name = r.name AND l.kind = r.kind ORDER BY r.kind, r.name";
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  std::vector<kbq::Recipe> recipes;
  const auto text = [&](int c) {
    const auto* t = sqlite3_column_text(st, c);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(st, c))) : std::string();
  };
  const auto opt = [&](int c) {
    return sqlite3_column_type(st, c) == SQLITE_NULL ? std::nullopt : std::optional<long long>(sqlite3_column_int64(st, c));
  };
  while (sqlite3_step(st) == SQLITE_ROW) {
    kbq::Recipe& r = recipes.emplace_back();
    r.kind = text(0) == "benchmark" ? kb::RecipeKind::Benchmark : kb::RecipeKind::Library;
    r.name = text(1), r.target = text(2), r.mode = text(3), r.launch_mode = text(4), r.model_key = text(5), r.modality = text(6);
    r.moe = sqlite3_column_int64(st, 7) != 0;
    r.tp = opt(8), r.pp = opt(9), r.vp = opt(10), r.cp = opt(11), r.ep = opt(12), r.etp = opt(13);
    if (const auto sp = opt(14)) r.sp = *sp != 0;
    r.seq_len = opt(15), r.gbs = opt(16), r.mbs = opt(17);
    r.dataset = text(18), r.precision = text(19);
    r.native_gpus = opt(20);
    r.native_hardware = text(21), r.native_precision = text(22), r.variant = text(23);
    r.min_gpus = opt(24);
    r.low_precision = text(25), r.runs_in = text(26), r.runs_in_at = text(27), r.data = text(28), r.data_name = text(29);
    r.data_at = text(30);
    r.user_data = sqlite3_column_int64(st, 31) != 0;
    if (const std::string modes = text(32); !modes.empty()) r.peft_modes = kb::split(modes, ',');
    r.peft_at = text(33), r.raises = text(34), r.raises_at = text(35);
    r.shadowed = sqlite3_column_int64(st, 36) != 0;
    r.shadowed_at = text(37);
  }
  sqlite3_finalize(st);
  packed_recipes() = kbq::stored_recipes::to_stored(recipes);
}

void packed_recipes_chunk(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const long long i = sqlite3_value_int64(argv[0]);
  if (i == 0) pack_recipes(sqlite3_context_db_handle(ctx));
  const auto& chunks = packed_recipes();
  if (i < 0 || static_cast<size_t>(i) >= chunks.size()) return sqlite3_result_null(ctx);
  const std::string& b = chunks[static_cast<size_t>(i)];
  sqlite3_result_blob(ctx, b.data(), static_cast<int>(b.size()), SQLITE_TRANSIENT);
}

// SELECT kb_repack_rows() runs the queries of rows_compiled's parts on the
// tables as they are and stores their rows as kbc does
// (Engine::compile_stored_rows; answers read them in place of the
// tables); it returns the count of parts stored. Tables crafted so that the
// snapshot is refused leave the languages' parts as they were (kbc would
// refuse to write them; kbq refuses the snapshot first).
void repack_rows(sqlite3_context* ctx, int, sqlite3_value**) {
  sqlite3* db = sqlite3_context_db_handle(ctx);
  long long parts = 0;
  try {
    try {
      for (const auto& [part, bytes] : kbq::Engine::compile_stored_rows(db)) {
        kb::store_rows_part(db, part, bytes);
        ++parts;
      }
    } catch (const kb::KbValueError&) {
      kb::store_rows_part(db, "snapshot", kbq::Engine::compile_snapshot(db));
      parts = 1;
    }
  } catch (const std::exception& e) {  // never through SQLite's C frames
    return sqlite3_result_error(ctx, e.what(), -1);
  }
  sqlite3_result_int64(ctx, parts);
}

void add_fact_functions(kb::Db& db) {
  REQUIRE(sqlite3_create_function_v2(db.handle(), "kb_repack_rows", 0, SQLITE_UTF8, nullptr, repack_rows, nullptr, nullptr, nullptr) ==
          SQLITE_OK);
  REQUIRE(sqlite3_create_function_v2(db.handle(), "kb_packed_recipes", 1, SQLITE_UTF8, nullptr, packed_recipes_chunk, nullptr, nullptr,
                                     nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_create_function_v2(db.handle(), "kb_packed_concat", 2, SQLITE_UTF8, nullptr, packed_concat, nullptr, nullptr, nullptr) ==
          SQLITE_OK);
  REQUIRE(sqlite3_create_function_v2(db.handle(), "kb_pack_facts", 5, SQLITE_UTF8, nullptr, nullptr, pack_step, pack_final, nullptr) ==
          SQLITE_OK);
  REQUIRE(sqlite3_create_function_v2(db.handle(), "kb_packed_value_id", 2, SQLITE_UTF8, nullptr, packed_value_id, nullptr, nullptr,
                                     nullptr) == SQLITE_OK);
}

// The shape of a small file that once cost kbq gigabytes: every English
// label made long enough to overflow, then, in the file's bytes, each such
// cell declaring ~1 MB and pointing to the same overflow chain, whose last
// page points back to its first. SQLite follows the cycle for as long as the
// declared size asks.
void overflow_cycle(const std::string& path) {
  {
    kb::Db db(path, kb::Db::Mode::ReadWriteCreate);
    db.exec("UPDATE labels SET text = printf('%.*c', 20000, 'x') WHERE lang = 'en'");
  }
  std::vector<long long> leaves;
  {
    kb::Db db(path, kb::Db::Mode::ReadOnly);
    kb::Stmt st(db, "SELECT pageno FROM dbstat WHERE name = 'labels' AND pagetype = 'leaf'");
    while (st.step()) leaves.push_back(st.integer(0));
  }
  REQUIRE_FALSE(leaves.empty());
  std::string b = kbtest::read_file(path);
  // labels is a WITHOUT ROWID table (schema 8): its rows are cells of index
  // b-tree leaves (page type 0x0A, no rowid, less payload kept on the page);
  // a rowid table's are table leaves (0x0D). Both are read here.
  const size_t U = 4096, M = ((U - 12) * 32 / 255) - 23;
  struct Cell {
    size_t off, payload;
    std::uint64_t size;
    size_t local;
  };
  std::vector<Cell> cells;
  for (long long pg : leaves) {
    const size_t base = static_cast<size_t>(pg - 1) * U, h = base + (pg == 1 ? 100 : 0);
    const bool index = static_cast<unsigned char>(b[h]) == 0x0A;
    REQUIRE((index || static_cast<unsigned char>(b[h]) == 0x0D));
    const size_t X = index ? ((U - 12) * 64 / 255) - 23 : U - 35;
    const auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(b[i])); };
    const size_t n = byte(h + 3) << 8 | byte(h + 4);
    for (size_t i = 0; i < n; ++i) {
      const size_t off = base + (byte(h + 8 + 2 * i) << 8 | byte(h + 9 + 2 * i));
      const auto [size, sl] = varint(b, off);
      const int rl = index ? 0 : varint(b, off + static_cast<size_t>(sl)).second;  // the rowid's length
      if (size <= X) continue;
      REQUIRE(sl == 3);
      const size_t k = M + (size - M) % (U - 4);
      cells.push_back({off, off + static_cast<size_t>(sl + rl), size, k <= X ? k : M});
    }
  }
  REQUIRE(cells.size() >= 10);
  const std::uint32_t first = be32(b, cells[0].payload + cells[0].local);
  std::uint32_t last = first;
  for (int guard = 0; guard < 100 && be32(b, (last - 1) * U) != 0; ++guard) last = be32(b, (last - 1) * U);
  put32(b, (last - 1) * U, first);
  for (const auto& c : cells) {
    // The text column's serial type (third of labels) and the payload size
    // grow by the same whole number of overflow pages, so the local part and
    // the overflow pointer stay where they are.
    const auto [header, hl] = varint(b, c.payload);
    size_t j = c.payload + static_cast<size_t>(hl);
    std::vector<std::pair<size_t, std::uint64_t>> types;
    while (j < c.payload + header) {
      const auto [t, tl] = varint(b, j);
      types.emplace_back(j, t);
      j += static_cast<size_t>(tl);
    }
    REQUIRE(types.size() >= 3);
    const std::uint64_t len = (types[2].second - 13) / 2, k = (1000000 - len) / (U - 4);
    put3(b, types[2].first, 2 * (len + k * (U - 4)) + 13);
    put3(b, c.off, c.size + k * (U - 4));
    put32(b, c.payload + c.local, first);
  }
  kbtest::write_file(path, b);
}

// --- raw HTML in rendered pages ---------------------------------------------------------

// The tags cmark-gfm writes for Markdown itself; anything else in its
// output came from the page as raw HTML.
const std::set<std::string> kMarkdownTags = {"p",          "h1", "h2", "h3",    "h4",    "h5",     "h6",  "ul",   "ol",
                                             "li",         "em", "a",  "table", "thead", "tbody",  "tr",  "th",   "td",
                                             "blockquote", "hr", "br", "code",  "pre",   "strong", "del", "input"};

// Renders every .md under `dir` with cmark-gfm --unsafe (what a careless
// site would do) and fails on any tag Markdown itself does not make, an
// event-handler attribute, or a javascript: link.
void check_no_raw_html(const std::string& dir) {
  const std::vector<std::string> candidates = {"/usr/bin/cmark-gfm", "/usr/local/bin/cmark-gfm"};
  std::string cmark;
  for (const auto& c : candidates)
    if (::access(c.c_str(), X_OK) == 0) cmark = c;
  if (cmark.empty()) {
    WARN("cmark-gfm not installed: the rendering check is skipped (make deps installs it)");
    return;
  }
  size_t pages = 0;
  const std::regex tag(R"(<(/?)([A-Za-z][A-Za-z0-9-]*))"), handler(R"(<[^>]*\son[a-z]+\s*=)"), js(R"(href="\s*javascript:)");
  for (const auto& f : kbtest::files_in(dir, ".md")) {
    ++pages;
    const auto r = kbtest::run(cmark, {"--unsafe", "-e", "table", "-e", "strikethrough", "-e", "autolink", f.string()});
    REQUIRE(r.exit_code == 0);
    INFO(f.string());
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), tag); it != std::sregex_iterator(); ++it) {
      std::string name = (*it)[2];
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      INFO("raw HTML tag <" << name << "> in the rendered page");
      CHECK(kMarkdownTags.count(name) == 1);
    }
    CHECK_FALSE(std::regex_search(r.out, handler));
    CHECK_FALSE(std::regex_search(r.out, js));
    CHECK(r.out.find('\x1b') == std::string::npos);
  }
  CHECK(pages > 0);
}

// --- the pages under Sphinx + MyST ----------------------------------------------------

const char* const kSentinel = "sentinel: kbc and kbq must never touch this file\n";

// Builds the generated pages under `dir` with Sphinx + MyST and the site's
// own configuration, and fails on anything in the HTML the generator did
// not write: a script, an element a directive or a role made, a file of the
// machine included (the sentinel files' text is the canary), or a text of
// `shows` not shown as written.
void check_myst_inert(const std::string& dir, const std::string& tmp, const std::vector<std::string>& shows) {
  std::vector<std::string> args = {
      kRoot + "/tests/site/check_myst_inert.py",         "--conf", kRoot + "/site", "--src", dir, "--out", tmp + "/myst-site", "--canary",
      std::string(kSentinel, std::strlen(kSentinel) - 1)};
  for (const auto& s : shows) {
    args.push_back("--shows");
    args.push_back(s);
  }
  const auto r = kbtest::run(kbtest::python3(), args);
  if (r.exit_code == 77 || r.exit_code == 127)
    return kbtest::skip("the Sphinx + MyST build of the pages is skipped: " +
                        (r.out.empty() ? std::string("no python3") : r.out.substr(0, r.out.find('\n'))));
  INFO("tests/site/check_myst_inert.py:\n" << r.out << r.err);
  CHECK(r.exit_code == 0);
}

// "OLD" "NEW" → the two decoded pieces.
std::pair<std::string, std::string> two_pieces(const std::string& spec) {
  size_t i = spec.find('"'), j = i + 1;
  while (j < spec.size() && spec[j] != '"') j += spec[j] == '\\' ? 2 : 1;
  return {kbtest::decode_bytes(spec.substr(i, j - i + 1)), kbtest::decode_bytes(spec.substr(j + 1))};
}

// --- a code snapshot -------------------------------------------------------------------

// The files `kbc extract-code` writes for a snapshot, with one recipe:
// what a hostile case then breaks (a fact, a link) one thing at a time.
void write_snapshot(const std::string& dir) {
  fs::create_directories(dir);
  kbtest::write_file(dir + "/snapshot.tsv",
                     "# a test snapshot\nkey\tvalue\nrepo\tNVIDIA-NeMo/Megatron-Bridge\n"
                     "commit\tabcdef1234567890abcdef1234567890abcdef12\ndate\t2026-08-22\nextractor\t1\n");
  kbtest::write_file(
      dir + "/recipes.tsv",
      "name\tkind\ttarget\tdefined_at\texported_at\talias_of\tmode\tfamily\tmodel\ttask\tgpus\thardware\tprecision\tvariant\tstep\n"
      "llama3_8b_pretrain_config\tlibrary\tm.llama3.llama3_8b_pretrain_config\tsrc/m/llama3.py:10\tsrc/m/__init__.py:1\t\t"
      "pretrain\t\t\t\t\t\t\t\t\n");
  std::string facts = "target\tfield\tstate\tvalue\ttype\tat\tnote\n";
  for (const auto& [field, value] : std::vector<std::pair<std::string, std::string>>{{"cp", "1"},
                                                                                     {"ep", "1"},
                                                                                     {"global_batch_size", "128"},
                                                                                     {"micro_batch_size", "1"},
                                                                                     {"pp", "1"},
                                                                                     {"seq_length", "8192"},
                                                                                     {"tp", "2"}})
    facts += "m.llama3.llama3_8b_pretrain_config\t" + field + "\tvalue\t" + value + "\tint\tsrc/m/llama3.py:20\t\n";
  facts += "m.llama3.llama3_8b_pretrain_config\tvp\tdefault\tnone\tnone\tsrc/m/llama3.py:21\t\n";
  kbtest::write_file(dir + "/recipe-facts.tsv", facts);
  kbtest::write_file(dir + "/launcher.tsv", "section\titem\tattribute\tvalue\tat\n");
  kbtest::write_file(dir + "/config-keys.tsv", "key\tkind\tclass\ttype\tdefault\tsource\tat\n");
  kbtest::write_file(dir + "/datasets.tsv", "preset\tattribute\tvalue\tat\tnote\n");
  kbtest::write_file(dir + "/providers.tsv", "provider\tfield\tstate\tvalue\ttype\tat\tnote\ttargets\n");
}

// --- one case ---------------------------------------------------------------------------

void copy_tree(const std::string& from, const std::string& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

void chown_tree(const std::string& root) {
  ::lchown(root.c_str(), 65534, 65534);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator(); it.increment(ec))
    ::lchown(it->path().c_str(), 65534, 65534);
}

// A copy of `program` that the unprivileged user can run: the clone (and
// the build in it) may be in a folder only its owner can enter (mktemp -d,
// root's home), where nobody gets exit 127. The copy is in its own folder
// of the system temporary folder, mode 0755; "" with `why` when it cannot
// be made or nobody cannot run it.
std::string reachable_copy(const std::string& program, const kbtest::TempDir& bin, std::string& why) {
  std::error_code ec;
  const fs::path copy = bin.path() / fs::path(program).filename();
  fs::copy_file(program, copy, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    why = "cannot copy " + program + " to " + copy.string() + ": " + ec.message();
    return {};
  }
  if (::chmod(bin.str().c_str(), 0755) != 0 || ::chmod(copy.c_str(), 0755) != 0) {
    why = "cannot make " + copy.string() + " reachable: " + std::strerror(errno);
    return {};
  }
  kbtest::Limits probe;
  probe.unprivileged = true;
  probe.seconds = 30 * kSlowdown;
  const auto r = kbtest::run_limited(copy.string(), {"--version"}, probe);
  if (r.exit_code != 0) {
    why = "nobody cannot run " + copy.string() + " (exit " + std::to_string(r.exit_code) + "): is " + bin.str() +
          " on a file system mounted noexec, or not reachable by others?";
    return {};
  }
  return copy.string();
}

void run_case(const fs::path& file) {
  const auto directives = parse_case(kbtest::read_file(file.string()));
  kbtest::TempDir dir("kbtests-hostile");
  const std::string tmp = dir.str();
  std::string program;
  std::vector<std::string> args;
  kbtest::Limits limits;
  limits.seconds = 10;
  long mib = 256;
  int exit_code = -1;
  long stdout_lines = -1;
  bool stdout_cmark = false;
  std::vector<std::string> stderr_lines, stderr_tail, stdout_has, writes, keeps, cmark_dirs, myst_dirs, myst_shows;
  std::vector<std::pair<std::string, std::string>> kinds;
  std::vector<std::string> chmods;  // applied last (after the folder is handed to nobody)

  for (const auto& d : directives) {
    INFO(file.filename().string() << ":" << d.line << ": " << d.key);
    const std::string v = substitute(d.value, tmp);
    if (d.key == "kb") {
      fs::create_directories(fs::path(under(tmp, v)).parent_path());
      fs::copy_file(std::string(KB_BINARY_DIR) + "/kb.sqlite", under(tmp, v), fs::copy_options::overwrite_existing);
    } else if (d.key == "sql") {
      const auto colon = v.find(": ");
      kb::Db db(under(tmp, v.substr(0, colon)), kb::Db::Mode::ReadWriteCreate);
      add_fact_functions(db);
      db.exec(v.substr(colon + 2));
    } else if (d.key == "overflow-cycle") {
      overflow_cycle(under(tmp, v));
    } else if (d.key == "sources") {
      copy_tree(kRoot + "/tests/fixtures/good/minimal", under(tmp, v));
      copy_tree(kRoot + "/kb-sources/data", under(tmp, v) + "/data");
    } else if (d.key == "snapshot") {
      write_snapshot(under(tmp, v));
    } else if (d.key == "write" || d.key == "append") {
      const auto [name, bytes] = path_and_rest(v);
      const std::string path = under(tmp, name);
      fs::create_directories(fs::path(path).parent_path());
      std::ofstream out(path, std::ios::binary | (d.key == "append" ? std::ios::app : std::ios::trunc));
      out << kbtest::decode_bytes(bytes);
    } else if (d.key == "big-file") {
      const auto colon = v.find(": ");
      std::ofstream out(under(tmp, v.substr(0, colon)), std::ios::binary | std::ios::trunc);
      const std::string line(1023, 'x');
      for (long n = std::stol(v.substr(colon + 2)); n > 0; n -= 1024) out << line << '\n';
    } else if (d.key == "mkdir") {
      fs::create_directories(under(tmp, v));
    } else if (d.key == "mkfifo") {
      REQUIRE(::mkfifo(under(tmp, v).c_str(), 0644) == 0);
    } else if (d.key == "device") {
      // A copy of /dev/full's node, so that a regression replaces this one,
      // never the system's. Only root can make one, and only root could
      // replace a device in /dev: as another user the case has nothing to show.
      if (::geteuid() != 0) return kbtest::skip("making a device node needs root (and so does replacing one)");
      REQUIRE(::mknod(under(tmp, v).c_str(), S_IFCHR | 0666, ::makedev(1, 7)) == 0);
    } else if (d.key == "symlink") {
      const auto arrow = v.find(" -> ");
      fs::create_directories(fs::path(under(tmp, v.substr(0, arrow))).parent_path());
      fs::remove(under(tmp, v.substr(0, arrow)));  // a file of the copied sources it replaces
      fs::create_symlink(v.substr(arrow + 4), under(tmp, v.substr(0, arrow)));
    } else if (d.key == "chmod") {
      chmods.push_back(v);
    } else if (d.key == "sentinel") {
      fs::create_directories(fs::path(under(tmp, v)).parent_path());
      kbtest::write_file(under(tmp, v), kSentinel);
    } else if (d.key == "replace") {
      const auto [name, rest] = path_and_rest(v);
      const auto [from, to] = two_pieces(rest);
      std::string text = kbtest::read_file(under(tmp, name));
      REQUIRE(text.find(from) != std::string::npos);
      for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
      kbtest::write_file(under(tmp, name), text);
    } else if (d.key == "run") {
      program = v == "kbq" ? KBQ_PATH : v == "kbc" ? KBC_PATH : v;
    } else if (d.key == "arg") {
      args.push_back(v);
    } else if (d.key == "arg-bytes") {
      args.push_back(kbtest::decode_bytes(v));
    } else if (d.key == "env") {
      limits.env.push_back(v);
    } else if (d.key == "stdin") {
      limits.stdin_path = under(tmp, v);
    } else if (d.key == "unprivileged") {
      limits.unprivileged = true;
    } else if (d.key == "seconds") {
      limits.seconds = std::stod(v);
    } else if (d.key == "mib") {
      mib = std::stol(v);
    } else if (d.key == "exit") {
      exit_code = std::stoi(v);
    } else if (d.key == "stderr") {
      stderr_lines.push_back(v);
    } else if (d.key == "stderr-tail") {
      stderr_tail.push_back(v);
    } else if (d.key == "stdout-has") {
      stdout_has.push_back(v);
    } else if (d.key == "stdout-lines") {
      stdout_lines = std::stol(v);
    } else if (d.key == "writes") {
      writes.push_back(under(tmp, v));
    } else if (d.key == "keeps") {
      keeps.push_back(under(tmp, v));
    } else if (d.key == "kind") {
      const auto space = v.rfind(' ');
      kinds.emplace_back(under(tmp, v.substr(0, space)), v.substr(space + 1));
    } else if (d.key == "cmark") {
      cmark_dirs.push_back(under(tmp, v));
    } else if (d.key == "stdout-cmark") {
      stdout_cmark = true;
    } else if (d.key == "myst") {
      myst_dirs.push_back(under(tmp, v));
    } else if (d.key == "myst-shows") {
      myst_shows.push_back(d.value);
    } else {
      FAIL("unknown directive '" << d.key << "' at line " << d.line);
    }
  }
  REQUIRE_FALSE(program.empty());
  REQUIRE(exit_code >= 0);
  std::optional<kbtest::TempDir> bin;
  if (limits.unprivileged && ::geteuid() == 0) {
    bin.emplace("kbtests-bin");
    std::string why;
    program = reachable_copy(program, *bin, why);
    if (program.empty()) return kbtest::skip("this case runs kbc as nobody, and " + why);
  }
  // Every case has a sentinel beside its files.
  kbtest::write_file(tmp + "/sentinel.txt", kSentinel);
  if (limits.unprivileged && ::geteuid() == 0) chown_tree(tmp);
  for (const auto& c : chmods) {
    const auto space = c.rfind(' ');
    REQUIRE(::chmod(under(tmp, c.substr(0, space)).c_str(), static_cast<mode_t>(std::stoi(c.substr(space + 1), nullptr, 8))) == 0);
  }
  const auto before = snapshot(tmp);

  limits.seconds *= kSlowdown;
  limits.max_kib = mib * 1024 * kMemoryFactor;
  const auto r = kbtest::run_limited(program, args, limits);

  const auto after = snapshot(tmp);
  for (const auto& c : chmods) ::chmod(under(tmp, c.substr(0, c.rfind(' '))).c_str(), 0755);  // so the folder can be removed
  INFO("exit " << r.exit_code << ", signal " << r.signal << ", " << r.seconds << " s, peak " << r.peak_kib / 1024 << " MiB");
  INFO("stderr:\n" << r.err.substr(0, 3000));
  INFO("stdout (first 1000 bytes):\n" << r.out.substr(0, 1000));
  CHECK(r.signal == 0);
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(r.over_memory);
  CHECK(r.exit_code == exit_code);

  // Exactly the expected stderr lines (or its last lines).
  const auto err = lines_of(r.err);
  if (stderr_tail.empty()) {
    CHECK(err.size() == stderr_lines.size());
    for (size_t i = 0; i < std::min(err.size(), stderr_lines.size()); ++i) {
      INFO("stderr line " << i + 1 << " should match: " << stderr_lines[i]);
      CHECK(glob_match(stderr_lines[i], err[i]));
    }
  } else {
    REQUIRE(stderr_lines.empty());
    REQUIRE(err.size() >= stderr_tail.size());
    const size_t skip = err.size() - stderr_tail.size();
    for (size_t i = 0; i < stderr_tail.size(); ++i) {
      INFO("stderr line " << skip + i + 1 << " should match: " << stderr_tail[i]);
      CHECK(glob_match(stderr_tail[i], err[skip + i]));
    }
  }
  if (stdout_has.empty() && stdout_lines < 0) CHECK(r.out.empty());
  if (stdout_lines >= 0) CHECK(static_cast<long>(lines_of(r.out).size()) == stdout_lines);
  for (const auto& s : stdout_has) {
    INFO("stdout should contain: " << s);
    CHECK(r.out.find(substitute(s, tmp)) != std::string::npos);
  }
  // Nothing raw reaches the terminal.
  for (const std::string* s : {&r.out, &r.err}) {
    const auto at = kb::find_control(*s);
    INFO("a raw control character at byte " << (at ? *at : 0));
    CHECK_FALSE(at.has_value());
    CHECK(s->find('\r') == std::string::npos);
  }

  // Nothing written, changed or deleted under {tmp} but where the case allows.
  auto allowed = [&](const std::string& path) {
    return std::any_of(writes.begin(), writes.end(), [&](const std::string& w) { return path == w || path.rfind(w + "/", 0) == 0; });
  };
  for (const auto& [path, what] : before) {
    if (allowed(path)) continue;
    auto it = after.find(path);
    INFO("changed or removed: " << path);
    CHECK((it != after.end() && it->second == what));
  }
  for (const auto& [path, what] : after) {
    if (allowed(path)) continue;
    INFO("created: " << path);
    CHECK(before.count(path) == 1);
  }
  for (const auto& path : keeps) {
    INFO("must be kept unchanged: " << path);
    REQUIRE(before.count(path) == 1);
    CHECK((after.count(path) == 1 && after.at(path) == before.at(path)));
  }
  for (const auto& [path, kind] : kinds) {
    struct stat st {};
    const bool exists = ::lstat(path.c_str(), &st) == 0;
    const std::string is = !exists                ? "absent"
                           : S_ISLNK(st.st_mode)  ? "link"
                           : S_ISREG(st.st_mode)  ? "file"
                           : S_ISDIR(st.st_mode)  ? "dir"
                           : S_ISFIFO(st.st_mode) ? "fifo"
                           : S_ISCHR(st.st_mode)  ? "char-device"
                                                  : "other";
    INFO(path << " is " << is);
    CHECK(is == kind);
  }
  for (const auto& d : cmark_dirs) check_no_raw_html(d);
  if (stdout_cmark) {
    fs::create_directories(tmp + "/stdout-cmark");
    kbtest::write_file(tmp + "/stdout-cmark/stdout.md", r.out);
    check_no_raw_html(tmp + "/stdout-cmark");
  }
  for (const auto& d : myst_dirs) check_myst_inert(d, tmp, myst_shows);
}

}  // namespace

KB_REGISTER_CASES(register_hostile) {
  for (const auto& f : kbtest::files_in(kRoot + "/tests/fixtures/hostile", ".case"))
    kbtest::add_case("hostile: " + f.stem().string(), "[hostile]", [f] { run_case(f); });
}

TEST_CASE("hostile: the corpus holds every required case", "[hostile]") {
  // Each case is one hostile input (docs/security.md's threats), by name:
  // deleting or renaming one fails here instead of lowering a count.
  std::set<std::string> have;
  for (const auto& f : kbtest::files_in(kRoot + "/tests/fixtures/hostile", ".case")) have.insert(f.stem().string());
  for (const char* required : {"batch-failing-kb-line",
                               "batch-invalid-utf8-kinds",
                               "batch-invalid-utf8-last-line",
                               "batch-line-10mb",
                               "batch-line-at-byte-limit",
                               "batch-line-at-word-limit",
                               "batch-long-line-with-spaces",
                               "batch-long-line-without-spaces",
                               "build-output-device",
                               "build-output-fifo",
                               "build-output-new",
                               "build-output-symlink",
                               "check-seq-override-largest",
                               "check-seq-override-next-pow2",
                               "cli-kbc-unknown-option-escapes",
                               "cli-kbq-argument-escapes",
                               "cli-kbq-unknown-option-escapes",
                               "dump-fifo",
                               "dump-nul-in-value",
                               "dump-quote-in-table-name",
                               "extract-code-crash-check",
                               "extract-code-crash-write",
                               "extract-code-killed",
                               "generate-check-site-link",
                               "generate-first-run-keeps-site-files",
                               "generate-manifest-removes-only-its-own",
                               "generate-myst-colon-fences",
                               "generate-myst-directive-fences",
                               "generate-myst-roles",
                               "generate-myst-targets-comments",
                               "generate-planted-file-link",
                               "generate-planted-temp-link",
                               "generate-raw-html-and-fences",
                               "generate-site-link-sweep",
                               "generate-temp-folder",
                               "kb-100mb-value",
                               "kb-at-the-limits",
                               "kb-column-renamed",
                               "kb-command-template-backtick",
                               "kb-command-template-injection",
                               "kb-constraint-changed",
                               "kb-device",
                               "kb-entity-json-not-object",
                               "kb-fact-state-unknown",
                               "kb-fact-value-missing",
                               "kb-fifo",
                               "kb-gpus-per-node-zero",
                               "kb-huge-gpu-count",
                               "kb-invisible-characters-json",
                               "kb-invisible-characters-text",
                               "kb-key-rows-over-limit",
                               "kb-label-placeholder-nesting",
                               "kb-label-placeholders",
                               "kb-launcher-option-injection",
                               "kb-lexicon-compiled-count-huge",
                               "kb-lexicon-compiled-missing",
                               "kb-lexicon-compiled-not-a-lexicon",
                               "kb-lexicon-compiled-old-format",
                               "kb-lexicon-compiled-truncated",
                               "kb-lexicon-long-phrases",
                               "kb-lexicon-million-rows",
                               "kb-lexicon-word-long",
                               "kb-model-key-newline",
                               "kb-multi-node-flags-substitution",
                               "kb-name-not-a-name",
                               "kb-overflow-cycle",
                               "kb-parallel-size-zero",
                               "kb-parallel-size-zero-show",
                               "kb-perf-compiled-count-huge",
                               "kb-perf-compiled-missing",
                               "kb-perf-compiled-old-format",
                               "kb-perf-compiled-truncated",
                               "kb-recipes-compiled-missing",
                               "kb-rows-compiled-key-not-a-name",
                               "kb-rows-compiled-language-missing",
                               "kb-rows-compiled-missing",
                               "kb-rows-compiled-truncated",
                               "kb-rows-compiled-other-query",
                               "kb-recipes-compiled-name-not-a-name",
                               "kb-recipes-compiled-truncated",
                               "kb-perf-fit-factor-out-of-range",
                               "kb-perf-fit-pairs-negative",
                               "kb-perf-flops-infinite",
                               "kb-planner-change-order-partial",
                               "kb-planner-key-missing",
                               "kb-planner-value-not-a-number",
                               "kb-recipe-name-option",
                               "kb-seq-len-overflow",
                               "kb-table-bytes-over-limit",
                               "kb-terminal-escapes-error",
                               "kb-terminal-escapes-json",
                               "kb-terminal-escapes-markdown",
                               "kb-terminal-escapes-text",
                               "kb-text-in-integer-column",
                               "kb-text-value-over-limit",
                               "kb-trigger",
                               "kb-unknown-table",
                               "kb-value-at-limit",
                               "kb-value-megabyte-joined",
                               "kb-value-over-limit",
                               "kb-view-for-table",
                               "kb-wal-mode",
                               "query-argument-at-byte-limit",
                               "query-argument-not-utf8",
                               "query-argument-over-byte-limit",
                               "query-argument-over-word-limit",
                               "query-check-hardware-not-utf8",
                               "query-check-value-over-limit",
                               "query-kb-empty-path",
                               "query-markdown-fence-and-block-markers",
                               "query-markdown-kb-text-escaped",
                               "query-markdown-listing-and-sources",
                               "query-markdown-sources-report",
                               "query-override-value-quoted",
                               "query-show-name-at-limit",
                               "query-show-name-over-limit",
                               "src-bidi-control",
                               "src-code-fact-absurd-numbers",
                               "src-code-fact-not-a-number",
                               "src-code-fact-parallel-zero",
                               "src-code-file-fifo-and-dev-zero",
                               "src-code-file-link-outside",
                               "src-code-file-too-large",
                               "src-code-folder-link",
                               "src-code-recipe-name-not-a-name",
                               "src-code-snapshot-folder-link",
                               "src-control-character",
                               "src-control-character-in-data",
                               "src-data-fifo",
                               "src-data-folder-link-outside",
                               "src-data-gpu-and-model-numbers",
                               "src-data-link-to-dev-zero",
                               "src-fifo-source",
                               "src-file-name-with-newline",
                               "src-invisible-separator-in-data",
                               "src-invisible-zero-width-space",
                               "src-language-code-path",
                               "src-lexicon-word-long",
                               "src-markdown-too-large",
                               "src-nesting-on-one-line",
                               "src-oversized-source",
                               "src-quick-ref-gpus-out-of-range",
                               "src-source-link-inside",
                               "src-source-link-outside",
                               "src-table-4000-columns",
                               "src-table-65-columns-in-quote",
                               "src-table-cells-per-document",
                               "src-table-row-many-cells",
                               "src-unreadable-folder"}) {
    INFO(required);
    CHECK(have.count(required) == 1);
  }
}

TEST_CASE("hostile: every limit of base/limits.hpp is listed in docs/security.md", "[hostile]") {
  // "Every limit it names must be enforced in code" and every limit the
  // code enforces is listed with its value: a limit added without its row
  // fails here.
  const std::string limits = kbtest::read_file(kRoot + "/base/limits.hpp"), doc = kbtest::read_file(kRoot + "/docs/security.md");
  const std::regex constant(R"(inline constexpr [^=]*\b(k[A-Z][A-Za-z0-9]*) =)");
  size_t n = 0;
  for (auto it = std::sregex_iterator(limits.begin(), limits.end(), constant); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    if (name == "kMiB") continue;  // a unit
    ++n;
    INFO(name << " is not in docs/security.md");
    CHECK(doc.find("`" + name + "`") != std::string::npos);
  }
  CHECK(n >= 30);
}

TEST_CASE("hostile: the harness's time and memory ceilings hold", "[hostile]") {
  // A process past the memory ceiling is killed and reported, not waited for.
  kbtest::Limits l;
  l.seconds = 20;
  l.max_kib = 64 * 1024;
  const auto r = kbtest::run_limited("/usr/bin/python3", {"-c", "x = b'x' * (512 << 20); import time; time.sleep(30)"}, l);
  if (r.exit_code == 127 && r.err.empty()) return kbtest::skip("no /usr/bin/python3");
  CHECK(r.over_memory);
  CHECK(r.seconds < 15);
  l.max_kib = 0;
  l.seconds = 1;
  const auto t = kbtest::run_limited("/bin/sleep", {"30"}, l);
  CHECK(t.timed_out);
  CHECK(t.seconds < 5);
}

TEST_CASE("hostile: escaping keeps text, colour codes and JSON values, and nothing raw", "[hostile]") {
  CHECK(kb::escape_controls("plain\ttext\nline 2 — 日本語") == "plain\ttext\nline 2 — 日本語");
  CHECK(kb::escape_controls("a\x1b]0;x\x07z") == "a\\x1b]0;x\\x07z");
  CHECK(kb::escape_controls("a\nb", kb::EscapeNewlines::Yes) == "a\\nb");
  CHECK(kb::escape_controls("\xc2\x9b"
                            "2J \xe2\x80\xae"
                            "x \xff") == "\\u009b2J \\u202ex \\xff");
  CHECK(kb::escape_controls_keeping("\x1b[1mbold\x1b[0m \x1b[2J", {"\x1b[1m", "\x1b[0m"}) == "\x1b[1mbold\x1b[0m \\x1b[2J");
  CHECK(kb::escape_json_controls("{\"a\": \"x\xc2\x9by\x7f\"}") == "{\"a\": \"x\\u009by\\u007f\"}");
  CHECK(kb::find_control("ok\r\n\tfine") == std::nullopt);
  CHECK(kb::find_control("bad \x1b") == std::optional<size_t>(4));
}

TEST_CASE("hostile: invisible characters are Unicode's class, escaped in text and JSON", "[hostile]") {
  // Cc, Cf, Zl, Zp and the default-ignorable code points (base/unicode_gen.cpp).
  for (const int cp : {0x200B, 0x200C, 0x200D, 0x200E, 0x200F,  0x2028,  0x2029,  0xFEFF, 0x061C, 0x00AD, 0x2060,
                       0x2066, 0x202E, 0x3164, 0x115F, 0xE0001, 0xE0041, 0x1D173, 0x0001, 0x009B, 0x007F})
    CHECK(kb::is_control(static_cast<char32_t>(cp)));
  // Visible text, tab and line feed, and the variation selectors (the emoji
  // form of a sign the sources use: "⚠️") are not.
  for (const int cp : {0x0041, 0x00E9, 0x3042, 0x4E2D, 0x00A0, 0x3000, 0x2014, 0x00D7, 0xFE0F, 0xFE00, 0xE0100, 0x1F600, 0x0009, 0x000A})
    CHECK_FALSE(kb::is_control(static_cast<char32_t>(cp)));
  CHECK(kb::escape_controls("a\u200Bb\u2028c\uFEFFd\u061Ce\u200F") == "a\\u200bb\\u2028c\\ufeffd\\u061ce\\u200f");
  CHECK(kb::escape_controls("tag\U000E0041") == "tag\\U000e0041");
  CHECK(kb::escape_controls("\u26A0\uFE0F") == "\u26A0\uFE0F");
  // JSON: \u escapes of UTF-16 code units, a surrogate pair past U+FFFF.
  CHECK(kb::escape_json_controls("\"a\u2029b\U000E0041\"") == "\"a\\u2029b\\udb40\\udc41\"");
  CHECK(kb::find_control("zero\u200Bwidth") == std::optional<size_t>(4));
}

TEST_CASE("hostile: every control is found at every offset of printable text, and is_control is the table's class", "[hostile]") {
  // base/escape.cpp tests printable ASCII eight bytes at a time and the
  // Basic Multilingual Plane through a bit set: each control, at each
  // offset of a word, after ASCII or after CJK text, is still escaped.
  const std::string ascii(40, 'x');
  for (const std::string& prefix : {std::string(), std::string("\xE6\x97\xA5\xE6\x9C\xAC")}) {
    std::vector<std::pair<std::string, std::string>> controls;  // the raw character, its JSON escape
    for (int b = 0; b < 0x20; ++b)
      if (b != '\t' && b != '\n') controls.emplace_back(std::string(1, static_cast<char>(b)), "");
    controls.emplace_back("\x7f", "\\u007f");
    controls.emplace_back("\xc2\x85", "\\u0085");
    controls.emplace_back("\xe2\x80\x8b", "\\u200b");
    controls.emplace_back("\xef\xbb\xbf", "\\ufeff");
    for (const auto& [raw, json] : controls)
      for (std::size_t at = 0; at <= 17; ++at) {
        const std::string text = prefix + ascii.substr(0, at) + raw + ascii.substr(at);
        INFO("control " << kb::escape_controls(raw) << " at " << at);
        CHECK(kb::escape_controls(text) != text);
        CHECK(kb::escape_json_controls_owned(text) == kb::escape_json_controls(text));
        if (!json.empty()) CHECK(kb::escape_json_controls(text) == prefix + ascii.substr(0, at) + json + ascii.substr(at));
      }
    CHECK(kb::escape_json_controls(prefix + ascii) == prefix + ascii);
    CHECK(kb::escape_json_controls_owned(prefix + ascii) == prefix + ascii);
  }
  // Three-byte sequences are decoded in place: a surrogate, an overlong
  // form and a cut sequence are still invalid, each byte replaced.
  CHECK(kb::escape_json_controls("\"a\xED\xA0\x80z\"") == "\"a\\ufffd\\ufffd\\ufffdz\"");
  CHECK(kb::escape_json_controls("\"a\xE0\x80\x80z\"") == "\"a\\ufffd\\ufffd\\ufffdz\"");
  CHECK(kb::escape_json_controls("\"a\xE3\x80") == "\"a\\ufffd\\ufffd");
  CHECK(kb::escape_controls("a\xED\xA0\x80z") == "a\\xed\\xa0\\x80z");
  // The whole code space against the ranges the class is generated as.
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    bool in_table = (cp < 0x20 && cp != '\t' && cp != '\n') || (cp >= 0x7F && cp <= 0x9F);
    for (const auto& [lo, hi] : kb::kInvisibleRanges) in_table = in_table || (cp >= lo && cp <= hi);
    if (kb::is_control(cp) != in_table) FAIL("is_control(U+" << std::hex << static_cast<unsigned>(cp) << ") != the table's class");
  }
}

TEST_CASE("hostile: a statement past its budget is stopped with a clear error", "[hostile]") {
  kbtest::TempDir dir("kbtests-hostile");
  const std::string path = dir / "x.sqlite";
  {
    kb::Db db(path, kb::Db::Mode::ReadWriteCreate);
    db.exec("CREATE TABLE t(x)");
  }
  kb::Db db = kb::Db::open_untrusted(path, 1000);
  kb::Stmt st(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c");
  try {
    st.step();
    FAIL("an endless statement ran to its end");
  } catch (const kb::SqliteError& e) {
    CHECK(std::string(e.what()).find("ran past its budget") != std::string::npos);
  }
}

TEST_CASE("hostile: command text from a KB holds no shell syntax; values are quoted", "[hostile]") {
  // What the real commands hold passes.
  CHECK_FALSE(
      kb::shell_problem("uv run python -m torch.distributed.run --nnodes=2 --node_rank=$NODE_RANK "
                        "--rdzv_endpoint=$MASTER_ADDR:29500 --nproc_per_node=8 scripts/training/run_recipe.py \\\n"
                        "    --recipe llama3_8b_pretrain_config -tp 4 \\\n    'model.x=a b' 'it'\\''s'"));
  // Every kind of shell syntax is named with its byte.
  CHECK(kb::shell_problem("run x; id") == std::optional<std::string>("';' at byte 6"));
  for (const char* bad : {"a | b", "a && b", "a > f", "a < f", "$(id)", "${HOME}", "`id`", "a\nb",  "a \\ b", "\"x\"",       "*",
                          "a?",    "~/x",    "#c",    "!1",    "(x)",   "[x]",     "{x}",  "'open", "a\x1b",  "'a\x1b[2Jb'", "caf\xc3\xa9"})
    CHECK(kb::shell_problem(bad).has_value());
  CHECK(kb::shell_word("qwen3_8b_peft_config") == "qwen3_8b_peft_config");
  CHECK(kb::shell_word("x; rm -rf ~") == "'x; rm -rf ~'");
  CHECK(kb::shell_word("it's") == "'it'\\''s'");
  CHECK(kb::shell_word("") == "''");
  CHECK_FALSE(kb::shell_problem(kb::shell_word("$(id); `x` | y")));
  CHECK(kb::is_shell_option("-tp"));
  CHECK(kb::is_shell_option("--context_parallel_size"));
  CHECK(kb::is_shell_option("--dry-run"));
  for (const char* bad : {"tp", "-", "--", "---x", "-tp;id", "--x y", "-$(id)", "--_x"}) CHECK_FALSE(kb::is_shell_option(bad));
}

TEST_CASE("hostile: kbq reads no table the content check leaves out", "[hostile]") {
  // kb::kb_content_problem skips the tables of limits::kKbTablesNotRead
  // (they cost an answer nothing): a statement of the query engine or the
  // query language that read one would read a table no limit bounds.
  std::vector<fs::path> files;
  for (const char* dir : {"query", "base/dsl"})
    for (const auto& e : fs::recursive_directory_iterator(kRoot + "/" + dir))
      if (e.path().extension() == ".cpp" || e.path().extension() == ".hpp") files.push_back(e.path());
  REQUIRE(files.size() > 10);
  for (const auto& f : files) {
    const std::string text = kbtest::read_file(f.string());
    for (const auto& table : kb::limits::kKbTablesNotRead) {
      const std::regex read("(FROM|JOIN)\\s+" + std::string(table) + "\\b", std::regex::icase);
      INFO(f.string() << " reads table " << table);
      CHECK_FALSE(std::regex_search(text, read));
    }
  }
}

TEST_CASE("hostile: the runtime KB holds the tables kbq reads, and no other", "[hostile]") {
  // base/schema.sql marks 'runtime: left out' the tables kbq reads no row
  // of; the runtime KB (the one kbq embeds) holds none of them, the full KB
  // every one, and both pass the checks a --kb file meets.
  std::set<std::string> left_out;
  for (const auto& t : kb::schema::kTables)
    if (!t.runtime) left_out.emplace(t.name);
  REQUIRE(left_out.size() >= 20);
  CHECK(left_out.count("search_data") == 1);  // a shadow table goes with its virtual table
  for (const auto& table : kb::limits::kKbTablesNotRead) CHECK(left_out.count(std::string(table)) == 1);
  for (const auto& i : kb::schema::kIndexes) CHECK(i.runtime == !left_out.count(std::string(i.table)));
  // 'left out, kbc only' (emptied before the derive step) is left out too;
  // the full-text index and its shadow tables among them.
  size_t kbc_only = 0;
  for (const auto& t : kb::schema::kTables) {
    INFO(t.name);
    if (t.kbc_only) CHECK_FALSE(t.runtime);
    kbc_only += t.kbc_only ? 1 : 0;
    if (t.name == "search" || t.name == "search_data" || t.name == "code_facts") CHECK(t.kbc_only);
    if (t.name == "recipe_launch" || t.name == "labels") CHECK_FALSE(t.kbc_only);  // the derive step compiles their rows
  }
  CHECK(kbc_only >= 9);
  for (const char* file : {"kbq.sqlite", "kb.sqlite"}) {
    INFO(file);
    const bool runtime = std::string(file) == "kbq.sqlite";
    kb::Db db(std::string(KB_BINARY_DIR) + "/" + file, kb::Db::Mode::ReadOnly);
    CHECK(kb::kb_structure_problem(db).empty());
    CHECK(kb::kb_content_problem(db).empty());
    CHECK(kb::holds_left_out_tables(db) == !runtime);
    std::set<std::string> tables;
    kb::Stmt st(db, "SELECT name FROM sqlite_schema WHERE type = 'table'");
    while (st.step()) tables.emplace(st.text(0));
    for (const auto& t : kb::schema::kTables) CHECK(tables.count(std::string(t.name)) == (t.runtime || !runtime ? 1U : 0U));
  }
}

TEST_CASE("hostile: the real KB holds a quarter of each limit at most", "[hostile]") {
  // A source change that brings the real KB near a limit of what a KB may
  // hold fails here first, long before kbc build refuses to write it.
  kb::Db db(std::string(KB_BINARY_DIR) + "/kb.sqlite", kb::Db::Mode::ReadOnly);
  for (const auto& l : kb::limits::kKbTableLimits) {
    kb::Stmt st(db, "SELECT count(*) FROM \"" + std::string(l.table) + "\"");
    REQUIRE(st.step());
    INFO("table " << l.table);
    CHECK(st.integer(0) * 4 <= l.rows);
  }
  kb::Stmt lex(db, "SELECT total(length(CAST(word AS BLOB)) + length(CAST(value AS BLOB))) FROM lexicon");
  REQUIRE(lex.step());
  CHECK(lex.real(0) * 4 <= static_cast<double>(kb::limits::kMaxLexiconTextBytes));
  CHECK(kb::kb_content_problem(db).empty());
}
