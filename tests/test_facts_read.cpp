// A recipe's code facts as the KB reader gives them (Kb::data_of, query/kb/
// kb.cpp read_facts): the fact_fields, code_files and fact_values rows are
// looked up by id, at the row of id n when kbc numbered them from 1, by a
// search otherwise. A KB numbered otherwise gives the same facts, and a
// site's line reads as SQLite prints it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "base/sqlite.hpp"
#include "process.hpp"
#include "query/kb/kb.hpp"

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

}  // namespace

TEST_CASE("facts: the same facts whatever ids the fact tables use, and a line as SQLite prints it", "[kb][facts]") {
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
    for (const char* sql : {"UPDATE fact_values SET id = id * 7 + 100000", "UPDATE recipe_facts SET value_id = value_id * 7 + 100000",
                            "UPDATE fact_fields SET id = id * 3 + 5000", "UPDATE recipe_facts SET field_id = field_id * 3 + 5000",
                            "UPDATE code_files SET id = id * 11 + 900", "UPDATE recipe_facts SET file_id = file_id * 11 + 900"})
      kb::Stmt(db, sql).run();
  }
  CHECK(facts_of(copy) == want);

  // A line stored as text (a crafted KB: not a number, so the column's
  // integer affinity keeps it text) reads as its text.
  {
    kb::Db db(copy, kb::Db::Mode::ReadWriteCreate);
    kb::Stmt(db, "UPDATE recipe_facts SET line = CAST(line AS TEXT) || 'x' WHERE line IS NOT NULL AND file_id IS NOT NULL").run();
  }
  const std::vector<std::string> texts = facts_of(copy);
  REQUIRE(texts.size() == want.size());
  size_t longer = 0;
  for (size_t i = 0; i < texts.size(); ++i)
    if (texts[i] != want[i]) {
      ++longer;
      CHECK(texts[i].size() == want[i].size() + 1);
      CHECK(texts[i].find(".py:") != std::string::npos);
    }
  CHECK(longer > 100);
}
