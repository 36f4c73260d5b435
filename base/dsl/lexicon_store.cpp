// The lexicon as kbc stores it (Lexicon::to_stored) and kbq reads it back
// (Lexicon::from_stored): the words with their meanings and languages, the
// spelling trie, the printed spellings, the known values, the systems and
// the flagships, in the order the building left them. Reading it is a copy
// and a check of every count, length, id and kind, so a crafted KB cannot
// make kbq read outside it or build a trie whose look-ups leave the array
// (docs/schema.md, "lexicon_compiled").
//
// Layout (base/stored_bytes.hpp): little-endian fixed-width integers; a
// text is a u32 byte length then its bytes; a list is a u32 count then its
// items.
//   u32 format (kStoredFormat)
//   words:      text word, i32 primary, list of text languages,
//               list of (u8 kind, text value, f64 number)
//   trie nodes: u32 first child, u32 children, u32 word id, u8 byte
//   printed:    (u8 kind, text value, text word)
//   values:     (u8 kind, text value)
//   systems:    (text system, text gpu key, i32 gpus, i32 nodes)
//   flagships:  (text model value, text model key)
//   text base language
//   scripts:    (text script, text language)
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "base/dsl/detail.hpp"
#include "base/limits.hpp"
#include "base/stored_bytes.hpp"
#include "base/text.hpp"

namespace kbq::dsl {

namespace {

constexpr std::uint32_t kStoredFormat = 2;  // 2: the base and script languages
// A meaning's number (a magnitude's multiplier, a number word's value) is
// at most this: cast to a 64-bit count where it is read.
constexpr double kMaxStoredNumber = 1e18;

using kb::stored::Writer;

// The stored layout's reader with the lexicon's longest word, and its kinds.
class Reader : public kb::stored::Reader {
 public:
  explicit Reader(std::string_view in) : kb::stored::Reader(in, kb::limits::kMaxLexiconWordBytes) {}
  WordKind kind() {
    const unsigned k = u8();
    if (k >= static_cast<unsigned>(kWordKindCount)) fail("kind " + std::to_string(k) + " is not a kind");
    return static_cast<WordKind>(k);
  }
};

}  // namespace

std::string Lexicon::to_stored() const {
  const Impl& lx = *impl_;
  Writer w;
  w.u32(kStoredFormat);
  w.count(lx.words.size());
  for (const WordInfo& word : lx.words) {
    w.text(word.word);
    w.i32(word.primary);
    w.count(word.langs.size());
    for (const auto& lang : word.langs) w.text(lang);
    w.count(word.meanings.size());
    for (const Meaning& m : word.meanings) {
      w.u8(static_cast<unsigned>(m.kind));
      w.text(m.value);
      w.f64(m.number);
    }
  }
  const auto& nodes = lx.index.nodes();
  w.count(nodes.size());
  for (const auto& n : nodes) {
    w.u32(n.first_child);
    w.u32(n.children);
    w.u32(n.id);
    w.u8(n.byte);
  }
  w.count(lx.spelling.size());
  for (const auto& [kv, printed] : lx.spelling) {
    w.u8(static_cast<unsigned>(kv.first));
    w.text(kv.second);
    w.text(printed);
  }
  w.count(lx.values.size());
  for (const auto& [kv, known] : lx.values) {
    w.u8(static_cast<unsigned>(kv.first));
    w.text(kv.second);
  }
  w.count(lx.systems.size());
  for (const auto& [key, sys] : lx.systems) {
    w.text(key);
    w.text(sys.gpu_key);
    w.i32(sys.gpus);
    w.i32(sys.nodes);
  }
  w.count(lx.flagships.size());
  for (const auto& [value, key] : lx.flagships) {
    w.text(value);
    w.text(key);
  }
  w.text(lx.base_language);
  w.count(lx.script_languages.size());
  for (const auto& [script, lang] : lx.script_languages) {
    w.text(script);
    w.text(lang);
  }
  return w.take();
}

Lexicon Lexicon::from_stored(std::string_view bytes, std::function<bool(std::string_view)> is_name_word) {
  Reader r(bytes);
  if (const std::uint32_t format = r.u32(); format != kStoredFormat)
    r.fail("format " + std::to_string(format) + ", not " + std::to_string(kStoredFormat));
  auto impl = std::make_shared<Impl>();
  Impl& lx = *impl;
  lx.is_name_word = std::move(is_name_word);
  lx.words.resize(r.count(16));
  for (WordInfo& word : lx.words) {
    word.set_word(std::string(r.text()));
    if (word.word.empty()) r.fail("an empty word");
    word.primary = r.i32();
    word.langs.resize(r.count(4));
    for (auto& lang : word.langs) lang = std::string(r.text());
    word.meanings.resize(r.count(13));
    for (Meaning& m : word.meanings) {
      m.kind = r.kind();
      m.value = std::string(r.text());
      m.number = r.f64();
      // Read as a count or a multiplier (an integer cast among them); the
      // number kinds' are above 0, as the rows' are (read_row).
      if (m.number < 0 || m.number > kMaxStoredNumber || (!is_id_kind(m.kind) && !(m.number > 0)))
        r.fail("word '" + word.word + "': number " + std::to_string(m.number));
      word.kinds |= kind_bit(m.kind);
    }
    if (word.primary < -1 || word.primary >= static_cast<int>(word.meanings.size()))
      r.fail("word '" + word.word + "': bare meaning " + std::to_string(word.primary) + " of " + std::to_string(word.meanings.size()));
  }
  std::vector<SpellingIndex::Node> nodes(r.count(13));
  for (auto& n : nodes) {
    n.first_child = r.u32();
    n.children = r.u32();
    n.id = r.u32();
    n.byte = static_cast<unsigned char>(r.u8());
  }
  std::string problem;
  lx.index = SpellingIndex::from_nodes(std::move(nodes), lx.words, problem);
  if (!problem.empty()) r.fail("spelling trie " + problem);
  for (std::size_t n = r.count(9); n-- > 0;) {
    const int kind = static_cast<int>(r.kind());
    std::string value(r.text());
    lx.spelling.emplace_hint(lx.spelling.end(), std::make_pair(kind, std::move(value)), std::string(r.text()));
  }
  for (std::size_t n = r.count(5); n-- > 0;) {
    const int kind = static_cast<int>(r.kind());
    lx.values.emplace_hint(lx.values.end(), std::make_pair(kind, std::string(r.text())), true);
  }
  for (std::size_t n = r.count(16); n-- > 0;) {
    std::string key(r.text());
    System sys;
    sys.gpu_key = std::string(r.text());
    sys.gpus = r.i32();
    sys.nodes = r.i32();
    if (sys.gpus < 1 || sys.gpus > kMaxCount || sys.nodes < 1 || sys.nodes > kMaxCount)
      r.fail("system '" + key + "': " + std::to_string(sys.gpus) + " GPUs, " + std::to_string(sys.nodes) + " nodes");
    lx.systems.emplace_hint(lx.systems.end(), std::move(key), std::move(sys));
  }
  for (std::size_t n = r.count(8); n-- > 0;) {
    std::string value(r.text());
    lx.flagships.emplace_hint(lx.flagships.end(), std::move(value), std::string(r.text()));
  }
  lx.base_language = std::string(r.text());
  for (std::size_t n = r.count(8); n-- > 0;) {
    std::string script(r.text());
    if (!is_script(script)) r.fail("script '" + script + "' is not one the parser tells apart");
    lx.script_languages.emplace_hint(lx.script_languages.end(), std::move(script), std::string(r.text()));
  }
  if (!r.done()) r.fail("bytes after the script languages");
  return Lexicon(std::move(impl));
}

}  // namespace kbq::dsl
