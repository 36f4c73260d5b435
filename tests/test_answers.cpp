// The issue-3 examples as explicit assertions on kbq's JSON answers, so a
// regression names the fact that broke (the golden files pin the full text).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "base/process.hpp"
#include "base/text.hpp"
#include "base/version.hpp"
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

const json* rule_of(const json& result, const std::string& id) {
  for (const auto& r : result["rules"])
    if (r["id"] == id) return &r;
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
  REQUIRE(j["schema_version"] == 5);
  CHECK(j["verdict"] == "ok");
  const auto& top = j["results"][0];
  CHECK(top["recipe"] == "qwen3_8b_peft_config");
  CHECK(top["layout"]["tp"] == 1);
  CHECK(top["layout"]["pp"] == 1);
  CHECK(top["memory"]["fits"] == true);
  CHECK(top["command"].get<std::string>().find("--nproc_per_node=1") != std::string::npos);
  // The recipe trains on its own packed SQuAD (recipe_launch.data):
  // --dataset would replace that whole config, so none is passed, and a
  // note says what it trains on.
  CHECK(top["dataset"].is_null());
  CHECK(top["command"].get<std::string>().find("--dataset") == std::string::npos);
  bool said = false;
  for (const auto& n : top["notes"]) said = said || n.get<std::string>().find("own data, squad") != std::string::npos;
  CHECK(said);
}

TEST_CASE("SFT, 8xH100, 16K sequence: a long-context SFT recipe at 16384 tokens, CP across 8 GPUs", "[answers]") {
  const auto j = ask({"SFT, 8×H100, 16K sequence"});
  CHECK(j["verdict"] == "ok");
  const auto& top = j["results"][0];
  CHECK(top["mode"] == "sft");
  const auto& L = top["layout"];
  CHECK(L["seq_len"] == 16384);
  CHECK(L["cp"].get<int>() >= 2);
  CHECK(L["tp"].get<int>() * L["pp"].get<int>() * L["cp"].get<int>() * L["dp"].get<int>() == 8);
  CHECK(top["memory"]["fits"] == true);
  for (const auto& r : top["rules"]) CHECK(r["status"] != "fail");
  // The recipe's own sequence differs: the command sets it with the launcher's flag, a convergence change.
  const std::string cmd = top["command"];
  if (top["facts"]["seq_len"] != 16384) {
    CHECK(cmd.find("-sl 16384") != std::string::npos);
    const json* seq = override_of(top, "dataset.seq_length");
    REQUIRE(seq);
    CHECK((*seq)["impact"] == "convergence");
  }
}

TEST_CASE("first time trying bridge: the quick reference's pretraining smoke test on mock data", "[answers]") {
  const auto j = ask({"first time trying bridge"});
  const auto& top = j["results"][0];
  CHECK(top["recipe"] == "llama3_8b_pretrain_config");
  CHECK(top["dataset"].is_null());  // its own mock data: no --dataset
  CHECK(top["command"].get<std::string>().find("--dataset") == std::string::npos);
  // The code's recipe (TP 1, CP 2 on 2 GPUs) does not hold Adam's state in
  // 80 GiB (docs/memory.md, memory-exceptions.tsv): the answer says so.
  CHECK(top["facts"]["native_gpus"] == 2);
  CHECK(top["layout"]["gpus"] == 4);
  bool said = false;
  for (const auto& c : top["caveats"]) said = said || c.get<std::string>().find("2 GPUs") != std::string::npos;
  CHECK(said);
}

TEST_CASE("llama3 8b 128k pretrain: the code's 64-GPU layout", "[answers]") {
  const auto j = ask({"llama3 8b 128k pretrain"});
  const auto& top = j["results"][0];
  CHECK(top["recipe"] == "llama3_8b_128k_pretrain_config");
  CHECK(top["layout"]["tp"] == 4);
  CHECK(top["layout"]["pp"] == 2);
  CHECK(top["layout"]["cp"] == 8);
  CHECK(top["layout"]["gpus"] == 64);
}

TEST_CASE("qwen3 moe 30b sft 16 gpus: two nodes, DP and expert DP", "[answers]") {
  const auto j = ask({"qwen3 moe 30b sft 16 gpus"});
  const auto& top = j["results"][0];
  CHECK(top["recipe"] == "qwen3_30b_a3b_sft_config");
  const std::string cmd = top["command"];
  CHECK(cmd.find("--nnodes=2") != std::string::npos);
  CHECK(cmd.find("--nproc_per_node=8") != std::string::npos);
  CHECK(cmd.find("-ep 16") != std::string::npos);
  CHECK(top["layout"]["ep"] == 16);
  CHECK(top["layout"]["dp"] == 16);
  CHECK(top["layout"]["edp"] == 1);
  // The verdicts' numbers, read as numbers (not from their English words).
  const json* kv = rule_of(top, "tp_divides_kv_heads");
  REQUIRE(kv);
  CHECK((*kv)["enforces"] == "rule/1");
  CHECK((*kv)["numbers"]["tp"] == 1);
  CHECK((*kv)["numbers"]["kv_heads"] == 4);
  CHECK((*kv)["numbers"]["valid"] == json::array({1, 2, 4}));
  const json* experts = rule_of(top, "experts_divisible_by_ep");
  REQUIRE(experts);
  CHECK((*experts)["numbers"]["experts"] == 128);
  CHECK((*experts)["numbers"]["ep"] == 16);
  CHECK((*experts)["numbers"]["per_rank"] == 8);
  const json* world = rule_of(top, "world_size_divisible");
  REQUIRE(world);
  CHECK((*world)["numbers"]["world"] == 16);
  CHECK((*world)["numbers"]["dp"] == 16);
  CHECK((*world)["numbers"]["edp"] == 1);
  const json* memory = rule_of(top, "memory_fits");
  REQUIRE(memory);
  CHECK((*memory)["status"] == "pass");
  CHECK((*memory)["numbers"]["hardware"] == "H100");
  CHECK((*memory)["numbers"]["per_gpu"].get<double>() <= (*memory)["numbers"]["capacity"].get<double>());
  CHECK((*memory)["numbers"]["per_gpu"] == top["memory"]["per_gpu_gib"]);
}

TEST_CASE("throughput benchmark llama3 8b h100: benchmark recipes only, on their own GPUs", "[answers]") {
  const auto j = ask({"throughput benchmark llama3 8b h100"});
  const auto& top = j["results"][0];
  CHECK(top["kind"] == "benchmark");
  CHECK(top["recipe"] == "llama3_8b_pretrain_8gpu_h100_bf16_config");
  CHECK(top["facts"]["native_gpus"] == 8);
  CHECK(top["facts"]["native_hardware"] == "h100");
  CHECK(top["layout"]["gpus"] == 8);
  CHECK(top["batch"]["grad_accum"].get<int>() > 0);
  for (const auto& r : j["results"]) CHECK(r["kind"] == "benchmark");
  CHECK(!top["caveats"].empty());
}

TEST_CASE("kbq check: TP 16 on llama3 70B fails two rules, exit 1", "[answers]") {
  const auto j = ask({"check", "llama3_70b_pretrain_config", "--gpus", "64", "model.tensor_model_parallel_size=16"}, 1);
  REQUIRE(j["schema_version"] == 5);  // the same answer object as a question's
  REQUIRE(j["results"].size() == 1);
  const auto& r = j["results"][0];
  CHECK(rule_status(r, "tp_divides_kv_heads") == "fail");
  CHECK(rule_status(r, "tp_within_nvlink") == "fail");
  CHECK(r["runnable"] == false);
  // Why, as numbers: 16 does not divide Llama 3 70B's 8 KV heads, and one
  // H100 NVLink domain holds 8 GPUs.
  const json* kv = rule_of(r, "tp_divides_kv_heads");
  REQUIRE(kv);
  CHECK((*kv)["numbers"]["tp"] == 16);
  CHECK((*kv)["numbers"]["kv_heads"] == 8);
  CHECK((*kv)["numbers"]["valid"] == json::array({1, 2, 4, 8}));
  const json* nvlink = rule_of(r, "tp_within_nvlink");
  REQUIRE(nvlink);
  CHECK((*nvlink)["enforces"] == "rule/2");
  CHECK((*nvlink)["numbers"]["nvlink"] == 8);
  // A layout that breaks a rule is not sized: the memory verdict says why.
  const json* memory = rule_of(r, "memory_fits");
  REQUIRE(memory);
  CHECK((*memory)["status"] == "unknown");
  CHECK((*memory)["numbers"]["reason"].is_string());
}

TEST_CASE("kbq check judges a mixed_precision override by what the code's registry builds, on the user's GPU", "[answers]") {
  // training/mixed_precision.py (067f987df): :285 bf16_with_fp8_current_scaling_mixed (fp8_recipe tensorwise),
  // :255 bf16_with_mxfp8_mixed (mxfp8, Blackwell only: :51), :405 bf16_with_nvfp4_mixed (fp4 e2m1); the
  // hyphen spelling is registered too (:176-179). data/precisions.tsv: the architectures that run each.
  struct Case {
    std::string value, hardware, precision;
    bool runs;
  };
  for (const Case& k : std::vector<Case>{{"bf16_with_fp8_current_scaling_mixed", "a100", "FP8 current scaling", false},
                                         {"bf16_with_fp8_current_scaling_mixed", "h100", "FP8 current scaling", true},
                                         {"bf16-with-mxfp8-mixed", "h100", "MXFP8", false},
                                         {"bf16_with_mxfp8_mixed", "b200", "MXFP8", true},
                                         {"bf16_with_nvfp4_mixed", "a100", "NVFP4", false},
                                         {"fp16_mixed", "a100", "FP16", true}}) {
    CAPTURE(k.value, k.hardware);
    const auto j =
        ask({"check", "llama3_8b_pretrain_config", "--gpus", "8", "--hardware", k.hardware, "mixed_precision=" + k.value}, k.runs ? 0 : 1);
    const auto& r = j["results"][0];
    CHECK(rule_status(r, "precision_runs") == (k.runs ? "pass" : "fail"));
    const json* rule = rule_of(r, "precision_runs");
    REQUIRE(rule);
    CHECK((*rule)["detail"].get<std::string>().find(k.precision) != std::string::npos);
    CHECK((*rule)["detail"].get<std::string>().find("training/mixed_precision.py:") != std::string::npos);
    // The override set it, not the recipe's code.
    CHECK((*rule)["detail"].get<std::string>().find("set by the override mixed_precision=" + k.value) != std::string::npos);
    CHECK((*rule)["detail"].get<std::string>().find("set by the code") == std::string::npos);
    // The recipe's own BF16 is replaced, and the answer says by what.
    bool noted = false;
    for (const auto& n : r["notes"]) noted = noted || n.get<std::string>().find("in place of the recipe's BF16") != std::string::npos;
    CHECK(noted);
    CHECK(r["runnable"] == k.runs);
  }
  // null is None to the runner's override parser: no precision to judge, the recipe's own stands.
  const auto none = ask({"check", "llama3_8b_pretrain_config", "--gpus", "8", "--hardware", "a100", "mixed_precision=null"});
  CHECK(rule_status(none["results"][0], "precision_runs") == "pass");
  CHECK((*rule_of(none["results"][0], "precision_runs"))["detail"].get<std::string>().find("set by the code") != std::string::npos);
  // The override says what it replaces (the recipe sets the str bf16_mixed: recipes/common.py:130), and one
  // that restates it changes nothing.
  auto override_of = [](const json& result, const std::string& key) {
    for (const auto& o : result["overrides"])
      if (o["key"] == key) return o;
    return json();
  };
  const auto fp8 = ask({"check", "llama3_8b_pretrain_config", "--gpus", "8", "mixed_precision=bf16_with_fp8_current_scaling_mixed"});
  const json changed = override_of(fp8["results"][0], "mixed_precision");
  CHECK(changed["recipe_value"] == "bf16_mixed");
  CHECK(changed["changed"] == true);
  const auto same = ask({"check", "llama3_8b_pretrain_config", "--gpus", "8", "mixed_precision=bf16_mixed"});
  const json pinned = override_of(same["results"][0], "mixed_precision");
  CHECK(pinned["recipe_value"] == "bf16_mixed");
  CHECK(pinned["changed"] == false);
}

TEST_CASE("a question that asks for the largest model ranks by size among the recipes that fit, and says so", "[answers]") {
  auto parts_of = [](const json& result) {
    std::vector<std::string> names;
    for (const auto& p : result["score_parts"]) names.push_back(p["name"]);
    return names;
  };
  auto has = [](const std::vector<std::string>& v, const char* s) { return std::find(v.begin(), v.end(), s) != v.end(); };
  for (const char* q : {"biggest model lora 1 gpu", "le plus gros modèle en LoRA sur 1 GPU", "1 GPU で LoRA できる最大のモデル",
                        "1 张 GPU 上 LoRA 的最大的模型"}) {
    CAPTURE(q);
    const auto j = ask({q, "--limit", "5"});
    REQUIRE(!j["results"].empty());
    CHECK(has(parts_of(j["results"][0]), "size"));
    // Every recipe that fits and follows the first has no larger model: the size part's key never
    // falls below the first's among the fitting ones.
    int top = 0;
    for (const auto& p : j["results"][0]["score_parts"])
      if (p["name"] == "size") top = p["points"];
    for (const auto& r : j["results"])
      if (r["runnable"] == true)
        for (const auto& p : r["score_parts"])
          if (p["name"] == "size") CHECK(p["points"].get<int>() >= top);
    CHECK(j["results"][0]["recipe"] == "qwen3_32b_peft_config");
  }
  CHECK(ask({"biggest model lora 1 gpu"})["headline"].get<std::string>().find("the largest model first, as asked") != std::string::npos);
  // Any other question carries no size part.
  CHECK(!has(parts_of(ask({"lora 1 gpu"})["results"][0]), "size"));
}

TEST_CASE("Chinese and Japanese queries give the same recipes", "[answers]") {
  CHECK(names(ask({"在 1 个 GPU 上使用 LoRA"})) == names(ask({"peft 1 gpu"})));
  const auto ja = ask({"qwen3 の LoRA を 1 GPU で"});
  CHECK(names(ja) == names(ask({"peft qwen3 1 gpu"})));
  CHECK(ja["query"]["lang"] == "ja");
}

TEST_CASE("mock with SFT: the launcher rejects it, the answer says so, proposes squad and keeps the recipe's own data", "[answers]") {
  const auto j = ask({"sft llama3 8b dataset:mock"});
  const auto& top = j["results"][0];
  bool said = false;
  for (const auto& c : top["caveats"]) {
    const std::string w = c;
    said = said || (w.find("'mock'") != std::string::npos && w.find("squad") != std::string::npos);
  }
  CHECK(said);
  // The refused preset is not swapped for another nobody asked for: the
  // recipe's own data (packed SQuAD) stays, with no --dataset.
  CHECK(top["dataset"].is_null());
  CHECK(top["command"].get<std::string>().find("--dataset") == std::string::npos);
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
  // kbq alone prints its usage with examples (exit 2: nothing was asked):
  // the one CLI11 makes from the option definitions, the same as --help's.
  const auto bare = kbtest::run(KBQ_PATH, {});
  const auto help = kbtest::run(KBQ_PATH, {"--help"});
  CHECK(bare.exit_code == 2);
  CHECK(bare.err == help.out);
  CHECK(bare.err.rfind("kbq: ", 0) == 0);
  CHECK(bare.err.find("\nUsage: kbq [OPTIONS] [query...] [SUBCOMMAND]\n") != std::string::npos);
  for (const char* sub : {"show", "check", "rules", "pitfalls", "sources"})
    CHECK(bare.err.find(std::string("\n  ") + sub + " ") != std::string::npos);
  for (const char* flag : {"--format FORMAT:{text,markdown,json,slurm}", "--lang", "--limit", "--kb", "--explain", "--version", "--batch"})
    CHECK(bare.err.find(flag) != std::string::npos);
  CHECK(bare.err.find("examples:") != std::string::npos);
  CHECK(bare.err.find("exit codes:") != std::string::npos);
  // --format takes the names of kbq::kFormatNames; another is a usage error naming them.
  const auto yaml = kbtest::run(KBQ_PATH, {"--format", "yaml", "peft qwen3 1 gpu"});
  CHECK(yaml.exit_code == 2);
  CHECK(yaml.err.rfind("kbq: error: --format: 'yaml' is not one of text, markdown, json, slurm\n", 0) == 0);
  CHECK(yaml.out.empty());
  for (const auto& [format, first] :
       std::vector<std::pair<std::string, std::string>>{{"json", "{"}, {"markdown", "#"}, {"text", "Recipes for: "}})
    CHECK(kbtest::run(KBQ_PATH, {"--format", format, "peft qwen3 1 gpu"}).out.rfind(first, 0) == 0);
  // --version names the KB's schema version.
  const auto version = kbtest::run(KBQ_PATH, {"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out.find("schema version " + std::to_string(kb::kSchemaVersion)) != std::string::npos);
  // Both programs print the one version of CMakeLists.txt's project().
  CHECK(version.out.rfind(std::string("kbq ") + kb::kVersion + "\n", 0) == 0);
  CHECK(kbtest::run(KBC_PATH, {"--version"}).out.rfind(std::string("kbc ") + kb::kVersion + "\n", 0) == 0);
  CHECK(kbtest::run(KBQ_PATH, {"--help"}).exit_code == 0);
}

namespace {
int g_closed_pipe = -1;  // the write end of a pipe whose read end is closed
bool stdout_to_closed_pipe() { return ::dup2(g_closed_pipe, 1) == 1; }
}  // namespace

TEST_CASE("kbq output errors: a closed pipe ends quietly with 0, a full disk is an error with 2", "[answers]") {
  {
    // The reader is gone before kbq writes: the write fails with EPIPE.
    int p[2];
    REQUIRE(::pipe(p) == 0);
    ::close(p[0]);
    g_closed_pipe = p[1];
    kb::RunOptions o;
    o.err = kb::Stream::Pipe;
    o.in_child = stdout_to_closed_pipe;
    const kb::RunResult r = kb::run({KBQ_PATH, "peft qwen3 1 gpu"}, o);
    ::close(p[1]);
    INFO(r.err);
    CHECK(r.status.code == 0);
    CHECK(r.err.empty());
  }
  {
    // /dev/full: every write fails with ENOSPC.
    const auto r = kbtest::run("/bin/sh", {"-c", "exec \"$0\" 'peft qwen3 1 gpu' > /dev/full", KBQ_PATH});
    CHECK(r.exit_code == 2);
    CHECK(r.err == "kbq: error: cannot write the answer: No space left on device\n");
  }
}

// The query language's own warnings (a typo, a typo read as a word, a GPU
// without data) are worded in the answer's language, from the answer labels
// warn.typo / warn.corrected / warn.unknown_gpu, never left in English.
TEST_CASE("the query language's warnings are in the answer's language", "[answers][lang]") {
  struct Row {
    const char* lang;
    const char* question;
    const char* warning;  // what the label says, filled
  };
  const Row rows[] = {
      {"en", "lora qwen3 8b 1 gpu sqaud", "unknown word 'sqaud'; did you mean 'squad'?"},
      {"fr", "lora qwen3 8b 1 gpu sqaud", "mot inconnu 'sqaud' ; vouliez-vous dire 'squad' ?"},
      {"ja", "lora qwen3 8b 1 gpu sqaud", "不明な語 'sqaud': 'squad' のことですか？"},
      {"zh", "lora qwen3 8b 1 gpu sqaud", "未知的词 'sqaud'：您是指 'squad' 吗？"},
      {"en", "sft lamma 3.1 8b 8 gpus", "read 'lamma' as 'llama'"},
      {"fr", "sft lamma 3.1 8b 8 gpus", "'lamma' lu comme 'llama'"},
      {"zh", "sft lamma 3.1 8b 8 gpus", "已将 'lamma' 读作 'llama'"},
      {"ja", "lora qwen3 8b rtx 3080", "GPU 'rtx 3080' は kbq のデータにありません（メモリと対応精度が不明）"},
      {"fr", "lora qwen3 8b rtx 3080", "le GPU 'rtx 3080' n'est pas dans les données de kbq"},
      // The GPU that stands in for it is named as such, never "no GPU type in the question".
      {"en", "lora qwen3 8b rtx 3080", "H100 assumed in its place"},
      {"fr", "lora qwen3 8b rtx 3080", "H100 supposé à sa place"},
      {"ja", "lora qwen3 8b rtx 3080", "代わりに H100 を仮定"},
      {"zh", "lora qwen3 8b rtx 3080", "改为假定 H100"},
  };
  for (const auto& row : rows) {
    INFO(row.lang << ": " << row.question);
    const auto r = kbtest::run(KBQ_PATH, {row.question, "--lang", row.lang, "--format", "json"});
    const json j = json::parse(r.out);
    bool found = false;
    for (const auto& w : j["warnings"]) {
      const std::string text = w;
      found = found || text.rfind(row.warning, 0) == 0;
      if (std::string(row.lang) != "en") {
        CHECK(text.find("unknown word") == std::string::npos);
        CHECK(text.find("is not in kbq's data") == std::string::npos);
      }
      if (std::string(row.question).find("rtx 3080") != std::string::npos) {
        CHECK(text.rfind("no GPU type in the question", 0) != 0);
        CHECK(text.find("aucun type de GPU") == std::string::npos);
      }
    }
    CHECK(found);
  }
}

// A GPU count whose data parallelism cannot keep the recipe's global batch
// (12 GPUs, GBS 512 with CP 2: DP 6, 510) is a convergence change; the
// answer then names the nearest counts that keep the batch, and each of
// them does (asked again, the same recipe runs with the recipe's batch).
TEST_CASE("a batch the GPU count changes names the GPU counts that keep it", "[answers]") {
  struct Row {
    const char* question;  // with {n}: the GPU count
    long long asked, recipe_gbs;
  };
  const Row rows[] = {{"pretrain llama3 8b on {n} A100", 12, 512}, {"sft qwen3 8b {n} h100", 24, 32}, {"sft llama3 8b on {n} h100", 12, 8}};
  auto question = [](std::string q, long long n) { return q.replace(q.find("{n}"), 3, std::to_string(n)); };
  for (const auto& row : rows) {
    INFO(question(row.question, row.asked));
    const auto j = ask({question(row.question, row.asked)});
    const auto& top = j["results"][0];
    REQUIRE(j["verdict"] == "ok");
    CHECK(top["batch"]["gbs"] != row.recipe_gbs);
    std::vector<long long> counts;
    for (const auto& cav : top["caveats"]) {
      const std::string text = cav;
      const auto at = text.find("holds on ");
      if (at == std::string::npos) continue;
      std::istringstream in(text.substr(at + 9));
      std::string word;
      while (in >> word && word != "×")
        if (std::isdigit(static_cast<unsigned char>(word[0]))) counts.push_back(std::stoll(word));
    }
    REQUIRE(counts.size() == 2);
    CHECK(counts[0] < row.asked);
    CHECK(counts[1] > row.asked);
    for (long long n : counts) {
      INFO(question(row.question, n));
      const auto k = ask({question(row.question, n)});
      CHECK(k["verdict"] == "ok");
      CHECK(k["results"][0]["recipe"] == top["recipe"]);
      CHECK(k["results"][0]["batch"]["gbs"] == row.recipe_gbs);
    }
  }
}

// Not possible on the asked GPUs, and not with the memory lever there
// either: when the lever (data/planner.tsv memory_lever, full activation
// recompute) runs the recipe on fewer GPUs than it needs without it, that
// comes first among what fits instead, with the lever in its command.
TEST_CASE("not possible: the memory lever's fewest GPUs before more GPUs without it", "[answers]") {
  const auto j = ask({"pretrain llama3 405b on 8 h100"}, 1);
  REQUIRE(j["verdict"] == "not_possible");
  const long long without = j["min_gpus"];
  REQUIRE(j["alternatives"].size() >= 2);
  const auto& first = j["alternatives"][0];
  CHECK(first["kind"] == "recompute");
  CHECK(first["recipe"] == "llama31_405b_pretrain_config");
  CHECK(first["gpus"] < without);
  bool lever = false;
  for (const auto& x : first["argv"]) lever = lever || x == "model.recompute_granularity=full";
  CHECK(lever);
  CHECK(j["alternatives"][1]["kind"] == "more_gpus");
  CHECK(j["alternatives"][1]["gpus"] == without);
}

// Full recompute alone does not fit the asked GPU, with the optimizer's
// moments on the CPU as well it does (data/planner.tsv optimizer_lever):
// that comes first, on the user's own GPU, with both levers in its command
// and its memory sized as the run will be (the FP32 master shard stays:
// 1.7B x 4 bytes); recompute on more GPUs follows it.
TEST_CASE("not possible: the optimizer offload lever on the same GPU before more GPUs", "[answers]") {
  const auto j = ask({"sft qwen3 1.7b on my 4090"}, 1);
  REQUIRE(j["verdict"] == "not_possible");
  REQUIRE(j["alternatives"].size() >= 2);
  const auto& first = j["alternatives"][0];
  CHECK(first["kind"] == "offload");
  CHECK(first["recipe"] == "qwen3_1p7b_sft_config");
  CHECK(first["gpus"] == 1);
  std::set<std::string> argv;
  for (const auto& x : first["argv"]) argv.insert(x.get<std::string>());
  CHECK(argv.count("model.recompute_granularity=full") == 1);
  CHECK(argv.count("optimizer.optimizer_cpu_offload=true") == 1);
  CHECK(argv.count("optimizer.optimizer_offload_fraction=1.0") == 1);
  CHECK(j["alternatives"][1]["kind"] == "recompute");
  CHECK(j["alternatives"][1]["gpus"] > 1);
  // kbq check sizes the same overrides the same way.
  const auto k = ask({"check", "qwen3_1p7b_sft_config", "--gpus", "1", "--hardware", "rtx4090", "model.recompute_granularity=full",
                      "model.recompute_method=uniform", "model.recompute_num_layers=1", "optimizer.optimizer_cpu_offload=true",
                      "optimizer.optimizer_offload_fraction=1.0"});
  const auto& m = k["results"][0]["memory"];
  CHECK(m["fits"] == true);
  const auto plain = ask({"check", "qwen3_1p7b_sft_config", "--gpus", "1", "--hardware", "rtx4090", "model.recompute_granularity=full",
                          "model.recompute_method=uniform", "model.recompute_num_layers=1"},
                         1);
  // Adam's two FP32 moments of three FP32 tensors leave the GPU.
  CHECK(m["parts"]["optimizer"].get<double>() ==
        Approx(plain["results"][0]["memory"]["parts"]["optimizer"].get<double>() / 3).epsilon(0.01));
}

// Bridge's own measurement (docs/training/cpu-offloading.md:43 at
// 067f987df): optimizer offload at fraction 1.0 saves 15.3 GB on
// Qwen3-30B-A3B at TP2 PP2 EP4. kbq's optimizer part drops by the moments'
// share of it on 16 GPUs (DP 4), within 5 % of that figure.
TEST_CASE("memory: optimizer CPU offload saves what Bridge measured", "[answers]") {
  const std::vector<std::string> layout = {"check",
                                           "qwen3_30b_a3b_pretrain_config",
                                           "--gpus",
                                           "16",
                                           "--hardware",
                                           "h100",
                                           "model.tensor_model_parallel_size=2",
                                           "model.pipeline_model_parallel_size=2",
                                           "model.expert_model_parallel_size=4"};
  auto offload = layout;
  offload.push_back("optimizer.optimizer_cpu_offload=true");
  offload.push_back("optimizer.optimizer_offload_fraction=1.0");
  const double before = ask(layout)["results"][0]["memory"]["parts"]["optimizer"].get<double>();
  const double after = ask(offload)["results"][0]["memory"]["parts"]["optimizer"].get<double>();
  const double saved_gb = (before - after) * 1024.0 * 1024.0 * 1024.0 / 1e9;
  CHECK(saved_gb == Approx(15.3).epsilon(0.05));
  // The fraction alone (MCore's default optimizer_cpu_offload=False) offloads nothing.
  auto fraction_only = layout;
  fraction_only.push_back("optimizer.optimizer_offload_fraction=1.0");
  CHECK(ask(fraction_only)["results"][0]["memory"]["parts"]["optimizer"].get<double>() == Approx(before));
}

// A benchmark recipe on another GPU count: the launcher weak-scales it
// (scripts/training/run_recipe.py:343-373 at 067f987df) when the count
// divides by TP x PP x CP and ETP x EP x PP and the scaled batch stays whole:
// samples per data-parallel rank are kept, so the global batch scales with
// DP. The answer runs there, with that batch and the launch of that many
// ranks, and says the batch changed; a count the layout does not divide is
// not offered the recipe.
TEST_CASE("benchmark recipes are weak-scaled to the GPU count asked, as the launcher does", "[answers]") {
  struct Row {
    const char* question;
    long long gpus, gbs, nodes, per_node;
  };
  // llama3_8b_pretrain_8gpu_h100_bf16_config: TP 1 PP 1 CP 2 on 8 GPUs (DP 4), GBS 128
  // (src/megatron/bridge/perf_recipes/llama/h100/llama3.py:41).
  const Row rows[] = {{"benchmark llama3 8b 16 h100", 16, 256, 2, 8}, {"benchmark llama3 8b 6 h100", 6, 96, 1, 6}};
  for (const auto& row : rows) {
    INFO(row.question);
    const auto j = ask({row.question});
    REQUIRE(j["verdict"] == "ok");
    const auto& top = j["results"][0];
    CHECK(top["recipe"] == "llama3_8b_pretrain_8gpu_h100_bf16_config");
    CHECK(top["layout"]["gpus"] == row.gpus);
    CHECK(top["layout"]["cp"] == 2);
    CHECK(top["batch"]["gbs"] == row.gbs);
    const std::string command = top["command"];
    CHECK_THAT(command, Catch::Contains("--nodes " + std::to_string(row.nodes) + " --gpus-per-node " + std::to_string(row.per_node)));
    bool said = false;
    for (const auto& cav : top["caveats"])
      said = said || cav.get<std::string>().find("weak-scaled from its own 8 GPUs") != std::string::npos;
    CHECK(said);
  }
  // The bf16 recipe's CP 2 does not divide 3 GPUs: only recipes whose layout does are planned there.
  const auto three = ask({"benchmark llama3 8b 3 h100"}, 1);  // the fp8cs recipe (CP 1) is planned there, and does not fit
  for (const auto& r : three["results"]) CHECK(r["recipe"] != "llama3_8b_pretrain_8gpu_h100_bf16_config");
  // Its own count: no weak scaling, the batch as the code sets it.
  const auto own = ask({"benchmark llama3 8b 8 h100"});
  CHECK(own["results"][0]["batch"]["gbs"] == 128);
  for (const auto& cav : own["results"][0]["caveats"]) CHECK(cav.get<std::string>().find("weak-scaled") == std::string::npos);
}

// A disagreement between the documents and the code that several editions
// repeat is one note listing them all, grouped by revision (issue 24 §6):
// llama3_70b_pretrain_config's TP is 8 in every edition of the recipe
// index and 4 in the code (src/megatron/bridge/recipes/llama/h100/llama3.py:734).
TEST_CASE("explain: a document-vs-code disagreement is one note with its editions listed", "[answers]") {
  const auto j = ask({"llama3 70b pretrain 32 gpus"});
  size_t tp_notes = 0;
  std::string note;
  for (const auto& n : j["results"][0]["notes"]) {
    const std::string text = n;
    if (text.rfind("the documents say tp 8 ", 0) == 0) {
      ++tp_notes;
      note = text;
    }
  }
  REQUIRE(tp_notes == 1);
  for (const char* edition : {"recipe-index.fr.md", "recipe-index.ja.md", "recipe-index.zh.md", "references/recipe-index.md"})
    CHECK(note.find(edition) != std::string::npos);
  CHECK(note.find("revision 4") != std::string::npos);
  CHECK(note.find("revision 2") != std::string::npos);
  CHECK(note.find("revision 4") < note.find("revision 2"));  // newest first
}

TEST_CASE("on OOM: full recompute is not advised to a job that already recomputes every layer", "[answers]") {
  // qwen3_32b_sft_config sets recompute_granularity=full, method uniform,
  // 1 layer (src/megatron/bridge/recipes/qwen/h100/qwen3.py:1287-1289): the
  // tight-memory caveat cannot advise turning it on.
  const auto j = ask({"sft qwen3 32b 8 h100"});
  const auto& top = j["results"][0];
  REQUIRE(top["recipe"] == "qwen3_32b_sft_config");
  bool tight = false;
  for (const auto& c : top["caveats"]) {
    const std::string w = c;
    if (w.find("OOM") == std::string::npos) continue;
    tight = true;
    CHECK(w.find("recompute_granularity=full") == std::string::npos);
    CHECK(w.find("more GPUs") != std::string::npos);
  }
  CHECK(tight);
  // A recipe that does not recompute (llama3_70b_pretrain_config on its 32
  // GPUs, llama3.py:734) is still told to.
  const auto k = ask({"pretrain llama3 70b 32 h100"});
  bool lever = false;
  for (const auto& c : k["results"][0]["caveats"])
    lever = lever || c.get<std::string>().find("recompute_granularity=full") != std::string::npos;
  CHECK(lever);
}

TEST_CASE("a stray word no recipe of the named family carries is left out and said, not an empty answer", "[answers]") {
  // "1" is a word of other recipe names (wan_1_3b, ...), never of llama3's.
  const auto j = ask({"sft llama3 8b on 1"});
  REQUIRE(j["results"].size() >= 1);
  CHECK(j["results"][0]["recipe"] == "llama3_8b_sft_config");
  bool said = false;
  for (const auto& w : j["warnings"]) said = said || w.get<std::string>().find(": 1") != std::string::npos;
  CHECK(said);
  // A word the family does carry still narrows the answer ("vl" of qwen3_vl).
  const auto v = ask({"sft qwen3 vl 8b"});
  CHECK(v["results"][0]["recipe"].get<std::string>().find("_vl_") != std::string::npos);
}

TEST_CASE("a precision the library recipe lacks names the benchmark recipe of the model that trains in it", "[answers]") {
  // llama3_70b_pretrain_config trains in BF16; the benchmark package exports
  // llama3_70b_pretrain_64gpu_h100_fp8cs_config (perf_recipes/llama/h100/llama3.py:159).
  const auto j = ask({"fp8 pretraining llama3 70b 64 h100"});
  CHECK(j["results"][0]["recipe"] == "llama3_70b_pretrain_config");
  bool named = false;
  for (const auto& w : j["warnings"])
    named = named || w.get<std::string>().find("llama3_70b_pretrain_64gpu_h100_fp8cs_config") != std::string::npos;
  CHECK(named);
  // Asked as a benchmark, it is the answer, at its own layout (TP 4, PP 8, VP 5; llama3.py:166-169).
  const auto b = ask({"benchmark fp8 pretraining llama3 70b 64 h100"});
  const auto& top = b["results"][0];
  CHECK(top["recipe"] == "llama3_70b_pretrain_64gpu_h100_fp8cs_config");
  CHECK(top["layout"]["tp"] == 4);
  CHECK(top["layout"]["pp"] == 8);
  // No twin on a GPU that lacks the precision: A100 (Ampere) runs no FP8.
  const auto a = ask({"fp8 pretraining llama3 70b 64 a100"});
  for (const auto& w : a["warnings"]) CHECK(w.get<std::string>().find("_fp8cs_config") == std::string::npos);
}

TEST_CASE("kbq show of a name both packages export shows what run_recipe.py --recipe loads: the benchmark definition", "[answers]") {
  // scripts/training/recipe_runner.py load_recipe: an exported benchmark
  // name wins (BENCHMARK_RECIPE_PRECEDENCE_COLLISIONS lists
  // llama3_70b_peft_8gpu_h100_bf16_config); the library function (TP 8,
  // recipes/llama/h100/llama3.py) runs as its alias llama3_70b_peft_config.
  const auto j = ask({"show", "llama3_70b_peft_8gpu_h100_bf16_config"});
  const auto& top = j["results"][0];
  CHECK(top["kind"] == "benchmark");
  CHECK(top["layout"]["tp"] == 1);
  CHECK(top["layout"]["pp"] == 4);
  bool said = false;
  for (const auto& c : top["caveats"]) said = said || c.get<std::string>().find("--recipe llama3_70b_peft_config") != std::string::npos;
  CHECK(said);
  // Its alias is the library function.
  const auto l = ask({"show", "llama3_70b_peft_config"});
  CHECK(l["results"][0]["kind"] == "library");
  CHECK(l["results"][0]["layout"]["tp"] == 8);
}

TEST_CASE("a diffusion recipe keeps its own data config: no text --dataset preset nobody asked for", "[answers]") {
  // --dataset mock builds a text MockGPTDatasetConfig (recipes/utils/dataset_utils.py);
  // the Wan step reads batch["video_latents"] (diffusion/models/wan/wan_step.py:44).
  for (const char* q : {"wan 14b pretrain 8 h100", "flux 12b pretrain 8 h100"}) {
    INFO(q);
    const auto j = ask({q});
    const auto& top = j["results"][0];
    CHECK(top["modality"] == "diffusion");
    CHECK(top["dataset"].is_null());
    CHECK(top["command"].get<std::string>().find("--dataset") == std::string::npos);
  }
  // Asking a text recipe for the data it already trains on passes no flag either.
  const auto t = ask({"pretrain llama3 8b dataset:mock"});
  CHECK(t["results"][0]["command"].get<std::string>().find("--dataset") == std::string::npos);
}

TEST_CASE("a recipe's own pipeline layout: PP and VP only within its builder's map, or kept when it has none", "[answers]") {
  // After a PP or VP override the launcher rebuilds the layout with the
  // recipe's _pipeline_model_parallel_layout_builder, which raises for a pair
  // its map lacks (scripts/training/recipe_runner.py sync_model_pipeline_layout).
  // GLM-4.5V SFT: PP 8, builder map (4,1) (8,1) (16,1) (recipes/glm_vl/h100/glm_45v.py:35-75).
  const auto j = ask({"mode:sft glm 4.5v gpus:32 hardware:h100"});
  const auto& top = j["results"][0];
  REQUIRE(top["recipe"] == "glm_45v_sft_config");
  const long long pp = top["layout"]["pp"];
  CHECK((pp == 4 || pp == 8 || pp == 16));
  CHECK(top["layout"]["vp"] == 0);
  // kbq check of a PP outside the map fails the layout rule, exit 1.
  const auto bad = ask({"check", "glm_45v_sft_config", "--gpus", "64", "model.pipeline_model_parallel_size=2"}, 1);
  std::string status;
  for (const auto& v : bad["results"][0]["rules"])
    if (v["id"] == "layers_divisible_by_pp") status = v["status"];
  CHECK(status == "fail");
  // DeepSeek-V4 sets a layout for its own PP and has no builder
  // (models/deepseek/deepseek_v4_bridge.py:125-163): another PP is not judged sound.
  const auto kept = ask({"check", "deepseek_v4_flash_pretrain_config", "--gpus", "64", "model.pipeline_model_parallel_size=8"}, 1);
  for (const auto& v : kept["results"][0]["rules"])
    if (v["id"] == "layers_divisible_by_pp") CHECK(v["status"] == "unknown");
}

TEST_CASE("a recipe's virtual pipeline never reaches one stage: the plan sets it to null, kbq check fails it", "[answers]") {
  // Megatron Core's initialize_model_parallel raises "pipeline-model-parallel
  // size should be greater than 1 with interleaved schedule" when VP is set
  // and PP < 2; Bridge passes the model's VP (training/initialize.py:808).
  // llama3_70b_pretrain_config sets PP 4 · VP 5 (recipes/llama/h100/llama3.py).
  const auto j = ask({"mode:pretrain llama3 70b gpus:8 hardware:gb200"});
  const auto& top = j["results"][0];
  REQUIRE(top["recipe"] == "llama3_70b_pretrain_config");
  REQUIRE(top["layout"]["pp"] == 1);
  const std::string cmd = top["command"];
  CHECK(cmd.find("'model.virtual_pipeline_model_parallel_size=null'") != std::string::npos);
  CHECK(cmd.find("-vp") == std::string::npos);  // argparse's int would refuse null
  CHECK(top["layout"]["vp"] == 0);
  // kbq check of PP 1 under the recipe's VP: the rule fails, exit 1.
  const auto bad = ask({"check", "llama3_70b_pretrain_config", "--gpus", "8", "--hardware", "gb200", "model.tensor_model_parallel_size=8",
                        "model.pipeline_model_parallel_size=1", "model.context_parallel_size=1"},
                       1);
  bool failed = false;
  for (const auto& v : bad["results"][0]["rules"])
    if (v["id"] == "vp_needs_pp") failed = v["status"] == "fail";
  CHECK(failed);
  CHECK(bad["results"][0]["layout"]["vp"] == 5);
  // The same with the virtual pipeline set to null: the rule is not raised, it runs.
  const auto good =
      ask({"check", "llama3_70b_pretrain_config", "--gpus", "8", "--hardware", "gb200", "model.tensor_model_parallel_size=8",
           "model.pipeline_model_parallel_size=1", "model.context_parallel_size=1", "model.virtual_pipeline_model_parallel_size=null"});
  CHECK(good["verdict"] == "ok");
  for (const auto& v : good["results"][0]["rules"]) CHECK(v["id"] != "vp_needs_pp");
  // null is only for a field the code types Optional: TP is not.
  const auto r = kbtest::run(KBQ_PATH, {"check", "llama3_70b_pretrain_config", "--gpus", "8", "model.tensor_model_parallel_size=null"});
  CHECK(r.exit_code == 2);
}

TEST_CASE("a sequence at or below the long-context threshold is not called long context", "[answers]") {
  const auto j = ask({"pretrain llama3 8b 8 h100"});
  for (const auto& v : j["results"][0]["rules"])
    if (v["id"] == "cp_for_long_context") {
      CHECK(v["status"] == "pass");
      CHECK(v["detail"].get<std::string>().find("long context") == std::string::npos);
      CHECK(v["detail"].get<std::string>().find("not above 8192") != std::string::npos);
    }
  const auto l = ask({"pretrain llama3 8b 32k sequence 8 h100"});
  for (const auto& v : l["results"][0]["rules"])
    if (v["id"] == "cp_for_long_context") CHECK(v["detail"].get<std::string>().find("long context above 8192") != std::string::npos);
}

TEST_CASE("a long sequence that no layout with the CP floor fits trades CP for TP, as kbq check judges it", "[answers]") {
  // llama3_8b_sft_config: TP 2, 4096 tokens (recipes/llama/h100/llama3.py:1577);
  // 131072 tokens on 16 H100 fit at TP 2 · CP 8 (kbq check agrees), where
  // the CP floor (CP 16, 8192 tokens per rank) fits no layout on 16.
  const auto j = ask({"sft llama3 8b 128k sequence 16 h100"});
  const auto& L = j["results"][0]["layout"];
  CHECK(j["verdict"] == "ok");
  CHECK(L["tp"] == 2);
  CHECK(L["cp"] == 8);
  CHECK(L["seq_len"] == 131072);
  const auto c = ask({"check", "llama3_8b_sft_config", "--gpus", "16", "--hardware", "h100", "model.context_parallel_size=8",
                      "model.sequence_parallel=true", "model.seq_length=131072"});
  CHECK(c["verdict"] == "ok");
}

TEST_CASE("answers name a GPU by its short name from data, never its key in capitals", "[answers]") {
  // data/gpus.tsv short_name: rtx6000ada is "RTX 6000 Ada", a6000 "RTX A6000".
  for (const auto& [question, name, key] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"llama3 8b lora on one rtx 6000 ada", "1 × RTX 6000 Ada", "RTX6000ADA"},
           {"qwen3 8b peft on 2 a6000", "2 × RTX A6000", "× A6000"},
           {"sft qwen3 1.7b on my 4090", "× RTX 4090", "RTX4090"}}) {
    const auto r = kbtest::run(KBQ_PATH, {question});
    INFO(question << "\n" << r.out);
    CHECK(r.out.find(name) != std::string::npos);
    CHECK(r.out.find(key) == std::string::npos);
  }
}

TEST_CASE("not possible with no GPU count asked is said of every count tried, not of the recipe's own", "[answers]") {
  // No count: the verdict covers every count up to planner.tsv max_world (16384), not the 32 of the layout shown.
  auto r = kbtest::run(KBQ_PATH, {"llama3 70b pretrain on 4090s"});
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("Not possible on RTX 4090: no layout of llama3_70b_pretrain_config fits on any count of them up") != std::string::npos);
  CHECK(r.out.find("16384") != std::string::npos);
  // A count asked: the verdict is about that count.
  r = kbtest::run(KBQ_PATH, {"llama3 70b pretrain on 8 4090s"});
  INFO(r.out);
  CHECK(r.out.find("Not possible on 8 × RTX 4090: no layout of llama3_70b_pretrain_config fits.") != std::string::npos);
}

TEST_CASE("a training method no recipe has is a no-match that says so, bare or quoted, and never 'not understood'", "[answers]") {
  // The launcher's --mode takes pretrain, sft, lora, dora (scripts/training/run_recipe.py:173-174).
  for (const std::string q : {"DPO llama3 8b on 8 h100", "model:llama3 8b \"dpo\""}) {
    const auto r = kbtest::run(KBQ_PATH, {q});
    INFO(q << "\n" << r.out);
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("Megatron Bridge has no recipe for 'dpo'") != std::string::npos);
    CHECK(r.out.find("not understood") == std::string::npos);
  }
}

TEST_CASE("a benchmark asked with no GPU type leads with the GPU type the warning assumes, or says it does not", "[answers]") {
  // Every model with a benchmark recipe: "<model> benchmark" assumes H100
  // (planner.tsv default_gpu); the top recipe is an H100 benchmark when the
  // code has one for that model, and the warning never names a GPU type the
  // layout does not use.
  const json listed = json::parse(kbtest::run(KBQ_PATH, {"list", "--kind", "benchmark", "--format", "json"}).out);
  std::map<std::string, std::pair<std::string, bool>> models;  // key -> display name, has an H100 benchmark
  for (const auto& r : listed["recipes"]) {
    auto& m = models[r["model_key"].get<std::string>()];
    m.first = r["model"].get<std::string>();
    m.second = m.second || r["native_hardware"] == "h100";
  }
  REQUIRE(models.size() > 10);
  std::string questions;
  for (const auto& [key, m] : models) questions += m.first + " benchmark\n";
  const auto r = kbtest::run(KBQ_PATH, {"--batch", "--format", "json"}, questions);
  std::istringstream lines(r.out);
  std::string line;
  size_t checked = 0, elsewhere = 0, with_h100 = 0, h100_first = 0;
  for (const auto& [key, m] : models) {
    REQUIRE(std::getline(lines, line));
    const json a = json::parse(line)["answer"];
    INFO(m.first << "\n" << line.substr(0, 2000));
    if (a["results"].empty() || a["results"][0]["model"] != m.first) continue;  // a name the words do not resolve to
    ++checked;
    const std::string hw = a["results"][0]["layout"]["hardware"];
    const std::string warnings = a["warnings"].dump();
    const bool said =
        warnings.find("H100 assumed, but the " + m.first + " benchmark that ranks first is written for the ") != std::string::npos;
    CHECK(warnings.find("H100 assumed") != std::string::npos);
    CHECK(said == (hw != "h100"));
    if (!m.second) CHECK(hw != "h100");
    if (m.second) ++with_h100, h100_first += hw == "h100";
    if (hw != "h100") ++elsewhere;
  }
  CHECK(checked * 4 >= models.size() * 3);
  // Some models have no H100 benchmark; of those that have, the H100 one
  // leads unless its precision or its fit ranks it lower (a layout the GPU
  // count cannot form: docs/memory.md).
  CHECK(elsewhere > 0);
  CHECK(h100_first * 4 >= with_h100 * 3);
}

TEST_CASE("every model the code has recipes for is reached by its display name", "[answers]") {
  // data/models.tsv display names, as a user copies them from a model card
  // ("OLMoE-1B-7B", "FLUX.1 12B", "GLM-5.1", "DeepSeek-V4-Pro"): the first
  // result is that model (or its text-only sibling of the same name).
  const json listed = json::parse(kbtest::run(KBQ_PATH, {"list", "--format", "json"}).out);
  std::set<std::string> models;
  for (const auto& r : listed["recipes"])
    if (!r["model"].get<std::string>().empty()) models.insert(r["model"].get<std::string>());
  REQUIRE(models.size() > 50);
  std::string questions;
  for (const auto& m : models) questions += m + "\n";
  const auto r = kbtest::run(KBQ_PATH, {"--batch", "--format", "json"}, questions);
  std::istringstream lines(r.out);
  std::string line;
  // The launcher trains exaone45_vl_* with the text forward step
  // (recipe_metadata.py RECIPE_FORWARD_STEP_PREFIXES has no exaone45_vl_),
  // so "(VL)" asks for a vision recipe the code does not have.
  const std::set<std::string> text_step_vl = {"EXAONE 4.5 33B (VL)"};
  for (const auto& m : models) {
    REQUIRE(std::getline(lines, line));
    INFO(m << "\n" << line.substr(0, 1500));
    const json a = json::parse(line)["answer"];
    REQUIRE(a.contains("results"));
    if (text_step_vl.count(m)) {
      CHECK(a["results"].empty());
      continue;
    }
    REQUIRE_FALSE(a["results"].empty());
    const std::string top = a["results"][0]["model"];
    CHECK((top == m || kb::starts_with(top, m + " (") || kb::starts_with(m, top + " ")));
  }
}

TEST_CASE("a precision the recipe lacks names the registered override that trains it, and kbq check passes it", "[answers]") {
  // training/mixed_precision.py (067f987df) registers each factory under its own name and a hyphenated alias:
  // :255 bf16_with_mxfp8_mixed, :285 bf16_with_fp8_current_scaling_mixed, :405 bf16_with_nvfp4_mixed.
  struct Case {
    std::string question, recipe, hardware, gpus, name;
  };
  for (const Case& k :
       std::vector<Case>{{"sft qwen3 30b a3b with mxfp8 on 16 b200", "qwen3_30b_a3b_sft_config", "b200", "16", "bf16_with_mxfp8_mixed"},
                         {"lora llama3 8b fp8 on 8 h100", "llama3_8b_peft_config", "h100", "8", "bf16_with_fp8_current_scaling_mixed"},
                         {"sft qwen3 8b in nvfp4 on 4 b200", "qwen3_8b_sft_config", "b200", "4", "bf16_with_nvfp4_mixed"}}) {
    CAPTURE(k.question);
    const json j = ask({k.question});
    REQUIRE_FALSE(j["results"].empty());
    CHECK(j["results"][0]["recipe"] == k.recipe);
    const std::string warnings = j["warnings"].dump();
    CHECK(warnings.find("as mixed_precision=" + k.name + " (src/megatron/bridge/training/mixed_precision.py:") != std::string::npos);
    const json checked = ask({"check", k.recipe, "--gpus", k.gpus, "--hardware", k.hardware, "mixed_precision=" + k.name});
    CHECK(rule_status(checked["results"][0], "precision_runs") == "pass");
  }
  // A GPU that runs none of the asked precision: the answer falls back to one it runs, and names no override.
  const json a100 = ask({"lora llama3 70b in fp8 on 8 A100"});
  CHECK(a100["warnings"].dump().find("mixed_precision=") == std::string::npos);
}

TEST_CASE("a GPU older than Ampere is known and runs no recipe: said, never an H100 in its place", "[answers]") {
  // data/gpus.tsv t4 (Turing) and v100 (Volta); data/precisions.tsv lists no precision for either
  // (Transformer Engine's support matrix: BF16 requires compute capability 8.0 or higher).
  for (const auto& [question, gpu] : std::vector<std::pair<std::string, std::string>>{{"qwen3 0.6b sft on a t4", "T4 (Turing)"},
                                                                                      {"lora llama3 8b on 8 v100", "V100 (Volta)"},
                                                                                      {"tesla t4 で qwen3 0.6b の SFT", "T4（Turing）"}}) {
    const auto r = kbtest::run(KBQ_PATH, {question});
    INFO(question << "\n" << r.out);
    CHECK(r.exit_code == 1);
    CHECK(r.out.find(gpu) != std::string::npos);
    CHECK(r.out.find("BF16") != std::string::npos);
    CHECK(r.out.find("H100") == std::string::npos);
    CHECK(r.out.find("uv run") == std::string::npos);
  }
}

TEST_CASE("a benchmark that matches nothing lists what exists by GPU and precision name, not by key", "[answers]") {
  // perf_recipes/glm_moe_dsa (067f987df): glm51_sft_192gpu_gb200_bf16_config, glm51_sft_416gpu_h100_bf16_config.
  const json j = ask({"sft glm 5.1 on 8 h100"}, 1);
  const std::string no_match = j["no_match"];
  CHECK(no_match.find("GB200 × 192 (BF16); H100 × 416 (BF16)") != std::string::npos);
  CHECK(no_match.find("gb200") == std::string::npos);
}
