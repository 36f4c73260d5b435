// The query engine's one public header. kbq's command line and kbc's
// document generator use the engine through this file only; everything
// under query/<stage>/ is private to the engine.
//
// An answer flows one way (docs/architecture.md):
//   parse (base/dsl: question → Query)
//   → plan (query/plan: candidate recipes, the layout on the user's GPUs,
//     dataset, overrides, launch command)
//   → check (query/check: each sizing rule's verdict, the pitfalls that apply,
//     the citations)
//   → rank (query/rank: the order of the results)
//   → render (query/render: text, Markdown or JSON from the Answer and the
//     labels of its language; no database handle).
// Engine::ask runs the first four stages and returns the Answer, the named IR
// every renderer prints; respond() runs all five for one question.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/kinds.hpp"
#include "base/range.hpp"

struct sqlite3;

namespace kbq {

using kb::Impact;
using kb::Range;
using kb::RecipeKind;
using kb::Status;

// ---------------------------------------------------------------------------
// The answer (IR)

// Where a fact shown in an answer was read.
struct SourceRef {
  std::string file;  // kb-sources path
  int line = 0;      // 1-based; 0 = the whole file (data tables)
  int revision = 0;  // edition revision; 0 for data files
  std::string what;  // which fact ("recipe row", "rule 1", "entry-point command", ...)
};

// A text of the KB in the answer's language, or in the language it fell back to.
struct Prose {
  std::string text;
  std::string lang;       // language of `text`
  bool fallback = false;  // the wanted language has no text for this item
  SourceRef source;
};

// A recipe as the Megatron Bridge code defines it (the KB's `recipes`, from
// the newest code snapshot). Sizes are exact: the code sets one value (or a
// default); an unknown one is empty.
struct Recipe {
  std::string name;                                  // the exported name (--recipe)
  RecipeKind kind = RecipeKind::Library;             // which package, hence which launcher
  std::string target;                                // the function that defines it (module.function)
  std::string mode;                                  // task: pretrain | sft | peft ("" when the launcher infers none)
  std::string launch_mode;                           // the launcher's mode for the name: pretrain | sft | lora | dora
  std::string model_key;                             // the model it trains ("" unknown)
  std::string model;                                 // its display name ("" unknown)
  std::string modality;                              // text | vision | audio | diffusion | omni
  bool moe = false;                                  // the model has routed experts
  std::optional<long long> tp, pp, vp, cp, ep, etp;  // parallel sizes (vp, etp: empty when unset)
  std::optional<bool> sp;                            // sequence parallel
  std::optional<long long> seq_len;                  // dataset.seq_length
  std::optional<long long> gbs, mbs;                 // global and micro batch
  std::string dataset;                               // the dataset it builds by default
  std::string precision;                             // mixed-precision recipe
  std::string low_precision;                         // "fp8 <recipe>" / "fp4 <format>" below BF16, "" otherwise
  std::string runs_in;                               // the precision its code sets (a precisions key: bf16, fp8cs, ...), "" unknown
  std::string runs_in_at;                            // where the code sets it (path:line@commit)
  std::string runs_in_override;                      // the user's override that set runs_in (`kbq check`), "key=value"
  std::string data, data_name, data_at;              // what it trains on without --dataset (recipe_launch.data), "" unknown
  bool user_data = false;                            // it needs the user's own files before it runs
  std::vector<std::string> peft_modes;               // PEFT: the --mode values its function runs with (recipe_launch), empty otherwise
  std::string peft_at;                               // where the code decides them
  std::string raises, raises_at;                     // the exception every path of its function raises, "" when it returns
  bool shadowed = false;                             // library: run_recipe.py --recipe NAME loads the benchmark package's NAME
  std::string shadowed_at;                           // where the runner decides it
  std::optional<long long> native_gpus;              // what its function's name encodes (canonical names)
  std::string native_hardware, native_precision, variant;
  std::optional<long long> min_gpus;  // the smallest world its layout runs on
  std::string commit;                 // the code snapshot (short commit) its facts come from
  // The memory model's floor under its parameter state as its code sizes it
  // (memory::state_floor: bytes per GPU times the GPUs), which kbc computes
  // into recipes_compiled: on N GPUs no layout needs less than it over N.
  // 0 when the model cannot size it (or the recipes were read from the tables).
  double state_floor = 0;
};

// The parallel layout a result runs with on the user's GPUs: every size a
// number (the command pins each).
struct Layout {
  long long gpus = 0;                                         // world size
  long long nodes = 1;                                        // launch shape: nodes ...
  long long nproc = 0;                                        // ... × processes per node
  long long per_node = 0;                                     // GPUs per node of the hardware
  std::string hardware;                                       // GPU key
  std::string hardware_name;                                  // its display name
  bool hardware_assumed = false;                              // the question named no GPU type: the KB's default was used
  long long tp = 1, pp = 1, vp = 0, cp = 1, ep = 1, etp = 1;  // vp 0 = no virtual pipeline
  bool sp = false;                                            // sequence parallel
  long long seq = 0;                                          // sequence length in tokens
  long long dp = 0, edp = 0;                                  // dense data parallel, expert data parallel (0 when not whole)
};

// Memory per GPU on the busiest pipeline rank (query/memory, docs/memory.md).
struct Memory {
  bool known = false;  // the model could size it
  double per_gpu_gib = 0, capacity_gib = 0;
  bool fits = false;
  double weights = 0, grads = 0, optimizer = 0, activations = 0, overhead = 0;  // GiB
  std::string unknown_reason;                                                   // why it could not be sized
  bool lever_set = false;                // the job already runs with the memory lever (data/planner.tsv memory_lever): no help on OOM
  std::vector<std::string> assumptions;  // what the facts left open (memory::Mapped)
};

// The batch arithmetic: GBS = MBS × DP × gradient accumulation.
struct Batch {
  long long gbs = 0, mbs = 0, dp = 0, grad_accum = 0;
  long long recipe_gbs = 0, recipe_mbs = 0;  // what the recipe sets
};

// The parallel dimensions the planner sets, with one spelling table (the
// `dimension` ids of data/config-keys.tsv and the query's `tp:` ... filters).
enum class Dim : std::uint8_t { TP, PP, CP, EP, ETP, VP };
inline constexpr std::array<std::pair<Dim, std::string_view>, 6> kDimNames{{
    {Dim::TP, "tp"},
    {Dim::PP, "pp"},
    {Dim::CP, "cp"},
    {Dim::EP, "ep"},
    {Dim::ETP, "etp"},
    {Dim::VP, "vp"},
}};
std::optional<Dim> parse_dim(std::string_view id);
std::string_view to_string(Dim d);

// One change to the recipe the command makes (a flag or KEY=VALUE).
struct Override {
  std::string key;                  // the config key (model.tensor_model_parallel_size, dataset.seq_length, ...)
  std::string value;                // the new value
  std::string recipe_value;         // what the recipe sets ("" when it sets nothing)
  Impact impact = Impact::Unknown;  // what the change does to the experiment
  std::string sentence;             // the source sentence that classifies it
  SourceRef source;
  bool pinned_only = false;  // the command states the recipe's own value (no change)
};

// One number a verdict states, by the name its words use ({tp},
// {kv_heads}, {world}, {dp}, {per_gpu} ...: data/answer-labels.tsv
// `rule.<check>.<status>`), so a program reads the verdict without parsing
// the words.
struct VerdictValue {
  std::string name;
  // An integer, a real (GiB), a text (a GPU type, why memory is unknown), a
  // list of integers (the TP sizes that divide the KV heads), or none: a
  // count the model does not state, a quotient that is not whole.
  std::variant<std::monostate, long long, double, std::string, std::vector<long long>> value;
  std::string text;  // as the verdict's words print it ("—" or "?" for none, GiB to one decimal)
};

// One sizing rule's verdict on the layout.
struct Verdict {
  std::string id;                     // check id (data/checks.tsv)
  std::string enforces;               // the documented rule or pitfall it enforces (data/checks.tsv: "rule/1"), "" none
  Status status = Status::Unknown;    // pass | fail | unknown
  std::vector<VerdictValue> numbers;  // what it compared, in the order its words name them
  std::string detail;                 // the numbers, in the answer's language
  Prose rule;                         // the rule's text
};

// Why a result is placed where it is: one criterion of data/ranking.tsv.
struct ScorePart {
  std::string name;  // the criterion (mode, model, modality, feasible, sequence, changes, quick_reference, name)
  int points = 0;    // its key: lower ranks first
  std::string why;   // what it compared, in the answer's language
};

// The throughput a result's layout is expected to reach (query/perf,
// docs/throughput.md): measured by NVIDIA for this configuration, estimated
// from the nearest measurements, or none (with the reason).
enum class ThroughputBasis : std::uint8_t { Measured, Estimated, None };
inline constexpr std::array<std::pair<ThroughputBasis, std::string_view>, 3> kThroughputBasisNames{
    {{ThroughputBasis::Measured, "measured"}, {ThroughputBasis::Estimated, "estimated"}, {ThroughputBasis::None, "none"}}};
std::string_view to_string(ThroughputBasis v);
struct Throughput {
  ThroughputBasis basis = ThroughputBasis::None;
  double tokens_per_s_per_gpu = 0;  // tokens / s / GPU
  double tokens_per_s = 0;          // for the job (× its GPUs)
  double tflops_per_gpu = 0;        // model TFLOP / s / GPU (our FLOPs count)
  double mfu = 0;                   // over the platform's dense peak (0 unknown)
  double step_time_s = 0;           // one step: GBS × sequence tokens
  double error_band_pct = 0;        // estimated: the validation's band (0 for measured)
  std::string method;               // same_configuration | same_model | other_models ("" for none)
  std::string how;                  // one line in the answer's language: the row measured, what was scaled, or why none
  double bubble_pct = 0;            // the layout's pipeline bubble, percent of the compute
  std::vector<SourceRef> sources;   // the measured rows used, nearest first (file:line)
};
// The time to train a token budget the question gives at that throughput.
struct TimeToTrain {
  double tokens = 0;   // the budget (× its epochs)
  double seconds = 0;  // 0 when there is no throughput
};

// How a multi-node command runs: the same command on every node, with a
// variable or two of each node's environment (data/planner.tsv
// multi_node_env) that differ or must be set there.
struct NodeVariable {
  std::string name;     // as the command reads it ($NAME)
  std::string role;     // node_rank: 0 .. nodes-1, one per node; first_node: node 0's address, the same everywhere
  std::string meaning;  // what to set it to, in the answer's language
};
struct NodeLaunch {
  long long nodes = 1, nproc_per_node = 1, ranks = 1;  // torchrun's --nnodes × --nproc_per_node = the ranks
  std::vector<NodeVariable> variables;                 // empty: one node, or a launcher that places the nodes itself
};

// A step before the run: how to get the starting checkpoint (the Hugging
// Face import the code provides), a dry run of the command.
struct BeforeRun {
  std::string what;     // import_checkpoint | dry_run
  std::string text;     // the sentence, in the answer's language
  std::string command;  // the command to run ("" none)
  std::string source;   // where it comes from: path:line@commit of the code
};

struct CommandJob;  // the plan stage's launch command, not built yet (query/plan/plan.hpp)

// One recommended recipe with its layout, memory, batch, command and checks.
struct Result {
  Recipe recipe;
  bool runnable = false;         // fits memory and passes every rule on the user's GPUs
  bool substitute = false;       // the asked model or size has no recipe: the nearest one instead
  std::string why;               // one line: why this recipe
  int score = 0;                 // rank position (1 = first)
  std::vector<ScorePart> parts;  // the ranking criteria, in order
  Layout layout;
  Memory memory;
  Batch batch;
  std::string dataset;                // preset passed with --dataset ("" for benchmark recipes)
  std::string command;                // the full launch command
  NodeLaunch launch;                  // what each node runs (library recipes)
  std::vector<BeforeRun> before_run;  // the starting checkpoint, a dry run
  std::string slurm_script;           // an sbatch script for the command ("" none: see slurm_none)
  std::string slurm_none;             // why there is no sbatch script
  std::vector<Override> overrides;
  std::vector<Verdict> rules;
  std::vector<Prose> pitfalls;
  std::vector<std::string> departures;  // where the answer departs from the question (a dataset replaced): first among the caveats
  std::vector<std::string> caveats;     // at most three, for this answer (the default text shows them)
  std::vector<std::string> notes;       // everything else worth knowing (--explain)
  std::vector<SourceRef> sources;
  long long min_gpus = 0;                    // not runnable: the fewest GPUs of this hardware it runs on (0 = none up to the limit)
  Throughput throughput;                     // expected speed of the layout (docs/throughput.md)
  std::optional<TimeToTrain> time_to_train;  // when the question gives a token budget
  // Set while the command, launch, before_run and slurm fields are not
  // built yet (the plan stage's Command::Later); null in every answer.
  std::shared_ptr<const CommandJob> command_job;
  bool any_fail() const;
};

// What produced an answer.
enum class Request : std::uint8_t {
  Ask,    // a question
  Show,   // `kbq show RECIPE`: one recipe at its own layout
  Check,  // `kbq check RECIPE --gpus N KEY=VALUE...`: the user's own layout
};

// The answer as a whole.
enum class Outcome : std::uint8_t {
  Ok,           // a recipe runs on the user's GPUs
  NotPossible,  // recipes match, none fits the user's GPUs
  NoMatch,      // no recipe matches the question
};
inline constexpr std::array<std::pair<Outcome, std::string_view>, 3> kOutcomeNames{
    {{Outcome::Ok, "ok"}, {Outcome::NotPossible, "not_possible"}, {Outcome::NoMatch, "no_match"}}};
std::string_view to_string(Outcome v);

// Something that does fit, offered when the asked recipe does not.
struct Alternative {
  std::string kind;      // recompute | offload | more_gpus | lora | hardware | smaller_model
  std::string recipe;    // the recipe to run
  long long gpus = 0;    // on how many GPUs
  std::string hardware;  // of which type
  std::string why;       // one line, in the answer's language
  std::string command;   // its launch command
};

struct Answer {
  Request request = Request::Ask;
  Outcome verdict = Outcome::NoMatch;
  std::string query;                      // as typed (ask), else the recipe name
  std::string canonical;                  // canonical form of the parsed question ("" for show and check)
  std::string lang;                       // language of the prose
  std::vector<std::string> warnings;      // words not understood, assumptions, dataset advice
  std::string headline;                   // a question naming no model: the model chosen, why, the runner-up ("" otherwise)
  std::vector<Result> results;            // best first
  long long min_gpus = 0;                 // not_possible: the fewest GPUs the best match runs on
  long long searched_up_to = 0;           // not_possible, no GPU count asked and none fits: the largest count tried
  std::vector<Alternative> alternatives;  // not_possible: what fits instead
  std::string no_match;                   // no_match: what exists instead, in the answer's language
  double token_budget = 0;                // tokens the question asks to train on (budget × epochs), 0 none
};

// `kbq rules` / `kbq pitfalls`: the documented rules or pitfalls in a language.
struct ListItem {
  std::string id;    // "rule/1", "pitfall/3"
  std::string key;   // the entity key ("1", "3")
  std::string text;  // the item; for pitfalls "pitfall — symptom → fix"
  Prose prose;       // language, fallback and source of `text`
};
struct Listing {
  std::string kind;  // rule | pitfall
  std::string lang;  // the wanted language
  std::vector<ListItem> items;
};

// `kbq sources`: the editions compiled, their missing translations and the
// conflicts between revisions (the newest wins).
struct SourcesReport {
  struct Edition {
    std::string file, lang, date, translated_from;
    int revision = 0;
  };
  struct Missing {
    std::string lang;
    long long count = 0;
  };
  struct Conflict {
    std::string entity, field, winner, older, older_source;
    int winner_revision = 0, older_revision = 0;
  };
  std::vector<Edition> editions;    // newest revision first
  std::vector<Missing> missing;     // per language
  std::vector<Conflict> conflicts;  // by entity, field, older revision
};

// `kbq perf MODEL`: NVIDIA's measured throughput of a model, one row per
// measured configuration (the newest release's; with `history` the older
// releases' too), each with its source and our FLOPs count beside the
// published one (docs/throughput.md; JSON: docs/perf.schema.json).
struct PerfRowView {
  long long id = 0;           // perf_rows.id
  std::string release;        // NeMo container release, e.g. 26.08
  std::string status;         // current | superseded (history: a newer release measured it again)
  std::string task;           // pretrain | sft | peft
  std::string model_written;  // the table's model, qualifier included
  std::string system, gpu;    // as written (DGX-GB300), and the GPU key (gb300)
  long long gpus = 0;
  std::string precision, precision_written;  // bf16 | fp8cs | fp8mx | fp8sc | nvfp4, and as written
  long long gbs = 0, mbs = 0, seq = 0;
  std::optional<long long> tp, pp, cp, vp, ep, fsdp, ga;  // empty: n/a
  double tokens_per_gpu = 0;                              // tokens / s / GPU, measured
  double tflops_per_gpu = 0;                              // model TFLOP / s / GPU, as published
  double flops_per_token = 0;                             // ours (query/perf/flops.hpp); 0 when it cannot be counted
  double implied_flops_per_token = 0;                     // the published TFLOP/s over tokens/s
  double mfu = 0;                                         // ours x tokens/s over the platform's peak (0 unknown)
  std::string flops_note;                                 // why ours is unknown, or why the published count differs
  std::string recipe;                                     // the benchmark recipe that runs the configuration ("" none)
  std::vector<std::string> drift;                         // where its layout differs from that recipe's code
  std::string note_kind;                                  // "" | caveat | regression (never used for estimates)
  std::vector<std::string> notes;                         // footnotes and notes of the table, with file:line
  SourceRef source;                                       // the table row (file:line)
  std::string edition;                                    // the code snapshot whose docs the page was copied from
};
struct PerfListing {
  std::string query;              // as typed
  std::string model_key, model;   // the KB's model and its display name
  bool history = false;           // older releases shown too
  std::vector<PerfRowView> rows;  // newest release first, then system, GPUs, precision
};

// `kbq list [mode] [model] [--hardware X] [--kind library|benchmark]`: the
// recipes the code exports, each with its one-line facts (query/list/;
// JSON: docs/recipes.schema.json). The words are read with the query
// language's lexicon, as a question's are.
struct ListOptions {
  std::vector<std::string> words;  // mode, model, size, recipe-name words ("peft qwen3", "sft llama3 8b")
  std::string hardware;            // GPU key: keep recipes whose name encodes another GPU out ("" any)
  std::string kind;                // library | benchmark ("" both)
  std::string lang;                // language of the labels ("" en)
};
struct RecipeList {
  std::string query;                  // the words as typed
  std::string mode, model, hardware;  // what the words resolved to ("" any)
  std::string kind;                   // library | benchmark | "" (both)
  std::string lang;
  std::vector<std::string> warnings;
  std::vector<Recipe> recipes;  // sorted by kind, then name
};

// A bad request (exit 2): what is wrong, how to fix it, and where in the
// question (a caret span in code points) when it is about a word of it.
struct Error {
  std::string message;
  std::string hint;
  int col = 0;  // 1-based code-point column in the question; 0 = not about a word
  int len = 0;  // code points under the caret
};

// The labels of one language (data/answer-labels.tsv), the base language's
// (planner.tsv base_language) where it has none. Render reads every word it
// prints from here.
class Labels {
 public:
  Labels() = default;
  Labels(std::string lang, std::vector<std::pair<std::string, std::string>> texts);
  const std::string& lang() const { return lang_; }
  // The label of `key`; the key itself when no language has it.
  std::string operator()(const std::string& key) const;

 private:
  std::string lang_;
  std::vector<std::pair<std::string, std::string>> texts_;  // sorted by key
};

// ---------------------------------------------------------------------------
// The engine

struct AskOptions {
  int limit = 3;     // number of results
  std::string lang;  // "" = the question's own language, else en
  // Keep each planned recipe's code facts for later answers (a --batch plans
  // the same recipes question after question). false: the facts of a
  // recipe are dropped once it is planned and read again if it is shown,
  // which keeps the peak memory of a process that answers one question
  // (a question may plan a hundred recipes and show three).
  bool keep_facts = true;
};

// The throughput estimator's inputs that depend on the KB alone
// (docs/schema.md: perf_rows.arch_class, flops, flops_error; perf_fit).
struct PerfDerivation {
  struct Row {
    long long id = 0;        // perf_rows.id
    std::string arch_class;  // '' when the architecture cannot be mapped
    std::optional<double> flops;
    std::string flops_error;  // why the FLOPs cannot be counted ('' when counted)
  };
  struct Platform {
    std::string platform;  // gpu/precision
    int pairs = 0;         // measured pairs that informed its factor
    std::optional<double> log_factor;
  };
  std::vector<Row> rows;  // every row but the copies, by id
  std::vector<Platform> platforms;
  std::vector<std::string> bf16_bridged;  // architecture classes with a BF16/lower-precision pair
};

class Engine {
 public:
  // The KB embedded in kbq, or a file. Throw std::runtime_error with a
  // one-line message naming the problem (not found, another schema
  // version, incomplete).
  static Engine embedded();
  static Engine open(const std::string& path);
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  ~Engine();

  // The languages the KB has editions in, sorted.
  const std::vector<std::string>& languages() const;
  // The KB's schema version and the sources it was compiled from (for --version).
  int schema_version() const;
  std::vector<std::string> source_files() const;
  // The Megatron Bridge snapshots the KB's code facts come from, newest first.
  struct CodeSnapshot {
    std::string commit, date, repo;
    bool newest = false;  // its facts are the recipes kbq answers from
  };
  std::vector<CodeSnapshot> code_snapshots();
  // The GPU types the KB knows, by key (h100, gb200, ...).
  std::vector<std::string> gpu_keys();
  const Labels& labels(const std::string& lang);  // read once per language
  // The language of an answer that names none, and of a label a language
  // lacks (data/planner.tsv base_language).
  const std::string& base_language();

  // parse → plan → check → rank.
  std::variant<Answer, Error> ask(const std::string& question, const AskOptions& opts);
  // One recipe at its own layout on its own GPUs (or the fewest where it fits).
  std::variant<Answer, Error> show(const std::string& recipe, const std::string& lang);
  // The fewest GPUs of a type a recipe fits on, planned as for a question
  // without a GPU count but starting from one GPU (a documentation page's
  // "smallest layout per GPU type"); an unknown GPU type is an error.
  std::variant<Answer, Error> fewest(const std::string& recipe, const std::string& hardware, const std::string& lang);
  // The user's own layout of a recipe: every rule's verdict.
  std::variant<Answer, Error> check(const std::string& recipe, long long gpus,
                                    const std::vector<std::pair<std::string, std::string>>& overrides, const std::string& hardware,
                                    const std::string& lang);
  Listing rules(const std::string& lang);
  Listing pitfalls(const std::string& lang);
  SourcesReport sources();
  // NVIDIA's measured rows of a model (by its key, name or the tables' name);
  // an unknown model, or one without rows, is an error naming those that have.
  std::variant<PerfListing, Error> perf(const std::string& model, bool history);
  // The recipes the words (mode, model, size) and options allow; unknown words
  // and GPU types are errors naming what the KB has.
  std::variant<RecipeList, Error> list(const ListOptions& opts);
  // What the throughput estimator computes from the KB alone, from each
  // measured row's benchmark recipe and model: kbc stores it in the KB it
  // writes (compiler/generate/perf_fit.cpp), and answers read it stored.
  PerfDerivation derive_perf();
  // The estimator's tables as answers read them, derivation included, in
  // the one value kbc stores (perf_compiled; query/perf/stored.hpp), read
  // from the KB's rows; checked by reading it back.
  std::string compile_perf();
  // The recipes as answers read them, in the values kbc stores
  // (recipes_compiled, one a chunk; query/kb/recipes_stored.hpp), read from
  // the KB's rows; checked by reading every recipe back.
  std::vector<std::string> compile_recipes();
  // The rows of the small tables every answer reads, as kbc stores them
  // (rows_compiled, part 'snapshot'; base/stored_rows.hpp), run on an open
  // database: the planner's settings, the GPUs, precisions, config keys,
  // launcher flags and tasks, presets, ranking, checks, memory constants,
  // models and older revisions. Unchecked: an answer checks each value as
  // it reads it (Kb::snapshot).
  static std::string compile_snapshot(sqlite3* db);
  // Every part of rows_compiled kbc stores, by name: the snapshot's, then
  // for each language of the KB its labels ("labels/<lang>"; an answer
  // reads the base language's too) and the texts of the entities the
  // stages cite ("cited/<lang>"), run with the base language and the cited
  // kinds of the snapshot, read as an answer reads it (a value it would
  // refuse throws, as there).
  static std::vector<std::pair<std::string, std::string>> compile_stored_rows(sqlite3* db);

  struct Impl;  // private (query/engine.cpp)

 private:
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------
// Render

enum class Format : std::uint8_t { Text, Markdown, Json, Slurm };
// Format's spellings (kbq --format, docs/kbq.md), in declaration order.
inline constexpr std::array<std::pair<Format, std::string_view>, 4> kFormatNames{{
    {Format::Text, "text"},
    {Format::Markdown, "markdown"},
    {Format::Json, "json"},
    {Format::Slurm, "slurm"},
}};

struct RenderOptions {
  Format format = Format::Text;
  bool color = false;    // ANSI colour (text on a terminal only)
  bool explain = false;  // text and Markdown: also why each result is placed (its score parts); JSON always has them
  // Text: prose lines wrap at this many terminal columns (0: never); the
  // launch commands keep their own lines, one flag group each.
  int width = 100;
};

// The JSON outputs' schema versions (docs/*.schema.json).
inline constexpr int kAnswerSchemaVersion = 5;

// The figures of a throughput as every answer prints them, for the other
// writers of the same numbers (the site's recipe pages): a count with its
// magnitude (6288, 1.61 M, 50 B, 1 T), seconds (136, 12.5, 0.75), and a
// duration in the labels' days or hours (unit.days, unit.hours).
std::string format_count(double v);
std::string format_seconds(double s);
std::string format_duration(double s, const Labels& labels);

std::string render(const Answer& a, const Labels& labels, const RenderOptions& o);
std::string render(const Listing& l, const Labels& labels, const RenderOptions& o);
std::string render(const SourcesReport& s, const Labels& labels, const RenderOptions& o);
std::string render(const PerfListing& p, const Labels& labels, const RenderOptions& o);
// A `kbq --batch` record for a question: one JSON Lines line (no line end)
// {"answer": the JSON answer or error object, "exit": kbq's exit code,
// "question", "text": the text answer (none for an error)}, keys sorted at
// every level; the answer is built once, never printed and read back.
// With --select, only the parts of the record its JSON Pointers name
// (docs/kbq.md#--select-the-parts-a-script-reads).
struct BatchSelect {
  std::vector<std::vector<std::string>> paths;  // each pointer's reference tokens, unescaped; {} = the whole record
  // Some path is the whole record, leads into `part` ({"answer", "results",
  // "0", "layout"}) or to a piece of it: the record must hold it.
  bool reads(std::initializer_list<std::string_view> part) const;
  std::size_t results_read() const;  // how many of the answer's results the paths read (SIZE_MAX: all)
};
// --select's pointers (RFC 6901), or the usage error naming the first
// malformed one.
std::variant<BatchSelect, Error> parse_select(const std::vector<std::string>& pointers);
std::string render_batch_record(const std::string& question, const std::variant<Answer, Error>& res, const Labels& labels, RenderOptions ro,
                                const BatchSelect* select = nullptr);
std::string render(const RecipeList& l, const Labels& labels, const RenderOptions& o);
// --format slurm: the sbatch script of the answer's first result (a library
// recipe with a layout that runs), or the error that says why there is none
// (not possible, nothing matched, a benchmark recipe): kbq exits 1 then.
std::variant<std::string, Error> render_slurm(const Answer& a, const Labels& labels);
// An error as kbq prints it on stderr: text ("kbq: error: ...", the question
// with a caret under the word, "hint: ...") or JSON ({"error", "hint", "position"}).
std::string render_error(const Error& e, const std::string& question, const RenderOptions& o);

// ---------------------------------------------------------------------------
// One question, end to end: parse → plan → check → rank → render.

struct Response {
  std::string out;    // for stdout
  std::string err;    // for stderr
  int exit_code = 0;  // 0 answered, 1 nothing matched (or no sbatch script), 2 error (docs/kbq.md)
};
Response respond(Engine& engine, const std::string& question, const AskOptions& ask, const RenderOptions& ro);

}  // namespace kbq
