// The estimator's derived inputs, stored (see perf_fit.hpp).
#include "compiler/generate/perf_fit.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "base/kinds.hpp"
#include "base/stored_rows.hpp"
#include "base/value_ranges.hpp"
#include "query/kbq.hpp"

namespace kb {

namespace {

// kbc writes no value kbq would refuse (base/value_ranges.hpp).
template <typename Range, typename Value>
void check(const Range& r, Value v, const std::string& row) {
  if (std::string problem = range_problem(r, v); !problem.empty())
    throw std::runtime_error(std::string(r.table) + "." + std::string(r.column) + " of " + row + ": " + problem);
}

}  // namespace

void store_perf_derivation(Db& db, const std::string& file) {
  // The rows of the small tables every answer reads, and each language's
  // labels and cited texts, first: each step below opens an engine, whose
  // answers read them.
  for (const auto& [part, bytes] : kbq::Engine::compile_stored_rows(db.handle())) store_rows_part(db.handle(), part, bytes);
  // The recipes as answers read them, first: the derivation plans the
  // measured rows' benchmark recipes from them. Each chunk in its row,
  // numbered from 0. (An engine reads the file as it was when opened: one
  // for each step that reads what the step before wrote.)
  {
    const std::vector<std::string> chunks = kbq::Engine::open(file).compile_recipes();
    db.exec("BEGIN");
    db.exec("DELETE FROM recipes_compiled");
    Stmt chunk(db, "INSERT INTO recipes_compiled(chunk, bytes) VALUES (?, ?)");
    for (size_t i = 0; i < chunks.size(); ++i) chunk.bind(1, static_cast<long long>(i)).bind_blob(2, chunks[i]).run();
    db.exec("COMMIT");
  }
  const kbq::PerfDerivation d = kbq::Engine::open(file).derive_perf();
  for (const auto& r : d.rows)
    if (r.flops) check(real_range("perf_rows", "flops"), *r.flops, "row " + std::to_string(r.id));
  for (const auto& p : d.platforms) {
    if (p.log_factor) check(real_range("perf_fit", "log_factor"), *p.log_factor, p.platform);
    check(int_range("perf_fit", "pairs"), static_cast<long long>(p.pairs), p.platform);
  }
  db.exec("BEGIN");
  {
    Stmt row(db, "UPDATE perf_rows SET arch_class = ?, flops = ?, flops_error = ? WHERE id = ?");
    for (const auto& r : d.rows) {
      row.bind(1, r.arch_class);
      if (r.flops)
        row.bind(2, *r.flops);
      else
        row.bind_null(2);
      row.bind(3, r.flops_error).bind(4, r.id);
      row.run();
    }
  }
  {
    Stmt fit(db, "INSERT INTO perf_fit(kind, key, pairs, log_factor) VALUES (?, ?, ?, ?)");
    for (const auto& p : d.platforms) {
      fit.bind(1, kPerfFitPlatform).bind(2, p.platform).bind(3, static_cast<long long>(p.pairs));
      if (p.log_factor)
        fit.bind(4, *p.log_factor);
      else
        fit.bind_null(4);
      fit.run();
    }
    for (const auto& cls : d.bf16_bridged) {
      fit.bind(1, kPerfFitBridged).bind(2, cls).bind_null(3).bind_null(4);
      fit.run();
    }
  }
  db.exec("COMMIT");
  // What answers read of it all, compiled once the derivation is committed.
  const std::string bytes = kbq::Engine::open(file).compile_perf();
  db.exec("DELETE FROM perf_compiled");
  Stmt(db, "INSERT INTO perf_compiled(id, bytes) VALUES (1, ?)").bind_blob(1, bytes).run();
}

}  // namespace kb
