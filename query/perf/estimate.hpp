// The throughput estimator: expected tokens/s/GPU (and model TFLOP/s/GPU,
// step time) of a training configuration, from NVIDIA's measured rows
// (compiler/perf → the KB's perf_rows). docs/throughput.md describes the
// method and its validation.
//
//   measured   the configuration (model, task, GPU type and count,
//              precision, sequence) was measured with the same layout: the
//              row of the release nearest the target's (the newest by
//              default), cited by file:line;
//   estimated  achieved MFU (model FLOP/s over the platform's peak, measured
//              as tokens/s x FLOPs per token) transferred from the nearest
//              measurements: the same model on another layout, GPU count,
//              GPU type or precision, else (same task, same architecture
//              class) the nearest other models; adjusted for
//                - the platform (GPU type x precision): its peak
//                  (data/gpu-peaks.tsv) and its achieved-MFU factor, fitted
//                  on pairs of measurements that differ only in platform;
//                - the pipeline bubble (PP-1)/(VP x m), m the micro batches
//                  per step and pipeline (the accumulation steps);
//                - context and expert parallelism through the data-parallel
//                  size they leave (hence m), and EP groups crossing the
//                  NVLink domain through the choice of the source row;
//              with an error band from the validation (data/perf-params.tsv);
//   none       nothing measured close enough (no FLOPs count, no
//              measurement of the task, no model of its architecture class),
//              with the reason.
// Pure: every input is a value (measurements, the target, the parameters);
// nothing here reads the KB (query/perf/measured.hpp builds the inputs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace kbq::perf {

// One measured row, with our FLOPs per token (query/perf/flops.hpp).
struct Measurement {
  long long id = 0;        // perf_rows.id
  std::string model_key;   // the KB's model
  std::string variant;     // a qualifier's label and FLOPs change ("" none): part of the model's identity
  std::string arch_class;  // architecture class (models.tsv arch: dense, moe, hybrid-ssm-moe, ...)
  std::string task;        // pretrain | sft | peft
  std::string gpu;         // GPU key
  std::string precision;   // bf16 | fp8cs | fp8mx | fp8sc | nvfp4
  long long gpus = 0, gbs = 0, mbs = 0, seq = 0;
  long long tp = 1, pp = 1, cp = 1, vp = 1, ep = 1;  // 1 where the table says n/a
  std::string release;                               // as written
  int release_order = 0;                             // 1 = oldest
  std::string file;                                  // kb-sources path of the page
  int line = 0;
  double tokens = 0;   // tokens / s / GPU
  double tflops = 0;   // model TFLOP / s / GPU as published
  double flops = 0;    // our FLOPs per token; 0 when the count cannot be made
  bool usable = true;  // false: a known regression (its footnote), never a source
};

// What to estimate.
struct Target {
  std::string model_key, variant, arch_class, task, gpu, precision;
  long long gpus = 0, gbs = 0, mbs = 1, seq = 0;
  long long tp = 1, pp = 1, cp = 1, vp = 1, ep = 1;
  bool layout_known = true;  // false: no layout given (any measured layout of the configuration counts as its own)
  double flops = 0;          // our FLOPs per token; 0 unknown
  std::string flops_error;   // why it is unknown
  int release_order = 0;     // the release to estimate for (0: the newest measured)
};

// The estimator's constants (data/perf-params.tsv) and the platforms' peaks
// (data/gpu-peaks.tsv through the precision classes of data/perf-vocab.tsv).
struct Params {
  std::map<std::string, double, std::less<>> peak;           // "gpu/precision" → dense TFLOP/s (precision as the rows spell it)
  std::map<std::string, long long> nvlink_domain;            // gpu → GPUs per NVLink domain (data/gpus.tsv)
  std::string reference_platform;                            // "gpu/precision" whose factor is 1
  double w_gpu = 0, w_gpu_fabric = 0, w_gpu_generation = 0;  // distance: another GPU type, across NVLink fabric kinds, across generations
  double w_precision = 0, w_precision_class = 0;             // another precision, of another class
  double w_gpus = 0, w_seq = 0, w_gbs = 0, w_release = 0, w_flops = 0, w_ep_fabric = 0;
  int neighbours = 1;                                                              // other models averaged for a cross-model estimate
  double band_same_configuration = 0, band_same_model = 0, band_other_models = 0;  // error bands, percent
  std::map<std::string, int> generation;  // gpu → its generation (data/perf-params.tsv gpu_generation.*)
  // (architecture class, gpu) → FP8's throughput over BF16's on that GPU, for
  // a class no measured pair bridges (data/perf-params.tsv
  // fp8_gain_over_bf16.<class>.<gpu>, each with its sources), and the error
  // band such a sourced gain adds (band_precision_prior, percent).
  std::map<std::pair<std::string, std::string>, double> fp8_gain_over_bf16;
  double band_precision_prior = 0;
  double slow_plan_ratio = 0;                          // a plan is slow when a nearby layout runs this many times faster (answers' caveat)
  std::map<std::string, std::string> precision_class;  // precision → datasheet class (bf16, fp8, fp4)
};

// Reads Params from the parameter rows (key → value), the peaks
// (gpu, precision class → TFLOP/s), the precision classes (precision →
// class) and the NVLink domains. Every key of docs/throughput.md must be
// there; the error names the first one missing or not a number.
std::variant<Params, std::string> params_from_rows(const std::map<std::string, std::string>& rows,
                                                   const std::map<std::pair<std::string, std::string>, double>& peaks,
                                                   const std::map<std::string, std::string>& precision_class,
                                                   const std::map<std::string, long long>& nvlink_domain);

// Achieved-MFU factor of each platform ("gpu/precision"), relative to the
// reference: fitted on the pairs of usable measurements of one model, task,
// release and sequence that differ in platform (a least-squares fit of the
// pairs' median log ratios). A platform no pair reaches has none (factor 1).
struct PlatformFactors {
  std::map<std::string, double> log_factor;  // platform → log of its factor
  std::map<std::string, int> pairs;          // platform → pairs that informed it
  // Architecture classes with a pair between BF16 and a lower precision: for
  // the others the fitted BF16 factors (another class's) are not theirs.
  std::set<std::string> bf16_bridged;
};
PlatformFactors fit_platform_factors(const std::vector<Measurement>& ms, const Params& p);

enum class Basis : std::uint8_t { Measured, Estimated, None };

// How an estimate was made.
enum class Method : std::uint8_t {
  None,
  SameConfiguration,  // measured; or the same configuration at another layout or release
  SameModel,          // the same model and task on another GPU count, type, precision or sequence
  OtherModels,        // the nearest other models of the same architecture class and task
};

// Why there is no estimate.
enum class NoneReason : std::uint8_t {
  Ok,
  NoFlops,        // the model's FLOPs cannot be counted (Estimate::detail says why)
  NoPeak,         // the target platform has no peak in data/gpu-peaks.tsv
  NoMeasurement,  // nothing of the task and architecture class is measured
};

struct Estimate {
  Basis basis = Basis::None;
  Method method = Method::None;
  NoneReason none = NoneReason::Ok;
  std::string detail;                           // NoFlops: the count's error
  double tokens_per_gpu = 0;                    // tokens / s / GPU
  double tflops_per_gpu = 0;                    // model TFLOP / s / GPU (our FLOPs count)
  double mfu = 0;                               // tflops over the platform's peak
  double band_pct = 0;                          // error band (0 for measured)
  std::vector<long long> sources;               // measurement ids, the nearest first
  double platform_factor = 1;                   // target platform's factor over the source's (product of the adjustments)
  double bubble_source = 0, bubble_target = 0;  // pipeline bubble fractions
  double flops_ratio = 1;                       // source FLOPs per token over the target's
  double precision_gain = 0;                    // the sourced FP8-over-BF16 gain used across precisions (0: the fitted factors)
};

// The estimate for one target.
Estimate estimate(const Target& t, const std::vector<Measurement>& ms, const PlatformFactors& f, const Params& p);

// Pipeline bubble of a layout: (PP - 1) / (VP x m), m = GBS / (DP x MBS)
// micro batches per step, DP = GPUs / (TP x PP x CP). 0 without pipeline.
double bubble(long long gpus, long long gbs, long long mbs, long long tp, long long pp, long long cp, long long vp);

// A measurement as the target of its own configuration (validation, `kbq perf`).
Target target_of(const Measurement& m);

}  // namespace kbq::perf
