// The throughput estimator's tables as stored (see stored.hpp).
//
// Layout (base/stored_bytes.hpp), every map in key order:
//   u32 format (kStoredFormat)
//   params:          (text key, text value)
//   flops_arch:      (text model key, list of (text field, text value))
//   peaks:           (text gpu, text precision class, f64 TFLOP/s)
//   precision_class: (text precision, text class)
//   strings:         text: the rows' texts, each once (a row names them by
//                    index: 300 rows repeat a few dozen files, releases,
//                    models, GPUs and precisions)
//   rows, by id:     svar id, string file, svar line, string release,
//                    svar release order, string task, model as written,
//                    model key, variant, architecture override, system,
//                    gpu, precision, precision as written,
//                    svar gpus, gbs, mbs, seq,
//                    optional svar tp, pp, cp, vp, ep,
//                    f64 tokens, tflops, string note kind,
//                    string architecture class, optional f64 flops
//                    (a string: its index, a var)
//   platforms:       (text gpu/precision, i32 pairs, optional f64 log factor)
//   bf16_bridged:    text architecture class
#include "query/perf/stored.hpp"

#include <climits>
#include <map>
#include <vector>

#include "base/limits.hpp"
#include "base/stored_bytes.hpp"
#include "base/value_ranges.hpp"

namespace kbq::perf {

namespace {

constexpr std::uint32_t kStoredFormat = 1;

// A map of texts to texts, in key order.
template <typename Map>
void write_texts(kb::stored::Writer& w, const Map& m) {
  w.count(m.size());
  for (const auto& [key, value] : m) {
    w.text(key);
    w.text(value);
  }
}

// What write_texts wrote, each item at the end (a crafted value's disorder
// costs a search, never a wrong read).
template <typename Map>
void read_texts(kb::stored::Reader& r, Map& m) {
  for (std::size_t n = r.count(8); n-- > 0;) {
    std::string key(r.text());
    m.emplace_hint(m.end(), std::move(key), std::string(r.text()));
  }
}

// A stored value's range, as the SQL read checks it (base/value_ranges.hpp).
template <typename Range, typename Value>
void check(kb::stored::Reader& r, const Range& range, Value v, const std::string& of) {
  if (const std::string problem = kb::range_problem(range, v); !problem.empty())
    r.fail(std::string(range.table) + "." + std::string(range.column) + " of " + of + ": " + problem);
}

}  // namespace

std::string to_stored(const PerfTables& t) {
  kb::stored::Writer w;
  w.u32(kStoredFormat);
  write_texts(w, t.params);
  w.count(t.flops_arch.size());
  for (const auto& [model, fields] : t.flops_arch) {
    w.text(model);
    write_texts(w, fields);
  }
  w.count(t.peaks.size());
  for (const auto& [key, tflops] : t.peaks) {
    w.text(key.first);
    w.text(key.second);
    w.f64(tflops);
  }
  write_texts(w, t.precision_class);
  // The rows, written aside first: each text is numbered as it is first
  // met, and the table of texts goes before them.
  kb::stored::Writer rows;
  std::map<std::string_view, std::uint64_t> index;
  std::vector<std::string_view> strings;
  const auto ref = [&](const std::string& s) {
    const auto [it, added] = index.emplace(s, strings.size());
    if (added) strings.push_back(s);
    rows.var(it->second);
  };
  for (const PerfTableRow& r : t.rows) {
    rows.svar(r.id);
    ref(r.file);
    rows.svar(r.line);
    ref(r.release);
    rows.svar(r.release_order);
    for (const std::string* s :
         {&r.task, &r.model_written, &r.model_key, &r.variant, &r.arch_override, &r.system, &r.gpu, &r.precision, &r.precision_written})
      ref(*s);
    for (long long v : {r.gpus, r.gbs, r.mbs, r.seq}) rows.svar(v);
    for (const auto* v : {&r.tp, &r.pp, &r.cp, &r.vp, &r.ep}) rows.opt_svar(*v);
    rows.f64(r.tokens);
    rows.f64(r.tflops);
    ref(r.note_kind);
    ref(r.arch_class);
    rows.opt_f64(r.flops);
  }
  w.count(strings.size());
  for (std::string_view s : strings) w.text(s);
  w.count(t.rows.size());
  w.bytes(rows.take());
  w.count(t.platforms.size());
  for (const auto& [platform, fit] : t.platforms) {
    w.text(platform);
    w.i32(fit.pairs);
    w.opt_f64(fit.log_factor);
  }
  w.count(t.bf16_bridged.size());
  for (const auto& cls : t.bf16_bridged) w.text(cls);
  return w.take();
}

PerfTables from_stored(std::string_view bytes) {
  // Every stored text is a value of a KB column (at most kMaxKbValueBytes).
  kb::stored::Reader r(bytes, kb::limits::kMaxKbValueBytes);
  if (const std::uint32_t format = r.u32(); format != kStoredFormat)
    r.fail("format " + std::to_string(format) + ", not " + std::to_string(kStoredFormat));
  PerfTables t;
  t.read = PerfRead::Estimate;
  read_texts(r, t.params);
  for (std::size_t n = r.count(8); n-- > 0;) {
    auto& fields =
        t.flops_arch.emplace_hint(t.flops_arch.end(), std::string(r.text()), std::map<std::string, std::string, std::less<>>{})->second;
    read_texts(r, fields);
  }
  for (std::size_t n = r.count(16); n-- > 0;) {
    std::string gpu(r.text());
    std::string cls(r.text());
    t.peaks.emplace_hint(t.peaks.end(), std::make_pair(std::move(gpu), std::move(cls)), r.f64());
  }
  read_texts(r, t.precision_class);
  // As strings: a row's copy of one is a copy, not a construction.
  std::vector<std::string> strings(r.count(4));
  for (auto& s : strings) s = r.text();
  const auto text_at = [&](std::string& out) {
    const std::uint64_t i = r.var();
    if (i >= strings.size()) r.fail("string " + std::to_string(i) + " of " + std::to_string(strings.size()));
    out = strings[i];
  };
  const auto int_at = [&]() {
    const long long v = r.svar();
    if (v < INT_MIN || v > INT_MAX) r.fail("a line or release order of " + std::to_string(v));
    return static_cast<int>(v);
  };
  // A row is at least 42 bytes: one for each index, integer and flag, 16
  // for its tokens and TFLOP/s.
  const std::size_t rows = r.count(42);
  if (rows > static_cast<std::size_t>(kb::limits::kMaxPerfRows))
    r.fail(std::to_string(rows) + " rows, more than " + std::to_string(kb::limits::kMaxPerfRows));
  t.rows.resize(rows);
  for (PerfTableRow& row : t.rows) {
    row.id = r.svar();
    text_at(row.file);
    row.line = int_at();
    text_at(row.release);
    row.release_order = int_at();
    for (std::string* s : {&row.task, &row.model_written, &row.model_key, &row.variant, &row.arch_override, &row.system, &row.gpu,
                           &row.precision, &row.precision_written})
      text_at(*s);
    for (long long* v : {&row.gpus, &row.gbs, &row.mbs, &row.seq}) *v = r.svar();
    for (auto* v : {&row.tp, &row.pp, &row.cp, &row.vp, &row.ep}) *v = r.opt_svar();
    row.tokens = r.f64();
    row.tflops = r.f64();
    text_at(row.note_kind);
    text_at(row.arch_class);
    row.flops = r.opt_f64();
    if (row.flops) check(r, kb::real_range("perf_rows", "flops"), *row.flops, "row " + std::to_string(row.id));
  }
  for (std::size_t n = r.count(9); n-- > 0;) {
    std::string platform(r.text());
    PerfFitRow fit;
    fit.pairs = r.i32();
    check(r, kb::int_range("perf_fit", "pairs"), static_cast<long long>(fit.pairs), "'" + platform + "'");
    fit.log_factor = r.opt_f64();
    if (fit.log_factor) check(r, kb::real_range("perf_fit", "log_factor"), *fit.log_factor, "'" + platform + "'");
    t.platforms.emplace_hint(t.platforms.end(), std::move(platform), fit);
  }
  for (std::size_t n = r.count(4); n-- > 0;) t.bf16_bridged.emplace_hint(t.bf16_bridged.end(), r.text());
  if (!r.done()) r.fail("bytes after the bf16-bridged classes");
  return t;
}

}  // namespace kbq::perf
