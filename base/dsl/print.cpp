// Printing: to_canonical() writes constraints back as a query in a fixed
// order (as `key:value` where the lexicon has a key for the field, else as
// the lexicon's spelling of the value), quoting free text that would not
// read back as itself, alone or beside the rest of the query (the printed
// query is parsed again to know); describe() writes a lexicon-independent
// summary; to_string(TermKind) names term kinds.
#include <cstdio>

#include "base/dsl/detail.hpp"
#include "base/text.hpp"

namespace kbq::dsl {

using namespace field;  // NOLINT: this file prints every field

namespace {

// The printed plural spelling of a system ("dgx b200s"): the first of its
// spellings, in the lexicon's order, that is also a plural word.
std::string plural_spelling(const Lexicon& lex, const std::string& system) {
  const auto& impl = lex.impl();
  for (const auto& word : lex.spellings(WordKind::System, system))
    if (const auto id = impl.find(word); id != kNoWord && impl.words[id].meaning(WordKind::Plural)) return word;
  return lex.spelling(WordKind::System, system);
}

// True when `word` alone parses back to exactly this one free-text word.
bool reads_back(const Lexicon& lex, const std::string& word) {
  const ParseResult r = parse(lex, word);
  if (!r) return false;
  Constraints expected;
  expected.free_text.push_back(word);
  if (r.query.other_mode == word) expected.other_mode = word;  // a training method no recipe has
  return r.query.constraints() == expected;
}

// True when `text` parses to exactly `c`.
bool reads_as(const Lexicon& lex, const std::string& text, const Constraints& c) {
  const ParseResult r = parse(lex, text);
  return r && r.query.constraints() == c;
}

// True when `word` alone parses to the one term (kind, value): a printed
// spelling can read as something else once the lexicon grows ("one gpu",
// the single-GPU intent, reads as a count of 1 beside the number words).
bool reads_alone(const Lexicon& lex, const std::string& word, WordKind kind, const std::string& value) {
  const ParseResult r = parse(lex, word);
  if (!r) return false;
  const Term* only = nullptr;
  for (const auto& t : r.query.terms) {
    if (t.kind == TermKind::Stopword) continue;
    if (only) return false;
    only = &t;
  }
  return only && only->value == value && to_string(only->kind) == to_string(kind);
}

// Free text in double quotes: it reads back as itself whatever its
// neighbours are (free words never hold a '"': the grammar ends them there).
std::string quoted(const std::string& word) { return "\"" + word + "\""; }

}  // namespace

std::string_view to_string(TermKind kind) {
  switch (kind) {
    case TermKind::Mode:
      return "mode";
    case TermKind::Model:
      return "model";
    case TermKind::Size:
      return "size";
    case TermKind::Gpus:
      return "gpus";
    case TermKind::Nodes:
      return "nodes";
    case TermKind::Hardware:
      return "hardware";
    case TermKind::Precision:
      return "precision";
    case TermKind::Seq:
      return "seq";
    case TermKind::Intent:
      return "intent";
    case TermKind::Scale:
      return "scale";
    case TermKind::Filter:
      return "filter";
    case TermKind::Budget:
      return "budget";
    case TermKind::Epochs:
      return "epochs";
    case TermKind::FreeText:
      return "free_text";
    case TermKind::Stopword:
      return "stopword";
    case TermKind::Unknown:
      return "unknown";
    case TermKind::System:
      return "system";
    case TermKind::Memory:
      return "memory";
    case TermKind::UnknownGpu:
      return "unknown_gpu";
  }
  return "?";
}

std::string to_canonical(const Lexicon& lex, const Constraints& c) {
  std::vector<std::string> parts;
  // The parts printed as a word of the lexicon, to respell if need be.
  struct WordPart {
    std::size_t at;
    WordKind kind;
    std::string value;
  };
  std::vector<WordPart> words;
  // key:value when the field has a key, else the value's word.
  auto field_or_word = [&](std::string_view field, WordKind kind, const std::string& value) {
    const std::string key = lex.filter_key(field);
    if (!key.empty()) {
      parts.push_back(key + ":" + value);
      return;
    }
    const std::string word = lex.spelling(kind, value);
    if (word.empty()) return;
    words.push_back({parts.size(), kind, value});
    parts.push_back(word);
  };
  // key:n when the field has a key, else "n <unit>".
  auto field_or_unit = [&](std::string_view field, WordKind unit, int value) {
    const std::string key = lex.filter_key(field);
    if (!key.empty()) {
      parts.push_back(key + ":" + std::to_string(value));
      return;
    }
    const std::string word = lex.spelling(unit, "");
    if (!word.empty()) parts.push_back(std::to_string(value) + " " + word);
  };

  if (c.mode) field_or_word(kMode, WordKind::Mode, *c.mode);
  if (!c.model.empty()) field_or_word(kModel, WordKind::Model, c.model);
  if (!c.size_token.empty()) {
    const std::string key = lex.filter_key(kSize);
    parts.push_back(key.empty() ? c.size_token : key + ":" + c.size_token);
  }
  // GPUs, nodes and hardware a system word sets read back from it: only the system is printed then.
  // Several systems, how many not said ("on my DGX B200s"): the plural word alone.
  bool by_system = false, known_system = false, bare_plural = false;
  if (!c.system.empty()) {
    const auto& systems = lex.impl().systems;
    const auto it = systems.find(c.system);
    const int n = c.systems.value_or(1);
    known_system = it != systems.end();
    by_system = known_system && c.gpus == n * it->second.gpus && c.nodes == n * it->second.nodes && c.hardware == it->second.gpu_key;
    bare_plural = known_system && !c.systems && !c.gpus && !c.nodes && c.hardware == it->second.gpu_key;
    if (bare_plural) by_system = true;
  }
  if (c.gpus && !by_system) field_or_unit(kGpus, WordKind::GpuUnit, *c.gpus);
  if (c.nodes && !by_system) field_or_unit(kNodes, WordKind::NodeUnit, *c.nodes);
  if (!c.hardware.empty() && !by_system) field_or_word(kHardware, WordKind::Hardware, c.hardware);
  if (!c.precision.empty()) field_or_word(kPrecision, WordKind::Precision, c.precision);
  if (c.seq_len) field_or_unit(kSeq, WordKind::SeqUnit, *c.seq_len);
  // A system reads back as "<n> <system word>" when it sets the GPUs, nodes and hardware (not printed above) or has
  // no facts, else as the bare word beside the counts printed above (part of one system: "gpus:4 ... dgx h100").
  if (bare_plural) {
    parts.push_back(plural_spelling(lex, c.system));
  } else if (!c.system.empty()) {
    const std::string word = lex.spelling(WordKind::System, c.system);
    if (!word.empty()) parts.push_back(by_system || !known_system ? std::to_string(c.systems.value_or(1)) + " " + word : word);
  }
  if (c.gpus_per_node) field_or_unit(kGpusPerNode, WordKind::GpuUnit, *c.gpus_per_node);
  auto number = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, v == static_cast<double>(static_cast<long long>(v)) && v < 1e18 ? "%.0f" : "%.12g", v);
    return std::string(buf);
  };
  if (c.memory_gb > 0 && !lex.filter_key(kMemory).empty()) parts.push_back(lex.filter_key(kMemory) + ":" + number(c.memory_gb));
  if (!c.unknown_hardware.empty()) parts.push_back(c.unknown_hardware);
  for (const auto& intent : c.intents) field_or_word(kIntent, WordKind::Intent, intent);
  if (!c.scale.empty()) field_or_word(kScale, WordKind::Scale, c.scale);
  for (const auto& [field, value] : c.filters) {
    if (field == kKind) {
      field_or_word(kKind, WordKind::RecipeKind, value);
      continue;
    }
    const std::string key = lex.filter_key(field);
    if (!key.empty()) parts.push_back(key + ":" + value);
  }
  // Free words that read back alone stay bare, but side by side (or next to
  // a printed lexicon word) they can re-form a lexicon phrase ("fine" and
  // "tuning") or a count ("1" and "×h100"); then every free word is quoted.
  // Two parses: the check is linear in the query, whatever its size.
  const std::size_t structured = parts.size();
  auto with_free_text = [&](std::string& out) {
    parts.resize(structured);
    for (const auto& word : c.free_text) parts.push_back(reads_back(lex, word) ? word : quoted(word));
    out = kb::join(parts, " ");
    if (reads_as(lex, out, c)) return true;
    if (c.free_text.empty()) return false;
    parts.resize(structured);
    for (const auto& word : c.free_text) parts.push_back(quoted(word));
    out = kb::join(parts, " ");
    return reads_as(lex, out, c);
  };
  // No free word to quote and no lexicon word to respell: the query is
  // printed as it is whether it reads back or not, so it is not parsed again.
  if (c.free_text.empty() && words.empty()) return kb::join(parts, " ");
  std::string out;
  if (with_free_text(out) || words.empty()) return out;
  // A printed word that reads as something else: the next spelling of its
  // value that reads alone as it (rare: a scan of the lexicon per word).
  for (const auto& w : words) {
    if (reads_alone(lex, parts[w.at], w.kind, w.value)) continue;
    for (const auto& s : lex.spellings(w.kind, w.value))
      if (reads_alone(lex, s, w.kind, w.value)) {
        parts[w.at] = s;
        break;
      }
  }
  with_free_text(out);
  return out;
}

std::string to_canonical(const Query& query) { return to_canonical(query.lexicon, query.constraints()); }

std::string describe(const Constraints& c, bool with_text) {
  std::vector<std::string> parts;
  auto put = [&](std::string_view key, const std::string& value) {
    if (!value.empty()) parts.push_back(std::string(key) + "=" + value);
  };
  if (c.mode) put(kMode, *c.mode);
  put(kModel, c.model);
  put(kSize, c.size_token);
  if (c.gpus) put(kGpus, std::to_string(*c.gpus));
  if (c.nodes) put(kNodes, std::to_string(*c.nodes));
  put(kHardware, c.hardware);
  put(kPrecision, c.precision);
  if (c.seq_len) put(kSeq, std::to_string(*c.seq_len));
  if (!c.system.empty()) put("system", c.systems ? std::to_string(*c.systems) + "x" + c.system : c.system);
  if (c.gpus_per_node) put(kGpusPerNode, std::to_string(*c.gpus_per_node));
  if (c.memory_gb > 0) put(kMemory, std::to_string(c.memory_gb));
  put("unknown_gpu", c.unknown_hardware);
  put(kIntent, kb::join(std::vector<std::string>(c.intents.begin(), c.intents.end()), ","));
  put(kScale, c.scale);
  for (const auto& [field, value] : c.filters) put(field, value);
  if (with_text) put("text", kb::join(c.free_text, "|"));
  return kb::join(parts, " ");
}

}  // namespace kbq::dsl
