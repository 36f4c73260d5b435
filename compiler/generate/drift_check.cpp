// `kbc drift` (see drift_check.hpp): compile a published skill against the
// code facts of a Megatron Bridge checkout and print where they disagree.
// The findings are compile()'s own (compiler/resolve/drift.cpp, the same
// as kbc lint's drift lines); this file only gathers the inputs and prints
// them in the three formats. Labels come from data/ui.tsv (drift.*).
#include "compiler/generate/drift_check.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "base/files.hpp"
#include "base/text.hpp"
#include "compiler/code/extract_code.hpp"
#include "compiler/generate/generate_int.hpp"

namespace kb {

namespace fs = std::filesystem;

namespace {

using json = nlohmann::ordered_json;

// The labels of data/ui.tsv in one language (else the base language, planner.tsv).
class Labels {
 public:
  Labels(const Vocab& v, const std::string& lang, Diagnostics& diags) : base_(v.base_language), lang_(lang), diags_(diags) {
    if (lang_.empty()) lang_ = base_;
    if (auto t = load_tsv(v.dir + "/ui.tsv", diags, {"lang", "key", "text", "source"})) ui_ = std::move(*t);
  }
  std::string operator()(const std::string& key, const std::map<std::string, std::string>& args = {}) const {
    for (const std::string& want : {lang_, base_})
      for (const auto& row : ui_.rows)
        if (ui_.get(row, "lang") == want && ui_.get(row, "key") == key) return gen::fill_placeholders(ui_.get(row, "text"), args);
    diags_.error({ui_.path, 0, 0}, "no label '" + key + "' for language " + lang_ + " (nor " + base_ + ")",
                 "add a row `" + lang_ + "\t" + key + "\t<text>\t<source>` to data/ui.tsv");
    return key;
  }

 private:
  std::string base_, lang_;
  Diagnostics& diags_;
  TsvTable ui_;
};

constexpr std::array<DriftKind, 6> kKinds{DriftKind::RecipeFact,     DriftKind::MissingRecipe, DriftKind::UnknownKey,
                                          DriftKind::OverwrittenKey, DriftKind::Dataset,       DriftKind::BenchmarkModel};

// The findings in reading order: by document, line, subject, field.
std::vector<const Drift*> in_reading_order(const std::vector<Drift>& all) {
  std::vector<const Drift*> out;
  for (const auto& d : all) out.push_back(&d);
  std::stable_sort(out.begin(), out.end(), [](const Drift* a, const Drift* b) {
    return std::tie(a->doc.file, a->doc.line, a->subject, a->field) < std::tie(b->doc.file, b->doc.line, b->subject, b->field);
  });
  return out;
}

// One finding as a person reads it: what, the document's value, the code's.
std::string message(const Drift& d, const Labels& ui) {
  std::string m = ui("drift.check.document", {{"subject", d.subject + (d.field.empty() ? "" : " " + d.field)}, {"value", d.doc_value}});
  m += d.code_value.empty() ? ui("drift.check.no_code") : ui("drift.check.code", {{"value", d.code_value}, {"at", d.code_at}});
  if (!d.note.empty()) m += ui("drift.check.note", {{"note", d.note}});
  return m;
}

// The document's path as the CI sees it: the skill folder as given, then
// the path inside it.
std::string doc_path(const std::string& root, const Provenance& p) { return (fs::path(root) / p.file).lexically_normal().generic_string(); }

// GitHub workflow commands: data escapes %, CR, LF; property values also : and ,.
std::string gh_escape(const std::string& s, bool property) {
  std::string out;
  for (const char ch : s) {
    switch (ch) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      case ':':
        out += property ? "%3A" : ":";
        break;
      case ',':
        out += property ? "%2C" : ",";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

// A SARIF artifact URI: a relative path as it is ('/'-separated, percent-
// encoded where RFC 3986 requires), an absolute one as a file: URI.
std::string sarif_uri(const std::string& path) {
  std::string out = fs::path(path).is_absolute() ? "file://" : "";
  for (const char c : path) {
    const auto ch = static_cast<unsigned char>(c);
    if (std::isalnum(ch) || std::string_view("-._~/").find(c) != std::string_view::npos)
      out += c;
    else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += '%';
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
  return out;
}

std::string sarif(const Compilation& c, const std::string& root, const Labels& ui, const std::string& version) {
  json rules = json::array();
  std::map<DriftKind, size_t> rule_index;
  for (const auto k : kKinds) {
    rule_index[k] = rules.size();
    const std::string id(to_string(k));
    rules.push_back({{"id", id},
                     {"name", id},
                     {"shortDescription", {{"text", ui("drift.kind." + id)}}},
                     {"defaultConfiguration", {{"level", "warning"}}}});
  }
  json results = json::array();
  for (const Drift* p : in_reading_order(c.drift)) {
    const Drift& d = *p;
    json r{{"ruleId", std::string(to_string(d.kind))},
           {"ruleIndex", rule_index[d.kind]},
           {"level", "warning"},
           {"message", {{"text", message(d, ui)}}},
           {"locations", json::array({{{"physicalLocation",
                                        {{"artifactLocation", {{"uri", sarif_uri(doc_path(root, d.doc))}}},
                                         {"region", {{"startLine", std::max(1, d.doc.line)}}}}}}})}};
    json props{
        {"subject", d.subject}, {"documentValue", d.doc_value}, {"documentRevision", d.doc.revision}, {"documentLanguage", d.doc.lang}};
    if (!d.field.empty()) props["field"] = d.field;
    if (!d.code_value.empty()) props["codeValue"] = d.code_value;
    if (!d.code_at.empty()) props["codeLocation"] = d.code_at;
    r["properties"] = std::move(props);
    results.push_back(std::move(r));
  }
  json run{{"tool", {{"driver", {{"name", "kbc"}, {"version", version}, {"rules", std::move(rules)}}}}}, {"results", std::move(results)}};
  if (const CodeSnapshot* s = c.code.newest())
    run["properties"] = {{"codeRepository", s->repo}, {"codeCommit", s->commit}, {"codeDate", s->date}};
  json log{{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"}, {"version", "2.1.0"}, {"runs", json::array({std::move(run)})}};
  return log.dump(2) + "\n";
}

// data/planner.tsv base_language, read before the compile needs it.
std::string base_language_of(const std::string& data_dir, Diagnostics& diags) {
  if (auto t = load_tsv(data_dir + "/planner.tsv", diags, {"key", "value"}))
    for (const auto& row : t->rows)
      if (t->get(row, "key") == "base_language") return t->get(row, "value");
  return {};
}

}  // namespace

std::string render_drift_findings(const Compilation& c, const std::string& skill_root, const std::string& lang, DriftFormat format,
                                  const std::string& tool_version, Diagnostics& diags) {
  const Labels ui(c.vocab, lang, diags);
  if (format == DriftFormat::Sarif) return sarif(c, skill_root, ui, tool_version);
  std::string out;
  for (const Drift* p : in_reading_order(c.drift)) {
    const Drift& d = *p;
    const std::string path = doc_path(skill_root, d.doc);
    const std::string line = std::to_string(std::max(1, d.doc.line));
    const std::string title = ui("drift.kind." + std::string(to_string(d.kind)));
    if (format == DriftFormat::Github)
      out += "::warning file=" + gh_escape(path, true) + ",line=" + line + ",title=" + gh_escape(title, true) +
             "::" + gh_escape(message(d, ui), false) + "\n";
    else
      out += path + ":" + line + ": warning: " + title + ": " + message(d, ui) + "\n";
  }
  return out;
}

int drift_check(const DriftCheckOptions& o, std::string& out, Diagnostics& diags) {
  std::error_code ec;
  if (!fs::is_directory(o.skill, ec)) {
    diags.error({o.skill, 0, 0}, "skill folder not found", "pass --skill PATH, the folder holding SKILL.md");
    return kExitError;
  }
  if (o.mbridge.empty() == o.code.empty()) {
    diags.error({"kbc drift", 0, 0}, "name the code to compare with: --mbridge PATH or --code DIR (one of them)",
                "--mbridge: a Megatron Bridge checkout; --code: snapshots already extracted (kb-sources/code)");
    return kExitError;
  }
  try {
    const TempDir tmp("kbc-drift");
    std::string code = o.code;
    if (!o.mbridge.empty()) {
      // The extractor reads <sources>/data/code-fields.tsv and writes
      // <sources>/code/<commit>/: a private sources folder whose data is ours.
      fs::create_directory_symlink(fs::absolute(o.data), fs::path(tmp.path()) / "data");
      ExtractOptions xo;
      xo.checkout = o.mbridge;
      xo.sources = tmp.path();
      xo.commit = o.commit;
      xo.date = o.date;
      xo.extractor = o.extractor;
      if (const int rc = extract_code(xo, diags); rc != kExitOk) return kExitError;
      code = tmp.path() + "/code";
    }
    CompileOptions co;
    co.sources = o.skill;
    co.data = o.data;
    co.code = code;
    EditionRow fallback;
    fallback.meta.lang = o.lang.empty() ? base_language_of(o.data, diags) : o.lang;
    fallback.meta.revision = o.revision;
    fallback.meta.span = {o.skill, 0, 0};
    co.fallback_edition = fallback;
    auto c = compile(co, diags);
    if (!c || diags.has_errors()) return kExitError;
    if (!c->code.newest()) {
      diags.error({code, 0, 0}, "no code snapshot found", "pass --mbridge PATH (a checkout) or --code DIR (holding <commit>/snapshot.tsv)");
      return kExitError;
    }
    out = render_drift_findings(*c, o.skill, o.lang, o.format, o.tool_version, diags);
    if (diags.has_errors()) return kExitError;
    return o.check && !c->drift.empty() ? kExitNoMatch : kExitOk;
  } catch (const std::exception& e) {
    diags.error({o.skill, 0, 0}, e.what(), "");
    return kExitError;
  }
}

}  // namespace kb
