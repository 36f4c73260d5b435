// kbq's candidate selection (query/plan/plan.cpp, select_recipes) reads one
// row per shape and only the best shapes' members (compiler/derive). These
// tests hold it to an oracle that scores every recipe of the kind in full,
// filters and sorts the way answers are ordered, and takes the first
// `limit`: same recipes, same order, same scores, on the real KB and on a
// synthetic one with many recipes per shape (bench/gen_sources.py).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "base/dsl/parse.hpp"
#include "base/sqlite.hpp"
#include "process.hpp"
#include "query/kb/kb.hpp"
#include "query/kbq.hpp"
#include "query/rank/rank.hpp"

#ifndef KB_SOURCE_DIR
#error "KB_SOURCE_DIR must name the repository root"
#endif

namespace {

using Row = std::tuple<std::string, std::string, int>;  // name, mode, score

std::vector<Row> oracle(kbq::Kb& kb, const kbq::dsl::Query& q, int limit) {
  const auto filter = [&](const std::string& f) {
    auto it = q.filters.find(f);
    return it == q.filters.end() ? std::string{} : it->second;
  };
  const bool bench = q.intents.count("benchmark") || filter("kind") == "benchmark";
  const std::string kind = bench ? "benchmark" : "library";  // the KB's spellings
  std::string hardware = q.hardware.empty() ? kb.planner("default_gpu") : q.hardware;
  long long gpus = q.gpus.value_or(0);
  if (!gpus && q.nodes) gpus = *q.nodes * std::max(1, kb.gpu(hardware) ? kb.gpu(hardware)->per_node : 1);
  kbq::Ranker ranker(kb, q, std::stoll(kb.planner("long_context_threshold")));
  std::vector<long long> ids;
  {
    kb::Stmt st(kb.db(), "SELECT id FROM recipes WHERE kind = ?");
    st.bind(1, kind);
    while (st.step()) ids.push_back(st.integer(0));
  }
  std::vector<kbq::Result> all;
  for (long long id : ids) {
    kbq::Result r;
    r.recipe = *kb.recipe_by_id(id);
    if (ranker.score(r, gpus, hardware)) all.push_back(std::move(r));
  }
  const bool any_positive = std::any_of(all.begin(), all.end(), [](const kbq::Result& r) { return r.score > 0; });
  if (any_positive) all.erase(std::remove_if(all.begin(), all.end(), [](const kbq::Result& r) { return r.score <= 0; }), all.end());
  std::sort(all.begin(), all.end(), [](const kbq::Result& x, const kbq::Result& y) {
    return std::make_tuple(-x.score, x.recipe.pattern, x.recipe.name, x.recipe.mode) <
           std::make_tuple(-y.score, y.recipe.pattern, y.recipe.name, y.recipe.mode);
  });
  // A query of free words only, found in no recipe's text: nothing matched.
  kbq::dsl::Constraints known = q.constraints();
  known.free_text.clear();
  if (known == kbq::dsl::Constraints{} && !any_positive) all.clear();
  std::vector<Row> out;
  for (const auto& r : all) {
    if (static_cast<int>(out.size()) == limit) break;
    out.emplace_back(r.recipe.name, r.recipe.mode, r.score);
  }
  return out;
}

// Queries over every term kind the ranker scores: mode, model, size, GPU
// count, nodes, hardware, sequence length, intents, filters, free text.
const std::vector<std::string> kQueries = {
    "peft qwen3 1 gpu",
    "sft llama3 70b 16 gpus",
    "SFT, 8×H100, 16K sequence",
    "pretrain deepseek v3 32 nodes",
    "first time trying bridge",
    "large scale pretrain llama3",
    "qwen3 tp:2 sft",
    "throughput benchmark llama3 8b h100",
    "qwen3 moe 30b sft 16 gpus cuda graphs",
    "pretrain 8 gpus",
    "sft",
    "peft",
    "moe",
    "vlm sft",
    "long context 64k",
    "pretrain 64 gpus moe",
    "sft 70b",
    "8b peft 1 gpu",
    "family:qwen sft",
    "diffusion",
    "benchmark gb200",
    "qwen3 の LoRA を 1 GPU で",
    "affinage llama3 8b sur 2 nœuds",
    "在 1 个 GPU 上使用 LoRA",
    "smoke test",
    "zork frobnicate",
    "gemma3 vlm peft 8 gpus",
    "pretrain 2 nodes 128k sequence",
    "sft 1 gpu",
    "nemotron pretrain",
};

void check_against_oracle(const std::string& kb_path, const std::vector<std::string>& queries) {
  kbq::Kb kb(kb_path);
  kbq::Engine engine = kbq::Engine::open(kb_path);
  for (const auto& text : queries) {
    INFO("query: " << text);
    const auto parsed = kbq::dsl::parse(kb.lexicon(), text);
    REQUIRE_FALSE(parsed.error);  // every query of the table parses
    for (int limit : {1, 3, 10}) {
      INFO("limit " << limit);
      kbq::AskOptions opts;
      opts.limit = limit;
      const auto res = engine.ask(text, opts);
      REQUIRE(std::holds_alternative<kbq::Answer>(res));
      std::vector<Row> got;
      for (const auto& r : std::get<kbq::Answer>(res).results) got.emplace_back(r.recipe.name, r.recipe.mode, r.score);
      CHECK(got == oracle(kb, parsed.query, limit));
    }
  }
}

}  // namespace

TEST_CASE("ranking: the shape-grouped selection equals scoring every recipe (real KB)", "[ranking]") {
  check_against_oracle(std::string(KB_BINARY_DIR) + "/kb.sqlite", kQueries);
}

TEST_CASE("ranking: the shape-grouped selection equals scoring every recipe (synthetic 4x KB)", "[ranking]") {
  if (kbtest::run(kbtest::python3(), {"-c", "pass"}).exit_code != 0) {
    kbtest::skip("python3 not found: the synthetic KB (bench/gen_sources.py) is not checked");
    return;
  }
  kbtest::TempDir tmp("kbtests-ranking");
  const auto gen = kbtest::run(kbtest::python3(), {std::string(KB_SOURCE_DIR) + "/bench/gen_sources.py", "--scale", "4", "--out",
                                                   tmp / "sources", "--sources", std::string(KB_SOURCE_DIR) + "/kb-sources"});
  REQUIRE(gen.exit_code == 0);
  const auto build = kbtest::run(KBC_PATH, {"build", "--sources", tmp / "sources", "-o", tmp / "kb.sqlite", "--quiet"});
  REQUIRE(build.exit_code == 0);
  // The synthetic units add recipes that share shapes, and model prefixes
  // (synm…, and real model keys with a _syn suffix).
  std::vector<std::string> queries = kQueries;
  for (const char* q :
       {"synm2f3 sft", "synm1f1 pretrain 8 gpus", "llama3 peft 4 gpus", "qwen3 sft 2 gpus 32k sequence", "pretrain 16 gpus", "peft 2 gpus"})
    queries.emplace_back(q);
  check_against_oracle(tmp / "kb.sqlite", queries);
}
