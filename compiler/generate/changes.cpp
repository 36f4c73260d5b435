// Generate stage: CHANGES[.<lang>].md, what the regenerated recipe index
// changes against the newest published edition of each language: every
// named library row whose value the code contradicts (now the code's value)
// and every named row the code no longer exports (dropped), each with the
// document's file:line and the code's path:line@commit, grouped by family:
// the text of an upstream pull request. The lines are the drift findings
// of those rows (kbc lint's `drift: recipe-fact` / `missing-recipe` lines),
// so their count is lint's. Labels from data/ui.tsv (changes.*).
#include <map>
#include <tuple>

#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

void write_changelog(const Inputs& ctx, OutputFiles& out) {
  std::map<std::tuple<std::string, int, std::string>, const RecipeRow*> rows;  // (file, line, name) → the table row
  for (const auto& r : ctx.c.extracted.recipes)
    if (r.mentioned_in.empty()) rows[{r.prov.file, r.prov.line, r.name}] = &r;
  const CodeSnapshot* snap = ctx.c.code.newest();
  for (const auto& lang : ctx.languages) {
    int newest = 0;
    for (const auto& d : ctx.c.documents)
      if (d.meta.lang == lang) newest = std::max(newest, d.meta.revision);
    std::map<std::pair<int, std::string>, std::vector<std::string>> by_family;  // (ordinal, heading) → lines
    size_t n = 0;
    for (const auto& d : ctx.c.drift) {
      if (d.doc.lang != lang || d.doc.revision != newest) continue;
      if (d.kind != DriftKind::RecipeFact && d.kind != DriftKind::MissingRecipe) continue;
      auto it = rows.find({d.doc.file, d.doc.line, d.subject});
      if (it == rows.end() || it->second->pattern || it->second->kind != RecipeKind::Library) continue;
      const RecipeRow& row = *it->second;
      const std::string doc_at = d.doc.file + ":" + std::to_string(d.doc.line);
      const std::string line = d.kind == DriftKind::RecipeFact
                                   ? ctx.ui(lang, "changes.value",
                                            {{"recipe", d.subject},
                                             {"field", d.field},
                                             {"document", d.doc_value},
                                             {"code", d.code_value},
                                             {"doc_at", doc_at},
                                             {"code_at", d.code_at}})
                                   : ctx.ui(lang, "changes.dropped", {{"recipe", d.subject}, {"doc_at", doc_at}});
      by_family[{row.family_ordinal, row.family}].push_back("- " + md_text(line));
      ++n;
    }
    std::vector<std::pair<std::string, std::string>> fm{{"title", yaml_str(ctx.ui(lang, "changes.title"))},
                                                        {"lang", lang},
                                                        {"against-revision", std::to_string(newest)},
                                                        {"changes", std::to_string(n)}};
    if (snap) fm.emplace_back("commit", yaml_str(snap->commit));
    std::string body = front_matter(fm) + "\n# " + md_text(ctx.ui(lang, "changes.title")) + "\n\n" +
                       md_text(ctx.ui(lang, "changes.intro",
                                      {{"revision", std::to_string(newest)},
                                       {"count", std::to_string(n)},
                                       {"commit", snap ? snap->short_commit() : std::string()}})) +
                       "\n";
    for (const auto& [family, lines] : by_family) {
      body += "\n## " + md_text(family.second) + "\n\n";
      for (const auto& l : lines) body += l + "\n";
    }
    out[lang_path("CHANGES", lang)] = body;
  }
}

}  // namespace kb::gen
