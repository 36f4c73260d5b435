// The code front end: reads the snapshot folders `kbc extract-code` wrote
// (see code.hpp). Every file is a TSV with a `#` comment header and a header
// row; columns are found by name, so a new column is no break.
#include "compiler/code/code.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "base/escape.hpp"
#include "base/files.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"
#include "base/tsv.hpp"

namespace kb {

namespace fs = std::filesystem;

namespace {

// A path as diagnostics and provenance show it: relative to the sources
// root, computed lexically (fs::relative would resolve a link, and name its
// target instead of the link).
std::string shown_path(const fs::path& p, const std::string& root) {
  return fs::absolute(p).lexically_normal().lexically_relative(fs::absolute(root).lexically_normal()).generic_string();
}

// The extractor escapes tab, newline and backslash inside a cell. A cell
// without a backslash is taken as it is (most are: no copy).
std::string unescape(std::string s) {
  if (s.find('\\') == std::string::npos) return s;
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char n = s[++i];
    out += n == 't' ? '\t' : n == 'n' ? '\n' : n;  // \\ → \, \| → | (a literal bar inside one alternative)
  }
  return out;
}

// Where code facts may be read from: the real path of the code-facts
// folder. A file or a snapshot folder of it that is a link must resolve
// inside it, as a source must resolve inside the sources (docs/security.md):
// a linked recipes.tsv, or a linked snapshot folder, is an error naming
// the link and its target, and is not read.
struct Inside {
  fs::path real;      // the code-facts folder, canonical
  std::string where;  // "the sources folder" or "the code-facts folder"
  bool holds(const fs::path& p, const std::string& shown, Diagnostics& diags) const {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return true;
    const fs::path target = fs::canonical(p, ec);
    if (ec) {
      diags.error({shown, 0, 0}, "cannot read: a link to nothing (" + ec.message() + ")", "remove the link");
      return false;
    }
    if (lexically_inside(real, target)) return true;
    diags.error({shown, 0, 0}, "links outside " + where + " (to " + target.string() + ")",
                "kbc reads only files inside the sources; copy the file in instead");
    return false;
  }
};

// A file of a snapshot: a regular file inside the code-facts folder, read
// within kMaxCodeFileBytes (a FIFO or a device is an error, never a wait or
// an endless read).
std::optional<std::string> read_code_file(const fs::path& p, const std::string& shown, const Inside& inside, Diagnostics& diags) {
  if (!inside.holds(p, shown, diags)) return std::nullopt;
  FileRead read = read_regular_file(p.string(), limits::kMaxCodeFileBytes);
  if (!read.bytes) {
    diags.error({shown, 0, 0}, "cannot read a file of a code snapshot: " + read.error, "rerun kbc extract-code for this checkout");
    return std::nullopt;
  }
  return std::move(read.bytes);
}

std::optional<TsvTable> load(const fs::path& dir, const std::string& file, const std::string& root, const Inside& inside,
                             Diagnostics& diags, const std::vector<std::string>& required) {
  const fs::path p = dir / file;
  const std::string shown = shown_path(p, root);
  auto bytes = read_code_file(p, shown, inside, diags);
  if (!bytes) return std::nullopt;
  TsvTable t = parse_tsv(shown, *bytes, diags, required);
  return t;
}

void read_snapshot_keys(const TsvTable& t, CodeSnapshot& s, Diagnostics& diags) {
  for (const auto& row : t.rows) {
    const std::string& key = t.get(row, "key");
    const std::string& value = t.get(row, "value");
    if (key == "commit") s.commit = value;
    if (key == "date") s.date = value;
    if (key == "repo") s.repo = value;
    if (key == "extractor") s.extractor = value;
  }
  if (s.commit.size() < 9 || s.date.empty())
    diags.error({t.path, 0, 0}, "snapshot.tsv names no commit or date", "rerun kbc extract-code with --commit and --date");
}

void read_recipes(const TsvTable& t, CodeSnapshot& s, Diagnostics& diags) {
  for (const auto& row : t.rows) {
    CodeRecipe r;
    r.name = t.get(row, "name");
    const auto kind = parse_kind<RecipeKind>(t.get(row, "kind"));
    if (!kind) {
      diags.error(t.span(row, "kind"), "unknown recipe kind '" + t.get(row, "kind") + "'", "library or benchmark");
      continue;
    }
    r.kind = *kind;
    r.target = t.get(row, "target");
    r.defined_at = t.get(row, "defined_at");
    r.exported_at = t.get(row, "exported_at");
    r.alias_of = t.get(row, "alias_of");
    r.mode = t.get(row, "mode");
    r.family = t.get(row, "family");
    r.model = t.get(row, "model");
    r.task = t.get(row, "task");
    r.gpus = t.get(row, "gpus");
    // The GPU count its name encodes becomes recipes.native_gpus.
    if (const std::string problem = int_cell_problem(int_range("recipes", "native_gpus"), r.gpus); !problem.empty())
      diags.error(t.span(row, "gpus"), "GPU count of " + r.name + ": " + problem,
                  "it becomes recipes.native_gpus, which kbq reads only as a whole number in range; rerun kbc extract-code");
    r.hardware = t.get(row, "hardware");
    r.precision = t.get(row, "precision");
    r.variant = t.get(row, "variant");
    r.step = t.get(row, "step");
    r.line = row.line;
    // kbq prints these in code spans and launch commands: each must be a
    // name, like every name of the recipe index (a --kb file with another
    // is refused too: base/limits.hpp, kKbNameColumns).
    bool names_ok = true;
    for (const char* column : {"name", "target", "alias_of"})
      if (!kb::is_name(t.get(row, column))) {
        diags.error(t.span(row, column), std::string("recipe ") + column + " '" + t.get(row, column) + "' is not a name",
                    "letters, digits, '_', '.', '-', not starting with '.' or '-', at most " + std::to_string(limits::kMaxNameBytes) +
                        " bytes: rerun kbc extract-code");
        names_ok = false;
      }
    if (!names_ok) continue;
    s.recipes.push_back(std::move(r));
  }
  std::sort(s.recipes.begin(), s.recipes.end(),
            [](const CodeRecipe& a, const CodeRecipe& b) { return a.name != b.name ? a.name < b.name : a.kind < b.kind; });
}

// A fact that becomes a whole-number column of recipes (kNumericFacts):
// an int in the column's range, or None where the column allows NULL. What
// derive would otherwise turn into NULL silently (a str, a float, an empty
// or unreadable int), or kbq refuse at every answer (0, 2^40), is an error
// at the value's line and column.
void check_numeric(const TsvTable& t, const TsvRow& row, const CodeFact& f, Diagnostics& diags) {
  if (f.state != FactState::Value && f.state != FactState::Default) return;
  for (const auto& n : kNumericFacts) {
    if (n.field != f.field) continue;
    std::string problem;
    if (f.type == "none")
      problem = n.range.null_ok ? std::string() : "None where a whole number belongs";
    else if (f.type != "int")
      problem = "a " + (f.type.empty() ? std::string("value") : f.type) + " ('" + first_code_points(f.value, 40) +
                "') where a whole number belongs";
    else if (trim(f.value).empty())
      problem = "an empty int value";
    else
      problem = int_cell_problem(n.range, f.value);
    if (!problem.empty())
      diags.error(t.span(row, "value"), f.field + " of " + t.get(row, "target") + ": " + problem,
                  "it becomes recipes." + std::string(n.range.column) + ", which kbq reads only as a whole number from " +
                      std::to_string(n.range.lo) + " to " + std::to_string(n.range.hi) +
                      "; rerun kbc extract-code, or fix the value in the checkout");
    return;
  }
}

// The GPUs a recipe's layout spans become recipes.min_gpus: the product
// of sizes that are each in range can still pass the column's range.
void check_layouts(const TsvTable& t, const CodeSnapshot& s, Diagnostics& diags) {
  const IntRange& range = int_range("recipes", "min_gpus");
  for (const auto& r : s.recipes) {
    const auto tp = fact_int(s.fact(r, "tp")), pp = fact_int(s.fact(r, "pp")), cp = fact_int(s.fact(r, "cp")),
               ep = fact_int(s.fact(r, "ep"));
    const long long etp = fact_int(s.fact(r, "etp")).value_or(1);
    if (!tp || !pp || !cp || !ep) continue;
    const auto in = [](long long v) { return v >= 1 && v <= limits::kMaxParallel; };  // each checked at its own line
    if (!in(*tp) || !in(*pp) || !in(*cp) || !in(*ep) || !in(etp)) continue;
    const long long gpus = layout_gpus(*tp, *pp, *cp, *ep, etp, true);
    if (gpus <= range.hi) continue;
    diags.error({t.path, r.line, 1},
                "recipe " + r.name + ": its layout spans " + std::to_string(gpus) + " GPUs (PP x max(TP x CP, EP x ETP)), more than " +
                    std::to_string(range.hi),
                "it becomes recipes.min_gpus, which kbq reads only up to " + std::to_string(range.hi) + "; check its parallel sizes");
  }
}

// The snapshot's largest file (some 70 000 rows): its columns are looked
// up once, and the long cells moved into the facts once check_numeric, whose
// error span counts the cells before `value`, has seen the row.
void read_facts(TsvTable& t, CodeSnapshot& s, Diagnostics& diags) {
  const int field_col = t.column("field"), state_col = t.column("state"), value_col = t.column("value"), type_col = t.column("type"),
            at_col = t.column("at"), note_col = t.column("note"), target_col = t.column("target");
  // A missing column reads as empty, as TsvTable::get does (parse_tsv said which).
  const auto take = [](TsvRow& row, int c) { return c < 0 ? std::string() : std::move(row.cells[static_cast<size_t>(c)]); };
  const auto peek = [](const TsvRow& row, int c) -> const std::string& {
    static const std::string none;
    return c < 0 ? none : row.cells[static_cast<size_t>(c)];
  };
  for (auto& row : t.rows) {
    CodeFact f;
    const auto state = parse_kind<FactState>(peek(row, state_col));
    if (!state) {
      diags.error(t.span(row, "state"), "unknown fact state '" + peek(row, state_col) + "'", "value, default, alternatives or unknown");
      continue;
    }
    f.state = *state;
    f.field = peek(row, field_col);
    f.value = unescape(peek(row, value_col));
    f.type = peek(row, type_col);
    f.line = row.line;
    check_numeric(t, row, f, diags);
    f.at = take(row, at_col);
    f.note = unescape(take(row, note_col));
    s.facts[peek(row, target_col)].push_back(std::move(f));
  }
  for (auto& [target, facts] : s.facts)
    std::sort(facts.begin(), facts.end(), [](const CodeFact& a, const CodeFact& b) { return a.field < b.field; });
}

std::vector<CodeRow> rows_of(TsvTable& t) {
  std::vector<CodeRow> out;
  out.reserve(t.rows.size());
  for (auto& row : t.rows) {
    CodeRow r;
    r.cells.reserve(row.cells.size());
    for (auto& c : row.cells) r.cells.push_back(unescape(std::move(c)));
    r.line = row.line;
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<CodeSnapshot> read_snapshot(const fs::path& dir, const std::string& root, const Inside& inside, Diagnostics& diags) {
  const int before = diags.error_count();
  CodeSnapshot s;
  s.folder = shown_path(dir, root);
  const auto load = [&](const std::string& file, Diagnostics& d, const std::vector<std::string>& required) {
    return kb::load(dir, file, root, inside, d, required);
  };
  if (auto t = load("snapshot.tsv", diags, {"key", "value"})) read_snapshot_keys(*t, s, diags);
  std::optional<TsvTable> recipes = load("recipes.tsv", diags, {"name", "kind", "target", "defined_at", "exported_at", "mode"});
  if (recipes) read_recipes(*recipes, s, diags);
  if (auto t = load("recipe-facts.tsv", diags, {"target", "field", "state", "value", "type", "at", "note"})) read_facts(*t, s, diags);
  if (recipes) check_layouts(*recipes, s, diags);
  if (auto t = load("launcher.tsv", diags, {"section", "item", "attribute", "value", "at"})) s.launcher = rows_of(*t);
  if (auto t = load("config-keys.tsv", diags, {"key", "kind", "class", "type", "default", "source", "at"})) s.config_keys = rows_of(*t);
  if (auto t = load("datasets.tsv", diags, {"preset", "attribute", "value", "at", "note"})) s.datasets = rows_of(*t);
  if (auto t = load("providers.tsv", diags, {"provider", "field", "state", "value", "type", "at", "note", "targets"}))
    s.providers = rows_of(*t);
  for (const auto& r : s.recipes)
    if (!s.facts.count(r.target))
      diags.error({s.folder + "/recipes.tsv", r.line, 0}, "recipe " + r.name + ": its function " + r.target + " has no facts",
                  "rerun kbc extract-code: recipes.tsv and recipe-facts.tsv come from one run");
  if (diags.error_count() > before) return std::nullopt;
  return s;
}

std::optional<CodeChanges> read_changes(const fs::path& file, const std::string& root, const Inside& inside, Diagnostics& diags) {
  // code/changes-<old>-<new>.tsv
  const std::string stem = file.stem().string();
  const auto dash = stem.find('-', 8);
  if (dash == std::string::npos) {
    diags.error({shown_path(file, root), 0, 0}, "not a changes file name", "changes-<old commit>-<new commit>.tsv");
    return std::nullopt;
  }
  CodeChanges c;
  c.file = shown_path(file, root);
  c.old_commit = stem.substr(8, dash - 8);
  c.new_commit = stem.substr(dash + 1);
  auto bytes = read_code_file(file, c.file, inside, diags);
  if (!bytes) return std::nullopt;
  const TsvTable t = parse_tsv(c.file, *bytes, diags, {"change", "name", "kind", "field", "old", "new"});
  for (const auto& row : t.rows)
    c.rows.push_back({t.get(row, "change"), t.get(row, "name"), t.get(row, "kind"), t.get(row, "field"), unescape(t.get(row, "old")),
                      unescape(t.get(row, "new")), row.line});
  return c;
}

}  // namespace

const std::vector<CodeFact>* CodeSnapshot::facts_of(const CodeRecipe& r) const {
  auto it = facts.find(r.target);
  return it == facts.end() ? nullptr : &it->second;
}

const CodeFact* CodeSnapshot::fact(const CodeRecipe& r, const std::string& field) const {
  const auto* all = facts_of(r);
  if (!all) return nullptr;
  auto it = std::lower_bound(all->begin(), all->end(), field, [](const CodeFact& f, const std::string& k) { return f.field < k; });
  return it != all->end() && it->field == field ? &*it : nullptr;
}

const CodeRecipe* CodeSnapshot::recipe(const std::string& name, RecipeKind kind) const {
  // `recipes` is sorted by name, then kind (read_recipes).
  auto it = std::lower_bound(recipes.begin(), recipes.end(), std::make_pair(&name, kind), [](const CodeRecipe& r, const auto& key) {
    return r.name != *key.first ? r.name < *key.first : r.kind < key.second;
  });
  return it != recipes.end() && it->name == name && it->kind == kind ? &*it : nullptr;
}

CodeFacts load_code_facts(const std::string& root, const std::string& code_dir, Diagnostics& diags) {
  CodeFacts out;
  const fs::path code = code_dir.empty() ? fs::path(root) / "code" : fs::path(code_dir);
  const std::string sources_root = code_dir.empty() ? root : fs::absolute(code).parent_path().string();
  std::error_code ec;
  if (!fs::is_directory(code, ec)) return out;
  // The default code folder is part of the sources and must resolve inside
  // them; a folder given with --code is followed as given (the user named it).
  Inside inside{fs::canonical(code, ec), code_dir.empty() ? "the sources folder" : "the code-facts folder"};
  if (code_dir.empty()) {
    const fs::path real_root = fs::canonical(root, ec);
    if (!lexically_inside(real_root, inside.real)) {
      diags.error({"code", 0, 0}, "links outside the sources folder (to " + inside.real.string() + ")",
                  "the code facts are part of the sources: keep them inside, or pass --code DIR");
      return out;
    }
  }
  std::vector<fs::path> dirs, changes;
  for (auto it = fs::directory_iterator(code, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code fec;
    const std::string name = it->path().filename().string();
    const bool changes_file = starts_with(name, "changes-") && ends_with(name, ".tsv");
    const bool snapshot = it->is_directory(fec) && fs::exists(fs::symlink_status(it->path() / "snapshot.tsv", fec));
    if ((snapshot || changes_file) && !inside.holds(it->path(), shown_path(it->path(), sources_root), diags)) continue;
    if (snapshot) dirs.push_back(it->path());
    if (changes_file) changes.push_back(it->path());
  }
  if (ec) diags.error({shown_path(code, sources_root), 0, 0}, "cannot list the code snapshots: " + ec.message());
  std::sort(dirs.begin(), dirs.end());
  std::sort(changes.begin(), changes.end());
  for (const auto& d : dirs)
    if (auto s = read_snapshot(d, sources_root, inside, diags)) out.snapshots.push_back(std::move(*s));
  std::sort(out.snapshots.begin(), out.snapshots.end(),
            [](const CodeSnapshot& a, const CodeSnapshot& b) { return a.date != b.date ? a.date < b.date : a.commit < b.commit; });
  for (const auto& f : changes)
    if (auto c = read_changes(f, sources_root, inside, diags)) out.changes.push_back(std::move(*c));
  return out;
}

std::optional<long long> fact_int(const CodeFact* f) {
  if (!f || (f->state != FactState::Value && f->state != FactState::Default) || f->type != "int") return std::nullopt;
  try {
    size_t used = 0;
    const long long v = std::stoll(f->value, &used);
    if (used == f->value.size()) return v;
  } catch (...) {
  }
  return std::nullopt;
}

std::optional<bool> fact_bool(const CodeFact* f) {
  if (!f || (f->state != FactState::Value && f->state != FactState::Default) || f->type != "bool") return std::nullopt;
  return f->value == "true";
}

std::optional<std::string> fact_text(const CodeFact* f) {
  if (!f || (f->state != FactState::Value && f->state != FactState::Default)) return std::nullopt;
  if (f->type == "none") return std::string();
  return f->value;
}

}  // namespace kb
