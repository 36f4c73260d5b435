// The recipes as stored (see recipes_stored.hpp).
//
// Layout of a chunk (base/stored_bytes.hpp; a text named by its index in
// the chunk's texts, a var):
//   u32 format (kStoredFormat)
//   texts:    count, then each a vtext (a recipe's texts, each once a chunk)
//   recipes:  count, then each:
//     u8 kind (0 library, 1 benchmark)
//     text name, function, mode, model key          (the key)
//     var bytes of the rest, then the rest:
//       text launch mode, modality
//       u8 flags: 1 routed experts, 2 user data, 4 shadowed,
//                 8 sequence parallel set, 16 sequence parallel on
//       optional svar tp, pp, vp, cp, ep, etp, seq_len, gbs, mbs,
//                 native GPUs, min GPUs
//       text dataset, precision, native hardware, native precision,
//            variant, low precision, runs in, where, data, its name,
//            where, PEFT modes (joined by ','), where, raises, where,
//            where shadowed
//       f64 state floor (Recipe::state_floor; format 2)
#include "query/kb/recipes_stored.hpp"

#include <map>

#include "base/checked.hpp"
#include "base/escape.hpp"
#include "base/limits.hpp"
#include "base/stored_bytes.hpp"
#include "base/text.hpp"
#include "base/value_ranges.hpp"

namespace kbq::stored_recipes {

namespace {

constexpr std::uint32_t kStoredFormat = 2;  // 2: the state floor

// Bytes times GPUs: a model of 10^15 parameters at 16 bytes each is 1.6e16.
constexpr double kMaxStateFloor = 1e24;

constexpr unsigned kMoe = 1, kUserData = 2, kShadowed = 4, kSpSet = 8, kSpOn = 16, kAllFlags = 31;

// The sizes in the order stored, with the column each is checked as.
struct Size {
  std::optional<long long> Recipe::*field;
  const kb::IntRange* range;
};
const Size kSizes[] = {
    {&Recipe::tp, &kb::int_range("recipes", "tp")},
    {&Recipe::pp, &kb::int_range("recipes", "pp")},
    {&Recipe::vp, &kb::int_range("recipes", "vp")},
    {&Recipe::cp, &kb::int_range("recipes", "cp")},
    {&Recipe::ep, &kb::int_range("recipes", "ep")},
    {&Recipe::etp, &kb::int_range("recipes", "etp")},
    {&Recipe::seq_len, &kb::int_range("recipes", "seq_len")},
    {&Recipe::gbs, &kb::int_range("recipes", "gbs")},
    {&Recipe::mbs, &kb::int_range("recipes", "mbs")},
    {&Recipe::native_gpus, &kb::int_range("recipes", "native_gpus")},
    {&Recipe::min_gpus, &kb::int_range("recipes", "min_gpus")},
};

// The texts after the sizes, in the order stored; `name`: kbq prints it as
// a name (base/limits.hpp kKbNameColumns' recipes columns).
struct Text {
  std::string Recipe::*field;
  const char* column;
  bool name;
};
const Text kTexts[] = {
    {&Recipe::dataset, "dataset", true},
    {&Recipe::precision, "precision", true},
    {&Recipe::native_hardware, "native_hardware", true},
    {&Recipe::native_precision, "native_precision", true},
    {&Recipe::variant, "variant", true},
    {&Recipe::low_precision, "low_precision", false},
    {&Recipe::runs_in, "precision", false},
    {&Recipe::runs_in_at, "precision_at", false},
    {&Recipe::data, "data", false},
    {&Recipe::data_name, "data_name", false},
    {&Recipe::data_at, "data_at", false},
};
const Text kTextsAfterModes[] = {
    {&Recipe::peft_at, "peft_at", false},
    {&Recipe::raises, "raises", false},
    {&Recipe::raises_at, "raises_at", false},
    {&Recipe::shadowed_at, "shadowed_at", false},
};

// A chunk being written: its texts numbered as first met, its recipes aside.
class ChunkWriter {
 public:
  void add(const Recipe& r) {
    records_.u8(r.kind == RecipeKind::Benchmark ? 1 : 0);
    for (const std::string* s : {&r.name, &r.target, &r.mode, &r.model_key}) ref(records_, *s);
    kb::stored::Writer body;
    ref(body, r.launch_mode);
    ref(body, r.modality);
    unsigned flags = (r.moe ? kMoe : 0U) | (r.user_data ? kUserData : 0U) | (r.shadowed ? kShadowed : 0U);
    if (r.sp) flags |= kSpSet | (*r.sp ? kSpOn : 0U);
    body.u8(flags);
    for (const Size& s : kSizes) body.opt_svar(r.*s.field);
    for (const Text& t : kTexts) ref(body, r.*t.field);
    ref(body, kb::join(r.peft_modes, ","));
    for (const Text& t : kTextsAfterModes) ref(body, r.*t.field);
    body.f64(r.state_floor);
    const std::string b = body.take();
    records_.var(b.size());
    records_.bytes(b);
    ++recipes_;
  }
  std::size_t recipes() const { return recipes_; }
  std::size_t bytes() const { return text_bytes_ + records_.size(); }
  std::string take() {
    kb::stored::Writer w;
    w.u32(kStoredFormat);
    w.count(texts_.size());
    for (const std::string& s : texts_) w.vtext(s);
    w.count(recipes_);
    w.bytes(records_.take());
    return w.take();
  }

 private:
  void ref(kb::stored::Writer& w, const std::string& s) {
    const auto [it, added] = index_.emplace(s, texts_.size());
    if (added) {
      texts_.push_back(s);
      text_bytes_ += s.size() + 2;
    }
    w.var(it->second);
  }
  std::map<std::string, std::uint64_t, std::less<>> index_;
  std::vector<std::string> texts_;
  kb::stored::Writer records_;
  std::size_t recipes_ = 0, text_bytes_ = 0;
};

// "'name'" as KbValueError names a recipes row (kb::row_name).
std::string row_of(std::string_view name) { return "'" + kb::first_code_points(kb::escape_controls(name), 80) + "'"; }

// A text's index among the chunk's.
[[noreturn, gnu::cold, gnu::noinline]] void no_such_text(kb::stored::Reader& r, std::uint64_t i, std::size_t texts) {
  r.fail("text " + std::to_string(i) + " of " + std::to_string(texts));
}

inline std::uint32_t text_index(kb::stored::Reader& r, std::size_t texts) {
  const std::uint64_t i = r.var();
  if (i >= texts) no_such_text(r, i, texts);
  return static_cast<std::uint32_t>(i);
}

}  // namespace

std::vector<std::string> to_stored(const std::vector<Recipe>& recipes) {
  std::vector<std::string> chunks;
  ChunkWriter chunk;
  for (const Recipe& r : recipes) {
    chunk.add(r);
    if (chunk.recipes() >= kb::limits::kMaxRecipesPerChunk || chunk.bytes() >= kb::limits::kRecipeChunkBytes) {
      chunks.push_back(chunk.take());
      chunk = ChunkWriter();
    }
  }
  // Always one chunk, if empty: a KB without any is not one kbc wrote.
  if (chunk.recipes() > 0 || chunks.empty()) chunks.push_back(chunk.take());
  return chunks;
}

Index::Index(std::vector<std::string> chunks) {
  chunks_.resize(chunks.size());
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    Chunk& chunk = chunks_[c];
    chunk.bytes = std::move(chunks[c]);
    // Every stored text is a value of a KB column (at most kMaxKbValueBytes).
    kb::stored::Reader r(chunk.bytes, kb::limits::kMaxKbValueBytes);
    try {
      if (const std::uint32_t format = r.u32(); format != kStoredFormat)
        r.fail("format " + std::to_string(format) + ", not " + std::to_string(kStoredFormat));
      chunk.texts.resize(r.count(1));
      for (auto& s : chunk.texts) s = r.vbytes();
      chunk.checked.assign(chunk.texts.size(), Checked::No);
      // A recipe is at least 6 bytes: its kind, four texts, its length.
      const std::size_t n = r.count(6);
      if (entries_.size() + n > static_cast<std::size_t>(kb::limits::kMaxStoredRecipes))
        r.fail("more than " + std::to_string(kb::limits::kMaxStoredRecipes) + " recipes");
      for (std::size_t i = 0; i < n; ++i) {
        Entry e;
        const unsigned kind = r.u8();
        if (kind > 1) r.fail("recipe kind " + std::to_string(kind));
        e.key.kind = kind == 1 ? RecipeKind::Benchmark : RecipeKind::Library;
        KeyTexts k{};
        for (std::uint32_t* t : {&k.name, &k.target, &k.mode, &k.model_key}) *t = text_index(r, chunk.texts.size());
        // Compared as bytes to choose recipes; checked when one is read.
        e.key.name = chunk.texts[k.name];
        e.key.target = chunk.texts[k.target];
        e.key.mode = chunk.texts[k.mode];
        e.key.model_key = chunk.texts[k.model_key];
        e.chunk = static_cast<std::uint32_t>(c);
        e.body_bytes = static_cast<std::size_t>(r.var());
        e.body = r.at();
        r.skip(e.body_bytes);
        entries_.push_back(e);
        key_texts_.push_back(k);
      }
      if (!r.done()) r.fail("bytes after the last recipe");
    } catch (const kb::stored::Error& e) {
      throw kb::stored::Error("chunk " + std::to_string(c) + ": " + e.what());
    }
  }
}

std::string_view Index::text_checked(Chunk& c, std::uint64_t i, bool name, std::string_view recipe, const char* field) {
  const std::string_view s = c.texts[static_cast<std::size_t>(i)];
  Checked& checked = c.checked[static_cast<std::size_t>(i)];
  if (checked == Checked::No) {
    // A name is ASCII, so UTF-8; anything else is checked as UTF-8.
    if (kb::is_name(s))
      checked = Checked::Name;
    else if (!kb::find_invalid_utf8(s))
      checked = Checked::Text;
    else
      throw kb::stored::Error("recipe " + row_of(recipe) + ": its " + field + " is not UTF-8");
  }
  if (name && checked != Checked::Name)
    throw kb::stored::Error("recipe " + row_of(recipe) + ": its " + field + " '" + kb::first_code_points(kb::escape_controls(s), 80) +
                            "' is not a name (letters, digits, '_', '.', '-'; kbq prints it in code and commands)");
  return s;
}

std::string_view Index::name(const Entry& e) {
  const auto at = static_cast<std::size_t>(&e - entries_.data());
  return text(chunks_[e.chunk], key_texts_[at].name, true, e.key.name, "name");
}

void Index::read(const Entry& e, Recipe& out) {
  const auto at = static_cast<std::size_t>(&e - entries_.data());
  Chunk& chunk = chunks_[e.chunk];
  const KeyTexts& k = key_texts_[at];
  kb::stored::Reader r(std::string_view(chunk.bytes).substr(e.body, e.body_bytes), kb::limits::kMaxKbValueBytes);
  try {
    const std::string_view recipe = name(e);
    out.kind = e.key.kind;
    out.name = recipe;
    out.target = text(chunk, k.target, true, recipe, "target");
    out.mode = text(chunk, k.mode, true, recipe, "mode");
    out.model_key = text(chunk, k.model_key, true, recipe, "model_key");
    const auto next = [&](bool is_name, const char* field) {
      return text(chunk, text_index(r, chunk.texts.size()), is_name, recipe, field);
    };
    // Many texts are empty (a recipe that raises nothing, has no variant):
    // an empty one only clears the field.
    const auto set = [](std::string& field, std::string_view v) {
      if (v.empty())
        field.clear();
      else
        field.assign(v);
    };
    set(out.launch_mode, next(true, "launch_mode"));
    set(out.modality, next(true, "modality"));
    const unsigned flags = r.u8();
    if (flags & ~kAllFlags) r.fail("recipe " + row_of(recipe) + ": flags " + std::to_string(flags));
    if (!(flags & kSpSet) && (flags & kSpOn)) r.fail("recipe " + row_of(recipe) + ": sequence parallel on but not set");
    out.moe = (flags & kMoe) != 0;
    out.user_data = (flags & kUserData) != 0;
    out.shadowed = (flags & kShadowed) != 0;
    out.sp = flags & kSpSet ? std::optional<bool>((flags & kSpOn) != 0) : std::nullopt;
    for (const Size& s : kSizes) {
      auto& v = out.*s.field;
      v = r.opt_svar();
      // The error reading the row gave (kb::kb_opt_int), the column named.
      if (!v && !s.range->null_ok)
        throw kb::KbValueError(s.range->table, s.range->column, row_of(recipe), "NULL where a whole number belongs");
      if (v && !kb::in_range(*s.range, *v))
        throw kb::KbValueError(s.range->table, s.range->column, row_of(recipe), kb::range_problem(*s.range, *v));
    }
    for (const Text& t : kTexts) set(out.*t.field, next(t.name, t.column));
    out.peft_modes.clear();
    if (const std::string_view modes = next(false, "peft_modes"); !modes.empty()) out.peft_modes = kb::split(modes, ',');
    for (const Text& t : kTextsAfterModes) set(out.*t.field, next(t.name, t.column));
    // A floor the planner compares with GPU memory: a number of bytes.
    out.state_floor = r.f64();
    if (!(out.state_floor >= 0 && out.state_floor <= kMaxStateFloor))
      r.fail("recipe " + row_of(recipe) + ": state floor " + std::to_string(out.state_floor));
    if (!r.done()) r.fail("recipe " + row_of(recipe) + ": bytes after its last field");
  } catch (const kb::stored::Error& x) {
    throw kb::stored::Error("chunk " + std::to_string(e.chunk) + ", the recipe at byte " + std::to_string(e.body) + ": " + x.what());
  }
}

}  // namespace kbq::stored_recipes
