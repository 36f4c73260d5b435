// The issue-3 examples as explicit assertions on kbq's JSON answers, so a
// regression names the fact that broke (the golden files pin the full text).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "process.hpp"

#include "base/schema_version.hpp"

using json = nlohmann::json;

namespace {

json ask(const std::vector<std::string>& args, int expect_exit = 0) {
  std::vector<std::string> a = args;
  a.push_back("--format");
  a.push_back("json");
  const auto r = kbtest::run(KBQ_PATH, a);
  INFO(r.err);
  REQUIRE(r.exit_code == expect_exit);
  return json::parse(r.out);
}

std::vector<std::string> names(const json& j) {
  std::vector<std::string> out;
  for (const auto& r : j["results"]) out.push_back(r["recipe"]);
  return out;
}

const json* override_of(const json& result, const std::string& key) {
  for (const auto& o : result["overrides"])
    if (o["key"] == key) return &o;
  return nullptr;
}

std::string rule_status(const json& result, const std::string& id) {
  for (const auto& r : result["rules"])
    if (r["id"] == id) return r["status"];
  return "absent";
}

}  // namespace

TEST_CASE("peft qwen3 1 gpu: the quick-reference LoRA pick", "[answers]") {
  const auto j = ask({"peft qwen3 1 gpu"});
  REQUIRE(j["schema_version"] == 1);
  const auto& top = j["results"][0];
  CHECK(top["recipe"] == "qwen3_8b_peft_config");
  CHECK(top["layout"]["tp"] == 1);
  CHECK(top["layout"]["pp"] == 1);
  CHECK(top["command"].get<std::string>().find("--nproc_per_node=1") != std::string::npos);
  const std::string ds = top["dataset"];
  CHECK((ds == "squad" || ds == "tulu3"));
}

TEST_CASE("SFT, 8xH100, 16K sequence: llama3_8b_sft_config with CP 2", "[answers]") {
  const auto j = ask({"SFT, 8×H100, 16K sequence"});
  const auto n = names(j);
  REQUIRE(n.size() == 3);
  CHECK(n[0] == "llama3_8b_sft_config");
  CHECK(std::find(n.begin(), n.end(), "qwen3_8b_sft_config") != n.end());
  const auto& top = j["results"][0];
  const json* seq = override_of(top, "model.seq_length");
  const json* cp = override_of(top, "model.context_parallel_size");
  REQUIRE(seq);
  REQUIRE(cp);
  CHECK((*seq)["value"] == "16384");
  CHECK((*seq)["impact"] == "convergence");
  CHECK((*cp)["value"] == "2");
  CHECK((*cp)["impact"] == "execution");
  CHECK(top["layout"]["tp"] == 2);
  CHECK(top["layout"]["cp"] == 2);
  CHECK(top["layout"]["dp"] == 2);
  for (const auto& r : top["rules"]) CHECK(r["status"] == "pass");
  // Revision 4 lists qwen3_8b_sft_config with TP 4 and a 2K sequence (until
  // revision 3 it was known only through the qwen3_*_sft_config pattern):
  // its layout is a number now.
  for (const auto& r : j["results"])
    if (r["recipe"] == "qwen3_8b_sft_config") CHECK(r["facts"]["tp"] == 4);
  // Pattern-row recipes say their TP is a range instead of inventing one.
  const auto qwen = ask({"sft qwen3 14b 8 gpus"});
  bool pattern_seen = false;
  for (const auto& r : qwen["results"])
    if (r["recipe"] == "qwen3_*_sft_config") {
      pattern_seen = true;
      CHECK(r["layout"]["tp"] == "1–8");
    }
  CHECK(pattern_seen);
}

TEST_CASE("first time trying bridge: the revision-3 smoke test", "[answers]") {
  const auto j = ask({"first time trying bridge"});
  const auto& top = j["results"][0];
  CHECK(top["recipe"] == "llama3_8b_pretrain_config");
  CHECK(top["dataset"] == "mock");
  CHECK(top["layout"]["gpus"] == 2);
  bool said = false;
  for (const auto& n : top["notes"]) said = said || n.get<std::string>().find("llama3_8b_sft_config") != std::string::npos;
  CHECK(said);
}

TEST_CASE("llama3 8b 128k pretrain", "[answers]") {
  const auto j = ask({"llama3 8b 128k pretrain"});
  const auto& top = j["results"][0];
  CHECK(top["recipe"] == "llama3_8b_128k_pretrain_config");
  CHECK(top["layout"]["cp"] == 8);
  CHECK(top["layout"]["gpus"] == 16);
}

TEST_CASE("qwen3 moe 30b sft 16 gpus: two nodes, DP and expert DP", "[answers]") {
  const auto j = ask({"qwen3 moe 30b sft 16 gpus"});
  const auto& top = j["results"][0];
  CHECK(top["recipe"] == "qwen3_30b_a3b_sft_config");
  const std::string cmd = top["command"];
  CHECK(cmd.find("--nnodes=2") != std::string::npos);
  CHECK(cmd.find("--nproc_per_node=8") != std::string::npos);
  CHECK(top["layout"]["dp"] == 16);
  // Revision 4 runs it with EP 16 on its 16 GPUs (revision 2 said EP 8 on 8,
  // which left an expert DP of 2): one expert replica.
  CHECK(top["layout"]["edp"] == 1);
  bool kv4 = false, e128 = false;
  for (const auto& r : top["rules"]) {
    const std::string d = r["detail"];
    kv4 = kv4 || d.find("4 kv heads") != std::string::npos;
    e128 = e128 || d.find("128 experts") != std::string::npos;
  }
  CHECK(kv4);
  CHECK(e128);
}

TEST_CASE("throughput benchmark llama3 8b h100: benchmark rows only, with the warning", "[answers]") {
  const auto j = ask({"throughput benchmark llama3 8b h100"});
  const auto& top = j["results"][0];
  CHECK(top["kind"] == "benchmark");
  CHECK(top["recipe"] == "Llama 3 8B");
  CHECK(top["facts"]["min_gpus"] == 8);
  const auto types = top["facts"]["gpu_types"];
  CHECK(std::find(types.begin(), types.end(), "h100") != types.end());
  for (const auto& r : j["results"]) CHECK(r["kind"] == "benchmark");
  CHECK(!top["notes"].empty());
}

TEST_CASE("kbq check: TP 16 on llama3 70B fails two rules, exit 1", "[answers]") {
  const auto j = ask({"check", "llama3_70b_pretrain_config", "--gpus", "64", "model.tensor_model_parallel_size=16"}, 1);
  REQUIRE(j["schema_version"] == 1);  // the same answer object as a question's
  REQUIRE(j["results"].size() == 1);
  const auto& r = j["results"][0];
  CHECK(rule_status(r, "tp_divides_kv_heads") == "fail");
  CHECK(rule_status(r, "tp_within_nvlink") == "fail");
}

TEST_CASE("Chinese and Japanese queries give the same recipes", "[answers]") {
  CHECK(names(ask({"在 1 个 GPU 上使用 LoRA"})) == names(ask({"peft 1 gpu"})));
  const auto ja = ask({"qwen3 の LoRA を 1 GPU で"});
  CHECK(names(ja) == names(ask({"peft qwen3 1 gpu"})));
  CHECK(ja["query"]["lang"] == "ja");
}

TEST_CASE("mock with SFT warns and proposes squad or tulu3", "[answers]") {
  const auto j = ask({"sft llama3 8b dataset:mock"});
  REQUIRE(!j["warnings"].empty());
  const std::string w = j["warnings"][0];
  CHECK(w.find("mock") != std::string::npos);
  CHECK(w.find("squad") != std::string::npos);
  CHECK(j["results"][0]["dataset"] != "mock");
}

TEST_CASE("kbq exit codes", "[answers]") {
  CHECK(kbtest::run(KBQ_PATH, {"sft peft"}).exit_code == 2);
  CHECK(kbtest::run(KBQ_PATH, {"peft qwen3 1 gpu", "--kb", "/nonexistent/kb.sqlite"}).exit_code == 2);
  // An unknown recipe is bad input in show and check alike: exit 2, an error and a hint.
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"show", "no_such_recipe_config"}, {"check", "no_such_recipe_config", "--gpus", "8"}}) {
    const auto r = kbtest::run(KBQ_PATH, args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("kbq: error: unknown recipe 'no_such_recipe_config'") != std::string::npos);
    CHECK(r.err.find("hint: ") != std::string::npos);
  }
  // kbq alone prints its usage with examples (exit 2: nothing was asked).
  const auto bare = kbtest::run(KBQ_PATH, {});
  CHECK(bare.exit_code == 2);
  CHECK(bare.err.find("examples:") != std::string::npos);
  CHECK(bare.err.find("exit codes:") != std::string::npos);
  // --version names the KB's schema version.
  const auto version = kbtest::run(KBQ_PATH, {"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out.find("schema version " + std::to_string(kb::kSchemaVersion)) != std::string::npos);
  CHECK(kbtest::run(KBQ_PATH, {"--help"}).exit_code == 0);
}
