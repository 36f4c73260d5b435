// Which editions may be shown (see usable.hpp).
#include "compiler/resolve/usable.hpp"

namespace kb {

namespace {

bool is_prose(const std::string& kind) { return kind == "prose" || kind == "config_layer"; }

// Prose paragraphs are aligned by position within their section; the base
// is the section part of the key ("benchmark_entry/2" → "benchmark_entry").
std::string prose_base(const EntityEdition& e) {
  if (e.kind == "config_layer") return e.kind;
  const auto slash = e.key.rfind('/');
  return slash == std::string::npos ? e.key : e.key.substr(0, slash);
}

}  // namespace

EditionUse::EditionUse(const std::vector<EntityEdition>& every) {
  for (const auto& e : every)
    if (is_prose(e.kind)) ++prose_count_[{e.prov.file, prose_base(e)}];
}

std::vector<std::string> EditionUse::stale_fields(const Entity& e, const EntityEdition& ed) const {
  std::vector<std::string> out;
  const auto& w = e.winner();
  if (&w == &ed) return out;
  for (const auto& [field, values] : ed.facts) {
    if (values.empty()) continue;  // stating nothing is not a contradiction
    auto it = w.facts.find(field);
    if (it == w.facts.end() || it->second != values) out.push_back(field);
  }
  return out;
}

bool EditionUse::usable(const Entity& e, const EntityEdition& ed) const {
  const auto& w = e.winner();
  if (&w == &ed) return true;
  if (!stale_fields(e, ed).empty()) return false;
  if (is_prose(e.kind) && ed.prov.revision != w.prov.revision) {
    auto count = [&](const EntityEdition& x) {
      auto it = prose_count_.find({x.prov.file, prose_base(x)});
      return it == prose_count_.end() ? 0 : it->second;
    };
    return count(ed) == count(w);
  }
  return true;
}

}  // namespace kb
