// Generate stage: site/, what documentation sites ingest.
//   index[.<lang>].md             families of each index, linked
//   families/<slug>[.<lang>].md   one page per family: its recipe table, linked
//   recipes/<slug>[.<lang>].md    one page per recipe: front matter (title,
//                                 family, mode, kind, lang, tags), facts,
//                                 launch command, sizing rules, sources
//   kb.json                       the KB as JSON (`kbc dump --format json`), docs/kb.schema.json
//   recipe-search.json            the search page's recipe index (search.js)
//   search-records.json           one record per recipe, rule, pitfall and
//                                 quick-reference row per language (DocSearch shape)
// English pages carry no language suffix (the mkdocs-static-i18n "suffix"
// layout); every page states its lang in front matter.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <variant>

#include "base/kinds.hpp"
#include "base/sqlite.hpp"
#include "base/text.hpp"
#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

namespace {

using json = nlohmann::ordered_json;

std::string plain_family(const Inputs& ctx, const Family* f, const std::string& lang) {
  return f && f->entity ? ctx.choose(*f->entity, lang).ed->text : std::string();
}

struct Page {
  std::string title;
  std::vector<std::pair<std::string, std::string>> fm;
  std::string body;
};

std::string render(const Page& p) { return front_matter(p.fm) + "\n" + p.body; }

// A page's Sphinx document name relative to the page that lists it: its
// path without ".md".
std::string docname(const std::string& stem, const std::string& lang) {
  const std::string path = lang_path(stem, lang);
  return path.substr(0, path.size() - 3);
}

// A hidden MyST toctree: how Sphinx learns the page tree (docs/site.md);
// the page's own links stay its visible table of contents.
std::string toctree(const std::vector<std::string>& docs) {
  if (docs.empty()) return {};
  return "\n```{toctree}\n:hidden:\n:maxdepth: 1\n\n" + join(docs, "\n") + "\n```\n";
}

class SiteWriter {
 public:
  // Every recipe page runs the same few statements: prepared once.
  SiteWriter(const Inputs& ctx, OutputFiles& out) : ctx_(ctx), out_(out), db_(ctx.kb_path, Db::Mode::ReadOnly) { db_.cache_statements(); }

  void run() {
    for (const auto& lang : ctx_.languages) {
      index_page(lang);
      for (const auto& f : ctx_.families) family_page(f, lang);
      for (const auto& e : ctx_.entries) recipe_page(e, lang);
      records(lang);
    }
    out_["site/search-records.json"] = records_.dump(1) + "\n";
    out_["site/recipe-search.json"] = recipe_search();
    out_["site/kb.json"] = kb_json();
  }

 private:
  std::string kind_of(const Family& f) const { return f.entries.empty() ? f.index_kind : std::string(to_string(f.entries.front()->kind)); }

  // The search page's recipe index (docs/site.md, "Search"): per language,
  // every recipe page with the words that name it: the parts of its name
  // and the words of its mode(s) in that language (data/lexicon.tsv).
  // site/static/search.js ranks a question's words against them.
  std::string recipe_search() const {
    nlohmann::ordered_json all;
    for (const auto& lang : ctx_.languages) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& e : ctx_.entries) {
        std::vector<std::string> parts;
        for (const auto& p : split(e.name, '_'))
          if (!p.empty()) parts.push_back(fold(p));
        std::vector<std::string> mode_words;
        for (const auto& m : e.modes) {
          if (m.empty()) continue;
          Stmt st(db_, "SELECT word FROM lexicon WHERE kind = 'mode' AND value = ? AND (lang = ? OR lang = '*') ORDER BY line");
          st.bind(1, m).bind(2, lang);
          while (st.step())
            if (std::find(mode_words.begin(), mode_words.end(), fold(st.text(0))) == mode_words.end())
              mode_words.push_back(fold(st.text(0)));
        }
        list.push_back(
            {{"name", e.name}, {"page", docname("site/recipes/" + e.slug, lang) + ".html"}, {"parts", parts}, {"modes", mode_words}});
      }
      all[lang] = list;
    }
    return all.dump(1) + "\n";
  }

  void index_page(const std::string& lang) {
    const std::string title = ctx_.ui(lang, "site_title");
    std::string body = "# " + md_text(title) + "\n\n" + md_text(ctx_.ui(lang, "site_intro")) + "\n";
    for (const auto& index_kind : ctx_.index_kinds) {
      body += "\n## " + md_text(ctx_.heading(lang, index_kind)) + "\n\n";
      std::vector<std::string> items;
      for (const auto& f : ctx_.families)
        if (f.index_kind == index_kind)
          items.push_back("- [" + ctx_.family_heading(f, lang, true) + "](" + lang_path("families/" + f.slug, lang) + ")");
      body += join(items, "\n") + "\n";
    }
    // The other pages of the site: the recipe finder, the skill and its
    // recipe index, the drift report, the changelog against the published
    // edition, the translation status.
    body += "\n## " + md_text(ctx_.ui(lang, "site_more")) + "\n\n";
    const std::vector<std::pair<std::string, std::string>> more = {
        {lang_path("finder", lang), ctx_.ui(lang, "finder.title")},
        {"../skill/SKILL." + lang + ".md", ctx_.ui(lang, "site_skill")},
        {"../" + lang_path("references/recipe-index", lang), ctx_.ui(lang, "index_title")},
        {"../" + lang_path("drift", lang), ctx_.ui(lang, "drift.title")},
        {"../" + lang_path("CHANGES", lang), ctx_.ui(lang, "changes.title")},
        {"../translation-status.md", ctx_.ui(lang, "status.title")}};
    std::vector<std::string> docs, items;
    for (const auto& [path, label] : more) items.push_back("- [" + md_text(label, true) + "](" + path + ")");
    body += join(items, "\n") + "\n";
    for (const auto& f : ctx_.families) docs.push_back(docname("families/" + f.slug, lang));
    // Recipes no family lists are in the tree too.
    for (const auto& e : ctx_.entries)
      if (!ctx_.family_of(e)) docs.push_back(docname("recipes/" + e.slug, lang));
    for (const auto& [path, label] : more) docs.push_back(path.substr(0, path.size() - 3));
    body += toctree(docs);
    out_[lang_path("site/index", lang)] = render({title, {{"title", yaml_str(title)}, {"lang", lang}, {"tags", yaml_list({})}}, body});
  }

  void family_page(const Family& f, const std::string& lang) {
    DocState st;
    const std::string title = plain_family(ctx_, &f, lang);
    std::string body = "# " + ctx_.family_heading(f, lang, true) + "\n";
    const std::string table = family_table(ctx_, f, lang, st, "../recipes/");
    if (!table.empty()) body += "\n" + table + "\n";
    for (const Entity* p : prose_of(ctx_, f.index_kind + "/" + std::to_string(f.ordinal)))
      body += "\n" + paragraph(ctx_, *p, lang, st) + "\n";
    std::vector<std::string> docs;
    for (const IndexEntry* e : f.entries) docs.push_back(docname("../recipes/" + e->slug, lang));
    body += toctree(docs);
    out_[lang_path("site/families/" + f.slug, lang)] =
        render({title, {{"title", yaml_str(title)}, {"kind", kind_of(f)}, {"lang", lang}, {"tags", yaml_list({kind_of(f)})}}, body});
  }

  std::vector<std::string> tags_of(const IndexEntry& e) const {
    std::vector<std::string> tags{std::string(to_string(e.kind))};
    for (const auto& m : e.modes)
      if (!m.empty()) tags.push_back(m);
    const RecipeRow& w = *e.rows.front();
    if (!w.model_key.empty()) tags.push_back(w.model_key);
    for (const auto& g : w.gpu_types) tags.push_back(g);
    return tags;
  }

  // Display name of an entry in a language (benchmark models are written per language).
  std::string display_name(const IndexEntry& e, const std::string& lang) const {
    if (e.kind != RecipeKind::Benchmark) return e.name;
    const RecipeRow* shown = e.rows.front();
    ctx_.row_choice(e, *e.rows.front(), lang, &shown);
    return shown->name;
  }

  // Facts as (field label, cell per row) lines.
  std::vector<std::vector<std::string>> facts(const IndexEntry& e, const std::string& lang, const Family* fam) const {
    std::vector<std::vector<std::string>> lines;
    const bool bench = e.kind == RecipeKind::Benchmark;
    auto add = [&](const std::string& label, const std::vector<std::string>& cells) {
      if (std::all_of(cells.begin(), cells.end(), [](const std::string& s) { return s.empty(); })) return;
      std::vector<std::string> l{md_text(label, true)};
      l.insert(l.end(), cells.begin(), cells.end());
      lines.push_back(std::move(l));
    };
    auto each = [&](auto fn) {
      std::vector<std::string> cells;
      for (const auto* r : e.rows) cells.push_back(fn(*r));
      return cells;
    };
    const size_t n = e.rows.size();
    add(ctx_.ui(lang, "kind"), std::vector<std::string>(n, md_text(ctx_.ui(lang, "kind." + std::string(to_string(e.kind))), true)));
    if (fam) add(ctx_.ui(lang, "family"), std::vector<std::string>(n, ctx_.family_heading(*fam, lang, true)));
    for (const char* f : {"tp", "pp", "vp", "cp", "ep"})
      add(ctx_.header(lang, f), each([&](const RecipeRow& r) {
            const Range& rg = std::string(f) == "tp"   ? r.tp
                              : std::string(f) == "pp" ? r.pp
                              : std::string(f) == "vp" ? r.vp
                              : std::string(f) == "cp" ? r.cp
                                                       : r.ep;
            return md_text(ctx_.range_cell(rg, lang, f), true);
          }));
    add(ctx_.header(lang, "sp"), each([&](const RecipeRow& r) {
          return r.sp ? md_text(ctx_.cell_word(lang, "sp", *r.sp ? "true" : "none"), true) : std::string();
        }));
    const std::string gf = bench ? "gpus" : "min_gpus";
    add(ctx_.header(lang, gf), each([&](const RecipeRow& r) { return md_text(ctx_.range_cell(r.gpus, lang, gf), true); }));
    add(ctx_.header(lang, "seq_len"), each([&](const RecipeRow& r) { return md_text(ctx_.seq_cell(r), true); }));
    add(ctx_.header(lang, "sizes"), each([&](const RecipeRow& r) { return md_text(r.sizes, true); }));
    if (bench) add(ctx_.header(lang, "gpu_types"), each([&](const RecipeRow& r) { return md_text(ctx_.gpu_types_cell(r, lang), true); }));
    add(ctx_.header(lang, bench ? "features" : "notes"), each([&](const RecipeRow& r) {
          const RecipeRow* shown = &r;
          const Choice ch = ctx_.row_choice(e, r, lang, &shown);
          if (shown->notes.empty()) return std::string();
          return (ch.fallback.empty() ? std::string() : ctx_.marker(lang, ch.fallback) + " ") + md_text(shown->notes, true);
        }));
    return lines;
  }

  void recipe_page(const IndexEntry& e, const std::string& lang) {
    const Family* fam = ctx_.family_of(e);
    const RecipeRow& w = *e.rows.front();
    const std::string name = display_name(e, lang);
    std::string body = "# " + (e.kind == RecipeKind::Benchmark ? md_text(name) : md_code(name)) + "\n";
    body += search_words(e, lang);
    body += origin_notes(w, lang);
    // What runs first: the launch command and the values the code sets
    // (file:line), then where the documents disagree with it, and only then
    // the recipe index's row as the documents write it.
    if (e.kind == RecipeKind::Library && !w.pattern) {
      // kbq show's answer: the launch command and the throughput of the
      // recipe's own layout come from the one engine.
      auto shown = ctx_.engine.show(e.name, lang);
      const auto* a = std::get_if<kbq::Answer>(&shown);
      const kbq::Result* r = a && !a->results.empty() ? &a->results.front() : nullptr;
      body += launch_section(r, lang);
      body += code_section(e.name, lang);
      body += drift_section(e.name, lang);
      body += fewest_section(e.name, lang);
      body += throughput_section(r, lang);
    }
    if (e.kind == RecipeKind::Library && !w.pattern) body += "\n## " + md_text(ctx_.ui(lang, "index_title")) + "\n";
    body += "\n" + facts_table(e, lang, fam) + "\n";
    body += rules_section(lang);
    body += sources_section(e, w, lang);
    out_[lang_path("site/recipes/" + e.slug, lang)] = render({name, recipe_front_matter(e, name, fam, lang), body});
  }

  // The words a reader of this language searches the page's mode(s) by:
  // the lexicon's words for them (data/lexicon.tsv), one line under the
  // title, so that a search for a mode word of the page's language and a
  // model finds the page (docs/site.md, "Search").
  std::string search_words(const IndexEntry& e, const std::string& lang) const {
    std::vector<std::string> words;
    for (const auto& m : e.modes) {
      if (m.empty()) continue;
      Stmt st(db_, "SELECT word FROM lexicon WHERE kind = 'mode' AND value = ? AND (lang = ? OR lang = '*') ORDER BY line");
      st.bind(1, m).bind(2, lang);
      while (st.step())
        if (std::find(words.begin(), words.end(), st.text(0)) == words.end()) words.push_back(st.text(0));
    }
    if (words.empty()) return {};
    std::vector<std::string> shown;
    for (const auto& w : words) shown.push_back(md_text(w));
    return "\n*" + join(shown, " · ") + "*\n";
  }

  // How the page's recipe is known when it is not a plain table row: a
  // pattern, a name mentioned elsewhere that a pattern covers, or one
  // expanded from a brace pattern.
  std::string origin_notes(const RecipeRow& w, const std::string& lang) const {
    std::string body;
    if (w.pattern) body += "\n" + md_text(ctx_.ui(lang, "pattern")) + "\n";
    if (!w.mentioned_in.empty()) {
      std::string note = md_text(ctx_.ui(lang, "mentioned", {{"where", "\x01"}, {"pattern", "\x02"}}));
      if (auto at = note.find('\x01'); at != std::string::npos) note.replace(at, 1, md_code(w.mentioned_in));
      if (auto at = note.find('\x02'); at != std::string::npos) note.replace(at, 1, md_code(w.expanded_from));
      body += "\n" + note + "\n";
    } else if (!w.expanded_from.empty()) {
      std::string note = md_text(ctx_.ui(lang, "expanded_from", {{"pattern", "\x01"}}));
      if (auto at = note.find('\x01'); at != std::string::npos) note.replace(at, 1, md_code(w.expanded_from));
      body += "\n" + note + "\n";
    }
    return body;
  }

  // Facts: one value column (with every mode), or one column per mode
  // when the modes' values differ.
  std::string facts_table(const IndexEntry& e, const std::string& lang, const Family* fam) const {
    auto lines = facts(e, lang, fam);
    bool same = true;
    for (const auto& l : lines)
      for (size_t i = 2; i < l.size(); ++i) same = same && l[i] == l[1];
    std::vector<std::string> header{md_text(ctx_.ui(lang, "field"), true)};
    std::vector<std::string> mode_words;
    for (const auto& m : e.modes)
      if (!m.empty()) mode_words.push_back(ctx_.mode_word(lang, {m}));
    if (same) {
      // The documents' values (the code's are in their own section below).
      header.push_back(md_text(ctx_.ui(lang, "value_index"), true));
      for (auto& l : lines) l.resize(2);
      std::string modes = ctx_.mode_word(lang, e.modes);
      if (modes.empty()) {
        std::string sep = ctx_.cell_word(lang, "list_sep", ",");
        if (!sep.empty() && static_cast<unsigned char>(sep.back()) < 0x80) sep += ' ';
        modes = join(mode_words, sep);
      }
      if (!modes.empty())
        lines.insert(lines.begin() + std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(lines.size())),
                     {md_text(ctx_.header(lang, "mode"), true), md_text(modes, true)});
    } else {
      for (const auto& word : mode_words) header.push_back(md_text(word, true));
    }
    return md_table(header, lines);
  }

  // The launch command of a library recipe: the engine's (kbq show), every size pinned.
  std::string launch_section(const kbq::Result* r, const std::string& lang) const {
    if (!r || r->command.empty()) return {};
    return "\n## " + md_text(ctx_.ui(lang, "launch")) + "\n\n" + md_fence(r->command, "bash") + "\n";
  }

  // Throughput (docs/throughput.md): what kbq show expects of the recipe's
  // own layout (measured, estimated with its band and how, or none with
  // the reason), with the figures printed as every answer prints them;
  // then the rows NVIDIA measured for the recipe's model and task, as
  // `kbq perf MODEL` lists them (the newest release of each configuration),
  // each with its file:line.
  std::string throughput_section(const kbq::Result* r, const std::string& lang) const {
    if (!r) return {};
    const kbq::Throughput& T = r->throughput;
    const kbq::Labels lb = ctx_.engine.labels(lang);
    std::string body;
    if (T.basis != kbq::ThroughputBasis::None || !T.how.empty()) {
      const kbq::Layout& L = r->layout;
      std::string layout = std::to_string(L.gpus) + " × " + L.hardware_name + " — TP " + std::to_string(L.tp) + " · PP " +
                           std::to_string(L.pp) + (L.vp > 0 ? " · VP " + std::to_string(L.vp) : std::string()) + " · CP " +
                           std::to_string(L.cp) + (L.ep > 1 ? " · EP " + std::to_string(L.ep) : std::string()) + " · DP " +
                           std::to_string(L.dp);
      std::vector<std::vector<std::string>> rows;
      auto add = [&](const std::string& key, const std::string& value) {
        rows.push_back({md_text(ctx_.ui(lang, key), true), md_text(value, true)});
      };
      char buf[48];
      switch (T.basis) {
        case kbq::ThroughputBasis::Measured:
          add("perf.site.basis", ctx_.ui(lang, "perf.site.basis.measured"));
          break;
        case kbq::ThroughputBasis::Estimated:
          std::snprintf(buf, sizeof buf, "%.1f", T.error_band_pct);
          add("perf.site.basis", ctx_.ui(lang, "perf.site.basis.estimated", {{"band", buf}}));
          break;
        case kbq::ThroughputBasis::None:
          add("perf.site.basis", ctx_.ui(lang, "perf.site.basis.none"));
          break;
      }
      if (T.basis != kbq::ThroughputBasis::None) {
        add("perf.site.tokens", kbq::format_count(T.tokens_per_s_per_gpu));
        add("perf.site.job", kbq::format_count(T.tokens_per_s));
        add("perf.site.step", ctx_.ui(lang, "perf.site.seconds", {{"n", kbq::format_seconds(T.step_time_s)}}));
        if (T.tflops_per_gpu > 0) {
          std::snprintf(buf, sizeof buf, "%.0f", T.tflops_per_gpu);
          add("perf.site.tflops", buf);
        }
        if (T.mfu > 0) {
          std::snprintf(buf, sizeof buf, "%.1f %%", T.mfu * 100);
          add("perf.site.mfu", buf);
        }
      }
      if (!T.how.empty()) add("perf.site.how", T.how);
      if (!T.sources.empty()) {
        std::vector<std::string> at;
        for (const auto& s : T.sources) at.push_back(md_code(s.file + ":" + std::to_string(s.line), true));
        rows.push_back({md_text(ctx_.ui(lang, "perf.site.sources"), true), join(at, " · ")});
      }
      body += "\n" + md_text(ctx_.ui(lang, "perf.site.estimate_intro", {{"layout", layout}})) + "\n\n" +
              md_table({md_text(ctx_.ui(lang, "field"), true), md_text(ctx_.ui(lang, "value"), true)}, rows) + "\n";
    }
    body += measured_rows(r->recipe, lang, lb);
    if (body.empty()) return {};
    return "\n## " + md_text(ctx_.ui(lang, "perf.site.title")) + "\n" + body;
  }

  // The rows NVIDIA measured for a recipe's model and task (kbq perf), the
  // columns every row leaves empty dropped.
  std::string measured_rows(const kbq::Recipe& recipe, const std::string& lang, const kbq::Labels& lb) const {
    if (recipe.model_key.empty() || recipe.mode.empty()) return {};
    auto it = perf_rows_.find(recipe.model_key);
    if (it == perf_rows_.end()) {
      auto res = ctx_.engine.perf(recipe.model_key, false);
      const auto* p = std::get_if<kbq::PerfListing>(&res);
      it = perf_rows_.emplace(recipe.model_key, p ? p->rows : std::vector<kbq::PerfRowView>{}).first;
    }
    std::vector<std::string> header = {lb("perf.col.release"), lb("perf.col.system"), lb("perf.col.gpus"), lb("perf.col.precision")};
    std::vector<std::string> layout;
    for (const auto& w : split(lb("perf.col.layout"), ' '))
      if (!w.empty()) layout.push_back(w);
    layout.resize(9);  // GBS MBS seq FSDP TP PP CP VP EP, as kbq perf
    header.insert(header.end(), layout.begin(), layout.end());
    for (const char* k : {"perf.col.tokens", "perf.col.tflops", "perf.col.source"}) header.push_back(lb(k));
    auto dim = [](const std::optional<long long>& v) { return v ? std::to_string(*v) : std::string("-"); };
    char buf[48];
    auto fixed0 = [&](double v) {
      std::snprintf(buf, sizeof buf, "%.0f", v);
      return std::string(buf);
    };
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : it->second) {
      if (r.task != recipe.mode) continue;
      rows.push_back({r.release, r.system, std::to_string(r.gpus), r.precision_written.empty() ? r.precision : r.precision_written,
                      std::to_string(r.gbs), std::to_string(r.mbs), std::to_string(r.seq), dim(r.fsdp), dim(r.tp), dim(r.pp), dim(r.cp),
                      dim(r.vp), dim(r.ep), fixed0(r.tokens_per_gpu), fixed0(r.tflops_per_gpu),
                      r.source.file + ":" + std::to_string(r.source.line)});
    }
    const std::string title = "\n### " +
                              md_text(ctx_.ui(lang, "perf.site.measured",
                                              {{"model", recipe.model.empty() ? recipe.model_key : recipe.model},
                                               {"mode", ctx_.mode_word(lang, {recipe.mode})}})) +
                              "\n\n";
    if (rows.empty()) return title + md_text(ctx_.ui(lang, "perf.site.no_rows")) + "\n";
    // The columns no row fills (FSDP of a layout without it, EP of a dense model).
    std::vector<bool> keep(header.size(), false);
    for (const auto& row : rows)
      for (size_t i = 0; i < row.size(); ++i) keep[i] = keep[i] || row[i] != "-";
    std::vector<std::string> head;
    for (size_t i = 0; i < header.size(); ++i)
      if (keep[i]) head.push_back(md_text(header[i], true));
    std::vector<std::vector<std::string>> cells;
    for (const auto& row : rows) {
      std::vector<std::string> c;
      for (size_t i = 0; i < row.size(); ++i)
        if (keep[i]) c.push_back(i + 1 == row.size() ? md_code(row[i], true) : md_text(row[i], true));
      cells.push_back(std::move(c));
    }
    return title + md_text(ctx_.ui(lang, "perf.site.measured_intro", {{"model", recipe.model_key}})) + "\n\n" + md_table(head, cells) +
           "\n";
  }

  // What the code sets (data/planner.tsv site_code_fields), each value with
  // the line that sets it, from the newest compiled snapshot.
  std::string code_section(const std::string& name, const std::string& lang) const {
    std::string commit;
    {
      Stmt st(db_, "SELECT commit_sha FROM code_snapshots WHERE newest = 1");
      if (st.step()) commit = st.text(0).substr(0, 9);
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& f : planner_words(db_, "site_code_fields")) {
      Stmt st(db_,
              "SELECT f.state, f.value, f.at FROM code_facts f JOIN code_recipes c ON c.target = f.target "
              "WHERE c.name = ? AND c.kind = ? AND f.field = ?");
      st.bind(1, name).bind(2, std::string(to_string(RecipeKind::Library))).bind(3, f);
      if (!st.step()) continue;
      const auto state = parse_kind<FactState>(st.text(0));
      const std::string value = st.text(1), at = st.text(2);
      std::string shown = state == FactState::Unknown ? ctx_.ui(lang, "code.unknown") : value;
      if (state == FactState::Default) shown += " " + ctx_.ui(lang, "code.default");
      rows.push_back({md_code(f), md_text(shown, true), md_code(at + (commit.empty() ? "" : "@" + commit))});
    }
    if (rows.empty()) return {};
    return "\n## " + md_text(ctx_.ui(lang, "code.title")) + "\n\n" +
           md_table({md_text(ctx_.ui(lang, "field"), true), md_text(ctx_.ui(lang, "value"), true), md_text(ctx_.ui(lang, "sources"), true)},
                    rows) +
           "\n";
  }

  // Where a document says another value than the code (the drift table):
  // one row per disagreement (a field, the value the documents state, the
  // code's), listing every edition that states it, newest first.
  std::string drift_section(const std::string& name, const std::string& lang) const {
    struct Disagreement {
      std::string field, doc_value, code_value, code_at;
      std::vector<std::string> where;
    };
    std::vector<Disagreement> rows;
    Stmt st(db_,
            "SELECT d.field, d.doc_value, s.path, d.line, d.revision, d.lang, d.code_value, d.code_at FROM drift d "
            "JOIN sources s ON s.id = d.source_id WHERE d.subject = ? AND d.kind = 'recipe-fact' "
            "ORDER BY d.field, d.revision DESC, s.path, d.line");
    st.bind(1, name);
    while (st.step()) {
      const std::string where = ctx_.ui(lang, "drift.where",
                                        {{"file", st.text(2)},
                                         {"line", std::to_string(st.integer(3))},
                                         {"revision", std::to_string(st.integer(4))},
                                         {"lang", ctx_.lang_name(lang, st.text(5))}});
      auto same = std::find_if(rows.begin(), rows.end(), [&](const Disagreement& d) {
        return d.field == st.text(0) && d.doc_value == st.text(1) && d.code_value == st.text(6) && d.code_at == st.text(7);
      });
      if (same == rows.end())
        rows.push_back({st.text(0), st.text(1), st.text(6), st.text(7), {where}});
      else if (std::find(same->where.begin(), same->where.end(), where) == same->where.end())
        same->where.push_back(where);
    }
    if (rows.empty()) return {};
    std::vector<std::vector<std::string>> cells;
    for (const auto& d : rows) {
      std::vector<std::string> where;
      for (const auto& w : d.where) where.push_back(md_text(w, true));
      cells.push_back({md_code(d.field), md_text(d.doc_value, true), join(where, " · "), md_text(d.code_value, true), md_code(d.code_at)});
    }
    return "\n## " + md_text(ctx_.ui(lang, "code.drift")) + "\n\n" + md_text(ctx_.ui(lang, "code.drift_intro")) + "\n\n" +
           md_table({md_text(ctx_.ui(lang, "drift.col.field"), true), md_text(ctx_.ui(lang, "drift.col.document"), true),
                     md_text(ctx_.ui(lang, "drift.col.where"), true), md_text(ctx_.ui(lang, "drift.col.code"), true),
                     md_text(ctx_.ui(lang, "drift.col.code_at"), true)},
                    cells) +
           "\n";
  }

  // The fewest GPUs of each type (data/planner.tsv finder_hardware) the
  // recipe fits on, from kbq's planner and memory model; computed once per
  // recipe, the numbers are the same in every language.
  std::string fewest_section(const std::string& name, const std::string& lang) const {
    auto it = fewest_.find(name);
    if (it == fewest_.end()) {
      std::vector<std::vector<std::string>> rows;
      for (const auto& g : planner_words(db_, "finder_hardware")) {
        auto res = ctx_.engine.fewest(name, g, ctx_.c.vocab.base_language);  // only its numbers are read
        const auto* a = std::get_if<kbq::Answer>(&res);
        if (!a || a->results.empty()) continue;
        const kbq::Result& r = a->results.front();
        if (!r.runnable) {
          rows.push_back({md_text(ctx_.gpu_name(g), true), "—", "", "", "", "", ""});
          continue;
        }
        const kbq::Layout& L = r.layout;
        char mem[32];
        std::snprintf(mem, sizeof mem, "%.1f", r.memory.per_gpu_gib);
        rows.push_back({md_text(ctx_.gpu_name(g), true), std::to_string(L.gpus), std::to_string(L.tp), std::to_string(L.pp),
                        std::to_string(L.cp), std::to_string(L.ep), mem});
      }
      it = fewest_.emplace(name, rows).first;
    }
    if (it->second.empty()) return {};
    return "\n## " + md_text(ctx_.ui(lang, "code.fewest")) + "\n\n" + md_text(ctx_.ui(lang, "code.fewest_intro")) + "\n\n" +
           md_table({md_text(ctx_.header(lang, "gpu_types"), true), md_text(ctx_.ui(lang, "finder.gpus"), true), "TP", "PP", "CP", "EP",
                     md_text(ctx_.ui(lang, "finder.memory"), true)},
                    it->second) +
           "\n";
  }

  // The sizing rules, on every recipe page.
  std::string rules_section(const std::string& lang) const {
    const auto rules = ctx_.entities_of("rule");
    if (rules.empty()) return {};
    std::string body = "\n## " + md_text(ctx_.heading(lang, "sizing_rules")) + "\n\n";
    std::vector<std::string> items;
    DocState st;
    for (const Entity* r : rules) items.push_back(r->key + ". " + paragraph(ctx_, *r, lang, st));
    return body + join(items, "\n") + "\n";
  }

  // Sources: every row of every edition stating this recipe, newest first.
  std::string sources_section(const IndexEntry& e, const RecipeRow& w, const std::string& lang) const {
    std::vector<const RecipeRow*> rows;
    for (const auto& r : ctx_.c.extracted.recipes)
      if (r.kind == e.kind && (e.kind == RecipeKind::Benchmark ? model_key(r.name) == model_key(e.name) : r.name == e.name))
        rows.push_back(&r);
    std::sort(rows.begin(), rows.end(), [](const RecipeRow* a, const RecipeRow* b) { return newer(a->prov, b->prov); });
    std::set<std::string> seen;
    std::vector<std::string> items;
    for (const auto* r : rows) {
      const std::string line = ctx_.ui(lang, "source_line",
                                       {{"file", r->prov.file},
                                        {"line", std::to_string(r->prov.line)},
                                        {"revision", std::to_string(r->prov.revision)},
                                        {"lang", ctx_.lang_name(lang, r->prov.lang)}});
      if (seen.insert(line).second) items.push_back("- " + md_text(line));
    }
    if (!w.mentioned_in.empty()) items.push_back("- " + md_code(w.mentioned_in));
    return "\n## " + md_text(ctx_.ui(lang, "sources")) + "\n\n" + join(items, "\n") + "\n";
  }

  // Front matter of a recipe page: title, family, mode(s), kind, lang, tags.
  std::vector<std::pair<std::string, std::string>> recipe_front_matter(const IndexEntry& e, const std::string& name, const Family* fam,
                                                                       const std::string& lang) const {
    std::vector<std::pair<std::string, std::string>> fm{{"title", yaml_str(name)}, {"family", yaml_str(plain_family(ctx_, fam, lang))}};
    std::vector<std::string> modes;
    for (const auto& m : e.modes)
      if (!m.empty()) modes.push_back(m);
    if (modes.size() == 1)
      fm.emplace_back("mode", modes.front());
    else if (!modes.empty())
      fm.emplace_back("mode", yaml_list(modes));
    fm.emplace_back("kind", to_string(e.kind));
    fm.emplace_back("lang", lang);
    fm.emplace_back("tags", yaml_list(tags_of(e)));
    return fm;
  }

  json record(const std::string& id, const std::string& lvl0, const std::string& lvl1, const std::string& lvl2, const std::string& content,
              const std::string& page, const std::string& anchor_text, const std::string& lang, const std::vector<std::string>& tags,
              const std::string& fallback) {
    json r;
    r["objectID"] = id;
    r["type"] = "content";
    r["hierarchy"] = {
        {"lvl0", lvl0}, {"lvl1", lvl1.empty() ? json(nullptr) : json(lvl1)}, {"lvl2", lvl2.empty() ? json(nullptr) : json(lvl2)}};
    r["content"] = content;
    const std::string a = anchor(anchor_text);
    r["url"] = page + "#" + a;
    r["url_without_anchor"] = page;
    r["anchor"] = a;
    r["lang"] = lang;
    r["tags"] = tags;
    r["fallback"] = fallback.empty() ? json(nullptr) : json(fallback);
    return r;
  }

  void records(const std::string& lang) {
    auto label = [&](const std::string& field, const std::string& value) {
      return value.empty() ? std::string() : ctx_.header(lang, field) + ": " + value;
    };
    auto joined = [](std::vector<std::string> parts) {
      parts.erase(std::remove(parts.begin(), parts.end(), std::string()), parts.end());
      return join(parts, "; ");
    };
    for (const auto& e : ctx_.entries) {
      const Family* fam = ctx_.family_of(e);
      const RecipeRow& w = *e.rows.front();
      const std::string name = display_name(e, lang);
      std::vector<std::string> modes;
      for (const auto& m : e.modes) modes.push_back(m);
      const bool bench = e.kind == RecipeKind::Benchmark;
      const std::string content = joined({label("mode", ctx_.mode_word(lang, modes)), label("tp", ctx_.range_cell(w.tp, lang, "tp")),
                                          label("pp", ctx_.range_cell(w.pp, lang, "pp")), label("cp", ctx_.range_cell(w.cp, lang, "cp")),
                                          label("ep", ctx_.range_cell(w.ep, lang, "ep")),
                                          label(bench ? "gpus" : "min_gpus", ctx_.range_cell(w.gpus, lang, bench ? "gpus" : "min_gpus")),
                                          label("seq_len", ctx_.seq_cell(w)), label("sizes", w.sizes),
                                          label("gpu_types", bench ? ctx_.gpu_types_cell(w, lang) : std::string())});
      records_.push_back(record("recipe-" + e.slug + "-" + lang, ctx_.heading(lang, e.index_kind), plain_family(ctx_, fam, lang), name,
                                content, "site/" + lang_path("recipes/" + e.slug, lang), name, lang, tags_of(e), ""));
    }
    const std::string skill = "skill/SKILL." + lang + ".md";
    for (const Entity* r : ctx_.entities_of("rule")) {
      const Choice ch = ctx_.choose(*r, lang);
      records_.push_back(record("rule-" + r->key + "-" + lang, ctx_.heading(lang, "tuning"), ctx_.heading(lang, "sizing_rules"), "",
                                normalize_space(ch.ed->text), skill, ctx_.heading(lang, "sizing_rules"), lang, {"rule"}, ch.fallback));
    }
    for (const Entity* p : ctx_.entities_of("pitfall")) {
      const Choice ch = ctx_.choose(*p, lang);
      auto part = [&](const char* k) {
        auto it = ch.ed->parts.find(k);
        return it == ch.ed->parts.end() ? std::string() : it->second;
      };
      records_.push_back(record("pitfall-" + p->key + "-" + lang, ctx_.heading(lang, "tuning"), ctx_.heading(lang, "pitfalls"),
                                part("pitfall"), joined({label("symptom", part("symptom")), label("fix", part("fix"))}), skill,
                                ctx_.heading(lang, "pitfalls"), lang, {"pitfall"}, ch.fallback));
    }
    for (const Entity* q : ctx_.entities_of("quick_ref")) {
      const Choice ch = ctx_.choose(*q, lang);
      auto part = [&](const char* k) {
        auto it = ch.ed->parts.find(k);
        return it == ch.ed->parts.end() ? std::string() : it->second;
      };
      std::vector<std::string> tags{"quick_ref"};
      if (auto it = ch.ed->facts.find("recipe"); it != ch.ed->facts.end()) tags.insert(tags.end(), it->second.begin(), it->second.end());
      const auto gpus = quick_ref_gpus(ctx_, *ch.ed);  // as the regenerated skill states it
      records_.push_back(record(
          "quick_ref-" + q->key + "-" + lang, ctx_.heading(lang, "quick_reference"), part("want"), "",
          joined({label("start_with", part("start_with")), label("gpus", gpus ? ctx_.range_cell(gpus->code, lang, "gpus") : part("gpus"))}),
          skill, ctx_.heading(lang, "quick_reference"), lang, tags, ch.fallback));
    }
  }

  // The KB itself: `kbc dump --format json` of the KB the engine reads.
  std::string kb_json() { return dump_kb(ctx_.kb_path, DumpFormat::Json); }

  const Inputs& ctx_;
  OutputFiles& out_;
  mutable Db db_;  // the KB the engine reads (the lexicon, the code facts, the drift)
  mutable std::map<std::string, std::vector<std::vector<std::string>>> fewest_;  // recipe → its fewest-GPU rows
  mutable std::map<std::string, std::vector<kbq::PerfRowView>> perf_rows_;       // model → its measured rows (kbq perf)
  json records_ = json::array();
};

}  // namespace

void write_site(const Inputs& ctx, OutputFiles& out) { SiteWriter(ctx, out).run(); }

}  // namespace kb::gen
