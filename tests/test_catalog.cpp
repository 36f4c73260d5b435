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
