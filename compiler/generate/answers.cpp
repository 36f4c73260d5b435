// site/answers/: kbq's JSON answers (docs/answer.schema.json) to the
// questions of the quick-reference table, in every language, for a
// documentation site's FAQ. The questions are the table's own "I want to"
// cells; the answers come from kbq's planner over the KB just compiled.
#include <unistd.h>

#include <filesystem>

#include "compiler/generate/generate_int.hpp"
#include "query/plan/plan.hpp"
#include "query/render/render.hpp"

namespace kb::gen {

void write_answers(Context& ctx, OutputFiles& files) {
  namespace fs = std::filesystem;
  // kbq reads a KB file: emit this compilation to a private temporary one.
  const fs::path tmp = fs::temp_directory_path() / ("kbc-answers-" + std::to_string(::getpid()) + ".sqlite");
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove(p, ec);
    }
  } cleanup{tmp};
  const Compilation& c = ctx.c;
  emit_kb(tmp.string(), EmitInput{&c.documents, &c.vocab, &c.resolved, &c.extracted.sections, c.data_files});
  kbq::Kb kb(tmp.string());

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
      auto parsed = kbq::dsl::parse(kb.lexicon(), question);
      nlohmann::ordered_json entry = {{"question", question},
                                      {"lang", lang},
                                      {"quick_reference", e->key},
                                      {"fallback", ch.fallback},
                                      {"file", rel.substr(std::string("site/").size())}};
      if (parsed.error) {
        entry["error"] = parsed.error->message;
        index.push_back(entry);
        continue;
      }
      kbq::PlanOptions po;
      po.lang = lang;
      auto res = kbq::answer(kb, parsed.query, po);
      if (auto* err = std::get_if<kbq::QueryError>(&res)) {
        entry["error"] = err->message;
        index.push_back(entry);
        continue;
      }
      kbq::RenderOptions ro;
      ro.format = kbq::Format::Json;
      ro.lang = lang;
      files[rel] = kbq::render_answer(kb, std::get<kbq::Answer>(res), ro);
      index.push_back(entry);
    }
  }
  files["site/answers/index.json"] = index.dump(1) + "\n";
}

}  // namespace kb::gen
