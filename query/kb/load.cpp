// The KB reader (see kb.hpp): the snapshot of the small tables and the
// settings, the labels of a language, the quick-reference rows and the
// code's config keys, each read once into values.
#include <algorithm>
#include <charconv>
#include <set>
#include <tuple>

#include "base/checked.hpp"
#include "base/escape.hpp"
#include "base/limits.hpp"
#include "base/stored_rows.hpp"
#include "base/text.hpp"
#include "base/value_ranges.hpp"
#include "query/kb/kb.hpp"
#include "query/kb/kb_int.hpp"

namespace kbq {

using kb_int::comma_list;
using kb_int::read_kind;

// --- the snapshot ------------------------------------------------------------------

namespace {

// The queries whose rows make the snapshot, in the order read: kbc runs
// them and stores their rows (rows_compiled, part 'snapshot';
// base/stored_rows.hpp), and every answer reads those rows, never these
// tables. Each reader below reads its rows as it read the statement's.
enum SnapshotQuery {
  kPlanner,
  kGpus,
  kPrecisions,
  kConfigKeys,
  kFlags,
  kTasks,
  kPresets,
  kPresetData,
  kDatasets,
  kRenames,
  kRanking,
  kChecks,
  kMemory,
  kModels,
  kSuperseded,
  kSnapshotQueries
};
constexpr const char* kSnapshotSql[kSnapshotQueries] = {
    "SELECT key, value FROM planner",
    "SELECT gpu_key, display_name, short_name, coalesce(memory_gb, 0), nvlink_domain_size, gpus_per_node, fp8_gemm_any_layout, source, "
    "arch FROM gpus ORDER BY gpu_key",
    "SELECT precision, archs, display, source FROM precisions ORDER BY ordinal",
    "SELECT k.key, k.layer, coalesce(k.dimension,''), coalesce(k.sentence,''), coalesce(s.path,''), k.aliases, "
    "coalesce(k.evidence_line,0), coalesce(k.entity_key,'') FROM config_keys k LEFT JOIN sources s ON s.id = k.evidence_source_id "
    "ORDER BY k.rowid",
    // Every parser's: the training launcher's are picked by its name (data/planner.tsv launcher_parser).
    "SELECT item, attribute, value, at FROM launcher WHERE section = 'flag' ORDER BY item, rowid",
    "SELECT item, value FROM launcher WHERE section = 'mode' AND attribute = 'task'",
    "SELECT preset, value FROM code_datasets WHERE attribute = 'modes' ORDER BY preset",
    // What a preset trains on: the dataset_kinds row (data/dataset-kinds.tsv)
    // of the config class its builder returns, the class's default row.
    "SELECT d.preset, k.data FROM code_datasets d JOIN dataset_kinds k ON k.class = d.value AND k.when_fact = '' "
    "WHERE d.attribute = 'returns' ORDER BY d.preset, k.ordinal",
    "SELECT preset, modes FROM datasets ORDER BY rowid", "SELECT DISTINCT old_preset, new_preset FROM dataset_renames ORDER BY 1, 2",
    "SELECT criterion FROM ranking ORDER BY position", "SELECT \"check\", entity FROM checks ORDER BY rowid",
    "SELECT key, value, unit, source FROM memory_params ORDER BY key",
    "SELECT m.model_key, coalesce(m.total_params_b, 0), coalesce(r.value, ''), m.display_name FROM models m "
    "LEFT JOIN model_rows r ON r.model_key = m.model_key AND r.col = 'family'",
    // The kinds of the checks' entities ("rule/1": rule), picked again when read.
    "SELECT c.id, v.position, c.entity_kind, c.entity_key, c.field, v.value, s.path, v.lang, v.line, v.revision, v.wins "
    "FROM conflicts c JOIN conflict_values v ON v.conflict_id = c.id JOIN sources s ON s.id = v.source_id "
    "WHERE c.type = 'revision' AND c.entity_kind IN (SELECT substr(entity, 1, instr(entity, '/') - 1) FROM checks) "
    "ORDER BY c.id, v.position"};

// A key of a column kbq prints in code and commands (kKbNameColumns): the
// table's rows are checked when a --kb file is opened, the stored rows
// here, as they are read.
std::string checked_name(std::string_view table, std::string_view column, std::string_view value) {
  if (!kb::is_name(value))
    throw kb::KbValueError(table, column, "a row",
                           "'" + kb::first_code_points(kb::escape_controls(value), 80) +
                               "' is not a name (letters, digits, '_', '.', '-'; kbq prints it in code and commands)");
  return std::string(value);
}

template <class Rows>
std::vector<Gpu> read_gpus(Rows& st) {
  std::vector<Gpu> out;
  while (st.step()) {
    Gpu g{checked_name("gpus", "gpu_key", st.view(0)),
          st.text(1),
          st.text(2),
          st.real(3),
          kb::kb_int(st, 4, kb::int_range("gpus", "nvlink_domain_size"), 0),
          kb::kb_int(st, 5, kb::int_range("gpus", "gpus_per_node"), 0),
          st.integer(6) != 0,
          st.text(7),
          st.text(8)};
    if (!kb::range_problem(kb::real_range("gpus", "memory_gb"), g.memory_gib).empty())
      throw kb::KbValueError("gpus", "memory_gb", g.key, "not a memory size in GB");
    out.push_back(std::move(g));
  }
  return out;
}

template <class Rows>
std::vector<ConfigKey> read_config_keys(Rows& st) {
  std::vector<ConfigKey> out;
  while (st.step())
    out.push_back({st.text(0), read_kind<Impact>(st.view(1), "config layer"), st.text(2), st.text(3), st.text(4), st.text(5),
                   static_cast<int>(st.integer(6)), st.text(7)});
  return out;
}

// The training launcher's flags: every item <parser>:<dest>, its spellings
// (the greatest of each attribute, as one flag has one) and the config key
// it sets; the rows by item, then as written.
template <class Rows>
std::vector<Flag> read_flags(Rows& st, const std::string& parser) {
  std::vector<Flag> out;
  const std::string prefix = parser + ":";
  while (st.step()) {
    if (!kb::starts_with(st.view(0), prefix)) continue;
    const std::string item = st.text(0);
    if (out.empty() || out.back().item != item) out.push_back(Flag{item, {}, {}, {}, {}, {}});
    Flag& f = out.back();
    const std::string attribute = st.text(1), value = st.text(2), at = st.text(3);
    if (attribute == "short") f.short_option = std::max(f.short_option, value);
    if (attribute == "long") f.long_option = std::max(f.long_option, value);
    if (attribute == "config_key" && f.config_key.empty()) f.config_key = value;
    if (attribute == "type" && f.type.empty()) f.type = value;
    f.at = std::max(f.at, at);
  }
  return out;
}

// Older revisions' values of the entities of the kinds asked: each value of
// a revision conflict that does not win and is older than the conflict's
// newest, by entity, then field, newest revision first, then language.
template <class Rows>
void read_superseded(Rows& st, const std::set<std::string>& kinds, std::map<EntityRef, std::vector<Superseded>>& out) {
  struct Row {
    long long conflict = 0, position = 0;
    EntityRef entity;
    Superseded s;
    bool wins = false;
  };
  std::vector<Row> rows;
  std::map<long long, int> newest;  // conflict → its newest revision
  while (st.step()) {
    if (!kinds.count(std::string(st.view(2)))) continue;
    Row r{st.integer(0),
          st.integer(1),
          {st.text(2), st.text(3)},
          {st.text(4), st.text(5), st.text(6), st.text(7), static_cast<int>(st.integer(8)), static_cast<int>(st.integer(9))},
          st.integer(10) != 0};
    int& n = newest[r.conflict];
    n = std::max(n, r.s.revision);
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.entity, a.s.field, b.s.revision, a.s.lang, a.conflict, a.position) <
           std::tie(b.entity, b.s.field, a.s.revision, b.s.lang, b.conflict, b.position);
  });
  for (auto& r : rows)
    if (!r.wins && r.s.revision < newest[r.conflict]) out[r.entity].push_back(std::move(r.s));
}

// The snapshot from its queries' rows, each query's given by `rows(query)`
// (the stored ones: an answer's, and kbc's reading back what it stores).
template <class Rows, class Source>
std::unique_ptr<Snapshot> read_snapshot(Source&& rows) {
  auto s = std::make_unique<Snapshot>();
  {
    std::map<std::string, std::string> planner;
    Rows st = rows(kPlanner);
    while (st.step()) planner[st.text(0)] = st.text(1);
    s->settings = read_settings(planner);
  }
  {
    Rows st = rows(kGpus);
    s->gpus = read_gpus(st);
  }
  {
    Rows st = rows(kPrecisions);
    while (st.step()) {
      PrecisionInfo p{st.text(0), {}, st.text(2), st.text(3)};
      for (const auto& a : kb::split(st.view(1), ',')) p.archs.insert(kb::trim(a));
      s->precisions.push_back(std::move(p));
    }
  }
  {
    Rows st = rows(kConfigKeys);
    s->config_keys = read_config_keys(st);
  }
  {
    Rows st = rows(kFlags);
    s->flags = read_flags(st, s->settings.launcher_parser);
  }
  {
    Rows st = rows(kTasks);
    while (st.step()) s->tasks[st.text(0)] = st.text(1);
  }
  {
    Rows st = rows(kPresets);
    while (st.step()) s->presets[st.text(0)] = kb::split(st.view(1), ' ');
  }
  {
    Rows st = rows(kPresetData);
    while (st.step()) s->preset_data.try_emplace(st.text(0), st.text(1));
  }
  {
    Rows st = rows(kDatasets);
    while (st.step()) s->datasets.emplace_back(st.text(0), kb::split(st.view(1), ','));
  }
  {
    Rows st = rows(kRenames);
    while (st.step()) s->renames.emplace_back(st.text(0), st.text(1));
  }
  {
    Rows st = rows(kRanking);
    while (st.step()) s->ranking.push_back(st.text(0));
  }
  {
    Rows st = rows(kChecks);
    while (st.step()) {
      auto e = parse_entity_ref(st.view(1));
      if (!e) throw kb::KbValueError("checks", "entity", st.text(0), "not an entity kind/key");
      s->checks.emplace_back(st.text(0), std::move(*e));
    }
  }
  {
    std::string tsv = "key\tvalue\tunit\tsource\n";
    Rows st = rows(kMemory);
    while (st.step()) tsv += st.text(0) + "\t" + st.text(1) + "\t" + st.text(2) + "\t" + st.text(3) + "\n";
    auto p = memory::params_from_tsv(tsv);
    if (const auto* err = std::get_if<memory::InputError>(&p)) throw kb::KbValueError("memory_params", "value", "", err->message);
    s->memory = std::get<memory::Params>(p);
  }
  {
    Rows st = rows(kModels);
    while (st.step()) {
      ModelBrief b{st.text(2), st.real(1), st.text(3)};
      std::string key = checked_name("models", "model_key", st.view(0));
      if (!kb::range_problem(kb::real_range("models", "total_params_b"), b.total_params_b).empty())
        throw kb::KbValueError("models", "total_params_b", key, "not a parameter count in billions");
      s->models.emplace(std::move(key), std::move(b));
    }
  }
  {
    // Older revisions of the checks' entities.
    std::set<std::string> kinds;
    for (const auto& [id, e] : s->checks) kinds.insert(e.kind);
    Rows st = rows(kSuperseded);
    read_superseded(st, kinds, s->superseded);
  }
  return s;
}

std::vector<kb::StoredQuery> snapshot_queries();

// The snapshot from its stored rows (rows_compiled's part 'snapshot'),
// each value checked as it is read; bytes this kbq did not compile are a
// KbValueError naming the part.
std::unique_ptr<Snapshot> stored_snapshot(std::string_view bytes) {
  const std::vector<kb::StoredQuery> queries = snapshot_queries();
  try {
    kb::StoredResults stored(bytes, kb::limits::kMaxKbTextBytes);
    auto snap = read_snapshot<kb::StoredRows>([&](SnapshotQuery q) { return stored.next(queries[q]); });
    stored.finish();
    return snap;
  } catch (const kb::stored::Error& e) {
    throw kb::KbValueError("rows_compiled", "bytes", "'snapshot'", e.what());
  }
}

std::vector<kb::StoredQuery> snapshot_queries() {
  std::vector<kb::StoredQuery> out;
  for (const char* sql : kSnapshotSql) out.push_back({sql, {}});
  return out;
}

}  // namespace

std::string Engine::compile_snapshot(sqlite3* db) { return kb::compile_rows(db, snapshot_queries(), kb::limits::kMaxKbTextBytes); }

std::vector<std::pair<std::string, std::string>> Engine::compile_stored_rows(sqlite3* db) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("snapshot", compile_snapshot(db));
  // The languages' parts run with the base language and the kinds the
  // stages cite, read from the snapshot as an answer reads it (checked).
  const std::unique_ptr<Snapshot> snap = stored_snapshot(out.front().second);
  std::set<std::string> kinds;
  for (const auto& e : snap->cited()) kinds.insert(e.kind);
  const std::string& base = snap->settings.base_language;
  std::string languages;
  {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'languages'", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      if (const auto* v = sqlite3_column_text(st, 0)) languages = reinterpret_cast<const char*>(v);
    sqlite3_finalize(st);
  }
  out.emplace_back("facts", kb::compile_rows(db, kb_int::fact_dictionary_queries(), kb::limits::kMaxKbTextBytes));
  for (const auto& lang : comma_list(languages)) {
    out.emplace_back("labels/" + lang, kb::compile_rows(db, kb_int::labels_queries(lang), kb::limits::kMaxKbTextBytes));
    out.emplace_back("cited/" + lang, kb::compile_rows(db, kb_int::cited_queries(lang, base, kinds), kb::limits::kMaxKbTextBytes));
  }
  return out;
}

const Settings& Kb::settings() { return snapshot().settings; }

const Snapshot& Kb::snapshot() {
  if (snapshot_) return *snapshot_;
  // Its chunks' sizes are bounded when a --kb file is opened
  // (kKbColumnLimits), their sum as they are joined; kbc checked the
  // embedded one against the same limits.
  const std::string bytes = kb::read_rows_part(db_, "snapshot");
  if (bytes.empty())
    throw kb::KbValueError("rows_compiled", "bytes", "'snapshot'",
                           "missing: kbc writes the rows of the small tables an answer reads in every KB");
  snapshot_ = stored_snapshot(bytes);
  snapshot_->commit = commit_;
  return *snapshot_;
}

std::vector<kb::StoredQuery> kb_int::labels_queries(const std::string& lang) {
  return {{"SELECT key, text FROM labels WHERE lang = ? ORDER BY key", {lang}}};
}

const Labels& Kb::labels(const std::string& lang) {
  // All labels of a language and of the base language (data/planner.tsv
  // base_language, the one a missing translation falls back to): each in
  // key order (the primary key's), merged, the language's own text winning.
  if (auto it = labels_.find(lang); it != labels_.end()) return it->second;
  using Texts = std::vector<std::pair<std::string, std::string>>;
  const auto read = [&](const std::string& of) {
    Texts out;
    kb_int::read_part(db_, "labels/" + of, is_language(of), kb_int::labels_queries(of), [&](auto next) {
      auto st = next();
      while (st.step()) out.emplace_back(st.text(0), st.text(1));
    });
    return out;
  };
  const std::string& fallback = settings().base_language;
  Texts texts = read(fallback);
  if (lang != fallback) {
    Texts own = read(lang), merged;
    merged.reserve(texts.size() + own.size());
    auto a = texts.begin(), b = own.begin();
    while (a != texts.end() || b != own.end()) {
      if (b == own.end() || (a != texts.end() && a->first < b->first)) {
        merged.push_back(std::move(*a++));
        continue;
      }
      if (a != texts.end() && a->first == b->first) ++a;
      merged.push_back(std::move(*b++));
    }
    texts = std::move(merged);
  }
  return labels_.emplace(lang, Labels(lang, std::move(texts))).first->second;
}

const std::vector<QuickRefRow>& Kb::quick_ref_rows() {
  if (quick_ref_) return *quick_ref_;
  std::vector<QuickRefRow> out;  // kept only once whole: a bad row throws and leaves nothing half read
  kb::Stmt st(db_, "SELECT row, mode, scale, intents, recipes, gpus, single_gpu_count FROM quick_ref_picks ORDER BY ordinal");
  while (st.step()) {
    QuickRefRow row{st.text(0),
                    st.text(1),
                    st.text(2),
                    comma_list(st.text(3)),
                    {},
                    kb::kb_int(st, 5, kb::int_range("quick_ref_picks", "gpus"), 0),
                    st.integer(6) != 0};
    for (auto& name : comma_list(st.text(4))) row.recipes.push_back({std::move(name), false, {}, {}});
    out.push_back(std::move(row));
  }
  // Each pick's model and mode, as recipe(name) finds it (a library
  // recipe before a benchmark of the name): one indexed row each, not the
  // whole recipe and its launch facts.
  kb::Stmt pick_of(db_, "SELECT kind = ?2, model_key, mode FROM recipes WHERE name = ?1");
  pick_of.bind(2, to_string(RecipeKind::Library));
  for (auto& row : out)
    for (auto& pick : row.recipes) {
      pick_of.reset();
      pick_of.bind(1, pick.name);
      while (pick_of.step())
        if (!pick.exported || pick_of.integer(0) != 0) {
          pick.exported = true;
          pick.model_key = pick_of.text(1);
          pick.mode = pick_of.text(2);
        }
    }
  return quick_ref_.emplace(std::move(out));
}

namespace {

// The Python type of a literal default ("False", "1", "0.0", "'adam'"), or
// "" when it is None or not a plain literal.
std::string literal_type(const std::string& v) {
  if (v == "True" || v == "False") return "bool";
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) return "str";
  const char* const end = v.data() + v.size();
  long long whole = 0;
  double real = 0;
  if (const auto r = std::from_chars(v.data(), end, whole); r.ec == std::errc() && r.ptr == end) return "int";
  if (const auto r = std::from_chars(v.data(), end, real); r.ec == std::errc() && r.ptr == end) return "float";
  return "";
}

}  // namespace

const CodeConfigKeys& Kb::code_config_keys() {
  if (!code_keys_) {
    CodeConfigKeys keys;  // kept only once read whole (kb.cpp, Kb::facts)
    kb::Stmt st(db_, "SELECT key, kind, type, default_value FROM code_config_keys ORDER BY rowid");
    while (st.step()) {
      std::string type = st.text(2);
      // A field of a class outside the snapshot has no annotation here: its
      // cited default's literal says its type (False: bool, 1: int, 0.0:
      // float); None or an expression leaves it open.
      if (type.empty() && st.text(1) == "external-field") type = literal_type(st.text(3));
      keys.rows.push_back({st.text(0), st.text(1), type});
    }
    code_keys_ = std::move(keys);
  }
  return *code_keys_;
}

}  // namespace kbq
