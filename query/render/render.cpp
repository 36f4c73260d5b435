// Render stage: an Answer, a Listing or a SourcesReport as text (colour
// only on a terminal), Markdown, or JSON (docs/answer.schema.json,
// docs/listing.schema.json, docs/sources.schema.json), with the words of
// the answer's language from its Labels. Render reads no database: what it
// prints is what the earlier stages put into the IR (query/kbq.hpp).
#include <nlohmann/json.hpp>

#include <algorithm>

#include "base/text.hpp"
#include "query/kbq.hpp"

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

json dim_json(const Range& d) {
  if (d.exact()) return d.value();
  return kb::format_range(d);
}

struct Style {
  bool color;
  std::string bold(const std::string& s) const { return color ? "\x1b[1m" + s + "\x1b[0m" : s; }
  std::string status(Status s, const std::string& shown) const {
    if (!color) return shown;
    const char* c = s == Status::Pass ? "\x1b[32m" : s == Status::Fail ? "\x1b[31m" : "\x1b[33m";
    return c + shown + "\x1b[0m";
  }
};

std::string fallback_note(const Labels& labels, const Prose& p) {
  if (!p.fallback) return {};
  return " " + fill(fill(labels("fallback"), "lang", p.lang), "want", labels.lang());
}

std::string str(std::string_view v) { return std::string(v); }

json result_json(const Result& r) {
  json j = json::object();
  j["recipe"] = r.recipe.name;
  j["kind"] = str(to_string(r.recipe.kind));
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
                  {"impact", str(to_string(o.impact))},
                  {"sentence", o.sentence},
                  {"source", {{"file", o.source.file}, {"line", o.source.line}}}});
  j["overrides"] = ov;
  json rules = json::array();
  for (const auto& v : r.rules)
    rules.push_back({{"id", v.id}, {"status", str(to_string(v.status))}, {"detail", v.detail}, {"rule", prose_json(v.rule)}});
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

std::string render_result(const Labels& labels, const Result& r, const RenderOptions& o) {
  const bool md = o.format == Format::Markdown;
  const Style st{o.color && !md};
  const auto& L = r.layout;
  std::string out;
  auto heading = [&](const std::string& key) { out += md ? "\n**" + labels(key) + "**\n\n" : st.bold(labels(key)) + ":\n"; };
  auto item = [&](const std::string& s) { out += (md ? "- " : "  ") + s + "\n"; };
  out += md ? "### " + r.recipe.name + "\n\n" : st.bold(r.recipe.name) + "\n";
  std::string facts = str(to_string(r.recipe.kind)) + ", " + (r.recipe.mode.empty() ? std::string("?") : r.recipe.mode) + ", TP " +
                      kb::format_range(r.recipe.tp) + ", PP " + kb::format_range(r.recipe.pp) + ", CP " + kb::format_range(r.recipe.cp) +
                      ", EP " + kb::format_range(r.recipe.ep) + ", SP " + (r.recipe.sp ? (*r.recipe.sp ? "on" : "off") : "?") + ", GPUs " +
                      kb::format_range(r.recipe.gpus) + (r.recipe.seq_len ? ", seq " + std::to_string(r.recipe.seq_len) : "");
  if (!r.recipe.gpu_types.empty()) facts += ", " + kb::join(r.recipe.gpu_types, "/");
  out += (md ? "" : "  ") + labels("facts") + ": " + facts + "\n";
  std::vector<std::string> why;
  for (const auto& p : r.parts)
    why.push_back(labels("part_" + p.name) + " " + (p.points >= 0 ? "+" : "") + std::to_string(p.points) + " (" + p.why + ")");
  if (o.explain && !r.parts.empty())
    out += (md ? "\n" : "  ") + labels("score") + " " + std::to_string(r.score) + ": " + kb::join(why, ", ") + "\n";
  std::string layout = std::to_string(L.gpus) + " GPUs = " + std::to_string(L.nodes) + " × " + std::to_string(L.nproc) + " (" + L.hardware +
                       (L.hardware_assumed ? "?" : "") + "), TP " + kb::format_range(L.tp) + ", PP " + kb::format_range(L.pp) + ", CP " +
                       kb::format_range(L.cp) + ", EP " + kb::format_range(L.ep) + ", SP " +
                       (!L.tp.exact() ? "?"
                        : L.sp        ? "on"
                                      : "off");
  if (L.seq) layout += ", seq " + std::to_string(L.seq);
  if (L.dp) layout += ", DP " + std::to_string(*L.dp);
  if (L.edp) layout += ", EDP " + std::to_string(*L.edp);
  out += (md ? "\n" : "  ") + labels("layout") + ": " + layout + "\n";
  if (!r.dataset.empty()) out += (md ? "\n" : "  ") + labels("dataset") + ": " + r.dataset + "\n";
  heading("command");
  if (md)
    out += "```bash\n" + r.command + "\n```\n";
  else
    for (const auto& line : kb::split(r.command, '\n')) out += "    " + line + "\n";
  if (!r.overrides.empty()) {
    heading("overrides");
    for (const auto& ov : r.overrides)
      item(ov.key + "=" + ov.value + ": " + labels(str(to_string(ov.impact))) +
           (ov.source.file.empty() ? "" : " [" + ov.source.file + ":" + std::to_string(ov.source.line) + "]") +
           (ov.sentence.empty() ? "" : "\n" + std::string(md ? "  " : "      ") + "“" + ov.sentence + "”"));
  }
  heading("rules");
  for (const auto& v : r.rules)
    item(st.status(v.status, "[" + labels(str(to_string(v.status))) + "]") + " " + v.id + ": " + v.detail +
         (v.rule.source.file.empty() ? "" : " [" + v.rule.source.file + ":" + std::to_string(v.rule.source.line) + "]") +
         fallback_note(labels, v.rule));
  if (!r.pitfalls.empty()) {
    heading("pitfalls");
    for (const auto& p : r.pitfalls)
      item(p.text + " [" + p.source.file + ":" + std::to_string(p.source.line) + "]" + fallback_note(labels, p));
  }
  if (!r.notes.empty()) {
    heading("notes");
    for (const auto& n : r.notes) item(n);
  }
  heading("sources");
  for (const auto& s : r.sources) item(loc(s) + " " + s.what);
  return out;
}

json answer_json(const Answer& a) {
  json j = json::object();
  j["schema_version"] = kAnswerSchemaVersion;
  j["query"] = {{"text", a.query}, {"canonical", a.canonical}, {"lang", a.lang}};
  j["warnings"] = a.warnings;
  json results = json::array();
  for (const auto& r : a.results) results.push_back(result_json(r));
  j["results"] = results;
  return j;
}

// The question with a caret line under the code points [col, col + len).
std::string caret_line(const std::string& query, int col, int len) {
  std::string out = "  " + query + "\n  ";
  for (int i = 1; i < col; ++i) out += ' ';
  for (int i = 0; i < std::max(1, len); ++i) out += '^';
  return out + "\n";
}

}  // namespace

std::string render(const Answer& a, const Labels& labels, const RenderOptions& o) {
  if (o.format == Format::Json) return answer_json(a).dump(2) + "\n";
  // show and check print their one result alone.
  if (a.request != Request::Ask) return a.results.empty() ? std::string() : render_result(labels, a.results.front(), o);
  const bool md = o.format == Format::Markdown;
  std::string out = md ? "## " + labels("answer_for") + " `" + a.canonical + "`\n\n" : labels("answer_for") + ": " + a.canonical + "\n";
  for (const auto& w : a.warnings) out += (md ? "> " : "") + labels("warning") + ": " + w + "\n";
  if (a.results.empty()) out += labels("no_match") + "\n";
  int i = 0;
  for (const auto& r : a.results) {
    out += md ? "\n" : "\n" + std::to_string(++i) + ". ";
    out += render_result(labels, r, o);
  }
  return out;
}

std::string render(const Listing& l, const Labels& /*labels*/, const RenderOptions& o) {
  if (o.format == Format::Json) {
    json items = json::array();
    for (const auto& it : l.items)
      items.push_back(
          {{"id", it.id},
           {"text", it.text},
           {"lang", it.prose.lang},
           {"fallback", it.prose.fallback},
           {"source", {{"file", it.prose.source.file}, {"line", it.prose.source.line}, {"revision", it.prose.source.revision}}}});
    json j = json::object();
    j["schema_version"] = kAnswerSchemaVersion;
    j["kind"] = l.kind;
    j["lang"] = l.lang;
    j["items"] = items;
    return j.dump(2) + "\n";
  }
  std::string out;
  for (const auto& it : l.items) {
    const auto& src = it.prose.source;
    const std::string where =
        src.file + ":" + std::to_string(src.line) + " (rev " + std::to_string(src.revision) + ", " + it.prose.lang + ")";
    out += (o.format == Format::Markdown ? "- **" + it.key + "** " : it.key + ". ") + it.text + "\n   [" + where + "]\n";
  }
  return out;
}

std::string render(const SourcesReport& s, const Labels& /*labels*/, const RenderOptions& o) {
  if (o.format == Format::Json) {
    json j = json::object();
    j["schema_version"] = kAnswerSchemaVersion;
    auto& eds = j["editions"] = json::array();
    for (const auto& e : s.editions)
      eds.push_back(
          {{"file", e.file}, {"lang", e.lang}, {"revision", e.revision}, {"date", e.date}, {"translated_from", e.translated_from}});
    auto& miss = j["missing_translations"] = json::object();
    for (const auto& m : s.missing) miss[m.lang] = m.count;
    auto& cs = j["conflicts"] = json::array();
    for (const auto& c : s.conflicts)
      cs.push_back({{"entity", c.entity},
                    {"field", c.field},
                    {"winner", c.winner},
                    {"winner_revision", c.winner_revision},
                    {"older", c.older},
                    {"older_revision", c.older_revision},
                    {"older_source", c.older_source}});
    return j.dump(2) + "\n";
  }
  std::string out;
  for (const auto& e : s.editions)
    out += e.file + "  " + e.lang + "  rev " + std::to_string(e.revision) + (e.date.empty() ? "" : "  " + e.date) +
           (e.translated_from.empty() ? "" : "  translated from " + e.translated_from) + "\n";
  out += "\nmissing translations:\n";
  for (const auto& m : s.missing) out += "  " + m.lang + ": " + std::to_string(m.count) + "\n";
  out += "\nconflicts (newest revision wins):\n";
  for (const auto& c : s.conflicts)
    out += "  " + c.entity + " " + c.field + ": '" + c.older + "' (rev " + std::to_string(c.older_revision) + ", " + c.older_source +
           ") -> '" + c.winner + "' (rev " + std::to_string(c.winner_revision) + ")\n";
  return out;
}

std::string render_error(const Error& e, const std::string& question, const RenderOptions& o) {
  if (o.format == Format::Json) {
    json j = json::object();
    j["schema_version"] = kAnswerSchemaVersion;
    j["error"] = e.message;
    j["hint"] = e.hint.empty() ? json(nullptr) : json(e.hint);
    j["position"] = e.col > 0 ? json{{"col", e.col}, {"len", std::max(1, e.len)}} : json(nullptr);
    return j.dump(2) + "\n";
  }
  std::string out = "kbq: error: " + e.message + "\n";
  if (e.col > 0) out += caret_line(question, e.col, e.len);
  if (!e.hint.empty()) out += "  hint: " + e.hint + "\n";
  return out;
}

Labels::Labels(std::string lang, std::vector<std::pair<std::string, std::string>> texts)
    : lang_(std::move(lang)), texts_(std::move(texts)) {
  std::sort(texts_.begin(), texts_.end());
}

std::string Labels::operator()(const std::string& key) const {
  auto it = std::lower_bound(texts_.begin(), texts_.end(), std::pair<std::string, std::string>{key, {}},
                             [](const auto& a, const auto& b) { return a.first < b.first; });
  return it != texts_.end() && it->first == key ? it->second : key;
}

}  // namespace kbq
