// Emit for the performance pages (see perf.hpp): the perf_* tables and the
// copies of the estimator's data files, in the write transaction of the KB
// (compiler/pipeline.cpp write_kb). Rows are written in a fixed order, so a
// KB's dump is the same for the same sources.
#include <algorithm>
#include <map>
#include <set>

#include "base/text.hpp"
#include "compiler/perf/perf.hpp"

namespace kb {

namespace {

long long source_id(Db& db, const std::string& path) {
  Stmt st(db, "SELECT id FROM sources WHERE path = ?");
  st.bind(1, path);
  if (!st.step()) throw std::runtime_error("perf page " + path + " is not among the KB's sources");
  return st.integer(0);
}

}  // namespace

void emit_perf(Db& db, const PerfCompiled& p, const PerfData& d) {
  std::map<std::string, long long> sources;
  for (const auto& [path, sha] : p.files) sources[path] = source_id(db, path);
  // Releases in order, 1 = oldest.
  std::set<std::vector<int>> releases;
  for (const auto& r : p.rows) releases.insert(r.release_key);
  std::map<std::vector<int>, long long> release_order;
  for (const auto& k : releases) release_order.emplace(k, static_cast<long long>(release_order.size()) + 1);

  Stmt rows(db,
            "INSERT INTO perf_rows(id, source_id, line, col, edition, release, release_order, task, model_written, model_key, "
            "recipe_model, variant, arch_override, system, gpu, gpus, precision, precision_written, gbs, mbs, seq, fsdp, tp, pp, "
            "cp, vp, ep, ga, tokens_per_gpu, tflops_per_gpu, alternate, note_kind, notes, status, superseded_by, recipe, "
            "arch_recipe) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (size_t i = 0; i < p.rows.size(); ++i) {
    const PerfRow& r = p.rows[i];
    const long long id = static_cast<long long>(i) + 1;
    int c = 0;
    auto put = [&](const auto& v) { rows.bind(++c, v); };
    put(id);
    put(sources.at(r.file));
    put(r.line);
    put(r.col);
    put(r.commit);
    put(r.release);
    put(release_order.at(r.release_key));
    for (const std::string* t : {&r.task, &r.model_written, &r.model_key, &r.recipe_model, &r.variant, &r.arch_override, &r.system, &r.gpu})
      put(*t);
    put(r.gpus);
    put(r.precision);
    put(r.precision_written);
    put(r.gbs);
    put(r.mbs);
    put(r.seq);
    for (const auto* v : {&r.fsdp, &r.tp, &r.pp, &r.cp, &r.vp, &r.ep, &r.ga}) rows.bind_opt(++c, *v);
    put(r.tokens);
    put(r.tflops);
    put(r.alternate ? 1 : 0);
    put(r.note_kind);
    put(join(r.notes, "\n"));
    put(std::string(to_string(r.status)));
    if (r.status == PerfStatus::Current)
      rows.bind_null(++c);
    else
      put(static_cast<long long>(r.winner) + 1);
    put(r.recipe);
    put(r.arch_recipe);
    rows.run();
  }
  Stmt conflicts(db, "INSERT INTO perf_conflicts(row_id, newer_row_id, field, value, newer_value) VALUES (?,?,?,?,?)");
  for (const auto& k : p.conflicts)
    conflicts.bind_all(static_cast<long long>(k.older) + 1, static_cast<long long>(k.newer) + 1, k.field, k.older_value, k.newer_value)
        .run();
  Stmt drift(db, "INSERT INTO perf_drift(row_id, field, table_value, code_value, code_at, note) VALUES (?,?,?,?,?,?)");
  for (const auto& x : p.drift)
    drift.bind_all(static_cast<long long>(x.row) + 1, x.field, x.table_value, x.code_value, x.code_at, x.note).run();

  Stmt peaks(db, "INSERT INTO gpu_peaks(gpu_key, precision, tflops, source) VALUES (?,?,?,?)");
  for (const auto& row : d.peaks.rows) {
    double tflops = 0;
    try {
      tflops = std::stod(d.peaks.get(row, "tflops"));
    } catch (...) {
      throw std::runtime_error(d.peaks.path + ":" + std::to_string(row.line) + ": tflops is not a number");
    }
    peaks.bind_all(d.peaks.get(row, "gpu_key"), d.peaks.get(row, "precision"), tflops, d.peaks.get(row, "source")).run();
  }
  auto copy = [&](const char* sql, const TsvTable& t, std::initializer_list<const char*> cols) {
    Stmt st(db, sql);
    for (const auto& row : t.rows) {
      int c = 1;
      for (const char* col : cols) st.bind(c++, t.get(row, col));
      st.run();
    }
  };
  copy("INSERT INTO perf_params(key, value, source) VALUES (?,?,?)", d.params, {"key", "value", "source"});
  copy("INSERT INTO flops_arch(model_key, field, value, source) VALUES (?,?,?,?)", d.flops_arch, {"model_key", "field", "value", "source"});
  copy("INSERT INTO perf_flops_exceptions(model_key, release, cause, source) VALUES (?,?,?,?)", d.exceptions,
       {"model_key", "release", "cause", "source"});
  copy("INSERT INTO perf_vocab(kind, word, value, source) VALUES (?,?,?,?)", d.vocab, {"kind", "word", "value", "source"});
}

}  // namespace kb
