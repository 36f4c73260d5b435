// kbq's KB access (see kb.hpp). Every value is bound as a parameter.
#include "query/kb/kb.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <tuple>

#include "base/checked.hpp"
#include "base/choose.hpp"
#include "base/dsl/kb_lexicon.hpp"
#include "base/escape.hpp"
#include "base/kb_schema.hpp"
#include "base/limits.hpp"
#include "base/schema_version.hpp"
#include "base/text.hpp"
#include "base/value_ranges.hpp"

// Linked into kbq only (query/embed.S.in); weak so that kbc, which links
// this file to answer questions in generate, needs no embedded KB.
extern "C" {
extern const unsigned char kb_embedded_begin[] __attribute__((weak));
extern const unsigned char kb_embedded_end[] __attribute__((weak));
}

namespace kbq {

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

// An enum column; a spelling this kbq does not know is a damaged KB.
template <typename E>
E read_kind(kb::Stmt& st, int c, const char* what) {
  const auto text = st.view(c);
  if (auto v = kb::parse_kind<E>(text)) return *v;
  throw std::runtime_error("knowledge base: unknown " + std::string(what) + " '" + std::string(text) + "' (rebuild it with kbc build)");
}

// A comma-separated list of the KB, empty items dropped.
std::vector<std::string> comma_list(const std::string& s) {
  std::vector<std::string> out;
  for (auto& x : kb::split(s, ','))
    if (!x.empty()) out.push_back(std::move(x));
  return out;
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
    // no view or trigger, and sound pages (a damaged, partial or crafted KB
    // fails here with one line, not in the middle of an answer). The
    // embedded KB was built and checked with this program.
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
    "r.native_hardware, r.native_precision, r.variant, r.min_gpus, r.low_precision "
    "FROM recipes r LEFT JOIN models m ON m.model_key = r.model_key ";

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
  r.commit = commit;
  return r;
}
}  // namespace

const std::vector<Recipe>& Kb::recipes(RecipeKind kind) {
  auto [it, fresh] = recipes_.try_emplace(kind);
  if (!fresh) return it->second;
  {
    // Sized first: growing the vector would move every recipe read so far.
    kb::Stmt n(db_, "SELECT count(*) FROM recipes WHERE kind = ?");
    n.bind(1, to_string(kind));
    if (n.step()) it->second.reserve(static_cast<size_t>(std::clamp<long long>(n.integer(0), 0, kb::limits::kMaxReservedRows)));
  }
  kb::Stmt st(db_, std::string(kRecipeSelect) + "WHERE r.kind = ? ORDER BY r.name");
  st.bind(1, to_string(kind));
  while (st.step()) it->second.push_back(read_recipe(st, kind, commit_));
  return it->second;
}

const std::set<std::string>& Kb::name_tokens(RecipeKind kind) {
  auto [it, fresh] = name_tokens_.try_emplace(kind);
  if (fresh)
    for (const auto& r : recipes(kind))
      for (auto& tok : kb::split(r.name, '_')) it->second.insert(std::move(tok));
  return it->second;
}

// One recipe by name: from the list when it is loaded, otherwise one
// indexed row (show and check need one recipe, not the thousand).
std::optional<Recipe> Kb::recipe(const std::string& name, RecipeKind kind) {
  if (auto it = recipes_.find(kind); it != recipes_.end()) {
    for (const auto& r : it->second)
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

const CodeFacts& Kb::facts(const std::string& target) {
  auto [it, fresh] = facts_.try_emplace(target);
  if (!fresh) return it->second;
  kb::Stmt st(db_, "SELECT field, state, value, type, at, note FROM code_facts WHERE target = ?");
  st.bind(1, target);
  while (st.step())
    it->second[st.text(0)] = {read_kind<kb::FactState>(st, 1, "fact state"), st.text(2), st.text(3), st.text(4), st.text(5)};
  return it->second;
}

std::string Kb::cite(const std::string& target, const std::string& field) {
  const auto& f = facts(target);
  auto it = f.find(field);
  return it == f.end() || it->second.at.empty() ? std::string() : it->second.at + "@" + commit_;
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

std::vector<DriftRow> Kb::drift(const std::string& subject) {
  std::vector<DriftRow> out;
  kb::Stmt st(db_,
              "SELECT d.kind, d.field, d.doc_value, s.path, d.lang, d.code_value, d.code_at, d.note, d.line, d.revision "
              "FROM drift d JOIN sources s ON s.id = d.source_id WHERE d.subject = ? ORDER BY d.field, d.revision DESC, s.path, d.line");
  st.bind(1, subject);
  while (st.step())
    out.push_back({st.text(0), st.text(1), st.text(2), st.text(3), st.text(4), st.text(5), st.text(6), st.text(7),
                   static_cast<int>(st.integer(8)), static_cast<int>(st.integer(9))});
  return out;
}

// --- models, hardware, memory ------------------------------------------------------

const Model* Kb::model(const std::string& key) {
  if (key.empty()) return nullptr;
  if (auto it = model_cache_.find(key); it != model_cache_.end()) return it->second ? &*it->second : nullptr;
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
  auto& cached = model_cache_[key];
  cached = std::move(m);
  return cached ? &*cached : nullptr;
}

const ModelBrief* Kb::model_brief(const std::string& key) {
  if (!model_briefs_) {
    model_briefs_.emplace();
    kb::Stmt st(db_,
                "SELECT m.model_key, coalesce(m.total_params_b, 0), coalesce(r.value, '') FROM models m "
                "LEFT JOIN model_rows r ON r.model_key = m.model_key AND r.col = 'family'");
    while (st.step()) {
      ModelBrief b{st.text(2), st.real(1)};
      if (!kb::range_problem(kb::real_range("models", "total_params_b"), b.total_params_b).empty())
        throw kb::KbValueError("models", "total_params_b", st.text(0), "not a parameter count in billions");
      model_briefs_->emplace(st.text(0), std::move(b));
    }
  }
  auto it = model_briefs_->find(key);
  return it == model_briefs_->end() ? nullptr : &it->second;
}

std::vector<std::string> Kb::model_keys() {
  std::vector<std::string> out;
  kb::Stmt st(db_, "SELECT model_key FROM models ORDER BY model_key");
  while (st.step()) out.push_back(st.text(0));
  return out;
}

const std::vector<Gpu>& Kb::gpus() {
  if (gpus_.empty()) {
    kb::Stmt st(db_,
                "SELECT gpu_key, display_name, coalesce(memory_gb, 0), nvlink_domain_size, gpus_per_node, fp8_gemm_any_layout, source "
                "FROM gpus ORDER BY gpu_key");
    while (st.step()) {
      Gpu g{st.text(0),
            st.text(1),
            st.real(2),
            kb::kb_int(st, 3, kb::int_range("gpus", "nvlink_domain_size"), 0),
            kb::kb_int(st, 4, kb::int_range("gpus", "gpus_per_node"), 0),
            st.integer(5) != 0,
            st.text(6)};
      if (!kb::range_problem(kb::real_range("gpus", "memory_gb"), g.memory_gib).empty()) throw kb::KbValueError("gpus", "memory_gb", g.key, "not a memory size in GB");
      gpus_.push_back(std::move(g));
    }
  }
  return gpus_;
}

std::optional<Gpu> Kb::gpu(const std::string& key) {
  for (const auto& g : gpus())
    if (g.key == key) return g;
  return std::nullopt;
}

std::string Kb::memory_params_tsv() {
  std::string out = "key\tvalue\tunit\tsource\n";
  kb::Stmt st(db_, "SELECT key, value, unit, source FROM memory_params ORDER BY key");
  while (st.step()) out += st.text(0) + "\t" + st.text(1) + "\t" + st.text(2) + "\t" + st.text(3) + "\n";
  return out;
}

// --- the launcher --------------------------------------------------------------------

std::optional<Flag> Kb::flag_for(const std::string& config_key) {
  if (auto it = flags_.find(config_key); it != flags_.end()) return it->second;
  auto& memo = flags_[config_key];
  kb::Stmt st(
      db_,
      "SELECT item, max(CASE WHEN attribute = 'short' THEN value END), max(CASE WHEN attribute = 'long' THEN value END), "
      "max(at) FROM launcher WHERE section = 'flag' AND item LIKE ? || ':%' AND item IN "
      "(SELECT item FROM launcher WHERE section = 'flag' AND attribute = 'config_key' AND value = ?) GROUP BY item ORDER BY item LIMIT 1");
  st.bind(1, planner("launcher_parser")).bind(2, config_key);
  if (st.step()) memo = Flag{st.text(0), st.text(1), st.text(2), config_key, st.text(3)};
  return memo;
}

std::optional<Flag> Kb::flag_named(const std::string& dest) {
  kb::Stmt st(db_,
              "SELECT item, max(CASE WHEN attribute = 'short' THEN value END), max(CASE WHEN attribute = 'long' THEN value END), "
              "max(at) FROM launcher WHERE section = 'flag' AND item = ? || ':' || ? GROUP BY item");
  st.bind(1, planner("launcher_parser")).bind(2, dest);
  if (!st.step()) return std::nullopt;
  // "--dry-run --dry_run": the first spelling the parser accepts.
  return Flag{st.text(0), kb::split(st.text(1), ' ').front(), kb::split(st.text(2), ' ').front(), "", st.text(3)};
}

const std::map<std::string, std::vector<std::string>>& Kb::presets() {
  if (!presets_) {
    presets_.emplace();
    kb::Stmt st(db_, "SELECT preset, value FROM code_datasets WHERE attribute = 'modes' ORDER BY preset");
    while (st.step()) (*presets_)[st.text(0)] = kb::split(st.text(1), ' ');
  }
  return *presets_;
}

std::string Kb::task_of(const std::string& launch_mode) {
  if (tasks_.empty()) {
    kb::Stmt st(db_, "SELECT item, value FROM launcher WHERE section = 'mode' AND attribute = 'task'");
    while (st.step()) tasks_[st.text(0)] = st.text(1);
  }
  auto it = tasks_.find(launch_mode);
  return it == tasks_.end() ? std::string() : it->second;
}

std::vector<std::string> Kb::ranking() {
  std::vector<std::string> out;
  kb::Stmt st(db_, "SELECT criterion FROM ranking ORDER BY position");
  while (st.step()) out.push_back(st.text(0));
  return out;
}

static ConfigKey read_key(kb::Stmt& st) {
  return {st.text(0), read_kind<Impact>(st, 1, "config layer"), st.text(2), st.text(3), st.text(4),
          st.text(5), static_cast<int>(st.integer(6)),          st.text(7)};
}
static const char* kKeyCols =
    "SELECT k.key, k.layer, coalesce(k.dimension,''), coalesce(k.sentence,''), coalesce(s.path,''), k.aliases, "
    "coalesce(k.evidence_line,0), coalesce(k.entity_key,'') FROM config_keys k LEFT JOIN sources s ON s.id = k.evidence_source_id ";

std::optional<ConfigKey> Kb::config_key(const std::string& key) {
  if (auto it = config_keys_.find(key); it != config_keys_.end()) return it->second;
  auto& memo = config_keys_[key];
  kb::Stmt st(db_, std::string(kKeyCols) +
                       "WHERE k.key = ? OR ',' || k.aliases || ',' LIKE '%,' || ? || ',%' "
                       "ORDER BY k.key = ? DESC LIMIT 1");
  st.bind(1, key).bind(2, key).bind(3, key);
  if (st.step()) memo = read_key(st);
  return memo;
}

std::vector<ConfigKey> Kb::config_keys_for(const std::string& dimension) {
  if (auto it = keys_for_.find(dimension); it != keys_for_.end()) return it->second;
  std::vector<ConfigKey>& out = keys_for_[dimension];
  kb::Stmt st(db_, std::string(kKeyCols) + "WHERE k.dimension = ? ORDER BY k.key");
  st.bind(1, dimension);
  while (st.step()) out.push_back(read_key(st));
  return out;
}

// The planner parameters and the check → entity table are small and read
// whole at their first use.
std::string Kb::planner(const std::string& key) {
  if (planner_.empty()) {
    kb::Stmt st(db_, "SELECT key, value FROM planner");
    while (st.step()) planner_[st.text(0)] = st.text(1);
  }
  auto it = planner_.find(key);
  return it == planner_.end() ? std::string{} : it->second;
}

std::string Kb::check_entity(const std::string& check) {
  if (check_entities_.empty())
    for (const auto& [c, entity] : checks()) check_entities_[c] = entity;
  auto it = check_entities_.find(check);
  return it == check_entities_.end() ? std::string{} : it->second;
}

std::vector<std::pair<std::string, std::string>> Kb::checks() {
  std::vector<std::pair<std::string, std::string>> out;
  kb::Stmt st(db_, "SELECT \"check\", entity FROM checks ORDER BY rowid");
  while (st.step()) out.emplace_back(st.text(0), st.text(1));
  return out;
}

const std::vector<EntityText>& Kb::entity(const std::string& kind, const std::string& key) {
  // An answer asks for the same rule or pitfall once per recipe shown.
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

std::vector<QuickRefRow> Kb::quick_ref_rows() {
  std::vector<QuickRefRow> out;
  kb::Stmt st(db_, "SELECT row, mode, scale, intents, recipes, gpus, single_gpu_count FROM quick_ref_picks ORDER BY ordinal");
  while (st.step())
    out.push_back({st.text(0), st.text(1), st.text(2), comma_list(st.text(3)), comma_list(st.text(4)),
                   kb::kb_int(st, 5, kb::int_range("quick_ref_picks", "gpus"), 0), st.integer(6) != 0});
  return out;
}

std::vector<std::string> Kb::entity_keys(const std::string& kind) {
  std::vector<std::string> out;
  kb::Stmt st(db_, "SELECT key FROM entities WHERE kind = ? ORDER BY length(key), key");
  st.bind(1, kind);
  while (st.step()) out.push_back(st.text(0));
  return out;
}

std::vector<Superseded> Kb::superseded(const std::string& kind, const std::string& key) {
  std::vector<Superseded> out;
  kb::Stmt st(db_,
              "SELECT c.field, v.value, s.path, v.lang, v.line, v.revision FROM conflicts c "
              "JOIN conflict_values v ON v.conflict_id = c.id JOIN sources s ON s.id = v.source_id "
              "WHERE c.entity_kind = ? AND c.entity_key = ? AND v.wins = 0 AND c.type = 'revision' "
              "AND v.revision < (SELECT max(revision) FROM conflict_values WHERE conflict_id = c.id) "
              "ORDER BY c.field, v.revision DESC, v.lang");
  st.bind(1, kind).bind(2, key);
  while (st.step())
    out.push_back({st.text(0), st.text(1), st.text(2), st.text(3), static_cast<int>(st.integer(4)), static_cast<int>(st.integer(5))});
  return out;
}

std::vector<std::pair<std::string, std::vector<std::string>>> Kb::datasets() {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  kb::Stmt st(db_, "SELECT preset, modes FROM datasets ORDER BY rowid");
  while (st.step()) out.emplace_back(st.text(0), kb::split(st.text(1), ','));
  return out;
}

std::vector<std::pair<std::string, std::string>> Kb::renames() {
  std::vector<std::pair<std::string, std::string>> out;
  kb::Stmt st(db_, "SELECT DISTINCT old_preset, new_preset FROM dataset_renames ORDER BY 1, 2");
  while (st.step()) out.emplace_back(st.text(0), st.text(1));
  return out;
}

Prose prose(Kb& kb, const std::string& kind, const std::string& key, const std::string& lang, const std::string& part) {
  Prose p;
  const auto& texts = kb.entity(kind, key);
  if (texts.empty()) return p;
  // The same choice as kbc generate's pages (base/choose.hpp).
  const auto [i, shown] = kb::choose_edition(
      texts, lang, kb.planner("base_language"), [](const EntityText& t) { return t.lang; }, [](const EntityText& t) { return t.usable; });
  const EntityText* pick = &texts.at(i);
  p.fallback = !shown.empty();
  p.lang = pick->lang;
  auto it = part.empty() ? pick->parts.end() : pick->parts.find(part);
  p.text = it != pick->parts.end() ? it->second : pick->text;
  p.source = {pick->file, pick->line, pick->revision, kind + " " + key};
  return p;
}

std::vector<std::string> superseded_notes(Kb& kb, const std::string& kind, const std::string& key, const std::string& lang,
                                          const std::vector<std::string>& fields, bool name_entity) {
  std::vector<std::string> out;
  for (const auto& s : kb.superseded(kind, key)) {
    if (!fields.empty() && std::find(fields.begin(), fields.end(), s.field) == fields.end()) continue;
    std::string text = kb.label(lang, "superseded");
    const std::string what = (name_entity ? kind + " " + key + " " : std::string{}) + s.field + " " + s.value;
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"{rev}", std::to_string(s.revision)}, {"{where}", s.file + ":" + std::to_string(s.line)}, {"{value}", what}}) {
      const auto at = text.find(k);
      if (at != std::string::npos) text.replace(at, k.size(), v);
    }
    if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
  }
  return out;
}

std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [k, v] : vars) {
    const std::string token = "{" + k + "}";
    for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at + v.size())) text.replace(at, token.size(), v);
  }
  return text;
}

std::string Kb::label(const std::string& lang, const std::string& key) {
  // All labels of a language (and the English fallback) are read at its
  // first use: one scan of a small table instead of a lookup per label.
  auto [texts, fresh] = labels_.try_emplace(lang);
  if (fresh) {
    kb::Stmt st(db_, "SELECT key, text FROM labels WHERE lang = ? OR lang = 'en' ORDER BY lang = ?");
    st.bind(1, lang).bind(2, lang);
    while (st.step()) texts->second[st.text(0)] = st.text(1);  // the language's own text comes last and wins
  }
  auto it = texts->second.find(key);
  return it != texts->second.end() ? it->second : key;
}

Labels Kb::labels(const std::string& lang) {
  label(lang, {});  // reads the language's labels once
  const auto& texts = labels_.at(lang);
  return Labels(lang, std::vector<std::pair<std::string, std::string>>(texts.begin(), texts.end()));
}

SourcesReport Kb::sources_report() {
  SourcesReport r;
  {
    kb::Stmt st(db_,
                "SELECT path, format, coalesce(lang,''), coalesce(revision,0), coalesce(date,''), coalesce(translated_from,'') "
                "FROM sources WHERE format != 'data' ORDER BY revision DESC, path");
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

std::vector<std::string> Kb::source_files() {
  std::vector<std::string> out;
  kb::Stmt st(db_, "SELECT path FROM sources ORDER BY path");
  while (st.step()) out.push_back(st.text(0));
  return out;
}

}  // namespace kbq
