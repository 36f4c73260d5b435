// Generate stage: the documentation site's recipe finder (docs/site.md).
//   site/finder.json          what the finder offers: GPU counts and types
//                             (data/planner.tsv finder_*), the models with
//                             their modes and the words that name them in a
//                             question, the mode words of every language
//   site/finder[.<lang>].md   the finder page: its labels (data/ui.tsv) as
//                             data attributes of one element (a MyST raw
//                             block); site/static/finder.js fills it
//   site/ui.json              the site's own words per language (data/ui.tsv):
//                             the landing page, the language switcher, and
//                             the theme's interface strings as a message
//                             catalog (English text -> the language's),
//                             which site/build.py hands to Sphinx
// The answers themselves are kbq's (`kbq --batch`), computed when the site
// is built (`make site`), one file per model, never by a second planner.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <variant>

#include "base/checked.hpp"
#include "base/kinds.hpp"
#include "base/sqlite.hpp"
#include "base/text.hpp"
#include "compiler/generate/generate_int.hpp"

namespace kb::gen {

namespace {

using json = nlohmann::ordered_json;

std::string html_attr(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The words that name a model in a question: the first spelling of its key
// whose answer (asked in each of its modes) is a recipe of that very model.
std::string question_words(const Inputs& ctx, const std::string& model_key, const std::vector<std::string>& modes) {
  std::vector<std::string> tries;
  std::string spaced = model_key;
  std::replace(spaced.begin(), spaced.end(), '_', ' ');
  tries.push_back(spaced);
  if (auto at = model_key.find('_'); at != std::string::npos) {
    std::string first = model_key;
    first[at] = ' ';
    tries.push_back(first);
  }
  tries.push_back(model_key);
  for (const auto& words : tries) {
    bool all = true;
    for (const auto& m : modes) {
      kbq::AskOptions opts;
      auto res = ctx.engine.ask("mode:" + m + " " + words, opts);
      const auto* a = std::get_if<kbq::Answer>(&res);
      all = all && a && !a->results.empty() && a->results.front().recipe.model_key == model_key && a->results.front().recipe.mode == m;
      if (!all) break;
    }
    if (all) return words;
  }
  return {};
}

}  // namespace

void write_finder(const Inputs& ctx, OutputFiles& out) {
  Db db(ctx.kb_path, Db::Mode::ReadOnly);
  json index;
  json counts = json::array();
  for (const long long n : planner_counts(db, "finder_gpu_counts")) counts.push_back(n);
  index["gpu_counts"] = counts;
  json hardware = json::array();
  for (const auto& key : planner_words(db, "finder_hardware")) hardware.push_back({{"key", key}, {"name", ctx.gpu_name(key)}});
  index["hardware"] = hardware;
  // The token budgets the finder offers for the time to train: each as the
  // query language writes it (data/planner.tsv finder_token_budgets) and the
  // tokens kbq reads from it; the finder divides them by the answer's job
  // tokens/s, as kbq does (docs/throughput.md).
  json budgets = json::array();
  for (const auto& b : planner_words(db, "finder_token_budgets")) {
    kbq::AskOptions opts;
    auto res = ctx.engine.ask("tokens:" + b, opts);
    const auto* a = std::get_if<kbq::Answer>(&res);
    if (a && a->token_budget > 0)
      budgets.push_back({{"key", b}, {"tokens", a->token_budget}, {"shown", kbq::format_count(a->token_budget)}});
  }
  index["budgets"] = budgets;

  // The library recipes' models and modes, in natural order.
  std::map<std::string, std::set<std::string>> modes_of;
  {
    Stmt st(db, "SELECT DISTINCT model_key, mode FROM recipes WHERE kind = ? AND model_key <> '' AND mode <> ''");
    st.bind(1, std::string(to_string(RecipeKind::Library)));
    while (st.step()) modes_of[st.text(0)].insert(st.text(1));
  }
  std::vector<std::string> keys;
  for (const auto& [k, m] : modes_of) keys.push_back(k);
  std::stable_sort(keys.begin(), keys.end(), natural_less);
  json models = json::array();
  for (const auto& key : keys) {
    std::vector<std::string> modes;
    for (const auto& m : ctx.mode_order)
      if (modes_of[key].count(m)) modes.push_back(m);
    if (modes.empty()) continue;
    const std::string words = question_words(ctx, key, modes);
    if (words.empty()) continue;  // no question names it alone: kbq show is its way in
    std::string name = key;
    Stmt st(db, "SELECT display_name FROM models WHERE model_key = ?");
    st.bind(1, key);
    if (st.step() && !st.text(0).empty()) name = st.text(0);
    models.push_back({{"key", key}, {"name", name}, {"question", words}, {"modes", modes}});
  }
  index["models"] = models;
  json mode_words;
  for (const auto& lang : ctx.languages)
    for (const auto& m : ctx.mode_order) mode_words[lang][m] = ctx.mode_word(lang, {m});
  index["mode_words"] = mode_words;
  // How the finder asks: the DSL's own filter keys, one question per choice.
  index["question"] = "mode:{mode} {model} gpus:{gpus} hardware:{hardware}";
  index["budget_question"] = "tokens:{budget}";
  out["site/finder.json"] = index.dump(1) + "\n";

  for (const auto& lang : ctx.languages) {
    const std::string title = ctx.ui(lang, "finder.title");
    std::string attrs;
    for (const char* k :
         {"mode", "model",    "gpus",   "hardware", "examples", "question", "recipe", "layout", "memory",     "command", "caveats",
          "need", "no_match", "answer", "loading",  "works",    "failing",  "copy",   "copied", "throughput", "budget",  "time_to_train"})
      attrs += " data-label-" + std::string(k) + "=\"" + html_attr(ctx.ui(lang, std::string("finder.") + k)) + "\"";
    // The throughput and time-to-train lines in kbq's own words (its answer
    // labels), filled by the finder as kbq's text answer fills them.
    const kbq::Labels lb = ctx.engine.labels(lang);
    for (const char* k : {"line.throughput", "line.throughput_estimated", "line.throughput_none", "line.time_to_train",
                          "line.time_to_train_unknown", "unit.days", "unit.hours"}) {
      std::string name = k;
      std::replace(name.begin(), name.end(), '.', '_');
      attrs += " data-label-" + name + "=\"" + html_attr(lb(k)) + "\"";
    }
    std::string body = "# " + md_text(title) + "\n\n" + md_text(ctx.ui(lang, "finder.intro")) + "\n\n";
    // A MyST raw block: Sphinx writes the element; a plain Markdown renderer
    // shows it as code, never as live HTML (docs/security.md).
    body += "```{raw} html\n<div id=\"kbq-finder\" data-lang=\"" + html_attr(lang) + "\"" + attrs + "></div>\n```\n";
    out[lang_path("site/finder", lang)] =
        front_matter({{"title", yaml_str(title)}, {"lang", lang}, {"tags", yaml_list({"finder"})}}) + "\n" + body;
  }

  // The site's own words: landing page and switcher labels, each language's
  // name in that language, and the theme's strings keyed by their English.
  const std::vector<std::string> site_keys = {"site.name",         "site_title",        "site_intro",          "finder.title",
                                              "site.languages",    "site.landing.what", "site.landing.finder", "site.landing.recipes",
                                              "site.search_found", "theme.copy",        "theme.copied"};
  const std::vector<std::string> theme_keys = {"theme.back_to_top", "theme.on_this_page", "theme.made_with", "theme.search", "theme.next",
                                               "theme.previous",    "theme.home",         "theme.contents",  "theme.menu",   "theme.expand",
                                               "theme.light",       "theme.dark",         "theme.auto"};
  // The theme's strings are its templates' own (furo's, data/planner.tsv
  // site_theme_language): the catalog translates them from that language.
  const std::vector<std::string> theme_language = planner_words(db, "site_theme_language");
  if (theme_language.size() != 1)
    throw KbValueError("planner", "value", "site_theme_language", "one language, the one the theme's templates are written in");
  json ui;
  for (const auto& lang : ctx.languages) {
    json words;
    for (const auto& k : site_keys) words[k] = ctx.ui(lang, k);
    words["name"] = ctx.ui(lang, "lang." + lang);
    json catalog;
    for (const auto& k : theme_keys) catalog[ctx.ui(theme_language.front(), k)] = ctx.ui(lang, k);
    words["catalog"] = catalog;
    ui[lang] = words;
  }
  out["site/ui.json"] = ui.dump(1) + "\n";
}

}  // namespace kb::gen
