// Generate stage: CHANGES[.<lang>].md, what the regenerated recipe index
// changes against the newest published edition of each language: every
// value of a table row the code contradicts (now the code's value) and
// every row's name the code no longer exports (dropped), each with the
// document's file:line and the code's path:line@commit, grouped by family:
// the text of an upstream pull request. The lines are the drift findings
// whose document side is a table row (kbc lint's `drift:` lines of a
// named recipe row, of the recipes a pattern row stood for, of a benchmark
// model's row), one bullet each, so their count is lint's table drift. The
// drift of prose (a name, key or preset in a sentence) and the prose the
// code contradicts are the "for a maintainer" list, not bullets. Then a
// bullet per quick-reference GPU cell the regenerated editions set from the
// code (front matter quick-reference). Labels from data/ui.tsv (changes.*).
#include <map>
#include <set>
#include <tuple>

#include "base/text.hpp"
#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

void write_changelog(const Inputs& ctx, OutputFiles& out) {
  std::map<std::tuple<std::string, int, std::string>, const RecipeRow*> rows;  // (file, line, row name) → the table row
  for (const auto& r : ctx.c.extracted.recipes)
    if (r.mentioned_in.empty()) rows[{r.prov.file, r.prov.line, r.name}] = &r;
  const CodeSnapshot* snap = ctx.c.code.newest();
  for (const auto& lang : ctx.languages) {
    const int newest = ctx.newest_revision_of(lang);
    // (index: 0 library, 1 benchmark; family ordinal) → (heading, lines): the
    // library families first, in their order, then the benchmark ones.
    std::map<std::pair<int, int>, std::pair<std::string, std::vector<std::string>>> by_family;
    size_t n = 0;
    std::set<std::tuple<std::string, int, std::string, std::string>> value_lines;  // (file, line, recipe, field)
    for (const auto& d : ctx.c.drift)
      if (d.doc.lang == lang && d.doc.revision == newest && !d.row.empty() && !d.field.empty())
        value_lines.insert({d.doc.file, d.doc.line, d.subject, d.field});
    for (const auto& d : ctx.c.drift) {
      if (d.doc.lang != lang || d.doc.revision != newest || d.row.empty()) continue;  // prose: not a table's value
      auto it = rows.find({d.doc.file, d.doc.line, d.row});
      if (it == rows.end()) continue;
      const RecipeRow& row = *it->second;
      const bool benchmark = row.kind == RecipeKind::Benchmark;
      const std::string doc_at = d.doc.file + ":" + std::to_string(d.doc.line);
      std::string line;
      if (!d.field.empty()) {  // a value: the row's cell → the code's
        std::map<std::string, std::string> values{{"recipe", d.subject},  {"field", d.field}, {"document", d.doc_cell},
                                                  {"code", d.code_value}, {"doc_at", doc_at}, {"code_at", d.code_at}};
        if (row.pattern) values["pattern"] = row.name;
        // An alias whose function has a line of its own for the same row and
        // field names it: the two lines say one change of one recipe.
        if (auto cv = ctx.code_library.find(d.subject); cv != ctx.code_library.end() && cv->second.recipe &&
                                                        !cv->second.recipe->alias_of.empty() &&
                                                        value_lines.count({d.doc.file, d.doc.line, cv->second.recipe->alias_of, d.field}))
          values["recipe"] += " " + ctx.ui(lang, "changes.alias", {{"function", cv->second.recipe->alias_of}});
        line = ctx.ui(lang, row.pattern ? "changes.pattern_value" : "changes.value", values);
      } else if (benchmark) {  // a benchmark model no exported recipe is of
        line = ctx.ui(lang, "changes.benchmark_dropped", {{"model", d.subject}, {"doc_at", doc_at}});
      } else if (row.pattern) {  // a pattern no exported recipe matches
        line = ctx.ui(lang, "changes.pattern_dropped", {{"pattern", d.subject}, {"doc_at", doc_at}});
      } else if (!d.code_at.empty()) {  // exported, as a benchmark recipe only
        line = ctx.ui(lang, "changes.benchmark_only", {{"recipe", d.subject}, {"doc_at", doc_at}, {"code_at", d.code_at}});
      } else {
        line = ctx.ui(lang, "changes.dropped", {{"recipe", d.subject}, {"doc_at", doc_at}});
      }
      auto& fam = by_family[{benchmark ? 1 : 0, row.family_ordinal}];
      if (fam.first.empty()) fam.first = benchmark ? ctx.ui(lang, "changes.benchmark_family", {{"family", row.family}}) : row.family;
      fam.second.push_back("- " + md_text(line));
      ++n;
    }
    std::vector<std::pair<std::string, std::string>> fm{{"title", yaml_str(ctx.ui(lang, "changes.title"))},
                                                        {"lang", lang},
                                                        {"against-revision", std::to_string(newest)},
                                                        {"changes", std::to_string(n)}};
    size_t added_names = 0;
    for (const auto& l : ctx.code_lines) added_names += l.entry ? 0 : 1;
    fm.emplace_back("listed-by-name", std::to_string(added_names));
    // Quick-reference GPU cells set from the code: one bullet each.
    std::vector<std::string> quick_ref;
    for (const Entity* ent : ctx.entities_of("quick_ref")) {
      const EntityEdition* ed = ctx.newest_edition(*ent, lang);
      const auto q = ed ? quick_ref_gpus(ctx, *ed) : std::nullopt;
      if (!q) continue;
      auto want = ed->parts.find("want");
      auto cell = ed->parts.find("gpus");  // as written
      quick_ref.push_back(
          "- " + md_text(ctx.ui(lang, "changes.quick_ref",
                                {{"want", want == ed->parts.end() ? ent->key : want->second},
                                 {"document", cell == ed->parts.end() ? ctx.range_cell(q->said, lang, "gpus") : trim(cell->second)},
                                 {"code", ctx.range_cell(q->code, lang, "gpus")},
                                 {"recipe", q->recipe},
                                 {"min_gpus", std::to_string(q->min_gpus)},
                                 {"doc_at", ed->prov.file + ":" + std::to_string(ed->prov.line)},
                                 {"code_at", q->code_at}})));
    }
    fm.emplace_back("quick-reference", std::to_string(quick_ref.size()));
    const auto prose = prose_findings(ctx, lang);  // prose the code contradicts: kept as written, listed for a person
    fm.emplace_back("for-a-maintainer", std::to_string(prose.size()));
    if (snap) fm.emplace_back("commit", yaml_str(snap->commit));
    std::string body = front_matter(fm) + "\n# " + md_text(ctx.ui(lang, "changes.title")) + "\n\n" +
                       md_text(ctx.ui(lang, "changes.intro",
                                      {{"revision", std::to_string(newest)},
                                       {"count", std::to_string(n)},
                                       {"commit", snap ? snap->short_commit() : std::string()}})) +
                       "\n";
    // The names the regenerated index lists that no row of the documents
    // named: those a pattern row stood for (now one row each, the pattern's
    // members do not all share its values), and those no row covered.
    std::map<int, std::map<std::string, std::vector<std::string>>> listed;  // ordinal → (pattern row at, or "") → names
    for (const auto& [key, lines] : ctx.code_lines_of)
      for (const CodeLine* l : lines) {
        if (l->entry) continue;
        const std::string by = l->pattern_row ? md_code(l->pattern_row->name) + " (" + l->pattern_row->prov.file + ":" +
                                                    std::to_string(l->pattern_row->prov.line) + ")"
                                              : std::string();
        listed[key.second][by].push_back(md_code(l->name));
      }
    for (const auto& [ordinal, groups] : listed) {
      auto& fam = by_family[{0, ordinal}];
      if (!fam.first.empty()) continue;
      for (const auto& f : ctx.families)
        if (f.index_kind == std::string(to_string(RecipeKind::Library)) + "_index" && f.ordinal == ordinal)
          fam.first = ctx.family_heading(f, lang, false);
    }
    for (const auto& [key, family] : by_family) {
      body += "\n## " + md_text(family.first) + "\n";
      if (!family.second.empty()) body += "\n";
      for (const auto& l : family.second) body += l + "\n";
      if (key.first != 0) continue;
      auto it = listed.find(key.second);
      if (it == listed.end()) continue;
      for (const auto& [by, names] : it->second) {
        // The labels hold a \x01 where the names (code spans, already Markdown) go.
        std::string text = md_text(by.empty() ? ctx.ui(lang, "changes.added", {{"names", "\x01"}})
                                              : ctx.ui(lang, "changes.split", {{"pattern", "\x02"}, {"names", "\x01"}}));
        if (auto at = text.find('\x02'); at != std::string::npos) text.replace(at, 1, by);
        if (auto at = text.find('\x01'); at != std::string::npos) text.replace(at, 1, join(names, ", "));
        body += "\n" + text + "\n";
      }
    }
    if (!quick_ref.empty()) {
      body += "\n## " + md_text(ctx.ui(lang, "changes.quick_ref_title")) + "\n\n";
      for (const auto& l : quick_ref) body += l + "\n";
    }
    if (!prose.empty()) {
      body += "\n## " + md_text(ctx.ui(lang, "changes.prose_title")) + "\n\n" +
              md_text(ctx.ui(lang, "changes.prose_intro",
                             {{"count", std::to_string(prose.size())}, {"commit", snap ? snap->short_commit() : std::string()}})) +
              "\n\n";
      for (size_t i = 0; i < prose.size(); ++i) body += std::to_string(i + 1) + ". " + md_text(prose[i].text) + "\n";
    }
    out[lang_path("CHANGES", lang)] = body;
  }
}

}  // namespace kb::gen
