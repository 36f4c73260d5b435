// The throughput estimator's tables as kbc stores them for answers
// (perf_compiled.bytes, docs/schema.md): what Kb::read_perf_tables reads
// with PerfRead::Estimate from perf_rows, perf_params, flops_arch,
// gpu_peaks, perf_vocab and perf_fit, in one value. An answer reads that one
// value, not 300 rows through SQLite (3.5 M instructions of an answer's
// 25 M, docs/performance.md). The GPUs' NVLink domains are not stored: the
// reader takes them from the snapshot every answer reads.
#pragma once

#include <string>
#include <string_view>

#include "query/perf/tables.hpp"

namespace kbq::perf {

// `t` must be an Estimate read (its listing-only fields are not stored).
std::string to_stored(const PerfTables& t);

// Throws std::runtime_error ("at byte N: what is wrong") on bytes this
// version did not write: another format, a count past the bytes left, a
// text too long or not UTF-8, a number out of its column's range.
PerfTables from_stored(std::string_view bytes);

}  // namespace kbq::perf
