// kbq's KB access (see kb.hpp). Every value is bound as a parameter.
#include "query/kb/kb.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "base/checked.hpp"
#include "base/dsl/kb_lexicon.hpp"
#include "base/escape.hpp"
#include "base/kb_schema.hpp"
#include "base/limits.hpp"
#include "base/schema_version.hpp"
#include "base/text.hpp"

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

// A range from its (min, max, state) columns; a value with no max is open
// ("512+"). A value's bounds are checked (base/checked.hpp): 1 to `max`,
// hi ≥ lo, so no size kbq divides by or multiplies is 0, negative or huge.
// `dim` names the columns ("tp" → recipes.tp_min, tp_max) and `row_col` the
// statement column that names the row in an error.
Range read_range(kb::Stmt& st, int c, std::string_view dim, long long max, int row_col) {
  Range r;
  r.state = read_kind<kb::RangeState>(st, c + 2, "range state");
  if (r.state == kb::RangeState::Value) {
    const std::string lo_col = std::string(dim) + "_min", hi_col = std::string(dim) + "_max";
    r.lo = kb::kb_int(st, c, {"recipes", lo_col, row_col}, 1, max);
    const auto hi = kb::kb_opt_int(st, c + 1, {"recipes", hi_col, row_col}, r.lo, max);
    r.open = !hi;
    r.hi = hi.value_or(r.lo);
  } else if (r.state == kb::RangeState::None) {
    r.lo = r.hi = 1;
  }
  return r;
}

// TP, PP, CP, EP, VP and GPUs (lo, hi, state each) from column c on, then
// SP, sequence length and sizes: the same run in every recipe read.
void read_layout(kb::Stmt& st, int c, Recipe& r, int row_col) {
  using kb::limits::kMaxGpus;
  using kb::limits::kMaxParallel;
  r.tp = read_range(st, c, "tp", kMaxParallel, row_col);
  r.pp = read_range(st, c + 3, "pp", kMaxParallel, row_col);
  r.cp = read_range(st, c + 6, "cp", kMaxParallel, row_col);
  r.ep = read_range(st, c + 9, "ep", kMaxParallel, row_col);
  r.vp = read_range(st, c + 12, "vp", kMaxParallel, row_col);
  r.gpus = read_range(st, c + 15, "gpus", kMaxGpus, row_col);
  if (!st.is_null(c + 18)) r.sp = st.integer(c + 18) != 0;
  r.seq_len = kb::kb_int(st, c + 19, {"recipes", "seq_len", row_col}, 0, kb::limits::kMaxSeqLen);
  r.sizes = st.text(c + 20);
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

static const char* kRecipeCols =
    "SELECT r.id, r.name, coalesce(r.mode,''), r.kind, r.is_pattern, coalesce(r.expanded_from,''), coalesce(r.mentioned_in,''), "
    "r.family, coalesce(r.model_key,''), coalesce(r.model,''), r.tp_min, r.tp_max, r.tp_state, r.pp_min, r.pp_max, r.pp_state, "
    "r.cp_min, r.cp_max, r.cp_state, r.ep_min, r.ep_max, r.ep_state, r.vp_min, r.vp_max, r.vp_state, r.gpus_min, r.gpus_max, r.gpus_state, "
    "r.sp, coalesce(r.seq_len,0), coalesce(r.sizes,''), coalesce(r.notes,''), coalesce(r.gpu_types,''), s.path, r.line, r.revision, "
    "r.family_intents, r.model_moe, r.shape "
    "FROM recipes r JOIN sources s ON s.id = r.source_id ";

Recipe Kb::read_recipe(kb::Stmt& st) {
  Recipe r;
  r.id = st.integer(0);
  r.name = st.text(1);
  r.mode = st.text(2);
  r.kind = read_kind<RecipeKind>(st, 3, "recipe kind");
  r.pattern = st.integer(4) != 0;
  r.expanded_from = st.text(5);
  r.mentioned_in = st.text(6);
  r.family = st.text(7);
  r.model_key = st.text(8);
  r.model = st.text(9);
  read_layout(st, 10, r, 1);
  r.notes = st.text(31);
  r.gpu_types = comma_list(st.text(32));
  r.file = st.text(33);
  r.line = static_cast<int>(kb::kb_int(st, 34, {"recipes", "line", 1}, 0, kb::limits::kMaxLine));
  r.revision = static_cast<int>(kb::kb_int(st, 35, {"recipes", "revision", 1}, 0, kb::limits::kMaxLine));
  r.family_intents = comma_list(st.text(36));
  r.model_moe = st.integer(37) != 0;
  r.shape = st.integer(38);
  return r;
}

std::optional<Recipe> Kb::recipe(const std::string& name, const std::string& mode) {
  kb::Stmt st(db_, std::string(kRecipeCols) + "WHERE r.name = ? AND (? = '' OR r.mode = ?) ORDER BY r.kind DESC, r.mode LIMIT 1");
  st.bind(1, name).bind(2, mode).bind(3, mode);
  if (st.step()) return read_recipe(st);
  return std::nullopt;
}

std::optional<Recipe> Kb::recipe_by_id(long long id) {
  kb::Stmt st(db_, std::string(kRecipeCols) + "WHERE r.id = ?");
  st.bind(1, id);
  if (st.step()) return read_recipe(st);
  return std::nullopt;
}

static const char* kCandidateCols = "SELECT id, shape, name, coalesce(model_key,''), coalesce(mode,''), kind FROM recipes ";

// The rows of a kCandidateCols query, read in place.
static void for_each_candidate(kb::Stmt& st, const std::function<void(const CandidateView&)>& each) {
  while (st.step()) each({st.integer(0), st.integer(1), st.view(2), st.view(3), st.view(4), read_kind<RecipeKind>(st, 5, "recipe kind")});
}

static std::vector<Candidate> read_candidates(kb::Stmt& st) {
  std::vector<Candidate> out;
  for_each_candidate(st, [&](const CandidateView& c) {
    out.push_back({c.id, c.shape, std::string(c.name), std::string(c.model_key), std::string(c.mode), c.kind});
  });
  return out;
}

void Kb::candidates(RecipeKind kind, const std::string& prefix, const std::function<void(const CandidateView&)>& each) {
  if (prefix.empty()) {
    kb::Stmt st(db_, std::string(kCandidateCols) + "WHERE kind = ?");
    st.bind(1, to_string(kind));
    for_each_candidate(st, each);
    return;
  }
  // Name prefix as an index range, [prefix, prefix + U+10FFFF); then the
  // rows whose model key has the prefix but whose name does not start with
  // the model key (the partial index recipes_model holds just those).
  // Two covering reads: SQLite's OR of two ranges costs several times more.
  const std::string hi = prefix + "\xF4\x8F\xBF\xBF";
  kb::Stmt by_name(db_, std::string(kCandidateCols) + "WHERE name >= ? AND name < ? AND kind = ?");
  by_name.bind(1, prefix).bind(2, hi).bind(3, to_string(kind));
  for_each_candidate(by_name, each);
  kb::Stmt by_model(db_, std::string(kCandidateCols) +
                             "WHERE model_key >= ? AND model_key < ? AND kind = ? AND substr(name, 1, length(model_key)) <> model_key "
                             "AND NOT (name >= ? AND name < ?)");
  by_model.bind(1, prefix).bind(2, hi).bind(3, to_string(kind)).bind(4, prefix).bind(5, hi);
  for_each_candidate(by_model, each);
}

std::vector<Candidate> Kb::candidates_named(RecipeKind kind, const std::string& name) {
  kb::Stmt st(db_, std::string(kCandidateCols) + "WHERE name = ? AND kind = ? ORDER BY mode");
  st.bind(1, name).bind(2, to_string(kind));
  return read_candidates(st);
}

std::optional<Candidate> Kb::candidate(long long id) {
  kb::Stmt st(db_, std::string(kCandidateCols) + "WHERE id = ?");
  st.bind(1, id);
  auto c = read_candidates(st);
  return c.empty() ? std::nullopt : std::optional<Candidate>(c.front());
}

// What the ranker reads of a shape's row (rank/shapes.hpp): no name, family
// text, notes or provenance, which the shape does not decide.
std::vector<Recipe> Kb::shapes(RecipeKind kind) {
  std::vector<Recipe> out;
  out.reserve(256);
  kb::Stmt st(db_,
              "SELECT r.id, r.kind, coalesce(r.mode,''), r.is_pattern, r.tp_min, r.tp_max, r.tp_state, r.pp_min, r.pp_max, r.pp_state, "
              "r.cp_min, r.cp_max, r.cp_state, r.ep_min, r.ep_max, r.ep_state, r.vp_min, r.vp_max, r.vp_state, r.gpus_min, r.gpus_max, "
              "r.gpus_state, r.sp, coalesce(r.seq_len,0), coalesce(r.sizes,''), coalesce(r.gpu_types,''), r.family_intents, "
              "r.model_moe, r.shape FROM shapes sh JOIN recipes r ON r.id = sh.recipe_id WHERE sh.kind = ? ORDER BY sh.id");
  st.bind(1, to_string(kind));
  while (st.step()) {
    Recipe r;
    r.id = st.integer(0);
    r.kind = read_kind<RecipeKind>(st, 1, "recipe kind");
    r.mode = st.text(2);
    r.pattern = st.integer(3) != 0;
    read_layout(st, 4, r, 0);
    r.gpu_types = comma_list(st.text(25));
    r.family_intents = comma_list(st.text(26));
    r.model_moe = st.integer(27) != 0;
    r.shape = st.integer(28);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Candidate> Kb::shape_members(long long shape, long long limit) {
  kb::Stmt st(db_, std::string(kCandidateCols) + "WHERE shape = ? ORDER BY name, mode LIMIT ?");
  st.bind(1, shape).bind(2, limit);
  return read_candidates(st);
}

bool Kb::is_moe(const Recipe& r) {
  if (r.model_moe || (r.ep.is_value() && r.ep.lo > 1)) return true;
  if (auto m = model(r.model_key); m && m->experts > 0) return true;
  const std::string intent = planner("moe_intent");
  return !intent.empty() && std::find(r.family_intents.begin(), r.family_intents.end(), intent) != r.family_intents.end();
}

std::optional<Model> Kb::model(const std::string& key) {
  if (key.empty()) return std::nullopt;
  if (auto it = model_cache_.find(key); it != model_cache_.end()) return it->second;
  auto m = read_model(db_, key);
  model_cache_[key] = m;
  return m;
}

std::optional<Model> Kb::read_model(kb::Db& db_, const std::string& key) {
  kb::Stmt st(db_,
              "SELECT model_key, display_name, coalesce(arch,''), coalesce(num_layers,0), coalesce(num_attention_heads,0), "
              "num_key_value_heads, coalesce(kv_heads_raw,''), coalesce(num_experts,0), coalesce(max_position_embeddings,0), source "
              "FROM models WHERE model_key = ?");
  st.bind(1, key);
  if (!st.step()) return std::nullopt;
  Model m;
  m.key = st.text(0);
  m.display = st.text(1);
  m.arch = st.text(2);
  using kb::limits::kMaxModelCount;
  m.layers = static_cast<int>(kb::kb_int(st, 3, {"models", "num_layers", 0}, 0, kMaxModelCount));
  m.heads = static_cast<int>(kb::kb_int(st, 4, {"models", "num_attention_heads", 0}, 0, kMaxModelCount));
  if (auto kv = kb::kb_opt_int(st, 5, {"models", "num_key_value_heads", 0}, 1, kMaxModelCount)) m.kv_heads = static_cast<int>(*kv);
  m.kv_raw = st.text(6);
  m.experts = static_cast<int>(kb::kb_int(st, 7, {"models", "num_experts", 0}, 0, kMaxModelCount));
  m.max_pos = kb::kb_int(st, 8, {"models", "max_position_embeddings", 0}, 0, kb::limits::kMaxSeqLen);
  m.source = st.text(9);
  return m;
}

std::vector<Gpu> Kb::gpus() {
  if (!gpus_.empty()) return gpus_;
  std::vector<Gpu> out;
  kb::Stmt st(db_, "SELECT gpu_key, display_name, nvlink_domain_size, gpus_per_node, source FROM gpus ORDER BY gpu_key");
  while (st.step())
    out.push_back({st.text(0), st.text(1), static_cast<int>(kb::kb_int(st, 2, {"gpus", "nvlink_domain_size", 0}, 1, kb::limits::kMaxGpus)),
                   static_cast<int>(kb::kb_int(st, 3, {"gpus", "gpus_per_node", 0}, 1, kb::limits::kMaxGpus)), st.text(4)});
  gpus_ = out;
  return out;
}

std::optional<Gpu> Kb::gpu(const std::string& key) {
  for (auto& g : gpus())
    if (g.key == key) return g;
  return std::nullopt;
}

static ConfigKey read_key(kb::Stmt& st) {
  return {st.text(0), read_kind<Impact>(st, 1, "config layer"), st.text(2), st.text(3), st.text(4),
          st.text(5), static_cast<int>(st.integer(6)),          st.text(7)};
}
static const char* kKeyCols =
    "SELECT k.key, k.layer, coalesce(k.dimension,''), coalesce(k.sentence,''), coalesce(s.path,''), k.aliases, "
    "coalesce(k.evidence_line,0), coalesce(k.entity_key,'') FROM config_keys k LEFT JOIN sources s ON s.id = k.evidence_source_id ";

std::optional<ConfigKey> Kb::config_key(const std::string& key) {
  kb::Stmt st(db_, std::string(kKeyCols) +
                       "WHERE k.key = ? OR ',' || k.aliases || ',' LIKE '%,' || ? || ',%' "
                       "ORDER BY k.key = ? DESC LIMIT 1");
  st.bind(1, key).bind(2, key).bind(3, key);
  if (st.step()) return read_key(st);
  return std::nullopt;
}

std::vector<ConfigKey> Kb::config_keys_for(const std::string& dimension) {
  std::vector<ConfigKey> out;
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
              "SELECT t.lang, t.text, s.path, t.line, t.revision, t.is_winner, t.parts, t.facts "
              "FROM entities e JOIN entity_texts t ON t.entity_id = e.id JOIN sources s ON s.id = t.source_id "
              "WHERE e.kind = ? AND e.key = ? ORDER BY t.is_winner DESC, t.revision DESC, t.lang");
  st.bind(1, kind).bind(2, key);
  const std::string row = kind + " " + key;  // how an error names the rows
  while (st.step()) {
    EntityText t;
    t.lang = st.text(0);
    t.text = st.text(1);
    t.file = st.text(2);
    t.line = static_cast<int>(kb::kb_int(st, 3, {"entity_texts", "line", -1, row}, 0, kb::limits::kMaxLine));
    t.revision = static_cast<int>(kb::kb_int(st, 4, {"entity_texts", "revision", -1, row}, 0, kb::limits::kMaxLine));
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
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<QuickRefRow> Kb::quick_ref_rows() {
  std::vector<QuickRefRow> out;
  kb::Stmt st(db_, "SELECT row, mode, scale, intents, recipes, gpus, single_gpu_count FROM quick_ref_picks ORDER BY ordinal");
  while (st.step())
    out.push_back({st.text(0), st.text(1), st.text(2), comma_list(st.text(3)), comma_list(st.text(4)),
                   kb::kb_int(st, 5, {"quick_ref_picks", "gpus", 0}, 0, kb::limits::kMaxGpus), st.integer(6) != 0});
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
  const EntityText* pick = nullptr;
  for (const auto& t : texts)
    if (t.lang == lang && (!pick || t.revision > pick->revision)) pick = &t;
  p.fallback = pick == nullptr;
  if (!pick) pick = &texts.front();  // the winning edition
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

std::vector<long long> Kb::search_recipes(const std::vector<std::string>& words) {
  // One query per word, intersected: words of three characters or more use
  // the trigram index (LIKE on the FTS5 table); shorter ones fall back to a
  // scan with instr(). (Mixing both kinds in one trigram LIKE conjunction
  // crashes SQLite 3.40, found by the bad-query corpus.)
  std::optional<std::set<long long>> hits;
  for (const auto& w : words) {
    const bool indexed = kb::code_point_column(w, w.size()) >= 3;
    kb::Stmt st(db_, indexed ? "SELECT DISTINCT ref_id FROM search WHERE ref_kind = 'recipe' AND text LIKE ?"
                             : "SELECT DISTINCT ref_id FROM search WHERE ref_kind = 'recipe' AND instr(lower(text), ?) > 0");
    st.bind(1, indexed ? "%" + w + "%" : w);
    std::set<long long> ids;
    while (st.step()) ids.insert(st.integer(0));
    if (hits) {
      std::set<long long> both;
      for (long long id : ids)
        if (hits->count(id)) both.insert(id);
      hits = std::move(both);
    } else {
      hits = std::move(ids);
    }
    if (hits->empty()) break;
  }
  return hits ? std::vector<long long>(hits->begin(), hits->end()) : std::vector<long long>{};
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
