// The query language of kbq: a small, multilingual DSL for questions about
// training recipes: mode words, model names, "<n> <gpu unit>",
// "<n> x <hardware>", "<n><seq magnitude>", model sizes, `key:value`
// filters, in any order and in any language the lexicon covers.
//
// The code holds no vocabulary: every word the parser knows (modes, model
// names, units, stopwords, filter keys, in every language) comes from a
// Lexicon built at run time from rows of the knowledge base (columns lang,
// kind, word, value). The grammar (Boost.Spirit X3, private to
// base/dsl/*.cpp) only knows numbers, separators, the times operators
// (U+00D7, x, *), the `key:value` colon, double quotes around free text and
// the `-a<n><magnitude>` active-parameter notation of MoE sizes.
//
// Pipeline: parse(lexicon, text) folds case and width, splits the text into
// Terms (any order; spaces optional at CJK boundaries), resolves them into
// Constraints and reports the first contradiction as a ParseError with a
// Span in the original text. to_canonical() prints the constraints back as
// a query that parses to the same constraints.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kb {
struct TsvTable;
}

namespace kbq::dsl {

// ---------------------------------------------------------------------------
// Lexicon

// The kinds of lexicon rows (the `kind` column). Their spellings in the data
// are the snake_case names of to_string(WordKind).
enum class WordKind : std::uint8_t {
  Mode,            // training mode word; value a mode of the KB (pretrain | sft | peft)
  Intent,          // what the user is after; value an intent id of the KB
  Scale,           // job scale word; value small | large
  GpuUnit,         // counts GPUs: "<n> <unit>", "<n><unit>", "<unit> <n>"
  NodeUnit,        // counts nodes: "<n> <unit>", "<unit> <n>"
  SeqUnit,         // marks a sequence length: "<n><k> <unit>", "<unit> <n>", "<n> <unit>"
  ParamMagnitude,  // suffix of a model size; value the multiplier ("1e9")
  SeqMagnitude,    // suffix of a sequence length; value the multiplier ("1024")
  Hardware,        // GPU type; value the gpu key of the KB
  Precision,       // numeric precision; value a precision id of the KB
  Model,           // model family name; value the recipe-name prefix
  RecipeKind,      // recipe kind (data spelling `kind`); value library | benchmark
  Filter,          // key of a `key:value` filter; value the field name
  Stopword,        // known word with no meaning for the search (particles, fillers)
  OpenMax,         // "at least" marker next to a count ("<n>+ <unit>"); read as a particle, ranges are not in the AST
  RangeSep,        // range separator between two numbers; recognized, read as a particle
  Number,          // a number written as a word ("two", "deux", "两"); value the number; counts only
  System,          // a system or rack ("dgx b200", "nvl72 rack"); value a system key of the KB (data/systems.tsv)
  MemoryUnit,      // GPU memory after a number ("48 gb", "24 go"); value the multiplier to GB
  TokenUnit,       // marks a token budget: "<n> <count magnitude> [particle] <token unit>" ("1T tokens", "1兆トークン")
  EpochUnit,       // counts passes over the budget: "<n> [particle] <epoch unit>" ("3 epochs")
  HardwareFamily,  // a GPU name kbq has no data for ("rtx 3090", "v100"): a warning, never a model
  Flagship,        // not a word: the word is a model value, the value the size of the model a bare family name means
  OtherModel,      // a model Megatron Bridge has no recipe for ("mistral"): free text, never corrected to a near family
  CountMagnitude,  // multiplier of a token budget; value the multiplier ("1e12" for T, 兆, trillion)
  Dataset,         // a dataset preset of the launcher ("squad", "tulu3"); value the preset (the code's, code_datasets)
  Plural,          // a plural GPU, card or unit word ("gpus", "h100s"): a number word of value 1 before it is no count ("my gpus")
  OtherMode,       // a training method Megatron Bridge has no recipe for ("dpo", "rlhf"): free text, and the answer says so
};
inline constexpr int kWordKindCount = 28;  // number of WordKind members

// The data spelling of a kind ("gpu_unit"), and back (nullopt if unknown).
std::string_view to_string(WordKind kind);
std::optional<WordKind> word_kind_from_string(std::string_view name);

// One lexicon row, as stored in the KB or in kb-sources/data/lexicon.tsv.
struct LexiconRow {
  std::string lang;   // ISO 639-1 code of the word's language, or "*" for any
  std::string kind;   // a WordKind spelling ("mode", "gpu_unit", ...)
  std::string word;   // the word or phrase as written; may hold spaces and CJK
  std::string value;  // normalized meaning (see WordKind); may be empty for stopwords
};

// Reads rows from a parsed lexicon TSV (columns lang, kind, word, value).
std::vector<LexiconRow> lexicon_rows_from_tsv(const kb::TsvTable& table);

// The vocabulary of the query language. Words are folded (lower case,
// full-width to ASCII, whitespace runs to one space) when the lexicon is
// built; multi-word ASCII phrases also match with '-', '_' or nothing
// between their words ("a b" = "a-b" = "a_b" = "ab"), and spaces next to
// CJK text are optional. Cheap to copy (shared and immutable).
class Lexicon {
 public:
  struct Impl;  // private (base/dsl/detail.hpp)

  Lexicon();  // empty: every word is free text
  // A system of data/systems.tsv: what "<n> <system word>" means.
  struct System {
    std::string gpu_key;  // its GPU type
    int gpus = 0;         // GPUs in one system
    int nodes = 0;        // nodes in one system
  };
  // What the lexicon reads beside its rows (the KB's other tables).
  struct Extras {
    std::vector<std::string> hardware_keys;    // gpu keys, known as hardware words even without a lexicon row
    std::map<std::string, System> systems;     // system key -> its facts
    std::vector<std::string> dataset_presets;  // the launcher's --dataset presets, known as dataset words
    // Whether a word is a word of recipe names (free text that narrows the
    // recipes, never a typo): asked only of a word the typo corrector would
    // otherwise change, so a KB's recipes are read for that word, not all of
    // them for every question. Empty: no word is.
    std::function<bool(std::string_view)> is_name_word;
    // The language of a question no word of the lexicon places
    // (data/planner.tsv base_language), and the language of each script the
    // code tells apart (script_languages: "kana", "han"): what
    // Query::lang guesses from.
    std::string base_language;
    std::map<std::string, std::string> script_languages;
  };

  // Builds the symbol tables. `hardware_keys` are gpu keys from the KB that
  // are known as hardware words even without a lexicon row.
  explicit Lexicon(const std::vector<LexiconRow>& rows, const std::vector<std::string>& hardware_keys = {});
  Lexicon(const std::vector<LexiconRow>& rows, Extras extras);

  // Rows that were ignored, one line each (unknown kind, empty word, a
  // magnitude value that is not a positive number).
  const std::vector<std::string>& problems() const;
  // Number of distinct folded words.
  std::size_t size() const;

  // The value of `word` (folded before lookup) as a word of `kind`.
  std::optional<std::string> value_of(WordKind kind, std::string_view word) const;
  // Languages a word is listed under (sorted, "*" left out).
  std::vector<std::string> languages_of(std::string_view word) const;
  // The spelling printed for a value of `kind`: the word spelled like the
  // value itself (directly or as a phrase variant) when there is one, else
  // ASCII words first, then the shortest, then the lexicographically
  // smallest. Only words that mean this when they stand alone count (units,
  // magnitudes and keys: any word of the kind). An empty value asks for any
  // word of the kind. Empty when none.
  std::string spelling(WordKind kind, std::string_view value) const;
  // Every word that means (kind, value) alone, in the order spelling()
  // prefers them (ASCII first, then fewer code points, then bytes). A scan
  // of the lexicon: for the printer's rare repair, not for each answer.
  std::vector<std::string> spellings(WordKind kind, std::string_view value) const;
  // The filter key printed for a field (spelling(Filter, field)); empty
  // when the lexicon has no key for the field.
  std::string filter_key(std::string_view field) const;
  // The closest word by edit distance (Levenshtein <= 2, <= 1 for words of
  // at most 4 code points; ties: same length, longer common prefix, nearer
  // substituted code points), or empty. CJK words are never suggested;
  // without `kind`, neither are stopwords nor words of fewer than 3 code
  // points. With `kind`, only words of that kind.
  std::string suggest(std::string_view word, std::optional<WordKind> kind = std::nullopt) const;
  // Every word at the closest distance that suggest() would pick from, with
  // distinct meanings (a word whose meanings all equal an earlier one's is
  // left out): one element when a correction is unambiguous.
  std::vector<std::string> suggest_all(std::string_view word) const;

  const Impl& impl() const { return *impl_; }

  // The lexicon as kbc stores it in a KB (table lexicon_compiled): what the
  // constructor builds from the rows, ready to use, without the problems.
  std::string to_stored() const;
  // A stored lexicon back, every count, length, id and kind checked; throws
  // std::runtime_error naming the first thing wrong. `is_name_word` as in
  // Extras.
  static Lexicon from_stored(std::string_view bytes, std::function<bool(std::string_view)> is_name_word);

 private:
  explicit Lexicon(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// ---------------------------------------------------------------------------
// The query AST

// A place in the original query text, for carets under errors.
struct Span {
  int col = 1;  // 1-based code-point column in the original text
  int len = 0;  // length in code points (0 = a point, e.g. an empty query)
  bool operator==(const Span&) const = default;
};

// What a term of the query means.
enum class TermKind : std::uint8_t {
  Mode,        // a mode word
  Model,       // a model name (may be several words)
  Size,        // a model size: "<n><param magnitude>[-a<n><param magnitude>]"
  Gpus,        // a GPU count: "<n> <gpu unit>", "<gpu unit> <n>", "<n> x" before hardware
  Nodes,       // a node count: "<n> <node unit>", "<node unit> <n>"
  Hardware,    // a hardware word
  Precision,   // a precision word
  Seq,         // a sequence length: "<n><seq magnitude>", "<seq unit> <n>"
  System,      // a system or rack count: "a dgx b200", "2 nvl72 racks"
  Memory,      // GPU memory the user states: "48 gb", "24 go"
  Budget,      // a token budget: "<n><count magnitude> <token unit>"; value the tokens (filter field `tokens`)
  Epochs,      // passes over the budget: "<n> <epoch unit>"; value the count (filter field `epochs`)
  Intent,      // an intent word (may be several words)
  Scale,       // a scale word
  Filter,      // an explicit `key:value`, or a bare recipe-kind word
  FreeText,    // a word the lexicon does not know, kept for text search
  Stopword,    // a known word without meaning here (particles, bare units)
  Unknown,     // an unknown word that looks like a typo of a lexicon word
  UnknownGpu,  // a GPU kbq has no data for ("rtx 3090"): a warning, never a model name
};
std::string_view to_string(TermKind kind);

// One term of the query, in query order.
struct Term {
  TermKind kind = TermKind::FreeText;  // what the term means
  std::string text;                    // the term as written in the original query
  std::string value;                   // normalized: a lexicon value, a count, tokens, a size token, a folded word
  std::string field;                   // Filter terms: the field name; else empty
  Span span;                           // where the term is in the original query
};

// What a warning says: kbq words each kind in the answer's language
// (answer labels warn.typo, warn.typo_ambiguous, warn.corrected,
// warn.unknown_gpu); `message` is the English text.
enum class WarningKind : std::uint8_t {
  Typo,        // an unknown word close to a lexicon word (suggestion, or candidates when several are as close)
  Corrected,   // a typo read as the one lexicon word that close (suggestion: the word read)
  UnknownGpu,  // a GPU kbq has no data for (shown: as written)
};

// An unknown word that is probably a typo, or a GPU kbq has no data for.
struct Warning {
  std::string word;                     // the unknown word (folded)
  std::string suggestion;               // the closest lexicon word (empty for an unknown GPU)
  std::string message;                  // "unknown word '<word>'; did you mean '<suggestion>'?"
  Span span;                            // where the word is
  std::vector<std::string> candidates;  // an ambiguous typo: every closest word (two or more)
  WarningKind kind;                     // what it says
  std::string shown;                    // UnknownGpu: the GPU as the question wrote it
};

// A typo corrected because exactly one lexicon word is that close: the
// query is read with the corrected word ("lamma 3.1" as "llama 3.1").
struct Correction {
  std::string word;       // as typed (folded)
  std::string corrected;  // the lexicon word read instead
  Span span;              // where the typo is
};

// What the query asks for, without positions: the part that survives a
// round trip through to_canonical().
struct Constraints {
  std::optional<std::string> mode;             // a Mode value; nullopt = any
  std::string model;                           // recipe-name prefix (a Model value or a filter value); empty = any
  double size_params = 0;                      // total parameters; 0 = any
  double size_active = 0;                      // active parameters of a MoE size ("-a<n><m>"); 0 = none
  std::string size_token;                      // the size as in a recipe name (lower case, '.' as 'p', '-' as '_')
  std::optional<int> gpus;                     // GPU count
  std::optional<int> nodes;                    // node count
  std::string hardware;                        // gpu key (a Hardware value); empty = any
  std::string precision;                       // a Precision value; empty = any
  std::optional<int> seq_len;                  // sequence length in tokens (number times the seq magnitude)
  double memory_gb = 0;                        // GPU memory the user states ("my 48 GB card"); 0 = the GPU type's own
  std::string system;                          // a system word's value ("dgx_b200"); it also set hardware, gpus, nodes
  std::optional<int> systems;                  // how many systems or racks
  std::optional<int> gpus_per_node;            // "two 8-GPU nodes": GPUs in each node (gpus = nodes x this)
  std::string unknown_hardware;                // a GPU kbq has no data for, as written (folded): "rtx 3090"
  std::string other_mode;                      // a training method no recipe has, as written: "dpo" (also in free_text)
  std::set<std::string> intents;               // Intent values, sorted
  std::string scale;                           // a Scale value; empty = any
  std::map<std::string, std::string> filters;  // other explicit filters: field -> value (numbers in decimal)
  std::vector<std::string> free_text;          // unknown words (folded), in query order

  bool operator==(const Constraints&) const = default;
};

// A parsed query: its terms and the constraints they resolve to.
struct Query : Constraints {
  std::string text;                     // the original query text
  std::vector<Term> terms;              // every term, in order (stopwords included)
  std::vector<Warning> warnings;        // unknown words with a suggestion, unknown GPUs
  std::vector<Correction> corrections;  // typos read as the one lexicon word that close
  std::string flagship;                 // a bare family name ("nemotron 3 nano", no size): the model key (models.tsv) it means, else empty
  std::string lang;                     // language guess: a language code of the lexicon, else by script
  Lexicon lexicon;                      // the lexicon it was parsed with (for printing)

  const Constraints& constraints() const { return *this; }
};

// The first problem found in a query.
struct ParseError {
  std::string message;  // what is wrong, one line
  std::string hint;     // how to fix it; may be empty
  Span span;            // the offending part of the original query
};

// The outcome of parse(): a query, or an error (the query then holds what
// was resolved before the error).
struct ParseResult {
  Query query;                      // the parsed query
  std::optional<ParseError> error;  // set when the query is invalid
  explicit operator bool() const { return !error.has_value(); }
};

// Counts above this are rejected as absurd (GPUs, nodes, parallel sizes).
inline constexpr std::int64_t kMaxCount = 1000000;
// The largest token budget a question may give (1e18 tokens: far above any training run).
inline constexpr double kMaxTokenBudget = 1e18;

// Parses a query. Never throws for bad input. Linear in the text, whatever
// its length (make bench); kbq bounds the length first (check_input).
ParseResult parse(const Lexicon& lexicon, std::string_view text);

// What every text a user gives kbq passes before it is parsed or looked up
// (a question, a recipe name, a --hardware value, an override): valid UTF-8
// (else an error at the first invalid byte's column), at most
// kb::limits::kMaxQuestionBytes bytes and kMaxQuestionWords words (runs of
// text between spaces). `what` names the text in the message ("the
// question"). An error about the length has no span: the text is not
// printed back.
std::optional<ParseError> check_input(std::string_view text, std::string_view what);
// check_input's error for a text of `bytes` bytes over the length limit
// (for a reader that stops holding a line at the limit: kbq --batch).
ParseError too_long(std::string_view what, std::size_t bytes);

// The constraints as a query, in a fixed order, as `key:value` filters where
// the lexicon has a key for the field, else as lexicon words: mode, model,
// size, gpus, nodes, hardware (these three as "<n> <system>" when a system
// sets them), precision, seq, systems, gpus per node, memory, an unknown
// GPU, intents, scale, other filters (token budget and epochs among them)
// (by field), free text last: bare words when the whole query reads back
// as the same constraints, else every free word quoted ("fine" "tuning",
// so the two do not re-form a lexicon phrase); a word that would not read
// back even alone is always quoted.
std::string to_canonical(const Query& query);
std::string to_canonical(const Lexicon& lexicon, const Constraints& constraints);

// A lexicon-independent one-line description of constraints, for logs and
// tests: "mode=<m> model=<p> size=<t> gpus=8 intent=<a>,<b> text=<w1>|<w2>"
// (fields in the canonical order, unset ones left out; free text only when
// `with_text`).
std::string describe(const Constraints& constraints, bool with_text = true);

}  // namespace kbq::dsl
