// Private to the query engine: its read-only view of the knowledge base.
// Opens the embedded KB (or a file given with --kb), refuses another schema
// version, and loads the small tables the planner needs. Recipes are read
// with indexed queries. Every stage but render reads the KB through this.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/dsl/parse.hpp"
#include "base/sqlite.hpp"
#include "query/kbq.hpp"

namespace kbq {

// A recipe as a ranking candidate: what query terms naming recipes score,
// and the shape that scores the rest.
struct Candidate {
  long long id = 0, shape = 0;
  std::string name, model_key, mode;
  RecipeKind kind = RecipeKind::Library;
};
// The same, read in place (valid during the callback only).
struct CandidateView {
  long long id = 0, shape = 0;
  std::string_view name, model_key, mode;
  RecipeKind kind = RecipeKind::Library;
};

// A quick-reference row as the ranker reads it (compiler/derive).
struct QuickRefRow {
  std::string row, mode, scale;  // mode, scale: empty when the row names none
  std::vector<std::string> intents, recipes;
  long long gpus = 0;
  bool single_gpu_count = false;
};

struct Model {
  std::string key, display, arch;
  int layers = 0, heads = 0;
  std::optional<int> kv_heads;  // empty for MLA models
  std::string kv_raw;
  int experts = 0;
  long long max_pos = 0;
  std::string source;
};

struct Gpu {
  std::string key, display;
  int nvlink = 0, per_node = 0;
  std::string source;
};

struct ConfigKey {
  std::string key;
  Impact layer = Impact::Unknown;  // what changing it does
  std::string dimension, sentence, file, aliases;
  int line = 0;
  std::string entity;  // aligned paragraph holding the sentence, "config_layer/2"
};

// One language's text of an entity.
struct EntityText {
  std::string lang, text, file;
  std::map<std::string, std::string> parts;
  std::map<std::string, std::vector<std::string>> facts;
  int line = 0, revision = 0;
  bool winner = false;
};

struct Superseded {
  std::string field, value, file, lang;
  int line = 0, revision = 0;
};

class Kb {
 public:
  // Opens the KB embedded in the binary (path empty) or a file. Throws
  // std::runtime_error with a one-line message naming the problem.
  explicit Kb(const std::string& path);

  kb::Db& db() { return db_; }
  // The query lexicon, built at its first use (show, check, rules,
  // pitfalls and sources never parse a query, so never pay for it).
  const kbq::dsl::Lexicon& lexicon();
  const std::vector<std::string>& languages() const { return languages_; }

  std::optional<Recipe> recipe(const std::string& name, const std::string& mode = {});
  std::optional<Recipe> recipe_by_id(long long id);
  // Calls `each` for every candidate of a kind whose name or model key
  // starts with the prefix (all of the kind when it is empty), in no
  // particular order.
  void candidates(RecipeKind kind, const std::string& name_prefix, const std::function<void(const CandidateView&)>& each);
  std::vector<Candidate> candidates_named(RecipeKind kind, const std::string& name);
  std::optional<Candidate> candidate(long long id);
  // One row per shape of a kind (its first member, with the columns the
  // ranker reads of a shape only), by shape id.
  std::vector<Recipe> shapes(RecipeKind kind);
  // The first `limit` members of a shape by name.
  std::vector<Candidate> shape_members(long long shape, long long limit);
  std::optional<Model> model(const std::string& key);
  // Is the recipe a mixture-of-experts model: its model facts list experts,
  // its row sets EP above 1, or its family heading says MoE. The one MoE
  // predicate of the engine.
  bool is_moe(const Recipe& r);
  std::optional<Gpu> gpu(const std::string& key);
  std::vector<Gpu> gpus();
  std::optional<ConfigKey> config_key(const std::string& key);  // by key or alias
  std::vector<ConfigKey> config_keys_for(const std::string& dimension);
  std::string planner(const std::string& key);
  std::string check_entity(const std::string& check);         // "rule/1"
  std::vector<std::pair<std::string, std::string>> checks();  // (check, entity)
  // Texts of an entity (kind, key), winner first (read once, then cached).
  const std::vector<EntityText>& entity(const std::string& kind, const std::string& key);
  std::vector<std::string> entity_keys(const std::string& kind);
  std::vector<QuickRefRow> quick_ref_rows();
  // Older values of an entity's or recipe's fields.
  std::vector<Superseded> superseded(const std::string& entity_kind, const std::string& entity_key);
  // The fields of a recipe its winning row does not state, taken from an
  // older edition (table fallbacks): where each was read, `what` = the field.
  std::vector<SourceRef> recipe_fallbacks(long long recipe_id);
  // Dataset presets: (preset, modes) in data order; renames old → new.
  std::vector<std::pair<std::string, std::vector<std::string>>> datasets();
  std::vector<std::pair<std::string, std::string>> renames();
  // A label in a language, falling back to en; all labels of a language.
  std::string label(const std::string& lang, const std::string& key);
  Labels labels(const std::string& lang);
  // What `kbq sources` reports: editions, missing translations, conflicts.
  SourcesReport sources_report();
  // Source files of the KB (editions and data), by path.
  std::vector<std::string> source_files();
  // Full-text search: recipe ids whose text matches all words.
  std::vector<long long> search_recipes(const std::vector<std::string>& words);

 private:
  Recipe read_recipe(kb::Stmt& st);
  static std::optional<Model> read_model(kb::Db& db, const std::string& key);
  kb::Db db_;
  std::optional<kbq::dsl::Lexicon> lexicon_;
  std::string where_;  // the KB as named in errors
  std::vector<std::string> languages_;
  std::map<std::string, std::map<std::string, std::string>> labels_;  // lang → key → text
  std::map<std::string, std::optional<Model>> model_cache_;
  std::vector<Gpu> gpus_;
  std::map<std::pair<std::string, std::string>, std::vector<EntityText>> entity_cache_;
  std::map<std::string, std::string> planner_, check_entities_;
};

// Text of an entity in `lang`, falling back to the winning edition.
Prose prose(Kb& kb, const std::string& kind, const std::string& key, const std::string& lang, const std::string& part = {});

// "revision N (file:line) said: ..." for each older value of an entity's
// fields (all fields when `fields` is empty), in `lang`.
std::vector<std::string> superseded_notes(Kb& kb, const std::string& kind, const std::string& key, const std::string& lang,
                                          const std::vector<std::string>& fields = {}, bool name_entity = true);

// Replaces each {name} of `text` by its value.
std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& vars);

}  // namespace kbq
