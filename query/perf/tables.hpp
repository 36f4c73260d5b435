// The KB's throughput tables as values (private to the engine): what the KB
// reader (query/kb/perf.cpp, Kb::perf_tables) loads once, for the throughput
// stage (query/perf/measured.hpp builds the estimator's inputs from it) and
// `kbq perf`. No database handle here: the stages compute from these values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "query/kb/snapshot.hpp"
#include "query/kbq.hpp"

namespace kbq::perf {

// One row of perf_rows (copies of an older edition left out), as stored.
struct PerfTableRow {
  long long id = 0;
  std::string file;  // the page (sources.path)
  int line = 0, col = 0;
  std::string edition, release;
  int release_order = 0;
  std::string task, model_written, model_key, recipe_model, variant, arch_override;
  std::string system, gpu, precision, precision_written;
  long long gpus = 0, gbs = 0, mbs = 0, seq = 0;
  std::optional<long long> fsdp, tp, pp, cp, vp, ep, ga;
  double tokens = 0, tflops = 0;
  bool alternate = false;
  std::string note_kind;
  std::vector<std::string> notes;
  std::string status;           // current | superseded
  long long superseded_by = 0;  // 0 when current
  std::string recipe, arch_recipe;
  // What kbc derived from the row (compiler/generate/perf_fit.cpp; read only
  // with PerfRead::Derived and Estimate): its architecture class and FLOPs per token, or
  // why they cannot be counted.
  std::string arch_class;
  std::optional<double> flops;
  std::string flops_error;
};

// What gives a row's model its architecture: the benchmark recipe's facts
// and the model's rows (models.tsv, model-arch.tsv; the model-arch facts of
// a model without a models.tsv row too).
struct PerfArchSource {
  std::optional<Recipe> recipe;  // empty when the KB has no such recipe
  CodeFacts facts;               // the recipe's facts that give its architecture and FLOPs mode (perf::arch_source_reads)
  std::optional<Model> model;
  std::map<std::string, std::string, std::less<>> arch;  // model-arch.tsv facts of its model key
};

// The recipe facts a PerfArchSource holds: those architecture_of and
// flops_mode read (query/perf/measured.cpp, where they are named).
bool arch_source_reads(std::string_view field);

// A current row's layout the code's recipe no longer sets (perf_drift).
struct PerfDriftRow {
  std::string field, table_value, code_value, code_at, note, recipe;
};

// How the rows' FLOPs and the platform factors are had: what kbc derived
// and stored (kbq), or computed again from each row's benchmark recipe and
// model (kbc, which stores them; the tests, which compare both). Estimate
// is Derived without what only `kbq perf` lists (a row's column, edition,
// FSDP and GA, notes, status and successor, recipes, why its FLOPs cannot be
// counted; the drift, the published-FLOPs exceptions, the models' display
// names): what an answer's throughput reads.
enum class PerfRead : std::uint8_t { Derived, Sources, Estimate };

// The fit kbc stored (perf_fit): platform → pairs and log factor (empty: none).
struct PerfFitRow {
  int pairs = 0;
  std::optional<double> log_factor;
};

struct PerfTables {
  PerfRead read = PerfRead::Derived;
  std::vector<PerfTableRow> rows;                                                     // by id
  std::map<std::string, PerfArchSource> archs;                                        // by arch_recipe (PerfRead::Sources)
  std::map<std::string, PerfFitRow> platforms;                                        // perf_fit (PerfRead::Derived, Estimate)
  std::set<std::string> bf16_bridged;                                                 // perf_fit (PerfRead::Derived, Estimate)
  std::map<std::string, std::string> params;                                          // perf_params
  std::map<std::string, std::map<std::string, std::string, std::less<>>> flops_arch;  // model → field → value
  std::map<std::pair<std::string, std::string>, double> peaks;                        // (gpu, precision class) → TFLOP/s
  std::map<std::string, std::string> precision_class;                                 // precision → class
  std::map<std::string, long long> nvlink;                                            // gpu → NVLink domain
  std::map<std::pair<std::string, std::string>, std::string> exceptions;              // (model, release) → cause
  std::map<long long, std::vector<PerfDriftRow>> drift;                               // row id → its drift
  std::map<std::string, std::string> model_display;                                   // model key → display name
};

}  // namespace kbq::perf
