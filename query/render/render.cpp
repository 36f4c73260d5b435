// Render stage (see render.hpp).
#include "query/render/render.hpp"

#include "base/text.hpp"

namespace kbq {
namespace {

using json = nlohmann::ordered_json;

std::string loc(const SourceRef& s) {
  return s.file + (s.line > 0 ? ":" + std::to_string(s.line) : "") + (s.revision > 0 ? " (rev " + std::to_string(s.revision) + ")" : "");
}

std::string fill(std::string text, const std::string& key, const std::string& value) {
  const std::string token = "{" + key + "}";
  for (auto at = text.find(token); at != std::string::npos; at = text.find(token, at + value.size())) text.replace(at, token.size(), value);
  return text;
}

json prose_json(const Prose& p) {
  json j = json::object();
  j["text"] = p.text;
  j["lang"] = p.lang;
  j["fallback"] = p.fallback;
  j["source"] = {{"file", p.source.file}, {"line", p.source.line}, {"revision", p.source.revision}};
  return j;
}

json dim_json(const Dim& d) {
  if (d.exact()) return d.value();
  return d.text();
}

struct Style {
  bool color;
  std::string bold(const std::string& s) const { return color ? "\x1b[1m" + s + "\x1b[0m" : s; }
  std::string status(const std::string& s, const std::string& shown) const {
    if (!color) return shown;
    const char* c = s == "pass" ? "\x1b[32m" : s == "fail" ? "\x1b[31m" : "\x1b[33m";
    return c + shown + "\x1b[0m";
  }
};

std::string fallback_note(Kb& kb, const Prose& p, const std::string& lang) {
  if (!p.fallback) return {};
  return " " + fill(fill(kb.label(lang, "fallback"), "lang", p.lang), "want", lang);
}

}  // namespace

json result_json(const Result& r) {
  json j = json::object();
  j["recipe"] = r.recipe.name;
  j["kind"] = r.recipe.kind;
  j["mode"] = r.recipe.mode.empty() ? json(nullptr) : json(r.recipe.mode);
  j["pattern"] = r.recipe.pattern;
  j["score"] = r.score;
  json parts = json::array();
  for (const auto& p : r.parts) parts.push_back({{"name", p.name}, {"points", p.points}, {"why", p.why}});
  j["score_parts"] = parts;
  const auto& L = r.layout;
  json facts = json::object();
  facts["family"] = r.recipe.family;
  facts["tp"] = dim_json(r.recipe.tp);
  facts["pp"] = dim_json(r.recipe.pp);
  facts["cp"] = dim_json(r.recipe.cp);
  facts["ep"] = dim_json(r.recipe.ep);
  facts["sp"] = r.recipe.sp ? json(*r.recipe.sp) : json(nullptr);
  facts["min_gpus"] = dim_json(r.recipe.gpus);
  facts["seq_len"] = r.recipe.seq_len ? json(r.recipe.seq_len) : json(nullptr);
  if (!r.recipe.gpu_types.empty()) facts["gpu_types"] = r.recipe.gpu_types;
  if (!r.recipe.notes.empty()) facts["notes"] = r.recipe.notes;
  j["facts"] = facts;
  json layout = json::object();
  layout["gpus"] = L.gpus;
  layout["nodes"] = L.nodes;
  layout["nproc_per_node"] = L.nproc;
  layout["hardware"] = L.hardware;
  layout["hardware_assumed"] = L.hardware_assumed;
  layout["tp"] = dim_json(L.tp);
  layout["pp"] = dim_json(L.pp);
  layout["cp"] = dim_json(L.cp);
  layout["ep"] = dim_json(L.ep);
  layout["sp"] = L.sp;
  layout["seq_len"] = L.seq ? json(L.seq) : json(nullptr);
  layout["dp"] = L.dp ? json(*L.dp) : json(nullptr);
  layout["edp"] = L.edp ? json(*L.edp) : json(nullptr);
  j["layout"] = layout;
  j["dataset"] = r.dataset.empty() ? json(nullptr) : json(r.dataset);
  j["command"] = r.command;
  json ov = json::array();
  for (const auto& o : r.overrides)
    ov.push_back({{"key", o.key},
                  {"value", o.value},
                  {"impact", o.impact},
                  {"sentence", o.sentence},
                  {"source", {{"file", o.source.file}, {"line", o.source.line}}}});
  j["overrides"] = ov;
  json rules = json::array();
  for (const auto& v : r.rules) rules.push_back({{"id", v.id}, {"status", v.status}, {"detail", v.detail}, {"rule", prose_json(v.rule)}});
  j["rules"] = rules;
  json pit = json::array();
  for (const auto& p : r.pitfalls) pit.push_back(prose_json(p));
  j["pitfalls"] = pit;
  j["notes"] = r.notes;
  json src = json::array();
  for (const auto& s : r.sources) src.push_back({{"file", s.file}, {"line", s.line}, {"revision", s.revision}, {"what", s.what}});
  j["sources"] = src;
  return j;
}

std::string render_result(Kb& kb, const Result& r, const RenderOptions& o) {
  if (o.format == Format::Json) return result_json(r).dump(2) + "\n";
  const bool md = o.format == Format::Markdown;
  const Style st{o.color && !md};
  const auto& L = r.layout;
  const std::string& lang = o.lang;
  std::string out;
  auto heading = [&](const std::string& key) {
    out += md ? "\n**" + kb.label(lang, key) + "**\n\n" : st.bold(kb.label(lang, key)) + ":\n";
  };
  auto item = [&](const std::string& s) { out += (md ? "- " : "  ") + s + "\n"; };
  out += md ? "### " + r.recipe.name + "\n\n" : st.bold(r.recipe.name) + "\n";
  std::string facts = r.recipe.kind + ", " + (r.recipe.mode.empty() ? std::string("?") : r.recipe.mode) + ", TP " + r.recipe.tp.text() +
                      ", PP " + r.recipe.pp.text() + ", CP " + r.recipe.cp.text() + ", EP " + r.recipe.ep.text() + ", SP " +
                      (r.recipe.sp ? (*r.recipe.sp ? "on" : "off") : "?") + ", GPUs " + r.recipe.gpus.text() +
                      (r.recipe.seq_len ? ", seq " + std::to_string(r.recipe.seq_len) : "");
  if (!r.recipe.gpu_types.empty()) facts += ", " + kb::join(r.recipe.gpu_types, "/");
  out += (md ? "" : "  ") + kb.label(lang, "facts") + ": " + facts + "\n";
  std::vector<std::string> why;
  for (const auto& p : r.parts)
    why.push_back(kb.label(lang, "part_" + p.name) + " " + (p.points >= 0 ? "+" : "") + std::to_string(p.points) + " (" + p.why + ")");
  if (!r.parts.empty())
    out += (md ? "\n" : "  ") + kb.label(lang, "score") + " " + std::to_string(r.score) + ": " + kb::join(why, ", ") + "\n";
  std::string layout = std::to_string(L.gpus) + " GPUs = " + std::to_string(L.nodes) + " × " + std::to_string(L.nproc) + " (" + L.hardware +
                       (L.hardware_assumed ? "?" : "") + "), TP " + L.tp.text() + ", PP " + L.pp.text() + ", CP " + L.cp.text() + ", EP " +
                       L.ep.text() + ", SP " +
                       (!L.tp.exact() ? "?"
                        : L.sp        ? "on"
                                      : "off");
  if (L.seq) layout += ", seq " + std::to_string(L.seq);
  if (L.dp) layout += ", DP " + std::to_string(*L.dp);
  if (L.edp) layout += ", EDP " + std::to_string(*L.edp);
  out += (md ? "\n" : "  ") + kb.label(lang, "layout") + ": " + layout + "\n";
  if (!r.dataset.empty()) out += (md ? "\n" : "  ") + kb.label(lang, "dataset") + ": " + r.dataset + "\n";
  heading("command");
  if (md)
    out += "```bash\n" + r.command + "\n```\n";
  else
    for (const auto& line : kb::split(r.command, '\n')) out += "    " + line + "\n";
  if (!r.overrides.empty()) {
    heading("overrides");
    for (const auto& ov : r.overrides)
      item(ov.key + "=" + ov.value + ": " + kb.label(lang, ov.impact) +
           (ov.source.file.empty() ? "" : " [" + ov.source.file + ":" + std::to_string(ov.source.line) + "]") +
           (ov.sentence.empty() ? "" : "\n" + std::string(md ? "  " : "      ") + "“" + ov.sentence + "”"));
  }
  heading("rules");
  for (const auto& v : r.rules)
    item(st.status(v.status, "[" + kb.label(lang, v.status) + "]") + " " + v.id + ": " + v.detail +
         (v.rule.source.file.empty() ? "" : " [" + v.rule.source.file + ":" + std::to_string(v.rule.source.line) + "]") +
         fallback_note(kb, v.rule, lang));
  if (!r.pitfalls.empty()) {
    heading("pitfalls");
    for (const auto& p : r.pitfalls)
      item(p.text + " [" + p.source.file + ":" + std::to_string(p.source.line) + "]" + fallback_note(kb, p, lang));
  }
  if (!r.notes.empty()) {
    heading("notes");
    for (const auto& n : r.notes) item(n);
  }
  heading("sources");
  for (const auto& s : r.sources) item(loc(s) + " " + s.what);
  return out;
}

std::string render_answer(Kb& kb, const Answer& a, const RenderOptions& o) {
  if (o.format == Format::Json) {
    json j = json::object();
    j["schema_version"] = kAnswerSchemaVersion;
    j["query"] = {{"text", a.query}, {"canonical", a.canonical}, {"lang", a.lang}};
    j["warnings"] = a.warnings;
    json results = json::array();
    for (const auto& r : a.results) results.push_back(result_json(r));
    j["results"] = results;
    return j.dump(2) + "\n";
  }
  const bool md = o.format == Format::Markdown;
  std::string out = md ? "## " + kb.label(o.lang, "answer_for") + " `" + a.canonical + "`\n\n"
                       : kb.label(o.lang, "answer_for") + ": " + a.canonical + "\n";
  for (const auto& w : a.warnings) out += (md ? "> " : "") + kb.label(o.lang, "warning") + ": " + w + "\n";
  if (a.results.empty()) out += kb.label(o.lang, "no_match") + "\n";
  int i = 0;
  for (const auto& r : a.results) {
    out += md ? "\n" : "\n" + std::to_string(++i) + ". ";
    out += render_result(kb, r, o);
  }
  return out;
}

std::string caret_line(const std::string& query, const kbq::dsl::Span& span) {
  std::string out = "  " + query + "\n  ";
  for (int i = 1; i < span.col; ++i) out += ' ';
  for (int i = 0; i < std::max(1, span.len); ++i) out += '^';
  return out + "\n";
}

}  // namespace kbq
