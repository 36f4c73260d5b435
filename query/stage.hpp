// What every stage of one answer shares (private to the engine): the
// knowledge base as values (query/kb/snapshot.hpp), the labels of the
// answer's language, and the language. Stages take it as `const Context&`:
// they compute from what it holds and never read the database.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "query/kb/snapshot.hpp"
#include "query/kbq.hpp"

namespace kbq {

struct Context {
  const Snapshot& kb;    // the small tables and the settings
  const Labels& labels;  // the answer's language, English where it has none
  std::string lang;      // language of the answer's prose
  const Settings& settings() const { return kb.settings; }
  // A label with its {name} fields filled in.
  std::string label(const std::string& key, const std::vector<std::pair<std::string, std::string>>& vars = {}) const {
    return fill(labels(key), vars);
  }
  // The text of an entity in the answer's language (a part of it when `part` names one).
  Prose prose(const EntityRef& e, const std::string& part = {}) const {
    return kbq::prose(kb.texts_of(e), e, lang, kb.settings.base_language, part);
  }
};

}  // namespace kbq
