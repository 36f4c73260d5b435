// Generate stage: the numbers and flags of the documents' prose compared
// with the code, for a person to fix (the regenerated editions keep the
// prose as written; CHANGES[.<lang>].md lists these findings).
//
//   - a command's flags: every `-x` / `--flag` after a launch script of
//     data/launchers.tsv must be an option of that script's parser in the
//     snapshot's launcher.tsv (or of the parser it forwards the rest to);
//   - a command's --dataset preset: one the launcher accepts in the mode it
//     runs (--mode, else the mode it infers from the recipe's name);
//   - a command's GPU count: `--nproc_per_node` (data/patterns.tsv nproc) of
//     a command that runs an exported library recipe must be a multiple of
//     the smallest world its layout runs on, with the command's own layout
//     overrides applied;
//   - each recipe a quick-reference row names is exported (its GPU cell is
//     set from the code in the regenerated editions: quick_ref_gpus);
//   - the notes of a table row (a library name, a benchmark model): the
//     parallelism, GPU count and sequence they state (read_cell_facts) are
//     what the code sets, as the row's columns now show;
//   - the drift of prose kbc lint reports (compiler/resolve/drift.cpp): an
//     override the runner rewrites after the overrides, a key the code's
//     configuration lacks, a --dataset preset the launcher does not offer, a
//     name the code does not export.
#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <tuple>

#include "base/text.hpp"
#include "compiler/extract/extract.hpp"
#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

namespace {

std::string basename_of(std::string s) {
  while (!s.empty() && (s.front() == '\'' || s.front() == '"')) s.erase(0, 1);
  while (!s.empty() && (s.back() == '\'' || s.back() == '"')) s.pop_back();
  const auto slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

std::string at_of(const Provenance& p) { return p.file + ":" + std::to_string(p.line); }

// The world an exported library recipe's layout spans (what a GPU count must
// be a multiple of), not its minimum: the sentences checked speak of the
// layout.
std::optional<std::pair<long long, std::string>> layout_world(const Inputs& ctx, const std::string& name) {
  auto it = ctx.code_library.find(name);
  if (it == ctx.code_library.end()) return std::nullopt;
  auto m = it->second.ints.find("layout_gpus");
  if (m == it->second.ints.end()) return std::nullopt;
  return m->second;
}

// The command on one line: continuation backslashes removed.
std::vector<std::string> tokens_of(const std::string& cmd) {
  std::vector<std::string> out;
  for (const auto& line : split(cmd, '\n')) {
    std::string t = trim(line);
    if (ends_with(t, "\\")) t = trim(t.substr(0, t.size() - 1));
    for (auto& w : split(t, ' '))
      if (!trim(w).empty()) out.push_back(trim(w));
  }
  return out;
}

}  // namespace

std::vector<ProseFinding> prose_findings(const Inputs& ctx, const std::string& lang) {
  std::vector<ProseFinding> out;
  const CodeSnapshot* snap = ctx.c.code.newest();
  if (!snap) return out;
  const int newest = ctx.newest_revision_of(lang);

  // The launchers' flags: parser → options, and where the parser is.
  std::map<std::string, std::set<std::string>> options;
  std::map<std::string, std::string> parser_at;
  for (const auto& row : snap->launcher) {
    if (row.cells.size() < 5 || row.cells[0] != "flag" || row.cells[2] != "options") continue;
    const std::string parser = row.cells[1].substr(0, row.cells[1].find(':'));
    for (auto& o : split(row.cells[3], ' '))
      if (!trim(o).empty()) options[parser].insert(trim(o));
    if (!parser_at.count(parser)) parser_at[parser] = row.cells[4].substr(0, row.cells[4].rfind(':'));
  }
  const TsvTable launchers = load_sourced_tsv(ctx.c.vocab.dir + "/launchers.tsv", ctx.diags, {"script", "parser", "forwards_to"});
  std::map<std::string, std::pair<std::string, std::string>> script_parser;  // script → (parser, forwards_to)
  for (const auto& row : launchers.rows)
    script_parser[launchers.get(row, "script")] = {launchers.get(row, "parser"), launchers.get(row, "forwards_to")};
  std::map<std::string, std::string> planner;  // the launch flags of data/planner.tsv
  for (const auto& row : ctx.c.vocab.planner.rows) planner[ctx.c.vocab.planner.get(row, "key")] = ctx.c.vocab.planner.get(row, "value");
  const std::string recipe_flag = planner["recipe_flag"], dataset_flag = planner["dataset_flag"], mode_flag = planner["mode_flag"];
  // A --dataset preset → the modes the launcher accepts it in, and where.
  std::map<std::string, std::pair<std::set<std::string>, std::string>> preset_modes;
  for (const auto& row : snap->datasets)
    if (row.cells.size() >= 4 && row.cells[1] == "modes")
      for (auto& m : split(row.cells[2], ' '))
        if (!trim(m).empty()) preset_modes[row.cells[0]].first.insert(trim(m)), preset_modes[row.cells[0]].second = row.cells[3];
  auto min_gpus = [&](const std::string& name) { return layout_world(ctx, name); };

  // A config key (or one of its aliases) → the layout dimension it sets.
  std::map<std::string, std::string> key_dimension;
  const TsvTable& keys = ctx.c.vocab.config_keys;
  for (const auto& row : keys.rows) {
    const std::string dim = keys.get(row, "dimension");
    if (dim.empty()) continue;
    key_dimension[keys.get(row, "key")] = dim;
    for (const auto& alias : split(keys.get(row, "aliases"), ','))
      if (!trim(alias).empty()) key_dimension[trim(alias)] = dim;
  }
  auto dimension_of = [&](const std::string& key) {
    auto it = key_dimension.find(key);
    return it == key_dimension.end() ? std::string() : it->second;
  };

  for (const auto& e : ctx.c.extracted.entities) {
    if (e.prov.lang != lang || e.prov.revision != newest || (e.kind != "command" && e.kind != "override_example")) continue;
    auto cmd = e.parts.find("command");
    if (cmd == e.parts.end()) continue;
    const auto tokens = tokens_of(cmd->second);
    // The launch script, and the flags after it.
    size_t script = tokens.size();
    for (size_t i = 0; i < tokens.size() && script == tokens.size(); ++i)
      if (script_parser.count(basename_of(tokens[i]))) script = i;
    if (script == tokens.size()) continue;
    const std::string script_name = basename_of(tokens[script]);
    const auto& [parser, forwards] = script_parser.at(script_name);
    if (!options.count(parser)) continue;  // the snapshot does not describe this parser
    std::string recipe, dataset, mode;
    for (size_t i = script + 1; i < tokens.size(); ++i) {
      const std::string& t = tokens[i];
      if (t.size() < 2 || t[0] != '-' || std::isdigit(static_cast<unsigned char>(t[1]))) continue;
      const std::string flag = t.substr(0, t.find('='));
      const std::string value = t.find('=') != std::string::npos ? t.substr(t.find('=') + 1) : i + 1 < tokens.size() ? tokens[i + 1] : "";
      if (flag == recipe_flag) recipe = value;
      if (flag == dataset_flag) dataset = value;
      if (flag == mode_flag) mode = value;
      if (options.at(parser).count(flag) || (!forwards.empty() && options.count(forwards) && options.at(forwards).count(flag))) continue;
      out.push_back(
          {e.prov,
           ctx.ui(lang, "prose.flag",
                  {{"flag", flag}, {"script", script_name}, {"parser_at", snap->cite(parser_at.at(parser))}, {"doc_at", at_of(e.prov)}})});
    }
    // Its preset in the mode it runs (--mode, else the one the launcher
    // infers from the recipe's name): the launcher rejects other modes.
    if (const CodeRecipe* r = recipe.empty() ? nullptr : snap->recipe(recipe, RecipeKind::Library); r && !dataset.empty()) {
      if (mode.empty()) mode = r->mode;
      auto pm = preset_modes.find(dataset);
      if (!mode.empty() && pm != preset_modes.end() && !pm->second.first.count(mode))
        out.push_back({e.prov, ctx.ui(lang, "prose.dataset_mode",
                                      {{"preset", dataset},
                                       {"recipe", recipe},
                                       {"mode", mode},
                                       {"modes", join(std::vector<std::string>(pm->second.first.begin(), pm->second.first.end()), ", ")},
                                       {"code_at", snap->cite(pm->second.second)},
                                       {"doc_at", at_of(e.prov)}})});
    }
    // Its GPU count against the recipe's layout, with the command's own
    // layout overrides applied (data/config-keys.tsv dimension).
    auto nproc = e.facts.find("nproc");
    if (nproc == e.facts.end() || nproc->second.size() != 1 || recipe.empty()) continue;
    auto m = min_gpus(recipe);
    if (!m) continue;
    std::vector<std::string> layout_overrides;
    if (auto ov = e.facts.find("override"); ov != e.facts.end()) {
      const auto it = ctx.code_library.find(recipe);
      std::map<std::string, long long> dims;
      for (const char* d : {"tp", "pp", "cp", "ep", "etp"})
        if (auto v = it->second.ints.find(d); v != it->second.ints.end()) dims[d] = v->second.first;
      for (const auto& kv : ov->second) {
        const auto eq = kv.find('=');
        const std::string dim = eq == std::string::npos ? std::string() : dimension_of(kv.substr(0, eq));
        if (dim != "tp" && dim != "pp" && dim != "cp" && dim != "ep" && dim != "etp") continue;  // no layout dimension
        const long long v = std::atoll(kv.substr(eq + 1).c_str());
        if (v <= 0) continue;
        dims[dim] = v;
        layout_overrides.push_back(kv);
      }
      if (!layout_overrides.empty()) {
        auto get = [&](const char* d) { return dims.count(d) ? dims.at(d) : 1LL; };
        m->first = mesh_world(get("tp"), get("pp"), get("cp"), get("ep"), get("etp"));
      }
    }
    const long long world = std::atoll(nproc->second.begin()->c_str());
    if (world > 0 && (world < m->first || world % m->first != 0))
      out.push_back({e.prov, ctx.ui(lang, layout_overrides.empty() ? "prose.world" : "prose.world_overrides",
                                    {{"recipe", recipe},
                                     {"overrides", join(layout_overrides, " ")},
                                     {"gpus", std::to_string(world)},
                                     {"min_gpus", std::to_string(m->first)},
                                     {"code_at", m->second},
                                     {"doc_at", at_of(e.prov)}})});
  }

  // Quick reference: each name a row recommends is exported (its GPU cell is
  // set from the code in the regenerated editions: quick_ref_gpus).
  for (const Entity* ent : ctx.entities_of("quick_ref")) {
    const EntityEdition* ed = ctx.newest_edition(*ent, lang);
    if (!ed) continue;
    auto names = ed->facts.find("recipe");
    if (names == ed->facts.end()) continue;
    for (const auto& name : names->second)
      if (name.find('*') == std::string::npos && !ctx.code_library.count(name))
        out.push_back({ed->prov, ctx.ui(lang, "prose.unexported", {{"recipe", name}, {"doc_at", at_of(ed->prov)}})});
  }
  // Notes of table rows against the code's values (the columns beside them).
  auto note_finding = [&](const RecipeRow& row, const std::string& subject, const std::string& field, const Range& said,
                          const std::string& code, const std::string& code_at) {
    out.push_back({row.prov, ctx.ui(lang, "prose.note",
                                    {{"recipe", subject},
                                     {"what", ctx.header(lang, field)},
                                     {"said", ctx.range_cell(said, lang, field)},
                                     {"code", code},
                                     {"code_at", code_at},
                                     {"doc_at", at_of(row.prov)}})});
  };
  for (const auto& row : ctx.c.extracted.recipes) {
    if (row.prov.lang != lang || row.prov.revision != newest || row.pattern || row.notes.empty() || !row.mentioned_in.empty()) continue;
    const CellFacts f = read_cell_facts(row.notes, lang, ctx.c.vocab);
    if (row.kind == RecipeKind::Library) {
      auto it = ctx.code_library.find(row.name);
      if (it == ctx.code_library.end() || !row.expanded_from.empty()) continue;
      const CodeValues& cv = it->second;
      for (const auto& [dim, rg] : f.dims) {
        auto v = cv.ints.find(dim);
        if (v == cv.ints.end() || !rg.exact()) continue;
        if (rg.value() != v->second.first) note_finding(row, row.name, dim, rg, std::to_string(v->second.first), v->second.second);
      }
      if (auto v = cv.ints.find("layout_gpus"); f.gpus && f.gpus->exact() && v != cv.ints.end() && f.gpus->value() % v->second.first != 0)
        note_finding(row, row.name, "min_gpus", *f.gpus, std::to_string(v->second.first), v->second.second);
      if (auto v = cv.ints.find("seq_length"); f.seq_len > 0 && v != cv.ints.end() && f.seq_len != v->second.first)
        note_finding(row, row.name, "seq_len", Range::of(f.seq_len), std::to_string(v->second.first), v->second.second);
    } else if (!row.model_key.empty()) {
      auto it = ctx.code_benchmark.find(row.model_key);
      if (it == ctx.code_benchmark.end()) continue;
      for (const auto& [dim, rg] : f.dims) {
        std::set<long long> values;
        std::string at;
        for (const auto& cv : it->second)
          if (auto v = cv.ints.find(dim); v != cv.ints.end()) {
            values.insert(v->second.first);
            if (at.empty()) at = v->second.second;
          }
        if (values.empty() || !rg.is_value()) continue;
        bool outside = false;
        for (long long v : values) outside = outside || v < rg.lo || (!rg.open && v > rg.hi);
        if (!outside) continue;
        std::vector<std::string> all;
        for (long long v : values) all.push_back(std::to_string(v));
        note_finding(row, row.model.empty() ? row.name : row.model, dim, rg, join(all, ", "), at);
      }
    }
  }
  // The drift of prose (a key, an override, a preset or a name in a sentence
  // or command, kbc lint's drift lines with no table row): a name the checks
  // above already list at that line is not listed twice.
  std::set<std::pair<std::string, int>> listed;
  for (const auto& f : out) listed.insert({f.doc.file, f.doc.line});
  const std::string commit = snap->short_commit();
  for (const auto& d : ctx.c.drift) {
    if (d.doc.lang != lang || d.doc.revision != newest || !d.row.empty()) continue;
    const std::string doc_at = at_of(d.doc);
    switch (d.kind) {
      case DriftKind::OverwrittenKey:
        out.push_back(
            {d.doc,
             ctx.ui(lang, "prose.overwritten",
                    {{"override", d.doc_value}, {"key", d.subject}, {"code", d.code_value}, {"code_at", d.code_at}, {"doc_at", doc_at}})});
        break;
      case DriftKind::UnknownKey:
        out.push_back({d.doc, ctx.ui(lang, "prose.unknown_key", {{"key", d.subject}, {"commit", commit}, {"doc_at", doc_at}})});
        break;
      case DriftKind::Dataset:
        out.push_back({d.doc, ctx.ui(lang, "prose.dataset", {{"preset", d.subject}, {"commit", commit}, {"doc_at", doc_at}})});
        break;
      case DriftKind::MissingRecipe:
        if (!listed.count({d.doc.file, d.doc.line}))
          out.push_back({d.doc, ctx.ui(lang, "prose.named", {{"recipe", d.subject}, {"doc_at", doc_at}})});
        break;
      case DriftKind::RecipeFact:
      case DriftKind::BenchmarkModel:
        break;
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const ProseFinding& a, const ProseFinding& b) {
    return std::make_tuple(a.doc.file, a.doc.line, a.text) < std::make_tuple(b.doc.file, b.doc.line, b.text);
  });
  out.erase(std::unique(out.begin(), out.end(), [](const ProseFinding& a, const ProseFinding& b) { return a.text == b.text; }), out.end());
  return out;
}

std::optional<QuickRefGpus> quick_ref_gpus(const Inputs& ctx, const EntityEdition& ed) {
  auto cell = ed.facts.find("gpus");
  auto names = ed.facts.find("recipe");
  if (cell == ed.facts.end() || cell->second.size() != 1 || names == ed.facts.end()) return std::nullopt;
  const auto said = parse_range(*cell->second.begin(), ed.prov.lang, "gpus", ctx.c.vocab);
  if (!said || !said->is_value()) return std::nullopt;
  // (world, name, where) of each exported name the row stands for
  std::vector<std::tuple<long long, std::string, std::string>> worlds;
  for (const auto& name : names->second)
    for (const auto& [member, cv] : ctx.code_library) {
      if (name.find('*') == std::string::npos ? member != name : !glob_match(name, member)) continue;
      if (const auto w = layout_world(ctx, member)) worlds.emplace_back(w->first, member, w->second);
    }
  if (worlds.empty()) return std::nullopt;
  std::sort(worlds.begin(), worlds.end());
  QuickRefGpus q{*said, *said, {}, {}, 0};
  q.code.raw.clear();
  const auto& [fewest, fewest_name, fewest_at] = worlds.front();
  const auto& [most, most_name, most_at] = worlds.back();
  if (fewest > said->lo) q.code.lo = fewest, q.recipe = fewest_name, q.code_at = fewest_at, q.min_gpus = fewest;
  if (!said->open && most > said->hi) q.code.hi = most, q.recipe = most_name, q.code_at = most_at, q.min_gpus = most;
  if (!said->open) q.code.hi = std::max(q.code.hi, q.code.lo);
  if (q.code == *said) return std::nullopt;
  return q;
}

}  // namespace kb::gen
