// parse(): validates and folds the query, runs the grammar (scan) and
// resolves its pieces, in query order, into Terms and Constraints: picks
// the meaning of each lexicon word, checks numbers (positive, whole, at
// most kMaxCount, no overflow), normalizes filter values through the
// lexicon, reports the first contradiction (two modes, two GPU counts, ...)
// as a ParseError at the later term, collects unknown words as free text
// with typo warnings, and guesses the query's language.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "base/dsl/detail.hpp"
#include "base/kinds.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"

namespace kbq::dsl {
namespace {

std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// GB to a millionth: "16 GiB" and the printed "memory:17.179869" are one value.
double micro_round(double v) { return std::round(v * 1e6) / 1e6; }

// A number as the canonical form prints it: whole numbers without a decimal
// point ("1000000000000"), others with up to 12 significant digits.
std::string number_text(double v) {
  char buf[64];
  if (v == std::floor(v) && v < 1e18) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.12g", v);
  }
  return buf;
}

class Resolver {
 public:
  Resolver(const Lexicon::Impl& lex, const Normalized& norm, std::string_view original, Query& q)
      : lex_(lex), n_(norm), orig_(original), q_(q) {}

  std::optional<ParseError> error;  // the first error

  bool apply(const Piece& p) {
    switch (p.kind) {
      case PieceKind::Word:
        return word(p);
      case PieceKind::Gpus:
        return gpus(p);
      case PieceKind::Nodes:
        return nodes(p);
      case PieceKind::Seq:
        return seq(p);
      case PieceKind::Size:
        return size(p);
      case PieceKind::Hardware:
        return hardware(p);
      case PieceKind::Filter:
        return filter(p);
      case PieceKind::BadKey:
        return bad_key(p);
      case PieceKind::Free:
        return free_word(p);
      case PieceKind::Quoted:
        return quoted(p);
      case PieceKind::Range:
        return fail(n_.span(p.b, p.e), "ranges of counts are not supported: " + quote(text(p.b, p.e)),
                    "give one count (the number you have)");
      case PieceKind::System:
        return system(p);
      case PieceKind::Memory:
        return memory(p);
      case PieceKind::NodesOf:
        return nodes_of(p);
      case PieceKind::Family:
        return family(p);
      case PieceKind::Budget:
        return budget(p);
      case PieceKind::Epochs:
        return epochs(p);
    }
    return true;
  }

  // A bare family name ("nemotron 3 nano" without a size): the model it means.
  void flagship() {
    if (q_.model.empty() || !q_.size_token.empty()) return;
    const auto it = lex_.flagships.find(q_.model);
    if (it != lex_.flagships.end()) q_.flagship = it->second;
  }

  std::string guess_language() const;

 private:
  const Lexicon::Impl& lex_;
  const Normalized& n_;
  std::string_view orig_;
  Query& q_;
  std::vector<std::uint32_t> matched_;           // lexicon words seen (language evidence)
  std::size_t cjk_run_end_ = std::string::npos;  // end of the last free CJK run
  std::size_t cjk_run_begin_ = 0;                // its start
  std::string lang_override_;                    // a lang: filter
  bool mode_explicit_ = false;                   // the mode so far was written as its id

  std::string_view text(std::size_t b, std::size_t e) const { return std::string_view(n_.text).substr(b, e - b); }

  Term& add(TermKind kind, std::size_t b, std::size_t e, std::string value, std::string field_name = {}) {
    Term t;
    t.kind = kind;
    t.span = n_.span(b, e);
    t.text = std::string(n_.original(orig_, t.span));
    t.value = std::move(value);
    t.field = std::move(field_name);
    q_.terms.push_back(std::move(t));
    return q_.terms.back();
  }

  bool fail(Span span, std::string message, std::string hint = {}) {
    error = ParseError{std::move(message), std::move(hint), span};
    return false;
  }

  void note_words(const Piece& p) {
    if (p.word != kNoWord && p.kind != PieceKind::Free) matched_.push_back(p.word);
    for (auto id : p.also)
      if (id != kNoWord) matched_.push_back(id);
  }

  // --- numbers -------------------------------------------------------------

  // A count: a positive whole number no larger than kMaxCount.
  std::optional<int> count(const Num& num, std::string_view what, std::string_view written, Span span) {
    if (num.neg || (!num.frac && !num.overflow && num.whole == 0)) {
      fail(span, std::string(what) + " must be a positive whole number, got " + quote(written), "use a number of at least 1");
      return std::nullopt;
    }
    if (num.frac) {
      fail(span, std::string(what) + " must be a whole number, got " + quote(written));
      return std::nullopt;
    }
    if (num.overflow || num.whole > static_cast<std::uint64_t>(kMaxCount)) {
      fail(span, std::string(what) + " " + std::string(written) + " is out of range", "at most " + std::to_string(kMaxCount));
      return std::nullopt;
    }
    return static_cast<int>(num.whole);
  }

  std::optional<int> tokens(const Num& num, double mult, std::string_view written, Span span) {
    const double v = num.value * mult;
    if (num.neg || !(v > 0)) {
      fail(span, "sequence length must be positive, got " + quote(written));
      return std::nullopt;
    }
    if (num.overflow || v > static_cast<double>(std::numeric_limits<int>::max())) {
      fail(span, "sequence length " + std::string(written) + " is out of range",
           "at most " + std::to_string(std::numeric_limits<int>::max()) + " tokens");
      return std::nullopt;
    }
    return static_cast<int>(std::lround(v));
  }

  // --- slots (with conflict checks) ------------------------------------------

  bool set_text(std::string& slot, const std::string& v, std::string_view what, Span span) {
    if (slot.empty() || slot == v) {
      slot = v;
      return true;
    }
    return fail(span, "conflicting " + std::string(what) + ": " + quote(slot) + " and " + quote(v), "keep one of them");
  }
  bool set_real(double& slot, double v, std::string_view what, Span span) {
    if (slot == 0 || slot == v) {
      slot = v;
      return true;
    }
    return fail(span, "conflicting " + std::string(what) + ": " + number_text(slot) + " and " + number_text(v), "keep one of them");
  }
  bool set_int(std::optional<int>& slot, int v, std::string_view what, Span span) {
    if (!slot || *slot == v) {
      slot = v;
      return true;
    }
    return fail(span, "conflicting " + std::string(what) + ": " + std::to_string(*slot) + " and " + std::to_string(v), "keep one of them");
  }
  // Two modes conflict, except that a PEFT word refines a descriptive
  // fine-tuning word (one not spelled like the SFT mode id itself), as in
  // "<fine-tune> ... <lora>". `explicit_id`: the word is the mode id itself
  // or a mode: filter.
  bool set_mode(const std::string& v, Span span, bool explicit_id) {
    if (!q_.mode || *q_.mode == v) {
      q_.mode = v;
      mode_explicit_ = mode_explicit_ || explicit_id;
      return true;
    }
    const bool old_soft_sft = *q_.mode == kb::kSftMode && !mode_explicit_ && v == kb::kPeftMode;
    const bool new_soft_sft = v == kb::kSftMode && !explicit_id && *q_.mode == kb::kPeftMode;
    if (old_soft_sft) {
      q_.mode = v;
      mode_explicit_ = explicit_id;
      return true;
    }
    if (new_soft_sft) return true;
    return fail(span, "conflicting modes: " + quote(*q_.mode) + " and " + quote(v), "ask about one mode at a time");
  }
  bool set_model(const std::string& v, Span span) {
    // A longer prefix refines a shorter one.
    if (q_.model.empty() || kb::starts_with(v, q_.model)) {
      q_.model = v;
      return true;
    }
    if (kb::starts_with(q_.model, v)) return true;
    return fail(span, "conflicting models: " + quote(q_.model) + " and " + quote(v), "ask about one model at a time");
  }
  bool set_filter(const std::string& f, const std::string& v, Span span) {
    auto [it, fresh] = q_.filters.try_emplace(f, v);
    if (fresh || it->second == v) return true;
    return fail(span, "conflicting filters: " + quote(f + ":" + it->second) + " and " + quote(f + ":" + v), "keep one of them");
  }
  bool set_size(const Piece& p, std::string_view written, std::string_view value_text, Span span) {
    const double params = p.num.value * p.mult;
    if (!(params > 0)) return fail(span, "model size must be positive, got " + quote(written));
    double active = 0;
    if (p.active_mag != kNoWord) {
      active = p.active.value * p.active_mult;
      if (!(active > 0) || active > params)
        return fail(span, "active parameters of " + quote(written) + " must be positive and at most the total");
    }
    const std::string token = size_token(lex_, value_text, p);
    if (!q_.size_token.empty() && q_.size_token != token)
      return fail(span, "conflicting model sizes: " + quote(q_.size_token) + " and " + quote(token), "keep one of them");
    q_.size_token = token;
    q_.size_params = params;
    q_.size_active = active;
    return true;
  }

  // --- pieces ----------------------------------------------------------------

  bool word(const Piece& p) {
    note_words(p);
    const WordInfo& w = lex_.words[p.word];
    if (w.primary < 0 && w.meaning(WordKind::HardwareFamily)) return family(p);  // "v100" alone
    // A model or a training method without recipes: free text, as typed
    // (a method is also kept apart: the answer says no recipe trains it).
    if (w.primary < 0 && (w.meaning(WordKind::OtherModel) || w.meaning(WordKind::OtherMode))) {
      const std::string text_as_typed(text(p.b, p.e));
      add(TermKind::FreeText, p.b, p.e, text_as_typed);
      q_.free_text.push_back(text_as_typed);
      note_other_mode(w, text_as_typed);
      return true;
    }
    if (w.primary < 0) {
      add(TermKind::Stopword, p.b, p.e, w.word);
      return true;
    }
    const Meaning& m = w.meanings[static_cast<std::size_t>(w.primary)];
    switch (m.kind) {
      case WordKind::Mode:
        return set_mode(m.value, add(TermKind::Mode, p.b, p.e, m.value).span, w.word == m.value);
      case WordKind::Model:
        return set_model(m.value, add(TermKind::Model, p.b, p.e, m.value).span);
      case WordKind::Hardware:
        return set_text(q_.hardware, m.value, "hardware", add(TermKind::Hardware, p.b, p.e, m.value).span);
      case WordKind::Precision:
        return set_text(q_.precision, m.value, "precisions", add(TermKind::Precision, p.b, p.e, m.value).span);
      case WordKind::Intent:
        add(TermKind::Intent, p.b, p.e, m.value);
        q_.intents.insert(m.value);
        return true;
      case WordKind::Scale:
        return set_text(q_.scale, m.value, "scales", add(TermKind::Scale, p.b, p.e, m.value).span);
      case WordKind::RecipeKind:
        return set_filter(std::string(field::kKind), m.value, add(TermKind::Filter, p.b, p.e, m.value, std::string(field::kKind)).span);
      case WordKind::Dataset:
        return set_filter(std::string(field::kDataset), m.value,
                          add(TermKind::Filter, p.b, p.e, m.value, std::string(field::kDataset)).span);
      default:
        add(TermKind::Stopword, p.b, p.e, w.word);
        return true;
    }
  }

  bool gpus(const Piece& p) {
    note_words(p);
    const Span span = n_.span(p.b, p.e);
    const auto v = count(p.num, "GPU count", text(p.num.b, p.num.e), span);
    if (!v) return false;
    add(TermKind::Gpus, p.b, p.e, std::to_string(*v));
    return set_int(q_.gpus, *v, "GPU counts", span);
  }

  bool nodes(const Piece& p) {
    note_words(p);
    const Span span = n_.span(p.b, p.e);
    const auto v = count(p.num, "node count", text(p.num.b, p.num.e), span);
    if (!v) return false;
    add(TermKind::Nodes, p.b, p.e, std::to_string(*v));
    return set_int(q_.nodes, *v, "node counts", span);
  }

  bool seq(const Piece& p) {
    note_words(p);
    const Span span = n_.span(p.b, p.e);
    const auto v = tokens(p.num, p.mult, text(p.b, p.e), span);
    if (!v) return false;
    add(TermKind::Seq, p.b, p.e, std::to_string(*v));
    return set_int(q_.seq_len, *v, "sequence lengths", span);
  }

  // A token budget: "<n><magnitude> <token unit>", a whole number of tokens up to kMaxTokenBudget.
  std::optional<std::string> budget_tokens(const Num& num, double mult, std::string_view written, Span span) {
    const double v = std::round(num.value * mult);
    if (num.neg || num.overflow || !(v >= 1) || v > kMaxTokenBudget) {
      fail(span, "a token budget must be between 1 and 1e18 tokens, got " + quote(written), "e.g. 1T tokens, 50B tokens");
      return std::nullopt;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return std::string(buf);
  }

  bool budget(const Piece& p) {
    note_words(p);
    const Span span = n_.span(p.b, p.e);
    const auto v = budget_tokens(p.num, p.mult, text(p.b, p.e), span);
    if (!v) return false;
    return set_filter(std::string(field::kTokens), *v, add(TermKind::Budget, p.b, p.e, *v, std::string(field::kTokens)).span);
  }

  bool epochs(const Piece& p) {
    note_words(p);
    const Span span = n_.span(p.b, p.e);
    const auto v = count(p.num, "epoch count", text(p.num.b, p.num.e), span);
    if (!v) return false;
    return set_filter(std::string(field::kEpochs), std::to_string(*v),
                      add(TermKind::Epochs, p.b, p.e, std::to_string(*v), std::string(field::kEpochs)).span);
  }

  bool size(const Piece& p) {
    note_words(p);
    const Span span = n_.span(p.b, p.e);
    if (!set_size(p, text(p.b, p.e), n_.text, span)) return false;
    add(TermKind::Size, p.b, p.e, q_.size_token);
    return true;
  }

  // "[<n>] <system>": n systems of the system's GPU type, GPUs and nodes.
  // A bare system ("DGX H100") names the kind of node: how many comes from
  // a node or GPU count elsewhere in the question ("4 nœuds DGX H100": 4
  // systems) when it is a whole number of systems, else it is one system.
  bool system(const Piece& p) {
    note_words(p);
    const Span span = n_.span(p.b, p.e);
    const bool counted = p.num.e > p.num.b;
    const std::string key = lex_.words[p.word].meaning(WordKind::System)->value;
    add(TermKind::System, p.b, p.e, key);
    if (!set_text(q_.system, key, "systems", span)) return false;
    const auto n = counted ? count(p.num, "system count", text(p.num.b, p.num.e), span) : std::optional<int>(1);
    if (!n) return false;
    // Bare or one ("a DGX H100"): counted at the end, against the question's other counts.
    if (*n == 1) {
      pending_system_ = PendingSystem{span, counted, lex_.words[p.word].meaning(WordKind::Plural) != nullptr};
      return true;
    }
    return systems(*n, span);
  }

 public:
  // After every piece: the count of a bare system, or of one. A bare
  // system is as many as the question's node or GPU count makes (when
  // that is a whole number of systems); fewer GPUs than one single-node
  // system ("a DGX H100, 4 GPUs") are that many GPUs of it.
  bool finish_system() {
    if (!pending_system_) return true;
    const auto [span, counted, plural] = *pending_system_;
    int n = 1;
    if (const auto it = lex_.systems.find(q_.system); it != lex_.systems.end()) {
      const auto& sys = it->second;
      // A bare plural with no count ("on my DGX B200s"): several systems,
      // how many unknown; their GPU type, and the GPU count left to plan.
      if (!counted && plural && !q_.nodes && !q_.gpus) return set_text(q_.hardware, sys.gpu_key, "hardware", span);
      if (!counted && q_.nodes && !q_.gpus && sys.nodes > 0 && *q_.nodes % sys.nodes == 0) {
        n = *q_.nodes / sys.nodes;
      } else if (!counted && q_.gpus && !q_.nodes && sys.gpus > 0 && *q_.gpus % sys.gpus == 0) {
        n = *q_.gpus / sys.gpus;
      } else if (q_.gpus && *q_.gpus < sys.gpus && sys.nodes == 1 && (!q_.nodes || *q_.nodes == 1)) {
        return set_int(q_.systems, 1, "system counts", span) && set_text(q_.hardware, sys.gpu_key, "hardware", span) &&
               set_int(q_.nodes, 1, "node counts", span);
      } else if (sys.nodes > 1 && ((q_.nodes && *q_.nodes < sys.nodes && !q_.gpus) || (q_.gpus && *q_.gpus < sys.gpus && !q_.nodes))) {
        // Part of one multi-node system ("5 nodes nvl72", "8 GPUs of an
        // NVL72"): its GPU type and NVLink domain, the count asked.
        return set_int(q_.systems, 1, "system counts", span) && set_text(q_.hardware, sys.gpu_key, "hardware", span);
      } else if (!counted &&
                 ((q_.nodes && sys.nodes > 0 && *q_.nodes % sys.nodes != 0) || (q_.gpus && sys.gpus > 0 && *q_.gpus % sys.gpus != 0))) {
        // More than one system but not a whole number of them.
        const bool by_nodes = q_.nodes.has_value();
        const int asked = by_nodes ? *q_.nodes : *q_.gpus, per = by_nodes ? sys.nodes : sys.gpus;
        const auto spelled = lex_.spelling.find({static_cast<int>(WordKind::System), q_.system});
        const std::string unit = by_nodes ? " nodes" : " GPUs", word = spelled != lex_.spelling.end() ? spelled->second : q_.system;
        return fail(span,
                    std::to_string(asked) + unit + " is not a whole number of " + quote(word) + " systems (" + std::to_string(per) + unit +
                        " each)",
                    "ask for " + (asked >= per ? std::to_string(asked / per * per) + " or " : std::string()) +
                        std::to_string((asked / per + 1) * per) + unit +
                        ", or name the GPU type instead of the system: " + std::to_string(asked) + unit + " " + sys.gpu_key);
      }
    }
    return systems(std::max(n, 1), span);
  }

 private:
  struct PendingSystem {
    Span span;     // the system's words
    bool counted;  // "one DGX H100" (else bare: "DGX H100")
    bool plural;   // a plural system word ("DGX H100s", lexicon kind plural)
  };
  std::optional<PendingSystem> pending_system_;

  // n systems of the named system: its GPU type, GPUs and nodes.
  bool systems(int n, Span span) {
    if (!set_int(q_.systems, n, "system counts", span)) return false;
    const auto it = lex_.systems.find(q_.system);
    if (it == lex_.systems.end()) return true;  // a word without facts: the system is named, its GPUs unknown
    const auto gpus = static_cast<std::int64_t>(n) * it->second.gpus, nodes = static_cast<std::int64_t>(n) * it->second.nodes;
    if (gpus > kMaxCount)
      return fail(span, "GPU count " + std::to_string(gpus) + " is out of range", "at most " + std::to_string(kMaxCount));
    return set_text(q_.hardware, it->second.gpu_key, "hardware", span) && set_int(q_.gpus, static_cast<int>(gpus), "GPU counts", span) &&
           set_int(q_.nodes, static_cast<int>(nodes), "node counts", span);
  }

  // "<n> <memory unit>": the GPU memory the user has.
  bool memory(const Piece& p) {
    note_words(p);
    const Span span = n_.span(p.b, p.e);
    const double gb = micro_round(p.num.value * p.mult);
    if (p.num.neg || p.num.overflow || !(gb > 0) || gb > static_cast<double>(kMaxCount))
      return fail(span, "GPU memory must be a positive size, got " + quote(text(p.b, p.e)));
    add(TermKind::Memory, p.b, p.e, number_text(gb));
    return set_real(q_.memory_gb, gb, "GPU memory sizes", span);
  }

  // "two 8-gpu nodes": nodes, GPUs per node, and the GPUs they make.
  bool nodes_of(const Piece& p) {
    note_words(p);
    const Span span = n_.span(p.b, p.e);
    const auto nodes = count(p.num, "node count", text(p.num.b, p.num.e), span);
    if (!nodes) return false;
    const auto per = count(p.second, "GPU count", text(p.second.b, p.second.e), span);
    if (!per) return false;
    const auto gpus = static_cast<std::int64_t>(*nodes) * *per;
    if (gpus > kMaxCount)
      return fail(span, "GPU count " + std::to_string(gpus) + " is out of range", "at most " + std::to_string(kMaxCount));
    add(TermKind::Nodes, p.b, p.e, std::to_string(*nodes));
    return set_int(q_.nodes, *nodes, "node counts", span) && set_int(q_.gpus_per_node, *per, "GPUs per node", span) &&
           set_int(q_.gpus, static_cast<int>(gpus), "GPU counts", span);
  }

  // A GPU kbq has no data for: said, never a model name, never dropped.
  bool family(const Piece& p) {
    note_words(p);
    const std::string w(text(p.b, p.e));
    const Term& t = add(TermKind::UnknownGpu, p.b, p.e, w);
    if (!q_.unknown_hardware.empty() && q_.unknown_hardware != w)
      return fail(t.span, "conflicting hardware: " + quote(q_.unknown_hardware) + " and " + quote(w), "keep one of them");
    q_.unknown_hardware = w;
    q_.warnings.push_back(
        Warning{w,
                "",
                "GPU " + quote(t.text) + " is not in kbq's data (its memory and precisions are unknown); another GPU is assumed",
                t.span,
                {},
                WarningKind::UnknownGpu,
                t.text});
    return true;
  }

  bool hardware(const Piece& p) {
    note_words(p);
    const Meaning* m = lex_.words[p.word].meaning(WordKind::Hardware);
    const std::string v = m ? m->value : lex_.words[p.word].word;
    return set_text(q_.hardware, v, "hardware", add(TermKind::Hardware, p.b, p.e, v).span);
  }

  // A value of a lexicon-normalized field: a word of the kind, or one of
  // the kind's values as is.
  std::optional<std::string> normalize(WordKind kind, std::string_view field_name, std::string_view v, Span span) {
    const auto id = lex_.find(v);
    if (id != kNoWord) {
      if (const Meaning* m = lex_.words[id].meaning(kind)) {
        matched_.push_back(id);
        return m->value;
      }
    }
    if (lex_.values.count({static_cast<int>(kind), std::string(v)})) return std::string(v);
    const auto hint_id = lex_.suggest(to_u32(v), static_cast<int>(kind));
    std::string hint;
    if (hint_id != kNoWord) {
      hint = "did you mean " + quote(lex_.words[hint_id].word) + "?";
    } else {
      std::vector<std::string> known;
      for (const auto& [kv, present] : lex_.values)
        if (kv.first == static_cast<int>(kind) && present) known.push_back(kv.second);
      hint = known.empty() ? std::string() : "known values: " + kb::join(known, ", ");
    }
    fail(span, "unknown " + std::string(field_name) + " " + quote(v), hint);
    return std::nullopt;
  }

  // A key:value filter being resolved.
  struct KeyValue {
    const Piece& p;            // the Filter piece
    const std::string& key;    // the key word as written in the lexicon (for hints)
    const std::string& field;  // the field the key names
    const std::string& value;  // the value (folded), not empty
    Span vspan;                // where the value is
  };

  bool filter(const Piece& p) {
    note_words(p);
    const WordInfo& key = lex_.words[p.word];
    const std::string f = key.meaning(WordKind::Filter)->value;
    const std::string v = std::string(text(p.vb, p.ve));
    const Span whole = n_.span(p.b, p.e);
    const Span vspan = p.ve > p.vb ? n_.span(p.vb, p.ve) : whole;
    if (v.empty()) return fail(whole, "filter " + quote(f) + " has no value", "write " + key.word + ":<value>");
    const KeyValue kv{p, key.word, f, v, vspan};

    const bool parallel = std::find(field::kParallel.begin(), field::kParallel.end(), f) != field::kParallel.end();
    if (f == field::kGpus || f == field::kNodes || f == field::kEpochs || parallel) return count_filter(kv);
    if (f == field::kTokens) {  // tokens:<n>[<count magnitude>]
      Num num;
      double mult = 1;
      if (!parse_budget_value(lex_, kv.value, num, mult))
        return fail(kv.vspan, "filter " + quote(f) + " needs a number of tokens, got " + quote(kv.value), "write " + kv.key + ":1t");
      const auto t = budget_tokens(num, mult, kv.value, kv.vspan);
      return t && set_filter(f, *t, filter_term(kv, *t));
    }
    if (f == field::kSeq) return seq_filter(kv);
    if (f == field::kMemory) return real_filter(kv);
    if (f == field::kGpusPerNode) {
      Num num;
      if (!parse_number_value(v, num))
        return fail(kv.vspan, "filter " + quote(f) + " needs a number, got " + quote(v), "write " + kv.key + ":<n>");
      const auto c = count(num, "filter " + quote(f), v, kv.vspan);
      if (!c) return false;
      return set_int(q_.gpus_per_node, *c, "GPUs per node", filter_term(kv, std::to_string(*c)));
    }
    if (f == field::kSize) return size_filter(kv);
    if (f == field::kModel) return model_filter(kv);
    if (f == field::kLang) {
      // A language the lexicon has no word of is one the KB has no text in.
      std::set<std::string> known;
      for (const auto& w : lex_.words) known.insert(w.langs.begin(), w.langs.end());
      if (!known.count(v))
        return fail(kv.vspan, "unknown language " + quote(v),
                    "the knowledge base has " + kb::join(std::vector<std::string>(known.begin(), known.end()), ", "));
      lang_override_ = v;
      return set_filter(f, v, filter_term(kv, v));
    }
    return lexicon_filter(kv);
  }

  // The filter's term with its resolved value; its span.
  Span filter_term(const KeyValue& kv, const std::string& value) { return add(TermKind::Filter, kv.p.b, kv.p.e, value, kv.field).span; }

  // gpus:<n>, nodes:<n>, tp:<n>, ...: a count.
  bool count_filter(const KeyValue& kv) {
    const std::string& f = kv.field;
    const std::string& v = kv.value;
    Num num;
    if (!parse_number_value(v, num))
      return fail(kv.vspan, "filter " + quote(f) + " needs a number, got " + quote(v), "write " + kv.key + ":<n>");
    const std::string what = f == field::kGpus ? "GPU count" : f == field::kNodes ? "node count" : "filter " + quote(f);
    const auto c = count(num, what, v, kv.vspan);
    if (!c) return false;
    const std::string value = std::to_string(*c);
    if (f == field::kGpus) return set_int(q_.gpus, *c, "GPU counts", filter_term(kv, value));
    if (f == field::kNodes) return set_int(q_.nodes, *c, "node counts", filter_term(kv, value));
    return set_filter(f, value, filter_term(kv, value));
  }

  // memory:<gb>: a positive number.
  bool real_filter(const KeyValue& kv) {
    Num num;
    if (!parse_number_value(kv.value, num) || num.neg || num.overflow || !(num.value > 0))
      return fail(kv.vspan, "filter " + quote(kv.field) + " needs a positive number, got " + quote(kv.value), "write " + kv.key + ":<n>");
    const double v = micro_round(num.value);
    return set_real(q_.memory_gb, v, "GPU memory sizes", filter_term(kv, number_text(v)));
  }

  // seq:<n>[<k>]: a sequence length in tokens.
  bool seq_filter(const KeyValue& kv) {
    const std::string& v = kv.value;
    Num num;
    double mult = 1;
    if (!parse_seq_value(lex_, v, num, mult))
      return fail(kv.vspan, "filter " + quote(kv.field) + " needs a number, got " + quote(v), "write " + kv.key + ":<n>");
    const auto t = tokens(num, mult, v, kv.vspan);
    if (!t) return false;
    return set_int(q_.seq_len, *t, "sequence lengths", filter_term(kv, std::to_string(*t)));
  }

  // size:<n><m>[-a<n><m>]: a model size.
  bool size_filter(const KeyValue& kv) {
    const std::string& v = kv.value;
    Piece sp;
    if (!parse_size_value(lex_, v, sp)) return fail(kv.vspan, "filter " + quote(kv.field) + " needs a model size, got " + quote(v));
    if (!set_size(sp, v, v, kv.vspan)) return false;
    filter_term(kv, q_.size_token);
    return true;
  }

  // model:<name>: a model word's value, else the name as written (a prefix).
  bool model_filter(const KeyValue& kv) {
    std::string value = kv.value;
    const auto id = lex_.find(kv.value);
    if (id != kNoWord)
      if (const Meaning* m = lex_.words[id].meaning(WordKind::Model)) value = m->value;
    return set_model(value, filter_term(kv, value));
  }

  // The other fields: those whose values are lexicon words go through the
  // lexicon (normalize) into their slot; any other field is kept as written.
  bool lexicon_filter(const KeyValue& kv) {
    const std::string& f = kv.field;
    struct NormalizedField {
      std::string_view field;  // the filter field
      WordKind kind;           // the lexicon kind its values come from
    };
    static constexpr std::array<NormalizedField, 6> kNormalized{{{field::kMode, WordKind::Mode},
                                                                 {field::kKind, WordKind::RecipeKind},
                                                                 {field::kHardware, WordKind::Hardware},
                                                                 {field::kPrecision, WordKind::Precision},
                                                                 {field::kIntent, WordKind::Intent},
                                                                 {field::kScale, WordKind::Scale}}};
    for (const auto& nf : kNormalized) {
      if (f != nf.field) continue;
      const auto value = normalize(nf.kind, f, kv.value, kv.vspan);
      if (!value) return false;
      const Span span = filter_term(kv, *value);
      switch (nf.kind) {
        case WordKind::Mode:
          return set_mode(*value, span, true);
        case WordKind::Hardware:
          return set_text(q_.hardware, *value, "hardware", span);
        case WordKind::Precision:
          return set_text(q_.precision, *value, "precisions", span);
        case WordKind::Intent:
          q_.intents.insert(*value);
          return true;
        case WordKind::Scale:
          return set_text(q_.scale, *value, "scales", span);
        default:
          return set_filter(f, *value, span);
      }
    }
    return set_filter(f, kv.value, filter_term(kv, kv.value));
  }

  bool bad_key(const Piece& p) {
    const std::string_view k = text(p.b, p.vb - 1);
    const Span span = n_.span(p.b, p.vb - 1);
    const auto id = lex_.suggest(to_u32(k), static_cast<int>(WordKind::Filter));
    std::string hint;
    if (id != kNoWord) {
      hint = "did you mean " + quote(lex_.words[id].word) + "?";
    } else {
      std::vector<std::string> keys;
      for (const auto& [kv, word] : lex_.spelling)
        if (kv.first == static_cast<int>(WordKind::Filter) && !kv.second.empty()) keys.push_back(word);
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      if (!keys.empty()) hint = "known keys: " + kb::join(keys, ", ");
    }
    return fail(span, "unknown filter key " + quote(k), hint);
  }

  bool free_word(const Piece& p) {
    const std::string_view w = text(p.b, p.e);
    int len = 0;
    const char32_t first = decode_at(w, 0, len);
    if (is_cjk_cp(first) && static_cast<std::size_t>(len) == w.size()) {
      if (cjk_run_end_ == p.b && !q_.terms.empty() && q_.terms.back().kind == TermKind::FreeText) {
        // The run grows by this code point: appended, not copied again
        // (a copy of the whole run per code point made a long run of
        // unknown CJK text quadratic).
        Term& t = q_.terms.back();
        t.span = n_.span(cjk_run_begin_, p.e);
        t.text.append(n_.original(orig_, n_.span(p.b, p.e)));
        t.value.append(w);
        q_.free_text.back().append(w);
      } else {
        cjk_run_begin_ = p.b;
        add(TermKind::FreeText, p.b, p.e, std::string(w));
        q_.free_text.emplace_back(w);
      }
      cjk_run_end_ = p.e;
      return true;
    }
    bool has_alnum = false;
    for (char c : w)
      if (static_cast<unsigned char>(c) >= 0x80 || std::isalnum(static_cast<unsigned char>(c))) has_alnum = true;
    if (!has_alnum) {
      add(TermKind::Stopword, p.b, p.e, std::string(w));
      return true;
    }
    if (p.word != kNoWord) {
      const Term& t = add(TermKind::Unknown, p.b, p.e, std::string(w));
      const std::string& s = lex_.words[p.word].word;
      std::vector<std::string> candidates;
      for (auto id : lex_.suggest_all(to_u32(w))) candidates.push_back(lex_.words[id].word);
      if (candidates.size() > 1) {
        std::vector<std::string> quoted;
        for (const auto& c : candidates) quoted.push_back(quote(c));
        q_.warnings.push_back(Warning{std::string(w),
                                      s,
                                      "unknown word " + quote(w) + "; did you mean " + kb::join(quoted, " or ") + "?",
                                      t.span,
                                      candidates,
                                      WarningKind::Typo,
                                      {}});
      } else {
        q_.warnings.push_back(
            Warning{std::string(w), s, "unknown word " + quote(w) + "; did you mean " + quote(s) + "?", t.span, {}, WarningKind::Typo, {}});
      }
    } else {
      add(TermKind::FreeText, p.b, p.e, std::string(w));
    }
    q_.free_text.emplace_back(w);
    return true;
  }

  bool quoted(const Piece& p) {
    const std::string inner = kb::trim(text(p.vb, p.ve));
    if (inner.empty()) return true;
    add(TermKind::FreeText, p.b, p.e, inner);
    q_.free_text.push_back(inner);
    // A training method quoted is the same method: the canonical form,
    // which quotes free text when bare words would re-form a phrase, reads
    // back as what it was printed from.
    if (const auto id = lex_.find(inner); id != kNoWord) note_other_mode(lex_.words[id], inner);
    return true;
  }

  // A training method no recipe has, bare or quoted: the first is kept for
  // the answer to say so.
  void note_other_mode(const WordInfo& w, const std::string& text) {
    if (w.meaning(WordKind::OtherMode) && q_.other_mode.empty()) q_.other_mode = text;
  }
};

std::string Resolver::guess_language() const {
  if (!lang_override_.empty()) return lang_override_;
  bool kana = false, han = false;
  for (std::size_t i = 0; i < n_.text.size();) {
    int len = 0;
    const char32_t cp = decode_at(n_.text, i, len);
    kana = kana || kb::is_kana(cp);
    han = han || kb::is_han(cp);
    i += static_cast<std::size_t>(len);
  }
  // Kana is written in one language only (data/planner.tsv
  // script_languages): a question with any is in it, whatever Han words it
  // shares with another ("gpt oss 20b の性能").
  const std::string& base = lex_.base_language;
  if (const std::string* l = lex_.script_language(kScriptKana); kana && l) return *l;
  const bool cjk = han;
  const std::string* han_lang = lex_.script_language(kScriptHan);
  const std::string script = han && han_lang ? *han_lang : base;
  // Words listed under fewer languages, and longer words, weigh more; in a
  // CJK query only CJK words count, in others only non-CJK words.
  std::map<std::string, double> score;
  for (auto id : matched_) {
    const WordInfo& w = lex_.words[id];
    if (w.langs.empty() || w.cjk != cjk) continue;
    const double weight = static_cast<double>(w.length) / static_cast<double>(w.langs.size());
    for (const auto& l : w.langs) score[l] += weight;
  }
  if (score.empty()) return script;
  double best = 0;
  for (const auto& [l, s] : score) best = std::max(best, s);
  std::vector<std::string> top;
  for (const auto& [l, s] : score)
    if (s >= best - 1e-9) top.push_back(l);
  if (std::find(top.begin(), top.end(), script) != top.end()) return script;
  if (std::find(top.begin(), top.end(), base) != top.end()) return base;
  return top.front();
}

// The digits of a word, in order ("qwen3" -> "3"): a version, never a typo.
std::string digits_of(std::string_view w) {
  std::string d;
  for (char c : w)
    if (c >= '0' && c <= '9') d += c;
  return d;
}

// A word a typo can be: ASCII letters and digits, or Latin letters with
// diacritics (not symbols such as '×' before "h100").
bool wordlike(std::string_view w) {
  for (char32_t c : to_u32(w)) {
    const bool ascii_alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    const bool latin = c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7;
    if (!ascii_alnum && !latin) return false;
  }
  return true;
}

// Kinds a typo is corrected to: words that ask for something (not units,
// particles or keys).
bool correctable_kind(WordKind k) {
  return k == WordKind::Mode || k == WordKind::Model || k == WordKind::Hardware || k == WordKind::Precision || k == WordKind::Intent ||
         k == WordKind::Scale || k == WordKind::RecipeKind;
}

// Replaces each unknown word that exactly one lexicon word is closest to
// (same digits, at least 4 code points, not a word of recipe names) by that
// word in the normalized text, so the query reads as if typed right ("lamma
// 3.1" forms the phrase "llama 3.1"). The corrected bytes map to the typo's
// place in the original query. True when something was corrected.
bool correct_typos(const Lexicon::Impl& lex, Normalized& n, const std::vector<Piece>& pieces, std::vector<Correction>& out) {
  std::vector<std::pair<const Piece*, std::uint32_t>> fixes;
  for (const auto& p : pieces) {
    if (p.kind != PieceKind::Free || p.word == kNoWord) continue;
    const std::string_view w = std::string_view(n.text).substr(p.b, p.e - p.b);
    if (cp_count(w) < 4 || !wordlike(w)) continue;
    const auto candidates = lex.suggest_all(to_u32(w));
    if (candidates.size() != 1) continue;
    const WordInfo& c = lex.words[candidates.front()];
    // A unit is corrected right after a number ("40 gbpus": 40 GPUs), where
    // it can only be the count's unit; elsewhere it asks for nothing.
    const std::size_t before = p.b == 0 ? std::string::npos : n.text.find_last_not_of(' ', p.b - 1);
    const bool after_number = before != std::string::npos && std::isdigit(static_cast<unsigned char>(n.text[before])) != 0;
    const bool unit = after_number && (c.meaning(WordKind::GpuUnit) || c.meaning(WordKind::NodeUnit));
    if (!unit && (c.primary < 0 || !correctable_kind(c.meanings[static_cast<std::size_t>(c.primary)].kind))) continue;
    if (digits_of(w) != digits_of(c.word)) continue;
    if (lex.name_word(w)) continue;  // last: it may read the KB's recipe names
    fixes.emplace_back(&p, candidates.front());
  }
  if (fixes.empty()) return false;
  // One pass in text order (the pieces are): the text and its code-point
  // map are rebuilt once, not once per correction (a question of n typos
  // was O(n^2); fuzz_dsl's 64 KiB inputs timed out).
  std::string text;
  std::vector<std::uint32_t> cps;
  text.reserve(n.text.size());
  cps.reserve(n.cp_of.size());
  const auto at = [&](std::size_t i) { return n.cp_of.begin() + static_cast<std::ptrdiff_t>(i); };
  std::size_t done = 0;
  for (const auto& [piece, word_index] : fixes) {
    const Piece& p = *piece;
    const std::string& word = lex.words[word_index].word;
    out.push_back({n.text.substr(p.b, p.e - p.b), word, n.span(p.b, p.e)});
    text.append(n.text, done, p.b - done);
    cps.insert(cps.end(), at(done), at(p.b));
    text += word;
    cps.insert(cps.end(), word.size(), n.cp_of[p.b]);
    done = p.e;
  }
  text.append(n.text, done, std::string::npos);
  cps.insert(cps.end(), at(done), n.cp_of.end());
  n.text = std::move(text);
  n.cp_of = std::move(cps);
  return true;
}

}  // namespace

ParseError too_long(std::string_view what, std::size_t bytes) {
  return ParseError{std::string(what) + " is " + std::to_string(bytes) + " bytes long, over the limit of " +
                        std::to_string(kb::limits::kMaxQuestionBytes),
                    "shorten it: a question needs a mode, a model, the GPUs and a few words more", Span{0, 0}};
}

std::optional<ParseError> check_input(std::string_view text, std::string_view what) {
  using kb::limits::kMaxQuestionWords;
  const std::string name(what);
  if (text.size() > kb::limits::kMaxQuestionBytes) return too_long(what, text.size());
  if (const auto bad = kb::find_invalid_utf8(text)) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(text[*bad])));
    return ParseError{name + " is not valid UTF-8 (byte " + byte + ")", "re-type it: kbq reads UTF-8 text",
                      Span{kb::code_point_column(text, *bad) + 1, 1}};
  }
  std::size_t words = 0;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size();) {
    const bool space = is_space_cp(kb::next_code_point(text, i));
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  if (words > kMaxQuestionWords)
    return ParseError{name + " has " + std::to_string(words) + " words, over the limit of " + std::to_string(kMaxQuestionWords),
                      "shorten it: a question needs a mode, a model, the GPUs and a few words more", Span{0, 0}};
  return std::nullopt;
}

ParseResult parse(const Lexicon& lexicon, std::string_view text) {
  ParseResult r;
  Query& q = r.query;
  q.text = std::string(text);
  q.lexicon = lexicon;
  q.lang = lexicon.impl().base_language;
  if (const auto bad = kb::find_invalid_utf8(text)) {
    r.error = ParseError{"the query is not valid UTF-8", "re-type the query", Span{kb::code_point_column(text, *bad) + 1, 1}};
    return r;
  }
  Normalized n = normalize_query(text);
  auto pieces = scan(lexicon.impl(), n.text);
  if (correct_typos(lexicon.impl(), n, pieces, q.corrections)) pieces = scan(lexicon.impl(), n.text);
  if (pieces.empty()) {
    r.error = ParseError{"empty query", "ask about a model, a training mode, a GPU count or a sequence length", Span{1, 0}};
    return r;
  }
  Resolver res(lexicon.impl(), n, text, q);
  for (const auto& p : pieces) {
    if (!res.apply(p)) {
      r.error = res.error;
      break;
    }
  }
  if (!r.error && !res.finish_system()) r.error = res.error;
  if (!r.error) res.flagship();
  for (const auto& c : q.corrections)
    q.warnings.push_back(
        Warning{c.word, c.corrected, "read " + quote(c.word) + " as " + quote(c.corrected), c.span, {}, WarningKind::Corrected, {}});
  q.lang = res.guess_language();
  // Only particles and bare units: nothing to search for.
  if (!r.error && std::all_of(q.terms.begin(), q.terms.end(), [](const Term& t) { return t.kind == TermKind::Stopword; })) {
    r.error = ParseError{"empty query",
                         "the query has only words without a meaning here; ask about a model, a training mode, "
                         "a GPU count or a sequence length",
                         n.span(0, n.text.size())};
  }
  return r;
}

}  // namespace kbq::dsl
