// Generate stage: drift.md and drift.<lang>.md, where the documents disagree
// with the Megatron Bridge code, for documentation maintainers. The code of
// the newest compiled snapshot decides what runs; each row names the
// document's value with its file:line and revision, and the code's with its
// path:line@commit. Then what changed in the code between snapshots, so a
// user who updates Megatron Bridge sees which recipes moved. Labels come from
// data/ui.tsv (drift.*), in each language, English where one is missing.
#include <map>

#include "base/text.hpp"
#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

namespace {

std::string cell(const std::string& s) { return md_text(s, true); }
std::string code(const std::string& s) { return s.empty() ? std::string() : md_code(s, true); }

class DriftWriter {
 public:
  DriftWriter(const Inputs& ctx, const std::string& lang) : ctx_(ctx), lang_(lang) {}

  std::string run() const {
    const CodeSnapshot* s = ctx_.c.code.newest();
    std::vector<std::pair<std::string, std::string>> fm{{"title", yaml_str(ui("drift.title"))}, {"lang", lang_}};
    if (s) fm.emplace_back("commit", yaml_str(s->commit));
    std::string body = front_matter(fm) + "\n# " + md_text(ui("drift.title")) + "\n\n" + md_text(ui("drift.intro")) + "\n";
    if (!s) return body + "\n" + md_text(ui("drift.no_code")) + "\n";
    body += "\n" + md_text(ui("drift.snapshot", {{"repo", s->repo}, {"commit", s->commit}, {"date", s->date}})) + "\n";
    body += summary();
    for (const auto kind : {DriftKind::RecipeFact, DriftKind::MissingRecipe, DriftKind::UnknownKey, DriftKind::OverwrittenKey,
                            DriftKind::Dataset, DriftKind::BenchmarkModel})
      body += section(kind);
    body += changes();
    return body;
  }

 private:
  std::string ui(const std::string& key, const std::map<std::string, std::string>& args = {}) const { return ctx_.ui(lang_, key, args); }

  std::string summary() const {
    std::map<DriftKind, size_t> n;
    for (const auto& d : ctx_.c.drift) ++n[d.kind];
    std::vector<std::vector<std::string>> rows;
    for (const auto& [kind, count] : n) rows.push_back({cell(ui("drift.kind." + std::string(to_string(kind)))), std::to_string(count)});
    if (rows.empty()) return "\n" + md_text(ui("drift.none")) + "\n";
    return "\n## " + md_text(ui("drift.summary")) + "\n\n" + md_table({cell(ui("drift.col.kind")), cell(ui("drift.col.count"))}, rows) +
           "\n";
  }

  std::string section(DriftKind kind) const {
    std::vector<std::vector<std::string>> rows;
    for (const auto& d : ctx_.c.drift) {
      if (d.kind != kind) continue;
      rows.push_back({code(d.subject), cell(d.field), cell(d.doc_value),
                      cell(ui("drift.where", {{"file", d.doc.file},
                                              {"line", std::to_string(d.doc.line)},
                                              {"revision", std::to_string(d.doc.revision)},
                                              {"lang", d.doc.lang}})),
                      cell(d.code_value), code(d.code_at), cell(d.note)});
    }
    if (rows.empty()) return {};
    return "\n## " + md_text(ui("drift.kind." + std::string(to_string(kind)))) + "\n\n" +
           md_table({cell(ui("drift.col.subject")), cell(ui("drift.col.field")), cell(ui("drift.col.document")),
                     cell(ui("drift.col.where")), cell(ui("drift.col.code")), cell(ui("drift.col.code_at")), cell(ui("drift.col.note"))},
                    rows) +
           "\n";
  }

  std::string changes() const {
    std::string out;
    for (const auto& ch : ctx_.c.code.changes) {
      std::vector<std::vector<std::string>> rows;
      for (const auto& r : ch.rows)
        rows.push_back({cell(r.change), code(r.name), cell(r.kind), cell(r.field), cell(r.old_value), cell(r.new_value)});
      out += "\n## " + md_text(ui("drift.changes", {{"old", ch.old_commit}, {"new", ch.new_commit}})) + "\n\n" +
             md_text(ui("drift.changes_intro", {{"file", ch.file}})) + "\n\n" +
             md_table({cell(ui("drift.col.change")), cell(ui("drift.col.recipe")), cell(ui("drift.col.kind")), cell(ui("drift.col.field")),
                       cell(ui("drift.col.old")), cell(ui("drift.col.new"))},
                      rows) +
             "\n";
    }
    return out;
  }

  const Inputs& ctx_;
  std::string lang_;
};

}  // namespace

void write_drift(const Inputs& ctx, OutputFiles& out) {
  for (const auto& lang : ctx.languages) out[lang_path("drift", lang)] = DriftWriter(ctx, lang).run();
}

}  // namespace kb::gen
