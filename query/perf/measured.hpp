// The throughput estimator's inputs, computed from the KB's throughput
// tables as values (tables.hpp, loaded by the KB reader): NVIDIA's measured
// rows with our FLOPs per token for each (the architecture of the benchmark
// recipe that runs the row, through the memory model's mapping of the KB's
// facts, and data/flops-arch.tsv), the estimator's parameters (perf_params,
// gpu_peaks, perf_vocab's precision classes, the GPUs' NVLink domains) and
// the platform factors fitted on the rows. Pure: no database handle.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "query/memory/memory.hpp"
#include "query/perf/estimate.hpp"
#include "query/perf/flops.hpp"
#include "query/perf/tables.hpp"

namespace kbq::perf {

// One row of perf_rows (copies of an older edition left out), as the
// estimator needs it (`m`) and as `kbq perf` shows it.
struct MeasuredRow {
  Measurement m;
  std::string model_written, system, precision_written, status, edition, recipe, note_kind;
  std::vector<std::string> notes;
  std::optional<long long> fsdp, ga, tp, pp, cp, vp, ep;  // as the table says (empty: n/a)
  long long superseded_by = 0;                            // the current row's id (0 when current)
  int col = 0;
  bool alternate = false;
  std::string flops_error;      // why our FLOPs could not be counted
  std::string flops_exception;  // perf_flops_exceptions: why the published TFLOP/s count differently
};

// Everything the estimator reads, loaded once per KB.
struct PerfSet {
  std::vector<MeasuredRow> rows;          // by id
  std::vector<Measurement> measurements;  // rows[i].m, in the same order
  Params params;
  PlatformFactors factors;
  std::string error;  // the parameters could not be read: no estimate at all
  // data/flops-arch.tsv, by model
  std::map<std::string, std::map<std::string, std::string, std::less<>>> flops_arch;
  // data/perf-params.tsv, raw (the LoRA rule of the FLOPs count, the vocabulary divisor)
  std::map<std::string, std::string> raw_params;
};

// By value: a caller done with the tables moves them in (their rows'
// strings are moved into the set), one that still lists them copies.
PerfSet build_perf(PerfTables tables);

// The FLOPs mode of a recipe's facts: LoRA counted at 2/3 for the
// checkpoints and datasets data/perf-params.tsv names (the code's rule).
FlopsMode flops_mode(const PerfSet& set, const CodeFacts& facts);

// Our FLOPs per token of a model: its architecture (already mapped from the
// KB's facts), its flops-arch.tsv facts and a measured row's qualifier.
std::variant<double, std::string> flops_of(const PerfSet& set, const std::string& model_key, const memory::Architecture& arch,
                                           long long seq, long long tp, FlopsMode mode, const std::string& arch_override = {});

// The architecture class the estimator compares models by: dense, moe,
// hybrid (Mamba or Gated DeltaNet blocks), hybrid-moe.
std::string arch_class(const memory::Architecture& a);

// The architecture of a recipe's model from its facts and model rows (the
// memory model's mapping); nullopt with `why` when it cannot be mapped.
std::optional<memory::Architecture> architecture_of(const PerfArchSource& a, std::string& why);

}  // namespace kbq::perf
