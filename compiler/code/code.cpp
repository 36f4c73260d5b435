// The code front end: reads the snapshot folders `kbc extract-code` wrote
// (see code.hpp). Every file is a TSV with a `#` comment header and a header
// row; columns are found by name, so a new column is no break.
#include "compiler/code/code.hpp"

#include <algorithm>
#include <filesystem>

#include "base/files.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"
#include "base/tsv.hpp"

namespace kb {

namespace fs = std::filesystem;

namespace {

// The extractor escapes tab, newline and backslash inside a cell.
std::string unescape(const std::string& s) {
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

std::optional<TsvTable> load(const fs::path& dir, const std::string& file, const std::string& root, Diagnostics& diags,
                             const std::vector<std::string>& required) {
  const fs::path p = dir / file;
  std::error_code ec;
  const std::string shown = fs::relative(p, root).generic_string();
  if (!fs::exists(p, ec)) {
    diags.error({shown, 0, 0}, "missing file of a code snapshot", "rerun kbc extract-code for this checkout");
    return std::nullopt;
  }
  FileRead read = read_regular_file(p.string(), limits::kMaxCodeSnapshotFileBytes);
  if (!read.bytes) {
    diags.error({shown, 0, 0}, "cannot read file of a code snapshot: " + read.error, "docs/security.md says how to change the limit");
    return std::nullopt;
  }
  TsvTable t = parse_tsv(shown, *read.bytes, diags, required);
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
    r.hardware = t.get(row, "hardware");
    r.precision = t.get(row, "precision");
    r.variant = t.get(row, "variant");
    r.step = t.get(row, "step");
    r.line = row.line;
    s.recipes.push_back(std::move(r));
  }
  std::sort(s.recipes.begin(), s.recipes.end(),
            [](const CodeRecipe& a, const CodeRecipe& b) { return a.name != b.name ? a.name < b.name : a.kind < b.kind; });
}

void read_facts(const TsvTable& t, CodeSnapshot& s, Diagnostics& diags) {
  for (const auto& row : t.rows) {
    CodeFact f;
    f.field = t.get(row, "field");
    const auto state = parse_kind<FactState>(t.get(row, "state"));
    if (!state) {
      diags.error(t.span(row, "state"), "unknown fact state '" + t.get(row, "state") + "'", "value, default, alternatives or unknown");
      continue;
    }
    f.state = *state;
    f.value = unescape(t.get(row, "value"));
    f.type = t.get(row, "type");
    f.at = t.get(row, "at");
    f.note = unescape(t.get(row, "note"));
    f.line = row.line;
    s.facts[t.get(row, "target")].push_back(std::move(f));
  }
  for (auto& [target, facts] : s.facts)
    std::sort(facts.begin(), facts.end(), [](const CodeFact& a, const CodeFact& b) { return a.field < b.field; });
}

std::vector<CodeRow> rows_of(const TsvTable& t) {
  std::vector<CodeRow> out;
  for (const auto& row : t.rows) {
    CodeRow r;
    for (const auto& c : row.cells) r.cells.push_back(unescape(c));
    r.line = row.line;
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<CodeSnapshot> read_snapshot(const fs::path& dir, const std::string& root, Diagnostics& diags) {
  const int before = diags.error_count();
  CodeSnapshot s;
  s.folder = fs::relative(dir, root).generic_string();
  if (auto t = load(dir, "snapshot.tsv", root, diags, {"key", "value"})) read_snapshot_keys(*t, s, diags);
  if (auto t = load(dir, "recipes.tsv", root, diags, {"name", "kind", "target", "defined_at", "exported_at", "mode"}))
    read_recipes(*t, s, diags);
  if (auto t = load(dir, "recipe-facts.tsv", root, diags, {"target", "field", "state", "value", "type", "at", "note"}))
    read_facts(*t, s, diags);
  if (auto t = load(dir, "launcher.tsv", root, diags, {"section", "item", "attribute", "value", "at"})) s.launcher = rows_of(*t);
  if (auto t = load(dir, "config-keys.tsv", root, diags, {"key", "kind", "class", "type", "default", "source", "at"}))
    s.config_keys = rows_of(*t);
  if (auto t = load(dir, "datasets.tsv", root, diags, {"preset", "attribute", "value", "at", "note"})) s.datasets = rows_of(*t);
  if (auto t = load(dir, "providers.tsv", root, diags, {"provider", "field", "state", "value", "type", "at", "note", "targets"}))
    s.providers = rows_of(*t);
  for (const auto& r : s.recipes)
    if (!s.facts.count(r.target))
      diags.error({s.folder + "/recipes.tsv", r.line, 0}, "recipe " + r.name + ": its function " + r.target + " has no facts",
                  "rerun kbc extract-code: recipes.tsv and recipe-facts.tsv come from one run");
  if (diags.error_count() > before) return std::nullopt;
  return s;
}

std::optional<CodeChanges> read_changes(const fs::path& file, const std::string& root, Diagnostics& diags) {
  // code/changes-<old>-<new>.tsv
  const std::string stem = file.stem().string();
  const auto dash = stem.find('-', 8);
  if (dash == std::string::npos) {
    diags.error({fs::relative(file, root).generic_string(), 0, 0}, "not a changes file name", "changes-<old commit>-<new commit>.tsv");
    return std::nullopt;
  }
  CodeChanges c;
  c.file = fs::relative(file, root).generic_string();
  c.old_commit = stem.substr(8, dash - 8);
  c.new_commit = stem.substr(dash + 1);
  auto bytes = read_file(file.string());
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

CodeFacts load_code_facts(const std::string& root, const std::string& code_dir, Diagnostics& diags) {
  CodeFacts out;
  const fs::path code = code_dir.empty() ? fs::path(root) / "code" : fs::path(code_dir);
  const std::string sources_root = code_dir.empty() ? root : fs::absolute(code).parent_path().string();
  std::error_code ec;
  if (!fs::is_directory(code, ec)) return out;
  std::vector<fs::path> dirs, changes;
  for (auto it = fs::directory_iterator(code, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->is_directory() && fs::exists(it->path() / "snapshot.tsv")) dirs.push_back(it->path());
    const std::string name = it->path().filename().string();
    if (it->is_regular_file() && starts_with(name, "changes-") && ends_with(name, ".tsv")) changes.push_back(it->path());
  }
  if (ec) diags.error({fs::relative(code, sources_root).generic_string(), 0, 0}, "cannot list the code snapshots: " + ec.message());
  std::sort(dirs.begin(), dirs.end());
  std::sort(changes.begin(), changes.end());
  for (const auto& d : dirs)
    if (auto s = read_snapshot(d, sources_root, diags)) out.snapshots.push_back(std::move(*s));
  std::sort(out.snapshots.begin(), out.snapshots.end(),
            [](const CodeSnapshot& a, const CodeSnapshot& b) { return a.date != b.date ? a.date < b.date : a.commit < b.commit; });
  for (const auto& f : changes)
    if (auto c = read_changes(f, sources_root, diags)) out.changes.push_back(std::move(*c));
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
