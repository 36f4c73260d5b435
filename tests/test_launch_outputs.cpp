// The machine-readable forms of a launch command: the JSON answer's argv
// (checked against what a real shell, /bin/sh, splits the command string
// into), the per-node launch of a multi-node plan, the steps before the run
// (the Hugging Face import of an SFT/PEFT recipe's starting checkpoint, the
// launcher's dry run) and `--format slurm`'s sbatch script (bash -n, and its
// torchrun line's nnodes × nproc_per_node against the plan's ranks).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <stdexcept>

#include "base/escape.hpp"
#include "process.hpp"

using json = nlohmann::json;

namespace {

json ask_json(const std::vector<std::string>& args, int expect_exit = 0) {
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--format", "json"});
  const auto r = kbtest::run(KBQ_PATH, a);
  INFO(r.err);
  REQUIRE(r.exit_code == expect_exit);
  return json::parse(r.out);
}

// The words /bin/sh splits `command` into: printf prints each argument with
// a NUL after it. Every $NAME the command reads is set to the text "$NAME"
// (a shell expands a variable once), so that the words are as written.
std::vector<std::string> sh_words(const std::string& command) {
  std::string prelude = "set -f; ";
  static const std::regex var(R"(\$([A-Za-z_][A-Za-z0-9_]*))");
  std::set<std::string> names;
  for (std::sregex_iterator it(command.begin(), command.end(), var), end; it != end; ++it) names.insert((*it)[1].str());
  for (const auto& n : names) prelude += n + "='$" + n + "'; ";
  const auto r = kbtest::run("/bin/sh", {"-c", prelude + "printf '%s\\0' " + command});
  INFO(command << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> words;
  size_t start = 0;
  for (size_t at = r.out.find('\0'); at != std::string::npos; at = r.out.find('\0', start)) {
    words.push_back(r.out.substr(start, at - start));
    start = at + 1;
  }
  return words;
}

std::vector<std::string> strings(const json& a) {
  std::vector<std::string> out;
  for (const auto& w : a) out.push_back(w.get<std::string>());
  return out;
}

// The value after `flag` in argv, as "--flag=V" or "--flag V" ("" when absent).
std::string flag_value(const std::vector<std::string>& argv, const std::string& flag) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i].rfind(flag + "=", 0) == 0) return argv[i].substr(flag.size() + 1);
    if (argv[i] == flag && i + 1 < argv.size()) return argv[i + 1];
  }
  return {};
}

const std::vector<std::vector<std::string>> kQuestions = {
    {"peft qwen3 1 gpu"},
    {"sft llama3 70b 32 gpus"},
    {"sft llama3 70b 16 gpus"},  // not possible: the alternatives' commands
    {"pretrain llama3 8b 16 h100"},
    {"pretrain deepseek v3 256 gpus"},
    {"lora qwen3 30b a3b 8 gpus seq 16k"},
    {"dora llama3 8b 2 gpus"},
    {"benchmark llama3 70b 64 gpus"},
    {"sft llama3 8b 4 gpus 16k sequence"},
};

}  // namespace

TEST_CASE("shell_split gives the words /bin/sh gives, quotes and continuations included", "[launch]") {
  for (const std::string text : {
           "a b  c",
           "a 'b c' d",
           "x='it'\\''s' y",
           "a \\\n    b \\\n    'c=1'",
           "'' a",
           "--f=$NODE_RANK:29500 'k=v w'",
           "a\"b c\"d",
           "\"q \\\" \\\\ \\$x\"",
           "a\\ b",
           "'model.x=[1, 2]'",
           "\ta\t\tb",
       }) {
    INFO(text);
    CHECK(kb::shell_split(text) == sh_words(text));
  }
  CHECK_THROWS_AS(kb::shell_split("a 'b"), std::invalid_argument);
  CHECK_THROWS_AS(kb::shell_split("a \"b"), std::invalid_argument);
  CHECK_THROWS_AS(kb::shell_split("a \\"), std::invalid_argument);
}

TEST_CASE("every command of a JSON answer carries argv, the words a shell splits it into", "[launch]") {
  int commands = 0;
  for (const auto& q : kQuestions) {
    INFO(q.front());
    const json j = ask_json(q, q.front() == "sft llama3 70b 16 gpus" ? 1 : 0);
    for (const auto& r : j["results"]) {
      CHECK(strings(r["argv"]) == sh_words(r["command"]));
      ++commands;
      for (const auto& b : r["before_run"]) {
        CHECK(strings(b["argv"]) == sh_words(b["command"]));
        ++commands;
      }
    }
    for (const auto& x : j["alternatives"])
      if (!x["command"].get<std::string>().empty()) {
        CHECK(strings(x["argv"]) == sh_words(x["command"]));
        ++commands;
      }
  }
  CHECK(commands > 30);
  // The user's own values, quoted by kbq (a quote, a space, brackets).
  const auto r = kbtest::run(KBQ_PATH, {"check", "llama3_8b_sft_config", "--gpus", "8", "--format", "json", "optimizer.lr=1e-5",
                                        "logger.wandb_exp_name=it's a [test] $HOME"});
  INFO(r.err);
  const json j = json::parse(r.out);
  const auto argv = strings(j["results"][0]["argv"]);
  CHECK(argv == sh_words(j["results"][0]["command"]));
  CHECK(std::find(argv.begin(), argv.end(), "logger.wandb_exp_name=it's a [test] $HOME") != argv.end());
}

TEST_CASE("a multi-node plan says what each node runs: NODE_RANK per node, node 0's address everywhere", "[launch]") {
  for (const auto& q : kQuestions) {
    const json j = ask_json(q, q.front() == "sft llama3 70b 16 gpus" ? 1 : 0);
    for (const auto& r : j["results"]) {
      INFO(q.front() << ": " << r["recipe"]);
      const json& L = r["launch"];
      const auto argv = strings(r["argv"]);
      CHECK(L["nodes"] == r["layout"]["nodes"]);
      CHECK(L["nproc_per_node"] == r["layout"]["nproc_per_node"]);
      CHECK(L["ranks"].get<long long>() == L["nodes"].get<long long>() * L["nproc_per_node"].get<long long>());
      CHECK(L["ranks"] == r["layout"]["gpus"]);
      if (r["kind"] == "benchmark" || L["nodes"] == 1) {
        CHECK(L["variables"].empty());
        CHECK(L["per_node"].empty());
        continue;
      }
      // torchrun's own view of the same layout.
      CHECK(flag_value(argv, "--nnodes") == std::to_string(L["nodes"].get<long long>()));
      CHECK(flag_value(argv, "--nproc_per_node") == std::to_string(L["nproc_per_node"].get<long long>()));
      // Every variable named is one the command reads, and every $NAME the command reads is named.
      std::set<std::string> named, read;
      for (const auto& v : L["variables"]) named.insert(v["name"].get<std::string>());
      static const std::regex var(R"(\$([A-Za-z_][A-Za-z0-9_]*))");
      const std::string cmd = r["command"];
      for (std::sregex_iterator it(cmd.begin(), cmd.end(), var), end; it != end; ++it) read.insert((*it)[1].str());
      CHECK(named == read);
      REQUIRE(L["per_node"].size() == L["nodes"].get<size_t>());
      for (const auto& v : L["variables"]) {
        CHECK_FALSE(v["meaning"].get<std::string>().empty());
        std::set<std::string> values;
        for (const auto& n : L["per_node"])
          values.insert(n["env"][v["name"].get<std::string>()].is_null() ? "" : n["env"][v["name"].get<std::string>()].get<std::string>());
        if (v["role"] == "node_rank") {
          CHECK(values.size() == L["nodes"].get<size_t>());  // one index per node
          CHECK(values.count("0") == 1);
          CHECK(values.count(std::to_string(L["nodes"].get<long long>() - 1)) == 1);
        } else {
          CHECK(values == std::set<std::string>{""});  // the same everywhere: node 0's address, the user's
        }
      }
    }
  }
}

TEST_CASE("the text answer of a multi-node plan names each node's variables", "[launch]") {
  const auto r = kbtest::run(KBQ_PATH, {"sft llama3 70b 32 gpus"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("NODE_RANK=0 ") != std::string::npos);
  CHECK(r.out.find("NODE_RANK=3 ") != std::string::npos);
  CHECK(r.out.find("MASTER_ADDR: ") != std::string::npos);
  const auto one = kbtest::run(KBQ_PATH, {"peft qwen3 1 gpu"});
  CHECK(one.out.find("NODE_RANK=0") == std::string::npos);
}

TEST_CASE("SFT and PEFT answers say how to import the starting checkpoint; pretraining does not", "[launch]") {
  for (const auto& q : kQuestions) {
    const json j = ask_json(q, q.front() == "sft llama3 70b 16 gpus" ? 1 : 0);
    for (const auto& r : j["results"]) {
      INFO(q.front() << ": " << r["recipe"]);
      const auto argv = strings(r["argv"]);
      const std::string checkpoint = flag_value(argv, "--pretrained_checkpoint");
      const json* import = nullptr;
      const json* dry = nullptr;
      for (const auto& b : r["before_run"]) {
        if (b["what"] == "import_checkpoint") import = &b;
        if (b["what"] == "dry_run") dry = &b;
      }
      if (r["kind"] == "benchmark") {
        CHECK(r["before_run"].empty());
        continue;
      }
      CHECK((r["mode"] == "pretrain") == (import == nullptr));
      CHECK(checkpoint.empty() == (import == nullptr));
      if (import) {
        const auto words = strings((*import)["argv"]);
        // It writes where the training command reads.
        CHECK(flag_value(words, "--megatron-path") == checkpoint);
        CHECK_FALSE(flag_value(words, "--hf-model").empty());
        CHECK((*import)["source"].get<std::string>().find("@") != std::string::npos);
      }
      // The launcher has --dry-run (run_recipe.py:257): one process, the same recipe and arguments.
      REQUIRE(dry != nullptr);
      const auto d = strings((*dry)["argv"]);
      CHECK(flag_value(d, "--nproc_per_node") == "1");
      CHECK(flag_value(d, "--nnodes").empty());
      CHECK(flag_value(d, "--recipe") == flag_value(argv, "--recipe"));
      CHECK(d.back() == "--dry-run");
    }
  }
  // The Hugging Face id is the recipe's own (its provider's hf_id in the code).
  const json j = ask_json({"sft llama3 70b 32 gpus"});
  const auto& b = j["results"][0]["before_run"][0];
  CHECK(flag_value(strings(b["argv"]), "--hf-model") == "meta-llama/Meta-Llama-3-70B");
}

TEST_CASE("the slurm format writes an sbatch script whose torchrun line runs the plan's ranks", "[launch][slurm]") {
  kbtest::TempDir dir;
  for (const auto& q : std::vector<std::string>{"sft llama3 70b 32 gpus", "peft qwen3 1 gpu", "pretrain deepseek v3 256 gpus",
                                                "pretrain llama3 8b 16 h100", "lora qwen3 30b a3b 8 gpus seq 16k"}) {
    INFO(q);
    const json j = ask_json({q});
    const auto r = kbtest::run(KBQ_PATH, {q, "--format", "slurm"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string path = dir.str() + "/job.sbatch";
    std::ofstream(path) << r.out;
    const auto syntax = kbtest::run("/bin/bash", {"-n", path});
    INFO(syntax.err);
    CHECK(syntax.exit_code == 0);
    const json& res = j["results"][0];
    const long long ranks = res["launch"]["ranks"];
    // #SBATCH lines: the nodes, one task per node, the GPUs of a node.
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex(R"(#SBATCH --nodes=(\d+)\n)")));
    const long long nodes = std::stoll(m[1]);
    REQUIRE(std::regex_search(r.out, m, std::regex(R"(#SBATCH --gpus-per-node=(\d+)\n)")));
    const long long gpus_per_node = std::stoll(m[1]);
    CHECK(r.out.find("#SBATCH --ntasks-per-node=1\n") != std::string::npos);
    // The torchrun line: its words as the shell reads them.
    const auto words = sh_words(res["command"]);
    const std::string nproc = flag_value(words, "--nproc_per_node"), nnodes = flag_value(words, "--nnodes");
    const long long torch_nodes = nnodes.empty() ? 1 : std::stoll(nnodes);
    CHECK(torch_nodes * std::stoll(nproc) == ranks);
    CHECK(torch_nodes == nodes);
    CHECK(std::stoll(nproc) == gpus_per_node);
    CHECK(ranks == res["layout"]["gpus"].get<long long>());
    // The answer's exact command is in the script.
    CHECK(r.out.find(res["command"].get<std::string>()) != std::string::npos);
    CHECK(r.out.find("scontrol show hostnames \"$SLURM_JOB_NODELIST\"") != std::string::npos);
  }
}

TEST_CASE("the slurm format without a script to write is an error with exit 1, on other subcommands a usage error", "[launch][slurm]") {
  const auto not_possible = kbtest::run(KBQ_PATH, {"sft llama3 70b 16 gpus", "--format", "slurm"});
  CHECK(not_possible.exit_code == 1);
  CHECK(not_possible.out.empty());
  CHECK(not_possible.err.rfind("kbq: error: ", 0) == 0);
  CHECK(not_possible.err.find("hint: ") != std::string::npos);
  const auto benchmark = kbtest::run(KBQ_PATH, {"benchmark llama3 70b 64 gpus", "--format", "slurm"});
  CHECK(benchmark.exit_code == 1);
  CHECK(benchmark.out.empty());
  CHECK(benchmark.err.rfind("kbq: error: ", 0) == 0);
  const auto nothing = kbtest::run(KBQ_PATH, {"zzz unknown model", "--format", "slurm"});
  CHECK(nothing.exit_code == 1);
  CHECK(nothing.out.empty());
  const auto list = kbtest::run(KBQ_PATH, {"list", "peft", "--format", "slurm"});
  CHECK(list.exit_code == 2);
  CHECK(list.err.rfind("kbq: error: ", 0) == 0);
  const auto show = kbtest::run(KBQ_PATH, {"show", "qwen3_8b_sft_config", "--format", "slurm"});
  CHECK(show.exit_code == 0);
  CHECK(show.out.rfind("#!", 0) == 0);
}
