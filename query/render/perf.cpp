// Render of `kbq perf MODEL` (PerfListing, query/kbq.hpp): a table of the
// measured rows in text or Markdown, every word from the labels of the
// language, or JSON (docs/perf.schema.json). Reads no database.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "base/markdown.hpp"
#include "base/text.hpp"
#include "query/kbq.hpp"

namespace kbq {

namespace {

using json = nlohmann::json;

std::string fill_vars(const std::string& text, const std::vector<std::pair<std::string, std::string>>& vars) {
  return kb::fill_placeholders(text, vars);  // one pass: no value expands into another
}

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string sci(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string dim(const std::optional<long long>& v) { return v ? std::to_string(*v) : std::string("-"); }

json opt(const std::optional<long long>& v) { return v ? json(*v) : json(nullptr); }

size_t width(const std::string& s) {  // code points: close enough for the labels' scripts
  size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

std::string pad(const std::string& s, size_t w, bool right = false) {
  const size_t n = width(s);
  const std::string fill = n < w ? std::string(w - n, ' ') : std::string();
  return right ? fill + s : s + fill;
}

std::string source(const PerfRowView& r) { return r.source.file + ":" + std::to_string(r.source.line); }

// The columns: release, task, system, GPUs, precision, the nine layout
// columns (perf.col.layout: GBS MBS seq FSDP TP PP CP VP EP), tokens/s/GPU,
// TFLOP/s/GPU, MFU, source.
constexpr size_t kLayoutColumns = 9;
std::vector<std::string> cells(const PerfRowView& r) {
  return {r.release,
          r.task,
          r.system,
          std::to_string(r.gpus),
          r.precision_written.empty() ? r.precision : r.precision_written,
          std::to_string(r.gbs),
          std::to_string(r.mbs),
          std::to_string(r.seq),
          dim(r.fsdp),
          dim(r.tp),
          dim(r.pp),
          dim(r.cp),
          dim(r.vp),
          dim(r.ep),
          fixed(r.tokens_per_gpu, 0),
          fixed(r.tflops_per_gpu, 0),
          r.mfu > 0 ? fixed(r.mfu * 100, 1) + "%" : "-",
          source(r)};
}

bool numeric(size_t column) { return column == 3 || (column >= 5 && column + 1 < 5 + kLayoutColumns + 4); }

std::vector<std::string> notes(const PerfRowView& r, const Labels& lb) {
  std::vector<std::string> out;
  if (r.status == "superseded") out.push_back(lb("perf.superseded"));
  if (!r.recipe.empty()) out.push_back(fill_vars(lb("perf.recipe"), {{"recipe", r.recipe}}));
  out.push_back(fill_vars(lb("perf.flops"),
                          {{"ours", r.flops_per_token > 0 ? sci(r.flops_per_token) : "-"}, {"published", sci(r.implied_flops_per_token)}}) +
                (r.flops_note.empty() ? "" : " (" + r.flops_note + ")"));
  for (const auto& d : r.drift) out.push_back(fill_vars(lb("perf.drift"), {{"what", d}}));
  if (r.note_kind == "regression") out.push_back(lb("perf.regression"));
  for (const auto& n : r.notes) out.push_back(n);
  return out;
}

}  // namespace

std::string render(const PerfListing& p, const Labels& lb, const RenderOptions& o) {
  if (o.format == Format::Json) {
    json rows = json::array();
    for (const auto& r : p.rows)
      rows.push_back({{"id", r.id},
                      {"release", r.release},
                      {"status", r.status},
                      {"task", r.task},
                      {"model_written", r.model_written},
                      {"system", r.system},
                      {"gpu", r.gpu},
                      {"gpus", r.gpus},
                      {"precision", r.precision},
                      {"precision_written", r.precision_written},
                      {"gbs", r.gbs},
                      {"mbs", r.mbs},
                      {"seq", r.seq},
                      {"tp", opt(r.tp)},
                      {"pp", opt(r.pp)},
                      {"cp", opt(r.cp)},
                      {"vp", opt(r.vp)},
                      {"ep", opt(r.ep)},
                      {"fsdp", opt(r.fsdp)},
                      {"ga", opt(r.ga)},
                      {"tokens_per_s_per_gpu", r.tokens_per_gpu},
                      {"tflops_per_gpu", r.tflops_per_gpu},
                      {"flops_per_token", r.flops_per_token},
                      {"implied_flops_per_token", r.implied_flops_per_token},
                      {"mfu", r.mfu},
                      {"flops_note", r.flops_note},
                      {"recipe", r.recipe},
                      {"drift", r.drift},
                      {"note_kind", r.note_kind},
                      {"notes", r.notes},
                      {"edition", r.edition},
                      {"source", {{"file", r.source.file}, {"line", r.source.line}}}});
    json j = json::object();
    j["schema_version"] = kAnswerSchemaVersion;
    j["kind"] = "perf";
    j["query"] = p.query;
    j["model_key"] = p.model_key;
    j["model"] = p.model;
    j["history"] = p.history;
    j["rows"] = std::move(rows);
    return j.dump(2) + "\n";
  }
  const std::string name = p.model.empty() ? p.model_key : p.model + " (" + p.model_key + ")";
  std::vector<std::string> head = {lb("perf.col.release"), lb("perf.col.task"), lb("perf.col.system"), lb("perf.col.gpus"),
                                   lb("perf.col.precision")};
  std::vector<std::string> layout;
  for (const auto& w : kb::split(lb("perf.col.layout"), ' '))
    if (!w.empty()) layout.push_back(w);
  layout.resize(kLayoutColumns);
  head.insert(head.end(), layout.begin(), layout.end());
  for (const char* k : {"perf.col.tokens", "perf.col.tflops", "perf.col.mfu", "perf.col.source"}) head.push_back(lb(k));
  std::string out = fill_vars(lb(p.history ? "perf.title_history" : "perf.title"), {{"model", name}}) + "\n" +
                    fill_vars(lb("perf.count"), {{"count", std::to_string(p.rows.size())}}) + "\n\n";
  if (o.format == Format::Markdown) {
    // Every KB text escaped for where it lands (base/markdown.hpp): table
    // cells, the source as a code span, titles and notes as prose.
    out = kb::md::text(fill_vars(lb(p.history ? "perf.title_history" : "perf.title"), {{"model", name}})) + "\n" +
          kb::md::text(fill_vars(lb("perf.count"), {{"count", std::to_string(p.rows.size())}})) + "\n\n";
    std::vector<std::string> md_head;
    for (const auto& h : head) md_head.push_back(kb::md::text(h, true));
    out += "| " + kb::join(md_head, " | ") + " |\n|";
    for (size_t i = 0; i < head.size(); ++i) out += numeric(i) ? "---:|" : "---|";  // numbers right-aligned
    out += "\n";
    for (const auto& r : p.rows) {
      auto c = cells(r);
      for (size_t i = 0; i + 1 < c.size(); ++i) c[i] = kb::md::text(c[i], true);
      c.back() = kb::md::code(c.back(), true);
      out += "| " + kb::join(c, " | ") + " |\n";
    }
    out += "\n";
    for (const auto& r : p.rows) {
      out += "- " + kb::md::text(r.release + " " + r.system + " " + std::to_string(r.gpus) + " " + r.precision + ":") + "\n";
      for (const auto& n : notes(r, lb)) out += "  - " + kb::md::text(n) + "\n";
    }
    return out;
  }
  std::vector<std::vector<std::string>> table = {head};
  for (const auto& r : p.rows) table.push_back(cells(r));
  std::vector<size_t> w(head.size(), 0);
  for (const auto& row : table)
    for (size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], width(row[i]));
  for (size_t k = 0; k < table.size(); ++k) {
    std::string line;
    for (size_t i = 0; i < table[k].size(); ++i) {
      line += (i ? "  " : "") + (i + 1 == table[k].size() ? table[k][i] : pad(table[k][i], w[i], numeric(i) && k > 0));
    }
    out += (o.color && k == 0 ? "\x1b[1m" + line + "\x1b[0m" : line) + "\n";
    if (k > 0)
      for (const auto& n : notes(p.rows[k - 1], lb)) out += "    " + n + "\n";
  }
  return out;
}

}  // namespace kbq
