// Private to the query engine: the KB reader, the only part of the engine
// that holds a database handle. Opens the embedded KB (or a file given with
// --kb), refuses another schema version or an incomplete KB, and loads what
// the stages read into values (query/kb/snapshot.hpp): the snapshot of the
// small tables and the settings, once; the labels of a language, once per
// language; the recipes of a kind, once per kind; a recipe function's facts,
// its model and the documents' drift for a recipe, once each (a process that
// answers one question releases each recipe's facts once it is planned:
// AskOptions::keep_facts). The engine
// loads, the stages compute: no stage includes this header. Every value is
// bound as a parameter.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/dsl/parse.hpp"
#include "base/sqlite.hpp"
#include "query/kb/recipes_stored.hpp"
#include "query/kb/snapshot.hpp"
#include "query/kbq.hpp"
#include "query/perf/tables.hpp"

namespace kbq {

using LaunchSites = std::vector<std::pair<long long, std::string>>;  // launch_sites in id order: id, path:line@commit

class Kb {
 public:
  // Opens the KB embedded in the binary (path empty) or a file. Throws
  // std::runtime_error with a one-line message naming the problem.
  explicit Kb(const std::string& path);
  // Neither copied nor moved: the lexicon reads recipe names through db_.
  Kb(const Kb&) = delete;
  Kb& operator=(const Kb&) = delete;

  // The query lexicon, built at its first use (show, check, rules,
  // pitfalls and sources never parse a question).
  const kbq::dsl::Lexicon& lexicon();
  const std::vector<std::string>& languages() const { return languages_; }
  // One of the languages the KB was compiled from (meta.languages).
  bool is_language(const std::string& lang) const;
  const std::string& commit() const { return commit_; }  // the newest snapshot's short commit

  // The small tables and the settings as values (loaded at the first
  // answer), from the rows kbc stored (rows_compiled, part 'snapshot'; a KB
  // without them is refused).
  const Snapshot& snapshot();
  // data/planner.tsv's settings (the snapshot's).
  const Settings& settings();
  // All labels of a language, the base language's where it has none
  // (loaded once per language), from the rows kbc stored for each language
  // of the KB ("labels/<lang>"; a KB without them is refused); another
  // language's from the table (none, as a rule).
  const Labels& labels(const std::string& lang);
  // The texts an answer in a language cites (loaded once per language),
  // from the rows kbc stored ("cited/<lang>"), as the labels.
  const CitedTexts& cited_texts(const std::string& lang);

  // --- recipes (from the code) ---------------------------------------------------
  // Every recipe of a kind, by name, and the words of their names (read once).
  const Catalog& catalog(RecipeKind kind);
  // The recipes of a kind whose name or model key starts with `prefix`, by
  // name: a model family's and those the planner's family test (stricter)
  // leaves out ("qwen3" also gives qwen35_*), without reading every recipe
  // (read once per kind and prefix; taken from the whole catalog when that
  // is loaded).
  const Catalog& catalog(RecipeKind kind, const std::string& prefix);
  // The recipes of a kind whose mode is `mode`, by name (read once per kind
  // and mode; taken from the whole catalog when that is loaded).
  const Catalog& catalog_of_mode(RecipeKind kind, const std::string& mode);
  // The recipes of a kind whose model is one of `models`, and every recipe
  // of the kind that shares a function with a recipe of them (of either
  // kind), by name (read once per kind and models; taken from the whole
  // catalog when that is loaded).
  const Catalog& catalog_of_models(RecipeKind kind, const std::vector<std::string>& models);
  // Whether every recipe of a kind is loaded already (a part then costs a copy).
  bool has_catalog(RecipeKind kind) const { return catalogs_.count(kind) > 0; }
  // The names of every recipe of a kind, by name (read once).
  const std::vector<std::string>& recipe_names(RecipeKind kind);
  // A recipe by name: the library one when both packages export the name.
  std::optional<Recipe> recipe(const std::string& name);
  std::optional<Recipe> recipe(const std::string& name, RecipeKind kind);
  // Every recipe of both kinds read from the rows of recipes, recipe_launch
  // and launch_sites, each kind in name order: what kbc compiles into
  // recipes_compiled (Engine::compile_recipes), which the rest reads.
  std::vector<Recipe> recipes_from_tables();
  // What planning a recipe reads beyond the recipe row: its function's
  // facts and its model (read once per function and model).
  RecipeData data_of(const Recipe& r);
  // Drops what facts() keeps of a recipe function (the next read reads them
  // again); a RecipeData of it must not be used after.
  void release_facts(const std::string& target) { facts_.erase(target); }
  // Where the documents disagree with the code about a recipe (read once per name).
  const std::vector<DriftRow>& drift(const std::string& subject);
  // Document rows naming a recipe the code does not export.
  std::vector<DocRecipe> doc_recipe(const std::string& name);
  // The quick-reference rows with the recipes they name resolved (read once).
  const std::vector<QuickRefRow>& quick_ref_rows();
  // The code's config keys (kbq check's override validation; read once).
  const CodeConfigKeys& code_config_keys();
  // The names a str value of config key `key` may take, with the precision
  // each builds and its factory (path:line@commit), by name; empty when the
  // code looks no name up for the key (launcher rows of section registry).
  struct RegistryEntry {
    std::string name, precision, at;
    bool canonical = false;  // the name is its factory function's own (the other spellings are aliases)
  };
  std::vector<RegistryEntry> registry(const std::string& key);

  // --- documents -------------------------------------------------------------------
  // Texts of an entity (kind, key), winner first (read once, then cached).
  const std::vector<EntityText>& entity(const std::string& kind, const std::string& key);

  std::vector<std::string> entity_keys(const std::string& kind);
  // What `kbq sources` reports: editions, missing translations, conflicts.
  SourcesReport sources_report();
  // Source files of the KB (editions and data), by path.
  std::vector<std::string> source_files();
  // The code snapshots compiled, newest first (kbq --version).
  std::vector<Engine::CodeSnapshot> code_snapshots();

  // --- throughput (query/kb/perf.cpp) ------------------------------------------------
  // NVIDIA's measured rows and the throughput estimator's data, with the
  // FLOPs and fit kbc derived: what an answer's estimate reads (not kept:
  // the engine builds its estimator's set from them once, moving them in).
  // Read from the one value kbc compiled them into (perf_compiled).
  std::unique_ptr<perf::PerfTables> perf_estimate_tables();
  // The same read from the tables' rows: what kbc compiles into
  // perf_compiled (compiler/generate/perf_fit.cpp).
  std::unique_ptr<perf::PerfTables> perf_estimate_rows();
  // The same with what `kbq perf` lists too (not kept: one listing reads it once).
  std::unique_ptr<perf::PerfTables> perf_listing_tables();
  // The same rows with each one's benchmark recipe and model, to derive the
  // FLOPs and fit from (kbc's derive step; the tests compare the two).
  std::unique_ptr<perf::PerfTables> perf_sources();

 private:
  std::unique_ptr<perf::PerfTables> read_perf_tables(perf::PerfRead read);
  void add_nvlink(perf::PerfTables& t);
  const CodeFacts& facts(const std::string& target);
  // The facts of `target` whose field `wanted` accepts (not kept: the
  // throughput tables' benchmark recipes need a few dozen of their hundred).
  CodeFacts facts(const std::string& target, bool (*wanted)(std::string_view field));
  void read_facts(const std::string& target, CodeFacts& out, bool (*wanted)(std::string_view field));
  const Model* model(const std::string& key);
  // Where the code decides a recipe's launch facts: launch_sites by id (read
  // once; a join per citation would seek the table five times a recipe).
  const LaunchSites& launch_sites();
  // The recipes as compiled (recipes_compiled), every one's key indexed
  // (read once, at the first recipe an answer needs).
  stored_recipes::Index& recipe_index();
  // The recipe of an index entry into `r`, its model's name and the commit
  // set; `before`, the recipe read just before it, if any (its model's name
  // is reused for a recipe of the same model).
  void read_stored(const stored_recipes::Index::Entry& e, Recipe& r, const Recipe* before = nullptr);
  // The recipes of a kind whose key `in` keeps, in name order: from the
  // whole catalog when it is loaded, else read from the index.
  Catalog catalog_part(RecipeKind kind, const std::function<bool(const stored_recipes::Key&)>& in);

  kb::Db db_;
  std::optional<kbq::dsl::Lexicon> lexicon_;
  std::string where_;  // the KB as named in errors
  std::vector<std::string> languages_;
  std::string commit_;
  std::unique_ptr<Snapshot> snapshot_;
  std::map<std::string, Labels> labels_;
  std::map<RecipeKind, Catalog> catalogs_;
  std::map<std::pair<RecipeKind, std::string>, Catalog> prefix_catalogs_;
  std::map<std::pair<RecipeKind, std::string>, Catalog> mode_catalogs_;
  std::map<std::pair<RecipeKind, std::vector<std::string>>, Catalog> model_catalogs_;
  std::optional<LaunchSites> launch_sites_;
  std::unique_ptr<stored_recipes::Index> recipe_index_;
  std::map<RecipeKind, std::vector<std::string>> recipe_names_;
  std::map<std::string, CodeFacts, std::less<>> facts_;
  struct FactValue {
    std::string state, value, type;     // a fact_values row as stored (the state is checked where a fact uses it)
    std::optional<kb::FactState> kind;  // `state` parsed once; none when kbq does not know it
  };
  // Each table's rows in id order (kbc numbers them from 1, so the row of
  // id n is at n - 1; a KB numbered otherwise is searched).
  template <typename V>
  using ById = std::vector<std::pair<long long, V>>;
  struct FactDictionaries {
    ById<std::string> fields, files;  // fact_fields, code_files
    // fact_values rows by id, each read at its first use (none: no such
    // row): an answer uses a few hundred of them.
    std::map<long long, std::optional<FactValue>> values;
  };
  std::optional<FactDictionaries> fact_dictionaries_;
  std::map<std::string, std::optional<Model>> models_;
  std::map<std::string, std::vector<DriftRow>> drift_;
  std::optional<CodeConfigKeys> code_keys_;
  std::optional<std::vector<QuickRefRow>> quick_ref_;
  std::map<std::pair<std::string, std::string>, std::vector<EntityText>> entity_cache_;
  std::map<std::string, CitedTexts> cited_texts_;  // by language
};

}  // namespace kbq
