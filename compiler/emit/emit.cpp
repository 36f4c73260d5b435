// Emit stage (see emit.hpp): the SQLite writer and the dump exporter.
#include "compiler/emit/emit.hpp"
#include "compiler/resolve/usable.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "base/checked.hpp"
#include "base/dsl/kb_lexicon.hpp"
#include "base/escape.hpp"
#include "base/files.hpp"
#include "base/kb_schema.hpp"
#include "base/schema_objects.hpp"
#include "base/sql_text.hpp"
#include "base/sqlite.hpp"
#include "base/text.hpp"
#include "compiler/emit/schema_sql.hpp"

namespace kb {

const char* const kSchemaSql = kSchemaSqlText;

namespace {

using json = nlohmann::ordered_json;

struct RangeCols {
  std::optional<long long> lo, hi;
  std::string state;
};

// Parallelism "—" means the dimension is not used, i.e. size 1.
RangeCols range_cols(const Range& r, bool none_is_one) {
  const std::string state(to_string(r.state));
  switch (r.state) {
    case RangeState::None:
      return none_is_one ? RangeCols{1, 1, state} : RangeCols{std::nullopt, std::nullopt, state};
    case RangeState::Value:
      return {r.lo, r.open ? std::nullopt : std::optional<long long>(r.hi), state};
    case RangeState::Unknown:
    case RangeState::Varies:
      break;
  }
  return {std::nullopt, std::nullopt, state};
}

std::optional<long long> to_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (!end || *end != '\0') return std::nullopt;
  return v;
}

void bind_text_or_null(Stmt& st, int i, const std::string& s) {
  if (s.empty())
    st.bind_null(i);
  else
    st.bind(i, s);
}

void bind_real_or_null(Stmt& st, int i, const std::string& s) {
  if (s.empty()) {
    st.bind_null(i);
    return;
  }
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end && *end == '\0')
    st.bind(i, v);
  else
    st.bind_null(i);
}

void bind_int_or_null(Stmt& st, int i, const std::string& s) {
  if (auto v = to_int(s))
    st.bind(i, *v);
  else
    st.bind_null(i);
}

class Writer {
 public:
  Writer(Db& db, const EmitInput& in) : db_(db), in_(in) {}

  void run() {
    // Without its comments and layout (base/sql_text.hpp): SQLite keeps each
    // CREATE statement's text in the file, and every reader parses it on
    // opening (half the size: 26 → 13 KB).
    db_.exec(kb::normalized_sql(kSchemaSql));
    meta();
    sources();
    sections();
    entities();
    conflicts();
    recipes();
    datasets();
    config_keys();
    models_and_gpus();
    lexicon();
    findings();
    code_tables();
    drift();
  }

 private:
  long long source_id(const std::string& path) const {
    auto it = ids_.find(path);
    return it == ids_.end() ? 0 : it->second;
  }

  void search(const std::string& text, const std::string& lang, const char* kind, long long id) {
    if (text.empty()) return;
    if (!search_) search_.emplace(db_, "INSERT INTO search(text, lang, ref_kind, ref_id) VALUES (?,?,?,?)");
    search_->bind_all(text, lang, kind, id).run();
  }

  void meta() {
    Stmt st(db_, "INSERT INTO meta(key, value) VALUES (?, ?)");
    st.bind_all("schema_version", std::to_string(kSchemaVersion)).run();
    st.bind_all("generator", "kbc").run();
    int newest = 0;
    for (const auto& d : *in_.documents) newest = std::max(newest, d.meta.revision);
    st.bind_all("newest_revision", std::to_string(newest)).run();
    // The editions' languages, so kbq needs no scan of sources to list them.
    std::set<std::string> langs;
    for (const auto& d : *in_.documents)
      if (!d.meta.lang.empty()) langs.insert(d.meta.lang);
    st.bind_all("languages", join(std::vector<std::string>(langs.begin(), langs.end()), ",")).run();
  }

  void sources() {
    Stmt st(db_,
            "INSERT INTO sources(id, path, format, lang, revision, date, origin, translated_from, name, sha256) "
            "VALUES (?,?,?,?,?,?,?,?,?,?)");
    long long id = 0;
    for (const auto& d : *in_.documents) {
      ids_[d.path] = ++id;
      st.bind(1, id).bind(2, d.path).bind(3, ends_with(d.path, ".md") ? "markdown" : "text-export").bind(4, d.meta.lang);
      st.bind(5, d.meta.revision);
      bind_text_or_null(st, 6, d.meta.date);
      bind_text_or_null(st, 7, d.meta.origin);
      bind_text_or_null(st, 8, d.meta.translated_from);
      bind_text_or_null(st, 9, d.meta.name);
      st.bind(10, d.sha256).run();
    }
    for (const auto& [path, sha] : in_.data_files) {
      ids_[path] = ++id;
      st.bind(1, id).bind(2, path).bind(3, "data").bind_null(4).bind_null(5).bind_null(6).bind_null(7).bind_null(8).bind_null(9);
      st.bind(10, sha).run();
    }
    for (const auto& [path, sha] : in_.perf_pages) {  // NVIDIA's performance tables (compiler/perf), after the data files
      ids_[path] = ++id;
      st.bind(1, id).bind(2, path).bind(3, "perf-table").bind_null(4).bind_null(5).bind_null(6).bind_null(7).bind_null(8).bind_null(9);
      st.bind(10, sha).run();
    }
  }

  void sections() {
    Stmt st(db_,
            "INSERT INTO sections(source_id, line, level, kind, heading, heading_path, ordinal, index_kind) "
            "VALUES (?,?,?,?,?,?,?,?)");
    for (const auto& s : *in_.sections) {
      st.bind(1, source_id(s.prov.file)).bind(2, s.prov.line).bind(3, s.level);
      bind_text_or_null(st, 4, s.kind);
      st.bind(5, s.heading).bind(6, s.heading_path);
      if (s.ordinal)
        st.bind(7, s.ordinal);
      else
        st.bind_null(7);
      bind_text_or_null(st, 8, s.index_kind);
      st.run();
      const long long id = sqlite3_last_insert_rowid(db_.handle());
      search(s.heading, s.prov.lang, "section", id);
    }
  }

  void entities() {
    Stmt ent(db_, "INSERT INTO entities(id, kind, key, section, superseded) VALUES (?,?,?,?,?)");
    Stmt txt(db_,
             "INSERT INTO entity_texts(entity_id, lang, source_id, line, revision, is_winner, usable, text, parts, facts) "
             "VALUES (?,?,?,?,?,?,?,?,?,?)");
    static const std::vector<EntityEdition> kNone;
    const EditionUse use(in_.editions ? *in_.editions : kNone);
    Stmt miss(db_, "INSERT INTO missing_translations(entity_id, lang) VALUES (?,?)");
    long long id = 0;
    for (const auto& e : in_.resolved->entities) {
      ent.bind(1, ++id).bind(2, e.kind).bind(3, e.key).bind(4, e.winner().section_kind).bind(5, e.superseded ? 1 : 0).run();
      entity_ids_[e.kind + "\t" + e.key] = id;
      bool first = true;
      for (const auto* ed : e.editions) {
        json parts = json::object();
        for (const auto& [k, val] : ed->parts) parts[k] = val;
        json facts = json::object();
        for (const auto& [k, vals] : ed->facts) facts[k] = std::vector<std::string>(vals.begin(), vals.end());
        txt.bind(1, id).bind(2, ed->prov.lang).bind(3, source_id(ed->prov.file)).bind(4, ed->prov.line);
        txt.bind(5, ed->prov.revision).bind(6, first ? 1 : 0).bind(7, use.usable(e, *ed) ? 1 : 0);
        txt.bind(8, ed->text).bind(9, parts.dump()).bind(10, facts.dump());
        txt.run();
        std::string indexed = ed->text;
        for (const auto& [k, val] : ed->parts)
          if (val != ed->text) indexed += "\n" + val;
        search(indexed, ed->prov.lang, "entity", id);
        first = false;
      }
      for (const auto& lang : e.missing) miss.bind_all(id, lang).run();
      for (const auto& f : e.fallbacks) {
        if (!fallback_)
          fallback_.emplace(db_,
                            "INSERT INTO fallbacks(ref_kind, ref_id, field, value, source_id, line, revision, lang, "
                            "newest_revision) VALUES (?,?,?,?,?,?,?,?,?)");
        fallback_->bind_all(e.kind, id, f.field, f.value, source_id(f.prov.file), f.prov.line, f.prov.revision, f.prov.lang, f.newest)
            .run();
      }
    }
  }

  void conflicts() {
    Stmt c(db_, "INSERT INTO conflicts(id, type, entity_kind, entity_key, field) VALUES (?,?,?,?,?)");
    Stmt cv(db_,
            "INSERT INTO conflict_values(conflict_id, position, value, source_id, line, revision, lang, wins) "
            "VALUES (?,?,?,?,?,?,?,?)");
    long long id = 0;
    for (const auto& k : in_.resolved->conflicts) {
      c.bind(1, ++id).bind(2, k.type).bind(3, k.entity_kind).bind(4, k.entity_key).bind(5, k.field).run();
      int pos = 0;
      for (const auto& v : k.values) {
        cv.bind(1, id).bind(2, ++pos).bind(3, v.value).bind(4, source_id(v.prov.file)).bind(5, v.prov.line);
        cv.bind(6, v.prov.revision).bind(7, v.prov.lang).bind(8, v.wins ? 1 : 0).run();
      }
    }
  }

  void recipes() {
    Stmt st(db_,
            "INSERT INTO doc_recipes(name, mode, kind, is_pattern, expanded_from, mentioned_in, family, family_ordinal, "
            "model_key, model, tp_min, tp_max, tp_state, pp_min, pp_max, pp_state, cp_min, cp_max, cp_state, "
            "ep_min, ep_max, ep_state, vp_min, vp_max, vp_state, gpus_min, gpus_max, gpus_open, gpus_state, sp, "
            "seq_len, sizes, gpu_types, notes, extra, source_id, line, revision) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    Stmt fb(db_,
            "INSERT INTO fallbacks(ref_kind, ref_id, field, value, source_id, line, revision, lang, newest_revision) "
            "VALUES (?,?,?,?,?,?,?,?,?)");
    for (const auto& r : in_.resolved->recipes) {
      int i = 0;
      auto next = [&i] { return ++i; };
      st.bind(next(), r.name);
      bind_text_or_null(st, next(), r.mode);
      st.bind(next(), to_string(r.kind));
      st.bind(next(), r.pattern ? 1 : 0);
      bind_text_or_null(st, next(), r.expanded_from);
      bind_text_or_null(st, next(), r.mentioned_in);
      st.bind(next(), r.family);
      st.bind(next(), r.family_ordinal);
      bind_text_or_null(st, next(), r.model_key);
      bind_text_or_null(st, next(), r.model);
      for (const Range* rg : {&r.tp, &r.pp, &r.cp, &r.ep, &r.vp}) {
        const auto c = range_cols(*rg, true);
        st.bind_opt(next(), c.lo);
        st.bind_opt(next(), c.hi);
        st.bind(next(), c.state);
      }
      const auto g = range_cols(r.gpus, false);
      st.bind_opt(next(), g.lo);
      st.bind_opt(next(), g.hi);
      st.bind(next(), r.gpus.open ? 1 : 0);
      st.bind(next(), g.state);
      if (r.sp)
        st.bind(next(), *r.sp ? 1 : 0);
      else
        st.bind_null(next());
      if (r.seq_len)
        st.bind(next(), static_cast<long long>(r.seq_len));
      else
        st.bind_null(next());
      bind_text_or_null(st, next(), r.sizes);
      bind_text_or_null(st, next(), join(r.gpu_types, ","));
      bind_text_or_null(st, next(), r.notes);
      if (r.extra.empty()) {
        st.bind_null(next());
      } else {
        st.bind(next(), nlohmann::json(r.extra).dump());  // keys sorted, each looked up once (a wide table has thousands)
      }
      st.bind(next(), source_id(r.prov.file));
      st.bind(next(), r.prov.line);
      st.bind(next(), r.prov.revision);
      st.run();
      const long long id = sqlite3_last_insert_rowid(db_.handle());
      if (r.unlisted_in > 0)
        fb.bind_all("doc_recipe", id, "", "", source_id(r.prov.file), r.prov.line, r.prov.revision, r.prov.lang, r.unlisted_in).run();
      for (const auto& [field, src] : r.field_sources)
        fb.bind_all("doc_recipe", id, field, src.value, source_id(src.prov.file), src.prov.line, src.prov.revision, src.prov.lang,
                    r.prov.revision)
            .run();
      search(r.name + (r.notes.empty() ? "" : "\n" + r.notes) + (r.family.empty() ? "" : "\n" + r.family), r.prov.lang, "doc_recipe", id);
    }
  }

  void datasets() {
    const auto& t = in_.vocab->datasets;
    Stmt st(db_, "INSERT INTO datasets(preset, modes, evidence, source) VALUES (?,?,?,?)");
    for (const auto& row : t.rows)
      st.bind_all(t.get(row, "preset"), t.get(row, "modes"), t.get(row, "evidence"), t.get(row, "source")).run();
    Stmt rn(db_,
            "INSERT OR IGNORE INTO dataset_renames(old_preset, new_preset, old_source_id, old_line, new_source_id, new_line) "
            "VALUES (?,?,?,?,?,?)");
    for (const auto& r : in_.resolved->renames)
      rn.bind_all(r.from, r.to, source_id(r.old_prov.file), r.old_prov.line, source_id(r.new_prov.file), r.new_prov.line).run();
  }

  void config_keys() {
    const auto& t = in_.vocab->config_keys;
    Stmt st(db_,
            "INSERT INTO config_keys(key, layer, aliases, evidence, sentence, evidence_source_id, evidence_line, source, dimension, "
            "entity_key) VALUES (?,?,?,?,?,?,?,?,?,?)");
    for (const auto& row : t.rows) {
      const std::string& evidence = t.get(row, "evidence");
      // Find the sentence holding the evidence phrase in the newest edition
      // that states it (the configuration-layers section).
      const EntityEdition* found = nullptr;
      const Entity* found_entity = nullptr;
      for (const auto& e : in_.resolved->entities)
        for (const auto* ed : e.editions)
          if (ed->text.find(evidence) != std::string::npos &&
              (!found || ed->prov.revision > found->prov.revision ||
               (ed->prov.revision == found->prov.revision && found->prov.translated && !ed->prov.translated))) {
            found = ed;
            found_entity = &e;
          }
      st.bind(1, t.get(row, "key")).bind(2, t.get(row, "layer")).bind(3, t.get(row, "aliases")).bind(4, evidence);
      if (found) {
        st.bind(5, sentence_around(found->text, evidence)).bind(6, source_id(found->prov.file)).bind(7, found->prov.line);
      } else {
        st.bind_null(5).bind_null(6).bind_null(7);
      }
      st.bind(8, t.get(row, "source"));
      bind_text_or_null(st, 9, t.get(row, "dimension"));
      if (found_entity)
        st.bind(10, found_entity->kind + "/" + found_entity->key);
      else
        st.bind_null(10);
      st.run();
    }
    const auto& pl = in_.vocab->planner;
    Stmt ps(db_, "INSERT INTO planner(key, value, source) VALUES (?,?,?)");
    for (const auto& row : pl.rows) ps.bind_all(pl.get(row, "key"), pl.get(row, "value"), pl.get(row, "source")).run();
    const auto& ch = in_.vocab->checks;
    Stmt cs(db_, "INSERT INTO checks(\"check\", kind, entity, source) VALUES (?,?,?,?)");
    for (const auto& row : ch.rows)
      cs.bind_all(ch.get(row, "check"), ch.get(row, "kind"), ch.get(row, "entity"), ch.get(row, "source")).run();
    const auto& lb = in_.vocab->labels;
    Stmt ls(db_, "INSERT OR IGNORE INTO labels(lang, key, text, source) VALUES (?,?,?,?)");
    for (const auto& row : lb.rows) ls.bind_all(lb.get(row, "lang"), lb.get(row, "key"), lb.get(row, "text"), lb.get(row, "source")).run();
  }

  static std::string sentence_around(const std::string& text, const std::string& phrase) {
    const size_t at = text.find(phrase);
    if (at == std::string::npos) return text;
    static const std::vector<std::string> stops = {"。", ". ", "\n"};
    size_t begin = 0, end = text.size();
    for (const auto& s : stops) {
      const size_t b = text.rfind(s, at);
      if (b != std::string::npos && b + s.size() > begin && b + s.size() <= at) begin = b + s.size();
      const size_t e = text.find(s, at + phrase.size());
      if (e != std::string::npos && e + s.size() < end) end = e + (s == "\n" ? 0 : s.size());
    }
    return trim(text.substr(begin, end - begin));
  }

  void models_and_gpus() {
    Stmt st(db_,
            "INSERT INTO models(model_key, display_name, hf_id, family, arch, num_layers, num_attention_heads, "
            "num_key_value_heads, kv_heads_raw, num_experts, experts_per_token, max_position_embeddings, "
            "total_params_b, active_params_b, notes, source) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    Stmt cols(db_, "INSERT OR REPLACE INTO model_rows(model_key, col, value) VALUES (?,?,?)");
    for (const TsvTable* m : {&in_.vocab->models, &in_.vocab->models_extra})
      for (const auto& row : m->rows) {
        st.bind(1, m->get(row, "model_key")).bind(2, m->get(row, "display_name"));
        bind_text_or_null(st, 3, m->get(row, "hf_id"));
        bind_text_or_null(st, 4, m->get(row, "family"));
        bind_text_or_null(st, 5, m->get(row, "arch"));
        bind_int_or_null(st, 6, m->get(row, "num_layers"));
        bind_int_or_null(st, 7, m->get(row, "num_attention_heads"));
        bind_int_or_null(st, 8, m->get(row, "num_key_value_heads"));
        st.bind(9, m->get(row, "num_key_value_heads"));
        bind_int_or_null(st, 10, m->get(row, "num_experts"));
        bind_int_or_null(st, 11, m->get(row, "experts_per_token"));
        bind_int_or_null(st, 12, m->get(row, "max_position_embeddings"));
        bind_real_or_null(st, 13, m->get(row, "total_params_b"));
        bind_real_or_null(st, 14, m->get(row, "active_params_b"));
        bind_text_or_null(st, 15, m->get(row, "notes"));
        st.bind(16, m->get(row, "source")).run();
        for (size_t c = 0; c < m->header.size() && c < row.cells.size(); ++c)
          if (!row.cells[c].empty()) cols.bind_all(m->get(row, "model_key"), m->header[c], row.cells[c]).run();
      }
    const auto& a = in_.vocab->model_arch;
    Stmt arch(db_, "INSERT OR REPLACE INTO model_arch(model_key, field, value, source) VALUES (?,?,?,?)");
    for (const auto& row : a.rows)
      arch.bind_all(a.get(row, "model_key"), a.get(row, "field"), a.get(row, "value"), a.get(row, "source")).run();
    std::map<std::string, int> any_layout;  // gpu key → 1 when FP8 GEMMs run in any layout
    for (const auto& row : in_.vocab->gpu_memory.rows)
      any_layout[in_.vocab->gpu_memory.get(row, "gpu_key")] = in_.vocab->gpu_memory.get(row, "fp8_gemm_any_layout") == "yes" ? 1 : 0;
    const auto& g = in_.vocab->gpus;
    Stmt gs(db_,
            "INSERT INTO gpus(gpu_key, display_name, short_name, memory_gb, bf16_dense_tflops, nvlink_domain_size, gpus_per_node, "
            "fp8_gemm_any_layout, source, arch) VALUES (?,?,?,?,?,?,?,?,?,?)");
    for (const auto& row : g.rows) {
      gs.bind(1, g.get(row, "gpu_key")).bind(2, g.get(row, "display_name")).bind(3, g.get(row, "short_name"));
      bind_real_or_null(gs, 4, g.get(row, "memory_gb"));
      bind_real_or_null(gs, 5, g.get(row, "bf16_dense_tflops"));
      bind_int_or_null(gs, 6, g.get(row, "nvlink_domain_size"));
      bind_int_or_null(gs, 7, g.get(row, "gpus_per_node"));
      gs.bind(8, any_layout[g.get(row, "gpu_key")]);
      gs.bind(9, g.get(row, "source")).bind(10, g.get(row, "arch")).run();
    }
    const auto& sy = in_.vocab->systems;
    Stmt sys(db_, "INSERT INTO systems(system, display_name, gpu_key, gpus, nodes, source) VALUES (?,?,?,?,?,?)");
    for (const auto& row : sy.rows) {
      sys.bind(1, sy.get(row, "system")).bind(2, sy.get(row, "display_name")).bind(3, sy.get(row, "gpu_key"));
      bind_int_or_null(sys, 4, sy.get(row, "gpus"));
      bind_int_or_null(sys, 5, sy.get(row, "nodes"));
      sys.bind(6, sy.get(row, "source")).run();
    }
    const auto& mp = in_.vocab->memory;
    Stmt mem(db_, "INSERT INTO memory_params(key, value, unit, source) VALUES (?,?,?,?)");
    for (const auto& row : mp.rows)
      mem.bind_all(mp.get(row, "key"), mp.get(row, "value"), mp.get(row, "unit"), mp.get(row, "source")).run();
    const auto& sp = in_.vocab->steps;
    Stmt steps(db_, "INSERT INTO steps(step, modality, source) VALUES (?,?,?)");
    for (const auto& row : sp.rows) steps.bind_all(sp.get(row, "step"), sp.get(row, "modality"), sp.get(row, "source")).run();
    const auto& pr = in_.vocab->precisions;
    Stmt prec(db_, "INSERT INTO precisions(precision, ordinal, match, archs, display, source) VALUES (?,?,?,?,?,?)");
    long long ordinal = 0;
    for (const auto& row : pr.rows)
      prec.bind_all(pr.get(row, "precision"), ++ordinal, pr.get(row, "match"), pr.get(row, "archs"), pr.get(row, "display"),
                    pr.get(row, "source"))
          .run();
    const auto& dk = in_.vocab->dataset_kinds;
    Stmt kinds(db_, "INSERT INTO dataset_kinds(ordinal, class, when_fact, data, user_data, source) VALUES (?,?,?,?,?,?)");
    ordinal = 0;
    for (const auto& row : dk.rows)
      kinds
          .bind_all(++ordinal, dk.get(row, "class"), dk.get(row, "when"), dk.get(row, "data"), dk.get(row, "user_data") == "yes" ? 1 : 0,
                    dk.get(row, "source"))
          .run();
    const auto& rk = in_.vocab->ranking;
    Stmt rank(db_, "INSERT INTO ranking(position, criterion, description, source) VALUES (?,?,?,?)");
    for (const auto& row : rk.rows) {
      bind_int_or_null(rank, 1, rk.get(row, "position"));
      rank.bind(2, rk.get(row, "criterion")).bind(3, rk.get(row, "description")).bind(4, rk.get(row, "source")).run();
    }
  }

  void lexicon() {
    const auto& l = in_.vocab->lexicon;
    Stmt st(db_, "INSERT OR IGNORE INTO lexicon(lang, kind, word, value, source, line) VALUES (?,?,?,?,?,?)");
    for (const auto& row : l.rows)
      st.bind_all(l.get(row, "lang"), l.get(row, "kind"), l.get(row, "word"), l.get(row, "value"), l.get(row, "source"),
                  static_cast<long long>(row.line))
          .run();
    const auto& c = in_.vocab->columns;
    Stmt cs(db_, "INSERT OR IGNORE INTO columns(lang, header, field, source) VALUES (?,?,?,?)");
    for (const auto& row : c.rows) cs.bind_all(c.get(row, "lang"), c.get(row, "header"), c.get(row, "field"), c.get(row, "source")).run();
  }

  void findings() {
    Stmt st(db_, "INSERT INTO findings(kind, message, source_id, line) VALUES (?,?,?,?)");
    for (const auto& f : in_.resolved->findings) st.bind_all(f.kind, f.message, source_id(f.prov.file), f.prov.line).run();
  }

  // The newest Megatron Bridge snapshot's facts, every snapshot's identity,
  // and what changed between snapshots.
  void code_tables() {
    if (!in_.code) return;
    const CodeSnapshot* newest = in_.code->newest();
    Stmt snap(db_, "INSERT INTO code_snapshots(folder, commit_sha, date, repo, extractor, newest) VALUES (?,?,?,?,?,?)");
    for (const auto& s : in_.code->snapshots) snap.bind_all(s.folder, s.commit, s.date, s.repo, s.extractor, &s == newest ? 1 : 0).run();
    if (newest) {
      Stmt r(db_,
             "INSERT INTO code_recipes(name, kind, target, defined_at, exported_at, alias_of, mode, family, model, task, gpus, hardware, "
             "precision, variant, step) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
      for (const auto& c : newest->recipes) {
        r.bind_all(c.name, to_string(c.kind), c.target, c.defined_at, c.exported_at, c.alias_of, c.mode, c.family, c.model, c.task);
        bind_int_or_null(r, 11, c.gpus);
        r.bind(12, c.hardware).bind(13, c.precision).bind(14, c.variant).bind(15, c.step).run();
      }
      Stmt f(db_, "INSERT INTO code_facts(target, field, state, value, type, at, note) VALUES (?,?,?,?,?,?,?)");
      for (const auto& [target, facts] : newest->facts)
        for (const auto& x : facts) f.bind_all(target, x.field, to_string(x.state), x.value, x.type, x.at, x.note).run();
      rows("INSERT INTO launcher(section, item, attribute, value, at) VALUES (?,?,?,?,?)", newest->launcher, 5);
      rows("INSERT INTO code_config_keys(key, kind, class, type, default_value, source, at) VALUES (?,?,?,?,?,?,?)", newest->config_keys,
           7);
      rows("INSERT INTO code_datasets(preset, attribute, value, at, note) VALUES (?,?,?,?,?)", newest->datasets, 5);
      rows("INSERT INTO code_providers(provider, field, state, value, type, at, note, targets) VALUES (?,?,?,?,?,?,?,?)", newest->providers,
           8);
    }
    Stmt ch(db_,
            "INSERT INTO code_changes(file, line, change, name, kind, field, old_value, new_value, old_commit, new_commit) "
            "VALUES (?,?,?,?,?,?,?,?,?,?)");
    for (const auto& c : in_.code->changes)
      for (const auto& x : c.rows)
        ch.bind_all(c.file, x.line, x.change, x.name, x.kind, x.field, x.old_value, x.new_value, c.old_commit, c.new_commit).run();
  }

  // A snapshot file's rows, the first `n` columns (missing cells empty).
  void rows(const char* sql, const std::vector<CodeRow>& in, int n) {
    Stmt st(db_, sql);
    for (const auto& row : in) {
      for (int i = 0; i < n; ++i)
        st.bind(i + 1, static_cast<size_t>(i) < row.cells.size() ? row.cells[static_cast<size_t>(i)] : std::string());
      st.run();
    }
  }

  void drift() {
    if (!in_.drift) return;
    Stmt st(db_,
            "INSERT INTO drift(kind, subject, field, doc_value, source_id, line, revision, lang, code_value, code_at, note) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& d : *in_.drift)
      st.bind_all(to_string(d.kind), d.subject, d.field, d.doc_value, source_id(d.doc.file), d.doc.line, d.doc.revision, d.doc.lang,
                  d.code_value, d.code_at, d.note)
          .run();
  }

  Db& db_;
  const EmitInput& in_;
  std::map<std::string, long long> ids_;
  std::map<std::string, long long> entity_ids_;
  std::optional<Stmt> search_;
  std::optional<Stmt> fallback_;  // fallbacks of entities (recipes write theirs with the recipes)
};

}  // namespace

void emit_tables(Db& db, const EmitInput& in) { Writer(db, in).run(); }

namespace {

std::string sql_ident(std::string_view name);

// The tables only kbc reads (lint, generate, dump; base/schema.sql marks
// them 'runtime: left out, kbc only'): emptied in a runtime KB before the
// derive step, so nothing it stores can come from them, and dropped after
// it (drop_left_out_tables). kbq reads the normalised code facts
// (recipe_facts), never code_facts, no full-text index, and the compiled
// lexicon (lexicon_compiled), never the lexicon's rows.
void keep_runtime_tables(Db& db) {
  for (const auto& t : schema::kTables)
    if (t.kbc_only && t.kind != schema::TableKind::Shadow) db.exec("DELETE FROM " + sql_ident(t.name));
  // An older edition's copies of a release's rows: lint and generate read
  // them, kbq never does (query/kb/perf.cpp).
  db.exec("DELETE FROM perf_rows WHERE status = 'copy'");
}

// A runtime KB, once derived, holds no table base/schema.sql marks
// 'runtime: left out': those kbq never reads, and those the derive step
// compiles into values kbq reads in their place (recipe_launch and
// launch_sites into recipes_compiled, the small tables of the snapshot and
// the labels into rows_compiled, the lexicon into lexicon_compiled). Each
// table kbq opens costs every answer the parse of its CREATE text.

void drop_left_out_tables(Db& db) {
  for (const auto& t : schema::kTables)
    if (!t.runtime && t.kind != schema::TableKind::Shadow)  // a virtual table drops its shadow tables
      db.exec("DROP TABLE " + sql_ident(t.name));
}

}  // namespace

void write_kb_file(const std::string& path, const std::function<void(Db&)>& fill, KbContents contents, const KbDerive& derive) {
  namespace fs = std::filesystem;
  // Only a regular file or a new path is replaced: never a device (kbc run
  // as root once replaced /dev/full with a regular file), a FIFO, a folder,
  // or a link (the rename would replace the link, not write where it points).
  if (const std::string problem = output_file_problem(path); !problem.empty()) throw std::runtime_error("it " + problem);
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  // A new file with a unique name beside the target (mkstemp: created
  // exclusively, never through a planted link), renamed over it at the end.
  std::optional<SignalCleanup> cleanup;  // a SIGTERM or Ctrl-C leaves no FILE.tmp.XXXXXX
  const std::string tmp = make_temp_beside(path, &cleanup);
  try {
    {
      Db db(tmp, Db::Mode::ReadWriteCreate);
      db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA page_size = 4096;");
      db.exec("BEGIN");
      fill(db);
      kbq::dsl::store_compiled_lexicon(db);
      {
        Stmt st(db, "INSERT INTO meta(key, value) VALUES ('contents', ?)");
        for (const auto& [c, name] : kKbContentsNames)
          if (c == contents) st.bind(1, name).run();
      }
      if (contents == KbContents::Runtime) keep_runtime_tables(db);
      db.exec("COMMIT");
      // kbq refuses a --kb file past the limits of what a KB may hold
      // (base/limits.hpp): kbc never writes one.
      const auto within_limits = [&db] {
        if (const std::string problem = kb_content_problem(db); !problem.empty())
          throw std::runtime_error("it would pass a limit of what kbq reads: " + problem);
      };
      if (derive) {
        // Checked first as well: the derive step stores query results of
        // the tables (rows_compiled) and answers from them.
        within_limits();
        derive(db, tmp);
      }
      if (contents == KbContents::Runtime) {
        drop_left_out_tables(db);
        db.exec("VACUUM");
      } else {
        db.exec("INSERT INTO search(search) VALUES ('optimize')");
      }
      within_limits();
    }
    // Make the new file durable before it replaces the old one.
    if (FILE* f = std::fopen(tmp.c_str(), "rb")) {
      ::fsync(fileno(f));
      std::fclose(f);
    }
    // Checked again just before: the target may have changed meanwhile.
    if (const std::string problem = output_file_problem(path); !problem.empty()) throw std::runtime_error("it " + problem);
    fs::rename(tmp, target);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

namespace {

// A text value as an SQL literal: quotes doubled. A value holding a NUL
// byte or a control character is written as the cast of its bytes in hex,
// so the dump stays one line per row and reads back byte for byte (a NUL
// inside a quoted literal ends the statement for most SQL readers).
std::string sql_quote(std::string_view s) {
  if (find_control(s)) {
    static const char* hex = "0123456789ABCDEF";
    std::string out = "CAST(X'";
    for (char c : s) {
      out += hex[static_cast<unsigned char>(c) >> 4];
      out += hex[static_cast<unsigned char>(c) & 15];
    }
    return out + "' AS TEXT)";
  }
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "''";
    else
      out += c;
  }
  return out + "'";
}

// A table name as an SQL identifier: double quotes doubled.
std::string sql_ident(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Refuses a KB of another schema version (the dump would mislabel it).
void check_schema_version(Db& db) {
  Stmt v(db, "PRAGMA user_version");
  const long long version = v.step() ? v.integer(0) : 0;
  if (version != kSchemaVersion)
    throw std::runtime_error("knowledge base has schema version " + std::to_string(version) + ", this kbc writes version " +
                             std::to_string(kSchemaVersion) + " (rebuild it with kbc build)");
}

// The tables a dump holds, by name: every table but SQLite's own and the
// full-text index's shadow tables.
std::vector<std::string> dumped_tables(Db& db) {
  std::vector<std::string> tables;
  // Not dumped: the full-text index's own tables, the code facts as kbq
  // reads them (recipe_facts and its dictionaries: code_facts again, in
  // another form; the dump holds code_facts), the compiled lexicon (the
  // lexicon table again, built ready to use; the dump holds the rows) and
  // the compiled estimator's tables (perf_rows, perf_fit and the small
  // tables again), the compiled recipes (recipes, recipe_launch and
  // launch_sites again) and the compiled rows (the small tables' again).
  Stmt st(db,
          "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
          "AND name NOT LIKE 'search_%' AND name NOT IN ('recipe_facts', 'fact_targets', 'fact_fields', 'fact_values', 'code_files', "
          "'lexicon_compiled', 'perf_compiled', 'recipes_compiled', 'rows_compiled') ORDER BY name");
  while (st.step()) tables.push_back(st.text(0));
  return tables;
}

// "1, 2, ..., n": every column of a table, the order that makes a dump
// deterministic whatever the insertion order.
std::string all_columns(Db& db, const std::string& ident) {
  int ncols = 0;
  {
    Stmt probe(db, "SELECT * FROM " + ident + " LIMIT 0");
    ncols = probe.columns();
  }
  std::string order;
  for (int i = 1; i <= ncols; ++i) order += (i > 1 ? ", " : "") + std::to_string(i);
  return order;
}

// The current row as an SQL INSERT statement.
std::string sql_insert(const std::string& ident, const Stmt& st) {
  std::string out = "INSERT INTO " + ident + " VALUES (";
  for (int c = 0; c < st.columns(); ++c) {
    if (c) out += ", ";
    switch (st.type(c)) {
      case SQLITE_NULL:
        out += "NULL";
        break;
      case SQLITE_INTEGER:
        out += std::to_string(st.integer(c));
        break;
      case SQLITE_FLOAT: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", st.real(c));
        out += buf;
        break;
      }
      case SQLITE_BLOB: {
        static const char* hex = "0123456789ABCDEF";
        out += "X'";
        for (char ch : st.view(c)) {
          out += hex[static_cast<unsigned char>(ch) >> 4];
          out += hex[static_cast<unsigned char>(ch) & 15];
        }
        out += "'";
        break;
      }
      default:
        out += sql_quote(st.view(c));
    }
  }
  return out + ");\n";
}

// A name (a table's, a column's) as a JSON key.
void append_json_key(std::string& out, std::string_view indent, const std::string& table, std::string_view name) {
  out += indent;
  if (!append_json_string(name, out)) throw KbValueError(table, "?", "a name", "text that is not UTF-8 (JSON cannot hold it)");
  out += ": ";
}

// The current row as a JSON object, column name → value, appended to `out`
// where nlohmann::json's dump(1) puts an element of a table's array (two
// spaces in, its members three), so that the whole dump is written as it
// goes instead of built as one document. A blob is {"blob": "<hex>"};
// text that is not UTF-8 cannot be JSON and is an error naming it.
void append_json_row(std::string& out, const std::string& table, const Stmt& st) {
  if (st.columns() == 0) {
    out += "  {}";
    return;
  }
  out += "  {\n";
  for (int c = 0; c < st.columns(); ++c) {
    if (c) out += ",\n";
    const char* name = st.name(c);
    append_json_key(out, "   ", table, name ? std::string_view(name) : std::string_view());
    switch (st.type(c)) {
      case SQLITE_NULL:
        out += "null";
        break;
      case SQLITE_INTEGER:
        out += std::to_string(st.integer(c));
        break;
      case SQLITE_FLOAT:
        out += json(st.real(c)).dump();  // nlohmann's shortest form, and null for what JSON lacks
        break;
      case SQLITE_BLOB: {
        static const char* hex = "0123456789abcdef";
        out += "{\n    \"blob\": \"";
        for (char ch : st.view(c)) {
          out += hex[static_cast<unsigned char>(ch) >> 4];
          out += hex[static_cast<unsigned char>(ch) & 15];
        }
        out += "\"\n   }";
        break;
      }
      default:
        if (!append_json_string(st.view(c), out))
          throw KbValueError(table, name ? name : "?", "a row", "text that is not UTF-8 (JSON cannot hold it)");
    }
  }
  out += "\n  }";
}

// Every row of a dumped table, in an order that makes a dump deterministic.
// Table names come from sqlite_schema (checked: the schema's own); quoting
// them as identifiers is the one place SQL text is assembled.
Stmt table_rows(Db& db, const std::string& ident) { return Stmt(db, "SELECT * FROM " + ident + " ORDER BY " + all_columns(db, ident)); }

// The tables as SQL INSERT statements, one per row.
std::string sql_dump(Db& db, const std::vector<std::string>& tables) {
  std::string out = "-- kbc dump: knowledge base, schema version " + std::to_string(kSchemaVersion) + "\n";
  for (const auto& t : tables) {
    const std::string ident = sql_ident(t);
    Stmt st = table_rows(db, ident);
    while (st.step()) out += sql_insert(ident, st);
  }
  return out;
}

// The tables as one JSON object, table name → array of rows, written as it
// is read in the layout of nlohmann::json's dump(1) (one member per line,
// one space per level), never held as a whole document (30 MB of it for
// the real KB).
std::string json_dump(Db& db, const std::vector<std::string>& tables) {
  if (tables.empty()) return "{}\n";
  std::string out = "{\n";
  for (const auto& t : tables) {
    if (&t != &tables.front()) out += ",\n";
    append_json_key(out, " ", t, t);
    Stmt st = table_rows(db, sql_ident(t));
    bool first_row = true;
    while (st.step()) {
      out += first_row ? "[\n" : ",\n";
      first_row = false;
      append_json_row(out, t, st);
    }
    out += first_row ? "[]" : "\n ]";
  }
  return out + "\n}\n";
}

}  // namespace

std::string dump_kb(const std::string& kb_path, DumpFormat format) {
  // A KB to dump may come from anyone: opened as kbq opens --kb files
  // (regular file, immutable, defensive, limits), version, structure and
  // pages checked first.
  Db db = Db::open_untrusted(kb_path);
  check_schema_version(db);
  if (std::string problem = kb_structure_problem(db); !problem.empty()) throw std::runtime_error(problem);
  if (std::string problem = kb_integrity_problem(db); !problem.empty()) throw std::runtime_error(problem);
  const auto tables = dumped_tables(db);
  return format == DumpFormat::Sql ? sql_dump(db, tables) : json_dump(db, tables);
}

}  // namespace kb
