// kbq's KB access (see kb.hpp). Every value is bound as a parameter.
#include "query/kb/kb.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <climits>
#include <filesystem>
#include <stdexcept>
#include <tuple>

#include "base/checked.hpp"
#include "base/dsl/kb_lexicon.hpp"
#include "base/escape.hpp"
#include "base/kb_schema.hpp"
#include "base/limits.hpp"
#include "base/packed_facts.hpp"
#include "base/schema_version.hpp"
#include "base/stored_bytes.hpp"
#include "base/text.hpp"
#include "base/value_ranges.hpp"
#include "query/kb/kb_int.hpp"

// Linked into kbq only (query/embed.S.in); weak so that kbc, which links
// this file to answer questions in generate, needs no embedded KB.
extern "C" {
extern const unsigned char kb_embedded_begin[] __attribute__((weak));
extern const unsigned char kb_embedded_end[] __attribute__((weak));
}

namespace kbq {

using kb_int::comma_list;
using kb_int::read_kind;

namespace {
using kb::kSchemaVersion;

// Opens the embedded KB (trusted: built with kbq) or a file given with --kb
// (untrusted: docs/security.md). A file must be a regular file; it is read
// immutable, with SQLite's defensive settings and limits and a statement
// budget (kb::Db::open_untrusted).
kb::Db open_db(const std::string& path) {
  if (path.empty()) {
    if (!kb_embedded_begin || !kb_embedded_end) throw std::runtime_error("this program has no embedded knowledge base: pass --kb FILE");
    const auto size = static_cast<size_t>(kb_embedded_end - kb_embedded_begin);
    return kb::Db::from_bytes(kb_embedded_begin, size);
  }
  const std::string shown = kb::escape_controls(path, kb::EscapeNewlines::Yes);
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) throw std::runtime_error(shown + ": error: knowledge base not found");
  if (status.type() == std::filesystem::file_type::directory)
    throw std::runtime_error(shown + ": error: is a folder, not a knowledge base");
  try {
    return kb::Db::open_untrusted(path);
  } catch (const std::exception& e) {
    throw std::runtime_error(shown + ": error: cannot open knowledge base: " + e.what());
  }
}

}  // namespace

Kb::Kb(const std::string& path) : db_(open_db(path)) {
  db_.cache_statements();
  const std::string where = path.empty() ? std::string("embedded knowledge base") : kb::escape_controls(path, kb::EscapeNewlines::Yes);
  try {
    kb::Stmt v(db_, "PRAGMA user_version");
    const long long version = v.step() ? v.integer(0) : 0;
    kb::Stmt t(db_, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'meta'");
    if (!t.step() || t.integer(0) == 0) throw std::runtime_error(where + ": error: not a kbq knowledge base (no meta table)");
    if (version != kSchemaVersion)
      throw std::runtime_error(where + ": error: knowledge base has schema version " + std::to_string(version) +
                               ", this kbq reads version " + std::to_string(kSchemaVersion) + " (rebuild it with a matching kbc)");
    // A file: exactly the tables, columns and indexes of base/schema.sql,
    // no view or trigger, sound pages, and content within the limits (a
    // damaged, partial or crafted KB fails here with one line, not in the
    // middle of an answer). The embedded KB was built and checked with this
    // program (kbc build runs the same content check).
    if (!path.empty()) {
      if (const std::string problem = kb::kb_structure_problem(db_); !problem.empty())
        throw std::runtime_error(where + ": error: " + problem);
      if (const std::string problem = kb::kb_integrity_problem(db_); !problem.empty())
        throw std::runtime_error(where + ": error: " + problem);
    }
  } catch (const kb::SqliteError& e) {
    throw std::runtime_error(where + ": error: not a readable SQLite knowledge base (" +
                             kb::escape_controls(e.what(), kb::EscapeNewlines::Yes) + ")");
  }
  // What a file holds: rows, bytes, values and names within base/limits.hpp.
  if (!path.empty()) {
    std::string problem;
    try {
      problem = kb::kb_content_problem(db_);
    } catch (const kb::SqliteError& e) {  // a value past SQLite's own length limit, the budget
      throw std::runtime_error(where +
                               ": error: cannot read the knowledge base: " + kb::escape_controls(e.what(), kb::EscapeNewlines::Yes));
    }
    if (!problem.empty()) throw std::runtime_error(where + ": error: " + problem);
  }
  where_ = where;
  try {
    kb::Stmt l(db_, "SELECT value FROM meta WHERE key = 'languages'");
    if (l.step()) languages_ = comma_list(l.text(0));
    kb::Stmt c(db_, "SELECT substr(commit_sha, 1, 9) FROM code_snapshots WHERE newest = 1");
    if (c.step()) commit_ = c.text(0);
  } catch (const kb::SqliteError& e) {
    throw std::runtime_error(where + ": error: knowledge base is incomplete (" + e.what() + "); rebuild it with kbc build");
  }
}

const kbq::dsl::Lexicon& Kb::lexicon() {
  if (!lexicon_) {
    try {
      lexicon_ = kbq::dsl::load_compiled_lexicon(db_);
    } catch (const kb::SqliteError& e) {
      throw std::runtime_error(where_ + ": error: knowledge base is incomplete (" + e.what() + "); rebuild it with kbc build");
    }
  }
  return *lexicon_;
}

// --- recipes ---------------------------------------------------------------------

namespace {
// The columns of a Recipe, in the order read_recipe reads them. A recipe
// without a recipe_launch row reads its columns as NULL: "" and 0 as read
// (kb::Stmt), what coalesce() gave at the price of a function per column.
constexpr const char* kRecipeSelect =
    "SELECT r.name, r.target, r.mode, r.launch_mode, r.model_key, r.modality, r.moe, "
    "r.tp, r.pp, r.vp, r.cp, r.ep, r.etp, r.sp, r.seq_len, r.gbs, r.mbs, r.dataset, r.precision, r.native_gpus, "
    "r.native_hardware, r.native_precision, r.variant, r.min_gpus, r.low_precision, l.precision, "
    "l.precision_at, l.data, l.data_name, l.data_at, l.user_data, l.peft_modes, l.peft_at, l.raises, "
    "l.raises_at, l.shadowed, l.shadowed_at "
    "FROM recipes r LEFT JOIN recipe_launch l ON l.name = r.name AND l.kind = r.kind ";

// The value of `id` in rows sorted by id; null when none.
template <typename V>
const V* by_id(const std::vector<std::pair<long long, V>>& rows, long long id) {
  if (id >= 1 && static_cast<unsigned long long>(id) <= rows.size() && rows[static_cast<size_t>(id - 1)].first == id)
    return &rows[static_cast<size_t>(id - 1)].second;
  const auto it = std::lower_bound(rows.begin(), rows.end(), id, [](const auto& row, long long v) { return row.first < v; });
  return it != rows.end() && it->first == id ? &it->second : nullptr;
}

using SiteOf = std::function<std::optional<std::string>(long long id)>;  // a launch_sites row's at

// A site by id from the table read whole.
SiteOf site_in(const LaunchSites& sites) {
  return [&sites](long long id) -> std::optional<std::string> {
    const std::string* at = by_id(sites, id);
    if (!at) return std::nullopt;
    return *at;
  };
}

// Recipes read in table order put in name order (SQLite's BINARY order:
// bytes, as std::string compares). kbc writes them in that order, so this
// is one pass; the name index would seek every row, a sorter copy every
// column.
void by_name(std::vector<Recipe>& recipes) {
  const auto less = [](const Recipe& a, const Recipe& b) { return a.name < b.name; };
  if (!std::is_sorted(recipes.begin(), recipes.end(), less)) std::sort(recipes.begin(), recipes.end(), less);
}

// A recipe row, read into `r` (a new Recipe); the model's display name from
// the snapshot's models (one map lookup, not a join per row).
void read_recipe(kb::Stmt& st, RecipeKind kind, const Snapshot& snap, const SiteOf& site_of, Recipe& r) {
  r.name = st.text(0);
  r.kind = kind;
  r.target = st.text(1);
  r.mode = st.text(2);
  r.launch_mode = st.text(3);
  r.model_key = st.text(4);
  r.modality = st.text(5);
  r.moe = st.integer(6) != 0;
  // Sizes kbq divides by or multiplies: checked as read (base/checked.hpp),
  // a zero, a huge or a text value is one error naming the cell.
  // The ranges are base/value_ranges.hpp's, which kbc checks when it builds.
  using kb::int_range;
  auto size = [&](int c, const kb::IntRange& range) { return kb::kb_opt_int(st, c, range, 0); };  // the row: its name
  r.tp = size(7, int_range("recipes", "tp"));
  r.pp = size(8, int_range("recipes", "pp"));
  r.vp = size(9, int_range("recipes", "vp"));
  r.cp = size(10, int_range("recipes", "cp"));
  r.ep = size(11, int_range("recipes", "ep"));
  r.etp = size(12, int_range("recipes", "etp"));
  if (!st.is_null(13)) r.sp = st.integer(13) != 0;
  r.seq_len = size(14, int_range("recipes", "seq_len"));
  r.gbs = size(15, int_range("recipes", "gbs"));
  r.mbs = size(16, int_range("recipes", "mbs"));
  r.dataset = st.text(17);
  r.precision = st.text(18);
  r.native_gpus = size(19, int_range("recipes", "native_gpus"));
  r.native_hardware = st.text(20);
  r.native_precision = st.text(21);
  r.variant = st.text(22);
  r.min_gpus = size(23, int_range("recipes", "min_gpus"));
  r.low_precision = st.text(24);
  // A citation: the launch_sites row its id names ("" when it has none).
  auto site = [&](int c, const char* column) {
    if (st.is_null(c)) return std::string();
    auto at = site_of(st.integer(c));
    if (!at) throw kb::KbValueError("recipe_launch", column, r.name, "not a launch_sites id");
    return std::move(*at);
  };
  r.runs_in = st.text(25);
  r.runs_in_at = site(26, "precision_at");
  r.data = st.text(27);
  r.data_name = st.text(28);
  r.data_at = site(29, "data_at");
  r.user_data = st.integer(30) != 0;
  if (const std::string modes = st.text(31); !modes.empty()) r.peft_modes = kb::split(modes, ',');
  r.peft_at = site(32, "peft_at");
  r.raises = st.text(33);
  r.raises_at = site(34, "raises_at");
  r.shadowed = st.integer(35) != 0;
  r.shadowed_at = site(36, "shadowed_at");
  r.commit = snap.commit;
  if (const ModelBrief* m = snap.model(r.model_key)) r.model = m->display;
}
}  // namespace

namespace {

// A compiled chunk of recipes kbq cannot read ("chunk N[, the recipe at
// byte B]: what"), as the error naming the chunk.
[[noreturn]] void compiled_recipes_error(const kb::stored::Error& e) {
  const std::string m = e.what();
  const size_t colon = m.find(": ");
  if (colon == std::string::npos) throw kb::KbValueError("recipes_compiled", "bytes", "a chunk", m);
  throw kb::KbValueError("recipes_compiled", "bytes", m.substr(0, colon), m.substr(colon + 2));
}

}  // namespace

const Catalog& Kb::catalog(RecipeKind kind) {
  if (auto it = catalogs_.find(kind); it != catalogs_.end()) return it->second;
  // Kept only once read whole: a recipe kbq cannot use throws, and the next
  // answer that needs the catalog meets the same error, never the recipes
  // read before it.
  Catalog c = catalog_part(kind, [](const stored_recipes::Key&) { return true; });
  return catalogs_.emplace(kind, std::move(c)).first->second;
}

const LaunchSites& Kb::launch_sites() {
  if (!launch_sites_) {
    // Kept only once read whole; in the rowid's order, which needs no sort.
    LaunchSites sites;
    kb::Stmt st(db_, "SELECT id, at FROM launch_sites ORDER BY id");
    while (st.step()) sites.emplace_back(st.integer(0), st.text(1));
    launch_sites_ = std::move(sites);
  }
  return *launch_sites_;
}

std::vector<Recipe> Kb::recipes_from_tables() {
  std::vector<Recipe> out;
  const Snapshot& snap = snapshot();
  const SiteOf sites = site_in(launch_sites());
  for (const RecipeKind kind : {RecipeKind::Library, RecipeKind::Benchmark}) {
    const size_t first = out.size();
    kb::Stmt st(db_, std::string(kRecipeSelect) + "WHERE r.kind = ?1");
    st.bind(1, to_string(kind));
    while (st.step()) read_recipe(st, kind, snap, sites, out.emplace_back());
    const auto less = [](const Recipe& a, const Recipe& b) { return a.name < b.name; };
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(), less);
  }
  return out;
}

stored_recipes::Index& Kb::recipe_index() {
  if (recipe_index_) return *recipe_index_;
  // Their count and sizes are bounded when a --kb file is opened
  // (kKbTableLimits, kKbColumnLimits), and kbc checked the embedded one
  // against the same limits.
  std::vector<std::string> chunks;
  kb::Stmt st(db_, "SELECT bytes FROM recipes_compiled ORDER BY chunk");
  while (st.step()) chunks.emplace_back(st.blob(0));
  if (chunks.empty())
    throw kb::KbValueError("recipes_compiled", "bytes", "chunk 0", "missing: kbc writes the recipes an answer reads in every KB");
  try {
    recipe_index_ = std::make_unique<stored_recipes::Index>(std::move(chunks));
  } catch (const kb::stored::Error& e) {
    compiled_recipes_error(e);
  }
  return *recipe_index_;
}

void Kb::read_stored(const stored_recipes::Index::Entry& e, Recipe& r, const Recipe* before) {
  try {
    recipe_index().read(e, r);
  } catch (const kb::stored::Error& x) {
    compiled_recipes_error(x);
  }
  r.commit = commit_;
  // Read in name order, a family's recipes come together: the model of the
  // one read before is most often this one's.
  if (before && before->model_key == r.model_key)
    r.model = before->model;
  else if (const ModelBrief* m = snapshot().model(r.model_key))
    r.model = m->display;
}

Catalog Kb::catalog_part(RecipeKind kind, const std::function<bool(const stored_recipes::Key&)>& in) {
  Catalog c;  // kept by the caller only once read whole, as catalog(kind)
  auto& recipes = c.recipes;
  if (auto whole = catalogs_.find(kind); whole != catalogs_.end()) {
    for (const auto& r : whole->second.recipes)
      if (in(stored_recipes::key_of(r))) recipes.push_back(r);
    return c;
  }
  // The entries kept, first: the vector sized once (growing it would move
  // every recipe read so far).
  std::vector<const stored_recipes::Index::Entry*> kept;
  for (const auto& e : recipe_index().entries())
    if (e.key.kind == kind && in(e.key)) kept.push_back(&e);
  recipes.reserve(kept.size());
  for (const auto* e : kept) {
    const Recipe* before = recipes.empty() ? nullptr : &recipes.back();
    read_stored(*e, recipes.emplace_back(), before);  // reserved: `before` stays where it is
  }
  by_name(recipes);
  return c;
}

const Catalog& Kb::catalog(RecipeKind kind, const std::string& prefix) {
  if (auto it = prefix_catalogs_.find({kind, prefix}); it != prefix_catalogs_.end()) return it->second;
  Catalog c = catalog_part(
      kind, [&](const stored_recipes::Key& k) { return kb::starts_with(k.name, prefix) || kb::starts_with(k.model_key, prefix); });
  return prefix_catalogs_.emplace(std::make_pair(kind, prefix), std::move(c)).first->second;
}

const Catalog& Kb::catalog_of_mode(RecipeKind kind, const std::string& mode) {
  if (auto it = mode_catalogs_.find({kind, mode}); it != mode_catalogs_.end()) return it->second;
  Catalog c = catalog_part(kind, [&](const stored_recipes::Key& k) { return k.mode == mode; });
  return mode_catalogs_.emplace(std::make_pair(kind, mode), std::move(c)).first->second;
}

const Catalog& Kb::catalog_of_models(RecipeKind kind, const std::vector<std::string>& models) {
  if (models.empty()) return catalog(kind);
  const auto key = std::make_pair(kind, models);
  if (auto it = model_catalogs_.find(key); it != model_catalogs_.end()) return it->second;
  // The functions of the models' recipes (of either kind), then every
  // recipe of the kind that runs one of them. A set: a crafted KB's family
  // of thousands of models costs a lookup per recipe, not a scan.
  const std::set<std::string_view> keys(models.begin(), models.end());
  std::set<std::string_view> targets;
  for (const auto& e : recipe_index().entries())
    if (keys.count(e.key.model_key) > 0) targets.insert(e.key.target);
  Catalog c = catalog_part(kind, [&](const stored_recipes::Key& k) { return targets.count(k.target) > 0; });
  return model_catalogs_.emplace(key, std::move(c)).first->second;
}

const std::vector<std::string>& Kb::recipe_names(RecipeKind kind) {
  if (auto it = recipe_names_.find(kind); it != recipe_names_.end()) return it->second;
  std::vector<std::string> names;
  if (auto whole = catalogs_.find(kind); whole != catalogs_.end()) {
    for (const auto& r : whole->second.recipes) names.push_back(r.name);
  } else {
    stored_recipes::Index& index = recipe_index();
    try {
      for (const auto& e : index.entries())
        if (e.key.kind == kind) names.emplace_back(index.name(e));
    } catch (const kb::stored::Error& x) {
      compiled_recipes_error(x);
    }
    std::sort(names.begin(), names.end());
  }
  return recipe_names_.emplace(kind, std::move(names)).first->second;
}

// One recipe by name: from the list when it is loaded, otherwise the one
// entry of the index read whole (show and check need one recipe, not the
// thousand).
std::optional<Recipe> Kb::recipe(const std::string& name, RecipeKind kind) {
  if (auto it = catalogs_.find(kind); it != catalogs_.end()) {
    for (const auto& r : it->second.recipes)
      if (r.name == name) return r;
    return std::nullopt;
  }
  for (const auto& e : recipe_index().entries())
    if (e.key.kind == kind && e.key.name == name) {
      Recipe r;
      read_stored(e, r);
      return r;
    }
  return std::nullopt;
}

std::optional<Recipe> Kb::recipe(const std::string& name) {
  if (auto r = recipe(name, RecipeKind::Library)) return r;
  return recipe(name, RecipeKind::Benchmark);
}

RecipeData Kb::data_of(const Recipe& r) { return RecipeData{r, facts(r.target), model(r.model_key), commit_}; }

std::vector<Kb::RegistryEntry> Kb::registry(const std::string& key) {
  std::vector<RegistryEntry> out;
  // The items from "<key>:" up to "<key>;" (':' + 1), by the launcher_item index.
  kb::Stmt st(db_,
              "SELECT item, attribute, value, at FROM launcher WHERE section = 'registry' AND item >= ? AND item < ? "
              "AND attribute IN ('factory', 'precision') ORDER BY item, attribute");
  st.bind(1, key + ":").bind(2, key + ";");
  std::string factory;  // the item's factory ('factory' sorts before 'precision')
  while (st.step()) {
    const std::string name = st.text(0).substr(key.size() + 1);
    if (st.text(1) == "factory") {
      factory = st.text(2);
      continue;
    }
    const bool canonical = factory.size() > name.size() && kb::ends_with(factory, "." + name);
    out.push_back({name, st.text(2), st.text(3).empty() ? "" : st.text(3) + "@" + commit_, canonical});
    factory.clear();
  }
  return out;
}

// Every cache of the reader keeps a value only once it is read whole: a row
// kbq cannot use throws, and the next answer (--batch) that needs the same
// value meets the same error, never the rows read before it.

const CodeFacts& Kb::facts(const std::string& target) {
  if (auto it = facts_.find(target); it != facts_.end()) return it->second;
  CodeFacts facts;
  read_facts(target, facts, nullptr);
  return facts_.emplace(target, std::move(facts)).first->second;
}

CodeFacts Kb::facts(const std::string& target, bool (*wanted)(std::string_view field)) {
  CodeFacts out;
  read_facts(target, out, wanted);
  return out;
}

std::vector<kb::StoredQuery> kb_int::fact_dictionary_queries() {
  return {{"SELECT id, field FROM fact_fields ORDER BY id", {}}, {"SELECT id, path FROM code_files ORDER BY id", {}}};
}

// `wanted` null: every fact. A row the filter leaves out is still checked
// for what names its field and value, as the whole read checks them.
void Kb::read_facts(const std::string& target, CodeFacts& out, bool (*wanted)(std::string_view field)) {
  // The fields' and files' tables, read once (a hundred rows each, shared
  // by every recipe), and each value at its first use (817 rows, of which an
  // answer uses a few hundred: reading them all cost 1.4 M instructions); a
  // recipe's facts then come from its one row of recipe_facts, packed
  // (base/packed_facts.hpp; the site is the file's path, its line and the
  // rest of the text, as code_facts.at wrote it).
  if (!fact_dictionaries_) {
    // Stored by kbc (rows_compiled's part 'facts'): two statements and 250
    // rows through SQLite cost an answer 0.23 M instructions. A KB without
    // the part (an older kbc's) runs the queries.
    FactDictionaries d;
    kb_int::read_part(db_, "facts", false, kb_int::fact_dictionary_queries(), [&](auto next) {
      auto f = next();
      while (f.step()) d.fields.emplace_back(f.integer(0), f.text(1));
      auto c = next();
      while (c.step()) d.files.emplace_back(c.integer(0), c.text(1));
    });
    fact_dictionaries_ = std::move(d);
  }
  auto& dict = *fact_dictionaries_;
  kb::Stmt st(db_, "SELECT r.facts FROM fact_targets t JOIN recipe_facts r ON r.target_id = t.id WHERE t.target = ?");
  st.bind(1, target);
  if (!st.step()) return;
  std::optional<kb::Stmt> read_value;  // fact_values by id, prepared at the first value not read yet
  const auto value_of = [&](long long value_id) -> const FactValue* {
    auto [it, added] = dict.values.try_emplace(value_id);
    if (added) {
      if (!read_value) read_value.emplace(db_, "SELECT state, value, type FROM fact_values WHERE id = ?");
      read_value->reset();
      if (read_value->bind(1, value_id).step()) {
        FactValue& v = it->second.emplace(FactValue{read_value->text(0), read_value->text(1), read_value->text(2), std::nullopt});
        v.kind = kb::parse_kind<kb::FactState>(v.state);
      }
    }
    return it->second ? &*it->second : nullptr;
  };
  const auto id = [](std::uint64_t v) { return v > static_cast<std::uint64_t>(LLONG_MAX) ? -1LL : static_cast<long long>(v); };
  const auto each = [&](const kb::PackedFact& f) {
    const std::string* field = by_id(dict.fields, id(f.field_id));
    // A field not wanted: no fact, whatever its value (its value not read).
    if (field && wanted && !wanted(*field)) return;
    const FactValue* value = value_of(id(f.value_id));
    if (!value) return;  // no fact_values row: no fact (what a join with it gives)
    if (!field) throw kb::KbValueError("recipe_facts", "facts", target, "field " + std::to_string(f.field_id) + " is not a fact_fields id");
    std::string at;
    if (f.file_id && f.line) {
      const std::string* file = by_id(dict.files, id(*f.file_id));
      if (!file) throw kb::KbValueError("recipe_facts", "facts", target, "file " + std::to_string(*f.file_id) + " is not a code_files id");
      char digits[24];
      const auto r = std::to_chars(std::begin(digits), std::end(digits), *f.line);
      const std::string_view line(digits, static_cast<size_t>(r.ptr - digits));
      at.reserve(file->size() + 1 + line.size() + f.more.size());
      at.append(*file).append(1, ':').append(line).append(f.more);
    } else {
      at = f.more;
    }
    // Facts come in field id order, which kbc gives in field name order:
    // each new field then goes at the end (any other order is still right).
    out.insert_or_assign(out.end(), *field,
                         CodeFact{value->kind ? *value->kind : read_kind<kb::FactState>(value->state, "fact state"), value->value,
                                  value->type, std::move(at)});
  };
  try {
    kb::for_each_packed_fact(st.blob(0), each);
  } catch (const kb::stored::Error& e) {
    throw kb::KbValueError("recipe_facts", "facts", target, e.what());
  }
}

std::vector<DocRecipe> Kb::doc_recipe(const std::string& name) {
  std::vector<DocRecipe> out;
  kb::Stmt st(db_,
              "SELECT d.name, s.path, d.line, d.revision FROM doc_recipes d JOIN sources s ON s.id = d.source_id "
              "WHERE d.name = ? ORDER BY d.revision DESC, s.path");
  st.bind(1, name);
  while (st.step()) out.push_back({st.text(0), st.text(1), static_cast<int>(st.integer(2)), static_cast<int>(st.integer(3))});
  return out;
}

const std::vector<DriftRow>& Kb::drift(const std::string& subject) {
  if (auto it = drift_.find(subject); it != drift_.end()) return it->second;
  std::vector<DriftRow> rows;
  kb::Stmt st(db_,
              "SELECT d.kind, d.field, d.doc_value, s.path, d.lang, d.code_value, d.code_at, d.note, d.line, d.revision "
              "FROM drift d JOIN sources s ON s.id = d.source_id WHERE d.subject = ? ORDER BY d.field, d.revision DESC, s.path, d.line");
  st.bind(1, subject);
  while (st.step())
    rows.push_back({st.text(0), st.text(1), st.text(2), st.text(3), st.text(4), st.text(5), st.text(6), st.text(7),
                    static_cast<int>(st.integer(8)), static_cast<int>(st.integer(9))});
  return drift_.emplace(subject, std::move(rows)).first->second;
}

// --- models ------------------------------------------------------------------------

const Model* Kb::model(const std::string& key) {
  if (key.empty()) return nullptr;
  if (auto it = models_.find(key); it != models_.end()) return it->second ? &*it->second : nullptr;
  std::optional<Model> m;
  kb::Stmt st(
      db_,
      "SELECT model_key, display_name, coalesce(hf_id, ''), coalesce(num_layers, 0), coalesce(num_attention_heads, 0), "
      "coalesce(num_key_value_heads, 0), coalesce(num_experts, 0), coalesce(total_params_b, 0), source FROM models WHERE model_key = ?");
  st.bind(1, key);
  if (st.step()) {
    m.emplace();
    m->key = st.text(0);
    m->display = st.text(1);
    m->hf_id = st.text(2);
    // Counts kbq divides by: checked (base/checked.hpp), never 0 < x or huge.
    m->layers = kb::kb_int(st, 3, kb::int_range("models", "num_layers"), 0);
    m->heads = kb::kb_int(st, 4, kb::int_range("models", "num_attention_heads"), 0);
    m->kv_heads = kb::kb_int(st, 5, kb::int_range("models", "num_key_value_heads"), 0);
    m->experts = kb::kb_int(st, 6, kb::int_range("models", "num_experts"), 0);
    m->total_params_b = st.real(7);
    m->source = st.text(8);
    if (!kb::range_problem(kb::real_range("models", "total_params_b"), m->total_params_b).empty())
      throw kb::KbValueError("models", "total_params_b", key, "not a parameter count in billions");
    kb::Stmt rows(db_, "SELECT col, value FROM model_rows WHERE model_key = ?");
    rows.bind(1, key);
    while (rows.step()) m->row[rows.text(0)] = rows.text(1);
    kb::Stmt arch(db_, "SELECT field, value FROM model_arch WHERE model_key = ?");
    arch.bind(1, key);
    while (arch.step()) m->arch[arch.text(0)] = arch.text(1);
  }
  auto& cached = models_[key];
  cached = std::move(m);
  return cached ? &*cached : nullptr;
}

// --- documents -----------------------------------------------------------------------

namespace {

// The columns of an entity's text, then its source's id (what the order
// below compares, not kept).
constexpr const char* kEntityTextColumns = "t.lang, t.text, s.path, t.line, t.revision, t.is_winner, t.parts, t.usable, t.source_id ";

// A row of an entity's texts (kEntityTextColumns from `first`) and its
// source's id.
struct TextRow {
  EntityText text;
  long long source_id = 0;
};
template <class Row>
TextRow read_entity_text(Row& st, int first, const std::string& row) {
  TextRow r;
  EntityText& t = r.text;
  t.lang = st.text(first);
  t.text = st.text(first + 1);
  t.file = st.text(first + 2);
  t.line = static_cast<int>(kb::kb_int(st, first + 3, kb::int_range("entity_texts", "line"), -1, row));
  t.revision = static_cast<int>(kb::kb_int(st, first + 4, kb::int_range("entity_texts", "revision"), -1, row));
  t.winner = st.integer(first + 5) != 0;
  // The named parts are read when asked (EntityText::part); the entity's
  // `facts` are kbc's: kbq reads none.
  t.parts = st.text(first + 6);
  t.row = row;
  t.usable = st.integer(first + 7) != 0;
  r.source_id = st.integer(first + 8);
  return r;
}

// An entity's texts in the order prose() reads them: the winner first, then
// newer revisions, then by language (and by source and line, so that two
// editions of one language and revision keep one order). Sorted here, not
// by SQL: an ORDER BY copied every row, its text included, into a sorter.
std::vector<EntityText> in_text_order(std::vector<TextRow> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const TextRow& a, const TextRow& b) {
    const EntityText &x = a.text, &y = b.text;
    if (x.winner != y.winner) return x.winner;
    if (x.revision != y.revision) return x.revision > y.revision;
    if (x.lang != y.lang) return x.lang < y.lang;
    if (a.source_id != b.source_id) return a.source_id < b.source_id;
    return x.line < y.line;
  });
  std::vector<EntityText> out;
  out.reserve(rows.size());
  for (auto& r : rows) out.push_back(std::move(r.text));
  return out;
}

}  // namespace

const std::vector<EntityText>& Kb::entity(const std::string& kind, const std::string& key) {
  // An answer asks for the same rule or pitfall once per recipe shown.
  if (auto cached = entity_cache_.find({kind, key}); cached != entity_cache_.end()) return cached->second;
  std::vector<TextRow> rows;
  kb::Stmt st(db_, std::string("SELECT ") + kEntityTextColumns +
                       "FROM entities e JOIN entity_texts t ON t.entity_id = e.id JOIN sources s ON s.id = t.source_id "
                       "WHERE e.kind = ? AND e.key = ?");
  st.bind(1, kind).bind(2, key);
  const std::string row = kind + " " + key;  // how an error names the rows
  while (st.step()) rows.push_back(read_entity_text(st, 0, row));
  return entity_cache_.emplace(std::make_pair(kind, key), in_text_order(std::move(rows))).first->second;
}

namespace {

// The editions prose() may pick of every entity of a kind: the language's
// own, the base language's, the winner (base/choose.hpp).
const std::string& cited_sql() {
  static const std::string sql = std::string("SELECT e.key, ") + kEntityTextColumns +
                                 "FROM entities e JOIN entity_texts t ON t.entity_id = e.id JOIN sources s ON s.id = t.source_id "
                                 "WHERE e.kind = ? AND (t.lang = ? OR t.lang = ? OR t.is_winner = 1)";
  return sql;
}

// The rows of cited_sql() of a kind, kept for the entities `out` cites, in_text_order.
template <class Rows>
void read_cited(Rows& st, const std::string& kind, CitedTexts& out) {
  struct Read {
    std::vector<EntityText>* to = nullptr;  // the cited entity's texts; null: no stage cites it
    std::vector<TextRow> rows;
  };
  std::map<std::string, Read, std::less<>> read;  // each key looked up in `out` once
  while (st.step()) {
    const std::string_view key = st.view(0);
    auto it = read.find(key);
    if (it == read.end()) {
      const auto cited = out.texts.find(EntityRef{kind, std::string(key)});
      it = read.emplace(std::string(key), Read{cited == out.texts.end() ? nullptr : &cited->second, {}}).first;
    }
    if (it->second.to) it->second.rows.push_back(read_entity_text(st, 1, kind + " " + it->first));
  }
  for (auto& [key, r] : read)
    if (r.to)
      for (auto& t : in_text_order(std::move(r.rows))) r.to->push_back(std::move(t));
}

}  // namespace

std::vector<kb::StoredQuery> kb_int::cited_queries(const std::string& lang, const std::string& base, const std::set<std::string>& kinds) {
  std::vector<kb::StoredQuery> out;
  for (const auto& kind : kinds) out.push_back({cited_sql(), {kind, lang, base}});
  return out;
}

const CitedTexts& Kb::cited_texts(const std::string& lang) {
  if (auto it = cited_texts_.find(lang); it != cited_texts_.end()) return it->second;
  const Snapshot& snap = snapshot();
  CitedTexts out;
  std::set<std::string> kinds;
  for (const auto& e : snap.cited()) {
    out.texts.try_emplace(e);  // an entity the KB lacks has no text
    kinds.insert(e.kind);
  }
  kb_int::read_part(db_, "cited/" + lang, is_language(lang), kb_int::cited_queries(lang, snap.settings.base_language, kinds),
                    [&](auto next) {
                      for (const auto& kind : kinds) {
                        auto st = next();
                        read_cited(st, kind, out);
                      }
                    });
  return cited_texts_.emplace(lang, std::move(out)).first->second;
}

bool Kb::is_language(const std::string& lang) const { return std::find(languages_.begin(), languages_.end(), lang) != languages_.end(); }

std::vector<std::string> Kb::entity_keys(const std::string& kind) {
  std::vector<std::string> out;
  kb::Stmt st(db_, "SELECT key FROM entities WHERE kind = ? ORDER BY length(key), key");
  st.bind(1, kind);
  while (st.step()) out.push_back(st.text(0));
  return out;
}

SourcesReport Kb::sources_report() {
  SourcesReport r;
  {
    kb::Stmt st(db_,
                "SELECT path, format, coalesce(lang,''), coalesce(revision,0), coalesce(date,''), coalesce(translated_from,'') "
                "FROM sources WHERE format IN ('markdown', 'text-export') ORDER BY revision DESC, path");
    while (st.step()) r.editions.push_back({st.text(0), st.text(2), st.text(4), st.text(5), static_cast<int>(st.integer(3))});
  }
  {
    kb::Stmt st(db_, "SELECT m.lang, count(*) FROM missing_translations m GROUP BY m.lang ORDER BY m.lang");
    while (st.step()) r.missing.push_back({st.text(0), st.integer(1)});
  }
  kb::Stmt st(db_,
              "SELECT c.entity_kind, c.entity_key, c.field, w.value, w.revision, o.value, o.revision, so.path, o.line "
              "FROM conflicts c JOIN conflict_values w ON w.conflict_id = c.id AND w.wins = 1 "
              "JOIN conflict_values o ON o.conflict_id = c.id AND o.wins = 0 JOIN sources so ON so.id = o.source_id "
              "WHERE c.type = 'revision' AND o.revision < w.revision ORDER BY c.entity_kind, c.entity_key, c.field, o.revision");
  while (st.step())
    r.conflicts.push_back({st.text(0) + " " + st.text(1), st.text(2), st.text(3), st.text(5),
                           st.text(7) + ":" + std::to_string(st.integer(8)), static_cast<int>(st.integer(4)),
                           static_cast<int>(st.integer(6))});
  return r;
}

std::vector<Engine::CodeSnapshot> Kb::code_snapshots() {
  std::vector<Engine::CodeSnapshot> out;
  kb::Stmt st(db_, "SELECT commit_sha, date, repo, newest FROM code_snapshots ORDER BY newest DESC, date DESC, commit_sha");
  while (st.step()) out.push_back({st.text(0), st.text(1), st.text(2), st.integer(3) == 1});
  return out;
}

std::vector<std::string> Kb::source_files() {
  std::vector<std::string> out;
  kb::Stmt st(db_, "SELECT path FROM sources ORDER BY path");
  while (st.step()) out.push_back(st.text(0));
  return out;
}

}  // namespace kbq
