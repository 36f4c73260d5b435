// A question naming a model reads only its family's recipes
// (Kb::catalog(kind, prefix)), one naming none its mode's
// (Kb::catalog_of_mode); candidates() asks for every recipe where the
// answer depends on the others. Both must give what the whole catalog gives:
// the same recipes in the same order, and the same candidates and notes.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/dsl/kb_lexicon.hpp"
#include "base/dsl/parse.hpp"
#include "base/limits.hpp"
#include "base/sqlite.hpp"
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

TEST_CASE("catalog: candidates from a family's or a mode's recipes are every recipe's, or it asks for every recipe", "[catalog]") {
  kbq::Kb kb(kKb);
  const std::vector<std::string> modes = {"", "sft", "peft", "pretrain", "lora"};
  const std::vector<std::string> models = {"", "qwen3", "qwen3 13b", "qwen3 600b", "llama3 70b", "llama3 13b", "llama31 405b",
                                           "deepseek v4 pro", "deepseek v4 flash", "gemma3", "gemma3 27b", "nemotron", "glm 5.1",
                                           "exaone moe", "qwen3 30b a3b", "flux", "wan", "kimi", "gpt oss 20b", "qwen3 vl", "mixtral",
                                           "qwen3 next 80b a3b",
                                           // sizes only a sibling family (models.tsv's family, another name prefix) has
                                           "qwen3 72b", "qwen25 32b", "qwen25 235b", "llama31 70b", "llama3 1b", "gemma2 27b",
                                           // no model, a size or a modality only
                                           "70b", "8b", "600b", "vision", "audio", "diffusion", "moe"};
  const std::vector<std::string> extras = {"",        "vl",     "instruct", "thinking",   "pro",        "base",           "mock",
                                           "energon", "8 gpus", "fp8 h100", "16k 8×h100", "dora 1 gpu", "benchmark gb200"};
  struct Count {
    size_t asked_all = 0, same = 0;
  };
  std::map<kbq::CatalogPart::Of, Count> counts;
  for (const auto& mode : modes)
    for (const auto& model : models)
      for (const auto& extra : extras) {
        const std::string question = mode + " " + model + " " + extra;
        if (question.find_first_not_of(' ') == std::string::npos) continue;
        INFO(question);
        const auto parsed = kbq::dsl::parse(kb.lexicon(), question);
        if (parsed.error) continue;  // no answer, no recipes read ("instruct" alone)
        const kbq::Context c{kb.snapshot(), kb.labels("en"), kb.cited_texts("en"), "en"};
        auto resolved = kbq::resolve_terms(c, parsed.query);
        if (!std::holds_alternative<kbq::Ask>(resolved)) continue;
        kbq::Ask ask = std::get<kbq::Ask>(resolved);
        if (ask.model.empty() && ask.mode.empty()) continue;  // every recipe is read
        kbq::Answer scratch;
        kbq::resolve_words(c, parsed.query, kbq::name_tokens(kb.recipe_names(ask.kind())), ask, scratch);
        kbq::Answer all, partly;
        const auto want = kbq::candidates(c, ask, kb.catalog(ask.kind()), all);
        kbq::CatalogPart part{ask.model.empty() ? kbq::CatalogPart::Of::Mode : kbq::CatalogPart::Of::Family};
        const kbq::Catalog& given = ask.model.empty() ? kb.catalog_of_mode(ask.kind(), ask.mode) : kb.catalog(ask.kind(), ask.model);
        const auto got = kbq::candidates(c, ask, given, partly, &part);
        if (!part.enough) {
          ++counts[part.of].asked_all;
          CHECK(got.empty());
          continue;
        }
        ++counts[part.of].same;
        REQUIRE(got.size() == want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          CHECK(got[i].recipe->name == want[i].recipe->name);
          CHECK(got[i].substitute == want[i].substitute);
        }
        CHECK(partly.warnings == all.warnings);
        CHECK(partly.no_match == all.no_match);
      }
  // Both ways are taken for both parts: their recipes suffice for most
  // questions, and some (a size the family lacks, words only other modes
  // carry) ask for all.
  CHECK(counts[kbq::CatalogPart::Of::Family].same > 500);
  CHECK(counts[kbq::CatalogPart::Of::Family].asked_all > 10);
  CHECK(counts[kbq::CatalogPart::Of::Mode].same > 300);
  CHECK(counts[kbq::CatalogPart::Of::Mode].asked_all > 20);
}

TEST_CASE("catalog: a mode's recipes are the whole catalog's of that mode, in its order", "[catalog]") {
  kbq::Kb whole_kb(kKb);
  kbq::Kb fresh(kKb);
  for (auto kind : {kb::RecipeKind::Library, kb::RecipeKind::Benchmark}) {
    const kbq::Catalog& whole = whole_kb.catalog(kind);
    std::set<std::string> modes;
    for (const auto& r : whole.recipes) modes.insert(r.mode);
    modes.insert("no such mode");
    size_t read = 0;
    for (const auto& mode : modes) {
      INFO(mode);
      std::vector<std::string> want;
      for (const auto& r : whole.recipes)
        if (r.mode == mode) want.push_back(r.name);
      CHECK(names(fresh.catalog_of_mode(kind, mode)) == want);
      CHECK(names(whole_kb.catalog_of_mode(kind, mode)) == want);
      read += want.size();
    }
    CHECK(read == whole.recipes.size());  // every recipe has a mode the loop asked
    CHECK_FALSE(fresh.has_catalog(kind));
  }
}

// The lexicon looks words of recipe names up in the KB (kb_lexicon.cpp)
// instead of cutting every name for every question: the lookup must say
// what cutting every name says, for every word of every name and for words
// that are only part of one.
TEST_CASE("catalog: a word of recipe names is found exactly when cutting every name at '_' gives it", "[catalog]") {
  kb::Db db(kKb, kb::Db::Mode::ReadOnly);
  std::set<std::string> words;
  {
    kb::Stmt st(db, "SELECT name FROM recipes");
    while (st.step())
      for (const auto& w : kb::split(st.text(0), '_'))
        if (!w.empty()) words.insert(w);
  }
  REQUIRE(words.size() > 100);
  size_t found = 0, parts = 0;
  for (const auto& w : words) {
    found += kbq::dsl::recipe_name_word(db, w) ? 1 : 0;
    // A part of a word (its first code points) is a name word only when some name has it whole.
    if (w.size() > 2) {
      const std::string part = w.substr(0, w.size() - 1);
      CHECK(kbq::dsl::recipe_name_word(db, part) == (words.count(part) > 0));
      parts += words.count(part) ? 0 : 1;
    }
  }
  CHECK(found == words.size());
  CHECK(parts > 50);
  // Joined words, an empty word and a word with '_' are not words of a name.
  CHECK_FALSE(kbq::dsl::recipe_name_word(db, "qwen3_8b"));
  CHECK_FALSE(kbq::dsl::recipe_name_word(db, ""));
  CHECK_FALSE(kbq::dsl::recipe_name_word(db, "qwen38b"));
  CHECK(kbq::dsl::recipe_name_word(db, "audio"));  // a name word one edit from a GPU word (gaudi): never corrected
}

TEST_CASE("catalog: the models' recipes are the whole catalog's of those models and of the functions they share", "[catalog]") {
  kbq::Kb whole_kb(kKb);
  kbq::Kb fresh(kKb);
  // Every family of models.tsv, and a model alone.
  std::map<std::string, std::vector<std::string>> families;
  for (const auto& [key, brief] : whole_kb.snapshot().models)
    if (!brief.family.empty()) families[brief.family].push_back(key);
  families["(one model)"] = {"llama3_8b"};
  families["(no such model)"] = {"no_such_model"};
  REQUIRE(families.size() > 10);
  for (auto kind : {kb::RecipeKind::Library, kb::RecipeKind::Benchmark}) {
    const kbq::Catalog& whole = whole_kb.catalog(kind);
    const kbq::Catalog& other = whole_kb.catalog(kind == kb::RecipeKind::Library ? kb::RecipeKind::Benchmark : kb::RecipeKind::Library);
    size_t nonempty = 0;
    for (const auto& [family, models] : families) {
      INFO(family);
      const std::set<std::string> keys(models.begin(), models.end());
      std::set<std::string> targets;
      for (const auto* c : {&whole, &other})
        for (const auto& r : c->recipes)
          if (keys.count(r.model_key)) targets.insert(r.target);
      std::vector<std::string> want;
      for (const auto& r : whole.recipes)
        if (targets.count(r.target)) want.push_back(r.name);
      CHECK(names(fresh.catalog_of_models(kind, models)) == want);
      CHECK(names(whole_kb.catalog_of_models(kind, models)) == want);
      nonempty += want.empty() ? 0 : 1;
    }
    CHECK(nonempty > 5);
    CHECK_FALSE(fresh.has_catalog(kind));
    // A family of thousands of models (a crafted KB's) keeps only its
    // models' recipes: names that run no recipe add none.
    std::vector<std::string> many = {"llama3_8b"};
    for (int i = 0; i < 5000; ++i) many.push_back("crafted_" + std::to_string(i));
    CHECK(names(fresh.catalog_of_models(kind, many)) == names(fresh.catalog_of_models(kind, {"llama3_8b"})));
    CHECK(&fresh.catalog_of_models(kind, many) != &fresh.catalog(kind));
  }
}

// The three parts together, through the engine: an answer from the parts a
// fresh reader reads (a family's, a mode's, the alternatives' models) is
// the answer from every recipe (an engine that loaded every recipe first,
// as a --batch does), for questions whose layouts fit and do not.
TEST_CASE("catalog: an answer is the same whether every recipe was loaded first or only the parts it needs", "[catalog]") {
  const std::vector<std::string> questions = {"sft llama3 70b 16 gpus",
                                              "sft llama3 405b 2 gpus",
                                              "pretrain deepseek v3 8 gpus",
                                              "SFT, 8×H100, 16K sequence",
                                              "sft 70b 4 gpus",
                                              "le plus gros modèle à affiner sur 8 H100",
                                              "peft qwen3 1 gpu",
                                              "qwen3 の LoRA を 1 GPU で",
                                              "pretrain qwen3 235b a22b 8 a100",
                                              "sft 405b on 8 h100",
                                              "lora 70b 1 gpu",
                                              "pretrain thinking",
                                              "sft gemma3 27b 2 l40s",
                                              "pretrain nemotron 4 gpus 128k",
                                              "在 8 张 A100 上微调 qwen3 30b a3b",
                                              "sft qwen3 600b",
                                              "biggest model to pretrain on 4 h100",
                                              "sft qwen3 vl 1 gpu",
                                              "dora llama3 8b 1 gpu",
                                              "pretrain mixtral 2 gpus"};
  size_t with_alternatives = 0;
  for (const auto& q : questions) {
    INFO(q);
    kbq::Engine fresh = kbq::Engine::open(kKb), loaded = kbq::Engine::open(kKb);
    REQUIRE(std::holds_alternative<kbq::RecipeList>(loaded.list(kbq::ListOptions{})));  // reads every recipe of both kinds
    const auto a = fresh.ask(q, kbq::AskOptions{}), b = loaded.ask(q, kbq::AskOptions{});
    REQUIRE(a.index() == b.index());
    const auto* x = std::get_if<kbq::Answer>(&a);
    if (!x) continue;
    const auto* y = std::get_if<kbq::Answer>(&b);
    const kbq::RenderOptions json{kbq::Format::Json};
    CHECK(kbq::render(*x, fresh.labels(x->lang), json) == kbq::render(*y, loaded.labels(y->lang), json));
    with_alternatives += x->alternatives.empty() ? 0 : 1;
  }
  CHECK(with_alternatives >= 8);
}
