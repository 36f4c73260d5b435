// Generate stage: references/recipe-index[.<lang>].md, the library and
// benchmark recipe index regenerated from the KB. One table per family, in
// index order. With a code snapshot, a library table lists every name a
// user can pass to --recipe that belongs to the family (Inputs::code_lines),
// one row per name, every value the code's (TP, PP, CP, EP, SP, minimum
// GPUs, sequence, dataset, precision; a recipe that raises is marked), and
// references/recipe-values.tsv gives the path:line@commit of each value.
// Without one, and for benchmark tables, rows are the documents': sorted by
// name (natural order), then mode; values of the newest revision; `*`
// pattern rows kept as written; brace-expanded rows listed one by one with
// a note naming the pattern. Header words come
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

// A benchmark row (one model) as the newest snapshot exports it: the GPU
// counts and hardware its benchmark recipes' names encode, and the range of
// each parallelism size the row states across those recipes' code. A model
// the snapshot does not export keeps the documents' values (drift reports it).
RecipeRow benchmark_from_code(const Inputs& ctx, const RecipeRow& w) {
  RecipeRow r = w;
  if (!ctx.has_code || w.kind != RecipeKind::Benchmark || w.model_key.empty()) return r;
  auto it = ctx.code_benchmark.find(w.model_key);
  if (it == ctx.code_benchmark.end() || it->second.empty()) return r;
  const auto& recipes = it->second;
  auto span = [](const std::vector<long long>& v, bool none_at_one) {
    if (v.empty()) return Range{};
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    if (none_at_one && *hi == 1) return Range{RangeState::None, 0, 0, false, {}};
    return Range{RangeState::Value, *lo, *hi, false, {}};
  };
  std::vector<long long> gpus;
  std::set<std::string> hardware;
  for (const auto& cv : recipes) {
    if (!cv.recipe->gpus.empty() && cv.recipe->gpus.find_first_not_of("0123456789") == std::string::npos)
      gpus.push_back(std::stoll(cv.recipe->gpus));
    if (!cv.recipe->hardware.empty()) hardware.insert(cv.recipe->hardware);
  }
  if (!gpus.empty() && w.gpus.known()) r.gpus = span(gpus, false);
  if (!hardware.empty() && !w.gpu_types.empty()) {
    // The documents' order for the hardware they name, then the others.
    std::vector<std::string> types;
    for (const auto& g : w.gpu_types)
      if (hardware.count(g)) types.push_back(g);
    for (const auto& g : hardware)
      if (std::find(types.begin(), types.end(), g) == types.end()) types.push_back(g);
    r.gpu_types = types;
  }
  const std::pair<Range*, const char*> dims[] = {{&r.tp, "tp"}, {&r.pp, "pp"}, {&r.cp, "cp"}, {&r.ep, "ep"}};
  for (const auto& [rg, field] : dims) {
    if (!rg->known()) continue;
    std::vector<long long> v;
    for (const auto& cv : recipes)
      if (auto f = cv.ints.find(field); f != cv.ints.end()) v.push_back(f->second.first);
    if (v.size() == recipes.size()) *rg = span(v, std::string(field) == "cp" || std::string(field) == "ep");
  }
  return r;
}

std::vector<Line> lines_of(const Inputs& ctx, const Family& f, const std::string& lang) {
  std::vector<Line> out;
  for (const IndexEntry* e : f.entries) {
    if (!e->rows.front()->mentioned_in.empty()) continue;  // known by mention, not a table row
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

namespace {

// A family's table: the columns of `fields` that some row fills, headed in
// the language, each row's cells in that order.
std::string filled_table(const Inputs& ctx, const std::string& lang, const std::vector<std::string>& fields,
                         const std::vector<std::map<std::string, std::string>>& cells) {
  std::vector<std::string> header, shown_fields;
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

// A dimension of the layout as the code sets it: one unused dimension
// (size 1) is written as "not used" where the documents do (CP, EP); a
// value the code does not settle is left blank.
Range code_range(const CodeValues& cv, const char* field, bool none_at_one) {
  auto f = cv.ints.find(field);
  if (f == cv.ints.end()) return Range{};
  return none_at_one && f->second.first == 1 ? Range{RangeState::None, 0, 0, false, {}} : Range::of(f->second.first);
}

// Why a row's GPUs (min) is above its layout's world, in `lang`: the count
// its function's name encodes ("" when it is not above).
std::string min_gpus_note(const Inputs& ctx, const CodeLine& l, const std::string& lang) {
  const auto layout = l.cv->ints.find("layout_gpus"), named = l.cv->ints.find("named_gpus");
  if (layout == l.cv->ints.end() || named == l.cv->ints.end() || named->second.first <= layout->second.first) return {};
  return ctx.ui(lang, "index_min_named", {{"gpus", std::to_string(named->second.first)}, {"layout", std::to_string(layout->second.first)}});
}

// kbq's memory estimate when it does not fit the row on its GPUs (min), in
// `lang`: a note, never the cell's value ("" when it fits or is not judged).
std::string memory_note(const Inputs& ctx, const CodeLine& l, const std::string& lang) {
  if (l.fit != Fit::Above && l.fit != Fit::Never) return {};
  const std::map<std::string, std::string> args{{"gpus", std::to_string(l.memory_gpus)},
                                                {"own", std::to_string(l.cv->ints.at("min_gpus").first)},
                                                {"hardware", ctx.gpu_name(l.hardware)},
                                                {"per_gpu", one_decimal(l.memory_gib)}};
  return ctx.ui(lang, l.fit == Fit::Above ? "index_memory_above" : "index_memory_never", args);
}

// A library family's table from the code: one row per name a user can pass
// to --recipe (Inputs::code_lines), every value the newest snapshot's.
std::string code_family_table(const Inputs& ctx, const std::vector<const CodeLine*>& lines, const std::string& lang, DocState& st,
                              const std::string& link_prefix) {
  const std::vector<std::string> fields{"recipe", "mode",     "tp",      "pp",      "cp",        "ep",
                                        "sp",     "min_gpus", "seq_len", "dataset", "precision", "notes"};
  std::vector<std::map<std::string, std::string>> cells;
  for (const CodeLine* l : lines) {
    std::map<std::string, std::string> m;
    const std::string name_cell = md_code(l->name, true);
    m["recipe"] =
        link_prefix.empty() || !l->entry ? name_cell : "[" + name_cell + "](" + link_prefix + lang_path(l->entry->slug, lang) + ")";
    m["mode"] = md_text(ctx.mode_word(lang, {l->task}), true);
    m["tp"] = md_text(ctx.range_cell(code_range(*l->cv, "tp", false), lang, "tp"), true);
    m["pp"] = md_text(ctx.range_cell(code_range(*l->cv, "pp", false), lang, "pp"), true);
    m["cp"] = md_text(ctx.range_cell(code_range(*l->cv, "cp", true), lang, "cp"), true);
    m["ep"] = md_text(ctx.range_cell(code_range(*l->cv, "ep", true), lang, "ep"), true);
    if (l->cv->sp) m["sp"] = md_text(ctx.cell_word(lang, "sp", l->cv->sp->first ? "true" : "none"), true);
    m["min_gpus"] = md_text(ctx.range_cell(code_range(*l->cv, "min_gpus", false), lang, "min_gpus"), true);
    if (auto seq = l->cv->ints.find("seq_length"); seq != l->cv->ints.end()) {
      RecipeRow r;
      r.seq_len = static_cast<long>(seq->second.first);
      m["seq_len"] = md_text(ctx.seq_cell(r), true);
    }
    m["dataset"] = md_text(l->dataset, true);
    m["precision"] = md_text(l->precision, true);
    std::vector<std::string> notes;
    if (l->entry && l->doc_row) {
      const RecipeRow* shown = l->doc_row;
      const Choice ch = ctx.row_choice(*l->entry, *l->doc_row, lang, &shown);
      st.use(shown->prov);
      // A row expanded from a brace pattern states its notes for every
      // member of the pattern, which need not all hold them: not shown.
      if (!shown->notes.empty() && shown->expanded_from.empty())
        notes.push_back((ch.fallback.empty() ? std::string() : ctx.marker(lang, ch.fallback) + " ") + md_text(shown->notes, true));
    }
    if (!l->raises.empty()) notes.push_back(md_text(ctx.ui(lang, "index_raises", {{"exception", l->raises}}), true));
    for (const std::string& why : {min_gpus_note(ctx, *l, lang), memory_note(ctx, *l, lang)})
      if (!why.empty()) notes.push_back(md_text(why, true));
    m["notes"] = join(notes, "; ");
    cells.push_back(std::move(m));
  }
  return filled_table(ctx, lang, fields, cells);
}

}  // namespace

std::string family_table(const Inputs& ctx, const Family& f, const std::string& lang, DocState& st, const std::string& link_prefix) {
  if (ctx.has_code && f.index_kind == std::string(to_string(RecipeKind::Library)) + "_index") {
    auto it = ctx.code_lines_of.find({f.index_kind, f.ordinal});
    return it == ctx.code_lines_of.end() ? std::string() : code_family_table(ctx, it->second, lang, st, link_prefix);
  }
  const auto lines = lines_of(ctx, f, lang);
  if (lines.empty()) return {};
  const bool benchmark = lines.front().entry->kind == RecipeKind::Benchmark;
  const std::vector<std::string> fields =
      benchmark ? std::vector<std::string>{"model", "gpus", "tp", "pp", "vp", "cp", "ep", "gpu_types", "features"}
                : std::vector<std::string>{"recipe", "mode", "tp", "pp", "vp", "cp", "ep", "sp", "min_gpus", "seq_len", "sizes", "notes"};
  std::vector<std::map<std::string, std::string>> cells;
  for (const auto& line : lines) {
    const RecipeRow& resolved = *line.rows.front();
    const RecipeRow fixed = benchmark_from_code(ctx, resolved);
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
  return filled_table(ctx, lang, fields, cells);
}

void write_index(const Inputs& ctx, OutputFiles& out) {
  for (const auto& lang : ctx.languages) {
    DocState st;
    std::string body = "# " + md_text(ctx.ui(lang, "index_title")) + "\n\n" + md_text(ctx.ui(lang, "index_intro")) + "\n";
    for (const auto& index_kind : ctx.index_kinds) {
      body += "\n## " + md_text(ctx.heading(lang, index_kind)) + "\n";
      for (const Entity* p : prose_of(ctx, index_kind)) body += "\n" + paragraph(ctx, *p, lang, st) + "\n";
      if (ctx.has_code && index_kind == std::string(to_string(RecipeKind::Library)) + "_index")
        body += "\n" + md_text(ctx.ui(lang, "index_code", {{"commit", ctx.c.code.newest()->short_commit()}})) + "\n\n" +
                md_text(ctx.ui(lang, "index_min_intro")) + "\n";
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
  if (!ctx.has_code) return;
  // Where each value of the library tables is set: one row per (recipe, field).
  const CodeSnapshot* snap = ctx.c.code.newest();
  auto cell = [](std::string v) {
    for (char& ch : v)
      if (ch == '\t' || ch == '\n' || ch == '\r') ch = ' ';
    return v;
  };
  std::string tsv = "# " + ctx.ui("", "index_values_header", {{"commit", snap->short_commit()}}) + "\nrecipe\tfield\tvalue\tat\n";
  for (const auto& l : ctx.code_lines) {
    auto row = [&](const std::string& field, const std::string& value, const std::string& at) {
      tsv += cell(l.name) + "\t" + field + "\t" + cell(value) + "\t" + cell(at) + "\n";
    };
    row("mode", l.task, l.defined_at);
    for (const char* f : {"tp", "pp", "cp", "ep", "etp", "layout_gpus", "named_gpus", "min_gpus", "seq_length"})
      if (auto it = l.cv->ints.find(f); it != l.cv->ints.end()) row(f, std::to_string(it->second.first), it->second.second);
    // kbq's memory estimate where it does not fit the code's minimum: its own
    // field, not the code's, cited to kbq's model rather than to a code line.
    if (l.fit == Fit::Above || l.fit == Fit::Never)
      row("memory_estimate_gpus", l.fit == Fit::Above ? std::to_string(l.memory_gpus) : "none",
          ctx.ui("", "index_values_memory", {{"hardware", l.hardware}}));
    if (l.cv->sp) row("sp", l.cv->sp->first ? "true" : "false", l.cv->sp->second);
    if (!l.dataset.empty()) row("dataset", l.dataset, l.dataset_at);
    if (!l.precision.empty()) row("precision", l.precision, l.precision_at);
    if (!l.raises.empty()) row("raises", l.raises, l.raises_at);
  }
  // The benchmark rows' values: each exported benchmark recipe of a model.
  for (const auto& [model, recipes] : ctx.code_benchmark)
    for (const auto& cv : recipes) {
      const CodeRecipe& r = *cv.recipe;
      auto row = [&](const std::string& field, const std::string& value, const std::string& at) {
        tsv += cell(r.name) + "\t" + field + "\t" + cell(value) + "\t" + cell(at) + "\n";
      };
      if (!r.gpus.empty()) row("gpus", r.gpus, snap->cite(r.exported_at));
      if (!r.hardware.empty()) row("hardware", r.hardware, snap->cite(r.exported_at));
      for (const char* f : {"tp", "pp", "cp", "ep"})
        if (auto it = cv.ints.find(f); it != cv.ints.end()) row(f, std::to_string(it->second.first), it->second.second);
    }
  out["references/recipe-values.tsv"] = tsv;
}

}  // namespace kb::gen
