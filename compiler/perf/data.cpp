// Loading the data that reads NVIDIA's performance tables and feeds the
// throughput estimator (see perf.hpp): every file's required columns and
// sources, the vocabulary's kinds and patterns, the model names, and the
// pages listed in perf-sources.tsv ordered by edition date.
#include <algorithm>
#include <set>

#include "base/text.hpp"
#include "compiler/perf/perf.hpp"

namespace kb {

namespace {

// The kinds of perf-vocab.tsv (docs/throughput.md, "Reading the tables").
const std::set<std::string>& vocab_kinds() {
  static const std::set<std::string> k = {"pattern",         "task", "column",    "system",           "precision",
                                          "precision_class", "none", "qualifier", "absent_precision", "alternate_precision",
                                          "footnote"};
  return k;
}

// The patterns extract reads (a missing one is an error: the tables cannot be read without it).
const char* const kPatterns[] = {"release_heading", "task_heading", "model_heading", "system_heading", "footnote_ref",
                                 "footnote_def",    "alternate",    "qualifier",     "number"};

// The fields a `column` row may name (extract reads them by these names).
const std::set<std::string>& column_fields() {
  static const std::set<std::string> f = {"system", "model", "gpus", "precision", "gbs", "mbs", "seq",    "fsdp",
                                          "tp",     "pp",    "cp",   "vp",        "ep",  "ga",  "tokens", "tflops"};
  return f;
}

}  // namespace

std::string_view to_string(PerfStatus s) {
  switch (s) {
    case PerfStatus::Current:
      return "current";
    case PerfStatus::Superseded:
      return "superseded";
    case PerfStatus::Copy:
      return "copy";
  }
  return "current";
}

const PerfSource* PerfData::source(const std::string& path) const {
  for (const auto& f : files)
    if (f.path == path) return &f;
  return nullptr;
}

const RE2* PerfData::pattern(const std::string& name) const {
  auto it = patterns.find(name);
  return it == patterns.end() ? nullptr : it->second.get();
}

std::optional<std::string> PerfData::word(const std::string& kind, const std::string& w) const {
  auto k = words.find(kind);
  if (k == words.end()) return std::nullopt;
  auto it = k->second.find(w);
  if (it == k->second.end()) return std::nullopt;
  return it->second;
}

bool load_perf_data(const std::string& data_dir, PerfData& d, Diagnostics& diags) {
  const int before = diags.error_count();
  auto load = [&](const char* name, TsvTable& into, std::vector<std::string> required) {
    into = load_sourced_tsv(data_dir + "/" + name, diags, std::move(required));
  };
  load("perf-sources.tsv", d.sources, {"path", "commit", "date", "role"});
  load("perf-vocab.tsv", d.vocab, {"kind", "word", "value"});
  load("perf-models.tsv", d.models, {"name", "model_key", "recipe_model"});
  load("gpu-peaks.tsv", d.peaks, {"gpu_key", "precision", "tflops"});
  load("perf-params.tsv", d.params, {"key", "value"});
  load("flops-arch.tsv", d.flops_arch, {"model_key", "field", "value"});
  load("perf-flops-exceptions.tsv", d.exceptions, {"model_key", "release", "cause"});

  for (const auto& row : d.sources.rows) {
    PerfSource s{d.sources.get(row, "path"), d.sources.get(row, "commit"), d.sources.get(row, "date"), d.sources.get(row, "role"),
                 d.sources.span(row, "path")};
    if (s.role != "newest" && s.role != "archive")
      diags.error(d.sources.span(row, "role"), "role '" + s.role + "' is neither newest nor archive",
                  "newest: the page of the latest release; archive: the past releases");
    if (s.commit.size() < 9) diags.error(d.sources.span(row, "commit"), "commit '" + s.commit + "' is shorter than 9 characters");
    d.files.push_back(std::move(s));
  }
  std::stable_sort(d.files.begin(), d.files.end(),
                   [](const PerfSource& a, const PerfSource& b) { return std::tie(a.date, a.path) < std::tie(b.date, b.path); });

  for (const auto& row : d.vocab.rows) {
    const std::string& kind = d.vocab.get(row, "kind");
    const std::string& word = d.vocab.get(row, "word");
    const std::string& value = d.vocab.get(row, "value");
    if (!vocab_kinds().count(kind)) {
      diags.error(d.vocab.span(row, "kind"), "unknown kind '" + kind + "'", "docs/throughput.md lists the kinds of perf-vocab.tsv");
      continue;
    }
    if (kind == "column" && !column_fields().count(value))
      diags.error(d.vocab.span(row, "value"), "unknown column field '" + value + "'",
                  "a column holds one of: system model gpus precision gbs mbs seq fsdp tp pp cp vp ep ga tokens tflops");
    if (kind == "footnote" && value != "regression" && value != "caveat")
      diags.error(d.vocab.span(row, "value"), "footnote kind '" + value + "' is neither regression nor caveat");
    auto& m = d.words[kind];
    if (m.count(word)) {
      diags.error(d.vocab.span(row, "word"), kind + " '" + word + "' is listed twice", "keep one row per word of a kind");
      continue;
    }
    m[word] = value;
    if (kind == "pattern") {
      RE2::Options opts;
      opts.set_log_errors(false);
      auto re = std::make_unique<RE2>(value, opts);
      if (!re->ok()) {
        diags.error(d.vocab.span(row, "value"), "invalid RE2 pattern: " + re->error(), "see https://github.com/google/re2/wiki/Syntax");
        continue;
      }
      d.patterns[word] = std::move(re);
    }
  }
  for (const char* p : kPatterns)
    if (!d.patterns.count(p) && diags.error_count() == before)
      diags.error({d.vocab.path, 0, 0}, std::string("no pattern '") + p + "'",
                  "add the row (tab-separated) `pattern  " + std::string(p) + "  <RE2>  <source>` to data/perf-vocab.tsv");

  for (const auto& row : d.models.rows) {
    const std::string& name = d.models.get(row, "name");
    if (d.model_names.count(name)) {
      diags.error(d.models.span(row, "name"), "model name '" + name + "' is listed twice");
      continue;
    }
    d.model_names[name] = {d.models.get(row, "model_key"), d.models.get(row, "recipe_model")};
  }
  return diags.error_count() == before;
}

}  // namespace kb
