// Generate stage: translation-status.md, what a docs maintainer translates
// next. Per language: the entities it has no text for (they fall back in
// the generated editions), the stale ones (its newest edition is an older
// revision and a fact differs), paragraphs not used because their section
// changed shape, and every conflict its editions lost. Then the renamed
// dataset presets and what the regenerated editions leave out. Labels come
// from data/ui.tsv (en: the file is written for the maintainer).
#include <algorithm>

#include "base/text.hpp"
#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

namespace {

bool has_lang(const Entity& e, const std::string& lang) {
  return std::any_of(e.editions.begin(), e.editions.end(), [&](const EntityEdition* x) { return x->prov.lang == lang; });
}

// What one language lacks: table rows of its sections in the file.
struct LangStatus {
  std::vector<std::vector<std::string>> missing, stale, realigned, conflicts;
};

std::string cell(const std::string& s) { return md_text(s, true); }
std::string code(const std::string& s) { return md_code(s, true); }

// Writes translation-status.md: per-language tables, then renames and what
// is left out. Entities are listed by kind, then key in natural order.
class StatusWriter {
 public:
  explicit StatusWriter(const Inputs& ctx) : ctx_(ctx) {
    for (const auto& e : ctx_.c.extracted.entities)
      section_revision_[e.section_kind] = std::max(section_revision_[e.section_kind], e.prov.revision);
    for (const auto& e : ctx_.c.resolved.entities) entities_.push_back(&e);
    std::stable_sort(entities_.begin(), entities_.end(), [](const Entity* a, const Entity* b) {
      if (a->kind != b->kind) return a->kind < b->kind;
      return natural_less(a->key, b->key);
    });
  }

  std::string run() const {
    std::map<std::string, LangStatus> by_lang;
    for (const auto& lang : ctx_.languages) by_lang[lang] = lang_status(lang);
    std::string body = "# " + md_text(ui("status.title")) + "\n\n" + md_text(ui("status.intro")) + "\n";
    body += summary(by_lang);
    for (const auto& lang : ctx_.languages) body += lang_sections(lang, by_lang.at(lang));
    body += renames();
    body += left_out();
    return body;
  }

 private:
  // The page is written in the language the skill is written in
  // (planner.tsv base_language): the maintainers'.
  const std::string& base() const { return ctx_.c.vocab.base_language; }
  std::string ui(const std::string& key, const std::map<std::string, std::string>& args = {}) const { return ctx_.ui(base(), key, args); }

  // "revision N (lang, file:line)": the edition whose value won.
  std::string won(const Provenance& p) const {
    return ui("status.won",
              {{"revision", std::to_string(p.revision)}, {"lang", p.lang}, {"file", p.file}, {"line", std::to_string(p.line)}});
  }

  // Newest revision of a section kind, to tell removed entities (as resolve does).
  int newest(const std::string& section_kind) const {
    const auto it = section_revision_.find(section_kind);
    return it == section_revision_.end() ? 0 : it->second;
  }

  bool removed(const Entity& e) const {
    return !e.superseded && e.kind != "prose" && e.kind != "code" && e.winner().prov.revision < newest(e.winner().section_kind);
  }

  // The entities `lang` has no text for, is stale on or realigned away
  // from, and the conflicts its editions lost.
  LangStatus lang_status(const std::string& lang) const {
    LangStatus s;
    for (const Entity* ep : entities_) {
      const Entity& e = *ep;
      if (e.superseded || removed(e)) continue;
      const auto& w = e.winner();
      const bool listed_missing = std::find(e.missing.begin(), e.missing.end(), lang) != e.missing.end();
      if (listed_missing || !has_lang(e, lang)) {
        s.missing.push_back({code(e.kind), code(e.key), cell(first_words(w.text, 60))});
        continue;
      }
      const EntityEdition* own = nullptr;
      for (const auto* x : e.editions)
        if (x->prov.lang == lang) {
          own = x;
          break;
        }
      if (ctx_.stale(e, *own)) {
        std::vector<std::string> fields;
        for (const auto& f : ctx_.stale_fields(e, *own)) fields.push_back(code(f));
        s.stale.push_back({code(e.kind), code(e.key), std::to_string(own->prov.revision) + " (" + cell(where(own->prov)) + ")",
                           join(fields, ", "), cell(won(w.prov))});
      } else if (ctx_.choose(e, lang).ed->prov.lang != lang) {
        s.realigned.push_back({code(e.kind), code(e.key), std::to_string(own->prov.revision) + " (" + cell(where(own->prov)) + ")",
                               cell(first_words(own->text, 60)), cell(won(w.prov))});
      }
    }
    for (const auto& k : ctx_.c.resolved.conflicts) {
      const auto& w = k.values.front();
      for (size_t i = 1; i < k.values.size(); ++i) {
        const auto& v = k.values[i];
        if (v.prov.lang != lang) continue;
        s.conflicts.push_back({code(k.entity_kind), code(k.entity_key), code(k.field), cell(v.value) + " (" + cell(where(v.prov)) + ")",
                               cell(w.value), cell(won(w.prov))});
      }
    }
    return s;
  }

  // The summary table: one row of counts per language.
  std::string summary(const std::map<std::string, LangStatus>& by_lang) const {
    std::string body = "\n## " + md_text(ui("status.summary")) + "\n\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& lang : ctx_.languages) {
      const auto& s = by_lang.at(lang);
      rows.push_back({cell(ctx_.lang_name(base(), lang) + " (" + lang + ")"), std::to_string(s.missing.size()),
                      std::to_string(s.stale.size()), std::to_string(s.realigned.size()), std::to_string(s.conflicts.size())});
    }
    return body +
           md_table({cell(ui("status.language")), cell(ui("status.missing")), cell(ui("status.stale")), cell(ui("status.realigned")),
                     cell(ui("status.conflicts"))},
                    rows) +
           "\n";
  }

  // A titled section with its row count: the table, or "none".
  std::string section(int level, const std::string& title, const std::vector<std::string>& header,
                      const std::vector<std::vector<std::string>>& rows) const {
    std::string s =
        "\n" + std::string(static_cast<size_t>(level), '#') + " " + md_text(title) + " (" + std::to_string(rows.size()) + ")\n\n";
    s += rows.empty() ? md_text(ui("status.none")) : md_table(header, rows);
    return s + "\n";
  }

  // The header "kind, key" followed by the labels of `keys`.
  std::vector<std::string> with(const std::vector<std::string>& keys) const {
    std::vector<std::string> h = {cell(ui("status.col.kind")), cell(ui("status.col.key"))};
    for (const auto& k : keys) h.push_back(cell(ui(k)));
    return h;
  }

  // A language's four sections.
  std::string lang_sections(const std::string& lang, const LangStatus& s) const {
    std::string body = "\n## " + md_text(ctx_.lang_name(base(), lang) + " (" + lang + ")") + "\n";
    body += section(3, ui("status.missing"), with({"status.col.text"}), s.missing);
    body += section(3, ui("status.stale"), with({"status.col.revision", "status.col.field", "status.col.won"}), s.stale);
    body += section(3, ui("status.realigned"), with({"status.col.revision", "status.col.text", "status.col.won"}), s.realigned);
    body +=
        section(3, ui("status.conflicts"), with({"status.col.field", "status.col.old", "status.col.new", "status.col.won"}), s.conflicts);
    return body;
  }

  // Renamed dataset presets: one row per (old, new), with where the old name was read.
  std::string renames() const {
    std::map<std::pair<std::string, std::string>, std::pair<std::set<std::string>, std::set<std::string>>> by_pair;
    for (const auto& r : ctx_.c.resolved.renames) {
      auto& [olds, news] = by_pair[{r.from, r.to}];
      olds.insert(where(r.old_prov));
      news.insert(where(r.new_prov));
    }
    auto natural_list = [](const std::set<std::string>& s) {
      std::vector<std::string> v(s.begin(), s.end());
      std::sort(v.begin(), v.end(), natural_less);
      return join(v, ", ");
    };
    std::vector<std::vector<std::string>> rows;
    for (const auto& [k, v] : by_pair)
      rows.push_back({code(k.first), code(k.second), cell(natural_list(v.first)), cell(natural_list(v.second))});
    return section(2, ui("status.renames"),
                   {cell(ui("status.col.old")), cell(ui("status.col.new")), cell(ui("status.col.source")), cell(ui("status.col.won"))},
                   rows);
  }

  // What the regenerated editions leave out: superseded and removed entities.
  std::string left_out() const {
    std::vector<std::vector<std::string>> rows;
    for (const Entity* ep : entities_) {
      const Entity& e = *ep;
      const auto& w = e.winner();
      std::string reason;
      if (e.superseded) {
        const auto& t = ctx_.c.vocab.section_kinds;
        std::string by;
        for (const auto& row : t.rows)
          if (t.get(row, "kind") == w.section_kind) by = ctx_.heading(base(), t.get(row, "replaced_by"));
        reason = ui("status.superseded", {{"by", by}});
      } else if (removed(e)) {
        reason = ui("status.removed", {{"revision", std::to_string(newest(w.section_kind))}});
      } else {
        continue;
      }
      rows.push_back({code(e.kind), code(e.key), cell(reason), cell(where(w.prov))});
    }
    return section(2, ui("status.left_out"), with({"status.col.reason", "status.col.source"}), rows);
  }

  const Inputs& ctx_;
  std::map<std::string, int> section_revision_;  // newest revision of each section kind
  std::vector<const Entity*> entities_;          // by kind, then key in natural order (pitfall 2 before pitfall 10)
};

}  // namespace

void write_status(const Inputs& ctx, OutputFiles& out) { out["translation-status.md"] = StatusWriter(ctx).run(); }

}  // namespace kb::gen
