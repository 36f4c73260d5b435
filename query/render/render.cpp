// Render stage: an Answer, a Listing or a SourcesReport as text (colour
// only on a terminal), Markdown, or JSON (docs/answer.schema.json,
// docs/listing.schema.json, docs/sources.schema.json), with the words of
// the answer's language from its Labels. Render reads no database: what it
// prints is what the earlier stages put into the IR (query/kbq.hpp).
//
// The default text answer is for a person in a hurry: the recommendation and
// why, the layout on one line, memory per GPU, the batch, the command with
// every size pinned, at most three caveats, then up to two alternatives, one
// line each. Everything else (every rule's verdict, the ranking, the
// overrides' impact classes and sentences, notes, sources) comes with
// --explain, and always in JSON.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <variant>

#include "base/diag.hpp"
#include "base/escape.hpp"
#include "base/markdown.hpp"
#include "base/text.hpp"
#include "query/kbq.hpp"
#include "query/render/json_write.hpp"

namespace kbq {
namespace {

using json = nlohmann::ordered_json;

std::string fill(const std::string& text, const std::vector<std::pair<std::string, std::string>>& vars) {
  return kb::fill_placeholders(text, vars);  // one pass: no value expands into another
}

std::string str(std::string_view v) { return std::string(v); }

std::string num(double v) { return kb::one_decimal(v); }

std::string loc(const SourceRef& s) {
  return s.file + (s.line > 0 ? ":" + std::to_string(s.line) : "") + (s.revision > 0 ? " (rev " + std::to_string(s.revision) + ")" : "");
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

// --- JSON -------------------------------------------------------------------------------

// The answer as JSON, over either JSON type: `ordered_json` keeps the
// fields in the order written here (--format json), `nlohmann::json` sorts
// every object's keys as it is built (a --batch record), with no copy.
template <class json>
struct AnswerJson {
  static json opt_json(const std::optional<long long>& v) { return v ? json(*v) : json(nullptr); }

  static json prose_json(const Prose& p) {
    return {{"text", p.text},
            {"lang", p.lang},
            {"fallback", p.fallback},
            {"source", {{"file", p.source.file}, {"line", p.source.line}, {"revision", p.source.revision}}}};
  }

  // A verdict number as JSON: null when none.
  static json value_json(const std::monostate&) { return nullptr; }
  static json value_json(long long v) { return v; }
  static json value_json(double v) { return v; }
  static json value_json(const std::string& v) { return v; }
  static json value_json(const std::vector<long long>& v) { return v; }

  // The words of a command as a POSIX shell splits them (kb::shell_split:
  // quotes removed, line continuations joined, $NAME as written).
  static json argv_json(const std::string& command) {
    json words = json::array();
    for (auto& w : kb::shell_split(command)) words.push_back(std::move(w));
    return words;
  }

  // `want(key)`: whether the record needs the result's part `key` (a
  // --select that reads none of it leaves it out).
  template <typename Want>
  static json result_json(const Result& r, const Want& want) {
    const Recipe& rc = r.recipe;
    json j = json::object();
    j["recipe"] = rc.name;
    j["kind"] = str(to_string(rc.kind));
    j["mode"] = rc.mode.empty() ? json(nullptr) : json(rc.mode);
    j["launch_mode"] = rc.launch_mode;
    j["model"] = rc.model.empty() ? json(nullptr) : json(rc.model);
    j["modality"] = rc.modality;
    j["runnable"] = r.runnable;
    j["substitute"] = r.substitute;
    j["why"] = r.why;
    j["rank"] = r.score;
    if (want("score_parts")) {
      json parts = json::array();
      for (const auto& p : r.parts) parts.push_back({{"name", p.name}, {"points", p.points}, {"why", p.why}});
      j["score_parts"] = std::move(parts);
    }
    if (want("facts"))
      j["facts"] = {{"target", rc.target},
                    {"commit", rc.commit},
                    {"tp", opt_json(rc.tp)},
                    {"pp", opt_json(rc.pp)},
                    {"vp", opt_json(rc.vp)},
                    {"cp", opt_json(rc.cp)},
                    {"ep", opt_json(rc.ep)},
                    {"etp", opt_json(rc.etp)},
                    {"sp", rc.sp ? json(*rc.sp) : json(nullptr)},
                    {"seq_len", opt_json(rc.seq_len)},
                    {"gbs", opt_json(rc.gbs)},
                    {"mbs", opt_json(rc.mbs)},
                    {"dataset", rc.dataset},
                    {"precision", rc.precision},
                    {"native_gpus", opt_json(rc.native_gpus)},
                    {"native_hardware", rc.native_hardware},
                    {"min_gpus", opt_json(rc.min_gpus)}};
    const Layout& L = r.layout;
    if (want("layout"))
      j["layout"] = {{"gpus", L.gpus},
                     {"nodes", L.nodes},
                     {"nproc_per_node", L.nproc},
                     {"hardware", L.hardware},
                     {"hardware_assumed", L.hardware_assumed},
                     {"tp", L.tp},
                     {"pp", L.pp},
                     {"vp", L.vp},
                     {"cp", L.cp},
                     {"ep", L.ep},
                     {"etp", L.etp},
                     {"sp", L.sp},
                     {"dp", L.dp},
                     {"edp", L.edp},
                     {"seq_len", L.seq}};
    const Memory& M = r.memory;
    if (want("memory"))
      j["memory"] = {{"known", M.known},
                     {"per_gpu_gib", M.per_gpu_gib},
                     {"capacity_gib", M.capacity_gib},
                     {"fits", M.fits},
                     {"parts",
                      {{"weights", M.weights},
                       {"grads", M.grads},
                       {"optimizer", M.optimizer},
                       {"activations", M.activations},
                       {"overhead", M.overhead}}},
                     {"unknown_reason", M.unknown_reason.empty() ? json(nullptr) : json(M.unknown_reason)},
                     {"assumptions", M.assumptions}};
    j["batch"] = {{"gbs", r.batch.gbs}, {"mbs", r.batch.mbs}, {"dp", r.batch.dp}, {"grad_accum", r.batch.grad_accum}};
    j["dataset"] = r.dataset.empty() ? json(nullptr) : json(r.dataset);
    j["command"] = r.command;
    if (want("argv")) j["argv"] = argv_json(r.command);
    if (want("launch")) {  // what each node runs (multi-node library commands)
      const NodeLaunch& N = r.launch;
      json vars = json::array(), nodes = json::array();
      for (const auto& v : N.variables) vars.push_back({{"name", v.name}, {"role", v.role}, {"meaning", v.meaning}});
      if (!N.variables.empty())
        for (long long i = 0; i < N.nodes; ++i) {
          json env = json::object();
          for (const auto& v : N.variables) env[v.name] = v.role == "node_rank" ? json(std::to_string(i)) : json(nullptr);
          nodes.push_back({{"node_rank", i}, {"env", std::move(env)}});
        }
      j["launch"] = {{"nodes", N.nodes},
                     {"nproc_per_node", N.nproc_per_node},
                     {"ranks", N.ranks},
                     {"variables", std::move(vars)},
                     {"per_node", std::move(nodes)}};
    }
    if (want("before_run")) {
      json before = json::array();
      for (const auto& b : r.before_run)
        before.push_back(
            {{"what", b.what}, {"text", b.text}, {"command", b.command}, {"argv", argv_json(b.command)}, {"source", b.source}});
      j["before_run"] = std::move(before);
    }
    if (want("overrides")) j["overrides"] = overrides_json(r);
    if (want("rules")) j["rules"] = rules_json(r);
    if (want("pitfalls")) {
      json pit = json::array();
      for (const auto& p : r.pitfalls) pit.push_back(prose_json(p));
      j["pitfalls"] = std::move(pit);
    }
    j["caveats"] = r.caveats;
    j["notes"] = r.notes;
    j["min_gpus"] = r.min_gpus > 0 ? json(r.min_gpus) : json(nullptr);
    const Throughput& T = r.throughput;  // docs/throughput.md
    if (want("throughput")) {
      json tsrc = json::array();
      for (const auto& s : T.sources) tsrc.push_back({{"file", s.file}, {"line", s.line}, {"what", s.what}});
      j["throughput"] = {
          {"basis", str(to_string(T.basis))},
          {"tokens_per_s_per_gpu", T.tokens_per_s_per_gpu},
          {"tokens_per_s", T.tokens_per_s},
          {"tflops_per_gpu", T.tflops_per_gpu},
          {"mfu", T.mfu},
          {"step_time_s", T.step_time_s},
          {"error_band_pct", T.error_band_pct},
          {"method", T.method},
          {"bubble_pct", T.bubble_pct},
          {"how", T.how},
          {"source", T.sources.empty() ? json(nullptr) : json(T.sources.front().file + ":" + std::to_string(T.sources.front().line))},
          {"sources", std::move(tsrc)}};
    }
    j["time_to_train"] = r.time_to_train ? json{{"tokens", r.time_to_train->tokens}, {"seconds", r.time_to_train->seconds}} : json(nullptr);
    if (want("sources")) {
      json src = json::array();
      for (const auto& s : r.sources) src.push_back({{"file", s.file}, {"line", s.line}, {"revision", s.revision}, {"what", s.what}});
      j["sources"] = std::move(src);
    }
    return j;
  }

  static json overrides_json(const Result& r) {
    json ov = json::array();
    for (const auto& o : r.overrides)
      ov.push_back({{"key", o.key},
                    {"value", o.value},
                    {"recipe_value", o.recipe_value.empty() ? json(nullptr) : json(o.recipe_value)},
                    {"changed", !o.pinned_only},
                    {"impact", str(to_string(o.impact))},
                    {"sentence", o.sentence},
                    {"source", {{"file", o.source.file}, {"line", o.source.line}}}});
    return ov;
  }

  static json rules_json(const Result& r) {
    json rules = json::array();
    for (const auto& v : r.rules) {
      // The verdict's numbers by name: what a program reads instead of the words.
      json numbers = json::object();
      for (const auto& n : v.numbers) numbers[n.name] = std::visit([](const auto& x) { return value_json(x); }, n.value);
      rules.push_back({{"id", v.id},
                       {"enforces", v.enforces.empty() ? json(nullptr) : json(v.enforces)},
                       {"status", str(to_string(v.status))},
                       {"numbers", std::move(numbers)},
                       {"detail", v.detail},
                       {"rule", prose_json(v.rule)}});
    }
    return rules;
  }

  // With a --select, only the parts its pointers read (BatchSelect::reads):
  // the first results_read() results, and of each only its parts they read.
  static json answer_json(const Answer& a, const BatchSelect* select = nullptr) {
    const std::size_t results = select ? select->results_read() : SIZE_MAX;
    auto want = [&](std::string_view key) { return !select || select->reads({"answer", key}); };
    json j = json::object();
    j["schema_version"] = kAnswerSchemaVersion;
    j["verdict"] = str(to_string(a.verdict));
    j["query"] = {{"text", a.query}, {"canonical", a.canonical}, {"lang", a.lang}};
    j["warnings"] = a.warnings;
    j["headline"] = a.headline.empty() ? json(nullptr) : json(a.headline);
    json shown = json::array();
    for (std::size_t i = 0; i < a.results.size() && i < results; ++i) {
      const std::string index = std::to_string(i);
      shown.push_back(result_json(a.results[i], [&](std::string_view key) {
        return !select || select->reads({"answer", "results", index, key});
      }));
    }
    j["results"] = std::move(shown);
    j["min_gpus"] = a.min_gpus > 0 ? json(a.min_gpus) : json(nullptr);
    json alts = json::array();
    if (want("alternatives"))
      for (const auto& x : a.alternatives)
        alts.push_back({{"kind", x.kind},
                        {"recipe", x.recipe},
                        {"gpus", x.gpus},
                        {"hardware", x.hardware},
                        {"why", x.why},
                        {"command", x.command},
                        {"argv", x.command.empty() ? json(nullptr) : argv_json(x.command)}});
    j["alternatives"] = std::move(alts);
    j["no_match"] = a.no_match.empty() ? json(nullptr) : json(a.no_match);
    return j;
  }
};

json answer_json(const Answer& a) { return AnswerJson<json>::answer_json(a); }

// --- text and Markdown -----------------------------------------------------------------

// "TP 1 · PP 1 · EP 16 · DP 16": the sizes that matter for this recipe.
// "TP 4 (recipe: 8) · PP 2 · CP 1 · SP · DP 1": a size the answer changes
// from the recipe's own says what the recipe sets.
std::string sizes(const Labels& lb, const Result& r) {
  const Layout& L = r.layout;
  const Recipe& rc = r.recipe;
  auto dim = [&](const char* name, long long now, const std::optional<long long>& own) {
    std::string s = std::string(name) + " " + std::to_string(now);
    if (own && *own != now) s += " " + fill(lb("line.recipe_value"), {{"value", std::to_string(*own)}});
    return s;
  };
  std::vector<std::string> s{dim("TP", L.tp, rc.tp), dim("PP", L.pp, rc.pp)};
  if (L.vp > 0) s.push_back(dim("VP", L.vp, rc.vp));
  s.push_back(dim("CP", L.cp, rc.cp));
  if (rc.moe) {
    s.push_back(dim("EP", L.ep, rc.ep));
    if (L.etp > 1) s.push_back(dim("ETP", L.etp, rc.etp));
  }
  if (L.sp) s.push_back(rc.sp == false ? "SP " + fill(lb("line.recipe_value"), {{"value", lb("line.no_sp")}}) : "SP");
  if (!L.sp && rc.sp == true) s.push_back(lb("line.no_sp") + " " + fill(lb("line.recipe_value"), {{"value", "SP"}}));
  if (L.dp > 0) s.push_back("DP " + std::to_string(L.dp));  // none: the sizes do not divide the GPUs (a caveat says so)
  return kb::join(s, " · ");
}

// "64 × H100 (8 nodes, assumed)".
std::string where(const Labels& lb, const Result& r) {
  const Layout& L = r.layout;
  std::vector<std::string> extra;
  if (L.nodes > 1) extra.push_back(fill(lb("line.nodes"), {{"nodes", std::to_string(L.nodes)}}));
  if (L.hardware_assumed) extra.push_back(lb("line.assumed"));
  return std::to_string(L.gpus) + " × " + L.hardware_name + (extra.empty() ? "" : " (" + kb::join(extra, ", ") + ")");
}

// `text` (one line of prose) wrapped to `width` terminal columns: the first
// line after `first`, the others after `rest`. Lines break at spaces, and
// between wide (CJK) characters, which Chinese and Japanese write without
// spaces; a word longer than the line (a path, a URL) stays whole. ANSI
// colour sequences take no column. A text with line breaks keeps them,
// each line wrapped on its own after its own leading spaces.
std::string wrapped(std::string_view text, std::string_view first, std::string_view rest, int width) {
  if (width <= 0) return std::string(first) + std::string(text);
  if (const size_t nl = text.find('\n'); nl != std::string_view::npos) {
    const std::string_view next = text.substr(nl + 1);
    const size_t indent = std::min(next.find_first_not_of(' '), next.size());
    const std::string lead(next.substr(0, indent));
    return wrapped(text.substr(0, nl), first, rest, width) + "\n" + wrapped(next.substr(indent), lead, lead + "  ", width);
  }
  // Units: a run of narrow characters, or one wide character; `space`
  // says whether spaces came before it.
  struct Unit {
    std::string bytes;
    int cols = 0;
    bool space = false;
  };
  std::vector<Unit> units;
  bool space = false;
  const kb::AsciiProperties& ascii = kb::ascii_properties();
  for (size_t i = 0; i < text.size();) {
    if (text[i] == ' ') {
      space = true;
      ++i;
      continue;
    }
    // A unit ends at a space, and around a wide character, except before a
    // closing mark and after an opening one (Unicode's line breaking: no
    // break before "、。）」", none after "（「").
    const size_t begin = i;
    int cols = 0;
    bool wide_before = false, opener = false;
    while (i < text.size() && text[i] != ' ') {
      if (text[i] == '\x1b') {  // an ANSI sequence: up to its final letter, no column
        while (i < text.size() && !std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
        if (i < text.size()) ++i;
        continue;
      }
      size_t j = i;
      int w;
      kb::BreakClass bc;
      if (const auto b = static_cast<unsigned char>(text[i]); b < 0x80) {
        w = ascii.width[b];
        bc = ascii.breaks[b];
        ++j;
      } else {
        const char32_t cp = kb::next_code_point(text, j);
        w = kb::display_width(cp);
        bc = kb::break_class(cp);
      }
      if (i > begin && !opener && bc != kb::BreakClass::Closing && (w == 2 || wide_before)) break;
      cols += w;
      i = j;
      wide_before = w == 2;
      opener = bc == kb::BreakClass::Opening;
    }
    // A number stays with the word before it ("PP 1", "micro 1"): a unit
    // of digits (and the marks that close it) joins the unit before.
    const std::string_view bytes = text.substr(begin, i - begin);
    const bool number = std::isdigit(static_cast<unsigned char>(bytes.front())) != 0 &&
                        bytes.find_first_not_of("0123456789.,%)];:") == std::string_view::npos;
    if (number && !units.empty()) {
      Unit& before = units.back();
      before.bytes += std::string(space ? " " : "") + std::string(bytes);
      before.cols += (space ? 1 : 0) + cols;
    } else {
      units.push_back({std::string(bytes), cols, space});
    }
    space = false;
  }
  auto width_of = [](std::string_view s) {
    int n = 0;
    for (size_t i = 0; i < s.size();) n += kb::display_width(kb::next_code_point(s, i));
    return n;
  };
  std::string out(first);
  int col = width_of(first);
  const int rest_cols = width_of(rest);
  bool empty = true;  // nothing on this line yet after its prefix
  for (const auto& u : units) {
    const int need = (u.space && !empty ? 1 : 0) + u.cols;
    if (!empty && col + need > width) {
      out += "\n";
      out += rest;
      col = rest_cols;
      empty = true;
    }
    if (u.space && !empty) {
      out += ' ';
      ++col;
    }
    out += u.bytes;
    col += u.cols;
    empty = false;
  }
  return out;
}

class TextWriter {
 public:
  TextWriter(const Labels& lb, const RenderOptions& o) : lb_(lb), o_(o), md_(o.format == Format::Markdown), st_{o.color && !md_} {}

  std::string out;

  // A line of text, a list item, a heading: in Markdown, the text escaped
  // for prose (kb::md::text) and the markup kbq's own.
  void line(const std::string& s, int indent = 2) {
    const std::string lead(static_cast<size_t>(indent), ' ');
    out += (md_ ? kb::md::text(s) : wrapped(s, lead, lead + "  ", o_.width)) + "\n";
  }
  void item(const std::string& s, int indent = 4) {
    const std::string lead(static_cast<size_t>(indent), ' ');
    out += (md_ ? "- " + kb::md::text(s) : wrapped(s, lead + "- ", lead + "  ", o_.width)) + "\n";
  }
  // A line of its own at the left margin (the headline, a verdict, a warning).
  void para(const std::string& s) { out += (md_ ? kb::md::text(s) : wrapped(s, "", "  ", o_.width)) + "\n"; }
  // One field of a result (layout, memory, batch, throughput): a line, or
  // in Markdown an item of the result's list, so that each field renders
  // on its own line.
  void field(const std::string& s) { out += (md_ ? "- " + kb::md::text(s) : wrapped(s, "  ", "    ", o_.width)) + "\n"; }
  // A label over a block (command, caveats): in Markdown its own paragraph.
  void label(const std::string& s) {
    if (md_)
      out += "\n" + kb::md::text(s) + "\n\n";
    else
      line(s);
  }
  void heading(const std::string& key) {
    if (md_)
      out += "\n**" + kb::md::text(lb_(key)) + "**\n\n";
    else
      line(st_.bold(lb_(key)));
  }

  // The full block of the first result (or of show / check).
  void result(const Result& r, bool numbered) {
    const std::string title = (numbered ? std::to_string(r.score) + ". " : std::string()) + r.recipe.name;
    if (md_)
      out += "### " + (numbered ? std::to_string(r.score) + ". " : std::string()) + kb::md::code(r.recipe.name) + "\n\n" +
             kb::md::text(r.why) + "\n\n";
    else
      out += wrapped(st_.bold(title) + " — " + r.why, "", "   ", o_.width) + "\n";
    field(where(lb_, r) + ": " + sizes(lb_, r));
    memory(r);
    batch(r);
    throughput(r);
    label(lb_("line.command"));
    if (md_)
      out += kb::md::fence(r.command, "bash") + "\n";
    else
      for (const auto& l : kb::split(r.command, '\n')) out += "      " + l + "\n";
    per_node(r.launch);
    before_run(r);
    if (!r.caveats.empty()) {
      label(lb_("line.caveats"));
      for (const auto& c : r.caveats) item(c);
    }
    if (o_.explain) explain(r);
  }

  // One line of an alternative result.
  void short_result(const Result& r) {
    const std::string rest =
        "— " + r.why + " (" + where(lb_, r) + ": " + sizes(lb_, r) + (r.runnable ? "" : "; " + lb_("line.not_runnable")) + ")";
    if (md_)
      out += "- " + std::to_string(r.score) + ". " + kb::md::code(r.recipe.name) + " " + kb::md::text(rest) + "\n";
    else
      item(std::to_string(r.score) + ". " + r.recipe.name + " " + rest, 4);
  }

 private:
  // What each node of a multi-node command runs: the same command with its
  // variables (node 0, 1 and the last; every variable's meaning once).
  void per_node(const NodeLaunch& N) {
    if (N.variables.empty()) return;
    label(fill(lb_("line.per_node"),
               {{"nodes", std::to_string(N.nodes)}, {"nproc", std::to_string(N.nproc_per_node)}, {"ranks", std::to_string(N.ranks)}}));
    auto node = [&](long long i) {
      std::vector<std::string> env;
      for (const auto& v : N.variables)
        env.push_back(v.name + "=" + (v.role == "node_rank" ? std::to_string(i) : lb_("launch.first_node_value")));
      item(fill(lb_("line.node"), {{"rank", std::to_string(i)}}) + " " + kb::join(env, " "));
    };
    for (long long i = 0; i < std::min(N.nodes, 2LL); ++i) node(i);
    if (N.nodes > 3) item("…");  // the nodes between: as node 1, with their index
    if (N.nodes > 2) node(N.nodes - 1);
    for (const auto& v : N.variables) item(v.name + ": " + v.meaning);
  }

  // The steps before the run, each with its command and source.
  void before_run(const Result& r) {
    if (r.before_run.empty() || !r.runnable) return;  // a command that does not run as is: nothing to prepare for
    label(lb_("line.before_run"));
    for (const auto& b : r.before_run) {
      item(b.text + (b.source.empty() ? "" : " [" + b.source + "]"));
      if (b.command.empty()) continue;
      if (md_) {
        out += "\n";
        for (const auto& l : kb::split(kb::md::fence(b.command, "bash"), '\n')) out += "  " + l + "\n";
      } else {
        for (const auto& l : kb::split(b.command, '\n')) out += "        " + l + "\n";
      }
    }
  }

  void memory(const Result& r) {
    const Memory& M = r.memory;
    if (!M.known) {
      field(fill(lb_("line.memory_unknown"), {{"reason", M.unknown_reason}}));
      return;
    }
    const std::string parts = fill(lb_("line.memory_parts"), {{"weights", num(M.weights)},
                                                              {"grads", num(M.grads)},
                                                              {"optimizer", num(M.optimizer)},
                                                              {"activations", num(M.activations)},
                                                              {"overhead", num(M.overhead)}});
    field(fill(lb_(M.fits ? "line.memory" : "line.memory_over"),
               {{"per_gpu", num(M.per_gpu_gib)}, {"capacity", num(M.capacity_gib)}, {"parts", parts}}));
  }

  void batch(const Result& r) {
    const Batch& B = r.batch;
    if (B.gbs <= 0) return;
    if (B.grad_accum > 0)
      field(fill(lb_("line.batch"), {{"gbs", std::to_string(B.gbs)},
                                     {"mbs", std::to_string(B.mbs)},
                                     {"dp", std::to_string(B.dp)},
                                     {"accum", std::to_string(B.grad_accum)}}));
    else
      field(fill(lb_("line.batch_uneven"), {{"gbs", std::to_string(B.gbs)}, {"mbs", std::to_string(B.mbs)}, {"dp", std::to_string(B.dp)}}));
  }

  // Expected speed and the time to train the question's budget (docs/throughput.md).
  void throughput(const Result& r) {
    const Throughput& T = r.throughput;
    if (T.basis == ThroughputBasis::None) {
      if (!T.how.empty()) field(fill(lb_("line.throughput_none"), {{"why", T.how}}));
    } else {
      field(fill(lb_(T.basis == ThroughputBasis::Measured ? "line.throughput" : "line.throughput_estimated"),
                 {{"tokens", count(T.tokens_per_s_per_gpu)},
                  {"job", count(T.tokens_per_s)},
                  {"step", seconds(T.step_time_s)},
                  {"band", num(T.error_band_pct)},
                  {"how", T.how}}));
    }
    if (!r.time_to_train) return;
    const TimeToTrain& t = *r.time_to_train;
    if (t.seconds > 0)
      field(fill(lb_("line.time_to_train"), {{"tokens", count(t.tokens)}, {"duration", duration(t.seconds)}}));
    else
      field(fill(lb_("line.time_to_train_unknown"), {{"tokens", count(t.tokens)}}));
  }

  static std::string count(double v) { return format_count(v); }
  static std::string seconds(double s) { return format_seconds(s); }
  std::string duration(double s) const { return format_duration(s, lb_); }

  void explain(const Result& r) {
    heading("rules");
    for (const auto& v : r.rules)
      item(st_.status(v.status, "[" + lb_(str(to_string(v.status))) + "]") + " " + v.detail +
           (v.rule.source.file.empty() ? "" : " [" + v.rule.source.file + ":" + std::to_string(v.rule.source.line) + "]") +
           (v.rule.fallback ? " " + fill(lb_("fallback"), {{"lang", v.rule.lang}, {"want", lb_.lang()}}) : ""));
    if (!r.overrides.empty()) {
      heading("overrides");
      for (const auto& o : r.overrides)
        item(o.key + "=" + o.value + (o.pinned_only ? " (" + lb_("line.pinned") + ")" : "") + ": " + lb_(str(to_string(o.impact))) +
             (o.source.file.empty() ? "" : " [" + o.source.file + ":" + std::to_string(o.source.line) + "]") +
             (o.sentence.empty() || o.pinned_only ? "" : "\n" + std::string(md_ ? "  " : "        ") + "“" + o.sentence + "”"));
    }
    heading("score");
    for (const auto& p : r.parts) item(lb_("part_" + p.name) + ": " + p.why);
    if (!r.pitfalls.empty()) {
      heading("pitfalls");
      for (const auto& p : r.pitfalls)
        item(p.text + " [" + p.source.file + ":" + std::to_string(p.source.line) + "]" +
             (p.fallback ? " " + fill(lb_("fallback"), {{"lang", p.lang}, {"want", lb_.lang()}}) : ""));
    }
    if (!r.notes.empty()) {
      heading("notes");
      for (const auto& n : r.notes) item(n);
    }
    heading("sources");
    for (const auto& s : r.sources) item(loc(s) + " " + s.what);
  }

  const Labels& lb_;
  const RenderOptions& o_;
  bool md_;
  Style st_;
};

std::string answer_text(const Answer& a, const Labels& lb, const RenderOptions& o) {
  TextWriter w(lb, o);
  const bool md = o.format == Format::Markdown;
  if (a.request != Request::Ask) {
    for (const auto& x : a.warnings) {
      if (md)
        w.out += "> " + kb::md::text(lb("warning") + ": " + x) + "\n";
      else
        w.para(lb("warning") + ": " + x);
    }
    if (!a.results.empty()) w.result(a.results.front(), false);
    return w.out;
  }
  w.out +=
      md ? "## " + kb::md::text(lb("answer_for")) + " " + kb::md::code(a.canonical) + "\n\n" : lb("answer_for") + ": " + a.canonical + "\n";
  for (const auto& x : a.warnings) {
    if (md)
      w.out += "> " + kb::md::text(lb("warning") + ": " + x) + "\n";
    else
      w.para(lb("warning") + ": " + x);
  }
  if (a.verdict == Outcome::NoMatch) {
    const std::string said = lb("no_match") + (a.no_match.empty() ? "" : " " + a.no_match);
    w.para(said);
    return w.out;
  }
  w.out += "\n";
  if (!a.headline.empty()) {
    w.para(a.headline);
    w.out += "\n";
  }
  if (a.verdict == Outcome::NotPossible) {
    const Result& best = a.results.front();
    const std::string verdict =
        a.min_gpus > 0 ? fill(lb("verdict.not_possible"), {{"gpus", std::to_string(best.layout.gpus)},
                                                           {"hardware", best.layout.hardware_name},
                                                           {"recipe", best.recipe.name},
                                                           {"min", std::to_string(a.min_gpus)}})
        : a.searched_up_to > 0
            ? fill(lb("verdict.not_possible_any_count"),
                   {{"max", std::to_string(a.searched_up_to)}, {"hardware", best.layout.hardware_name}, {"recipe", best.recipe.name}})
            : fill(lb("verdict.not_possible_any"),
                   {{"gpus", std::to_string(best.layout.gpus)}, {"hardware", best.layout.hardware_name}, {"recipe", best.recipe.name}});
    w.para(verdict);
    if (md) w.out += "\n";
    if (!a.alternatives.empty()) {
      w.line(lb("line.fits_instead"), 0);
      for (size_t i = 0; i < a.alternatives.size(); ++i) {
        const auto& x = a.alternatives[i];
        w.item(x.why, 2);
        // The first (the same recipe on more GPUs, when it fits there) with its command.
        if (i == 0 && !x.command.empty()) {
          if (md) {  // inside its list item: every line indented as the item's text
            w.out += "\n";
            for (const auto& l : kb::split(kb::md::fence(x.command, "bash"), '\n')) w.out += "  " + l + "\n";
          } else
            for (const auto& l : kb::split(x.command, '\n')) w.out += "      " + l + "\n";
        }
      }
    }
    w.out += "\n";
  }
  w.result(a.results.front(), true);
  if (a.results.size() > 1) {
    w.out += "\n";
    w.line(lb("line.alternatives"), 0);
    for (size_t i = 1; i < a.results.size(); ++i) {
      if (o.explain)
        w.result(a.results[i], true);
      else
        w.short_result(a.results[i]);
    }
  }
  return w.out;
}

// The question with a caret line under the code points [col, col + len).
std::string caret_line(const std::string& query, int col, int len) {
  std::string out = "  " + query + "\n  ";
  for (int i = 1; i < col; ++i) out += ' ';
  for (int i = 0; i < std::max(1, len); ++i) out += '^';
  return out + "\n";
}

}  // namespace

std::variant<std::string, Error> render_slurm(const Answer& a, const Labels& lb) {
  if (a.results.empty()) return Error{lb("slurm.no_match"), lb("slurm.no_match_hint")};
  const Result& r = a.results.front();
  if (a.verdict != Outcome::Ok || !r.runnable)
    return Error{fill(lb("slurm.not_possible"),
                      {{"recipe", r.recipe.name}, {"gpus", std::to_string(r.layout.gpus)}, {"hardware", r.layout.hardware_name}}),
                 lb("slurm.not_possible_hint")};
  if (r.slurm_script.empty()) return Error{r.slurm_none, lb("slurm.benchmark_hint")};
  return r.slurm_script;
}

// The figures of a throughput as every answer prints them (kbq.hpp).
std::string format_count(double v) {
  static const std::pair<double, const char*> units[] = {{1e15, " P"}, {1e12, " T"}, {1e9, " B"}, {1e6, " M"}};
  char buf[48];
  for (const auto& [scale, unit] : units)
    if (v >= scale) {
      const double x = v / scale;
      std::snprintf(buf, sizeof buf, x >= 100 ? "%.0f%s" : x >= 10 ? "%.1f%s" : "%.2f%s", x, unit);
      return buf;
    }
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string format_seconds(double s) {
  char buf[48];
  std::snprintf(buf, sizeof buf, s >= 100 ? "%.0f" : s >= 10 ? "%.1f" : "%.2f", s);
  return buf;
}

std::string format_duration(double s, const Labels& lb) {
  char buf[48];
  if (s >= 86400) {
    std::snprintf(buf, sizeof buf, s >= 8640000 ? "%.0f" : "%.1f", s / 86400);  // whole days from 100 on
    return fill(lb("unit.days"), {{"n", buf}});
  }
  std::snprintf(buf, sizeof buf, "%.1f", s / 3600);
  return fill(lb("unit.hours"), {{"n", buf}});
}

std::string render(const Answer& a, const Labels& labels, const RenderOptions& o) {
  if (o.format == Format::Json) return answer_json(a).dump(2) + "\n";
  if (o.format == Format::Slurm) {
    auto script = render_slurm(a, labels);
    return std::holds_alternative<std::string>(script) ? std::get<std::string>(script) : std::string();
  }
  return answer_text(a, labels, o);
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
    j["items"] = std::move(items);
    return j.dump(2) + "\n";
  }
  std::string out;
  for (const auto& it : l.items) {
    const auto& src = it.prose.source;
    const std::string where =
        src.file + ":" + std::to_string(src.line) + " (rev " + std::to_string(src.revision) + ", " + it.prose.lang + ")";
    if (o.format == Format::Markdown)
      out += "- **" + kb::md::text(it.key) + "** " + kb::md::text(it.text) + "\n  \\[" + kb::md::text(where) + "\\]\n";
    else
      out += it.key + ". " + it.text + "\n   [" + where + "]\n";
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
  // Text: one line each; Markdown: the same lines as list items, escaped.
  const bool md = o.format == Format::Markdown;
  std::string out;
  auto put = [&](const std::string& line) { out += md ? "- " + kb::md::text(line) + "\n" : "  " + line + "\n"; };
  auto head = [&](const std::string& title) { out += md ? "\n**" + kb::md::text(title) + "**\n\n" : "\n" + title + ":\n"; };
  for (const auto& e : s.editions) {
    const std::string line = e.file + "  " + e.lang + "  rev " + std::to_string(e.revision) + (e.date.empty() ? "" : "  " + e.date) +
                             (e.translated_from.empty() ? "" : "  translated from " + e.translated_from);
    out += md ? "- " + kb::md::text(line) + "\n" : line + "\n";
  }
  head("missing translations");
  for (const auto& m : s.missing) put(m.lang + ": " + std::to_string(m.count));
  head("conflicts (newest revision wins)");
  for (const auto& c : s.conflicts)
    put(c.entity + " " + c.field + ": '" + c.older + "' (rev " + std::to_string(c.older_revision) + ", " + c.older_source + ") -> '" +
        c.winner + "' (rev " + std::to_string(c.winner_revision) + ")");
  return out;
}

namespace {

// The error as JSON: in the order written here, or with sorted keys (J =
// nlohmann::json) as a --batch record holds it.
template <class J = json>
J error_json(const Error& e) {
  J j = J::object();
  j["schema_version"] = kAnswerSchemaVersion;
  j["error"] = e.message;
  j["hint"] = e.hint.empty() ? J(nullptr) : J(e.hint);
  j["position"] = e.col > 0 ? J{{"col", e.col}, {"len", std::max(1, e.len)}} : J(nullptr);
  return j;
}

// An array index as RFC 6901 writes it: digits, no leading zero (and few
// enough to be a size).
bool is_array_index(std::string_view t) {
  return !t.empty() && t.size() <= 18 && (t.size() == 1 || t.front() != '0') &&
         std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The value at `path` in `from`, or nullptr when the record lacks it.
const nlohmann::json* find_path(const nlohmann::json& from, const std::vector<std::string>& path) {
  const nlohmann::json* at = &from;
  for (const auto& t : path) {
    if (at->is_object()) {
      const auto it = at->find(t);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array()) {
      if (!is_array_index(t)) return nullptr;
      const auto i = std::stoull(t);
      if (i >= at->size()) return nullptr;
      at = &(*at)[i];
    } else {
      return nullptr;
    }
  }
  return at;
}

// The record with only what `select` names, on the paths that lead there:
// objects keep the keys named, arrays the positions (null where a position
// before a named one is not named), so that every pointer reads the same
// value in the selection as in the whole record.
nlohmann::json select_parts(const nlohmann::json& rec, const BatchSelect& select) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& path : select.paths) {
    const nlohmann::json* value = find_path(rec, path);
    if (!value) continue;  // a part this record lacks: an error record has no text, an empty answer no results/0
    const nlohmann::json* from = &rec;
    nlohmann::json* to = &out;
    for (const auto& t : path) {
      if (from->is_object()) {
        if (!to->is_object()) *to = nlohmann::json::object();
        from = &(*from)[t];
        to = &(*to)[t];
      } else {
        const auto i = std::stoull(t);
        if (!to->is_array()) *to = nlohmann::json::array();
        from = &(*from)[i];
        to = &(*to)[i];  // grows the array with nulls up to i
      }
    }
    *to = *value;
  }
  return out;
}

}  // namespace

bool BatchSelect::reads(std::initializer_list<std::string_view> part) const {
  return std::any_of(paths.begin(), paths.end(), [&](const auto& p) {
    // One leads into the other: the path reads the part, or a piece of it.
    const std::size_t n = std::min(p.size(), part.size());
    return std::equal(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n), part.begin());
  });
}

std::size_t BatchSelect::results_read() const {
  std::size_t n = 0;
  for (const auto& p : paths) {
    if (p.size() < 3) {
      if (p.empty() || (p[0] == "answer" && (p.size() == 1 || p[1] == "results"))) return SIZE_MAX;
    } else if (p[0] == "answer" && p[1] == "results" && is_array_index(p[2])) {
      n = std::max<std::size_t>(n, std::stoull(p[2]) + 1);
    }
  }
  return n;
}

std::variant<BatchSelect, Error> parse_select(const std::vector<std::string>& pointers) {
  BatchSelect s;
  for (const auto& text : pointers) {
    try {
      // nlohmann's parser unescapes the tokens (~1 is /, ~0 is ~).
      auto ptr = nlohmann::json::json_pointer(text);
      std::vector<std::string> tokens;
      for (; !ptr.empty(); ptr.pop_back()) tokens.push_back(ptr.back());
      std::reverse(tokens.begin(), tokens.end());
      s.paths.push_back(std::move(tokens));
    } catch (const nlohmann::json::parse_error& e) {
      // The parser's two refusals (its ids 107 and 108), in our words.
      return Error{"--select: '" + kb::first_code_points(kb::escape_controls(text), 60) +
                       "' is not a JSON Pointer: " + (e.id == 107 ? "it must start with '/'" : "'~' must be followed by 0 or 1"),
                   "write each part as /key or /index, e.g. --select /question,/answer/results/0/command (RFC 6901; "
                   "~1 stands for / and ~0 for ~ in a key)"};
    }
  }
  return s;
}

std::string render_batch_record(const std::string& question, const std::variant<Answer, Error>& res, const Labels& labels, RenderOptions ro,
                                const BatchSelect* select) {
  nlohmann::json rec;
  rec["question"] = question;
  ro.color = false;
  // Without --select the whole record; with it, only the parts it names are
  // built (no text answer is rendered when no pointer reads it).
  const bool answer = !select || select->reads({"answer"});
  const bool text = !select || select->reads({"text"});
  if (const auto* err = std::get_if<Error>(&res)) {
    rec["exit"] = kb::kExitError;
    if (answer) rec["answer"] = error_json<nlohmann::json>(*err);
  } else {
    const Answer& a = std::get<Answer>(res);
    rec["exit"] = a.verdict == Outcome::Ok ? kb::kExitOk : kb::kExitNoMatch;
    if (answer) rec["answer"] = AnswerJson<nlohmann::json>::answer_json(a, select);
    ro.format = Format::Text;
    if (text) rec["text"] = render(a, labels, ro);
  }
  // Not one `select ? select_parts(...) : rec` expression: its lvalue arm
  // would copy the whole record before dumping it.
  if (select) return compact(select_parts(rec, *select));
  return compact(rec);
}

std::string render_error(const Error& e, const std::string& question, const RenderOptions& o) {
  if (o.format == Format::Json) return error_json(e).dump(2) + "\n";
  std::string out = "kbq: error: " + e.message + "\n";
  if (e.col > 0) out += caret_line(question, e.col, e.len);
  if (!e.hint.empty()) out += "  hint: " + e.hint + "\n";
  return out;
}

Labels::Labels(std::string lang, std::vector<std::pair<std::string, std::string>> texts)
    : lang_(std::move(lang)), texts_(std::move(texts)) {
  if (!std::is_sorted(texts_.begin(), texts_.end())) std::sort(texts_.begin(), texts_.end());
}

std::string Labels::operator()(const std::string& key) const {
  // Compared with the key itself: no pair (and no copy of the key) per look-up.
  auto it = std::lower_bound(texts_.begin(), texts_.end(), key, [](const auto& a, const std::string& k) { return a.first < k; });
  return it != texts_.end() && it->first == key ? it->second : key;
}

}  // namespace kbq
