// Documentation that must agree with the code: every kbq option in --help
// is described in docs/kbq.md, and JSON answers carry every field that
// docs/answer.schema.json marks required.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <set>

#include "process.hpp"

using json = nlohmann::json;

TEST_CASE("kbq --help and docs/kbq.md agree", "[docs]") {
  const std::string doc = kbtest::read_file(std::string(KB_SOURCE_DIR) + "/docs/kbq.md");
  REQUIRE(!doc.empty());
  std::set<std::string> flags;
  for (const char* sub : {"", "show", "check", "rules", "pitfalls", "sources"}) {
    std::vector<std::string> args;
    if (*sub) args.push_back(sub);
    args.push_back("--help");
    const auto r = kbtest::run(KBQ_PATH, args);
    REQUIRE(r.exit_code == 0);
    const std::regex flag("(--[a-z][a-z-]+)");
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), flag); it != std::sregex_iterator(); ++it) flags.insert((*it)[1]);
    if (*sub) CHECK(doc.find(std::string("`") + sub) != std::string::npos);
  }
  REQUIRE(flags.count("--format"));
  for (const auto& f : flags) {
    INFO(f);
    CHECK(doc.find(f) != std::string::npos);
  }
}

namespace {
void check_required(const json& schema, const json& defs, const json& value, const std::string& path) {
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    check_required(defs[ref.substr(ref.rfind('/') + 1)], defs, value, path);
    return;
  }
  if (value.is_null()) {  // allowed only where the type says so ("type": ["object", "null"])
    INFO(path << " is null");
    CHECK((schema.contains("type") && schema["type"].is_array() &&
           std::find(schema["type"].begin(), schema["type"].end(), "null") != schema["type"].end()));
    return;
  }
  if (schema.contains("required"))
    for (const auto& key : schema["required"]) {
      INFO(path + "." + key.get<std::string>());
      CHECK(value.contains(key.get<std::string>()));
    }
  if (schema.contains("properties") && value.is_object())
    for (auto it = schema["properties"].begin(); it != schema["properties"].end(); ++it)
      if (value.contains(it.key())) check_required(it.value(), defs, value[it.key()], path + "." + it.key());
  if (schema.contains("items") && value.is_array())
    for (const auto& v : value) check_required(schema["items"], defs, v, path + "[]");
  if (schema.contains("enum") && !value.is_object() && !value.is_array()) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == value;
    INFO(path << " = " << value.dump());
    CHECK(found);
  }
}
}  // namespace

TEST_CASE("JSON answers follow docs/answer.schema.json", "[docs]") {
  const json schema = json::parse(kbtest::read_file(std::string(KB_SOURCE_DIR) + "/docs/answer.schema.json"));
  for (const char* q :
       {"peft qwen3 1 gpu", "SFT, 8×H100, 16K sequence", "throughput benchmark llama3 8b h100", "qwen3 の LoRA を 1 GPU で"}) {
    const auto r = kbtest::run(KBQ_PATH, {q, "--format", "json"});
    REQUIRE(r.exit_code == 0);
    check_required(schema, schema["$defs"], json::parse(r.out), q);
  }
}
