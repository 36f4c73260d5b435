// Query results kbc stores for kbq to read without SQL (rows_compiled,
// base/stored_rows.hpp): a stored row answers every column read as the
// statement's row did, whatever the value's type; both KBs hold what
// compiling their tables gives now; and a crafted value is refused, never
// read past or read as another query's rows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "base/checked.hpp"
#include "base/limits.hpp"
#include "base/sqlite.hpp"
#include "base/stored_rows.hpp"
#include "kb_tables.hpp"
#include "process.hpp"
#include "query/kb/kb.hpp"
#include "query/kbq.hpp"

namespace {

// A table of every kind of value SQLite holds, in columns of every declared
// type: a crafted KB can put any value in any column.
kb::Db mixed_db() {
  kb::Db db(":memory:", kb::Db::Mode::ReadWriteCreate);
  db.exec("CREATE TABLE t(a INTEGER, b REAL, c TEXT, d BLOB, e)");
  db.exec(
      "INSERT INTO t VALUES (1, 2.5, 'x', X'00FF', NULL), (-9223372036854775808, 1e300, '12abc', 'text', 7), "
      "('lots', ' 42 ', '', X'', -0.0), (NULL, NULL, NULL, NULL, 0.1), (3.75, '1e3', 'é—日本', 9223372036854775807, '-17'), "
      "(0, 0.0, '0x10', 'nul' || char(0) || 'in', 2.0), (5, 5, printf('%.*c', 100, 'y'), 5, 5)");
  return db;
}

const std::vector<kb::StoredQuery> kQueries = {{"SELECT * FROM t ORDER BY rowid", {}},
                                               {"SELECT c, a + ? FROM t WHERE rowid > ? ORDER BY rowid", {"1", "2"}},
                                               {"SELECT * FROM t WHERE 0", {}}};

// Each column of each row, as every accessor reads it.
template <class Row>
std::vector<std::string> readings(Row& st) {
  std::vector<std::string> out;
  while (st.step())
    for (int c = 0; c < st.columns(); ++c) {
      // In this order: SQLite's type is undefined once a value is converted.
      const int type = st.type(c);
      const bool null = st.is_null(c);
      const long long integer = st.integer(c);
      const double r = st.real(c);
      std::string bits(sizeof r, '\0');
      std::memcpy(bits.data(), &r, sizeof r);
      out.push_back(std::to_string(type) + "|" + std::to_string(integer) + "|" + bits + "|" + std::string(st.view(c)) + "|" +
                    std::to_string(null));
    }
  return out;
}

}  // namespace

TEST_CASE("stored rows: every value reads as the statement's, whatever its type", "[stored-rows]") {
  kb::Db db = mixed_db();
  const std::string bytes = kb::compile_rows(db.handle(), kQueries, kb::limits::kMaxKbTextBytes);
  kb::StoredResults stored(bytes, kb::limits::kMaxKbTextBytes);
  for (const auto& q : kQueries) {
    INFO(q.sql);
    kb::Stmt st(db, q.sql);
    for (size_t i = 0; i < q.params.size(); ++i) st.bind(static_cast<int>(i + 1), q.params[i]);
    const std::vector<std::string> want = readings(st);
    kb::StoredRows rows = stored.next(q);
    CHECK(rows.columns() == st.columns());
    CHECK(readings(rows) == want);
  }
  CHECK_NOTHROW(stored.finish());
  // A column past the row's reads as NULL (SQLite leaves it undefined).
  {
    kb::StoredResults once(bytes, kb::limits::kMaxKbTextBytes);
    kb::StoredRows rows = once.next(kQueries[0]);
    REQUIRE(rows.step());
    for (int c : {-1, rows.columns(), 1000}) {
      CHECK(rows.is_null(c));
      CHECK(rows.integer(c) == 0);
      CHECK(rows.view(c).empty());
    }
  }
  // The checked readers give what they gave for the statement's row.
  kb::StoredResults again(bytes, kb::limits::kMaxKbTextBytes);
  kb::StoredRows rows = again.next(kQueries[0]);
  REQUIRE(rows.step());
  CHECK(kb::kb_int(rows, 0, kb::ValueAt{"t", "a", 2}, 0, 10) == 1);
  REQUIRE(rows.step());
  CHECK_THROWS_WITH(kb::kb_int(rows, 0, kb::ValueAt{"t", "a", 2}, 0, 10),
                    "kb: t.a of '12abc': -9223372036854775808 is out of range (0 to 10)");
  REQUIRE(rows.step());
  CHECK_THROWS_WITH(kb::kb_int(rows, 0, kb::ValueAt{"t", "a", 2}, 0, 10), "kb: t.a of '': text where a whole number belongs");
  REQUIRE(rows.step());
  CHECK_THROWS_WITH(kb::kb_int(rows, 0, kb::ValueAt{"t", "a", 2}, 0, 10), "kb: t.a of '': NULL where a whole number belongs");
}

TEST_CASE("stored rows: the queries must be read as compiled, each whole", "[stored-rows]") {
  kb::Db db = mixed_db();
  const std::string bytes = kb::compile_rows(db.handle(), kQueries, kb::limits::kMaxKbTextBytes);
  {
    kb::StoredResults stored(bytes, kb::limits::kMaxKbTextBytes);
    CHECK_THROWS_AS(stored.next(kQueries[1]), kb::stored::Error);  // another query first
  }
  {
    kb::StoredResults stored(bytes, kb::limits::kMaxKbTextBytes);
    CHECK_THROWS_AS(stored.next({kQueries[0].sql, {"1"}}), kb::stored::Error);  // other parameters
  }
  {
    kb::StoredResults stored(bytes, kb::limits::kMaxKbTextBytes);
    kb::StoredRows rows = stored.next(kQueries[0]);
    CHECK_THROWS_AS(stored.finish(), kb::stored::Error);  // two queries unread
    stored.next(kQueries[1]);
    stored.next(kQueries[2]);
    CHECK_THROWS_AS(stored.next(kQueries[2]), kb::stored::Error);  // none left
  }
  // A text past the limit is refused when compiled, and when read.
  CHECK_THROWS(kb::compile_rows(db.handle(), kQueries, 64));
  kb::StoredResults small(bytes, 64);
  kb::StoredRows rows = small.next(kQueries[0]);
  CHECK_THROWS_AS(readings(rows), kb::stored::Error);
}

TEST_CASE("stored rows: every cut and changed byte is refused or read as another value, never past the bytes", "[stored-rows]") {
  kb::Db db = mixed_db();
  const std::string bytes = kb::compile_rows(db.handle(), kQueries, kb::limits::kMaxKbTextBytes);
  const auto read_all = [&](std::string_view b) {
    kb::StoredResults stored(b, kb::limits::kMaxKbTextBytes);
    size_t values = 0;
    for (const auto& q : kQueries) {
      kb::StoredRows rows = stored.next(q);
      values += readings(rows).size();
    }
    stored.finish();
    return values;
  };
  REQUIRE(read_all(bytes) > 30);
  for (size_t n = 0; n < bytes.size(); ++n) {
    INFO(n);
    CHECK_THROWS_AS(read_all(std::string_view(bytes).substr(0, n)), kb::stored::Error);
  }
  std::mt19937 rng(7);
  size_t refused = 0, read = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string b = bytes;
    for (int k = 1 + i % 3; k-- > 0;) b[rng() % b.size()] = static_cast<char>(rng());
    try {
      read_all(b);
      ++read;
    } catch (const kb::stored::Error&) {
      ++refused;
    }
  }
  CHECK(refused + read == 3000);
  CHECK(refused > 0);
}

TEST_CASE("stored rows: both KBs hold every part's rows as their tables give them now", "[stored-rows]") {
  // The tables are the full KB's: the runtime KB leaves out those it holds
  // the rows of (docs/schema.md).
  const std::string full = std::string(KB_BINARY_DIR) + "/kb.sqlite";
  kb::Db full_db(full, kb::Db::Mode::ReadOnly);
  const auto parts = kbq::Engine::compile_stored_rows(full_db.handle());
  kbtest::check_runtime_tables_absent({"planner", "gpus", "config_keys", "checks", "labels", "memory_params"});
  for (const std::string& file : {full, std::string(KB_BINARY_DIR) + "/kbq.sqlite"}) {
    INFO(file);
    kb::Db db(file, kb::Db::Mode::ReadOnly);
    std::vector<std::string> names, stored_names;
    for (const auto& [part, bytes] : parts) {
      INFO(part);
      names.push_back(part);
      const std::string stored = kb::read_rows_part(db, part);
      CHECK(stored == bytes);
      CHECK(stored.size() < kb::limits::kMaxCompiledRowsBytes / 8);
    }
    // The snapshot, then each language's labels and cited texts; no other part.
    CHECK(names == std::vector<std::string>{"snapshot", "facts", "labels/en", "cited/en", "labels/fr", "cited/fr", "labels/ja", "cited/ja",
                                            "labels/zh", "cited/zh"});
    kb::Stmt st(db, "SELECT DISTINCT part FROM rows_compiled ORDER BY part");
    while (st.step()) stored_names.push_back(st.text(0));
    std::sort(names.begin(), names.end());
    CHECK(stored_names == names);
    CHECK(parts.front().second == kbq::Engine::compile_snapshot(full_db.handle()));
    // And they read: every value the snapshot holds passes its checks.
    kbq::Kb kb(file);
    const kbq::Snapshot& snap = kb.snapshot();
    CHECK(snap.gpus.size() > 5);
    CHECK(snap.flags.size() > 20);
    CHECK_FALSE(snap.settings.base_language.empty());
    CHECK_FALSE(snap.superseded.empty());
  }
}

TEST_CASE("stored rows: a part is stored in chunks and read back joined; a chunk missing is refused", "[stored-rows]") {
  kb::Db db(":memory:", kb::Db::Mode::ReadWriteCreate);
  db.exec(
      "CREATE TABLE rows_compiled (part TEXT NOT NULL, chunk INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (part, chunk)) WITHOUT "
      "ROWID");
  std::string value;
  for (size_t i = 0; i < 2 * kb::limits::kRowsChunkBytes + 5; ++i) value += static_cast<char>(i * 7 % 251);
  kb::store_rows_part(db.handle(), "p", "old, replaced");
  kb::store_rows_part(db.handle(), "p", value);
  kb::store_rows_part(db.handle(), "q", "another part");
  {
    kb::Stmt st(db, "SELECT count(*), max(length(bytes)) FROM rows_compiled WHERE part = 'p'");
    REQUIRE(st.step());
    CHECK(st.integer(0) == 3);
    CHECK(st.integer(1) == static_cast<long long>(kb::limits::kRowsChunkBytes));
  }
  CHECK(kb::read_rows_part(db, "p") == value);
  CHECK(kb::read_rows_part(db, "q") == "another part");
  CHECK(kb::read_rows_part(db, "none").empty());
  db.exec("DELETE FROM rows_compiled WHERE part = 'p' AND chunk = 1");
  CHECK_THROWS_WITH(kb::read_rows_part(db, "p"), "kb: rows_compiled.chunk of 'p': chunk 1 is missing");
  db.exec("UPDATE rows_compiled SET chunk = 1 WHERE part = 'q'");
  CHECK_THROWS_WITH(kb::read_rows_part(db, "q"), "kb: rows_compiled.chunk of 'q': chunk 0 is missing");
}

// An answer reads a language's labels and cited texts from its parts, and
// a language the KB was not compiled from from the tables: the same values
// (here the full KB's, told it has no language).
TEST_CASE("stored rows: a language's labels and cited texts are the tables' whether read stored or not", "[stored-rows]") {
  const std::string file = std::string(KB_BINARY_DIR) + "/kb.sqlite";
  kbtest::TempDir tmp("kbtests-rows");
  const std::string bare = tmp.str() + "/bare.sqlite";
  std::filesystem::copy_file(file, bare);
  std::vector<std::string> keys;
  {
    kb::Db db(bare, kb::Db::Mode::ReadWriteCreate);
    db.exec("DELETE FROM rows_compiled WHERE part != 'snapshot'; UPDATE meta SET value = '' WHERE key = 'languages'");
    kb::Stmt st(db, "SELECT DISTINCT key FROM labels ORDER BY key");
    while (st.step()) keys.push_back(st.text(0));
  }
  REQUIRE(keys.size() > 250);
  kbq::Kb stored(file), tables(bare);
  for (const std::string lang : {"en", "fr", "ja", "zh"}) {
    INFO(lang);
    const kbq::Labels &a = stored.labels(lang), &b = tables.labels(lang);
    size_t same = 0;
    for (const auto& key : keys) same += a(key) == b(key) ? 1 : 0;
    CHECK(same == keys.size());
    const kbq::CitedTexts &x = stored.cited_texts(lang), &y = tables.cited_texts(lang);
    REQUIRE(x.texts.size() == y.texts.size());
    size_t texts = 0;
    for (const auto& [e, list] : x.texts) {
      const auto& other = y.of(e);
      REQUIRE(list.size() == other.size());
      for (size_t i = 0; i < list.size(); ++i) {
        CHECK(list[i].text == other[i].text);
        CHECK(std::tie(list[i].lang, list[i].file, list[i].line, list[i].revision, list[i].winner, list[i].usable, list[i].parts) ==
              std::tie(other[i].lang, other[i].file, other[i].line, other[i].revision, other[i].winner, other[i].usable, other[i].parts));
      }
      texts += list.size();
    }
    CHECK(texts > 40);
  }
}

TEST_CASE("stored rows: a language of the KB without its rows is refused, not answered from empty tables", "[stored-rows]") {
  kbtest::TempDir tmp("kbtests-rows");
  const std::string file = tmp.str() + "/kb.sqlite";
  std::filesystem::copy_file(std::string(KB_BINARY_DIR) + "/kbq.sqlite", file);
  {
    kb::Db db(file, kb::Db::Mode::ReadWriteCreate);
    db.exec("DELETE FROM rows_compiled WHERE part IN ('labels/fr', 'cited/ja')");
  }
  kbq::Kb kb(file);
  CHECK_NOTHROW(kb.labels("en"));
  CHECK_THROWS_WITH(kb.labels("fr"),
                    "kb: rows_compiled.bytes of 'labels/fr': missing: kbc writes the rows of each language an answer reads");
  CHECK_NOTHROW(kb.cited_texts("fr"));
  CHECK_THROWS_WITH(kb.cited_texts("ja"),
                    "kb: rows_compiled.bytes of 'cited/ja': missing: kbc writes the rows of each language an answer reads");
}

// The code facts' dictionaries (the fields and files every recipe's packed
// facts name) come from the part 'facts', or from the tables in a KB
// without it (an older kbc's): every recipe's facts are the same read
// either way, their citations included.
TEST_CASE("stored rows: a recipe's facts are the same with the dictionaries stored or read from the tables", "[stored-rows]") {
  const std::string file = std::string(KB_BINARY_DIR) + "/kbq.sqlite";
  kbtest::TempDir tmp("kbtests-rows");
  const std::string bare = tmp.str() + "/bare.sqlite";
  std::filesystem::copy_file(file, bare);
  {
    kb::Db db(bare, kb::Db::Mode::ReadWriteCreate);
    db.exec("DELETE FROM rows_compiled WHERE part = 'facts'");
  }
  {
    kb::Db db(file, kb::Db::Mode::ReadOnly);
    CHECK_FALSE(kb::read_rows_part(db, "facts").empty());
  }
  kbq::Kb stored(file), tables(bare);
  const auto& recipes = stored.catalog(kbq::RecipeKind::Library).recipes;
  REQUIRE(recipes.size() > 500);
  size_t facts = 0, cited = 0;
  for (size_t i = 0; i < recipes.size(); i += 7) {
    INFO(recipes[i].name);
    const kbq::CodeFacts &a = stored.data_of(recipes[i]).facts, &b = tables.data_of(recipes[i]).facts;
    REQUIRE(a.size() == b.size());
    for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y) {
      CHECK(x->first == y->first);
      CHECK(std::tie(x->second.state, x->second.value, x->second.type, x->second.at) ==
            std::tie(y->second.state, y->second.value, y->second.type, y->second.at));
      cited += x->second.at.empty() ? 0 : 1;
    }
    facts += a.size();
  }
  CHECK(facts > 5000);
  CHECK(cited > facts / 2);
}
