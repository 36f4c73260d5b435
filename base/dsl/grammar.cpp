// The grammar of the query language, in Boost.Spirit X3, over the folded
// query text (see normalize_query). Vocabulary comes only from the
// lexicon's spelling index (SpellingIndex); the grammar itself knows digits,
// separators, the times operators, ':' and '"', and the "-a" notation of
// MoE sizes.
//
//   query = *sep >> *(term >> *(sep | joiner)) >> eoi
//   term  = longest(key_value, bad_key_value, spaced_key_value ("TP 2", "pp=4"),
//                   count_times_hw, hw_times_count,
//                   count_hw, word_hw, count_hw_nodes, count_gpus, gpus_count, count_nodes, nodes_count,
//                   count_range, model_size, budget, seq_k, unit_seq, unit_of_seq, seq_unit_after,
//                   systems (3 forms), memory, count_memory_gpus ("4 x 24GB GPUs"),
//                   epochs, nodes_of_gpus,
//                   nodes_with_gpus, model_spaced_size, lexicon_word, family,
//                   count_family)
//         | quoted | fallback
//
// Counts may be written with digit groups ("16 384", "16,384": a group of
// three digits after a space or comma) and, before units, systems and
// epochs, as a number word of the lexicon ("two", "deux", "两").
//
// `longest` tries every alternative at the same place and keeps the one
// that reads furthest (ties: the first listed), so "<model> <size>" and a
// multi-word phrase starting with a shorter word both come out right.
// Every alternative ends with `bound`: the end, a separator, a joiner
// ('-', '_', '/'), a quote, or a CJK boundary (CJK text needs no spaces).
// `fallback` reads one unknown word (one code point in CJK text).
#include <boost/spirit/home/x3.hpp>
#include <memory>
#include <tuple>
#include <type_traits>

#include "base/dsl/detail.hpp"
#include "base/text.hpp"

namespace kbq::dsl {
namespace {

namespace x3 = boost::spirit::x3;
using It = const char*;

// --- character classes over the folded text -------------------------------

char32_t cp_at(It p, It last, int& len) {
  const std::string_view s(p, static_cast<std::size_t>(last - p));
  return decode_at(s, 0, len);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_joiner(char c) { return c == '-' || c == '_' || c == '/'; }

// Punctuation that separates terms: CJK commas and full stops, brackets,
// typographic quotes (not words of any language).
bool is_punct_sep(char32_t cp) {
  return cp == 0x3001 || cp == 0x3002 || (cp >= 0x3008 && cp <= 0x3011) || cp == 0x30FB || cp == 0xFF61 || cp == 0xFF64 || cp == 0x201C ||
         cp == 0x201D || cp == 0xAB || cp == 0xBB;
}

// Byte length of the separator at p, or 0. A '.' separates only at the end
// or before a space ("1.5" and phrases with dots stay whole).
int sep_len(It p, It last) {
  if (p == last) return 0;
  switch (*p) {
    case ' ':
    case ',':
    case ';':
    case '!':
    case '?':
    case '(':
    case ')':
    case '[':
    case ']':
    case '{':
    case '}':
      return 1;
    case '.': {
      const It q = p + 1;
      return (q == last || *q == ' ' || (*q != '.' && sep_len(q, last) > 0)) ? 1 : 0;
    }
    default:
      break;
  }
  if (static_cast<unsigned char>(*p) < 0x80) return 0;
  int len = 0;
  return is_punct_sep(cp_at(p, last, len)) ? len : 0;
}

bool cjk_at(It p, It last) {
  if (p == last || static_cast<unsigned char>(*p) < 0x80) return false;
  int len = 0;
  const char32_t cp = cp_at(p, last, len);
  return is_cjk_cp(cp) && !is_punct_sep(cp);
}

// Start of the code point before p.
It prev_cp(It base, It p) {
  It q = p - 1;
  while (q > base && (static_cast<unsigned char>(*q) & 0xC0) == 0x80) --q;
  return q;
}

bool at_boundary(It base, It p, It last) {
  if (p == last || sep_len(p, last) > 0 || *p == '"' || is_joiner(*p) || cjk_at(p, last)) return true;
  return p > base && cjk_at(prev_cp(base, p), last);
}

// --- primitive parsers -----------------------------------------------------

// A separator (see sep_len).
struct sep_parser : x3::parser<sep_parser> {
  using attribute_type = x3::unused_type;
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    const int n = sep_len(first, last);
    if (n == 0) return false;
    first += n;
    return true;
  }
};

// Zero-width: the end of a term (see at_boundary).
struct bound_parser : x3::parser<bound_parser> {
  using attribute_type = x3::unused_type;
  It base;  // start of the text
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    return at_boundary(base, first, last);
  }
};

// A '-', '_' or '/' right after a term and before more text
// ("<model>-<size>"): skipped like a separator.
struct joiner_parser : x3::parser<joiner_parser> {
  using attribute_type = x3::unused_type;
  It base;  // start of the text
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    if (first == last || first == base || !is_joiner(*first)) return false;
    const It prev = prev_cp(base, first);
    if (*prev == ' ' || sep_len(prev, last) > 0) return false;
    const It next = first + 1;
    if (next == last || *next == ' ' || is_joiner(*next) || sep_len(next, last) > 0) return false;
    ++first;
    return true;
  }
};

// A number: -?[0-9]+([.][0-9]+)? (sign and 'p' as decimal point optional).
// Writes what it read to *out (when set): the primitives of this grammar
// have no X3 attribute, they fill the scratch of the alternative.
struct num_parser : x3::parser<num_parser> {
  using attribute_type = x3::unused_type;
  It base;               // start of the text
  bool sign = false;     // accept a leading '-'
  bool p_point = false;  // accept 'p' as the decimal point (recipe-name sizes)
  Num* out = nullptr;    // receives the number
  bool grouped = false;  // accept digit groups: "16 384", "16,384" (then no decimal part)
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    Num n;
    It p = first;
    if (sign && p != last && *p == '-') {
      n.neg = true;
      ++p;
    }
    if (p == last || !is_digit(*p)) return false;
    constexpr std::uint64_t kMax = ~std::uint64_t{0};
    double value = 0;
    for (; p != last && is_digit(*p); ++p) {
      const auto d = static_cast<std::uint64_t>(*p - '0');
      if (n.whole > (kMax - d) / 10) {
        n.overflow = true;
        n.whole = kMax;
      } else if (!n.overflow) {
        n.whole = n.whole * 10 + d;
      }
      value = value * 10 + static_cast<double>(d);
    }
    // Thousands groups: a lead of 1-3 digits, then ' ' or ',' and exactly
    // three digits, as often as written ("16 384", "1,048,576").
    const bool short_lead = p - first - (n.neg ? 1 : 0) <= 3;
    bool had_groups = false;
    while (grouped && short_lead && !n.overflow && last - p >= 4 && (*p == ' ' || *p == ',') && is_digit(p[1]) && is_digit(p[2]) &&
           is_digit(p[3]) && (last - p == 4 || !is_digit(p[4]))) {
      for (int k = 1; k <= 3; ++k) {
        const auto d = static_cast<std::uint64_t>(p[k] - '0');
        if (n.whole > (kMax - d) / 10) {
          n.overflow = true;
          n.whole = kMax;
        } else if (!n.overflow) {
          n.whole = n.whole * 10 + d;
        }
        value = value * 10 + static_cast<double>(d);
      }
      p += 4;
      had_groups = true;
    }
    if (!had_groups && p + 1 < last && (*p == '.' || (p_point && *p == 'p')) && is_digit(p[1])) {
      ++p;
      double scale = 0.1;
      for (; p != last && is_digit(*p); ++p) {
        if (*p != '0') n.frac = true;
        value += scale * (*p - '0');
        scale /= 10;
      }
    }
    n.value = n.neg ? -value : value;
    n.b = static_cast<std::size_t>(first - base);
    n.e = static_cast<std::size_t>(p - base);
    first = p;
    if (out) *out = n;
    return true;
  }
};

// A lexicon spelling (the longest of the words with a meaning of some
// kinds), with extent.
struct Tok {
  std::uint32_t id = kNoWord;  // word id
  std::size_t b = 0, e = 0;    // extent in the text
};
struct tok_parser : x3::parser<tok_parser> {
  using attribute_type = x3::unused_type;
  It base;                             // start of the text
  const Lexicon::Impl* lex = nullptr;  // the spellings
  std::uint32_t kinds = kAnyKind;      // of words with a meaning of these kinds (kind_bit)
  Tok* out = nullptr;                  // receives the token
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    It it = first;
    std::uint32_t id = kNoWord;
    if (!lex->longest(it, last, kinds, id)) return false;
    // The longest spelling that ends a word, when the longest ends inside
    // one (before a letter or digit): "a100" in "a100 40 gbs", where
    // "a100 40 gb" would end inside "gbs" and leave the GPU unread. Else the
    // longest ("gpu_type" before ':', a unit glued to more).
    const auto inside_word = [&](It p) {
      return p != last && std::isalnum(static_cast<unsigned char>(*p)) != 0 && !at_boundary(base, p, last);
    };
    for (It limit = it; inside_word(it) && limit - first > 1;) {
      --limit;
      It shorter = first;
      std::uint32_t shorter_id = kNoWord;
      if (!lex->longest(shorter, limit, kinds, shorter_id)) break;
      if (at_boundary(base, shorter, last)) {
        it = shorter;
        id = shorter_id;
        break;
      }
      limit = shorter;
    }
    if (out) *out = Tok{id, static_cast<std::size_t>(first - base), static_cast<std::size_t>(it - base)};
    first = it;
    return true;
  }
};

// A look-ahead for a unit word that is only a unit: a word of `kind` that is
// not also a counter (a stopword): "4 gpus" after a system is a GPU count,
// "2台" a count of systems (台 counts machines in Japanese and Chinese).
struct unit_only_parser : x3::parser<unit_only_parser> {
  using attribute_type = x3::unused_type;
  const Lexicon::Impl* lex = nullptr;
  WordKind kind = WordKind::GpuUnit;
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    It it = first;
    std::uint32_t id = kNoWord;
    if (!lex->longest(it, last, kind_bit(kind), id)) return false;
    if (lex->words[id].meaning(WordKind::Stopword)) return false;
    first = it;
    return true;
  }
};

// A number written as a lexicon word of kind number ("two", "deux", "两"),
// read as a Num.
struct numword_parser : x3::parser<numword_parser> {
  using attribute_type = x3::unused_type;
  It base;                             // start of the text
  const Lexicon::Impl* lex = nullptr;  // its number words
  Num* out = nullptr;                  // receives the number
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx&, Attr&) const {
    It it = first;
    std::uint32_t id = kNoWord;
    if (!lex->longest(it, last, kind_bit(WordKind::Number), id)) return false;
    const Meaning* m = lex->words[id].meaning(WordKind::Number);
    if (!m || !at_boundary(base, it, last)) return false;
    if (m->number == 1 && before_plural(it, last, ctx)) return false;
    Num n;
    n.value = m->number;
    n.whole = static_cast<std::uint64_t>(m->number);
    n.frac = static_cast<double>(n.whole) != m->number;
    n.b = static_cast<std::size_t>(first - base);
    n.e = static_cast<std::size_t>(it - base);
    if (out) *out = n;
    first = it;
    return true;
  }
  // Whether a plural word follows, after a space and a memory size ("my
  // gpus", "my 24GB cards"): "one" and "my" then count nothing.
  template <typename Ctx>
  bool before_plural(It it, It const& last, Ctx const& ctx) const {
    std::uint32_t id = kNoWord;
    if (it != last && *it == ' ') ++it;
    const auto plural_at = [&](It p) { return lex->longest(p, last, kind_bit(WordKind::Plural), id) && at_boundary(base, p, last); };
    // The plural word itself may start with digits ("my 3090s").
    if (plural_at(it)) return true;
    It p = it;
    if (!num_parser{{}, base, false, false, nullptr}.parse(p, last, ctx, x3::unused, x3::unused)) return false;
    if (p != last && *p == ' ') ++p;
    if (!lex->longest(p, last, kind_bit(WordKind::MemoryUnit), id)) return false;
    if (p != last && *p == ' ') ++p;
    return plural_at(p);
  }
};

// The model number after a hardware family word: digits, or a letter and
// digits, then letters and digits ("3090", "a5000", "300x").
struct model_number_parser : x3::parser<model_number_parser> {
  using attribute_type = x3::unused_type;
  // Glued to the family word ("rtx3090"): only after a letter, so a family
  // word that ends in a digit never eats the next digits ("a10" + "0" is the
  // known A100, not an unknown GPU).
  bool glued = false;
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    if (glued && is_digit(*(first - 1))) return false;
    It p = first;
    if (p != last && *p >= 'a' && *p <= 'z') ++p;
    if (p == last || !is_digit(*p)) return false;
    while (p != last && (is_digit(*p) || (*p >= 'a' && *p <= 'z'))) ++p;
    first = p;
    return true;
  }
};

// The value of a key:value filter: any run of non-separator, non-CJK text.
struct value_parser : x3::parser<value_parser> {
  using attribute_type = x3::unused_type;
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    while (first != last && *first != '"' && sep_len(first, last) == 0 && !cjk_at(first, last)) {
      int len = 0;
      cp_at(first, last, len);
      first += len;
    }
    return true;
  }
};

// One unknown word: a CJK code point, or a run of text up to a separator,
// a quote or CJK text. A hyphenated run that is not close to any lexicon
// word is cut at its first joiner so the rest is read again ("<typo>-<size>").
//
// Linear in the text: a run is read only as far as its first joiner and
// kMaxSuggestLength code points (a longer run can be close to no lexicon
// word, so it is cut at that joiner without reading on). Reading every run
// to its end and cutting it at its first joiner read a long hyphenated
// run ("x-x-x-...") once per piece: 20 KB took 4 s, 200 KB 90 s.
struct fallback_parser : x3::parser<fallback_parser> {
  using attribute_type = x3::unused_type;
  It base;                             // start of the text
  const Lexicon::Impl* lex = nullptr;  // for suggestions
  Piece* out = nullptr;                // receives the Free piece
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    if (first == last || sep_len(first, last) > 0) return false;
    Piece p;
    p.kind = PieceKind::Free;
    if (cjk_at(first, last)) {
      int len = 0;
      cp_at(first, last, len);
      p.b = static_cast<std::size_t>(first - base);
      p.e = p.b + static_cast<std::size_t>(len);
      first += len;
      *out = p;
      return true;
    }
    const auto in_run = [&](It at) { return at != last && *at != '"' && sep_len(at, last) == 0 && !cjk_at(at, last); };
    // The run's end (or where reading stopped), its first joiner that is
    // neither its first nor its last byte, and its length in code points.
    It e = first;
    It joiner = nullptr;
    std::size_t cps = 0, joiner_cps = 0;
    bool whole = true;  // e is the run's end
    while (in_run(e)) {
      if (!joiner && e != first && is_joiner(*e) && e + 1 != last && in_run(e + 1)) {
        joiner = e;
        joiner_cps = cps;
      }
      int len = 0;
      cp_at(e, last, len);
      e += len;
      ++cps;
      if (joiner && cps > kMaxSuggestLength && in_run(e)) {
        whole = false;
        break;
      }
    }
    if (e == first) return false;
    const auto suggest = [&](It from, It to, std::size_t n) {
      return n > kMaxSuggestLength ? kNoWord : lex->suggest(to_u32(std::string_view(from, static_cast<std::size_t>(to - from))), -1);
    };
    std::uint32_t hint = whole ? suggest(first, e, cps) : kNoWord;
    if (hint == kNoWord && joiner) {
      e = joiner;
      hint = suggest(first, e, joiner_cps);
    }
    p.b = static_cast<std::size_t>(first - base);
    p.e = static_cast<std::size_t>(e - base);
    p.word = hint;
    first = e;
    *out = p;
    return true;
  }
};

// --- the scratch the term alternatives fill --------------------------------

struct Scratch {
  Num n1, n2;             // numbers
  Tok t1, t2, t3;         // lexicon tokens
  bool active = false;    // a size's "-a" part was read
  std::size_t colon = 0;  // end of a filter's ':'
  Piece out[2];           // the pieces of the alternative (set whole by the piece makers)
  int count = 0;          // how many of out[] are set

  // Cheap reset between alternatives: only what a piece maker may read
  // without the alternative having written it.
  void reset() {
    t1 = t2 = t3 = Tok{};
    active = false;
    count = 0;
  }
};

// Tries alternatives at one place and keeps the one that reads furthest.
template <typename Tuple>
struct longest_parser : x3::parser<longest_parser<Tuple>> {
  using attribute_type = x3::unused_type;
  Tuple alts;        // the alternatives (unused-attribute parsers with actions)
  Scratch* scratch;  // what the alternatives write
  Scratch* winner;   // receives the winner's scratch
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx& rctx, Attr&) const {
    It best = first;
    std::apply([&](auto const&... alt) { (try_one(alt, first, last, ctx, rctx, best), ...); }, alts);
    if (best == first) return false;
    first = best;
    return true;
  }
  template <typename P, typename Ctx, typename RCtx>
  void try_one(P const& alt, It first, It const& last, Ctx const& ctx, RCtx& rctx, It& best) const {
    scratch->reset();
    It it = first;
    if (alt.parse(it, last, ctx, rctx, x3::unused) && it > best && scratch->count > 0) {
      best = it;
      winner->count = scratch->count;
      for (int i = 0; i < scratch->count; ++i) winner->out[i] = scratch->out[i];
    }
  }
};
// A parser used through a pointer. X3 holds the subjects of what it
// composes by value, so the term grammar (some KB of parsers) composed into
// scan()'s query directly would be copied at each composition, every scan.
// (std::addressof: X3's unary & is its and-predicate.)
template <typename P>
struct ref_parser : x3::parser<ref_parser<P>> {
  using attribute_type = x3::unused_type;
  const P* subject;
  template <typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx& rctx, Attr& attr) const {
    return subject->parse(first, last, ctx, rctx, attr);
  }
};
// The alternatives are held by value, as X3 holds its subjects: the
// grammar is assembled by term_alternatives() and outlives it in scan().
template <typename... P>
longest_parser<std::tuple<P...>> longest(Scratch* s, Scratch* w, P const&... p) {
  return {{}, std::tuple<P...>(p...), s, w};
}

double magnitude(const Lexicon::Impl& lex, std::uint32_t id, WordKind kind) {
  const Meaning* m = id == kNoWord ? nullptr : lex.words[id].meaning(kind);
  return m ? m->number : 0;
}

// An extent [b, e) of the text.
using Extent = std::pair<std::size_t, std::size_t>;

// Extent of the match of an action's subject wrapped in x3::raw[] (the
// attribute of raw[] is the matched range; _where of Boost 1.74 is not).
template <typename Ctx>
Extent where(Ctx& ctx, It base) {
  auto const& r = x3::_attr(ctx);
  return {static_cast<std::size_t>(r.begin() - base), static_cast<std::size_t>(r.end() - base)};
}

// Trims trailing spaces off an extent of the text.
std::size_t trim_end(It base, std::size_t b, std::size_t e) {
  while (e > b && base[e - 1] == ' ') --e;
  return e;
}

// --- piece makers ------------------------------------------------------------
// Run when a whole alternative matched (`at` is its extent): they turn what
// the alternative wrote to the scratch into the alternative's pieces.

// "<n> <unit>", "<unit> <n>": one count piece; the unit, particle and
// open-ended words it read are kept for the language guess.
void make_count(Scratch& s, PieceKind kind, Extent at) {
  Piece& p = s.out[0] = Piece{};
  p.kind = kind;
  p.b = at.first;
  p.e = at.second;
  p.num = s.n1;
  p.also = {s.t1.id, s.t2.id, s.t3.id};
  s.count = 1;
}

// "<n> x <hw>", "<n> <hw>": a count piece before the hardware piece; with
// kind Nodes, "<n> <hw> <node unit>" ("two H100 nodes", "a H100 node"),
// whose node unit (t3) belongs to the count.
void make_count_then_hw(Scratch& s, It base, Extent at, PieceKind kind) {
  const auto b = at.first;
  Piece& c = s.out[0] = Piece{};
  c.kind = kind;
  c.b = b;
  c.e = trim_end(base, b, s.t1.b);
  c.num = s.n1;
  if (kind == PieceKind::Nodes) c.also = {s.t3.id, kNoWord, kNoWord};
  Piece& h = s.out[1] = Piece{};
  h.kind = PieceKind::Hardware;
  h.b = s.t1.b;
  h.e = s.t1.e;
  h.word = s.t1.id;
  s.count = 2;
}

// "<hw> x <n>": the hardware piece, then the count piece.
void make_hw_then_count(Scratch& s, It base, Extent at) {
  const auto [b, e] = at;
  Piece& h = s.out[0] = Piece{};
  h.kind = PieceKind::Hardware;
  h.b = b;
  h.e = s.t1.e;
  h.word = s.t1.id;
  Piece& c = s.out[1] = Piece{};
  c.kind = PieceKind::Gpus;
  c.b = s.t1.e;
  while (c.b < e && base[c.b] == ' ') ++c.b;
  c.e = e;
  c.num = s.n1;
  s.count = 2;
}

// "<n><k> [<seq unit>]", "<seq unit> <n>[<k>]", "<n> <seq unit>".
void make_seq(Scratch& s, const Lexicon::Impl& lex, Extent at) {
  Piece& p = s.out[0] = Piece{};
  p.kind = PieceKind::Seq;
  p.b = at.first;
  p.e = at.second;
  p.num = s.n1;
  p.mult = s.t2.id == kNoWord ? 1 : magnitude(lex, s.t2.id, WordKind::SeqMagnitude);
  p.also = {s.t1.id, s.t3.id, kNoWord};
  s.count = 1;
}

// "<n><m>[-a<n><m>]": a model size. False (the alternative does not match)
// for a space between number and magnitude before a magnitude word of one
// code point: only longer magnitude words may stand apart.
bool make_size(Scratch& s, const Lexicon::Impl& lex, Extent at) {
  if (s.n1.e != s.t1.b && cp_count(lex.words[s.t1.id].word) < 2) return false;
  Piece& p = s.out[0] = Piece{};
  p.kind = PieceKind::Size;
  p.b = at.first;
  p.e = at.second;
  p.num = s.n1;
  p.mag = s.t1.id;
  p.mult = magnitude(lex, s.t1.id, WordKind::ParamMagnitude);
  if (s.active) {
    p.active = s.n2;
    p.active_mag = s.t2.id;
    p.active_mult = magnitude(lex, s.t2.id, WordKind::ParamMagnitude);
  }
  p.also = {s.t1.id, kNoWord, kNoWord};
  s.count = 1;
  return true;
}

// "<n><count magnitude> [particle] <token unit>": a token budget ("1T tokens",
// "50 milliards de tokens", "1万亿个token"); "<n> [particle] <epoch unit>".
void make_budget(Scratch& s, const Lexicon::Impl& lex, Extent at) {
  Piece& p = s.out[0] = Piece{};
  p.kind = PieceKind::Budget;
  p.b = at.first;
  p.e = at.second;
  p.num = s.n1;
  p.mult = magnitude(lex, s.t2.id, WordKind::CountMagnitude);
  p.also = {s.t1.id, s.t2.id, s.t3.id};
  s.count = 1;
}
void make_epochs(Scratch& s, Extent at) {
  Piece& p = s.out[0] = Piece{};
  p.kind = PieceKind::Epochs;
  p.b = at.first;
  p.e = at.second;
  p.num = s.n1;
  p.also = {s.t1.id, s.t3.id, kNoWord};
  s.count = 1;
}

// "key:value": a Filter piece (known key) or a BadKey piece.
void make_filter(Scratch& s, PieceKind kind, Extent at) {
  Piece& p = s.out[0] = Piece{};
  p.kind = kind;
  p.b = at.first;
  p.e = at.second;
  p.word = kind == PieceKind::Filter ? s.t1.id : kNoWord;
  p.vb = s.colon;
  p.ve = at.second;
  s.count = 1;
}

// "<size key> <n>", "<size key>=<n>", "<size key><n>" ("TP 2", "pp=4", "ep8"): the
// same Filter piece as "tp:2", for the parallelism sizes only (a number is
// all their value can be).
bool make_spaced_filter(Scratch& s, const Lexicon::Impl& lex, Extent at) {
  const Meaning* m = lex.words[s.t1.id].meaning(WordKind::Filter);
  if (m == nullptr || std::find(field::kParallel.begin(), field::kParallel.end(), m->value) == field::kParallel.end()) return false;
  make_filter(s, PieceKind::Filter, at);
  s.out[0].vb = s.n1.b;
  return true;
}

// A lexicon word: the extent of its token (without the boundary).
void make_word(Scratch& s) {
  Piece& p = s.out[0] = Piece{};
  p.kind = PieceKind::Word;
  p.b = s.t1.b;
  p.e = s.t1.e;
  p.word = s.t1.id;
  s.count = 1;
}

// "[<n>] <system word>": the systems piece (1 system when no count).
void make_system(Scratch& s, Extent at, bool counted) {
  Piece& p = s.out[0] = Piece{};
  p.kind = PieceKind::System;
  p.b = at.first;
  p.e = at.second;
  p.word = s.t1.id;
  if (counted) {
    p.num = s.n1;
  } else {
    p.num.value = 1;
    p.num.whole = 1;
    p.num.b = p.num.e = at.first;
  }
  p.also = {s.t1.id, s.t3.id, kNoWord};
  s.count = 1;
}

// "<n> <memory unit>": stated GPU memory.
void make_memory(Scratch& s, const Lexicon::Impl& lex, Extent at) {
  Piece& p = s.out[0] = Piece{};
  p.kind = PieceKind::Memory;
  p.b = at.first;
  p.e = at.second;
  p.num = s.n1;
  p.mult = magnitude(lex, s.t1.id, WordKind::MemoryUnit);
  p.also = {s.t1.id, kNoWord, kNoWord};
  s.count = 1;
}

// "two 8-gpu nodes", "2 nodes of 8 gpus": nodes and GPUs per node.
void make_nodes_of(Scratch& s, Extent at) {
  Piece& p = s.out[0] = Piece{};
  p.kind = PieceKind::NodesOf;
  p.b = at.first;
  p.e = at.second;
  p.num = s.n1;
  p.second = s.n2;
  p.has_second = true;
  p.also = {s.t1.id, s.t3.id, kNoWord};
  s.count = 1;
}

// "<model> <n> <m>" with a one-letter magnitude apart ("qwen3 8 b"): the
// model word, then the size. False when the magnitude is not apart (the
// other alternatives read those).
bool make_model_spaced_size(Scratch& s, const Lexicon::Impl& lex, Extent at) {
  if (s.n1.e == s.t1.b) return false;
  Piece& w = s.out[0] = Piece{};
  w.kind = PieceKind::Word;
  w.b = s.t3.b;
  w.e = s.t3.e;
  w.word = s.t3.id;
  Piece& p = s.out[1] = Piece{};
  p.kind = PieceKind::Size;
  p.b = s.n1.b;
  p.e = at.second;
  p.num = s.n1;
  p.mag = s.t1.id;
  p.mult = magnitude(lex, s.t1.id, WordKind::ParamMagnitude);
  p.also = {s.t1.id, kNoWord, kNoWord};
  s.count = 2;
  return true;
}

// "<family> [<model number>]": a GPU kbq has no data for; with a count
// before it ("4 rtx 3090"), the count piece first.
void make_family(Scratch& s, It base, Extent at, bool counted) {
  int i = 0;
  if (counted) {
    Piece& c = s.out[i++] = Piece{};
    c.kind = PieceKind::Gpus;
    c.b = at.first;
    c.e = trim_end(base, at.first, s.t1.b);
    c.num = s.n1;
  }
  Piece& f = s.out[i++] = Piece{};
  f.kind = PieceKind::Family;
  f.b = counted ? s.t1.b : at.first;
  f.e = at.second;
  f.word = s.t1.id;
  s.count = i;
}

// "<n>-<m> <unit>": a range of counts (the resolver rejects it).
void make_range(Scratch& s, Extent at) {
  Piece& p = s.out[0] = Piece{};
  p.kind = PieceKind::Range;
  p.b = at.first;
  p.e = at.second;
  p.num = s.n1;
  p.active = s.n2;
  p.also = {s.t1.id, kNoWord, kNoWord};
  s.count = 1;
}

// The term alternatives of the grammar (see the file header), as one
// `longest` parser: each alternative writes its numbers and tokens to *s
// and, when it matches whole, its pieces; the one that reads furthest is
// copied to *win. The actions capture only pointers and `base`, so the
// parser outlives this call.
auto term_alternatives(const Lexicon::Impl& lex, It base, Scratch* s, Scratch* win) {
  const Lexicon::Impl* const lx = &lex;
  // Token parsers over one kind's table, writing to a scratch slot (or
  // nowhere, for look-aheads).
  auto tok = [&](WordKind k, Tok* out) { return tok_parser{{}, base, &lex, kind_bit(k), out}; };
  auto num = [&](bool sign, bool p_point, Num* out) { return num_parser{{}, base, sign, p_point, out}; };
  auto grouped_num = [&](bool sign, Num* out) { return num_parser{{}, base, sign, false, out, true}; };
  auto numword = [&](Num* out) { return numword_parser{{}, base, &lex, out}; };
  auto const bound = bound_parser{{}, base};
  auto const gap = x3::lit(' ');
  // The times operators: U+00D7 MULTIPLICATION SIGN, 'x' and '*'.
  auto const times = x3::lit("\xC3\x97") | x3::lit('x') | x3::lit('*');

  // The actions: a piece maker over the match's extent.
  auto const count_piece = [s, base](PieceKind kind) { return [s, base, kind](auto& ctx) { make_count(*s, kind, where(ctx, base)); }; };
  auto const count_then_hw = [s, base](auto& ctx) { make_count_then_hw(*s, base, where(ctx, base), PieceKind::Gpus); };
  auto const hw_then_count = [s, base](auto& ctx) { make_hw_then_count(*s, base, where(ctx, base)); };
  auto const count_hw_nodes_piece = [s, base](auto& ctx) { make_count_then_hw(*s, base, where(ctx, base), PieceKind::Nodes); };
  auto const seq_piece = [s, lx, base](auto& ctx) { make_seq(*s, *lx, where(ctx, base)); };
  auto const size_piece = [s, lx, base](auto& ctx) {
    if (!make_size(*s, *lx, where(ctx, base))) x3::_pass(ctx) = false;
  };
  auto const filter_piece = [s, base](PieceKind kind) { return [s, base, kind](auto& ctx) { make_filter(*s, kind, where(ctx, base)); }; };
  auto const colon = [s, base](auto& ctx) { s->colon = where(ctx, base).second; };
  auto const spaced_filter_piece = [s, lx, base](auto& ctx) {
    if (!make_spaced_filter(*s, *lx, where(ctx, base))) x3::_pass(ctx) = false;
  };
  auto const word_piece = [s](auto&) { make_word(*s); };
  auto const set_active = [s](auto&) { s->active = true; };
  auto const range_piece = [s, base](auto& ctx) { make_range(*s, where(ctx, base)); };
  auto const system_piece = [s, base](bool counted) {
    return [s, base, counted](auto& ctx) { make_system(*s, where(ctx, base), counted); };
  };
  auto const memory_piece = [s, lx, base](auto& ctx) { make_memory(*s, *lx, where(ctx, base)); };
  auto const budget_piece = [s, lx, base](auto& ctx) { make_budget(*s, *lx, where(ctx, base)); };
  auto const epochs_piece = [s, base](auto& ctx) { make_epochs(*s, where(ctx, base)); };
  auto const nodes_of_piece = [s, base](auto& ctx) { make_nodes_of(*s, where(ctx, base)); };
  auto const model_spaced_size_piece = [s, lx, base](auto& ctx) {
    if (!make_model_spaced_size(*s, *lx, where(ctx, base))) x3::_pass(ctx) = false;
  };
  auto const family_piece = [s, base](bool counted) {
    return [s, base, counted](auto& ctx) { make_family(*s, base, where(ctx, base), counted); };
  };

  auto const key = tok(WordKind::Filter, &s->t1);
  auto const hardware = tok(WordKind::Hardware, &s->t1);
  auto const count = num(false, false, &s->n1);
  auto const signed_count = grouped_num(true, &s->n1) | numword(&s->n1);
  auto const word_count = grouped_num(false, &s->n1) | numword(&s->n1);
  auto const decimal = num(false, false, &s->n1);
  auto const stop3 = tok(WordKind::Stopword, &s->t3);
  auto const open_max = tok(WordKind::OpenMax, &s->t2);
  // Words allowed between a number and its unit: a particle or an
  // open-ended marker ("<n> <counter> <unit>", "<n>+ <unit>").
  // A whole word only: the stopword "a" must not eat the start of "a100".
  auto const particle = (open_max | stop3) >> bound;
  auto const gpu_unit = tok(WordKind::GpuUnit, &s->t1);
  auto const gpu_unit3 = tok(WordKind::GpuUnit, &s->t3);
  auto const node_unit = tok(WordKind::NodeUnit, &s->t1);
  auto const node_unit3 = tok(WordKind::NodeUnit, &s->t3);
  auto const seq_unit = tok(WordKind::SeqUnit, &s->t1);
  auto const seq_mag = tok(WordKind::SeqMagnitude, &s->t2);
  auto const param_mag = tok(WordKind::ParamMagnitude, &s->t1);
  auto const param_mag2 = tok(WordKind::ParamMagnitude, &s->t2);
  auto const size_count = num(false, true, &s->n1);
  auto const size_count2 = num(false, true, &s->n2);
  auto const count2 = num(false, false, &s->n2);
  // Between the two ends of a range: a range_sep word or '-'.
  auto const range_op = tok(WordKind::RangeSep, nullptr) | x3::lit('-');
  auto const any_unit = gpu_unit | node_unit;
  // Look-aheads (write nothing).
  auto const any_gpu_unit = tok(WordKind::GpuUnit, nullptr);
  auto const any_node_unit = tok(WordKind::NodeUnit, nullptr);
  auto const any_seq_unit = tok(WordKind::SeqUnit, nullptr);
  auto const word = tok_parser{{}, base, &lex, kAnyKind, &s->t1};
  auto const lower_word = +x3::char_('a', 'z');
  auto const value = value_parser{};
  // the active part of a MoE size: "30b-a3b", "30b_a3b", "30b a3b"
  auto const active_part = ((x3::lit('-') | x3::lit('_') | gap) >> x3::lit('a') >> size_count2 >> param_mag2)[set_active];

  // key:value (a known key, or an unknown one: an error later)
  auto const key_value = x3::raw[key >> x3::raw[x3::lit(':')][colon] >> value][filter_piece(PieceKind::Filter)];
  auto const bad_key_value = x3::raw[lower_word >> x3::raw[x3::lit(':')][colon] >> value][filter_piece(PieceKind::BadKey)];
  // <size key> [=] <n>: "TP 2", "pp=4", "ep8"
  auto const spaced_key_value = x3::raw[key >> -((-gap >> x3::lit('=') >> -gap) | gap) >> count >> bound][spaced_filter_piece];
  // <n> x <hw>, <hw> x <n>, <n> [particle] <hw> ("8 张 H100")
  auto const count_times_hw = x3::raw[count >> -gap >> times >> -gap >> hardware >> bound][count_then_hw];
  auto const hw_times_count = x3::raw[hardware >> -gap >> times >> -gap >> count >> bound][hw_then_count];
  auto const count_hw = x3::raw[count >> -gap >> -(particle >> -gap) >> hardware >> bound][count_then_hw];
  // ... a number word: "two H100", "une A100", "两张 H100" (not "a H100 node": the node unit counts those)
  auto const word_hw = x3::raw[numword(&s->n1) >> -gap >> -(particle >> -gap) >> hardware >> bound >>
                               !(-gap >> (any_node_unit | any_gpu_unit))][count_then_hw];
  // <n> [particle] <hw> <node unit>: "two H100 nodes", "a H100 node", "4 B200 nodes"
  auto const count_hw_nodes =
      x3::raw[word_count >> -gap >> -(particle >> -gap) >> hardware >> -gap >> node_unit3 >> bound][count_hw_nodes_piece];
  // <n> [particle] <gpu unit> [+], <gpu unit> <n> [counter] [+]
  auto const count_gpus =
      x3::raw[signed_count >> -gap >> -(particle >> -gap) >> gpu_unit >> -(-gap >> open_max) >> bound][count_piece(PieceKind::Gpus)];
  auto const gpus_count = x3::raw[gpu_unit >> -gap >> signed_count >> !(-gap >> (any_node_unit | any_seq_unit)) >>
                                  -(-gap >> (gpu_unit3 | stop3)) >> -(-gap >> open_max) >> bound][count_piece(PieceKind::Gpus)];
  // <n> [particle] <node unit> [+], <node unit> <n> [counter] [+]
  auto const count_nodes =
      x3::raw[signed_count >> -gap >> -(particle >> -gap) >> node_unit >> -(-gap >> open_max) >> bound][count_piece(PieceKind::Nodes)];
  auto const nodes_count = x3::raw[node_unit >> -gap >> signed_count >> !(-gap >> (any_gpu_unit | any_seq_unit)) >>
                                   -(-gap >> (node_unit3 | stop3)) >> -(-gap >> open_max) >> bound][count_piece(PieceKind::Nodes)];
  // <n>-<m> <unit>: a range of counts
  auto const count_range =
      x3::raw[count >> -gap >> range_op >> -gap >> count2 >> -gap >> -(particle >> -gap) >> any_unit >> bound][range_piece];
  // <n><k> [<seq unit>], <seq unit> <n>[<k>], <n> [particle] <seq unit>
  auto const seq_k = x3::raw[count >> seq_mag >> -(-gap >> seq_unit) >> bound][seq_piece];
  auto const seq_count = grouped_num(false, &s->n1);
  auto const unit_seq = x3::raw[seq_unit >> -gap >> seq_count >> -seq_mag >> bound][seq_piece];
  // <seq unit> <stopword> <n>[<k>]: "a sequence of 8192", "une séquence de 8192"; never a count of GPUs, nodes
  // or cards ("context on 8 gpus")
  auto const any_hardware = tok(WordKind::Hardware, nullptr);
  auto const unit_of_seq = x3::raw[seq_unit >> -gap >> stop3 >> bound >> -gap >> seq_count >> -seq_mag >> bound >>
                                   !(-gap >> (any_gpu_unit | any_node_unit | any_hardware))][seq_piece];
  auto const seq_unit_after = x3::raw[seq_count >> -gap >> -(particle >> -gap) >> seq_unit >> bound][seq_piece];
  // [<n>] [particle] <system>: "a dgx b200", "2 nvl72 racks"
  auto const system = tok(WordKind::System, &s->t1);
  auto const systems_counted = x3::raw[word_count >> -gap >> -(particle >> -gap) >> system >> bound][system_piece(true)];
  auto const systems_bare = x3::raw[system >> bound][system_piece(false)];
  // <system> [particle] <n> [counter]: "dgx b200 2台", "dgx h100 x2" (not "dgx h100 4 gpus": a GPU count)
  auto const systems_after =
      x3::raw[system >> -gap >> -((times | particle) >> -gap) >> word_count >>
              !(-gap >> (unit_only_parser{{}, &lex, WordKind::GpuUnit} | unit_only_parser{{}, &lex, WordKind::NodeUnit})) >>
              -(-gap >> stop3) >> bound][system_piece(true)];
  // <n> <memory unit>: "48 gb", "24 go"
  auto const memory = x3::raw[decimal >> -gap >> tok(WordKind::MemoryUnit, &s->t1) >> bound][memory_piece];
  // <n> [x | particle] before <m> <memory unit> <gpu unit or GPU>: the count
  // of "4 x 24GB GPUs", "4 张 24GB 显卡", "2 48GB cards", "8 80GB H100s"
  // (the memory that follows is a piece of its own).
  auto const count_memory_gpus = x3::raw[signed_count >> -gap >> -((times | particle) >> -gap) >>
                                         &(num(false, false, &s->n2) >> -gap >> tok(WordKind::MemoryUnit, nullptr) >> -gap >>
                                           (any_gpu_unit | tok(WordKind::Hardware, nullptr)))][count_piece(PieceKind::Gpus)];
  // <n> <m>-<gpu unit> <node unit>, <n> <node unit> <particle> <m> <gpu unit>
  auto const nodes_of_gpus =
      x3::raw[word_count >> -gap >> count2 >> (x3::lit('-') | gap) >> gpu_unit >> -gap >> node_unit3 >> bound][nodes_of_piece];
  auto const nodes_with_gpus =
      x3::raw[word_count >> -gap >> node_unit >> -gap >> stop3 >> -gap >> count2 >> -gap >> gpu_unit3 >> bound][nodes_of_piece];
  // <model> <n> <m>: "qwen3 8 b"
  auto const model_spaced_size =
      x3::raw[tok(WordKind::Model, &s->t3) >> gap >> size_count >> gap >> param_mag >> bound][model_spaced_size_piece];
  // [<n> [particle]] <hardware family> [<model number>]: "rtx 3090", "4 v100"
  auto const family_tail =
      tok(WordKind::HardwareFamily, &s->t1) >> -((gap >> model_number_parser{}) | model_number_parser{{}, true}) >> bound;
  auto const family = x3::raw[family_tail][family_piece(false)];
  auto const count_family = x3::raw[count >> -gap >> -(particle >> -gap) >> family_tail][family_piece(true)];
  // <n><m>[-a<n><m>]
  auto const model_size = x3::raw[size_count >> -gap >> param_mag >> -active_part >> bound][size_piece];
  // <n><count magnitude> [particle] <token unit>, <n> [particle] <epoch unit> (after the sequence
  // alternatives: "8192 tokens", with no magnitude, stays a sequence length)
  auto const budget = x3::raw[size_count >> -gap >> tok(WordKind::CountMagnitude, &s->t2) >> -x3::lit('-') >> -gap >> -(particle >> -gap) >>
                              tok(WordKind::TokenUnit, &s->t1) >> bound][budget_piece];
  auto const epochs = x3::raw[word_count >> -gap >> -(particle >> -gap) >> tok(WordKind::EpochUnit, &s->t1) >> bound][epochs_piece];
  // a lexicon word (longest spelling)
  auto const lexicon_word = x3::raw[word >> bound][word_piece];

  // Ties go to the first listed: a model size and a token budget come before
  // a sequence length, so a magnitude that is both ("m") is a sequence only
  // where a sequence word makes it read further ("1m context", not "500m").
  return longest(s, win, key_value, bad_key_value, spaced_key_value, count_times_hw, hw_times_count, count_hw, word_hw, count_hw_nodes,
                 count_gpus, gpus_count, count_nodes, nodes_count, count_range, model_size, budget, seq_k, unit_seq, unit_of_seq,
                 seq_unit_after, systems_counted, systems_bare, systems_after, memory, count_memory_gpus, epochs, nodes_of_gpus,
                 nodes_with_gpus, model_spaced_size, lexicon_word, family, count_family);
}

}  // namespace

std::vector<Piece> scan(const Lexicon::Impl& lex, std::string_view text) {
  const It base = text.data();
  const It last = base + text.size();
  Scratch s, win;
  Piece fallback_piece;
  std::vector<Piece> pieces;
  pieces.reserve(8);

  auto const alternatives = term_alternatives(lex, base, &s, &win);
  auto const quoted = x3::raw[x3::lit('"') >> *(x3::char_ - '"') >> (x3::lit('"') | x3::eoi)][([&](auto& ctx) {
    Piece p;
    p.kind = PieceKind::Quoted;
    std::tie(p.b, p.e) = where(ctx, base);
    p.vb = p.b + 1;
    p.ve = (p.e - p.b >= 2 && base[p.e - 1] == '"') ? p.e - 1 : p.e;
    pieces.push_back(p);
  })];
  auto const fallback = fallback_parser{{}, base, &lex, &fallback_piece};

  auto const term = ref_parser<std::remove_const_t<decltype(alternatives)>>{{}, std::addressof(alternatives)}[([&](auto&) {
                      for (int i = 0; i < win.count; ++i) pieces.push_back(win.out[i]);
                    })] |
                    quoted | fallback[([&](auto&) { pieces.push_back(fallback_piece); })];
  auto const sep = sep_parser{};
  auto const joiner = joiner_parser{{}, base};
  auto const query = *sep >> *(term >> *(sep | joiner)) >> x3::eoi;

  It first = base;
  const bool ok = x3::parse(first, last, query);
  (void)ok;  // every code point is a separator or starts a term: the parse always succeeds
  return pieces;
}

// --- filter values ----------------------------------------------------------

bool parse_number_value(std::string_view v, Num& out) {
  const It base = v.data();
  It first = base;
  return x3::parse(first, base + v.size(), num_parser{{}, base, true, false, &out} >> x3::eoi);
}

bool parse_seq_value(const Lexicon::Impl& lex, std::string_view v, Num& out, double& mult) {
  const It base = v.data();
  It first = base;
  Tok mag;
  auto const number = num_parser{{}, base, true, false, &out};
  auto const seq_mag = tok_parser{{}, base, &lex, kind_bit(WordKind::SeqMagnitude), &mag};
  const bool ok = x3::parse(first, base + v.size(), number >> -seq_mag >> x3::eoi);
  mult = mag.id == kNoWord ? 1 : magnitude(lex, mag.id, WordKind::SeqMagnitude);
  return ok;
}

bool parse_budget_value(const Lexicon::Impl& lex, std::string_view v, Num& out, double& mult) {
  const It base = v.data();
  It first = base;
  Tok mag;
  auto const number = num_parser{{}, base, false, true, &out};
  auto const count_mag = tok_parser{{}, base, &lex, kind_bit(WordKind::CountMagnitude), &mag};
  const bool ok = x3::parse(first, base + v.size(), number >> -count_mag >> x3::eoi);
  mult = mag.id == kNoWord ? 1 : magnitude(lex, mag.id, WordKind::CountMagnitude);
  return ok;
}

bool parse_size_value(const Lexicon::Impl& lex, std::string_view v, Piece& out) {
  const It base = v.data();
  It first = base;
  Num n1, n2;
  Tok t1, t2;
  bool active = false;
  const std::uint32_t mag = kind_bit(WordKind::ParamMagnitude);
  auto const grammar = num_parser{{}, base, false, true, &n1} >> tok_parser{{}, base, &lex, mag, &t1} >>
                       -(((x3::lit('-') | x3::lit('_')) >> x3::lit('a') >> num_parser{{}, base, false, true, &n2} >>
                          tok_parser{{}, base, &lex, mag, &t2})[([&](auto&) { active = true; })]) >>
                       x3::eoi;
  if (!x3::parse(first, base + v.size(), grammar)) return false;
  out.kind = PieceKind::Size;
  out.num = n1;
  out.mag = t1.id;
  out.mult = magnitude(lex, t1.id, WordKind::ParamMagnitude);
  if (active) {
    out.active = n2;
    out.active_mag = t2.id;
    out.active_mult = magnitude(lex, t2.id, WordKind::ParamMagnitude);
  }
  return true;
}

std::string size_token(const Lexicon::Impl& lex, std::string_view text, const Piece& p) {
  auto part = [&](const Num& n, std::uint32_t mag) {
    std::string out;
    for (char c : text.substr(n.b, n.e - n.b)) out += (c == '.') ? 'p' : c;
    const Meaning* m = lex.words[mag].meaning(WordKind::ParamMagnitude);
    const auto it = lex.spelling.find({static_cast<int>(WordKind::ParamMagnitude), m ? m->value : std::string()});
    out += it != lex.spelling.end() ? it->second : lex.words[mag].word;
    return out;
  };
  std::string token = part(p.num, p.mag);
  if (p.active_mag != kNoWord) token += "_a" + part(p.active, p.active_mag);
  return token;
}

}  // namespace kbq::dsl
