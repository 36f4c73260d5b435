// The knowledge base as values (private to the engine). What the stages of
// an answer read is loaded once by the KB reader (query/kb/kb.hpp) into the
// types below and handed to every stage as `const Snapshot&`: the planner
// settings (data/planner.tsv, parsed and checked when loaded: a missing or
// malformed value is an error naming it, never a silent default), the GPUs,
// config keys, launcher flags and presets, the ranking criteria, the checks
// and the texts of the entities they cite, the memory model's constants and
// the models' families and sizes. The stages compute from these values; none
// of them reads the database.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "base/kinds.hpp"
#include "query/kbq.hpp"
#include "query/memory/from_facts.hpp"
#include "query/memory/memory.hpp"

namespace kbq {

// An entity of the documents by kind and key ("rule", "1").
struct EntityRef {
  std::string kind, key;
  bool operator<(const EntityRef& o) const { return std::tie(kind, key) < std::tie(o.kind, o.key); }
  bool operator==(const EntityRef& o) const = default;
};
// "kind/key" (data/checks.tsv, data/planner.tsv *_command); nullopt without a '/'.
std::optional<EntityRef> parse_entity_ref(std::string_view text);

struct Gpu {
  std::string key, display;
  std::string short_name;  // the name answers print ("RTX 6000 Ada")
  double memory_gib = 0;   // 0: unknown
  long long nvlink = 0, per_node = 0;
  bool fp8_any_layout = false;
  std::string source;
  std::string arch;  // ampere, hopper, ... (data/gpus.tsv): which precisions it runs
};

// A numeric precision a recipe's code can set, and the GPU architectures
// that run it (data/precisions.tsv), in the file's order.
struct PrecisionInfo {
  std::string key;              // bf16, fp8cs, fp8mx, nvfp4, ...
  std::set<std::string> archs;  // gpus.arch values that run it
  std::string display, source;
};

struct ConfigKey {
  std::string key;
  Impact layer = Impact::Unknown;  // what changing it does
  std::string dimension, sentence, file, aliases;
  int line = 0;
  std::string entity;  // aligned paragraph holding the sentence, "config_layer/2"
};

// One launcher option (`section` flag of the launcher table).
struct Flag {
  std::string item;  // parser:dest
  std::string short_option, long_option;
  std::string config_key;  // the key it sets ("" when none)
  std::string at;
  std::string type;  // the argparse type of its value ("int"; "" when none is stated)
};

// What a scan over many models needs (the family and the size).
struct ModelBrief {
  std::string family;         // data/models.tsv family ('' when none)
  double total_params_b = 0;  // 0: unknown
  std::string display;        // its display name
};

// One language's text of an entity.
struct EntityText {
  std::string lang, text, file;
  std::string
      parts;        // its named parts as the KB holds them: a JSON object of strings (a command's `command`, a pitfall's `symptom`, `fix`)
  std::string row;  // the entity as an error names it ("command library_entry/1")
  int line = 0, revision = 0;
  bool winner = false;
  bool usable = true;  // may be shown: not overruled by a newer revision (base/choose.hpp)
  // A named part, read from `parts` when asked (most texts are shown
  // whole); nullopt when it has none. Throws kb::KbValueError naming
  // entity_texts.parts when `parts` is not a JSON object of strings.
  std::optional<std::string> part(std::string_view name) const;
  // `parts` once parsed and found good (a command's text is asked for its
  // part at every plan): filled by part(), like the Kb's own caches.
  mutable std::optional<std::map<std::string, std::string, std::less<>>> parsed_parts;
};

// An older revision's value of an entity's field.
struct Superseded {
  std::string field, value, file, lang;
  int line = 0, revision = 0;
};

// The planner's parameters (data/planner.tsv), each parsed and checked once
// when the KB is opened (read_settings).
struct Settings {
  long long long_context_threshold = 0;                                     // tokens: a longer sequence needs CP
  std::string default_gpu;                                                  // GPU key when the question names none
  std::string multi_node_flags;                                             // torchrun's multi-node flags, with {nodes}
  std::string recipe_flag, dataset_flag, nproc_flag;                        // the training launcher's flags
  std::string bench_nodes_flag, bench_gpus_per_node_flag, bench_mode_flag;  // the benchmark launcher's flags
  EntityRef library_command, benchmark_command;                             // the entry-point commands
  std::string moe_overlap_hardware;                                         // the GPU of the MoE overlap pitfall
  std::string benchmark_intent;                                             // the intent that asks for benchmark recipes
  std::vector<std::string> precision_gpus;              // GPU keys assumed, in order, for a precision default_gpu does not run
  std::string largest_intent;                           // the intent that asks for the largest model that fits (ranking criterion `size`)
  std::string cuda_graph_dimension;                     // config-keys dimension of the CUDA-graph keys
  std::vector<std::string> unasked_dataset_modalities;  // recipes that may get a --dataset nobody asked for
  std::string vlm_sft_images_modality;                  // the VLM images pitfall: modality ...
  std::string vlm_sft_images_mode;                      // ... and mode
  std::string launcher_parser;                          // the training launcher's flags are its items <parser>:<dest>
  std::vector<Dim> change_order;                        // the order the layout planner changes sizes (tp, pp, cp, ep once each)
  long long max_world = 0;                              // the largest world the fewest-GPU search tries
  std::string pretrained_checkpoint_path;               // placeholder for a fine-tune's starting checkpoint
  std::string none_literal;                             // how an override sets a field to None (Hydra's `null`)
  double borderline_memory = 0;                         // share of a GPU's memory above which a fit is borderline
  std::vector<std::pair<std::string, std::string>> intent_modality;  // intent → modality
  std::string default_precision;                                     // the plain recipes' precision
  std::string launch_mode_flag;                                      // the launcher flag's dest that picks the mode
  std::vector<std::pair<std::string, long long>> intent_gpus;        // intent → GPU count
  std::vector<std::pair<std::string, std::string>>
      memory_lever;  // the overrides that trade compute for activation memory (full recompute), in order
  std::vector<std::pair<std::string, std::string>>
      optimizer_lever;              // the overrides that move the optimizer's moments to the CPU, tried with memory_lever
  std::string base_language;        // the language translations fall back to
  double own_layout_tolerance = 0;  // a recipe's own layout may exceed the estimate by this share
  double memory_headroom = 0;       // a changed layout above this share of a GPU's memory is the last choice
  std::vector<std::pair<std::string, std::string>> multi_node_env;  // variable the multi-node flags read → its role
  std::string slurm_script;                                         // the sbatch template, "\n" read as a line break
  std::string checkpoint_import, checkpoint_import_at;              // the Hugging Face import command ({hf_id} {path}), its source
  std::string hf_model_placeholder;                                 // --hf-model when the KB has no Hugging Face id
  std::string dry_run_dest;                                         // the training launcher's dry-run flag (its dest)
};
// Reads the planner table (key → value). Throws kb::KbValueError naming
// `planner.value` of the key for a missing or malformed value.
Settings read_settings(const std::map<std::string, std::string>& rows);

class Snapshot {
 public:
  Settings settings;
  std::string commit;                                       // the newest code snapshot's short commit ("" without code facts)
  std::vector<Gpu> gpus;                                    // by key
  std::vector<PrecisionInfo> precisions;                    // data/precisions.tsv order
  std::vector<ConfigKey> config_keys;                       // in the KB's row order
  std::vector<Flag> flags;                                  // the training launcher's flags (settings.launcher_parser), by item
  std::map<std::string, std::string> tasks;                 // launcher mode → task (lora → peft)
  std::map<std::string, std::vector<std::string>> presets;  // --dataset preset → launcher modes it allows
  std::map<std::string, std::string> preset_data;           // --dataset preset → what it trains on (a dataset_kinds data value)
  std::vector<std::pair<std::string, std::vector<std::string>>> datasets;  // the documents' presets and their modes, in data order
  std::vector<std::pair<std::string, std::string>> renames;                // old preset → new
  std::vector<std::string> ranking;                                        // the ranking criteria in order
  std::vector<std::pair<std::string, EntityRef>> checks;                   // check id → the entity it enforces, in data order
  std::map<EntityRef, std::vector<EntityText>> texts;                      // texts of the entities the stages cite, winner first
  std::map<EntityRef, std::vector<Superseded>> superseded;                 // older revisions of the checks' entities
  memory::Params memory{};                                                 // the memory model's constants
  std::map<std::string, ModelBrief, std::less<>> models;                   // every model's family and size

  const Gpu* gpu(std::string_view key) const;
  // The name answers print for a GPU key: its short name, else the key in capitals.
  std::string gpu_name(std::string_view key) const;
  const PrecisionInfo* precision(std::string_view key) const;
  // Whether a GPU runs a precision (its arch is one of the precision's):
  // nullopt when the precision or the GPU's architecture is unknown.
  std::optional<bool> runs(std::string_view precision, const Gpu& g) const;
  // A config key by its name, else the first whose aliases name it (as the
  // KB's lookup did: ASCII case-insensitive, '_' and '%' match as in SQL LIKE).
  const ConfigKey* config_key(std::string_view key) const;
  // The config key of a layout dimension (the first by name); "" when none.
  std::string key_for(std::string_view dimension) const;
  // The training launcher's option that sets a config key.
  const Flag* flag_for(std::string_view config_key) const;
  // The launcher option whose parser destination is `dest`, with the first spelling of each name.
  std::optional<Flag> flag_named(std::string_view dest) const;
  std::string task_of(std::string_view launch_mode) const;  // "" when not a mode
  const ModelBrief* model(std::string_view key) const;      // nullptr when no such model
  const EntityRef* check_entity(std::string_view check) const;
  // The entities the stages cite: the entry-point commands, the checks'
  // rules and pitfalls, the config keys' layer paragraphs.
  std::vector<EntityRef> cited() const;
};

// The texts an answer in one language cites: of each entity of
// Snapshot::cited(), the editions prose() may pick (the language's own, the
// base language's, and the winner), winner first.
struct CitedTexts {
  std::map<EntityRef, std::vector<EntityText>> texts;
  const std::vector<EntityText>& of(const EntityRef& e) const;  // empty when the KB has none
};

// --- per recipe ---------------------------------------------------------------------------

// Every recipe of a kind (the KB's `recipes`), by name.
struct Catalog {
  std::vector<Recipe> recipes;
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

// A fact of a recipe function, as the code extractor found it: the memory
// model's own type (query/memory/from_facts.hpp), read by it as it is.
using CodeFact = memory::Fact;
using CodeFacts = memory::RecipeFacts;  // field → fact

// What planning one recipe reads: the recipe, its function's facts and its
// model (nullptr when the KB has none).
struct RecipeData {
  const Recipe& recipe;
  const CodeFacts& facts;
  const Model* model = nullptr;
  std::string commit;  // the code snapshot the facts cite
  // "path:line@commit" of a fact ("" when unknown).
  std::string cite(const std::string& field) const;
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

// A quick-reference row as the ranker reads it (compiler/derive), with the
// recipes it names and, for each the code exports, its model and mode.
struct QuickRefRow {
  struct Pick {
    std::string name;
    bool exported = false;        // the code exports the name
    std::string model_key, mode;  // when exported
  };
  std::string row, mode, scale;  // mode, scale: empty when the row names none
  std::vector<std::string> intents;
  std::vector<Pick> recipes;
  long long gpus = 0;
  bool single_gpu_count = false;
};

// The code's config keys (code_config_keys), for kbq check's overrides.
struct CodeConfigKeys {
  struct Row {
    std::string key, kind, type;
  };
  std::vector<Row> rows;  // in the KB's row order
  // The fields' keys, sorted (the nearest-key hint).
  std::vector<std::string> field_keys() const;
  // A field of that key, or a key under a section whose class lies outside the snapshot.
  bool exists(const std::string& key) const;
  // The annotated type of a field (nullptr when no field has the key).
  const std::string* type_of(const std::string& key) const;
  // The fields' keys under the section of `key` (its first dotted part), sorted.
  std::vector<std::string> section_fields(const std::string& key) const;
};

// The text of an entity in `lang` (a part of it when `part` names one), as
// base/choose.hpp picks it: the language's own usable edition, else the base
// language's, else the winner.
Prose prose(const std::vector<EntityText>& texts, const EntityRef& e, const std::string& lang, const std::string& base_language,
            const std::string& part = {});

// "revision N (file:line) said: ..." for each older value of an entity's
// fields, with the `superseded` label of the answer's language.
std::vector<std::string> superseded_notes(const std::vector<Superseded>& rows, const EntityRef& e, const std::string& label);

// Replaces each {name} of `text` by its value.
std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& vars);

}  // namespace kbq
