// The Lexicon: folds the rows' words, groups their meanings per distinct
// word, derives the spelling variants of multi-word phrases, fills the X3
// symbol tables (one for every spelling, one per kind), picks the printed
// spelling of every value and answers edit-distance suggestions. Also the
// UTF-8 and folding helpers shared by the other files of base/dsl.
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <tuple>

#include "base/dsl/detail.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"
#include "base/tsv.hpp"

namespace kbq::dsl {

// ---------------------------------------------------------------------------
// Text helpers

char32_t decode_at(std::string_view s, std::size_t i, int& len) {
  const std::size_t start = i;
  const char32_t cp = kb::next_code_point(s, i);
  len = static_cast<int>(i - start);
  return cp;
}

std::u32string to_u32(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) out.push_back(kb::next_code_point(s, i));
  return out;
}

bool is_space_cp(char32_t cp) { return kb::is_white_space(cp); }

void WordInfo::set_word(std::string w) {
  word = std::move(w);
  // Most words are ASCII: each byte is its code point, and none is CJK.
  ascii = std::all_of(word.begin(), word.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  cjk = false;
  if (ascii) {
    cps.clear();
    length = static_cast<std::uint32_t>(word.size());
    return;
  }
  cps = to_u32(word);
  length = static_cast<std::uint32_t>(cps.size());
  cjk = std::any_of(cps.begin(), cps.end(), is_cjk_cp);
}

std::u32string_view WordInfo::code_points(std::u32string& scratch) const {
  if (!ascii) return cps;
  scratch.assign(word.begin(), word.end());
  return scratch;
}

bool is_cjk_cp(char32_t cp) { return kb::is_cjk(cp); }

int cp_count(std::string_view s) { return kb::code_point_column(s, s.size()); }

std::string fold_phrase(std::string_view text) {
  const std::string folded = kb::fold(text);
  std::string out;
  out.reserve(folded.size());
  bool pending = false;
  for (std::size_t i = 0; i < folded.size();) {
    int len = 0;
    const char32_t cp = decode_at(folded, i, len);
    if (is_space_cp(cp)) {
      pending = !out.empty();
    } else {
      if (pending) out += ' ';
      pending = false;
      out.append(folded, i, static_cast<std::size_t>(len));
    }
    i += static_cast<std::size_t>(len);
  }
  return out;
}

Normalized normalize_query(std::string_view text) {
  Normalized n;
  const std::string folded = kb::fold(text);
  n.text.reserve(folded.size());
  n.cp_of.reserve(folded.size() + 1);
  // Original code point -> byte.
  for (std::size_t i = 0; i < text.size();) {
    n.byte_of.push_back(static_cast<std::uint32_t>(i));
    int len = 0;
    decode_at(text, i, len);
    i += static_cast<std::size_t>(len);
  }
  n.byte_of.push_back(static_cast<std::uint32_t>(text.size()));
  // kb::fold maps each code point to exactly one code point, so the k-th
  // code point of `folded` is the k-th of `text`.
  std::uint32_t cp_index = 0;
  std::uint32_t pending_space = 0;
  bool pending = false;
  std::uint32_t end_cp = 0;
  for (std::size_t i = 0; i < folded.size(); ++cp_index) {
    int len = 0;
    const char32_t cp = decode_at(folded, i, len);
    if (is_space_cp(cp)) {
      if (!pending && !n.text.empty()) {
        pending = true;
        pending_space = cp_index;
      }
    } else {
      if (pending) {
        n.text += ' ';
        n.cp_of.push_back(pending_space);
        pending = false;
      }
      n.text.append(folded, i, static_cast<std::size_t>(len));
      for (int k = 0; k < len; ++k) n.cp_of.push_back(cp_index);
      end_cp = cp_index + 1;
    }
    i += static_cast<std::size_t>(len);
  }
  n.cp_of.push_back(end_cp);
  return n;
}

Span Normalized::span(std::size_t b, std::size_t e) const {
  const auto cb = cp_of[std::min(b, cp_of.size() - 1)];
  const auto ce = cp_of[std::min(e, cp_of.size() - 1)];
  return Span{static_cast<int>(cb) + 1, static_cast<int>(ce >= cb ? ce - cb : 0)};
}

std::string_view Normalized::original(std::string_view orig, Span s) const {
  const auto first = static_cast<std::size_t>(std::max(s.col - 1, 0));
  const auto last = first + static_cast<std::size_t>(std::max(s.len, 0));
  if (last >= byte_of.size()) return {};
  return orig.substr(byte_of[first], byte_of[last] - byte_of[first]);
}

// ---------------------------------------------------------------------------
// Kinds

bool is_id_kind(WordKind k) {
  return k != WordKind::ParamMagnitude && k != WordKind::SeqMagnitude && k != WordKind::Number && k != WordKind::MemoryUnit &&
         k != WordKind::CountMagnitude;
}

namespace {

struct KindName {
  WordKind kind;
  std::string_view name;
};
// The data spellings of the kinds (identifiers of the lexicon schema).
constexpr std::array<KindName, kWordKindCount> kKindNames{{
    {WordKind::Mode, "mode"},
    {WordKind::Intent, "intent"},
    {WordKind::Scale, "scale"},
    {WordKind::GpuUnit, "gpu_unit"},
    {WordKind::NodeUnit, "node_unit"},
    {WordKind::SeqUnit, "seq_unit"},
    {WordKind::ParamMagnitude, "param_magnitude"},
    {WordKind::SeqMagnitude, "seq_magnitude"},
    {WordKind::Hardware, "hardware"},
    {WordKind::Precision, "precision"},
    {WordKind::Model, "model"},
    {WordKind::RecipeKind, "kind"},
    {WordKind::Filter, "filter"},
    {WordKind::Stopword, "stopword"},
    {WordKind::OpenMax, "open_max"},
    {WordKind::RangeSep, "range_sep"},
    {WordKind::Number, "number"},
    {WordKind::System, "system"},
    {WordKind::MemoryUnit, "memory_unit"},
    {WordKind::TokenUnit, "token_unit"},
    {WordKind::EpochUnit, "epoch_unit"},
    {WordKind::HardwareFamily, "hardware_family"},
    {WordKind::Flagship, "flagship"},
    {WordKind::OtherModel, "other_model"},
    {WordKind::OtherMode, "other_mode"},
    {WordKind::CountMagnitude, "count_magnitude"},
    {WordKind::Dataset, "dataset"},
    {WordKind::Plural, "plural"},
}};

// Which meaning a bare word takes when it has several, best first.
constexpr std::array<WordKind, 8> kBarePriority{WordKind::Mode,   WordKind::Model, WordKind::Hardware,   WordKind::Precision,
                                                WordKind::Intent, WordKind::Scale, WordKind::RecipeKind, WordKind::Dataset};

// Kinds whose words are used inside a grammar rule (after or before a
// number, before ':'), where any word of the kind works.
bool is_rule_kind(WordKind k) {
  return k == WordKind::GpuUnit || k == WordKind::NodeUnit || k == WordKind::SeqUnit || k == WordKind::ParamMagnitude ||
         k == WordKind::SeqMagnitude || k == WordKind::Filter || k == WordKind::Number || k == WordKind::System ||
         k == WordKind::MemoryUnit || k == WordKind::TokenUnit || k == WordKind::EpochUnit || k == WordKind::HardwareFamily ||
         k == WordKind::CountMagnitude || k == WordKind::Plural;
}

// Unit kinds may have an empty value.
bool value_optional(WordKind k) {
  return k == WordKind::GpuUnit || k == WordKind::NodeUnit || k == WordKind::SeqUnit || k == WordKind::Stopword || k == WordKind::OpenMax ||
         k == WordKind::RangeSep || k == WordKind::TokenUnit || k == WordKind::EpochUnit || k == WordKind::HardwareFamily ||
         k == WordKind::OtherModel || k == WordKind::Plural || k == WordKind::OtherMode;
}

std::shared_ptr<const Lexicon::Impl> empty_impl() {
  static const std::shared_ptr<const Lexicon::Impl> empty = std::make_shared<Lexicon::Impl>();
  return empty;
}

// The spelling variants of a multi-word phrase: ASCII-side spaces become
// '-', '_' or nothing (all alike); spaces next to CJK text may be dropped.
std::vector<std::string> phrase_variants(const std::string& w) {
  std::vector<std::string> out;
  if (w.find(' ') == std::string::npos) return out;
  // Classify each space by its neighbours.
  std::vector<bool> cjk_space;  // per space, in order
  {
    std::size_t i = 0;
    char32_t prev = 0;
    while (i < w.size()) {
      int len = 0;
      const char32_t cp = decode_at(w, i, len);
      if (cp == ' ') {
        std::size_t j = i + 1;
        int nlen = 0;
        const char32_t next = j < w.size() ? decode_at(w, j, nlen) : 0;
        cjk_space.push_back(is_cjk_cp(prev) || is_cjk_cp(next));
      }
      prev = cp;
      i += static_cast<std::size_t>(len);
    }
  }
  static constexpr std::array<std::string_view, 4> kAsciiJoin{" ", "-", "_", ""};
  static constexpr std::array<std::string_view, 2> kCjkJoin{" ", ""};
  for (auto aj : kAsciiJoin) {
    for (auto cj : kCjkJoin) {
      std::string v;
      std::size_t k = 0;
      for (char c : w) {
        if (c == ' ') {
          v += cjk_space[k++] ? cj : aj;
        } else {
          v += c;
        }
      }
      if (v != w && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(std::move(v));
    }
  }
  return out;
}

// Orders printed spellings: ASCII first, then fewer code points, then bytes.
auto spelling_rank(const WordInfo& w) { return std::make_tuple(!w.ascii, w.length, std::string_view(w.word)); }

bool better_spelling(const WordInfo& a, const std::string& current_word, const Lexicon::Impl& lex) {
  const std::uint32_t id = lex.find(current_word);
  if (id == kNoWord) return true;
  return spelling_rank(a) < spelling_rank(lex.words[id]);
}

}  // namespace

std::string_view to_string(WordKind kind) {
  for (const auto& k : kKindNames)
    if (k.kind == kind) return k.name;
  return "?";
}

std::optional<WordKind> word_kind_from_string(std::string_view name) {
  for (const auto& k : kKindNames)
    if (k.name == name) return k.kind;
  return std::nullopt;
}

const Meaning* WordInfo::meaning(WordKind kind) const {
  for (const auto& m : meanings)
    if (m.kind == kind) return &m;
  return nullptr;
}

// ---------------------------------------------------------------------------
// The spelling index

SpellingIndex::SpellingIndex(const std::vector<std::pair<std::string_view, std::uint32_t>>& sorted) : nodes_(1) {
  // [lo, hi) share their first `depth` bytes and lead to `node`; the one
  // that ends there sorts first.
  const auto build = [&](const auto& self, std::uint32_t node, std::size_t lo, std::size_t hi, std::size_t depth) -> void {
    if (lo < hi && sorted[lo].first.size() == depth) nodes_[node].id = sorted[lo++].second;
    std::vector<std::size_t> starts;  // where each next byte's run begins
    for (std::size_t i = lo; i < hi; ++i)
      if (i == lo || sorted[i].first[depth] != sorted[i - 1].first[depth]) starts.push_back(i);
    if (starts.empty()) return;
    const auto first = static_cast<std::uint32_t>(nodes_.size());
    nodes_[node].first_child = first;
    nodes_[node].children = static_cast<std::uint32_t>(starts.size());
    for (std::size_t g : starts) nodes_.push_back(Node{0, 0, kNoWord, static_cast<unsigned char>(sorted[g].first[depth])});
    for (std::size_t g = 0; g < starts.size(); ++g)
      self(self, first + static_cast<std::uint32_t>(g), starts[g], g + 1 < starts.size() ? starts[g + 1] : hi, depth + 1);
  };
  build(build, 0, 0, sorted.size(), 0);
}

SpellingIndex SpellingIndex::from_nodes(std::vector<Node> nodes, const std::vector<WordInfo>& words, std::string& problem) {
  const auto fail = [&](std::size_t i, const std::string& what) {
    problem = "node " + std::to_string(i) + ": " + what;
    return SpellingIndex();
  };
  if (nodes.empty()) return fail(0, "no root");
  std::vector<std::uint32_t> kinds(nodes.size(), 0);
  for (std::size_t i = nodes.size(); i-- > 0;) {
    const Node& n = nodes[i];
    if (n.id != kNoWord && n.id >= words.size()) return fail(i, "word id " + std::to_string(n.id) + " past the words");
    std::uint32_t k = n.id == kNoWord ? 0 : words[n.id].kinds;
    if (n.children != 0) {
      if (n.first_child <= i || n.first_child > nodes.size() || n.children > nodes.size() - n.first_child)
        return fail(i, "children outside the nodes after it");
      for (std::uint32_t c = n.first_child; c < n.first_child + n.children; ++c) {
        if (c > n.first_child && nodes[c].byte <= nodes[c - 1].byte) return fail(i, "children not in increasing byte order");
        k |= kinds[c];
      }
    }
    kinds[i] = k;
  }
  SpellingIndex index;
  index.nodes_ = std::move(nodes);
  index.kinds_ = std::move(kinds);
  return index;
}

void SpellingIndex::finish(const std::vector<WordInfo>& words) {
  // Children come after their parent: from the last node back, a node's
  // children are done before it.
  kinds_.assign(nodes_.size(), 0);
  for (std::size_t i = nodes_.size(); i-- > 0;) {
    const Node& n = nodes_[i];
    std::uint32_t k = n.id == kNoWord ? 0 : words[n.id].kinds;
    for (std::uint32_t c = n.first_child; c < n.first_child + n.children; ++c) k |= kinds_[c];
    kinds_[i] = k;
  }
}

std::uint32_t SpellingIndex::child(std::uint32_t node, unsigned char byte) const {
  const Node& n = nodes_[node];
  std::uint32_t lo = n.first_child, hi = n.first_child + n.children;
  if (n.children <= 8) {  // most nodes: a few children, read in order
    for (; lo < hi && nodes_[lo].byte < byte; ++lo) {
    }
    return lo < hi && nodes_[lo].byte == byte ? lo : 0;
  }
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (nodes_[mid].byte < byte)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n.first_child + n.children && nodes_[lo].byte == byte ? lo : 0;
}

std::uint32_t SpellingIndex::find(std::string_view spelling) const {
  std::uint32_t node = 0;
  for (char c : spelling)
    if ((node = child(node, static_cast<unsigned char>(c))) == 0) return kNoWord;
  return node == 0 ? kNoWord : nodes_[node].id;
}

bool SpellingIndex::longest(const char*& first, const char* last, const std::vector<WordInfo>& words, std::uint32_t kinds,
                            std::uint32_t& id) const {
  const char* end = nullptr;
  std::uint32_t node = 0;
  for (const char* p = first; p != last; ++p) {
    node = child(node, static_cast<unsigned char>(*p));
    if (node == 0 || (kinds_[node] & kinds) == 0) break;
    const std::uint32_t w = nodes_[node].id;
    if (w != kNoWord && (words[w].kinds & kinds) != 0) {
      end = p + 1;
      id = w;
    }
  }
  if (end == nullptr) return false;
  first = end;
  return true;
}

// Edit distance with a tie-break: among equal edit counts, substitutions
// between nearby code points ('4' -> '3') cost less than far ones.
namespace {
struct Cost {  // no default member initializers: rows below stay uninitialized until written
  int edits;   // insertions + deletions + substitutions
  long far;    // sum of |a - b| over substitutions
  bool operator<(const Cost& o) const { return edits != o.edits ? edits < o.edits : far < o.far; }
};

// Words longer than kMaxSuggestLength are never compared (no allocation
// per call).
Cost edit_cost(std::u32string_view a, std::u32string_view b, int limit) {
  if (b.size() > kMaxSuggestLength) return {limit + 1, 0};
  std::array<Cost, kMaxSuggestLength + 1> row_a, row_b;
  auto* prev = &row_a;
  auto* cur = &row_b;
  for (std::size_t j = 0; j <= b.size(); ++j) (*prev)[j] = {static_cast<int>(j), 0};
  for (std::size_t i = 1; i <= a.size(); ++i) {
    (*cur)[0] = {static_cast<int>(i), 0};
    int row_min = (*cur)[0].edits;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      Cost best{(*prev)[j].edits + 1, (*prev)[j].far};
      const Cost ins{(*cur)[j - 1].edits + 1, (*cur)[j - 1].far};
      if (ins < best) best = ins;
      Cost sub = (*prev)[j - 1];
      if (a[i - 1] != b[j - 1]) {
        sub.edits += 1;
        const long d = static_cast<long>(a[i - 1]) - static_cast<long>(b[j - 1]);
        sub.far += d < 0 ? -d : d;
      }
      if (sub < best) best = sub;
      (*cur)[j] = best;
      row_min = std::min(row_min, best.edits);
    }
    if (row_min > limit) return {limit + 1, 0};
    std::swap(prev, cur);
  }
  return (*prev)[b.size()];
}
// A remembered answer: the one `memo` holds for `key`, else `compute()`'s,
// kept (the memo starts over past kMaxRememberedSuggestions keys). Only
// the look-up and the insertion hold `mu`: two threads may compute the same
// key, and the answers are equal.
template <typename Value, typename Compute>
Value remembered(std::mutex& mu, std::unordered_map<std::u32string, Value>& memo, std::u32string key, Compute compute) {
  {
    const std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  Value value = compute();
  const std::lock_guard<std::mutex> lock(mu);
  if (memo.size() >= kMaxRememberedSuggestions) memo.clear();
  memo.emplace(std::move(key), value);
  return value;
}
}  // namespace

std::uint32_t Lexicon::Impl::suggest(std::u32string_view word, int kind) const {
  const auto n = static_cast<int>(word.size());
  if (n == 0 || word.size() > kMaxSuggestLength) return kNoWord;
  std::u32string key(1, static_cast<char32_t>(kind + 2));
  key += word;
  return remembered(suggest_mu, suggested, std::move(key), [&] { return closest(word, kind); });
}

std::uint32_t Lexicon::Impl::closest(std::u32string_view word, int kind) const {
  const auto n = static_cast<int>(word.size());
  bool has_letter = false;
  for (char32_t c : word) {
    if (is_cjk_cp(c)) return kNoWord;
    if (!(c >= '0' && c <= '9') && c != '.' && c != '-') has_letter = true;
  }
  if (!has_letter) return kNoWord;
  if (kind < 0 && n < 3) return kNoWord;
  const int limit = n <= 4 ? 1 : 2;
  std::uint32_t best = kNoWord;
  std::tuple<int, int, int, long, std::string_view> best_key{limit + 1, 0, 0, 0, {}};
  std::u32string scratch;
  for (std::uint32_t id = 0; id < words.size(); ++id) {
    const WordInfo& w = words[id];
    if (w.cjk) continue;
    if (kind >= 0) {
      if (!w.meaning(static_cast<WordKind>(kind))) continue;
    } else {
      if (w.length < 3) continue;
      bool only_stop = true;
      for (const auto& m : w.meanings)
        if (m.kind != WordKind::Stopword && m.kind != WordKind::OpenMax && m.kind != WordKind::RangeSep) only_stop = false;
      if (only_stop) continue;
    }
    const int diff = std::abs(static_cast<int>(w.length) - n);
    if (diff > limit) continue;
    const std::u32string_view cps = w.code_points(scratch);
    const Cost c = edit_cost(word, cps, limit);
    if (c.edits > limit || c.edits == 0) continue;
    // Fewest edits, then the same length (a substitution is the likelier
    // typo), then the longest common prefix, then the nearest substituted
    // code points, then the word.
    int prefix = 0;
    while (static_cast<std::size_t>(prefix) < std::min(word.size(), cps.size()) &&
           word[static_cast<std::size_t>(prefix)] == cps[static_cast<std::size_t>(prefix)])
      ++prefix;
    const auto key = std::make_tuple(c.edits, diff, -prefix, c.far, std::string_view(w.word));
    if (best == kNoWord || key < best_key) {
      best = id;
      best_key = key;
    }
  }
  return best;
}

std::vector<std::uint32_t> Lexicon::Impl::suggest_all(std::u32string_view word) const {
  return remembered(suggest_mu, suggested_all, std::u32string(word), [&] { return all_closest(word); });
}

std::vector<std::uint32_t> Lexicon::Impl::all_closest(std::u32string_view word) const {
  std::vector<std::uint32_t> out;
  const std::uint32_t best = suggest(word, -1);
  if (best == kNoWord) return out;
  const auto n = static_cast<int>(word.size());
  const int limit = n <= 4 ? 1 : 2;
  // As close as the best by suggest()'s ranking without its last tie-breaks:
  // as many edits, the same length, as long a common prefix.
  std::u32string scratch;
  auto rank = [&](const WordInfo& w) {
    const std::u32string_view cps = w.code_points(scratch);
    int prefix = 0;
    while (static_cast<std::size_t>(prefix) < std::min(word.size(), cps.size()) &&
           word[static_cast<std::size_t>(prefix)] == cps[static_cast<std::size_t>(prefix)])
      ++prefix;
    return std::make_tuple(edit_cost(word, cps, limit).edits, std::abs(static_cast<int>(cps.size()) - n), -prefix);
  };
  const auto best_rank = rank(words[best]);
  out.push_back(best);
  for (std::uint32_t id = 0; id < words.size(); ++id) {
    const WordInfo& w = words[id];
    if (id == best || w.cjk || w.length < 3 || w.primary < 0) continue;
    if (std::abs(static_cast<int>(w.length) - n) > limit) continue;
    if (rank(w) != best_rank) continue;
    // A word meaning what a candidate already means is the same answer.
    const Meaning& m = w.meanings[static_cast<std::size_t>(w.primary)];
    bool same = false;
    for (auto other : out) {
      const WordInfo& o = words[other];
      if (o.primary >= 0 && o.meanings[static_cast<std::size_t>(o.primary)].kind == m.kind &&
          o.meanings[static_cast<std::size_t>(o.primary)].value == m.value)
        same = true;
    }
    if (!same) out.push_back(id);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Building

Lexicon::Lexicon() : impl_(empty_impl()) {}

namespace {

using WordIds = std::unordered_map<std::string, std::uint32_t>;  // folded word -> id

// One lexicon row, checked and folded: the meaning it adds to a word.
struct RowMeaning {
  std::string word;                    // folded
  WordKind kind = WordKind::Stopword;  // the row's kind
  std::string value;                   // trimmed; folded for id kinds
  double number = 0;                   // magnitudes: the multiplier
};

// Checks and folds a row. A row with an unknown kind, an empty word, a
// magnitude that is not a positive number or a missing required value is
// ignored: nullopt, with a line in `problems`.
std::optional<RowMeaning> read_row(const LexiconRow& row, std::vector<std::string>& problems) {
  const std::string kind_name = kb::trim(row.kind);
  const auto kind = word_kind_from_string(kind_name);
  RowMeaning m;
  // The search tree of the spellings is as deep as the longest word.
  if (row.word.size() > kb::limits::kMaxLexiconWordBytes || row.value.size() > kb::limits::kMaxLexiconWordBytes) {
    problems.push_back("a word or value of kind '" + kind_name + "' longer than " + std::to_string(kb::limits::kMaxLexiconWordBytes) +
                       " bytes");
    return std::nullopt;
  }
  m.word = fold_phrase(row.word);
  if (!kind) {
    problems.push_back("word '" + m.word + "': unknown kind '" + kind_name + "'");
    return std::nullopt;
  }
  if (m.word.empty()) {
    problems.push_back("empty word of kind '" + kind_name + "'");
    return std::nullopt;
  }
  m.kind = *kind;
  m.value = kb::trim(row.value);
  if (is_id_kind(*kind)) m.value = fold_phrase(m.value);
  if (!is_id_kind(*kind)) {
    const auto* first = m.value.data();
    const auto* last = m.value.data() + m.value.size();
    auto [ptr, ec] = std::from_chars(first, last, m.number);
    if (ec != std::errc() || ptr != last || !(m.number > 0)) {
      problems.push_back("word '" + m.word + "': magnitude '" + m.value + "' is not a positive number");
      return std::nullopt;
    }
  } else if (m.value.empty() && !value_optional(*kind)) {
    problems.push_back("word '" + m.word + "' of kind '" + kind_name + "' has no value");
    return std::nullopt;
  }
  return m;
}

// Adds a meaning to a word (a new word at its first row) and the row's
// language to the word's languages. A second value of a kind the word
// already has is a problem: the first is kept.
void add_meaning(Lexicon::Impl& lx, WordIds& word_ids, const std::string& word, WordKind kind, std::string value, double number,
                 const std::string& lang) {
  auto [it, fresh] = word_ids.try_emplace(word, static_cast<std::uint32_t>(lx.words.size()));
  if (fresh) {
    WordInfo w;
    w.set_word(word);
    lx.words.push_back(std::move(w));
  }
  WordInfo& w = lx.words[it->second];
  if (!lang.empty() && lang != "*" && std::find(w.langs.begin(), w.langs.end(), lang) == w.langs.end()) {
    w.langs.insert(std::upper_bound(w.langs.begin(), w.langs.end(), lang), lang);
  }
  if (const Meaning* m = w.meaning(kind)) {
    if (m->value != value)
      lx.problems.push_back("word '" + word + "' has two " + std::string(to_string(kind)) + " values ('" + m->value + "' and '" + value +
                            "'); the first is kept");
    return;
  }
  w.meanings.push_back(Meaning{kind, std::move(value), number});
  w.kinds |= kind_bit(kind);
}

// The meaning each word takes when it stands alone (kBarePriority).
void pick_bare_meanings(Lexicon::Impl& lx) {
  for (auto& w : lx.words) {
    for (WordKind k : kBarePriority) {
      for (std::size_t i = 0; i < w.meanings.size() && w.primary < 0; ++i)
        if (w.meanings[i].kind == k) w.primary = static_cast<int>(i);
      if (w.primary >= 0) break;
    }
  }
}

// Every spelling → id: real words first, then the variants that are not
// words themselves (a variant two words share is the first's).
void index_spellings(Lexicon::Impl& lx, const WordIds& word_ids) {
  WordIds ids = word_ids;
  for (std::uint32_t id = 0; id < lx.words.size(); ++id)
    for (auto& v : phrase_variants(lx.words[id].word)) ids.try_emplace(std::move(v), id);
  std::vector<std::pair<std::string_view, std::uint32_t>> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  lx.index = SpellingIndex(sorted);
}

// The known (kind, value) pairs, and the printed spelling of each (and of
// each kind, value ""): the better_spelling among the words that mean it.
void pick_printed_spellings(Lexicon::Impl& lx) {
  for (std::uint32_t id = 0; id < lx.words.size(); ++id) {
    const WordInfo& w = lx.words[id];
    for (std::size_t i = 0; i < w.meanings.size(); ++i) {
      const Meaning& m = w.meanings[i];
      const int k = static_cast<int>(m.kind);
      lx.values[{k, m.value}] = true;
      const bool usable = is_rule_kind(m.kind) || static_cast<int>(i) == w.primary;
      if (!usable) continue;
      for (const std::string& value : {m.value, std::string()}) {
        auto& slot = lx.spelling[{k, value}];
        if (slot.empty() || better_spelling(w, slot, lx)) slot = w.word;
      }
    }
  }
}

// A word spelled like the value itself (or whose variant is) wins: keys
// print as their field name, values as their id where a word reads so.
void prefer_spellings_like_values(Lexicon::Impl& lx) {
  for (auto& [kv, printed] : lx.spelling) {
    if (kv.second.empty()) continue;
    const std::uint32_t id = lx.find(kv.second);
    if (id == kNoWord) continue;
    const WordInfo& w = lx.words[id];
    const auto kind = static_cast<WordKind>(kv.first);
    for (std::size_t i = 0; i < w.meanings.size(); ++i)
      if (w.meanings[i].kind == kind && w.meanings[i].value == kv.second && (is_rule_kind(kind) || static_cast<int>(i) == w.primary))
        printed = w.word;
  }
}

}  // namespace

Lexicon::Lexicon(const std::vector<LexiconRow>& rows, const std::vector<std::string>& hardware_keys)
    : Lexicon(rows, Extras{hardware_keys, {}, {}, {}, {}, {}}) {}

Lexicon::Lexicon(const std::vector<LexiconRow>& rows, Extras extras) {
  const auto& hardware_keys = extras.hardware_keys;
  auto impl = std::make_shared<Impl>();
  Impl& lx = *impl;
  lx.systems = std::move(extras.systems);
  lx.is_name_word = std::move(extras.is_name_word);
  lx.base_language = std::move(extras.base_language);
  for (auto& [script, lang] : extras.script_languages)
    if (is_script(script))
      lx.script_languages.emplace(script, std::move(lang));
    else
      lx.problems.push_back("script '" + script + "' is not one the parser tells apart (" + script_names() + ")");
  WordIds word_ids;  // real words only
  for (const auto& row : rows)
    if (auto m = read_row(row, lx.problems)) {
      if (m->kind == WordKind::Flagship) {  // a fact about a model value, not a word to read
        lx.flagships.try_emplace(m->word, m->value);
        continue;
      }
      add_meaning(lx, word_ids, m->word, m->kind, std::move(m->value), m->number, kb::trim(row.lang));
    }
  for (const auto& key : hardware_keys) {
    if (key.size() > kb::limits::kMaxLexiconWordBytes) continue;
    const std::string word = fold_phrase(key);
    if (!word.empty()) add_meaning(lx, word_ids, word, WordKind::Hardware, word, 0, "*");
  }
  // A preset's word: its '-' and '_' as spaces, so every spelling of a
  // phrase reads it ("cord-v2", "cord_v2", "cord v2").
  for (const auto& preset : extras.dataset_presets) {
    if (preset.size() > kb::limits::kMaxLexiconWordBytes) continue;
    std::string spaced = preset;
    std::replace_if(
        spaced.begin(), spaced.end(), [](char c) { return c == '-' || c == '_'; }, ' ');
    const std::string word = fold_phrase(spaced);
    if (!word.empty()) add_meaning(lx, word_ids, word, WordKind::Dataset, preset, 0, "*");
  }
  pick_bare_meanings(lx);
  index_spellings(lx, word_ids);
  lx.index.finish(lx.words);
  pick_printed_spellings(lx);
  prefer_spellings_like_values(lx);
  impl_ = std::move(impl);
}

std::vector<LexiconRow> lexicon_rows_from_tsv(const kb::TsvTable& table) {
  std::vector<LexiconRow> rows;
  rows.reserve(table.rows.size());
  for (const auto& r : table.rows)
    rows.push_back({table.get(r, "lang"), table.get(r, "kind"), table.get(r, "word"), table.get(r, "value")});
  return rows;
}

const std::vector<std::string>& Lexicon::problems() const { return impl_->problems; }
std::size_t Lexicon::size() const { return impl_->words.size(); }

std::optional<std::string> Lexicon::value_of(WordKind kind, std::string_view word) const {
  const auto id = impl_->find(fold_phrase(word));
  if (id == kNoWord) return std::nullopt;
  if (const Meaning* m = impl_->words[id].meaning(kind)) return m->value;
  return std::nullopt;
}

std::vector<std::string> Lexicon::languages_of(std::string_view word) const {
  const auto id = impl_->find(fold_phrase(word));
  if (id == kNoWord) return {};
  return impl_->words[id].langs;
}

std::string Lexicon::spelling(WordKind kind, std::string_view value) const {
  const auto it = impl_->spelling.find({static_cast<int>(kind), std::string(value)});
  return it == impl_->spelling.end() ? std::string() : it->second;
}

std::vector<std::string> Lexicon::spellings(WordKind kind, std::string_view value) const {
  std::vector<const WordInfo*> found;
  for (const WordInfo& w : impl_->words)
    for (std::size_t i = 0; i < w.meanings.size(); ++i)
      if (w.meanings[i].kind == kind && w.meanings[i].value == value && (is_rule_kind(kind) || static_cast<int>(i) == w.primary))
        found.push_back(&w);
  std::sort(found.begin(), found.end(), [](const WordInfo* a, const WordInfo* b) { return spelling_rank(*a) < spelling_rank(*b); });
  std::vector<std::string> out;
  for (const auto* w : found) out.push_back(w->word);
  return out;
}

std::string Lexicon::filter_key(std::string_view field) const { return spelling(WordKind::Filter, field); }

std::vector<std::string> Lexicon::suggest_all(std::string_view word) const {
  std::vector<std::string> out;
  for (auto id : impl_->suggest_all(to_u32(fold_phrase(word)))) out.push_back(impl_->words[id].word);
  return out;
}

std::string Lexicon::suggest(std::string_view word, std::optional<WordKind> kind) const {
  const auto id = impl_->suggest(to_u32(fold_phrase(word)), kind ? static_cast<int>(*kind) : -1);
  return id == kNoWord ? std::string() : impl_->words[id].word;
}

}  // namespace kbq::dsl
