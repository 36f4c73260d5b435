// Generate stage, shared context (see generate_int.hpp): the label, header
// and cell words of kb-sources/data, the choice of the edition to show in
// each language (with fallback), the index entries and families, and the
// Markdown / YAML writing helpers every generated document uses.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <tuple>

#include "base/checked.hpp"
#include "base/choose.hpp"
#include "base/escape.hpp"
#include "base/markdown.hpp"
#include "base/text.hpp"
#include "compiler/extract/extract.hpp"
#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

namespace {

// The language every other falls back to first (as in Vocab::section_kind).
// The language the skill is written in (data/planner.tsv base_language),
// set when the generator's context is built: the fallback of every page.
std::string kBase;

// The language-independent values of a recipe row (what resolve compares).
bool same_values(const RecipeRow& a, const RecipeRow& b) {
  return a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.ep == b.ep && a.vp == b.vp && a.gpus == b.gpus && a.sp == b.sp &&
         a.seq_len == b.seq_len && a.gpu_types == b.gpu_types;
}

std::set<std::string> split_set(const std::string& s) {
  std::set<std::string> out;
  for (const auto& p : split(s, ',')) {
    auto t = trim(p);
    if (!t.empty()) out.insert(t);
  }
  return out;
}

}  // namespace

// --- context ---------------------------------------------------------------------

Inputs::Inputs(const Compilation& comp, Diagnostics& d, kbq::Engine& eng, std::string kb)
    : c(comp), diags(d), engine(eng), kb_path(std::move(kb)), use_(comp.extracted.entities) {
  kBase = c.vocab.base_language;
  languages.assign(c.vocab.languages.begin(), c.vocab.languages.end());
  for (const auto& doc : c.documents) newest_revision = std::max(newest_revision, doc.meta.revision);
  for (const auto& e : c.resolved.entities) by_key_[{e.kind, e.key}] = &e;
  if (const CodeSnapshot* snap = c.code.newest()) {
    has_code = true;
    const auto modes = task_of_mode(*snap);
    for (const auto& r : snap->recipes)
      if (r.kind == RecipeKind::Library)
        code_library.emplace(r.name, code_values(*snap, r, modes));
      else if (!r.model.empty())
        code_benchmark[r.model].push_back(code_values(*snap, r, modes));
  }

  // Table rows of every document, for the cells as written.
  for (const auto& doc : c.documents) {
    for (const auto& b : doc.blocks) {
      if (b.kind != BlockKind::Table || b.rows.empty()) continue;
      std::vector<std::string> fields;
      for (const auto& h : b.rows[0]) fields.push_back(c.vocab.column_field(doc.meta.lang, h.text));
      for (size_t r = 1; r < b.rows.size(); ++r) {
        SourceRow row;
        row.lang = doc.meta.lang;
        for (size_t i = 0; i < b.rows[r].size() && i < fields.size(); ++i)
          if (!fields[i].empty()) row.cells[fields[i]] = b.rows[r][i].text;
        if (!b.rows[r].empty()) source_rows_[{doc.path, b.rows[r][0].span.line}] = std::move(row);
      }
    }
  }

  // Index kinds in data order; the mode order from the longest mode list.
  std::set<std::string> seen_index;
  for (const auto& s : c.extracted.sections)
    if (!s.index_kind.empty()) seen_index.insert(s.index_kind);
  const auto& sk = c.vocab.section_kinds;
  for (const auto& row : sk.rows)
    if (seen_index.count(sk.get(row, "kind"))) index_kinds.push_back(sk.get(row, "kind"));
  for (const auto& k : seen_index)
    if (std::find(index_kinds.begin(), index_kinds.end(), k) == index_kinds.end()) index_kinds.push_back(k);
  const auto& cells = c.vocab.cells;
  for (const auto& row : cells.rows) {
    if (cells.get(row, "field") != "mode") continue;
    auto modes = split(cells.get(row, "value"), ',');
    if (modes.size() > mode_order.size()) mode_order = modes;
  }
  for (auto& m : mode_order) m = trim(m);
  for (const auto& row : cells.rows)
    cell_words_[{cells.get(row, "field"), cells.get(row, "lang")}].emplace_back(split_set(cells.get(row, "value")),
                                                                                &cells.get(row, "word"));

  load_ui();
  build_index();
  place_code_lines();
}

std::string fill_placeholders(const std::string& t, const std::map<std::string, std::string>& args) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '{') {
      const size_t close = t.find('}', i);
      if (close != std::string::npos) {
        auto it = args.find(t.substr(i + 1, close - i - 1));
        if (it != args.end()) {
          out += it->second;
          i = close;
          continue;
        }
      }
    }
    out += t[i];
  }
  return out;
}

void Inputs::load_ui() {
  const std::string path = c.vocab.dir + "/ui.tsv";
  ui_ = load_sourced_tsv(path, diags, {"lang", "key", "text"});
  for (const auto& row : ui_.rows) ui_texts_.emplace(std::pair{ui_.get(row, "lang"), ui_.get(row, "key")}, &ui_.get(row, "text"));
}

std::string Inputs::ui(const std::string& lang, const std::string& key, const std::map<std::string, std::string>& args) const {
  const std::string* found = nullptr;
  for (const std::string& want : {lang, kBase})
    if (auto it = ui_texts_.find({want, key}); it != ui_texts_.end()) {
      found = it->second;
      break;
    }
  if (!found) {
    diags.error({ui_.path.empty() ? c.vocab.dir + "/ui.tsv" : ui_.path, 0, 0}, "no label '" + key + "' for language " + lang + " (nor en)",
                "add a row `" + lang + "\t" + key + "\t<text>\t<source>` to data/ui.tsv");
    return key;
  }
  return fill_placeholders(*found, args);
}

std::string Inputs::lang_name(const std::string& shown_in, const std::string& lang) const { return ui(shown_in, "lang." + lang); }

std::string Inputs::marker(const std::string& lang, const std::string& fallback) const {
  return "*" + md_text(ui(lang, "fallback", {{"lang", lang_name(lang, fallback)}})) + "*";
}

std::string Inputs::header(const std::string& lang, const std::string& field) const {
  const auto& t = c.vocab.columns;
  for (const std::string& want : {lang, kBase, std::string("*"), std::string()})
    for (const auto& row : t.rows)
      if (t.get(row, "field") == field && (want.empty() || t.get(row, "lang") == want)) return t.get(row, "header");
  diags.error({t.path, 0, 0}, "no table header for field '" + field + "'", "add a row for it to data/columns.tsv");
  return field;
}

bool is_skill_edition(const Document& d) {
  const auto slash = d.path.rfind('/');
  const std::string file = slash == std::string::npos ? d.path : d.path.substr(slash + 1);
  return file == "SKILL.md" || starts_with(file, "SKILL.");
}

std::string Inputs::heading(const std::string& lang, const std::string& kind) const {
  const SectionRecord* best = nullptr;
  auto key = [](const SectionRecord& s) { return std::make_tuple(-s.prov.revision, s.prov.translated, s.prov.file, s.prov.line); };
  std::set<std::string> skill_files;
  if (kind == "title")
    for (const auto& d : c.documents)
      if (is_skill_edition(d)) skill_files.insert(d.path);
  for (const auto& s : c.extracted.sections)
    if (s.kind == kind && s.prov.lang == lang && (kind != "title" || skill_files.count(s.prov.file)) && (!best || key(s) < key(*best)))
      best = &s;
  if (best) return best->heading;
  const auto& t = c.vocab.sections;
  for (const std::string& want : {lang, kBase})
    for (const auto& row : t.rows)
      if (t.get(row, "lang") == want && t.get(row, "kind") == kind) return t.get(row, "heading");
  return {};
}

std::string Inputs::cell_word(const std::string& lang, const std::string& field, const std::string& value) const {
  const auto want_values = split_set(value);
  for (const std::string& f : {field, std::string("*")})
    for (const std::string& l : {lang, std::string("*"), kBase})
      if (auto it = cell_words_.find({f, l}); it != cell_words_.end())
        for (const auto& [values, word] : it->second)
          if (values == want_values) return *word;
  return {};
}

std::string Inputs::mode_word(const std::string& lang, const std::vector<std::string>& modes) const {
  if (modes.empty() || (modes.size() == 1 && modes[0].empty())) return {};
  return cell_word(lang, "mode", join(modes, ","));
}

std::string Inputs::range_cell(const Range& r, const std::string& lang, const std::string& field) const {
  if (!r.known()) return {};
  if (!trim(r.raw).empty()) {
    auto again = parse_range(r.raw, lang, field, c.vocab);
    if (again && *again == r) return trim(r.raw);
  }
  RangeWords words;
  words.none = cell_word(lang, field, "none");
  words.varies = cell_word(lang, field, "varies");
  words.open = cell_word(lang, "open_max", "+");
  words.sep = cell_word(lang, "range_sep", "-");
  return format_range(r, words);
}

std::string Inputs::seq_cell(const RecipeRow& r) const {
  if (r.seq_len == 0) return {};
  if (const SourceRow* sr = source_row(r.prov)) {
    auto it = sr->cells.find("seq_len");
    if (it != sr->cells.end()) {
      // Keep the cell as written when it states this very length.
      const std::string s = fold(trim(it->second));
      size_t i = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      if (i > 0 && i < 10) {
        const long n = std::stol(s.substr(0, i));
        const std::string suffix = trim(std::string_view(s).substr(i));
        double mult = 1;
        if (!suffix.empty()) mult = c.vocab.magnitude("seq_magnitude", suffix).value_or(0);
        if (static_cast<long>(static_cast<double>(n) * mult) == r.seq_len) return trim(it->second);
      }
    }
  }
  const auto& lex = c.vocab.lexicon;
  for (const auto& row : lex.rows) {
    if (lex.get(row, "kind") != "seq_magnitude") continue;
    long m = 0;
    try {
      m = std::stol(lex.get(row, "value"));
    } catch (...) {
      continue;
    }
    if (m > 0 && r.seq_len % m == 0) return std::to_string(r.seq_len / m) + lex.get(row, "word");
  }
  return std::to_string(r.seq_len);
}

std::string Inputs::gpu_name(const std::string& key) const {
  const auto& t = c.vocab.cells;
  for (const auto& row : t.rows)
    if (t.get(row, "field") == "gpu_types" && t.get(row, "value") == key) return t.get(row, "word");
  const auto& g = c.vocab.gpus;
  for (const auto& row : g.rows)
    if (g.get(row, "gpu_key") == key && !g.get(row, "display_name").empty()) return g.get(row, "display_name");
  return key;
}

std::string Inputs::gpu_types_cell(const RecipeRow& r, const std::string& lang) const {
  std::string sep = cell_word(lang, "list_sep", ",");
  if (sep.empty()) sep = ",";
  // An ASCII separator is followed by a space; a CJK one is not.
  if (static_cast<unsigned char>(sep.back()) < 0x80) sep += ' ';
  std::vector<std::string> names;
  for (const auto& k : r.gpu_types) names.push_back(gpu_name(k));
  return join(names, sep);
}

std::vector<std::pair<std::string, std::set<std::string>>> Inputs::datasets() const {
  std::vector<std::pair<std::string, std::set<std::string>>> out;
  const auto& t = c.vocab.datasets;
  for (const auto& row : t.rows) out.emplace_back(t.get(row, "preset"), split_set(t.get(row, "modes")));
  return out;
}

// --- entities --------------------------------------------------------------------

std::vector<const Entity*> Inputs::entities_of(const std::string& kind) const {
  std::vector<const Entity*> out;
  for (const auto& e : c.resolved.entities)
    if (e.kind == kind && !e.superseded) out.push_back(&e);
  std::stable_sort(out.begin(), out.end(), [](const Entity* a, const Entity* b) { return natural_less(a->key, b->key); });
  return out;
}

int Inputs::newest_revision_of(const std::string& lang) const {
  int newest = 0;
  for (const auto& d : c.documents)
    if (d.meta.lang == lang) newest = std::max(newest, d.meta.revision);
  return newest;
}

const EntityEdition* Inputs::newest_edition(const Entity& e, const std::string& lang) const {
  const int newest = newest_revision_of(lang);
  const EntityEdition* ed = nullptr;
  for (const auto* x : e.editions)
    if (x->prov.lang == lang && x->prov.revision == newest) ed = x;
  return ed;
}

const Entity* Inputs::entity(const std::string& kind, const std::string& key) const {
  auto it = by_key_.find({kind, key});
  return it == by_key_.end() ? nullptr : it->second;
}

std::vector<std::string> Inputs::stale_fields(const Entity& e, const EntityEdition& ed) const { return use_.stale_fields(e, ed); }

bool Inputs::stale(const Entity& e, const EntityEdition& ed) const {
  return ed.prov.revision < e.winner().prov.revision && !stale_fields(e, ed).empty();
}

Choice Inputs::choose(const Entity& e, const std::string& lang) const {
  const auto [i, shown] = choose_edition(
      e.editions, lang, kBase, [](const EntityEdition* ed) { return ed->prov.lang; },
      [&](const EntityEdition* ed) { return use_.usable(e, *ed); });
  return {e.editions.at(i), shown};
}

bool Inputs::neutral(const Entity& e, const std::string& text) const {
  std::set<std::string> langs;
  for (const auto* ed : e.editions)
    if (ed->text == text) langs.insert(ed->prov.lang);
  return langs.size() >= 2;
}

// --- recipe rows ---------------------------------------------------------------------

const SourceRow* Inputs::source_row(const Provenance& p) const {
  auto it = source_rows_.find({p.file, p.line});
  return it == source_rows_.end() ? nullptr : &it->second;
}

Choice Inputs::row_choice(const IndexEntry& e, const RecipeRow& w, const std::string& lang, const RecipeRow** chosen) const {
  std::vector<const RecipeRow*> cands;
  for (const auto& r : c.extracted.recipes) {
    if (r.kind != w.kind || !same_values(r, w)) continue;
    const bool same = e.kind == RecipeKind::Benchmark ? model_key(r.name) == model_key(w.name) : (r.name == w.name && r.mode == w.mode);
    if (same) cands.push_back(&r);
  }
  std::stable_sort(cands.begin(), cands.end(), [](const RecipeRow* a, const RecipeRow* b) { return newer(a->prov, b->prov); });
  auto pick = [&](const std::string& l) -> const RecipeRow* {
    for (const auto* r : cands)
      if (r->prov.lang == l) return r;
    return nullptr;
  };
  Choice out;
  if (const RecipeRow* r = pick(lang)) {
    *chosen = r;
  } else if (const RecipeRow* b = pick(kBase)) {
    *chosen = b;
    out.fallback = kBase;
  } else {
    *chosen = &w;
    out.fallback = w.prov.lang == lang ? std::string() : w.prov.lang;
  }
  // Notes written the same in two languages need no marker.
  if (!out.fallback.empty()) {
    std::set<std::string> langs;
    for (const auto* r : cands)
      if (r->notes == (*chosen)->notes) langs.insert(r->prov.lang);
    if (langs.size() >= 2 || (*chosen)->notes.empty()) out.fallback.clear();
  }
  return out;
}

std::string Inputs::family_heading(const Family& f, const std::string& lang, bool with_marker) const {
  if (!f.entity) return {};
  const Choice ch = choose(*f.entity, lang);
  std::string out = md_text(ch.ed->text);
  if (with_marker && !ch.fallback.empty() && !neutral(*f.entity, ch.ed->text)) out += " " + marker(lang, ch.fallback);
  return out;
}

const Family* Inputs::family_of(const IndexEntry& e) const {
  for (const auto& f : families)
    if (f.index_kind == e.index_kind && f.ordinal == e.family_ordinal) return &f;
  return nullptr;
}

void Inputs::build_index() {
  auto mode_rank = [&](const std::string& m) {
    auto it = std::find(mode_order.begin(), mode_order.end(), m);
    return it == mode_order.end() ? mode_order.size() : static_cast<size_t>(it - mode_order.begin());
  };
  // Library: one entry per name (all its modes). Benchmark: one per model,
  // whatever the language it is written in (fold: full-width → ASCII).
  // Groups are keyed by the kind's spelling (benchmark first), the order the
  // unstable sort of the entries below has always been given.
  std::map<std::pair<std::string_view, std::string>, std::vector<const RecipeRow*>> groups;
  for (const auto& r : c.resolved.recipes)
    groups[{to_string(r.kind), r.kind == RecipeKind::Benchmark ? model_key(r.name) + "\t" + std::to_string(r.family_ordinal) : r.name}]
        .push_back(&r);
  for (auto& [key, rows] : groups) {
    const RecipeKind kind = rows.front()->kind;
    std::stable_sort(rows.begin(), rows.end(), [&](const RecipeRow* a, const RecipeRow* b) {
      if (a->kind == RecipeKind::Benchmark) return newer(a->prov, b->prov);
      return mode_rank(a->mode) < mode_rank(b->mode);
    });
    if (kind == RecipeKind::Benchmark) rows.resize(1);
    IndexEntry e;
    e.kind = kind;
    e.index_kind = std::string(to_string(kind)) + "_index";
    e.family_ordinal = rows.front()->family_ordinal;
    e.name = rows.front()->name;
    e.rows = rows;
    for (const auto* r : rows) e.modes.push_back(r->mode);
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const IndexEntry& a, const IndexEntry& b) {
    if (a.kind != b.kind) return a.kind == RecipeKind::Library;  // library before benchmark
    const std::string fa = fold(a.name), fb = fold(b.name);
    if (fa != fb) return natural_less(fa, fb);
    return a.name < b.name;
  });
  std::set<std::string> used;
  for (auto& e : entries) {
    std::string s = slug(e.name, false);
    std::string unique = s;
    for (int n = 2; used.count(fold(unique)); ++n) unique = s + "-" + std::to_string(n);
    used.insert(fold(unique));
    e.slug = unique;
  }

  for (const auto& ent : c.resolved.entities) {
    if (ent.kind != "family") continue;
    const auto slash = ent.key.rfind('/');
    if (slash == std::string::npos) continue;
    Family f;
    f.index_kind = ent.key.substr(0, slash);
    f.ordinal = std::atoi(ent.key.c_str() + slash + 1);
    f.entity = &ent;
    families.push_back(f);
  }
  auto index_rank = [&](const std::string& k) {
    return static_cast<size_t>(std::find(index_kinds.begin(), index_kinds.end(), k) - index_kinds.begin());
  };
  std::sort(families.begin(), families.end(), [&](const Family& a, const Family& b) {
    return std::make_tuple(index_rank(a.index_kind), a.ordinal) < std::make_tuple(index_rank(b.index_kind), b.ordinal);
  });
  std::set<std::string> used_family;
  for (auto& f : families) {
    for (const auto& e : entries)
      if (e.index_kind == f.index_kind && e.family_ordinal == f.ordinal) f.entries.push_back(&e);
    const Choice ch = choose(*f.entity, kBase);
    std::string s = slug((f.entries.empty() ? f.index_kind : std::string(to_string(f.entries.front()->kind))) + "-" + ch.ed->text, true);
    std::string unique = s;
    for (int n = 2; used_family.count(unique); ++n) unique = s + "-" + std::to_string(n);
    used_family.insert(unique);
    f.slug = unique;
  }
}

// --- Markdown, YAML and text helpers ----------------------------------------------------

// Markdown escaping has one home, base/markdown.hpp (kbq --format markdown
// uses it too); these are its names here.
std::string md_text(const std::string& text, bool in_table) { return md::text(text, in_table); }
std::string md_code(const std::string& text, bool in_table) { return md::code(text, in_table); }
std::string md_fence(const std::string& code, const std::string& info) { return md::fence(code, info); }
std::string md_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  return md::table(header, rows);
}

std::string anchor(const std::string& heading) {
  std::string out;
  size_t i = 0;
  while (i < heading.size()) {
    const char32_t cp = next_code_point(heading, i);
    if (cp < 0x80) {
      const auto ch = static_cast<char>(cp);
      if (std::isalnum(static_cast<unsigned char>(ch)))
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      else if (ch == '-' || ch == '_')
        out += ch;
      else if (ch == ' ')
        out += '-';
      continue;
    }
    const bool punct = (cp >= 0x00A0 && cp <= 0x00BF) || (cp >= 0x2000 && cp <= 0x206F) || (cp >= 0x2190 && cp <= 0x21FF) ||
                       (cp >= 0x2500 && cp <= 0x257F) || (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFF01 && cp <= 0xFF0F) ||
                       (cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65);
    if (!punct) append_utf8(out, cp);
  }
  return out;
}

std::string slug(const std::string& s, bool lower) {
  std::string out;
  bool dash = false;
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x80 && (std::isalnum(u) || ch == '_' || ch == '.')) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += lower ? static_cast<char>(std::tolower(u)) : ch;
    } else {
      dash = true;
    }
  }
  while (!out.empty() && (out.back() == '.' || out.back() == '-')) out.pop_back();
  return out.empty() ? std::string("_") : out;
}

// JSON strings are YAML double-quoted scalars; C1 and bidirectional
// controls are written as \u escapes too.
std::string yaml_str(const std::string& s) { return escape_json_controls(nlohmann::json(s).dump()); }

std::string yaml_scalar(const std::string& s) {
  const bool plain = !s.empty() && s.front() != ' ' && s.back() != ' ' && std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == ' ' || ch == '_' || ch == '.' || ch == '-';
  });
  return plain ? s : yaml_str(s);
}

std::string yaml_list(const std::vector<std::string>& items) {
  if (items.empty()) return "[]";
  std::string out;
  for (const auto& i : items) out += "\n  - " + yaml_str(i);
  return out;
}

std::string front_matter(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out = "---\n";
  for (const auto& [k, v] : fields) out += k + ":" + (!v.empty() && v[0] == '\n' ? v : " " + v) + "\n";
  return out + "---\n";
}

std::string first_words(const std::string& s, size_t n) {
  const std::string t = normalize_space(s);
  size_t i = 0, cps = 0;
  while (i < t.size() && cps < n) {
    next_code_point(t, i);
    ++cps;
  }
  return i >= t.size() ? t : trim(t.substr(0, i)) + "…";
}

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  auto digit = [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;
}

std::string model_key(const std::string& name) {
  std::string out;
  for (char ch : fold(name))
    if (ch != ' ') out += ch;
  return out;
}

std::string where(const Provenance& p) { return p.file + ":" + std::to_string(p.line); }

bool newer(const Provenance& a, const Provenance& b) {
  return std::make_tuple(-a.revision, a.translated, a.lang, a.file, a.line) <
         std::make_tuple(-b.revision, b.translated, b.lang, b.file, b.line);
}

std::vector<std::string> planner_words(Db& db, const std::string& key) {
  Stmt st(db, "SELECT value FROM planner WHERE key = ?");
  st.bind(1, key);
  std::vector<std::string> out;
  if (st.step())
    for (auto& w : split(st.text(0), ' '))
      if (!w.empty()) out.push_back(w);
  if (out.empty()) throw KbValueError("planner", "value", key, "missing or empty: data/planner.tsv must set it for kbc generate");
  return out;
}

std::vector<long long> planner_counts(Db& db, const std::string& key) {
  std::vector<long long> out;
  for (const auto& w : planner_words(db, key)) {
    long long n = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), n);
    if (ec != std::errc() || end != w.data() + w.size() || n < 1)
      throw KbValueError("planner", "value", key, "'" + w + "' is not a whole number of at least 1");
    out.push_back(n);
  }
  return out;
}

std::string lang_path(const std::string& stem, const std::string& lang) { return lang == kBase ? stem + ".md" : stem + "." + lang + ".md"; }

}  // namespace kb::gen
