// Private to the query engine: its read-only view of the knowledge base.
// Opens the embedded KB (or a file given with --kb), refuses another schema
// version or an incomplete KB, and reads what plan, check and rank need:
// the recipes that run (from the code), their facts and the code lines that
// set them, models, GPUs, the memory model's constants, the launcher's flags
// and presets, the documents' rules, pitfalls, labels and quick reference,
// and where the documents disagree with the code. Every value is bound as a
// parameter; small tables are read whole once. Render never reads the KB.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/dsl/parse.hpp"
#include "base/sqlite.hpp"
#include "query/kbq.hpp"

namespace kbq {

// A quick-reference row as the ranker reads it (compiler/derive).
struct QuickRefRow {
  std::string row, mode, scale;  // mode, scale: empty when the row names none
  std::vector<std::string> intents, recipes;
  long long gpus = 0;
  bool single_gpu_count = false;
};

// A model: the columns the planner reads by name, every column of its row,
// and its extra architecture facts (for the memory model).
struct Model {
  std::string key, display, hf_id;
  long long layers = 0, heads = 0, kv_heads = 0, experts = 0;  // 0: not a plain count (kv_heads of MLA models)
  double total_params_b = 0;
  std::map<std::string, std::string, std::less<>> row;   // column → value (data/models.tsv)
  std::map<std::string, std::string, std::less<>> arch;  // field → value (data/model-arch.tsv)
  std::string source;
};

// What a scan over many models needs (the family and the size), read for
// every model in one query instead of a Model each.
struct ModelBrief {
  std::string family;         // data/models.tsv family ('' when none)
  double total_params_b = 0;  // 0: unknown
};

struct Gpu {
  std::string key, display;
  double memory_gib = 0;  // 0: unknown
  long long nvlink = 0, per_node = 0;
  bool fp8_any_layout = false;
  std::string source;
};

struct ConfigKey {
  std::string key;
  Impact layer = Impact::Unknown;  // what changing it does
  std::string dimension, sentence, file, aliases;
  int line = 0;
  std::string entity;  // aligned paragraph holding the sentence, "config_layer/2"
};

// A fact of a recipe function, as the code extractor found it.
struct CodeFact {
  kb::FactState state = kb::FactState::Unknown;
  std::string value, type, at, note;
};
using CodeFacts = std::map<std::string, CodeFact, std::less<>>;  // field → fact

// One launcher option (`section` flag of the launcher table).
struct Flag {
  std::string item;  // parser:dest
  std::string short_option, long_option;
  std::string config_key;  // the key it sets ("" when none)
  std::string at;
};

// One language's text of an entity.
struct EntityText {
  std::string lang, text, file;
  std::map<std::string, std::string> parts;
  std::map<std::string, std::vector<std::string>> facts;
  int line = 0, revision = 0;
  bool winner = false;
  bool usable = true;  // may be shown: not overruled by a newer revision (base/choose.hpp)
};

struct Superseded {
  std::string field, value, file, lang;
  int line = 0, revision = 0;
};

// A document's value that the code contradicts (the KB's drift table).
struct DriftRow {
  std::string kind, field, doc_value, file, lang, code_value, code_at, note;
  int line = 0, revision = 0;
};

// A document row naming a recipe (for names the code does not export).
struct DocRecipe {
  std::string name, file;
  int line = 0, revision = 0;
};

class Kb {
 public:
  // Opens the KB embedded in the binary (path empty) or a file. Throws
  // std::runtime_error with a one-line message naming the problem.
  explicit Kb(const std::string& path);

  kb::Db& db() { return db_; }
  // The query lexicon, built at its first use (show, check, rules,
  // pitfalls and sources never parse a question).
  const kbq::dsl::Lexicon& lexicon();
  const std::vector<std::string>& languages() const { return languages_; }

  // --- recipes (from the code) ---------------------------------------------------
  // Every recipe of a kind, by name (read once).
  const std::vector<Recipe>& recipes(RecipeKind kind);
  // The '_'-separated words of the names of a kind ("qwen3", "vl", "a3b"),
  // as the names spell them (read once).
  const std::set<std::string>& name_tokens(RecipeKind kind);
  // A recipe by name: the library one when both packages export the name.
  std::optional<Recipe> recipe(const std::string& name);
  std::optional<Recipe> recipe(const std::string& name, RecipeKind kind);
  // The facts of a recipe function (read once per function).
  const CodeFacts& facts(const std::string& target);
  // "path:line@commit" of a fact ("" when unknown).
  std::string cite(const std::string& target, const std::string& field);
  std::string commit() const { return commit_; }  // the newest snapshot's short commit
  // Document rows naming a recipe the code does not export.
  std::vector<DocRecipe> doc_recipe(const std::string& name);
  // Where the documents disagree with the code about a subject.
  std::vector<DriftRow> drift(const std::string& subject);

  // --- models, hardware, memory ---------------------------------------------------
  // nullptr when the KB has no such model; the Model lives as long as the Kb.
  const Model* model(const std::string& key);
  const ModelBrief* model_brief(const std::string& key);  // nullptr when no such model
  std::vector<std::string> model_keys();                  // every model key, sorted
  std::optional<Gpu> gpu(const std::string& key);
  const std::vector<Gpu>& gpus();
  // The memory model's constants as data/memory.tsv text (query/memory params_from_tsv).
  std::string memory_params_tsv();

  // --- the launcher ---------------------------------------------------------------
  // The option of the training launcher (run_recipe) that sets a config key.
  std::optional<Flag> flag_for(const std::string& config_key);
  // The launcher flag whose parser destination is dest (a flag without a config key, like the mode).
  std::optional<Flag> flag_named(const std::string& dest);
  // --dataset presets of the code and the launcher modes each allows.
  const std::map<std::string, std::vector<std::string>>& presets();
  // The task of a launcher mode (lora, dora → peft).
  std::string task_of(const std::string& launch_mode);

  // --- documents and data ----------------------------------------------------------
  std::optional<ConfigKey> config_key(const std::string& key);  // by key or alias
  std::vector<ConfigKey> config_keys_for(const std::string& dimension);
  std::string planner(const std::string& key);
  std::string check_entity(const std::string& check);         // "rule/1"
  std::vector<std::pair<std::string, std::string>> checks();  // (check, entity)
  // Texts of an entity (kind, key), winner first (read once, then cached).
  const std::vector<EntityText>& entity(const std::string& kind, const std::string& key);
  std::vector<std::string> entity_keys(const std::string& kind);
  std::vector<QuickRefRow> quick_ref_rows();
  std::vector<Superseded> superseded(const std::string& entity_kind, const std::string& entity_key);
  // Dataset presets the documents recommend, (preset, modes) in data order; renames old → new.
  std::vector<std::pair<std::string, std::vector<std::string>>> datasets();
  std::vector<std::pair<std::string, std::string>> renames();
  // The ranking criteria in order (data/ranking.tsv).
  std::vector<std::string> ranking();
  // A label in a language, falling back to en; all labels of a language.
  std::string label(const std::string& lang, const std::string& key);
  Labels labels(const std::string& lang);
  // What `kbq sources` reports: editions, missing translations, conflicts.
  SourcesReport sources_report();
  // Source files of the KB (editions and data), by path.
  std::vector<std::string> source_files();

 private:
  kb::Db db_;
  std::optional<kbq::dsl::Lexicon> lexicon_;
  std::string where_;  // the KB as named in errors
  std::vector<std::string> languages_;
  std::string commit_;
  std::map<RecipeKind, std::vector<Recipe>> recipes_;
  std::map<RecipeKind, std::set<std::string>> name_tokens_;
  std::map<std::string, CodeFacts, std::less<>> facts_;
  std::map<std::string, std::map<std::string, std::string>> labels_;  // lang → key → text
  std::map<std::string, std::optional<Model>> model_cache_;
  std::optional<std::map<std::string, ModelBrief, std::less<>>> model_briefs_;
  std::vector<Gpu> gpus_;
  std::optional<std::map<std::string, std::vector<std::string>>> presets_;
  std::map<std::string, std::string> tasks_;
  std::map<std::pair<std::string, std::string>, std::vector<EntityText>> entity_cache_;
  std::map<std::string, std::string> planner_, check_entities_;
  // Read once per key: the planner asks the same few dozen for every layout.
  std::map<std::string, std::optional<Flag>> flags_;
  std::map<std::string, std::optional<ConfigKey>> config_keys_;
  std::map<std::string, std::vector<ConfigKey>> keys_for_;  // dimension → its keys
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
