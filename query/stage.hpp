// What every stage of one answer shares (private to the engine): the
// knowledge base as values (query/kb/snapshot.hpp), the labels and the
// cited texts of the answer's language, and the language. Stages take it as `const Context&`:
// they compute from what it holds and never read the database. The one
// thing they write through it is the engine's ConfigLayers, a cache of
// values computed from the rest.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/text.hpp"
#include "query/kb/snapshot.hpp"
#include "query/kbq.hpp"

namespace kbq {

// What a config key's change does and the sentence that says so, in one
// language (the plan stage's classify, query/plan/changes.cpp).
struct ConfigLayer {
  Impact impact = Impact::Unknown;
  std::string sentence;
  SourceRef source;
};
using ConfigLayers = std::map<std::string, ConfigLayer, std::less<>>;  // config key → its layer

struct Context {
  const Snapshot& kb;       // the small tables and the settings
  const Labels& labels;     // the answer's language, the base language's where it has none
  const CitedTexts& texts;  // the texts of the entities the stages cite, in the answer's language
  std::string lang;         // language of the answer's prose
  // The layers of the KB's config keys found so far in this language, kept
  // across answers (every answer classifies each size it pins, for every
  // result and alternative); null: none kept.
  ConfigLayers* layers = nullptr;
  const Settings& settings() const { return kb.settings; }
  // A label with its {name} fields filled in.
  std::string label(const std::string& key, const std::vector<std::pair<std::string, std::string>>& vars = {}) const {
    return fill(labels(key), vars);
  }
  // A GPU architecture as answers name it (data/answer-labels.tsv arch.<key>;
  // kbc refuses an architecture without one), and several as one list.
  std::string arch(const std::string& key) const { return label("arch." + key); }
  std::string archs(const std::set<std::string>& keys) const {
    std::set<std::string> names;
    for (const auto& k : keys) names.insert(arch(k));
    return kb::join(std::vector<std::string>(names.begin(), names.end()), ", ");
  }
  // The text of an entity in the answer's language (a part of it when `part` names one).
  Prose prose(const EntityRef& e, const std::string& part = {}) const {
    return kbq::prose(texts.of(e), e, lang, kb.settings.base_language, part);
  }
};

}  // namespace kbq
