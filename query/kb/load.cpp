// The KB reader (see kb.hpp): the snapshot of the small tables and the
// settings, the labels of a language, the quick-reference rows and the
// code's config keys, each read once into values.
#include <algorithm>
#include <charconv>
#include <set>
#include <tuple>

#include "base/checked.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"
#include "base/value_ranges.hpp"
#include "query/kb/kb.hpp"
#include "query/kb/kb_int.hpp"

namespace kbq {

using kb_int::comma_list;
using kb_int::read_kind;

// --- the snapshot ------------------------------------------------------------------

namespace {

std::vector<Gpu> read_gpus(kb::Db& db) {
  std::vector<Gpu> out;
  kb::Stmt st(db,
              "SELECT gpu_key, display_name, short_name, coalesce(memory_gb, 0), nvlink_domain_size, gpus_per_node, fp8_gemm_any_layout, "
              "source, arch "
              "FROM gpus ORDER BY gpu_key");
  while (st.step()) {
    Gpu g{st.text(0),
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

std::vector<ConfigKey> read_config_keys(kb::Db& db) {
  std::vector<ConfigKey> out;
  kb::Stmt st(
      db,
      "SELECT k.key, k.layer, coalesce(k.dimension,''), coalesce(k.sentence,''), coalesce(s.path,''), k.aliases, "
      "coalesce(k.evidence_line,0), coalesce(k.entity_key,'') FROM config_keys k LEFT JOIN sources s ON s.id = k.evidence_source_id "
      "ORDER BY k.rowid");
  while (st.step())
    out.push_back({st.text(0), read_kind<Impact>(st, 1, "config layer"), st.text(2), st.text(3), st.text(4), st.text(5),
                   static_cast<int>(st.integer(6)), st.text(7)});
  return out;
}

// The training launcher's flags: every item <parser>:<dest>, its spellings
// (the greatest of each attribute, as one flag has one) and the config key it sets.
std::vector<Flag> read_flags(kb::Db& db, const std::string& parser) {
  std::vector<Flag> out;
  // The items from "<parser>:" up to "<parser>;" (':' + 1): the parser's own, by the launcher_item index.
  kb::Stmt st(db, "SELECT item, attribute, value, at FROM launcher WHERE section = 'flag' AND item >= ? AND item < ? ORDER BY item, rowid");
  const std::string prefix = parser + ":";
  st.bind(1, prefix).bind(2, parser + ";");
  while (st.step()) {
    const std::string item = st.text(0);
    if (!kb::starts_with(item, prefix)) continue;
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

// Older revisions' values of the entities of a kind: each value of a
// revision conflict that does not win and is older than the conflict's
// newest, by entity, then field, newest revision first, then language.
void read_superseded(kb::Db& db, const std::string& kind, std::map<EntityRef, std::vector<Superseded>>& out) {
  struct Row {
    long long conflict = 0, position = 0;
    EntityRef entity;
    Superseded s;
    bool wins = false;
  };
  std::vector<Row> rows;
  std::map<long long, int> newest;  // conflict → its newest revision
  kb::Stmt st(db,
              "SELECT c.id, v.position, c.entity_kind, c.entity_key, c.field, v.value, s.path, v.lang, v.line, v.revision, v.wins "
              "FROM conflicts c JOIN conflict_values v ON v.conflict_id = c.id JOIN sources s ON s.id = v.source_id "
              "WHERE c.entity_kind = ? AND c.type = 'revision'");
  st.bind(1, kind);
  while (st.step()) {
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

}  // namespace

const Settings& Kb::settings() {
  if (!settings_) {
    std::map<std::string, std::string> rows;
    kb::Stmt st(db_, "SELECT key, value FROM planner");
    while (st.step()) rows[st.text(0)] = st.text(1);
    settings_ = read_settings(rows);
  }
  return *settings_;
}

const Snapshot& Kb::snapshot() {
  if (snapshot_) return *snapshot_;
  auto s = std::make_unique<Snapshot>();
  s->settings = settings();
  s->commit = commit_;
  s->gpus = read_gpus(db_);
  {
    kb::Stmt st(db_, "SELECT precision, archs, display, source FROM precisions ORDER BY ordinal");
    while (st.step()) {
      PrecisionInfo p{st.text(0), {}, st.text(2), st.text(3)};
      for (const auto& a : kb::split(st.text(1), ',')) p.archs.insert(kb::trim(a));
      s->precisions.push_back(std::move(p));
    }
  }
  s->config_keys = read_config_keys(db_);
  s->flags = read_flags(db_, s->settings.launcher_parser);
  {
    kb::Stmt st(db_, "SELECT item, value FROM launcher WHERE section = 'mode' AND attribute = 'task'");
    while (st.step()) s->tasks[st.text(0)] = st.text(1);
  }
  {
    kb::Stmt st(db_, "SELECT preset, value FROM code_datasets WHERE attribute = 'modes' ORDER BY preset");
    while (st.step()) s->presets[st.text(0)] = kb::split(st.text(1), ' ');
  }
  {
    // What a preset trains on: the dataset_kinds row (data/dataset-kinds.tsv)
    // of the config class its builder returns, the class's default row.
    kb::Stmt st(db_,
                "SELECT d.preset, k.data FROM code_datasets d JOIN dataset_kinds k ON k.class = d.value AND k.when_fact = '' "
                "WHERE d.attribute = 'returns' ORDER BY d.preset, k.ordinal");
    while (st.step()) s->preset_data.try_emplace(st.text(0), st.text(1));
  }
  {
    kb::Stmt st(db_, "SELECT preset, modes FROM datasets ORDER BY rowid");
    while (st.step()) s->datasets.emplace_back(st.text(0), kb::split(st.text(1), ','));
  }
  {
    kb::Stmt st(db_, "SELECT DISTINCT old_preset, new_preset FROM dataset_renames ORDER BY 1, 2");
    while (st.step()) s->renames.emplace_back(st.text(0), st.text(1));
  }
  {
    kb::Stmt st(db_, "SELECT criterion FROM ranking ORDER BY position");
    while (st.step()) s->ranking.push_back(st.text(0));
  }
  {
    kb::Stmt st(db_, "SELECT \"check\", entity FROM checks ORDER BY rowid");
    while (st.step()) {
      auto e = parse_entity_ref(st.view(1));
      if (!e) throw kb::KbValueError("checks", "entity", st.text(0), "not an entity kind/key");
      s->checks.emplace_back(st.text(0), std::move(*e));
    }
  }
  {
    std::string tsv = "key\tvalue\tunit\tsource\n";
    kb::Stmt st(db_, "SELECT key, value, unit, source FROM memory_params ORDER BY key");
    while (st.step()) tsv += st.text(0) + "\t" + st.text(1) + "\t" + st.text(2) + "\t" + st.text(3) + "\n";
    auto p = memory::params_from_tsv(tsv);
    if (const auto* err = std::get_if<memory::InputError>(&p)) throw kb::KbValueError("memory_params", "value", "", err->message);
    s->memory = std::get<memory::Params>(p);
  }
  {
    kb::Stmt st(db_,
                "SELECT m.model_key, coalesce(m.total_params_b, 0), coalesce(r.value, ''), m.display_name FROM models m "
                "LEFT JOIN model_rows r ON r.model_key = m.model_key AND r.col = 'family'");
    while (st.step()) {
      ModelBrief b{st.text(2), st.real(1), st.text(3)};
      if (!kb::range_problem(kb::real_range("models", "total_params_b"), b.total_params_b).empty())
        throw kb::KbValueError("models", "total_params_b", st.text(0), "not a parameter count in billions");
      s->models.emplace(st.text(0), std::move(b));
    }
  }
  {
    // Older revisions of the checks' entities, one statement per kind.
    std::set<std::string> kinds;
    for (const auto& [id, e] : s->checks) kinds.insert(e.kind);
    for (const auto& kind : kinds) read_superseded(db_, kind, s->superseded);
  }
  snapshot_ = std::move(s);
  return *snapshot_;
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
  for (const auto& kind : kinds) read_cited(kind, lang, snap.settings.base_language, out);
  return cited_texts_.emplace(lang, std::move(out)).first->second;
}

const Labels& Kb::labels(const std::string& lang) {
  // All labels of a language and of the base language (data/planner.tsv
  // base_language, the one a missing translation falls back to): each in
  // key order (the primary key's), merged, the language's own text winning.
  if (auto it = labels_.find(lang); it != labels_.end()) return it->second;
  using Texts = std::vector<std::pair<std::string, std::string>>;
  const auto read = [&](const std::string& of) {
    Texts out;
    kb::Stmt st(db_, "SELECT key, text FROM labels WHERE lang = ? ORDER BY key");
    st.bind(1, of);
    while (st.step()) out.emplace_back(st.text(0), st.text(1));
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
