// A recipe's code facts as the KB reader gives them (Kb::data_of, query/kb/
// kb.cpp read_facts, from its packed value): the fact_fields, code_files and
// fact_values rows are looked up by id, at the row of id n when kbc
// numbered them from 1, by a search otherwise. A KB numbered otherwise
// gives the same facts; a crafted packed value is refused.
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/limits.hpp"
#include "base/packed_facts.hpp"
#include "base/sqlite.hpp"
#include "base/stored_rows.hpp"
#include "process.hpp"
#include "query/kb/kb.hpp"
#include "query/kb/kb_int.hpp"

namespace {

const std::string kKb = std::string(KB_BINARY_DIR) + "/kbq.sqlite";
const std::vector<std::string> kRecipes = {"llama3_70b_sft_config", "qwen3_8b_peft_config", "qwen3_30b_a3b_pretrain_config"};

std::vector<std::string> facts_of(const std::string& kb_path) {
  kbq::Kb kb(kb_path);
  std::vector<std::string> out;
  for (const auto& name : kRecipes) {
    const auto r = kb.recipe(name);
    REQUIRE(r);
    for (const auto& [field, f] : kb.data_of(*r).facts)
      out.push_back(name + " " + field + " " + std::to_string(static_cast<int>(f.state)) + " " + f.value + " " + f.type + " " + f.at);
  }
  return out;
}

// Each recipe's packed facts rewritten by `edit` (base/packed_facts.hpp).
void repack(kb::Db& db, const std::function<void(kb::PackedFact&)>& edit) {
  std::vector<std::pair<long long, std::string>> rows;
  {
    kb::Stmt st(db, "SELECT target_id, facts FROM recipe_facts ORDER BY target_id");
    while (st.step()) rows.emplace_back(st.integer(0), std::string(st.blob(1)));
  }
  kb::Stmt up(db, "UPDATE recipe_facts SET facts = ? WHERE target_id = ?");
  for (const auto& [id, bytes] : rows) {
    std::vector<kb::PackedFact> facts;
    kb::for_each_packed_fact(bytes, [&](const kb::PackedFact& f) {
      facts.push_back(f);
      edit(facts.back());
    });
    up.bind_blob(1, kb::pack_facts(facts)).bind(2, id).run();
  }
}

}  // namespace

TEST_CASE("facts: the same facts whatever ids the fact tables use", "[kb][facts]") {
  const std::vector<std::string> want = facts_of(kKb);
  REQUIRE(want.size() > 100);
  size_t with_line = 0;
  for (const auto& f : want) with_line += f.find(".py:") != std::string::npos;
  CHECK(with_line > 100);

  kbtest::TempDir tmp("kbq-facts");
  const std::string copy = tmp.str() + "/kbq.sqlite";
  std::filesystem::copy_file(kKb, copy);
  {
    kb::Db db(copy, kb::Db::Mode::ReadWriteCreate);
    // Sparse ids in another order of magnitude, the references moved with them.
    for (const char* sql : {"UPDATE fact_values SET id = id * 7 + 100000", "UPDATE fact_fields SET id = id * 3 + 5000",
                            "UPDATE code_files SET id = id * 11 + 900"})
      kb::Stmt(db, sql).run();
    repack(db, [](kb::PackedFact& f) {
      f.value_id = f.value_id * 7 + 100000;
      f.field_id = f.field_id * 3 + 5000;
      if (f.file_id) *f.file_id = *f.file_id * 11 + 900;
    });
    // The dictionaries as kbc stores them (rows_compiled's part 'facts'),
    // from the tables as they are now.
    kb::store_rows_part(db.handle(), "facts",
                        kb::compile_rows(db.handle(), kbq::kb_int::fact_dictionary_queries(), kb::limits::kMaxKbTextBytes));
  }
  CHECK(facts_of(copy) == want);
  {
    // Without the part (an older kbc's KB): read from the tables.
    kb::Db db(copy, kb::Db::Mode::ReadWriteCreate);
    db.exec("DELETE FROM rows_compiled WHERE part = 'facts'");
  }
  CHECK(facts_of(copy) == want);
}

// A recipe's packed facts are read as untrusted input: a value kbc did not
// write is refused naming the recipe's function and where it is wrong.
TEST_CASE("facts: a crafted packed value is refused with its function and where", "[kb][facts][hostile]") {
  kbtest::TempDir tmp("kbq-facts");
  const auto refused = [&](const std::function<void(kb::Db&)>& craft, const std::string& what) {
    const std::string copy = tmp.str() + "/kbq.sqlite";
    std::filesystem::remove(copy);
    std::filesystem::copy_file(kKb, copy);
    {
      kb::Db db(copy, kb::Db::Mode::ReadWriteCreate);
      craft(db);
    }
    CHECK_THROWS_WITH(facts_of(copy), Catch::Contains("recipe_facts.facts of megatron.bridge.recipes.") && Catch::Contains(what));
  };
  refused([](kb::Db& db) { kb::Stmt(db, "UPDATE recipe_facts SET facts = substr(facts, 1, length(facts) - 1)").run(); },
          "the bytes end early");
  refused([](kb::Db& db) { kb::Stmt(db, "UPDATE recipe_facts SET facts = X'02' || substr(facts, 2)").run(); },
          "at byte 1: format 2, not 1");
  refused([](kb::Db& db) { kb::Stmt(db, "UPDATE recipe_facts SET facts = facts || X'00'").run(); }, "bytes after the facts");
  refused([](kb::Db& db) { repack(db, [](kb::PackedFact& f) { f.field_id += 100000; }); }, "is not a fact_fields id");
  refused(
      [](kb::Db& db) {
        repack(db, [](kb::PackedFact& f) {
          f.file_id = 777777;
          f.line = 1;
        });
      },
      "file 777777 is not a code_files id");
  // A count past what the bytes could hold: refused before any fact is read.
  refused([](kb::Db& db) { kb::Stmt(db, "UPDATE recipe_facts SET facts = X'01FFFFFF0F'").run(); }, "past the bytes left");
}
