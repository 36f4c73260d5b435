// site/answers/: kbq's JSON answers (docs/answer.schema.json) to the
// questions of the quick-reference table, in every language, for a
// documentation site's FAQ. The questions are the table's own "I want to"
// cells; the answers come from kbq's planner over the KB just compiled.
#include <nlohmann/json.hpp>

#include <algorithm>

#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

void write_answers(const Inputs& ctx, OutputFiles& files) {
  const Compilation& c = ctx.c;
  nlohmann::ordered_json index = nlohmann::ordered_json::array();
  std::vector<const Entity*> rows;
  for (const auto& e : c.resolved.entities)
    if (e.kind == "quick_ref") rows.push_back(&e);
  std::sort(rows.begin(), rows.end(), [](const Entity* a, const Entity* b) {
    return a->key.size() != b->key.size() ? a->key.size() < b->key.size() : a->key < b->key;
  });
  for (const Entity* e : rows) {
    for (const auto& lang : ctx.languages) {
      const Choice ch = ctx.choose(*e, lang);
      if (!ch.ed) continue;
      auto it = ch.ed->parts.find("want");
      const std::string question = it == ch.ed->parts.end() ? ch.ed->text : it->second;
      const std::string rel = "site/answers/" + lang + "/quick-reference-" + e->key + ".json";
      nlohmann::ordered_json entry = {{"question", question},
                                      {"lang", lang},
                                      {"quick_reference", e->key},
                                      {"fallback", ch.fallback},
                                      {"file", rel.substr(std::string("site/").size())}};
      kbq::AskOptions ask;
      ask.lang = lang;
      auto res = ctx.engine.ask(question, ask);
      if (auto* err = std::get_if<kbq::Error>(&res)) {
        entry["error"] = err->message;
        index.push_back(entry);
        continue;
      }
      kbq::RenderOptions ro;
      ro.format = kbq::Format::Json;
      files[rel] = kbq::render(std::get<kbq::Answer>(res), ctx.engine.labels(lang), ro);
      index.push_back(entry);
    }
  }
  files["site/answers/index.json"] = index.dump(1) + "\n";
}

}  // namespace kb::gen
