// Plan stage (private to the engine): from a parsed question to planned
// results. One file per job:
//   resolve_question.cpp  what the question asks (mode, model and size,
//                         modality, GPUs and hardware, sequence, precision)
//   resolve_overrides.cpp kbq check's KEY=VALUE overrides, checked against
//                         the code's config keys
//   candidates.cpp        the recipes the code exports that satisfy the
//                         question's constraints
//   plan_recipe.cpp       one recipe on the user's GPUs: a layout that fits
//                         (layout.hpp), the memory per GPU, the batch, the
//                         dataset preset, every change with its impact class
//                         (changes.cpp) and the launch command (command.hpp,
//                         the one command builder: the site pages use it too)
//   alternatives.cpp      what fits when nothing does
// Every function computes from the values it is given (query/stage.hpp,
// query/kb/snapshot.hpp); the engine loads them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/dsl/parse.hpp"
#include "query/kbq.hpp"
#include "query/rules/rules.hpp"
#include "query/stage.hpp"

namespace kbq {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// What a question (or `show` / `check`) asks, resolved against the KB.
struct Ask {
  std::string mode;                              // task asked: pretrain | sft | peft ("" any)
  std::string launch_mode;                       // a launcher mode named in the question (lora, dora), "" otherwise
  std::string model;                             // recipe-name prefix asked ("" any)
  std::string flagship;                          // a bare family name's model key (lexicon flagship), "" otherwise
  std::string size_token;                        // size as in recipe names ("8b", "30b_a3b"), "" any
  double size_params = 0;                        // the size in parameters (0 unknown)
  std::set<std::string> modalities;              // modalities asked (vision, audio, diffusion, omni); empty = text
  bool hardware_for_precision = false;           // the assumed GPU is planner.tsv precision_gpus' first that runs the precision asked
  bool benchmark = false;                        // throughput benchmark recipes
  long long gpus = 0;                            // GPUs asked (0: the recipe's own)
  std::string hardware;                          // GPU key
  bool hardware_assumed = false;                 // the question named none: the KB's default
  long long seq = 0;                             // sequence length asked (0: the recipe's own)
  std::string precision;                         // precision asked (a precisions key or its prefix: fp8), "" any
  double memory_gib = 0;                         // GPU memory the user states ("my 24 GB card"), 0 = the GPU type's
  long long per_node = 0;                        // GPUs per node the user states ("two 8-GPU nodes"), 0 = the GPU type's
  std::string nodes_read;                        // how a GPU count with a node count was read (a warning), "" none
  std::string dataset;                           // --dataset preset asked, "" the mode's default
  KeyValues fixed;                               // the user's own overrides (check, tp:… filters): config key → value
  std::set<std::string> intents;                 // intent ids of the question
  std::string scale;                             // scale word value
  std::vector<std::string> unknown_model_words;  // free words that look like a model name no recipe has
  std::string other_mode;                        // a training method no recipe has ("dpo"), as typed
  std::vector<std::string> name_words;  // free words that are tokens of recipe names ("vl", "thinking"): every one must be in the name
  bool understood = false;              // some word of the question has a meaning (not only free words)
  bool fewest = false;                  // without a GPU count: the fewest GPUs that fit, not the recipe's own count first
  RecipeKind kind() const { return benchmark ? RecipeKind::Benchmark : RecipeKind::Library; }
};

// Resolves a parsed question in two steps: its terms (everything but the
// words that only the recipe names explain), then, with the recipes of the
// kind it asks for (Ask::kind), its free words. Warnings go to the answer.
std::variant<Ask, Error> resolve_terms(const Context& c, const kbq::dsl::Query& q);
// The '_'-separated words of the recipes' names ("qwen3", "vl", "a3b"), and
// resolve_words given them (kbq list resolves against several catalogs);
// `tokens` gives those of the recipes of the kind asked (name_tokens of the
// catalog, which the engine keeps), read only when the question has free words.
using NameTokens = std::set<std::string, std::less<>>;
NameTokens name_tokens(const Catalog& recipes);
NameTokens name_tokens(const std::vector<std::string>& names);
void resolve_words(const Context& c, const kbq::dsl::Query& q, const NameTokens& tokens, Ask& ask, Answer& a);
void resolve_words(const Context& c, const kbq::dsl::Query& q, const std::function<const NameTokens&()>& tokens, Ask& ask, Answer& a);

// Checks `check`'s KEY=VALUE overrides and rewrites aliases (training. →
// train., model.seq_length → dataset.seq_length), with a note for each
// rewrite; unknown keys are an error naming the nearest real keys, and a
// key no field has under a section open to classes outside the snapshot is
// a warning (it may exist there).
std::variant<KeyValues, Error> resolve_overrides(const Context& c, const CodeConfigKeys& code, const KeyValues& overrides,
                                                 std::vector<std::string>& notes, std::vector<std::string>& warnings);

// The recipes a question's constraints allow (mode, model and size,
// modality, kind; substitutes marked); empty with a.no_match set when none.
struct Candidate {
  const Recipe* recipe = nullptr;
  bool substitute = false;  // the asked model or size has no recipe: the nearest of the family
};
//
// The catalog given may hold part of the recipes (`part`):
// - a question naming a model, those whose name or model key starts with
//   the family asked (Kb::catalog(kind, prefix)), a superset of the family
//   in the same order;
// - a question naming none, those of the mode asked (Kb::catalog_of_mode).
// Where the answer would depend on the recipes left out (free words no
// recipe of the mode, in the family, carries; for a family, also an asked
// size it lacks, whose substitute may be a sibling family's) candidates
// stops, clears part->enough and returns nothing: the caller asks again
// with every recipe. Otherwise the candidates and the answer's notes are
// those every recipe gives.
struct CatalogPart {
  enum class Of { Family, Mode } of = Of::Family;
  bool enough = true;
};
std::vector<Candidate> candidates(const Context& c, const Ask& ask, const Catalog& recipes, Answer& a, CatalogPart* part = nullptr);

// A family the question names that only benchmark recipes have (GLM-5.1:
// the code exports glm51_sft_*gpu_*_config only): the question is answered
// from the benchmark recipes, said (warn.benchmark_only).
// `benchmark` loads the benchmark catalog, only when the library has no
// recipe of the family.
void benchmarks_for_benchmark_only_family(const Context& c, const Catalog& library, const std::function<const Catalog&()>& benchmark,
                                          Ask& ask, Answer& a);

// Keeps the candidates whose precision (as their code sets it) the GPU each
// would run on has; when the precision asked is one the GPU lacks, says so
// and asks for the closest precision it runs instead (ask.precision).
// No candidate left: a.no_match says why.
void keep_runnable_precision(const Context& c, Ask& ask, std::vector<Candidate>& cands, Answer& a);

// The GPU a recipe is planned on: the one asked (with the memory and GPUs
// per node the user states), else a benchmark's own, else the KB's default.
Gpu planned_gpu(const Context& c, const Recipe& r, const Ask& ask);

// What the plan of a recipe will give, known before it runs (the ranking's
// bound reads it; anything not known is left at its default).
struct Foreseen {
  // The GPUs it runs on: a library recipe on a count the question gives
  // runs on that count, or on the largest below it torchrun can start
  // (launched_world). 0: not known before the plan.
  long long world = 0;
  // Sure not to fit, from its state floor alone (Recipe::state_floor,
  // memory::total_floor): on that world, with nothing overridden (its
  // sizing is then its own), on a GPU of known memory, and its own layout
  // not one the planner could judge as it is (its own count is more than
  // the one asked); the floor over the count asked above the memory with
  // the own-layout tolerance. False whenever any of that is not known.
  bool never_fits = false;
  // Sure to change a size of its layout if it fits: its own TP x PP x CP
  // does not divide the world (a layout that fits passes the rule
  // world_size_divisible), and the command sets each of them.
  bool changes_layout = false;
};
Foreseen foresee(const Context& c, const Recipe& r, const Ask& ask);
inline bool never_fits(const Context& c, const Recipe& r, const Ask& ask) { return foresee(c, r, ask).never_fits; }

// One recipe planned on the asked GPUs: the result (layout, memory, batch,
// dataset, overrides, command, notes and sources; check and rank come
// after) and what the rules read of its model, sized once here.
class Sizings;        // recipes' own sizings, kept across plans (layout.hpp)
struct FewestSearch;  // the search of a result's fewest GPUs, kept for later (plan_recipe.cpp)
struct Planned {
  Result result;
  RuleModel model;
  // Set when the result does not fit and its fewest GPUs (min_gpus) were
  // not searched yet (Fewest::Later): fewest_gpus() searches them.
  std::shared_ptr<const FewestSearch> fewest;
  std::optional<memory::Architecture> arch;  // the model as sized (the throughput stage's FLOPs); empty when it could not be
};
// Whether to search the fewest GPUs a result that does not fit needs (a
// search over world sizes, the costliest part of a plan) now, or only if the
// result is shown: nothing ranks by them.
enum class Fewest : std::uint8_t { Now, Later };
// Whether to build the launch command (command.hpp: the command, what each
// node runs, the sbatch script, the steps before the run) now, or only for
// a result that is shown (finish_command) or offered as an alternative
// (command_of): nothing ranks or checks by it, and most plans of a question
// are not shown (the candidates ranked after the first, the GPU counts
// same_batch tries, the alternatives' trials). What it is built from is
// taken when the recipe is planned, so it is the same command either way.
// None: no command, nor the dataset, overrides and citations it goes with,
// for a caller that reads only whether and how the recipe fits (runnable,
// layout, memory, batch): same_batch's trials of other GPU counts.
enum class Command : std::uint8_t { Now, Later, None };
// `sizings`, when given, keeps each recipe's own sizing for the next plan.
Planned plan_recipe(const Context& c, const RecipeData& d, const Ask& ask, bool substitute, Fewest fewest = Fewest::Now,
                    Sizings* sizings = nullptr, Command command = Command::Now);
// Builds the command of a result planned with Command::Later (nothing when
// it is built).
void finish_command(const Context& c, Result& res);
// A result's launch command, built or not.
std::string command_of(const Context& c, const Result& res);
// The fewest GPUs of a deferred search (what Fewest::Now sets as min_gpus).
long long fewest_gpus(const Context& c, const FewestSearch& f);

// When nothing fits the asked GPUs: what does (more GPUs, LoRA instead of
// full training, a GPU with more memory, a smaller model of the family).
// `best` is the answer's first result as planned; `plan` plans another
// recipe (the engine loads its facts), `library` is every library recipe
// and `same_kind` every recipe of best's kind.
using PlanFn = std::function<Planned(const Recipe&, const Ask&, Fewest)>;
std::vector<Alternative> alternatives(const Context& c, const Ask& ask, const Result& best, const Catalog& library,
                                      const Catalog& same_kind, const PlanFn& plan);

}  // namespace kbq
