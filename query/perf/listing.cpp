// `kbq perf MODEL` (see listing.hpp).
#include "query/perf/listing.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "base/text.hpp"

namespace kbq::perf {

namespace {

// Letters and digits, lower-cased: how names are compared.
std::string squeeze(const std::string& s) {
  std::string out;
  for (char ch : kb::fold(s)) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c >= 0x80) out += ch;
  }
  return out;
}

}  // namespace

std::string find_measured_model(const PerfTables& tables, const PerfSet& set, const std::string& name,
                                std::vector<std::string>& candidates) {
  const std::string want = squeeze(name);
  if (want.empty()) return {};
  std::map<std::string, std::set<std::string>> names;  // model key → its names
  for (const auto& r : set.rows) {
    auto& n = names[r.m.model_key];
    n.insert(squeeze(r.m.model_key));
    std::string written = r.model_written;
    if (auto paren = written.find(" ("); paren != std::string::npos) written = written.substr(0, paren);
    n.insert(squeeze(written));
    if (auto d = tables.model_display.find(r.m.model_key); d != tables.model_display.end() && !d->second.empty())
      n.insert(squeeze(d->second));
  }
  std::vector<std::string> exact, prefix;
  for (const auto& [key, ns] : names) {
    if (ns.count(want))
      exact.push_back(key);
    else if (std::any_of(ns.begin(), ns.end(), [&](const std::string& n) { return kb::starts_with(n, want); }))
      prefix.push_back(key);
  }
  if (exact.size() == 1) return exact.front();
  if (exact.empty() && prefix.size() == 1) return prefix.front();
  candidates = exact.empty() ? prefix : exact;  // several: ambiguous; none: unknown
  return {};
}

std::variant<PerfListing, Error> perf_listing(const PerfTables& tables, const PerfSet& set, const std::string& model, bool history) {
  std::vector<std::string> candidates;
  const std::string key = find_measured_model(tables, set, model, candidates);
  if (key.empty()) {
    if (!candidates.empty()) return Error{"'" + model + "' names more than one measured model", "one of: " + kb::join(candidates, ", ")};
    std::set<std::string> all;
    for (const auto& r : set.rows) all.insert(r.m.model_key);
    return Error{"NVIDIA publishes no measurement of '" + model + "'",
                 "models with measurements: " + kb::join(std::vector<std::string>(all.begin(), all.end()), ", ")};
  }
  PerfListing out;
  out.query = model;
  out.model_key = key;
  out.history = history;
  if (auto d = tables.model_display.find(key); d != tables.model_display.end()) out.model = d->second;
  for (const auto& r : set.rows) {
    const Measurement& m = r.m;
    if (m.model_key != key || (!history && r.status != "current")) continue;
    PerfRowView v;
    v.id = m.id;
    v.release = m.release;
    v.status = r.status;
    v.task = m.task;
    v.model_written = r.model_written;
    v.system = r.system;
    v.gpu = m.gpu;
    v.gpus = m.gpus;
    v.precision = m.precision;
    v.precision_written = r.precision_written;
    v.gbs = m.gbs;
    v.mbs = m.mbs;
    v.seq = m.seq;
    v.tp = r.tp;
    v.pp = r.pp;
    v.cp = r.cp;
    v.vp = r.vp;
    v.ep = r.ep;
    v.fsdp = r.fsdp;
    v.ga = r.ga;
    v.tokens_per_gpu = m.tokens;
    v.tflops_per_gpu = m.tflops;
    v.flops_per_token = m.flops;
    v.implied_flops_per_token = m.tokens > 0 ? m.tflops * 1e12 / m.tokens : 0;
    auto peak = set.params.peak.find(m.gpu + "/" + m.precision);
    if (m.flops > 0 && peak != set.params.peak.end() && peak->second > 0) v.mfu = m.tokens * m.flops / 1e12 / peak->second;
    v.flops_note = !r.flops_error.empty() ? r.flops_error : r.flops_exception;
    v.recipe = r.recipe;
    if (auto d = tables.drift.find(m.id); d != tables.drift.end())
      for (const auto& x : d->second)
        v.drift.push_back(x.field.empty()
                              ? x.note
                              : x.field + " " + x.table_value + " measured, " + x.code_value + " in " + x.recipe + " (" + x.code_at + ")");
    v.note_kind = r.note_kind;
    v.notes = r.notes;
    v.source = {m.file, m.line, 0, "measured row"};
    v.edition = r.edition;
    out.rows.push_back(std::move(v));
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [&](const PerfRowView& a, const PerfRowView& b) {
    auto order = [&](const PerfRowView& v) {
      for (const auto& r : set.rows)
        if (r.m.id == v.id) return r.m.release_order;
      return 0;
    };
    const int oa = order(a), ob = order(b);
    if (oa != ob) return oa > ob;
    return std::tie(a.task, a.gpu, a.gpus, a.precision, a.gbs, a.id) < std::tie(b.task, b.gpu, b.gpus, b.precision, b.gbs, b.id);
  });
  return out;
}

}  // namespace kbq::perf
