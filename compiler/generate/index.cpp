// Generate stage: references/recipe-index[.<lang>].md, the library and
// benchmark recipe index regenerated from the KB. One table per family, in
// index order; rows sorted by name (natural order), then mode; values of
// the newest revision; `*` pattern rows kept as written; brace-expanded
// rows listed one by one with a note naming the pattern. Header words come
// from data/columns.tsv, cell words from data/cells.tsv, family headings
// from the aligned family entities (with a fallback marker where a
// language has none).
#include <algorithm>

#include "base/text.hpp"
#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

namespace {

// One displayed table line: one or more modes of an entry that show the same values.
struct Line {
  const IndexEntry* entry = nullptr;
  std::vector<const RecipeRow*> rows;  // the winning rows it shows (one per mode)
};

bool same_cells(const RecipeRow& a, const RecipeRow& b) {
  auto eq = [](const Range& x, const Range& y) { return x == y; };
  return eq(a.tp, b.tp) && eq(a.pp, b.pp) && eq(a.cp, b.cp) && eq(a.ep, b.ep) && eq(a.vp, b.vp) && eq(a.gpus, b.gpus) && a.sp == b.sp &&
         a.seq_len == b.seq_len && a.sizes == b.sizes && a.notes == b.notes && a.expanded_from == b.expanded_from &&
         a.gpu_types == b.gpu_types;
}

// A library name (not a pattern) that the newest snapshot does not export
// is not listed: it would fail at start-up.
bool dropped(const Inputs& ctx, const IndexEntry& e) {
  return ctx.has_code && e.kind == RecipeKind::Library && !e.rows.front()->pattern && !ctx.code_library.count(e.name);
}

// The row's stated values as the code sets them, for an exact library name
// of the newest snapshot (cells the row leaves blank stay blank, so a
// family's columns do not change); pattern and benchmark rows as resolved.
RecipeRow from_code(const Inputs& ctx, const RecipeRow& w) {
  RecipeRow r = w;
  if (w.kind != RecipeKind::Library || w.pattern) return r;
  auto it = ctx.code_library.find(w.name);
  if (it == ctx.code_library.end()) return r;
  const CodeValues& cv = it->second;
  // One unused dimension (size 1) is written as "not used" where the
  // documents do (CP, EP); TP, PP and GPU counts as the number.
  auto set = [&](Range& rg, const char* field, bool none_at_one) {
    auto f = cv.ints.find(field);
    if (!rg.known() || f == cv.ints.end()) return;
    rg = none_at_one && f->second.first == 1 ? Range{RangeState::None, 0, 0, false, {}} : Range::of(f->second.first);
  };
  set(r.tp, "tp", false);
  set(r.pp, "pp", false);
  set(r.cp, "cp", true);
  set(r.ep, "ep", true);
  set(r.gpus, "min_gpus", false);
  if (r.sp && cv.sp) r.sp = cv.sp->first;
  if (r.seq_len > 0)
    if (auto f = cv.ints.find("seq_length"); f != cv.ints.end()) r.seq_len = static_cast<long>(f->second.first);
  return r;
}

std::vector<Line> lines_of(const Inputs& ctx, const Family& f, const std::string& lang) {
  std::vector<Line> out;
  for (const IndexEntry* e : f.entries) {
    if (!e->rows.front()->mentioned_in.empty()) continue;  // known by mention, not a table row
    if (dropped(ctx, *e)) continue;
    // All modes on one line when their values agree and one cell word says them all.
    bool merge = e->rows.size() > 1;
    for (const auto* r : e->rows) merge = merge && same_cells(*r, *e->rows.front());
    if (merge && ctx.mode_word(lang, e->modes).empty()) merge = false;
    if (merge) {
      out.push_back({e, e->rows});
    } else {
      for (const auto* r : e->rows) out.push_back({e, {r}});
    }
  }
  return out;
}

}  // namespace

std::vector<const Entity*> prose_of(const Inputs& ctx, const std::string& base) {
  std::vector<std::pair<int, const Entity*>> found;
  for (const auto& e : ctx.c.resolved.entities) {
    if (e.kind != "prose" || e.superseded || !starts_with(e.key, base + "/")) continue;
    const std::string rest = e.key.substr(base.size() + 1);
    if (rest.empty() || rest.find_first_not_of("0123456789") != std::string::npos) continue;
    found.emplace_back(std::atoi(rest.c_str()), &e);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const Entity*> out;
  for (const auto& [_, e] : found) out.push_back(e);
  return out;
}

std::string paragraph(const Inputs& ctx, const Entity& e, const std::string& lang, DocState& st) {
  const Choice ch = ctx.choose(e, lang);
  st.use(ch.ed->prov);
  std::string text = md_text(ch.ed->text);
  if (!ch.fallback.empty() && !ctx.neutral(e, ch.ed->text)) text = ctx.marker(lang, ch.fallback) + " " + text;
  return text;
}

std::string family_table(const Inputs& ctx, const Family& f, const std::string& lang, DocState& st, const std::string& link_prefix) {
  const auto lines = lines_of(ctx, f, lang);
  if (lines.empty()) return {};
  const bool benchmark = lines.front().entry->kind == RecipeKind::Benchmark;
  const std::vector<std::string> fields =
      benchmark ? std::vector<std::string>{"model", "gpus", "tp", "pp", "vp", "cp", "ep", "gpu_types", "features"}
                : std::vector<std::string>{"recipe", "mode", "tp", "pp", "vp", "cp", "ep", "sp", "min_gpus", "seq_len", "sizes", "notes"};
  std::vector<std::map<std::string, std::string>> cells;
  for (const auto& line : lines) {
    const RecipeRow& resolved = *line.rows.front();
    const RecipeRow fixed = from_code(ctx, resolved);
    const RecipeRow& w = fixed;
    st.use(w.prov);
    const RecipeRow* shown = &w;
    const Choice ch = ctx.row_choice(*line.entry, resolved, lang, &shown);
    st.use(shown->prov);
    std::map<std::string, std::string> m;
    const std::string name_cell = benchmark ? md_text(shown->name, true) : md_code(w.name, true);
    m[benchmark ? "model" : "recipe"] =
        link_prefix.empty() ? name_cell : "[" + name_cell + "](" + link_prefix + lang_path(line.entry->slug, lang) + ")";
    std::vector<std::string> modes;
    for (const auto* r : line.rows) modes.push_back(r->mode);
    m["mode"] = ctx.mode_word(lang, modes);
    m["tp"] = ctx.range_cell(w.tp, lang, "tp");
    m["pp"] = ctx.range_cell(w.pp, lang, "pp");
    m["vp"] = ctx.range_cell(w.vp, lang, "vp");
    m["cp"] = ctx.range_cell(w.cp, lang, "cp");
    m["ep"] = ctx.range_cell(w.ep, lang, "ep");
    if (w.sp) m["sp"] = ctx.cell_word(lang, "sp", *w.sp ? "true" : "none");
    m[benchmark ? "gpus" : "min_gpus"] = ctx.range_cell(w.gpus, lang, benchmark ? "gpus" : "min_gpus");
    m["seq_len"] = md_text(ctx.seq_cell(w), true);
    m["sizes"] = md_text(shown->sizes, true);
    if (benchmark) m["gpu_types"] = md_text(ctx.gpu_types_cell(w, lang), true);
    std::vector<std::string> notes;
    if (!shown->notes.empty())
      notes.push_back((ch.fallback.empty() ? std::string() : ctx.marker(lang, ch.fallback) + " ") + md_text(shown->notes, true));
    if (!w.expanded_from.empty()) {
      std::string note = md_text(ctx.ui(lang, "expanded_from", {{"pattern", "\x01"}}), true);
      const auto at = note.find('\x01');
      if (at != std::string::npos) note.replace(at, 1, md_code(w.expanded_from, true));
      notes.push_back(note);
    }
    m[benchmark ? "features" : "notes"] = join(notes, "; ");
    for (auto& [field, v] : m)
      if (field != "recipe" && field != "model" && field != "notes" && field != "features" && field != "seq_len" && field != "sizes" &&
          field != "gpu_types")
        v = md_text(v, true);
    cells.push_back(std::move(m));
  }
  std::vector<std::string> header;
  std::vector<std::string> shown_fields;
  for (const auto& field : fields) {
    const bool any = std::any_of(cells.begin(), cells.end(), [&](const auto& m) {
      auto it = m.find(field);
      return it != m.end() && !it->second.empty();
    });
    if (!any) continue;
    shown_fields.push_back(field);
    header.push_back(md_text(ctx.header(lang, field), true));
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : cells) {
    std::vector<std::string> r;
    for (const auto& field : shown_fields) {
      auto it = m.find(field);
      r.push_back(it == m.end() ? std::string() : it->second);
    }
    rows.push_back(std::move(r));
  }
  return md_table(header, rows);
}

void write_index(const Inputs& ctx, OutputFiles& out) {
  for (const auto& lang : ctx.languages) {
    DocState st;
    std::string body = "# " + md_text(ctx.ui(lang, "index_title")) + "\n\n" + md_text(ctx.ui(lang, "index_intro")) + "\n";
    for (const auto& index_kind : ctx.index_kinds) {
      body += "\n## " + md_text(ctx.heading(lang, index_kind)) + "\n";
      for (const Entity* p : prose_of(ctx, index_kind)) body += "\n" + paragraph(ctx, *p, lang, st) + "\n";
      for (const auto& f : ctx.families) {
        if (f.index_kind != index_kind) continue;
        st.use(ctx.choose(*f.entity, lang).ed->prov);
        body += "\n### " + ctx.family_heading(f, lang, true) + "\n";
        const std::string table = family_table(ctx, f, lang, st);
        if (!table.empty()) body += "\n" + table + "\n";
        for (const Entity* p : prose_of(ctx, index_kind + "/" + std::to_string(f.ordinal)))
          body += "\n" + paragraph(ctx, *p, lang, st) + "\n";
      }
    }
    const std::string fm = front_matter(
        {{"lang", lang}, {"revision", std::to_string(st.revision)}, {"generated-from", yaml_list({st.sources.begin(), st.sources.end()})}});
    out[lang_path("references/recipe-index", lang)] = fm + "\n" + body;
  }
}

}  // namespace kb::gen
