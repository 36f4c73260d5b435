// The throughput estimator's inputs that depend on the KB alone, stored in
// the KB kbc writes (docs/schema.md: perf_rows.arch_class, .flops,
// .flops_error, and perf_fit), so that no answer computes them again:
// each measured row's architecture class and FLOPs per token (from its
// benchmark recipe's facts and its model's rows), the platforms' fitted
// achieved-MFU factors, and the architecture classes a BF16 pair bridges.
// Computed by kbq's own estimator (Engine::derive_perf) over the committed
// KB, so what kbq reads is what it would have computed. Then every input an
// answer's estimate reads, derivation included, compiled into one value
// (perf_compiled, Engine::compile_perf) that answers read in place of the
// rows.
#pragma once

#include <string>

#include "base/sqlite.hpp"

namespace kb {

// write_kb's derive step (compiler/pipeline.hpp): `db` is the KB being
// written, `file` the same file with its first transaction committed, read
// through an engine of its own, closed before `db` writes again.
void store_perf_derivation(Db& db, const std::string& file);

}  // namespace kb
