// The ranges the numeric values of a KB must fall in: one table, read by
// both sides of the KB. kbq checks each value when it reads it
// (base/checked.hpp kb_int, query/kb/kb.cpp) and refuses a file that
// breaks one; kbc checks the same ranges when it builds the values, at the
// source line and column they come from (compiler/code/code.cpp for the
// code facts, compiler/pipeline.cpp for the data tables,
// compiler/extract/extract.cpp for quick-reference GPU cells), so a bad
// source line fails the build, never the shipped binary. The bounds
// themselves are limits of base/limits.hpp; docs/security.md lists them.
#pragma once

#include <string>
#include <string_view>

#include "base/limits.hpp"

namespace kb {

// A whole-number column: lo .. hi, NULL allowed or not.
struct IntRange {
  std::string_view table, column;
  long long lo = 0, hi = 0;
  bool null_ok = false;  // NULL reads as "not stated" (kbq: std::nullopt, or 0 through coalesce)
};

// A real-number column: lo <= v < below.
struct RealRange {
  std::string_view table, column;
  double lo = 0, below = 0;
};

namespace ranges {
using limits::kMaxGpus;
using limits::kMaxLine;
using limits::kMaxModelCount;
using limits::kMaxParallel;
using limits::kMaxPerfPairs;
using limits::kMaxSeqLen;

inline constexpr IntRange kInt[] = {
    // recipes: a recipe's layout and batch (code facts), its GPU counts.
    {"recipes", "tp", 1, kMaxParallel, true},
    {"recipes", "pp", 1, kMaxParallel, true},
    {"recipes", "vp", 1, kMaxParallel, true},
    {"recipes", "cp", 1, kMaxParallel, true},
    {"recipes", "ep", 1, kMaxParallel, true},
    {"recipes", "etp", 1, kMaxParallel, true},
    {"recipes", "mbs", 1, kMaxParallel, true},
    {"recipes", "seq_len", 1, kMaxSeqLen, true},
    {"recipes", "gbs", 1, kMaxSeqLen, true},
    {"recipes", "native_gpus", 1, kMaxGpus, true},
    {"recipes", "min_gpus", 1, kMaxGpus, true},
    // models (data/models.tsv, models-extra.tsv): kbq reads NULL as 0.
    {"models", "num_layers", 0, kMaxModelCount, true},
    {"models", "num_attention_heads", 0, kMaxModelCount, true},
    {"models", "num_key_value_heads", 0, kMaxModelCount, true},
    {"models", "num_experts", 0, kMaxModelCount, true},
    {"models", "experts_per_token", 0, kMaxModelCount, true},
    {"models", "max_position_embeddings", 0, kMaxSeqLen, true},
    // gpus (data/gpus.tsv).
    {"gpus", "nvlink_domain_size", 1, kMaxGpus, false},
    {"gpus", "gpus_per_node", 1, kMaxGpus, false},
    // What kbc derives from the documents.
    {"quick_ref_picks", "gpus", 0, kMaxGpus, false},
    {"entity_texts", "line", 0, kMaxLine, false},
    {"entity_texts", "revision", 0, kMaxLine, false},
    // What kbc derives for the throughput estimate (compiler/generate/perf_fit.cpp).
    {"perf_fit", "pairs", 0, kMaxPerfPairs, true},
};

inline constexpr RealRange kReal[] = {
    {"models", "total_params_b", 0, 1e7},
    {"models", "active_params_b", 0, 1e7},
    {"gpus", "memory_gb", 0, 1e6},
    {"gpus", "bf16_dense_tflops", 0, 1e9},
    // What kbc derives for the throughput estimate: FLOPs per token, and a
    // platform factor's log (the factors are within e^±50 of each other).
    {"perf_rows", "flops", 0, 1e18},
    {"perf_fit", "log_factor", -50, 50},
};
}  // namespace ranges

// The range of a column, found when the program is compiled: a name that
// is not in the table does not compile.
consteval const IntRange& int_range(std::string_view table, std::string_view column) {
  for (const auto& r : ranges::kInt)
    if (r.table == table && r.column == column) return r;
  throw "no IntRange for this column in base/value_ranges.hpp";
}
consteval const RealRange& real_range(std::string_view table, std::string_view column) {
  for (const auto& r : ranges::kReal)
    if (r.table == table && r.column == column) return r;
  throw "no RealRange for this column in base/value_ranges.hpp";
}

// Whether `v` is in the range (a call a read value costs only when it is not).
inline bool in_range(const IntRange& r, long long v) { return v >= r.lo && v <= r.hi; }
// What is wrong with `v` for the range, or "" when it is in it: the words
// kbq's KbValueError uses ("0 is out of range (1 to 1048576)").
std::string range_problem(const IntRange& r, long long v);
std::string range_problem(const RealRange& r, double v);

// Why a cell of a source or data file cannot be the column's value, or ""
// when it can: empty (when NULL is allowed), or a whole number (a real
// number) in the range. Also the value, when it is one.
std::string int_cell_problem(const IntRange& r, std::string_view cell, long long* value = nullptr);
std::string real_cell_problem(const RealRange& r, std::string_view cell);

}  // namespace kb
