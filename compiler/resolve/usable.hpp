// Which editions of an entity may be shown: decided once at compile time,
// stored in the KB (entity_texts.usable), read by kbq and by kbc generate
// through base/choose.hpp.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/extract/facts.hpp"
#include "compiler/resolve/resolve.hpp"

namespace kb {

class EditionUse {
 public:
  // every: all editions extracted (to count the paragraphs of prose sections).
  explicit EditionUse(const std::vector<EntityEdition>& every);
  // Fields on which `ed` contradicts the winner of `e`.
  std::vector<std::string> stale_fields(const Entity& e, const EntityEdition& ed) const;
  // May `ed` be shown for `e`: the winner, or an edition that contradicts no
  // fact of it (a paragraph of an older revision only when its section has
  // as many paragraphs as the winner's, being aligned by position).
  bool usable(const Entity& e, const EntityEdition& ed) const;

 private:
  std::map<std::pair<std::string, std::string>, int> prose_count_;  // (file, prose base) → paragraphs
};

}  // namespace kb
