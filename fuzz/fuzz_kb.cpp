// libFuzzer target: kbq's read path on KB files someone else made. The
// input is a list of mutations applied to a real KB image (the full KB of
// tests/fixtures/good/minimal, small and fast, or the runtime KB of
// kb-sources, the one kbq embeds, picked by the first byte), which is
// written to a file and opened as `kbq --kb` opens it, through the public API (query/kbq.hpp): Engine::open, then
// questions (ask, rendered as text and JSON), show, check, rules and
// sources. Mutations:
//
//   page level   overwrite bytes at (page, offset); flip a byte anywhere;
//                cut the file short (headers, b-tree pages, overflow
//                chains, freelists, the FTS index's blobs)
//   value level  set one column of one row of any table (shadow tables of
//                the full-text index included) to a chosen integer (0,
//                negative, huge), text (JSON-like, control characters,
//                longer than the value limit), NULL, a real or a blob,
//                through SQLite, so the file stays well-formed and only the
//                values are hostile
//
// The engine may refuse the file or a value (an exception with a message);
// it must never crash, hang (libFuzzer -timeout), leak or exhaust memory
// (-rss_limit_mb), and what it renders never holds a raw control character.
// Seeds: a few mutation lists (fuzz/seed_corpus.py, kb/).
#include <sqlite3.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "base/escape.hpp"
#include "base/files.hpp"
#include "compiler/generate/perf_fit.hpp"
#include "compiler/pipeline.hpp"
#include "fuzz_common.hpp"
#include "query/kbq.hpp"

namespace {

namespace fs = std::filesystem;

struct Table {
  std::string name;
  std::vector<std::string> columns;
  std::string key;  // the row's identity: its primary key columns, or rowid (a WITHOUT ROWID table has none)
};

struct Image {
  std::string bytes;
  std::vector<Table> tables;
};

// The kb-sources image is the runtime KB (kbc build --runtime): the tables
// kbq reads and nothing else, 4 MB. The full KB of kb-sources is 35 MB, most
// of it the code facts' history that kbq never opens; copying, rewriting and
// writing it out for every input made the target run 2-4 inputs a second.
struct State {
  Image small, embedded;  // the two base images
  std::string dir, path;  // a private folder and the file the engine opens
};

State& state() {
  static State s;
  return s;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Compiles sources into a KB file and returns its bytes.
std::string compile_image(const std::string& sources, const std::string& out, kb::KbContents contents) {
  kb::CompileOptions opts;
  opts.sources = sources;
  opts.data = kbfuzz::data_dir();
  kb::Diagnostics diags;
  if (!kb::build_kb(opts, out, diags, kb::store_perf_derivation, contents)) {
    diags.print(stderr);
    std::fprintf(stderr, "fuzz_kb: cannot compile %s\n", sources.c_str());
    std::abort();
  }
  return read_all(out);
}

std::string sql_name(const std::string& ident) {
  std::string out = "\"";
  for (char c : ident) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::vector<Table> load_tables(const std::string& path) {
  std::vector<Table> tables;
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) tables.push_back({reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), {}, {}});
  sqlite3_finalize(st);
  for (auto& t : tables) {
    sqlite3_prepare_v2(db, "SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", -1, &st, nullptr);
    sqlite3_bind_text(st, 1, t.name.c_str(), -1, SQLITE_TRANSIENT);
    std::map<int, std::string> pk_columns;  // by position in the primary key
    while (sqlite3_step(st) == SQLITE_ROW) {
      t.columns.push_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
      if (const int pk = sqlite3_column_int(st, 1); pk > 0) pk_columns[pk] = sql_name(t.columns.back());
    }
    sqlite3_finalize(st);
    for (const auto& [pk, column] : pk_columns) t.key += (t.key.empty() ? "" : ", ") + column;
    if (t.key.empty()) t.key = "rowid";
  }
  sqlite3_close(db);
  return tables;
}

// Reads the input front to back; past its end, zeros.
struct Reader {
  const std::uint8_t* p;
  std::size_t n, i = 0;
  bool done() const { return i >= n; }
  std::uint8_t u8() { return i < n ? p[i++] : 0; }
  std::uint32_t u16() { return static_cast<std::uint32_t>(u8()) << 8 | u8(); }
  std::uint32_t u32() { return u16() << 16 | u16(); }
  std::uint64_t u64() { return static_cast<std::uint64_t>(u32()) << 32 | u32(); }
  std::string bytes(std::size_t len) {
    std::string out;
    while (len-- > 0 && i < n) out += static_cast<char>(p[i++]);
    return out;
  }
};

// One value-level mutation, through SQLite on an in-memory copy.
void set_value(std::string& image, const std::vector<Table>& tables, Reader& in) {
  if (tables.empty()) return;
  const Table& t = tables[in.u8() % tables.size()];
  if (t.columns.empty()) return;
  const std::string& column = t.columns[in.u8() % t.columns.size()];
  const std::uint32_t row = in.u16();
  const std::uint8_t kind = in.u8();
  if (image.empty()) return;  // cut to nothing: no database to update

  sqlite3* db = nullptr;
  sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nullptr);
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(image.size()));
  std::memcpy(copy, image.data(), image.size());
  if (sqlite3_deserialize(db, "main", copy, static_cast<sqlite3_int64>(image.size()), static_cast<sqlite3_int64>(image.size()),
                          SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) != SQLITE_OK) {
    sqlite3_close(db);
    return;
  }
  const std::string sql = "UPDATE " + sql_name(t.name) + " SET " + sql_name(column) + " = ? WHERE (" + t.key + ") IN (SELECT " + t.key +
                          " FROM " + sql_name(t.name) + " LIMIT 1 OFFSET (? % max(1, (SELECT count(*) FROM " + sql_name(t.name) + "))))";
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK) {
    std::string text;
    switch (kind % 10) {
      case 0:
        sqlite3_bind_int64(st, 1, static_cast<sqlite3_int64>(in.u64()));
        break;
      case 1:
        sqlite3_bind_int64(st, 1, static_cast<int>(in.u8() % 8) - 2);
        break;
      case 2:
        sqlite3_bind_int64(st, 1, 0);
        break;
      case 3:
        sqlite3_bind_int64(st, 1, in.u8() % 2 ? INT64_MAX : INT64_MIN);
        break;
      case 4:
        text = in.bytes(in.u8());
        sqlite3_bind_text(st, 1, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
        break;
      case 5:
        sqlite3_bind_null(st, 1);
        break;
      case 6: {
        double d = 0;
        const std::uint64_t bits = in.u64();
        std::memcpy(&d, &bits, sizeof d);
        sqlite3_bind_double(st, 1, d);
        break;
      }
      case 7:
        text = in.bytes(in.u8());
        sqlite3_bind_blob(st, 1, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
        break;
      case 8: {
        static const char* kJsonish[] = {"{}", "[]", "{\"a\":1}", "{\"command\":[1]}", "[1,", "\"x\"", "{\"a\":{\"b\":{}}}", "null"};
        text = kJsonish[in.u8() % 8];
        sqlite3_bind_text(st, 1, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
        break;
      }
      default:
        // Long text: up to 2 MiB of one byte (past the 1 MiB value limit).
        text.assign(static_cast<std::size_t>(in.u8()) * 8192 + 1, static_cast<char>(in.u8()));
        sqlite3_bind_text(st, 1, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
        break;
    }
    sqlite3_bind_int64(st, 2, row);
    sqlite3_step(st);
    sqlite3_finalize(st);
    sqlite3_int64 size = 0;
    if (unsigned char* out = sqlite3_serialize(db, "main", &size, 0)) {
      image.assign(reinterpret_cast<const char*>(out), static_cast<std::size_t>(size));
      sqlite3_free(out);
    }
  }
  sqlite3_close(db);
}

void mutate(std::string& image, const std::vector<Table>& tables, Reader& in) {
  for (int ops = 0; ops < 16 && !in.done(); ++ops) {
    switch (in.u8() % 4) {
      case 0: {  // page level: overwrite bytes at (page, offset)
        const std::size_t pages = std::max<std::size_t>(1, image.size() / 4096);
        const std::size_t at = (in.u16() % pages) * 4096 + in.u16() % 4096;
        const std::string b = in.bytes(1 + in.u8() % 32);
        for (std::size_t k = 0; k < b.size() && at + k < image.size(); ++k) image[at + k] = b[k];
        break;
      }
      case 1:
        set_value(image, tables, in);
        break;
      case 2: {  // flip a byte anywhere
        if (image.empty()) break;
        const std::size_t at = in.u32() % image.size();
        image[at] = static_cast<char>(image[at] ^ static_cast<char>(in.u8() | 1));
        break;
      }
      default:  // cut the file short (rarely useful, so only a little)
        if (in.u8() < 16 && !image.empty()) image.resize(in.u32() % image.size());
        break;
    }
  }
}

void check_rendered(const std::string& text, const char* what) {
  if (kb::find_control(kb::escape_controls(text)))
    kbfuzz::invariant_failed(std::string(what) + " keeps a raw control character after escaping", text.substr(0, 200));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)kbfuzz::vocab();
  // Removed with its content when the fuzzer exits (static destructors run).
  static const kb::TempDir tmp("fuzz-kb");
  const std::string& dir = tmp.path();
  State& s = state();
  s.dir = dir;
  s.path = dir + "/kb.sqlite";
  const std::string root = KB_SOURCE_DIR;
  s.small.bytes = compile_image(root + "/tests/fixtures/good/minimal", dir + "/small.sqlite", kb::KbContents::Full);
  s.small.tables = load_tables(dir + "/small.sqlite");
  s.embedded.bytes = compile_image(root + "/kb-sources", dir + "/embedded.sqlite", kb::KbContents::Runtime);
  s.embedded.tables = load_tables(dir + "/embedded.sqlite");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  State& s = state();
  Reader in{data, size};
  const std::uint8_t flags = in.u8();
  const Image& base = flags & 1 ? s.embedded : s.small;
  std::string image = base.bytes;
  mutate(image, base.tables, in);
  {
    std::ofstream out(s.path, std::ios::binary | std::ios::trunc);
    out.write(image.data(), static_cast<std::streamsize>(image.size()));
  }
  static const char* kQuestions[] = {"peft qwen3 1 gpu",  "sft 8×h100 16k sequence", "qwen3 の LoRA を 1 GPU で", "mode:sft gpus:16 tp:2",
                                     "moe 64 gpus gb200", "benchmark deepseek",      "pretrain llama3 4 nodes",   "70b long context"};
  static const char* kRecipes[] = {"llama3_8b_pretrain_config", "qwen3_8b_peft_config", "llama3_70b_pretrain_config"};
  try {
    kbq::Engine engine = kbq::Engine::open(s.path);
    kbq::RenderOptions text, json;
    json.format = kbq::Format::Json;
    const kbq::Labels labels = engine.labels("en");
    kbq::AskOptions ask;
    ask.limit = 3;
    for (int q = 0; q < 2; ++q) {
      const auto res = engine.ask(kQuestions[(flags >> (1 + 3 * q)) % 8], ask);
      if (const auto* a = std::get_if<kbq::Answer>(&res)) {
        check_rendered(kbq::render(*a, labels, text), "an answer");
        (void)kbq::render(*a, labels, json);
      }
    }
    const auto shown = engine.show(kRecipes[flags % 3], "en");
    if (const auto* a = std::get_if<kbq::Answer>(&shown)) check_rendered(kbq::render(*a, labels, text), "show");
    if (flags & 0x80) {
      (void)engine.check(kRecipes[(flags >> 2) % 3], 16, {{"model.tensor_model_parallel_size", "4"}}, "h100", "fr");
      (void)kbq::render(engine.rules("ja"), engine.labels("ja"), text);
      (void)kbq::render(engine.sources(), labels, json);
    }
  } catch (const std::exception&) {
    // A refused file or value: what kbq reports as one line, exit 2.
  }
  return 0;
}
