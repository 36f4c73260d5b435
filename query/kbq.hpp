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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/kinds.hpp"
#include "base/range.hpp"

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

// A recipe as the knowledge base states it.
struct Recipe {
  long long id = 0;                         // recipes.id (internal; never printed)
  std::string name;                         // recipe function name, or a `*` pattern
  std::string mode;                         // pretrain | sft | peft (a mode of the KB); "" when not stated
  RecipeKind kind = RecipeKind::Library;    // which package, hence which launcher
  bool pattern = false;                     // the name holds `*`: not a function name
  std::string expanded_from;                // brace or star pattern the name came from, or ""
  std::string mentioned_in;                 // file:line of the mention, for names no table lists
  std::string family;                       // family heading as written
  std::string model_key;                    // models.model_key, or ""
  std::string model;                        // benchmark rows: the model as written
  Range tp, pp, cp, ep, vp, gpus;           // parallel sizes and GPU count (minimum for library rows)
  std::optional<bool> sp;                   // sequence parallel on/off; empty when not stated
  long long seq_len = 0;                    // sequence length in tokens; 0 = not stated
  std::string sizes;                        // pattern rows: the sizes the pattern covers, as written
  std::string notes;                        // notes / features cell as written
  std::vector<std::string> gpu_types;       // GPU keys (benchmark rows)
  std::string file;                         // source file of the row
  int line = 0, revision = 0;               // its line and edition revision
  std::vector<std::string> family_intents;  // intents of its family heading (derived by kbc)
  bool model_moe = false;                   // the model facts list experts (derived by kbc)
  long long shape = 0;                      // shapes.id (derived by kbc; internal)
};

// The parallel dimensions a layout sets, with one spelling table (the
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

// The parallel layout a recipe runs with on the user's GPUs.
struct Layout {
  long long gpus = 0;                // world size
  long long nodes = 1;               // launch shape: nodes ...
  long long nproc = 0;               // ... × processes per node
  long long per_node = 0;            // GPUs per node of the hardware (0 = unknown hardware)
  std::string hardware;              // GPU key used for NVLink and node size
  bool hardware_assumed = false;     // the question named no hardware: the KB's default was used
  Range tp, pp, cp, ep, etp, vp;     // sizes (ranges only for pattern rows)
  bool sp = false;                   // sequence parallel on
  long long seq = 0;                 // sequence length in tokens (0 = the recipe default, not stated)
  std::optional<long long> dp, edp;  // dense and expert data parallel, when whole numbers
  Range& at(Dim d);
  const Range& at(Dim d) const;
};

// One override of the launch command.
struct Override {
  std::string key, value;
  Impact impact = Impact::Unknown;  // what the change does to the experiment
  std::string sentence;             // the source sentence that classifies it
  SourceRef source;
};

// One sizing rule's verdict on the layout.
struct Verdict {
  std::string id;                   // check id (data/checks.tsv)
  Status status = Status::Unknown;  // pass | fail | unknown
  std::string detail;               // the numbers, e.g. "TP 2 divides 8 kv heads"
  Prose rule;                       // the rule's text
};

// One part of a result's score (printed with --explain, always in JSON).
struct ScorePart {
  std::string name;  // mode, model, gpus, seq, hardware, intent, quick_ref, pattern, text
  int points = 0;
  std::string why;  // short explanation with numbers
};

// One recommended recipe with its layout, command and checks.
struct Result {
  Recipe recipe;
  int score = 0;
  std::vector<ScorePart> parts;
  Layout layout;
  std::string dataset;  // preset passed with --dataset ("" for benchmark recipes)
  std::string command;  // the full launch command
  std::vector<Override> overrides;
  std::vector<Verdict> rules;
  std::vector<Prose> pitfalls;
  std::vector<std::string> notes;  // superseded values, ranges, warnings, in the answer's language
  std::vector<SourceRef> sources;
  bool any_fail() const;
};

// What produced an answer.
enum class Request : std::uint8_t {
  Ask,    // a question
  Show,   // `kbq show RECIPE`: one recipe at its own layout
  Check,  // `kbq check RECIPE --gpus N KEY=VALUE...`: the user's own layout
};

struct Answer {
  Request request = Request::Ask;
  std::string query;                  // as typed (ask), else the recipe name
  std::string canonical;              // canonical form of the parsed question ("" for show and check)
  std::string lang;                   // language of the prose
  std::vector<std::string> warnings;  // unknown words, dataset advice
  std::vector<Result> results;        // best first
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

// A bad request (exit 2): what is wrong, how to fix it, and where in the
// question (a caret span in code points) when it is about a word of it.
struct Error {
  std::string message;
  std::string hint;
  int col = 0;  // 1-based code-point column in the question; 0 = not about a word
  int len = 0;  // code points under the caret
};

// The labels of one language (data/answer-labels.tsv), English where the
// language has none. Render reads every word it prints from here.
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
  Labels labels(const std::string& lang);

  // parse → plan → check → rank.
  std::variant<Answer, Error> ask(const std::string& question, const AskOptions& opts);
  // One recipe at its own default layout (mode: "" = any of its modes).
  std::variant<Answer, Error> show(const std::string& recipe, const std::string& lang, const std::string& mode = {});
  // The user's own layout of a recipe: every rule's verdict.
  std::variant<Answer, Error> check(const std::string& recipe, long long gpus,
                                    const std::vector<std::pair<std::string, std::string>>& overrides, const std::string& hardware,
                                    const std::string& lang);
  Listing rules(const std::string& lang);
  Listing pitfalls(const std::string& lang);
  SourcesReport sources();

  struct Impl;  // private (query/engine.cpp)

 private:
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------
// Render

enum class Format : std::uint8_t { Text, Markdown, Json };

struct RenderOptions {
  Format format = Format::Text;
  bool color = false;    // ANSI colour (text on a terminal only)
  bool explain = false;  // text and Markdown: also why each result is placed (its score parts); JSON always has them
};

// The JSON outputs' schema versions (docs/*.schema.json).
inline constexpr int kAnswerSchemaVersion = 1;

std::string render(const Answer& a, const Labels& labels, const RenderOptions& o);
std::string render(const Listing& l, const Labels& labels, const RenderOptions& o);
std::string render(const SourcesReport& s, const Labels& labels, const RenderOptions& o);
// An error as kbq prints it on stderr: text ("kbq: error: ...", the question
// with a caret under the word, "hint: ...") or JSON ({"error", "hint", "position"}).
std::string render_error(const Error& e, const std::string& question, const RenderOptions& o);

// ---------------------------------------------------------------------------
// One question, end to end: parse → plan → check → rank → render.

struct Response {
  std::string out;    // for stdout
  std::string err;    // for stderr
  int exit_code = 0;  // 0 answered, 1 nothing matched, 2 error (docs/kbq.md)
};
Response respond(Engine& engine, const std::string& question, const AskOptions& ask, const RenderOptions& ro);

}  // namespace kbq
