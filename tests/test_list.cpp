// `kbq list`: recipe names with their one-line facts, from the KB. Every
// case runs kbq as a program and checks the listed recipes against the KB
// itself (the recipes table read here with SQLite), so a filter that drops
// or lets through one recipe fails.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "base/sqlite.hpp"
#include "base/text.hpp"
#include "process.hpp"

namespace {

using nlohmann::json;

json list_json(const std::vector<std::string>& args) {
  std::vector<std::string> full{"list"};
  full.insert(full.end(), args.begin(), args.end());
  full.insert(full.end(), {"--format", "json"});
  const auto r = kbtest::run(KBQ_PATH, full);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

// The KB's recipes as kbq embeds them (build/kb.sqlite), by a WHERE clause
// written here with bound values only.
std::set<std::string> kb_names(const std::string& where, const std::vector<std::string>& values) {
  kb::Db db(std::string(KB_BINARY_DIR) + "/kb.sqlite", kb::Db::Mode::ReadOnly);
  kb::Stmt st(db, "SELECT name FROM recipes WHERE " + where);
  for (size_t i = 0; i < values.size(); ++i) st.bind(static_cast<int>(i + 1), values[i]);
  std::set<std::string> out;
  while (st.step()) out.insert(st.text(0));
  return out;
}

std::set<std::string> names(const json& j) {
  std::set<std::string> out;
  for (const auto& r : j["recipes"]) out.insert(r["name"].get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("kbq list with no words lists every recipe the code exports, library and benchmark", "[list]") {
  const json j = list_json({});
  CHECK(names(j) == kb_names("1", {}));
  CHECK(j["count"].get<size_t>() == j["recipes"].size());
}

TEST_CASE("kbq list names every recipe's model by its display name from data, never by its key", "[list]") {
  // models.tsv and models-extra.tsv give each model the recipes train a
  // display name; a model without one printed as its key in capitals
  // ("NEMOTRON 3 NANO 4B").
  const json j = list_json({});
  size_t named = 0;
  for (const auto& r : j["recipes"]) {
    const std::string key = r["model_key"], model = r["model"];
    if (key.empty()) continue;
    INFO(r["name"].get<std::string>() << ": model_key " << key);
    CHECK_FALSE(model.empty());
    CHECK(model != key);
    ++named;
  }
  CHECK(named > 500);
}

TEST_CASE("kbq list's size words match the names' spellings and the models' sizes", "[list]") {
  // "1.3b" is written wan_1_3b in the code, "0.6b" qwen3_600m: the size as a
  // number, not only as a word of the name.
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"wan", "1.3b", "pretrain"}, "wan_1_3b_pretrain_config"},
      {{"qwen3", "0.6b", "sft"}, "qwen3_600m_sft_config"},
      {{"qwen2.5", "1.5b", "sft"}, "qwen25_1p5b_sft_config"},
  };
  for (const auto& [args, name] : cases) {
    INFO(kb::join(args, " "));
    CHECK(names(list_json(args)).count(name) == 1);
  }
}

TEST_CASE("kbq list filters by mode, model and size words read with the query lexicon", "[list]") {
  struct Case {
    std::vector<std::string> args;
    std::string where;  // the same set, in SQL over the KB
    std::vector<std::string> values;
  };
  const std::vector<Case> cases = {
      {{"peft", "qwen3"}, "mode = ? AND (name LIKE 'qwen3\\_%' ESCAPE '\\')", {"peft"}},
      {{"LoRA", "Qwen3"}, "launch_mode = ? AND (name LIKE 'qwen3\\_%' ESCAPE '\\')", {"lora"}},
      {{"sft", "llama3", "8b"}, "mode = ? AND name LIKE 'llama3\\_8b\\_%' ESCAPE '\\'", {"sft"}},
      {{"pretrain"}, "mode = ?", {"pretrain"}},
      {{"--kind", "benchmark"}, "kind = ?", {"benchmark"}},
      {{"--kind", "LIBRARY", "sft"}, "kind = ? AND mode = ?", {"library", "sft"}},
      {{"--kind", "benchmark", "--hardware", "H100"}, "kind = ? AND native_hardware = ?", {"benchmark", "h100"}},
      {{"--hardware", "gb200", "pretrain", "--kind", "library"},
       "kind = ? AND mode = ? AND (native_hardware = ? OR native_hardware = '')",
       {"library", "pretrain", "gb200"}},
  };
  for (const auto& c : cases) {
    INFO(kb::join(c.args, " "));
    const auto listed = names(list_json(c.args));
    CHECK(!listed.empty());
    CHECK(listed == kb_names(c.where, c.values));
  }
}

TEST_CASE("kbq list's text has one line per recipe with its layout, and group headings from the labels", "[list]") {
  const auto r = kbtest::run(KBQ_PATH, {"list", "sft", "llama3", "8b"});
  REQUIRE(r.exit_code == 0);
  const json j = list_json({"sft", "llama3", "8b"});
  for (const auto& rc : j["recipes"]) {
    const std::string name = rc["name"];
    const auto at = r.out.find("  " + name + " ");
    REQUIRE(at != std::string::npos);
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    CHECK(line.find("TP " + std::to_string(rc["tp"].get<long long>())) != std::string::npos);
    CHECK(line.find("seq " + std::to_string(rc["seq_length"].get<long long>())) != std::string::npos);
  }
  size_t library = 0;
  for (const auto& rc : j["recipes"]) library += rc["kind"] == "library" ? 1 : 0;
  CHECK(kb::starts_with(r.out, "Library recipes (" + std::to_string(library) + ")\n"));
  // Another language's labels: the heading is the Japanese one.
  const auto ja = kbtest::run(KBQ_PATH, {"list", "sft", "llama3", "8b", "--lang", "ja"});
  CHECK(ja.out.find("ライブラリのレシピ") != std::string::npos);
}

TEST_CASE("kbq list refuses what it cannot filter by, naming the word, and says when nothing matched", "[list]") {
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"list", "frobnicate"}, 2, "'frobnicate' is not a mode, model, size or word of a recipe name"},
      {{"list", "qwen3", "16k"}, 2, "is not something kbq list filters by"},
      {{"list", "--hardware", "tpu9"}, 2, "unknown GPU type 'tpu9'"},
      {{"list", "--kind", "toy"}, 2, "unknown --kind 'toy'"},
      {{"list", "h100", "--hardware", "gb200"}, 2, "two GPU types"},
      {{"list", "--kind", "benchmark", "peft", "qwen3", "8b", "--hardware", "gb200"}, 1, ""},
  };
  for (const auto& c : cases) {
    INFO(kb::join(c.args, " "));
    const auto r = kbtest::run(KBQ_PATH, c.args);
    CHECK(r.exit_code == c.exit_code);
    CHECK(r.out.empty() == (c.exit_code == 2));
    if (!c.err.empty()) CHECK(r.err.find(c.err) != std::string::npos);
    if (c.exit_code == 2) CHECK(kb::starts_with(r.err, "kbq: error: "));
  }
}
