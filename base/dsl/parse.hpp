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
  TokenUnit,       // marks a token budget: "<n> <count magnitude> [particle] <token unit>" ("1T tokens", "1兆トークン")
  EpochUnit,       // counts passes over the budget: "<n> [particle] <epoch unit>" ("3 epochs")
  CountMagnitude,  // multiplier of a token budget; value the multiplier ("1e12" for T, 兆, trillion)
};
inline constexpr int kWordKindCount = 19;  // number of WordKind members

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
  // Builds the symbol tables. `hardware_keys` are gpu keys from the KB that
  // are known as hardware words even without a lexicon row.
  explicit Lexicon(const std::vector<LexiconRow>& rows, const std::vector<std::string>& hardware_keys = {});

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
  // The filter key printed for a field (spelling(Filter, field)); empty
  // when the lexicon has no key for the field.
  std::string filter_key(std::string_view field) const;
  // The closest word by edit distance (Levenshtein <= 2, <= 1 for words of
  // at most 4 code points; ties: same length, longer common prefix, nearer
  // substituted code points), or empty. CJK words are never suggested;
  // without `kind`, neither are stopwords nor words of fewer than 3 code
  // points. With `kind`, only words of that kind.
  std::string suggest(std::string_view word, std::optional<WordKind> kind = std::nullopt) const;

  const Impl& impl() const { return *impl_; }

 private:
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
  Mode,       // a mode word
  Model,      // a model name (may be several words)
  Size,       // a model size: "<n><param magnitude>[-a<n><param magnitude>]"
  Gpus,       // a GPU count: "<n> <gpu unit>", "<gpu unit> <n>", "<n> x" before hardware
  Nodes,      // a node count: "<n> <node unit>", "<node unit> <n>"
  Hardware,   // a hardware word
  Precision,  // a precision word
  Seq,        // a sequence length: "<n><seq magnitude>", "<seq unit> <n>"
  Intent,     // an intent word (may be several words)
  Scale,      // a scale word
  Filter,     // an explicit `key:value`, or a bare recipe-kind word
  Budget,     // a token budget: "<n><count magnitude> <token unit>"; value the tokens (filter field `tokens`)
  Epochs,     // passes over the budget: "<n> <epoch unit>"; value the count (filter field `epochs`)
  FreeText,   // a word the lexicon does not know, kept for text search
  Stopword,   // a known word without meaning here (particles, bare units)
  Unknown,    // an unknown word that looks like a typo of a lexicon word
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

// An unknown word that is probably a typo.
struct Warning {
  std::string word;        // the unknown word (folded)
  std::string suggestion;  // the closest lexicon word
  std::string message;     // "unknown word '<word>'; did you mean '<suggestion>'?"
  Span span;               // where the word is
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
  std::set<std::string> intents;               // Intent values, sorted
  std::string scale;                           // a Scale value; empty = any
  std::map<std::string, std::string> filters;  // other explicit filters: field -> value (numbers in decimal)
  std::vector<std::string> free_text;          // unknown words (folded), in query order

  bool operator==(const Constraints&) const = default;
};

// A parsed query: its terms and the constraints they resolve to.
struct Query : Constraints {
  std::string text;               // the original query text
  std::vector<Term> terms;        // every term, in order (stopwords included)
  std::vector<Warning> warnings;  // unknown words with a suggestion
  std::string lang;               // language guess: a language code of the lexicon, else by script
  Lexicon lexicon;                // the lexicon it was parsed with (for printing)

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
// size, gpus, nodes, hardware, precision, seq, intents, scale, other filters
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
