// A question naming a model reads only its family's recipes
// (Kb::catalog(kind, prefix)); candidates() asks for every recipe where the
// answer depends on the others. Both must give what the whole catalog gives:
// the same recipes in the same order, and the same candidates and notes.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "base/dsl/parse.hpp"
#include "base/text.hpp"
#include "query/kb/kb.hpp"
#include "query/plan/plan.hpp"
#include "query/stage.hpp"

namespace {

const std::string kKb = std::string(KB_BINARY_DIR) + "/kbq.sqlite";

std::vector<std::string> names(const kbq::Catalog& c) {
  std::vector<std::string> out;
  for (const auto& r : c.recipes) out.push_back(r.name);
  return out;
}

// The whole catalog's recipes whose name or model key starts with `prefix`.
std::vector<std::string> expected(const kbq::Catalog& whole, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& r : whole.recipes)
    if (kb::starts_with(r.name, prefix) || kb::starts_with(r.model_key, prefix)) out.push_back(r.name);
  return out;
}

}  // namespace

TEST_CASE("catalog: a prefix's recipes are the whole catalog's whose name or model key starts with it, in its order", "[catalog]") {
  kbq::Kb whole_kb(kKb);
  kbq::Kb fresh(kKb);  // never loads a whole catalog: each prefix is read from the KB
  for (auto kind : {kb::RecipeKind::Library, kb::RecipeKind::Benchmark}) {
    const kbq::Catalog& whole = whole_kb.catalog(kind);
    std::vector<std::string> prefixes = {"q",        "qwen3",       "qwen3_30b", "llama3",    "llama31_405b", "k_exaone", "exaone",
                                         "nemotron", "deepseek_v4", "zzz",       "qwen3\xff", "\xff\xff",     "a"};
    for (const auto& [key, m] : whole_kb.snapshot().models) prefixes.push_back(key);
    size_t nonempty = 0, partial = 0;
    for (const auto& prefix : prefixes) {
      INFO("prefix " << prefix);
      const auto want = expected(whole, prefix);
      nonempty += !want.empty();
      partial += !want.empty() && want.size() < whole.recipes.size();
      // Read from the KB ...
      CHECK(names(fresh.catalog(kind, prefix)) == want);
      // ... and taken from the whole catalog once it is loaded.
      CHECK(names(whole_kb.catalog(kind, prefix)) == want);
    }
    CHECK(nonempty > 20);  // the test reads real families, not only empty prefixes
    CHECK(partial == nonempty);
  }
}

TEST_CASE("catalog: candidates from a family's recipes are every recipe's, or it asks for every recipe", "[catalog]") {
  kbq::Kb kb(kKb);
  const std::vector<std::string> modes = {"", "sft", "peft", "pretrain", "lora"};
  const std::vector<std::string> models = {"qwen3", "qwen3 13b", "qwen3 600b", "llama3 70b", "llama3 13b", "llama31 405b",
                                           "deepseek v4 pro", "deepseek v4 flash", "gemma3", "gemma3 27b", "nemotron", "glm 5.1",
                                           "exaone moe", "qwen3 30b a3b", "flux", "wan", "kimi", "gpt oss 20b", "qwen3 vl", "mixtral",
                                           "qwen3 next 80b a3b",
                                           // sizes only a sibling family (models.tsv's family, another name prefix) has
                                           "qwen3 72b", "qwen25 32b", "qwen25 235b", "llama31 70b", "llama3 1b", "gemma2 27b"};
  const std::vector<std::string> extras = {"", "vl", "instruct", "thinking", "pro", "base", "mock", "energon", "8 gpus", "fp8 h100"};
  size_t asked_all = 0, same = 0;
  for (const auto& mode : modes)
    for (const auto& model : models)
      for (const auto& extra : extras) {
        const std::string question = mode + " " + model + " " + extra;
        INFO(question);
        const auto parsed = kbq::dsl::parse(kb.lexicon(), question);
        REQUIRE_FALSE(parsed.error);
        const kbq::Context c{kb.snapshot(), kb.labels("en"), kb.cited_texts("en"), "en"};
        auto resolved = kbq::resolve_terms(c, parsed.query);
        if (!std::holds_alternative<kbq::Ask>(resolved)) continue;
        kbq::Ask ask = std::get<kbq::Ask>(resolved);
        if (ask.model.empty()) continue;
        kbq::Answer scratch;
        kbq::resolve_words(c, parsed.query, kbq::name_tokens(kb.recipe_names(ask.kind())), ask, scratch);
        kbq::Answer all, family;
        const auto want = kbq::candidates(c, ask, kb.catalog(ask.kind()), all);
        bool family_only = true;
        const auto got = kbq::candidates(c, ask, kb.catalog(ask.kind(), ask.model), family, &family_only);
        if (!family_only) {
          ++asked_all;
          CHECK(got.empty());
          continue;
        }
        ++same;
        REQUIRE(got.size() == want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          CHECK(got[i].recipe->name == want[i].recipe->name);
          CHECK(got[i].substitute == want[i].substitute);
        }
        CHECK(family.warnings == all.warnings);
        CHECK(family.no_match == all.no_match);
      }
  // Both ways are taken: the family's recipes suffice for most questions,
  // and some (a size the family lacks, words only other modes carry) ask for all.
  CHECK(same > 500);
  CHECK(asked_all > 10);
}
