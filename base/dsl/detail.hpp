// Private to base/dsl: the lexicon's tables (Lexicon::Impl), the text
// normalization with its offset map back to the original query, and the
// Piece list that the X3 grammar (grammar.cpp) hands to the resolver
// (resolve.cpp). Nothing here is part of the public API.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/spirit/home/x3.hpp>

#include "base/dsl/parse.hpp"

namespace kbq::dsl {

// One meaning of a lexicon word.
struct Meaning {
  WordKind kind = WordKind::Stopword;  // the row's kind
  std::string value;                   // the row's value, trimmed (lower-cased for ids)
  double number = 0;                   // magnitudes: the multiplier; else 0
};

// A distinct folded word of the lexicon with all its meanings.
struct WordInfo {
  std::string word;                // folded, one space between words
  std::u32string cps;              // the same as code points, for a word that is not ASCII (an ASCII word's are its bytes)
  std::uint32_t length = 0;        // its code points
  std::vector<Meaning> meanings;   // in row order, one per (kind, value)
  std::vector<std::string> langs;  // sorted language codes, "*" left out
  bool cjk = false;                // holds a CJK code point
  bool ascii = true;               // only ASCII bytes
  int primary = -1;                // index in meanings of the bare-word meaning, -1 = none
  std::uint32_t kinds = 0;         // bit k set: a meaning of kind k (kind_bit)

  // The meaning of a kind, or nullptr.
  const Meaning* meaning(WordKind kind) const;
  // Sets `word` and what is derived from it: cps, length, cjk, ascii.
  void set_word(std::string w);
  // Its code points (edit distance): `cps`, or an ASCII word's bytes
  // widened into `scratch`. Most words are ASCII: a lexicon read back from a
  // KB keeps no copy of them, and only a typo's look-up widens them.
  std::u32string_view code_points(std::u32string& scratch) const;
};

inline constexpr std::uint32_t kNoWord = 0xFFFFFFFFu;  // "no word id"

// The scripts the code tells apart in a question (Unicode classes, not
// languages): data/planner.tsv script_languages says which language each
// is written in. Kana is written in one language only: a question with any
// is in its language; Han is shared, so words of the lexicon can outweigh it.
inline constexpr std::string_view kScriptKana = "kana";
inline constexpr std::string_view kScriptHan = "han";
inline bool is_script(std::string_view s) { return s == kScriptKana || s == kScriptHan; }
inline std::string script_names() { return std::string(kScriptKana) + ", " + std::string(kScriptHan); }

// Kinds whose values are ids (compared after lower-casing); the others are
// numbers, a multiplier or a number word's value, always above 0.
bool is_id_kind(WordKind k);

// A kind's bit in WordInfo::kinds; every kind has one.
static_assert(kWordKindCount <= 32);
inline constexpr std::uint32_t kind_bit(WordKind k) { return std::uint32_t{1} << static_cast<unsigned>(k); }
inline constexpr std::uint32_t kAnyKind = 0xFFFFFFFFu;  // a look-up over every word

// Every spelling of the lexicon (its words and their variants) with the id
// of its word, as a trie of bytes: the grammar's look-up of the longest
// spelling at a place of the text walks it one byte at a time. Its nodes
// live in one array, each node's children side by side after it in byte
// order, so it is built without an allocation per spelling and read back
// from a KB's stored lexicon as it is (Lexicon::from_stored).
class SpellingIndex {
 public:
  struct Node {
    std::uint32_t first_child = 0;  // index of its first child (children side by side), 0 = none
    std::uint32_t children = 0;     // how many
    std::uint32_t id = kNoWord;     // the word the bytes down to here spell, or kNoWord
    unsigned char byte = 0;         // the byte that leads here from the parent
  };
  SpellingIndex() : nodes_(1) {}
  // From (spelling, id) pairs in strictly increasing order of their
  // non-empty spellings.
  explicit SpellingIndex(const std::vector<std::pair<std::string_view, std::uint32_t>>& sorted);
  // From stored nodes, finished for `words`: empty when they are not a
  // trie of this shape (a node's children after it and inside the array,
  // in increasing byte order; ids below words.size()), with `problem`
  // saying why. One pass from the last node back checks each node and
  // takes its kinds from its children's, done before it.
  static SpellingIndex from_nodes(std::vector<Node> nodes, const std::vector<WordInfo>& words, std::string& problem);
  // The kinds of the words at and below every node (a look-up for a kind no
  // word below has stops there). After building, before the first look-up.
  void finish(const std::vector<WordInfo>& words);
  const std::vector<Node>& nodes() const { return nodes_; }
  // The id of a spelling, or kNoWord.
  std::uint32_t find(std::string_view spelling) const;
  // The longest spelling that [first, last) starts with and whose word's
  // kinds meet `kinds` (WordInfo::kinds of `words`): its id in `id`, and
  // `first` moved past it. False, and nothing changed, when none does.
  bool longest(const char*& first, const char* last, const std::vector<WordInfo>& words, std::uint32_t kinds, std::uint32_t& id) const;

 private:
  // The child of `node` reached by `byte`, or 0.
  std::uint32_t child(std::uint32_t node, unsigned char byte) const;
  std::vector<Node> nodes_;           // nodes_[0] is the root (the empty spelling)
  std::vector<std::uint32_t> kinds_;  // per node: kinds of the words at and below it (finish)
};

// Words longer than this many code points are never compared for a
// suggestion (Lexicon::Impl::suggest): no lexicon word is that long, and
// the scanner need not read further than this to know it.
inline constexpr std::size_t kMaxSuggestLength = 64;
// Suggestions a lexicon remembers (Lexicon::Impl::suggest): forgotten all at once past this many.
inline constexpr std::size_t kMaxRememberedSuggestions = 4096;

// Field names of the filters that have a slot of their own in Constraints,
// and the numeric parallelism fields (identifiers of the KB schema, the
// values of `filter` rows).
namespace field {
inline constexpr std::string_view kMode = "mode";
inline constexpr std::string_view kModel = "model";
inline constexpr std::string_view kSize = "size";
inline constexpr std::string_view kGpus = "gpus";
inline constexpr std::string_view kNodes = "nodes";
inline constexpr std::string_view kHardware = "hardware";
inline constexpr std::string_view kPrecision = "precision";
inline constexpr std::string_view kSeq = "seq";
inline constexpr std::string_view kIntent = "intent";
inline constexpr std::string_view kScale = "scale";
inline constexpr std::string_view kKind = "kind";
inline constexpr std::string_view kDataset = "dataset";
inline constexpr std::string_view kLang = "lang";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kGpusPerNode = "gpus_per_node";
inline constexpr std::string_view kTokens = "tokens";  // a token budget (TermKind::Budget), in tokens
inline constexpr std::string_view kEpochs = "epochs";  // passes over it (TermKind::Epochs)
inline constexpr std::array<std::string_view, 6> kParallel{"tp", "pp", "cp", "ep", "etp", "vp"};
}  // namespace field

struct Lexicon::Impl {
  std::vector<WordInfo> words;                                       // by word id
  SpellingIndex index;                                               // every spelling (words and their variants) -> id
  std::map<std::pair<int, std::string>, std::string> spelling;       // (kind, value) -> printed word; value "" = any of the kind
  std::map<std::pair<int, std::string>, bool> values;                // (kind, value) pairs that exist
  std::vector<std::string> problems;                                 // ignored rows
  std::map<std::string, Lexicon::System> systems;                    // system key -> its GPU type, GPUs and nodes
  std::function<bool(std::string_view)> is_name_word;                // a word of recipe names (never corrected as a typo), asked (Extras)
  std::map<std::string, std::string> flagships;                      // model value -> model key a bare family name means
  std::string base_language;                                         // Extras::base_language
  std::map<std::string, std::string, std::less<>> script_languages;  // Extras::script_languages (is_script)

  // The language of a script (is_script), or nullptr when the data names none.
  const std::string* script_language(std::string_view script) const {
    auto it = script_languages.find(script);
    return it == script_languages.end() ? nullptr : &it->second;
  }

  // The id of a folded spelling, or kNoWord.
  std::uint32_t find(std::string_view folded) const { return index.find(folded); }
  // The longest spelling at `first` of a word with a meaning of one of
  // `kinds` (kind_bit, or kAnyKind), as SpellingIndex::longest.
  bool longest(const char*& first, const char* last, std::uint32_t kinds, std::uint32_t& id) const {
    return index.longest(first, last, words, kinds, id);
  }
  // Whether a folded word is a word of recipe names (never corrected).
  bool name_word(std::string_view folded) const { return is_name_word && is_name_word(folded); }
  // Closest word (see Lexicon::suggest), as an id or kNoWord; `word` folded.
  // Remembered per (kind, word): one parse asks again for the same word
  // (scan, typo correction, the word's warning) and the printer re-parses;
  // a question of one word repeated costs one scan of the lexicon, not one
  // per repetition (fuzz_dsl's expanded inputs timed out at 30 s).
  std::uint32_t suggest(std::u32string_view word, int kind) const;
  std::uint32_t closest(std::u32string_view word, int kind) const;  // suggest without the memory
  mutable std::mutex suggest_mu;
  mutable std::unordered_map<std::u32string, std::uint32_t> suggested;  // kind (+2) then the word -> id
  // Every word as close as the closest (Lexicon::suggest_all), as ids;
  // remembered per word as suggest() is.
  std::vector<std::uint32_t> suggest_all(std::u32string_view word) const;
  std::vector<std::uint32_t> all_closest(std::u32string_view word) const;  // suggest_all without the memory
  mutable std::unordered_map<std::u32string, std::vector<std::uint32_t>> suggested_all;
};

// The query after folding: case and width folded, whitespace runs collapsed
// to one space, trimmed; with maps back to the original text.
struct Normalized {
  std::string text;                    // folded query
  std::vector<std::uint32_t> cp_of;    // text byte -> original code point index (size text.size()+1)
  std::vector<std::uint32_t> byte_of;  // original code point index -> original byte (size cps+1)

  // Span in the original text of text[b, e).
  Span span(std::size_t b, std::size_t e) const;
  // Original text of a span.
  std::string_view original(std::string_view orig, Span s) const;
};

// Folds a query. Assumes valid UTF-8.
Normalized normalize_query(std::string_view text);
// Folds a lexicon word or a filter value: kb::fold plus whitespace
// collapsing (no offset map).
std::string fold_phrase(std::string_view text);

// UTF-8 helpers over valid text.
char32_t decode_at(std::string_view s, std::size_t i, int& len);
std::u32string to_u32(std::string_view s);
bool is_space_cp(char32_t cp);
bool is_cjk_cp(char32_t cp);
int cp_count(std::string_view s);

// A number as written: "-?digits(.digits)?" ('p' may stand for '.' in sizes).
struct Num {
  std::size_t b = 0, e = 0;  // extent in the normalized text
  double value = 0;          // the value, sign included
  std::uint64_t whole = 0;   // integer part, saturated at overflow
  bool neg = false;          // written with '-'
  bool frac = false;         // has a non-zero fractional part
  bool overflow = false;     // integer part does not fit 64 bits
};

// What the grammar recognized at one place of the query.
enum class PieceKind : std::uint8_t {
  Word,      // a lexicon word (meaning chosen by the resolver)
  Gpus,      // a GPU count
  Nodes,     // a node count
  Seq,       // a sequence length
  Size,      // a model size
  Hardware,  // a hardware word next to a count ("<n> x <hw>")
  Filter,    // key:value with a known key
  BadKey,    // key:value with an unknown key
  Free,      // an unknown word (or one CJK code point)
  Quoted,    // "free text"
  Range,     // "<n>-<m> <unit>": a range of counts (rejected)
  System,    // "[<n>] <system word>": systems or racks (num; 1 when no count)
  Memory,    // "<n> <memory unit>": GPU memory (num, mult = the unit's GB)
  NodesOf,   // "<n> <m>-gpu <node unit>", "<n> <node unit> of <m> <gpu unit>" (num = nodes, second = GPUs per node)
  Family,    // "<hardware family> [<model number>]": a GPU kbq has no data for
  Budget,    // "<n><count magnitude> [particle] <token unit>": a token budget
  Epochs,    // "<n> [particle] <epoch unit>": passes over the budget
};

// One recognized term, before the resolver gives it a meaning.
struct Piece {
  PieceKind kind = PieceKind::Free;                              // what it is
  std::size_t b = 0, e = 0;                                      // extent in the normalized text
  std::uint32_t word = kNoWord;                                  // Word/Hardware: word id; Filter: key id; Free: suggested id
  Num num;                                                       // Gpus/Nodes/Seq/Size: the number; Range: the lower end
  double mult = 1;                                               // Seq/Size/Budget: magnitude multiplier
  std::uint32_t mag = kNoWord;                                   // Size: magnitude word id
  Num active;                                                    // Size: the active part's number; Range: the upper end
  double active_mult = 0;                                        // Size: the active part's multiplier
  std::uint32_t active_mag = kNoWord;                            // Size: the active part's magnitude word id
  std::size_t vb = 0, ve = 0;                                    // Filter/BadKey: value extent (key is [b, vb-1)); Quoted: inner text
  Num second;                                                    // NodesOf: GPUs per node
  bool has_second = false;                                       // second was written
  std::array<std::uint32_t, 3> also{kNoWord, kNoWord, kNoWord};  // other lexicon words inside (units, particles) for the language guess
};

// Splits a normalized query into pieces with the X3 grammar.
std::vector<Piece> scan(const Lexicon::Impl& lex, std::string_view text);

// Value grammars for filters (whole string must match).
bool parse_number_value(std::string_view v, Num& out);
bool parse_seq_value(const Lexicon::Impl& lex, std::string_view v, Num& out, double& mult);
bool parse_size_value(const Lexicon::Impl& lex, std::string_view v, Piece& out);
bool parse_budget_value(const Lexicon::Impl& lex, std::string_view v, Num& out, double& mult);

// The size token of a Size piece: number + magnitude spelling
// ["_a" number + magnitude spelling], '.' as 'p'.
std::string size_token(const Lexicon::Impl& lex, std::string_view text, const Piece& p);

}  // namespace kbq::dsl
