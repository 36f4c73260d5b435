// The KB reader's part for throughput (Kb::perf_tables, kb.hpp): NVIDIA's
// measured rows and the estimator's data, read once into values
// (query/perf/tables.hpp). Every value is bound as a parameter.
#include <algorithm>
#include <array>

#include "base/checked.hpp"
#include "base/kinds.hpp"
#include "base/limits.hpp"
#include "base/stored_bytes.hpp"
#include "base/text.hpp"
#include "base/value_ranges.hpp"
#include "query/kb/kb.hpp"
#include "query/perf/stored.hpp"

namespace kbq {

// The GPUs' NVLink domains, from the snapshot every answer reads (not
// stored with the throughput tables).
void Kb::add_nvlink(perf::PerfTables& t) {
  for (const auto& g : snapshot().gpus) t.nvlink[g.key] = g.nvlink;
}

std::unique_ptr<perf::PerfTables> Kb::perf_estimate_tables() {
  kb::Stmt st(db_, "SELECT bytes FROM perf_compiled WHERE id = 1");
  if (!st.step())
    throw kb::KbValueError("perf_compiled", "bytes", "row 1", "missing: kbc writes the throughput estimator's tables in every KB");
  // Its size is bounded when a --kb file is opened (kKbColumnLimits), and
  // kbc checked the embedded one against the same limits.
  std::unique_ptr<perf::PerfTables> tables;
  try {
    tables = std::make_unique<perf::PerfTables>(perf::from_stored(st.blob(0)));
  } catch (const kb::stored::Error& e) {
    throw kb::KbValueError("perf_compiled", "bytes", "row 1", e.what());
  }
  add_nvlink(*tables);
  return tables;
}

std::unique_ptr<perf::PerfTables> Kb::perf_estimate_rows() { return read_perf_tables(perf::PerfRead::Estimate); }

std::unique_ptr<perf::PerfTables> Kb::perf_listing_tables() { return read_perf_tables(perf::PerfRead::Derived); }

std::unique_ptr<perf::PerfTables> Kb::perf_sources() { return read_perf_tables(perf::PerfRead::Sources); }

namespace {

// The columns of a perf_rows row, in PerfTableRow's order; those only
// `kbq perf` lists read as NULL for the estimator (PerfRead::Estimate).
struct RowColumn {
  const char* expr;
  bool listing_only;
};
constexpr RowColumn kRowColumns[] = {
    {"r.id", false},
    {"s.path", false},
    {"r.line", false},
    {"r.col", true},
    {"r.edition", true},
    {"r.release", false},
    {"r.release_order", false},
    {"r.task", false},
    {"r.model_written", false},
    {"r.model_key", false},
    {"r.recipe_model", true},
    {"r.variant", false},
    {"r.arch_override", false},
    {"r.system", false},
    {"r.gpu", false},
    {"r.precision", false},
    {"r.precision_written", false},
    {"r.gpus", false},
    {"r.gbs", false},
    {"r.mbs", false},
    {"r.seq", false},
    {"r.fsdp", true},
    {"r.tp", false},
    {"r.pp", false},
    {"r.cp", false},
    {"r.vp", false},
    {"r.ep", false},
    {"r.ga", true},
    {"r.tokens_per_gpu", false},
    {"r.tflops_per_gpu", false},
    {"r.alternate", true},
    {"r.note_kind", false},
    {"r.notes", true},
    {"r.status", true},
    {"coalesce(r.superseded_by, 0)", true},
    {"r.recipe", true},
    {"r.arch_recipe", true},
    {"r.arch_class", false},
    {"r.flops", false},
    {"r.flops_error", true},
};

// Whether a read selects a column of kRowColumns: the estimator's leaves out
// those only `kbq perf` lists, and reads them as SQL NULL would read ("",
// 0, none). Selecting them as NULL cost a column each, in the statement and
// in every row.
bool selects(const RowColumn& col, perf::PerfRead read) { return !(col.listing_only && read == perf::PerfRead::Estimate); }

std::string rows_query(perf::PerfRead read) {
  std::string sql = "SELECT ";
  bool first = true;
  for (const auto& col : kRowColumns) {
    if (!selects(col, read)) continue;
    if (!first) sql += ", ";
    first = false;
    sql += col.expr;
  }
  return sql + " FROM perf_rows r JOIN sources s ON s.id = r.source_id WHERE r.status != 'copy' ORDER BY r.id";
}

// A row of rows_query read by kRowColumns' index: a column left out reads
// as NULL.
class RowReader {
 public:
  RowReader(const kb::Stmt& st, perf::PerfRead read) : st_(st) {
    int at = 0;
    for (size_t i = 0; i < std::size(kRowColumns); ++i) at_[i] = selects(kRowColumns[i], read) ? at++ : -1;
  }
  bool is_null(int c) const { return at_[idx(c)] < 0 || st_.is_null(at_[idx(c)]); }
  std::string text(int c) const { return at_[idx(c)] < 0 ? std::string() : st_.text(at_[idx(c)]); }
  long long integer(int c) const { return at_[idx(c)] < 0 ? 0 : st_.integer(at_[idx(c)]); }
  double real(int c) const { return at_[idx(c)] < 0 ? 0.0 : st_.real(at_[idx(c)]); }
  std::optional<long long> opt(int c) const { return is_null(c) ? std::nullopt : std::optional<long long>(st_.integer(at_[idx(c)])); }

 private:
  static size_t idx(int c) { return static_cast<size_t>(c); }
  const kb::Stmt& st_;
  std::array<int, std::size(kRowColumns)> at_{};
};

}  // namespace

std::unique_ptr<perf::PerfTables> Kb::read_perf_tables(perf::PerfRead read) {
  auto tables = std::make_unique<perf::PerfTables>();
  perf::PerfTables& t = *tables;
  t.read = read;
  const bool derived = read != perf::PerfRead::Sources;
  const bool listing = read != perf::PerfRead::Estimate;
  {
    kb::Stmt st(db_, "SELECT key, value FROM perf_params ORDER BY key");
    while (st.step()) t.params[st.text(0)] = st.text(1);
  }
  {
    kb::Stmt st(db_, "SELECT model_key, field, value FROM flops_arch ORDER BY model_key, field");
    while (st.step()) t.flops_arch[st.text(0)][st.text(1)] = st.text(2);
  }
  {
    kb::Stmt st(db_, "SELECT gpu_key, precision, tflops FROM gpu_peaks ORDER BY gpu_key, precision");
    while (st.step()) t.peaks[{st.text(0), st.text(1)}] = st.real(2);
  }
  {
    kb::Stmt st(db_, "SELECT word, value FROM perf_vocab WHERE kind = 'precision_class' ORDER BY word");
    while (st.step()) t.precision_class[st.text(0)] = st.text(1);
  }
  add_nvlink(t);
  if (listing) {
    kb::Stmt st(db_, "SELECT model_key, release, cause FROM perf_flops_exceptions ORDER BY model_key, release");
    while (st.step()) t.exceptions[{st.text(0), st.text(1)}] = st.text(2);
  }
  if (listing) {
    kb::Stmt st(db_,
                "SELECT d.row_id, d.field, d.table_value, d.code_value, d.code_at, d.note, r.recipe FROM perf_drift d "
                "JOIN perf_rows r ON r.id = d.row_id ORDER BY d.row_id, d.field");
    while (st.step()) t.drift[st.integer(0)].push_back({st.text(1), st.text(2), st.text(3), st.text(4), st.text(5), st.text(6)});
  }
  {
    kb::Stmt count(db_, "SELECT count(*) FROM perf_rows");  // at least the rows read: each is built in place
    if (count.step()) t.rows.reserve(static_cast<size_t>(std::clamp<long long>(count.integer(0), 0, kb::limits::kMaxReservedRows)));
  }
  kb::Stmt st(db_, rows_query(read));
  const RowReader row(st, read);
  while (st.step()) {
    perf::PerfTableRow& r = t.rows.emplace_back();
    int c = 0;
    r.id = row.integer(c++);
    r.file = row.text(c++);
    r.line = static_cast<int>(row.integer(c++));
    r.col = static_cast<int>(row.integer(c++));
    r.edition = row.text(c++);
    r.release = row.text(c++);
    r.release_order = static_cast<int>(row.integer(c++));
    for (std::string* s : {&r.task, &r.model_written, &r.model_key, &r.recipe_model, &r.variant, &r.arch_override, &r.system, &r.gpu,
                           &r.precision, &r.precision_written})
      *s = row.text(c++);
    r.gpus = row.integer(c++);
    r.gbs = row.integer(c++);
    r.mbs = row.integer(c++);
    r.seq = row.integer(c++);
    for (auto* v : {&r.fsdp, &r.tp, &r.pp, &r.cp, &r.vp, &r.ep, &r.ga}) *v = row.opt(c++);
    r.tokens = row.real(c++);
    r.tflops = row.real(c++);
    r.alternate = row.integer(c++) != 0;
    r.note_kind = row.text(c++);
    for (const auto& n : kb::split(row.text(c++), '\n'))
      if (!n.empty()) r.notes.push_back(n);
    r.status = row.text(c++);
    r.superseded_by = row.integer(c++);
    r.recipe = row.text(c++);
    r.arch_recipe = row.text(c++);
    if (listing && !t.model_display.count(r.model_key)) {
      const ModelBrief* m = snapshot().model(r.model_key);
      t.model_display[r.model_key] = m ? m->display : std::string();
    }
    if (derived) {
      r.arch_class = row.text(c++);
      if (!row.is_null(c)) {
        r.flops = row.real(c);
        if (const std::string problem = kb::range_problem(kb::real_range("perf_rows", "flops"), *r.flops); !problem.empty())
          throw kb::KbValueError("perf_rows", "flops", "row " + std::to_string(r.id), problem);
      }
      ++c;
      r.flops_error = row.text(c++);
    } else if (!t.archs.count(r.arch_recipe)) {
      perf::PerfArchSource a;
      a.recipe = recipe(r.arch_recipe, RecipeKind::Benchmark);
      if (a.recipe) {
        a.facts = facts(a.recipe->target, perf::arch_source_reads);
        if (const Model* m = model(a.recipe->model_key)) {
          a.model = *m;
          a.arch = m->arch;
        } else if (!a.recipe->model_key.empty()) {
          // A model without a models.tsv row may have model-arch.tsv facts under its recipe-name key (docs/memory.md, section 8).
          kb::Stmt arch(db_, "SELECT field, value FROM model_arch WHERE model_key = ? ORDER BY field");
          arch.bind(1, a.recipe->model_key);
          while (arch.step()) a.arch[arch.text(0)] = arch.text(1);
        }
      }
      t.archs.emplace(r.arch_recipe, std::move(a));
    }
  }
  if (derived) {
    kb::Stmt fit(db_, "SELECT kind, key, coalesce(pairs, 0), log_factor FROM perf_fit ORDER BY kind, key");
    while (fit.step()) {
      const std::string kind = fit.text(0);
      if (kind == kb::kPerfFitBridged) {
        t.bf16_bridged.insert(fit.text(1));
        continue;
      }
      if (kind != kb::kPerfFitPlatform) continue;
      perf::PerfFitRow& p = t.platforms[fit.text(1)];
      p.pairs = static_cast<int>(kb::kb_int(fit, 2, kb::int_range("perf_fit", "pairs"), 1));
      if (fit.is_null(3)) continue;
      p.log_factor = fit.real(3);
      if (const std::string problem = kb::range_problem(kb::real_range("perf_fit", "log_factor"), *p.log_factor); !problem.empty())
        throw kb::KbValueError("perf_fit", "log_factor", "'" + fit.text(1) + "'", problem);
    }
  }
  return tables;
}

}  // namespace kbq
