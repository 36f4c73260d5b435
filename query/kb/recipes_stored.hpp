// The recipes as an answer reads them, compiled by kbc into a few values
// (recipes_compiled, one row per chunk) from the rows of recipes, its
// recipe_launch row and the launch_sites it cites: kbq reads them whole at
// its first recipe and indexes each recipe's name, function, mode and model,
// so a family's or a mode's recipes are found without SQL, and only the
// recipes an answer keeps are read in full. Layout: recipes_stored.cpp.
//
// Every read is checked (base/stored_bytes.hpp): counts, lengths, UTF-8,
// string indexes; the values kbq prints as names are names, as the content
// check asks of the table's columns (base/limits.hpp kKbNameColumns); every
// size is within its column's range (base/value_ranges.hpp), and a size out
// of range is the same KbValueError, naming recipes' column, that reading
// the row gave. A crafted value fails with one error, never a wrong read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "query/kbq.hpp"

namespace kbq::stored_recipes {

// What a catalog selects recipes by, read without the rest of the recipe.
struct Key {
  RecipeKind kind = RecipeKind::Library;
  std::string_view name, target, mode, model_key;
};

inline Key key_of(const Recipe& r) { return {r.kind, r.name, r.target, r.mode, r.model_key}; }

// `recipes` (both kinds, each in name order) as chunks of at most
// kMaxRecipesPerChunk recipes, a new chunk begun past kRecipeChunkBytes.
// Reads only what Recipe holds from the tables: not `model` and `commit`
// (the snapshot's, set when read) nor `runs_in_override` (a check's).
std::vector<std::string> to_stored(const std::vector<Recipe>& recipes);

class Index {
 public:
  // Reads the chunks' texts and every recipe's key; throws
  // kb::stored::Error naming the chunk and the byte.
  // Each text is checked (UTF-8; a name where kbq prints it as one) when
  // a recipe that uses it is first read, not before: an answer reads a
  // few dozen recipes of the thousand.
  explicit Index(std::vector<std::string> chunks);
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  struct Entry {
    Key key;
    std::uint32_t chunk = 0;
    std::size_t body = 0, body_bytes = 0;  // the rest of the recipe, in its chunk
  };
  const std::vector<Entry>& entries() const { return entries_; }
  // The whole recipe: every field Recipe holds from the tables. Throws
  // kb::stored::Error, or kb::KbValueError for a size out of its range.
  void read(const Entry& e, Recipe& out);
  // An entry's name, checked as read() checks it.
  std::string_view name(const Entry& e);

 private:
  enum class Checked : std::uint8_t { No, Name, Text };  // Text: UTF-8, not a name
  struct Chunk {
    std::string bytes;
    std::vector<std::string_view> texts;  // in bytes
    std::vector<Checked> checked;         // each text's, as far as it is
  };
  // Text `i` of a chunk (i < its count: read so), checked as UTF-8, and as
  // a name when `name`; `recipe` and `field` name it in the error. Checked
  // at its first read (text_checked), then a look-up: a recipe reads twenty.
  std::string_view text(Chunk& c, std::uint64_t i, bool name, std::string_view recipe, const char* field) {
    const auto at = static_cast<std::size_t>(i);
    const Checked checked = c.checked[at];
    if (checked == Checked::Name || (checked == Checked::Text && !name)) return c.texts[at];
    return text_checked(c, i, name, recipe, field);
  }
  std::string_view text_checked(Chunk& c, std::uint64_t i, bool name, std::string_view recipe, const char* field);
  std::vector<Chunk> chunks_;
  std::vector<Entry> entries_;
  struct KeyTexts {
    std::uint32_t name, target, mode, model_key;
  };
  std::vector<KeyTexts> key_texts_;  // by entry
};

}  // namespace kbq::stored_recipes
