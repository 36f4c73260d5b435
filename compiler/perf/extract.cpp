// Extract for the performance pages (see perf.hpp): walks a page's blocks in
// order, keeping the release (a "## 26.08 NeMo Container" heading), the task
// ("### Pre-Training Performance") and the model or system of the table
// ("#### Model: X" / "#### System: X"), and reads every table row into a
// PerfRow. Every word is read through data/perf-vocab.tsv (patterns, task
// words, column headers, systems, precisions, "n/a", model qualifiers,
// footnotes) and data/perf-models.tsv (model names); nothing of the page's
// language is written here. A cell "A (B)" holds two measurements (the
// values in parentheses use another quantization granularity): the row
// becomes two PerfRows, the second marked `alternate`.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "base/text.hpp"
#include "compiler/perf/perf.hpp"

namespace kb {

namespace {

// A decimal number the `number` pattern accepted, as a double.
bool parse_double(const std::string& t, double& v) {
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

struct Heading {
  std::string value;  // what the heading says (release, task, model or system)
  int level = 0;      // its level (0: none)
  Span span;
};

// A cell after its footnote markers are taken out: the primary text and, for
// "A (B)", the alternate.
struct CellText {
  std::string primary, alt;
  bool has_alt = false;
  Span span;
};

class PageReader {
 public:
  PageReader(const Document& doc, const PerfSource& src, int edition, const PerfData& d, PerfCompiled& out, Diagnostics& diags)
      : doc_(doc), src_(src), edition_(edition), d_(d), out_(out), diags_(diags) {}

  void read() {
    for (const auto& b : doc_.blocks) {
      switch (b.kind) {
        case BlockKind::Heading:
          heading(b);
          break;
        case BlockKind::Table:
          table(b);
          break;
        case BlockKind::Paragraph:
          footnote_definition(b);
          break;
        case BlockKind::ListItem:
          note(b);
          break;
        default:
          break;
      }
    }
    finish_footnotes();
  }

 private:
  bool full(const char* pattern, const std::string& text, std::string* a = nullptr, std::string* b = nullptr) const {
    const RE2* re = d_.pattern(pattern);
    if (!re) return false;
    if (b) return RE2::FullMatch(text, *re, a, b);
    if (a) return RE2::FullMatch(text, *re, a);
    return RE2::FullMatch(text, *re);
  }

  void heading(const Block& b) {
    std::string v;
    if (full("release_heading", b.text, &v)) {
      release_ = {v, b.level, b.span};
      task_ = table_of_ = {};
      task_id_.clear();
      return;
    }
    if (release_.level > 0 && b.level <= release_.level) {  // another section of the same level: out of the release
      release_ = task_ = table_of_ = {};
      task_id_.clear();
      return;
    }
    if (release_.level == 0) return;
    if (full("task_heading", b.text, &v)) {
      task_ = {v, b.level, b.span};
      table_of_ = {};
      task_id_.clear();
      if (auto t = d_.word("task", v)) {
        task_id_ = *t;
      } else {
        diags_.error(b.span, "unknown task '" + v + "' in a performance heading",
                     "add the row (tab-separated) `task  " + v + "  <pretrain|sft|peft>  <source>` to data/perf-vocab.tsv");
      }
      return;
    }
    if (task_.level > 0 && b.level <= task_.level) {
      task_ = table_of_ = {};
      task_id_.clear();
      return;
    }
    if (full("model_heading", b.text, &v)) {
      table_of_ = {v, b.level, b.span};
      table_is_model_ = true;
    } else if (full("system_heading", b.text, &v)) {
      table_of_ = {v, b.level, b.span};
      table_is_model_ = false;
    } else if (table_of_.level > 0 && b.level <= table_of_.level) {
      table_of_ = {};
    }
  }

  // "[^label]" markers out of a cell, their labels kept.
  std::string strip_footnotes(const std::string& text, std::vector<std::string>& labels) const {
    const RE2* re = d_.pattern("footnote_ref");
    if (!re) return text;
    re2::StringPiece in(text);
    std::string label;
    while (RE2::FindAndConsume(&in, *re, &label)) labels.push_back(label);
    std::string out = text;
    RE2::GlobalReplace(&out, *re, "");
    return trim(out);
  }

  void table(const Block& b) {
    if (release_.level == 0 || b.rows.empty()) return;  // no release: a table of the page's introduction
    if (task_id_.empty()) {
      if (task_.level == 0)
        diags_.warning(b.span, "a table of release " + release_.value + " outside a task section is not read",
                       "put it under a heading such as the release's other task headings (data/perf-vocab.tsv task)");
      return;  // an unknown task was reported at its heading
    }
    // The header: one field per column.
    std::vector<std::string> fields;
    bool ok = true;
    for (const auto& c : b.rows[0]) {
      auto f = d_.word("column", c.text);
      if (!f) {
        diags_.error(c.span, "unknown column '" + c.text + "' in a performance table",
                     "add the row (tab-separated) `column  " + c.text + "  <field>  <source>` to data/perf-vocab.tsv (docs/throughput.md)");
        ok = false;
      }
      fields.push_back(f.value_or(""));
    }
    if (!ok) return;
    auto has = [&](const char* f) { return std::find(fields.begin(), fields.end(), f) != fields.end(); };
    for (const char* need : {"gpus", "gbs", "mbs", "seq", "tokens", "tflops"})
      if (!has(need)) {
        diags_.error(b.span, std::string("a performance table without its ") + need + " column", "every measured row needs it");
        ok = false;
      }
    if (!has("model") && !(table_of_.level > 0 && table_is_model_)) {
      diags_.error(b.span, "a performance table without a model (no Model column, no model heading above it)");
      ok = false;
    }
    if (!has("system") && !(table_of_.level > 0 && !table_is_model_)) {
      diags_.error(b.span, "a performance table without a system (no System column, no system heading above it)");
      ok = false;
    }
    if (!ok) return;
    table_rows_.clear();
    for (size_t r = 1; r < b.rows.size(); ++r) row(b.rows[r], fields, b.rows[0]);
  }

  // One table row → one PerfRow, or two when cells hold a value in parentheses.
  void row(const std::vector<Cell>& cells, const std::vector<std::string>& fields, const std::vector<Cell>& header) {
    std::map<std::string, CellText> by;
    std::vector<std::string> labels;
    std::vector<Span> label_spans;
    bool any_alt = false;
    for (size_t i = 0; i < cells.size() && i < fields.size(); ++i) {
      std::vector<std::string> here;
      CellText ct;
      ct.span = cells[i].span;
      const std::string text = strip_footnotes(cells[i].text, here);
      for (auto& l : here) {
        labels.push_back(l);
        label_spans.push_back(cells[i].span);
      }
      std::string a, alt;
      if (fields[i] != "model" && full("alternate", text, &a, &alt)) {
        ct.primary = trim(a);
        ct.alt = trim(alt);
        ct.has_alt = true;
        any_alt = true;
      } else {
        ct.primary = text;
      }
      by[fields[i]] = ct;
    }
    (void)header;
    const int errors = diags_.error_count();
    PerfRow base;
    base.file = doc_.path;
    base.line = cells.empty() ? 0 : cells.front().span.line;
    base.col = cells.empty() ? 0 : cells.front().span.col;
    base.edition = edition_;
    base.commit = src_.commit.substr(0, 9);
    base.release = release_.value;
    for (const auto& part : split(release_.value, '.')) base.release_key.push_back(std::atoi(part.c_str()));
    base.task = task_id_;
    // Model, with its qualifier.
    Span model_span = table_of_.span;
    std::string model = table_of_.level > 0 && table_is_model_ ? table_of_.value : std::string{};
    if (by.count("model")) {
      model = by["model"].primary;
      model_span = by["model"].span;
    }
    base.model_written = model;
    std::string name = model, qual;
    if (std::string n, q; full("qualifier", model, &n, &q)) {
      name = trim(n);
      qual = trim(q);
    }
    if (auto it = d_.model_names.find(name); it != d_.model_names.end()) {
      base.model_key = it->second.model_key;
      base.recipe_model = it->second.recipe_model;
    } else {
      diags_.error(model_span, "unknown model '" + name + "' in a performance table",
                   "add the row (tab-separated) `" + name + "  <model_key>  <recipe model>  <source>` to data/perf-models.tsv");
    }
    if (!qual.empty()) {
      auto q = d_.word("qualifier", qual);
      if (!q) {
        diags_.error(model_span, "unknown model qualifier '(" + qual + ")'",
                     "add the row (tab-separated) `qualifier  " + qual +
                         "  <variant=...|arch.<field>=<value>|none>  <source>` to data/perf-vocab.tsv");
      } else {
        for (const auto& part : split(*q, ',')) {
          const std::string p = trim(part);
          if (starts_with(p, "variant=")) {
            base.variant = p.substr(8);
          } else if (starts_with(p, "arch.")) {
            base.arch_override += (base.arch_override.empty() ? "" : ",") + p.substr(5);
          } else if (p != "none") {
            diags_.error(model_span, "qualifier '(" + qual + ")' means '" + p + "', not variant=..., arch.<field>=... or none");
          }
        }
      }
    }
    // System.
    Span system_span = table_of_.span;
    std::string system = table_of_.level > 0 && !table_is_model_ ? table_of_.value : std::string{};
    if (by.count("system")) {
      system = by["system"].primary;
      system_span = by["system"].span;
    }
    base.system = system;
    if (auto g = d_.word("system", system)) {
      base.gpu = *g;
    } else {
      diags_.error(system_span, "unknown system '" + system + "' in a performance table",
                   "add the row (tab-separated) `system  " + system + "  <gpu_key of data/gpus.tsv>  <source>` to data/perf-vocab.tsv");
    }
    base.footnotes = labels;
    base.footnote_spans = label_spans;
    for (size_t i = 0; i < labels.size(); ++i) {
      auto k = d_.word("footnote", labels[i]);
      if (!k) {
        diags_.error(label_spans[i], "footnote [^" + labels[i] + "] has no kind",
                     "add the row (tab-separated) `footnote  " + labels[i] + "  <regression|caveat>  <source>` to data/perf-vocab.tsv");
        continue;
      }
      if (*k == "regression" || base.note_kind.empty()) base.note_kind = *k;
    }
    if (diags_.error_count() > errors) return;

    for (int alt = 0; alt < (any_alt ? 2 : 1); ++alt) {
      PerfRow r = base;
      r.alternate = alt == 1;
      const int before = diags_.error_count();
      auto text = [&](const char* f) -> const std::string& {
        const CellText& c = by[f];
        return alt == 1 && c.has_alt ? c.alt : c.primary;
      };
      auto integer = [&](const char* f, bool optional) -> std::optional<long long> {
        if (!by.count(f)) return std::nullopt;
        const std::string& t = text(f);
        if (optional && d_.word("none", t)) return std::nullopt;
        double v = 0;
        if (!full("number", t) || !parse_double(t, v) || v != std::floor(v) || v < 0 || v > 1e12) {
          diags_.error(by[f].span, std::string(f) + " cell '" + t + "' is not a whole number",
                       optional ? "write a count, or a word of data/perf-vocab.tsv kind none (n/a)" : "write a count");
          return std::nullopt;
        }
        return static_cast<long long>(v);
      };
      auto decimal = [&](const char* f) -> double {
        const std::string& t = text(f);
        double v = 0;
        if (!full("number", t) || !parse_double(t, v) || !(v > 0)) {
          diags_.error(by[f].span, std::string(f) + " cell '" + t + "' is not a positive number", "write the measured value");
          return 0;
        }
        return v;
      };
      r.gpus = integer("gpus", false).value_or(0);
      r.gbs = integer("gbs", false).value_or(0);
      r.mbs = integer("mbs", false).value_or(0);
      r.seq = integer("seq", false).value_or(0);
      r.fsdp = integer("fsdp", true);
      r.tp = integer("tp", true);
      r.pp = integer("pp", true);
      r.cp = integer("cp", true);
      r.vp = integer("vp", true);
      r.ep = integer("ep", true);
      r.ga = integer("ga", true);
      r.tokens = decimal("tokens");
      r.tflops = decimal("tflops");
      for (const char* f : {"gpus", "gbs", "mbs", "seq"})
        if (diags_.error_count() == before && integer(f, false).value_or(0) == 0)
          diags_.error(by[f].span, std::string(f) + " is 0", "a measured row has a positive " + std::string(f));
      // Precision: the cell, else the release's (a table without the column).
      if (by.count("precision")) {
        const CellText& c = by["precision"];
        r.precision_written = c.has_alt ? c.primary + " (" + c.alt + ")" : c.primary;
        std::string word = alt == 1 && c.has_alt ? c.alt : c.primary;
        std::optional<std::string> p = d_.word("precision", word);
        if (alt == 1 && !c.has_alt) p = d_.word("alternate_precision", r.gpu);
        if (!p)
          diags_.error(
              c.span, "unknown precision '" + word + "'" + (alt == 1 && !c.has_alt ? " for the values in parentheses" : ""),
              "add the row (tab-separated) `precision  " + word + "  <bf16|fp8cs|fp8mx|fp8sc|nvfp4>  <source>` to data/perf-vocab.tsv");
        else
          r.precision = *p;
      } else {
        auto p = alt == 1 ? d_.word("alternate_precision", r.gpu) : d_.word("absent_precision", r.release);
        if (!p)
          diags_.error(
              cells.empty() ? release_.span : cells.front().span,
              alt == 1 ? "the values in parentheses on " + r.gpu + " have no precision"
                       : "release " + r.release + " has tables without a Precision column and no precision",
              alt == 1 ? "add the row (tab-separated) `alternate_precision  " + r.gpu + "  <precision>  <source>` to data/perf-vocab.tsv"
                       : "add the row (tab-separated) `absent_precision  " + r.release + "  <precision>  <source>` to data/perf-vocab.tsv");
        else
          r.precision = *p;
      }
      if (diags_.error_count() > before) continue;
      table_rows_.push_back(out_.rows.size());
      out_.rows.push_back(std::move(r));
    }
  }

  // A paragraph of footnote definitions ("[^label]: text", one or more in a
  // row: a definition runs to the next "[^").
  void footnote_definition(const Block& b) {
    const RE2* re = d_.pattern("footnote_def");
    if (!re || !starts_with(b.text, "[^")) return;
    re2::StringPiece in(b.text);
    std::string label, text;
    while (RE2::FindAndConsume(&in, *re, &label, &text)) defs_[label] = {trim(text), b.span};
  }

  // A list item of a release: a note on the rows of the table just above it.
  void note(const Block& b) {
    if (release_.level == 0 || task_id_.empty()) return;
    for (size_t i : table_rows_) out_.rows[i].notes.push_back(b.text + " (" + doc_.path + ":" + std::to_string(b.span.line) + ")");
  }

  void finish_footnotes() {
    for (size_t i = first_row_; i < out_.rows.size(); ++i) {
      PerfRow& r = out_.rows[i];
      for (size_t k = 0; k < r.footnotes.size(); ++k) {
        const std::string& label = r.footnotes[k];
        auto it = defs_.find(label);
        if (it == defs_.end()) {
          if (r.alternate) continue;  // reported at the row's first measurement
          diags_.error(k < r.footnote_spans.size() ? r.footnote_spans[k] : Span{r.file, r.line, r.col},
                       "footnote [^" + label + "] is not defined on this page", "the page needs a line `[^" + label + "]: ...`");
          continue;
        }
        r.notes.insert(r.notes.begin(), it->second.first + " (" + doc_.path + ":" + std::to_string(it->second.second.line) + ")");
      }
    }
  }

 public:
  size_t first_row_ = 0;

 private:
  const Document& doc_;
  const PerfSource& src_;
  int edition_;
  const PerfData& d_;
  PerfCompiled& out_;
  Diagnostics& diags_;
  Heading release_, task_, table_of_;
  bool table_is_model_ = true;
  std::string task_id_;
  std::vector<size_t> table_rows_;                            // rows of the last table read
  std::map<std::string, std::pair<std::string, Span>> defs_;  // footnote label → text, where
};

}  // namespace

std::string PerfRow::config() const {
  return model_key + "|" + variant + "|" + arch_override + "|" + task + "|" + gpu + "|" + std::to_string(gpus) + "|" + precision + "|" +
         std::to_string(seq);
}

void extract_perf(const Document& doc, const PerfSource& src, int edition, const PerfData& d, PerfCompiled& out, Diagnostics& diags) {
  PageReader reader(doc, src, edition, d, out, diags);
  reader.first_row_ = out.rows.size();
  reader.read();
  out.files.emplace_back(doc.path, doc.sha256);
}

}  // namespace kb
