// kbq's KB access (see kb.hpp). Every value is bound as a parameter.
#include "query/kb/kb.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <tuple>

#include "base/checked.hpp"
#include "base/dsl/kb_lexicon.hpp"
#include "base/escape.hpp"
#include "base/kb_schema.hpp"
#include "base/limits.hpp"
#include "base/schema_version.hpp"
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
      lexicon_ = kbq::dsl::load_lexicon(db_);
    } catch (const kb::SqliteError& e) {
      throw std::runtime_error(where_ + ": error: knowledge base is incomplete (" + e.what() + "); rebuild it with kbc build");
    }
  }
  return *lexicon_;
}

// --- recipes ---------------------------------------------------------------------

namespace {
// The columns of a Recipe, in the order read_recipe reads them.
constexpr const char* kRecipeSelect =
    "SELECT r.id, r.name, r.target, r.mode, r.launch_mode, r.model_key, coalesce(m.display_name, ''), r.modality, r.moe, "
    "r.tp, r.pp, r.vp, r.cp, r.ep, r.etp, r.sp, r.seq_len, r.gbs, r.mbs, r.dataset, r.precision, r.native_gpus, "
    "r.native_hardware, r.native_precision, r.variant, r.min_gpus, r.low_precision, coalesce(l.precision, ''), "
    "coalesce(l.precision_at, ''), coalesce(l.data, ''), coalesce(l.data_name, ''), coalesce(l.data_at, ''), "
    "coalesce(l.user_data, 0) "
    "FROM recipes r LEFT JOIN models m ON m.model_key = r.model_key "
    "LEFT JOIN recipe_launch l ON l.name = r.name AND l.kind = r.kind ";

Recipe read_recipe(kb::Stmt& st, RecipeKind kind, const std::string& commit) {
  Recipe r;
  r.id = st.integer(0);
  r.name = st.text(1);
  r.kind = kind;
  r.target = st.text(2);
  r.mode = st.text(3);
  r.launch_mode = st.text(4);
  r.model_key = st.text(5);
  r.model = st.text(6);
  r.modality = st.text(7);
  r.moe = st.integer(8) != 0;
  // Sizes kbq divides by or multiplies: checked as read (base/checked.hpp),
  // a zero, a huge or a text value is one error naming the cell.
  // The ranges are base/value_ranges.hpp's, which kbc checks when it builds.
  using kb::int_range;
  auto size = [&](int c, const kb::IntRange& range) { return kb::kb_opt_int(st, c, range, 1); };
  r.tp = size(9, int_range("recipes", "tp"));
  r.pp = size(10, int_range("recipes", "pp"));
  r.vp = size(11, int_range("recipes", "vp"));
  r.cp = size(12, int_range("recipes", "cp"));
  r.ep = size(13, int_range("recipes", "ep"));
  r.etp = size(14, int_range("recipes", "etp"));
  if (!st.is_null(15)) r.sp = st.integer(15) != 0;
  r.seq_len = size(16, int_range("recipes", "seq_len"));
  r.gbs = size(17, int_range("recipes", "gbs"));
  r.mbs = size(18, int_range("recipes", "mbs"));
  r.dataset = st.text(19);
  r.precision = st.text(20);
  r.native_gpus = size(21, int_range("recipes", "native_gpus"));
  r.native_hardware = st.text(22);
  r.native_precision = st.text(23);
  r.variant = st.text(24);
  r.min_gpus = size(25, int_range("recipes", "min_gpus"));
  r.low_precision = st.text(26);
  r.runs_in = st.text(27);
  r.runs_in_at = st.text(28);
  r.data = st.text(29);
  r.data_name = st.text(30);
  r.data_at = st.text(31);
  r.user_data = st.integer(32) != 0;
  r.commit = commit;
  return r;
}
}  // namespace

const Catalog& Kb::catalog(RecipeKind kind) {
  auto [it, fresh] = catalogs_.try_emplace(kind);
  if (!fresh) return it->second;
  auto& recipes = it->second.recipes;
  {
    // Sized first: growing the vector would move every recipe read so far.
    kb::Stmt n(db_, "SELECT count(*) FROM recipes WHERE kind = ?");
    n.bind(1, to_string(kind));
    if (n.step()) recipes.reserve(static_cast<size_t>(std::clamp<long long>(n.integer(0), 0, kb::limits::kMaxReservedRows)));
  }
  kb::Stmt st(db_, std::string(kRecipeSelect) + "WHERE r.kind = ? ORDER BY r.name");
  st.bind(1, to_string(kind));
  while (st.step()) recipes.push_back(read_recipe(st, kind, commit_));
  for (const auto& r : recipes)
    for (auto& tok : kb::split(r.name, '_')) it->second.name_tokens.insert(std::move(tok));
  return it->second;
}

// One recipe by name: from the list when it is loaded, otherwise one
// indexed row (show and check need one recipe, not the thousand).
std::optional<Recipe> Kb::recipe(const std::string& name, RecipeKind kind) {
  if (auto it = catalogs_.find(kind); it != catalogs_.end()) {
    for (const auto& r : it->second.recipes)
      if (r.name == name) return r;
    return std::nullopt;
  }
  kb::Stmt st(db_, std::string(kRecipeSelect) + "WHERE r.kind = ? AND r.name = ?");
  st.bind(1, to_string(kind));
  st.bind(2, name);
  if (st.step()) return read_recipe(st, kind, commit_);
  return std::nullopt;
}

std::optional<Recipe> Kb::recipe(const std::string& name) {
  if (auto r = recipe(name, RecipeKind::Library)) return r;
  return recipe(name, RecipeKind::Benchmark);
}

RecipeData Kb::data_of(const Recipe& r) { return RecipeData{r, facts(r.target), model(r.model_key), commit_}; }

const CodeFacts& Kb::facts(const std::string& target) {
  auto [it, fresh] = facts_.try_emplace(target);
  if (!fresh) return it->second;
  kb::Stmt st(db_, "SELECT field, state, value, type, at FROM code_facts WHERE target = ?");
  st.bind(1, target);
  while (st.step()) it->second[st.text(0)] = {read_kind<kb::FactState>(st, 1, "fact state"), st.text(2), st.text(3), st.text(4)};
  return it->second;
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
  auto [it, fresh] = drift_.try_emplace(subject);
  if (!fresh) return it->second;
  kb::Stmt st(db_,
              "SELECT d.kind, d.field, d.doc_value, s.path, d.lang, d.code_value, d.code_at, d.note, d.line, d.revision "
              "FROM drift d JOIN sources s ON s.id = d.source_id WHERE d.subject = ? ORDER BY d.field, d.revision DESC, s.path, d.line");
  st.bind(1, subject);
  while (st.step())
    it->second.push_back({st.text(0), st.text(1), st.text(2), st.text(3), st.text(4), st.text(5), st.text(6), st.text(7),
                          static_cast<int>(st.integer(8)), static_cast<int>(st.integer(9))});
  return it->second;
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

const std::vector<EntityText>& Kb::entity(const std::string& kind, const std::string& key) {
  auto [cached, fresh] = entity_cache_.try_emplace({kind, key});
  if (!fresh) return cached->second;
  auto& out = cached->second;
  kb::Stmt st(db_,
              "SELECT t.lang, t.text, s.path, t.line, t.revision, t.is_winner, t.parts, t.facts, t.usable "
              "FROM entities e JOIN entity_texts t ON t.entity_id = e.id JOIN sources s ON s.id = t.source_id "
              "WHERE e.kind = ? AND e.key = ? ORDER BY t.is_winner DESC, t.revision DESC, t.lang");
  st.bind(1, kind).bind(2, key);
  const std::string row = kind + " " + key;  // how an error names the rows
  while (st.step()) {
    EntityText t;
    t.lang = st.text(0);
    t.text = st.text(1);
    t.file = st.text(2);
    t.line = static_cast<int>(kb::kb_int(st, 3, kb::int_range("entity_texts", "line"), -1, row));
    t.revision = static_cast<int>(kb::kb_int(st, 4, kb::int_range("entity_texts", "revision"), -1, row));
    t.winner = st.integer(5) != 0;
    // parts: an object of strings; facts: an object of string arrays.
    const auto json_object = [&](int c, const char* column) {
      auto v = nlohmann::json::parse(st.view(c), nullptr, false);
      if (!v.is_object()) throw kb::KbValueError("entity_texts", column, row, "not a JSON object");
      return v;
    };
    const auto parts = json_object(6, "parts"), facts = json_object(7, "facts");
    for (const auto& [k, v] : parts.items()) {
      if (!v.is_string()) throw kb::KbValueError("entity_texts", "parts", row, "part '" + k + "' is not a string");
      t.parts[k] = v.get<std::string>();
    }
    for (const auto& [k, v] : facts.items()) {
      if (!v.is_array() || !std::all_of(v.begin(), v.end(), [](const nlohmann::json& x) { return x.is_string(); }))
        throw kb::KbValueError("entity_texts", "facts", row, "fact '" + k + "' is not an array of strings");
      t.facts[k] = v.get<std::vector<std::string>>();
    }
    t.usable = st.integer(8) != 0;
    out.push_back(std::move(t));
  }
  return out;
}

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
