// Every override the plan stage states carries its config key's layer: the
// impact class and the sentence that says so, in the answer's language
// (query/plan/changes.cpp, classify). An engine keeps the layers it found
// per language (Context::layers) for the answers after; a kept layer must
// be the one found afresh, whatever was classified before it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "query/kb/kb.hpp"
#include "query/plan/plan.hpp"
#include "query/stage.hpp"

namespace {

const std::string kKb = std::string(KB_BINARY_DIR) + "/kbq.sqlite";

// The overrides of `recipe` planned on the default GPU, with the layers of
// `layers` (null: none kept).
std::vector<kbq::Override> overrides(kbq::Kb& kb, const std::string& lang, const kbq::Recipe& recipe, kbq::ConfigLayers* layers) {
  const kbq::Context c{kb.snapshot(), kb.labels(lang), kb.cited_texts(lang), lang, layers};
  kbq::Ask ask;
  ask.hardware = c.settings().default_gpu;
  ask.gpus = 8;
  return kbq::plan_recipe(c, kb.data_of(recipe), ask, false).result.overrides;
}

}  // namespace

TEST_CASE("config layers: a layer kept from earlier answers is the one found afresh, in every language", "[config_layers]") {
  kbq::Kb kb(kKb);
  // Library recipes of several families and modes (the benchmarks run as
  // exported: no overrides).
  std::vector<const kbq::Recipe*> recipes;
  for (const auto& r : kb.catalog(kb::RecipeKind::Library).recipes)
    if (recipes.size() < 24 && (recipes.empty() || recipes.back()->model_key != r.model_key)) recipes.push_back(&r);
  REQUIRE(recipes.size() == 24);
  size_t classified = 0, with_sentence = 0;
  for (const auto& lang : kb.languages()) {
    INFO("lang " << lang);
    kbq::ConfigLayers kept;
    // Twice over: the second pass finds every layer kept.
    for (int pass = 0; pass < 2; ++pass)
      for (const kbq::Recipe* r : recipes) {
        INFO(r->name << " pass " << pass);
        const auto fresh = overrides(kb, lang, *r, nullptr);
        const auto from_kept = overrides(kb, lang, *r, &kept);
        REQUIRE(fresh.size() == from_kept.size());
        for (size_t i = 0; i < fresh.size(); ++i) {
          INFO(fresh[i].key);
          CHECK(from_kept[i].key == fresh[i].key);
          CHECK(from_kept[i].impact == fresh[i].impact);
          CHECK(from_kept[i].sentence == fresh[i].sentence);
          CHECK(from_kept[i].source.file == fresh[i].source.file);
          CHECK(from_kept[i].source.line == fresh[i].source.line);
          CHECK(from_kept[i].source.revision == fresh[i].source.revision);
          CHECK(from_kept[i].source.what == fresh[i].source.what);
          classified += fresh[i].impact != kbq::Impact::Unknown;
          with_sentence += !fresh[i].sentence.empty();
        }
      }
    // Kept by the KB's own keys: never more than it has.
    CHECK(!kept.empty());
    CHECK(kept.size() <= kb.snapshot().config_keys.size());
    for (const auto& [key, layer] : kept) CHECK(kb.snapshot().config_key(key) != nullptr);
  }
  CHECK(classified > 100);
  CHECK(with_sentence > 100);
}
