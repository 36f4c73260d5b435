// Plan stage (see plan.hpp): the question resolved, the candidate recipes,
// each planned on the user's GPUs, and the launch command.
#include "query/plan/plan.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "base/checked.hpp"
#include "base/escape.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"
#include "query/plan/layout.hpp"

namespace kbq {

namespace {

long long to_ll(const std::string& s, long long fallback = 0) {
  try {
    size_t used = 0;
    const long long v = std::stoll(s, &used);
    return used == s.size() ? v : fallback;
  } catch (...) {
    return fallback;
  }
}

// The smallest power of two ≥ v: kb::next_pow2, which cannot overflow
// (a sequence length of 9e18 once made this loop forever, issue 12).
long long next_pow2(long long v) { return kb::next_pow2(v).value_or(kb::limits::kMaxParallel); }

bool has_token(const std::string& name, const std::string& token) {
  return !token.empty() && ("_" + name + "_").find("_" + token + "_") != std::string::npos;
}

// A recipe name of the family a prefix names: "qwen3" takes qwen3_*, not
// qwen35_*; a family word without a version ("qwen", "llama") takes every
// version.
bool in_family(const std::string& name, const std::string& prefix) {
  if (prefix.empty()) return true;
  if (!kb::starts_with(name, prefix) || name.size() == prefix.size()) return false;
  const char next = name[prefix.size()];
  if (next == '_') return true;
  const bool prefix_ends_in_digit = std::isdigit(static_cast<unsigned char>(prefix.back())) != 0;
  return !prefix_ends_in_digit && std::isdigit(static_cast<unsigned char>(next)) != 0;
}

std::string quote(const std::string& kv) { return kb::shell_quote(kv); }
std::string shell_word(const std::string& v) { return kb::shell_word(v); }

// Replaces the value that follows `flag` (as `flag=value` or `flag value`).
bool set_flag(std::string& cmd, const std::string& flag, const std::string& value) {
  if (flag.empty()) return false;
  size_t at = cmd.find(flag);
  while (at != std::string::npos) {
    const size_t end_flag = at + flag.size();
    if (end_flag < cmd.size() && (cmd[end_flag] == '=' || cmd[end_flag] == ' ')) {
      size_t vstart = end_flag + 1;
      while (vstart < cmd.size() && cmd[vstart] == ' ') ++vstart;
      size_t vend = vstart;
      while (vend < cmd.size() && cmd[vend] != ' ' && cmd[vend] != '\n' && cmd[vend] != '\\') ++vend;
      cmd.replace(vstart, vend - vstart, shell_word(value));
      return true;
    }
    at = cmd.find(flag, end_flag);
  }
  return false;
}

// The first sentence of a paragraph (the one that names its layer).
std::string first_sentence(const std::string& text) {
  size_t end = std::string::npos;
  for (const char* stop : {"\xE3\x80\x82", ". "}) {  // ideographic full stop, or ". "
    const size_t at = text.find(stop);
    if (at != std::string::npos && (end == std::string::npos || at < end)) end = at + std::strlen(stop);
  }
  return kb::trim(end == std::string::npos ? text : text.substr(0, end));
}

// The impact class of a config key, with the sentence that says so in the
// answer's language.
void classify(Context& c, Override& o) {
  auto k = c.kb.config_key(o.key);
  if (!k) return;
  o.impact = k->layer;
  o.sentence = k->sentence;
  o.source = {k->file, k->line, 0, "config layer of " + k->key};
  if (auto slash = k->entity.find('/'); slash != std::string::npos) {
    const Prose p = prose(c.kb, k->entity.substr(0, slash), k->entity.substr(slash + 1), c.lang);
    if (!p.text.empty() && p.lang == c.lang) {
      o.sentence = first_sentence(p.text);
      o.source = p.source;
      o.source.what = "config layer of " + k->key;
    } else {
      o.source.revision = p.source.revision;
    }
  }
}

std::string key_for(Kb& kb, const std::string& dimension) {
  auto keys = kb.config_keys_for(dimension);
  return keys.empty() ? std::string() : keys.front().key;
}

std::string hardware_or_default(Kb& kb, const std::string& hw) { return hw.empty() ? kb.planner("default_gpu") : hw; }

std::vector<Dim> change_order(Kb& kb) {
  std::vector<Dim> out;
  for (const auto& id : kb::split(kb.planner("change_order"), ','))
    if (auto d = parse_dim(kb::trim(id))) out.push_back(*d);
  for (Dim d : {Dim::EP, Dim::TP, Dim::PP, Dim::CP})
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  return out;
}

double gib(double bytes) { return bytes / memory::kBytesPerGiB; }

}  // namespace

std::string Context::label(const std::string& key, const std::vector<std::pair<std::string, std::string>>& vars) const {
  return fill(kb.label(lang, key), vars);
}

Context make_context(Kb& kb, const std::string& lang) {
  Context c{kb, lang, to_ll(kb.planner("long_context_threshold")), {}, false};
  auto p = memory::params_from_tsv(kb.memory_params_tsv());
  if (auto* params = std::get_if<memory::Params>(&p)) {
    c.params = *params;
    c.params_ok = true;
  }
  return c;
}

// --- the question --------------------------------------------------------------------

namespace {

// Words that name a model no recipe has ("mistral 7b", "mixtral 8x7b",
// "llama 4 scout"), by their shape and place next to model and size terms:
//  - a free word of letters and digits ("8x7b", "v4") is a name or a size;
//  - a bare number right after a model term is a version ("llama 4");
//  - a word the lexicon does not know but that looks like a typo of one
//    ("mistral", near "ministral") next to any of those is a name;
//  - a word of letters right before a size or a name ("falcon 40b"), or
//    right after a version ("4 scout"), is a name.
// Words recipe names carry ("a3b") are never flagged. The result names the
// model as asked: the family term before the flagged words is kept.
std::vector<std::string> unknown_model_words(Kb& kb, const kbq::dsl::Query& q, RecipeKind kind) {
  using kbq::dsl::TermKind;
  const auto& t = q.terms;
  const size_t n = t.size();
  auto free = [&](size_t i) { return i < n && (t[i].kind == TermKind::FreeText || t[i].kind == TermKind::Unknown); };
  auto all_of = [](const std::string& w, auto pred) {
    return !w.empty() && std::all_of(w.begin(), w.end(), [&](unsigned char ch) { return pred(ch); });
  };
  auto any_of = [](const std::string& w, auto pred) { return std::any_of(w.begin(), w.end(), [&](unsigned char ch) { return pred(ch); }); };
  auto name_like = [&](const std::string& w) {
    return all_of(w, [](unsigned char ch) { return std::isalnum(ch) || ch == '.' || ch == '-'; });
  };
  auto letters = [&](const std::string& w) { return all_of(w, [](unsigned char ch) { return std::isalpha(ch); }); };
  auto number = [&](const std::string& w) {
    return all_of(w, [](unsigned char ch) { return std::isdigit(ch) || ch == '.'; }) && std::isdigit(static_cast<unsigned char>(w[0]));
  };
  auto is = [&](size_t i, TermKind k) { return i < n && t[i].kind == k; };
  std::vector<bool> flag(n, false), version(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (!free(i) || !name_like(t[i].text)) continue;
    const std::string& w = t[i].text;
    if (any_of(w, [](unsigned char ch) { return std::isdigit(ch); }) && any_of(w, [](unsigned char ch) { return std::isalpha(ch); }))
      flag[i] = true;
    if (number(w) && i > 0 && is(i - 1, TermKind::Model)) flag[i] = version[i] = true;
  }
  auto anchor = [&](size_t i) { return i < n && (flag[i] || is(i, TermKind::Model) || is(i, TermKind::Size)); };
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < n; ++i) {
      if (flag[i] || !free(i) || !name_like(t[i].text)) continue;
      const bool typo = t[i].kind == TermKind::Unknown && ((i > 0 && anchor(i - 1)) || anchor(i + 1));
      const bool before = letters(t[i].text) && (is(i + 1, TermKind::Size) || (i + 1 < n && flag[i + 1] && !version[i + 1]));
      const bool after_version = letters(t[i].text) && i > 0 && version[i - 1];
      if (typo || before || after_version) flag[i] = grew = true;
    }
  }
  const auto& name_tokens = kb.name_tokens(kind);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    if (!flag[i] || name_tokens.count(kb::fold(t[i].text))) continue;
    if (out.empty() && i > 0 && is(i - 1, TermKind::Model)) out.push_back(t[i - 1].text);
    out.push_back(t[i].text);
    if (is(i + 1, TermKind::Size)) out.push_back(t[i + 1].text);
  }
  return out;
}

}  // namespace

std::variant<Ask, Error> resolve_question(Context& c, const kbq::dsl::Query& q, Answer& a) {
  Kb& kb = c.kb;
  Ask ask;
  const auto filter = [&](const std::string& f) {
    auto it = q.filters.find(f);
    return it == q.filters.end() ? std::string() : it->second;
  };
  ask.mode = q.mode.value_or("");
  // A launcher mode named in the question (LoRA, DoRA): the code's own mode names.
  for (const auto& t : q.terms)
    if (t.kind == kbq::dsl::TermKind::Mode) {
      const std::string word = kb::fold(t.text);
      const std::string task = kb.task_of(word);
      if (!task.empty() && task != word) ask.launch_mode = word;
    }
  ask.model = !q.model.empty() ? q.model : filter("family");
  ask.size_token = q.size_token;
  ask.size_params = q.size_params;
  ask.intents = q.intents;
  ask.scale = q.scale;
  for (const auto& pair : kb::split(kb.planner("intent_modality"), ',')) {
    const auto colon = pair.find(':');
    if (colon != std::string::npos && q.intents.count(kb::trim(pair.substr(0, colon))))
      ask.modalities.insert(kb::trim(pair.substr(colon + 1)));
  }
  ask.benchmark = q.intents.count(kb.planner("benchmark_intent")) > 0 || filter("kind") == to_string(RecipeKind::Benchmark);
  ask.hardware = !q.hardware.empty() ? q.hardware : filter("hardware");
  if (ask.hardware.empty()) {
    ask.hardware = hardware_or_default(kb, {});
    ask.hardware_assumed = true;
  }
  const auto gpu = kb.gpu(ask.hardware);
  if (!gpu)
    return Error{"unknown GPU type '" + ask.hardware + "'", "known GPU types: " + kb::join(kb.model_keys().empty() ? std::vector<std::string>{} : [&] {
                                                                           std::vector<std::string> k;
                                                                           for (const auto& g : kb.gpus()) k.push_back(g.key);
                                                                           return k;
                                                                         }(), ", ")};
  if (q.gpus)
    ask.gpus = *q.gpus;
  else if (q.nodes)
    ask.gpus = static_cast<long long>(*q.nodes) * gpu->per_node;
  else
    for (const auto& pair : kb::split(kb.planner("intent_gpus"), ',')) {  // "single GPU"
      const auto colon = pair.find(':');
      if (colon != std::string::npos && q.intents.count(kb::trim(pair.substr(0, colon))))
        ask.gpus = to_ll(kb::trim(pair.substr(colon + 1)), 0);
    }
  ask.seq = q.seq_len.value_or(0);
  ask.precision = q.precision;
  ask.dataset = filter("dataset");
  for (const auto& [d, name] : kDimNames)
    if (auto v = filter(std::string(name)); !v.empty()) ask.fixed.emplace_back(key_for(kb, std::string(name)), v);
  // sp: is not planned with (it used to be read and silently ignored): the
  // planner sets sequence parallelism by the sizing rule (on when TP > 1),
  // and a layout with it off is one for `kbq check` to judge.
  if (!filter("sp").empty())
    return Error{"filter 'sp' is not used to plan: kbq turns sequence parallelism on whenever TP > 1 (sizing rule 5)",
                 "to judge your own setting: kbq check RECIPE --gpus N " + key_for(kb, "sp") + "=false"};
  const RecipeKind kind = ask.benchmark ? RecipeKind::Benchmark : RecipeKind::Library;
  ask.unknown_model_words = unknown_model_words(kb, q, kind);
  {
    const auto& tokens = kb.name_tokens(kind);
    using kbq::dsl::TermKind;
    std::vector<std::string> ignored;
    for (const auto& t : q.terms) {
      const bool name_word = t.kind == TermKind::FreeText && tokens.count(kb::fold(t.text));
      if (name_word) ask.name_words.push_back(kb::fold(t.text));
      if (t.kind != TermKind::FreeText && t.kind != TermKind::Stopword && t.kind != TermKind::Unknown) ask.understood = true;
      if (t.kind == TermKind::FreeText && !name_word &&
          std::find(ask.unknown_model_words.begin(), ask.unknown_model_words.end(), t.text) == ask.unknown_model_words.end())
        ignored.push_back(t.text);
    }
    // Words not understood never vanish silently.
    if (!ignored.empty() && ask.unknown_model_words.empty() && ask.understood)
      a.warnings.push_back(c.label("warn.ignored", {{"words", kb::join(ignored, " ")}}));
  }
  if (ask.hardware_assumed && (ask.understood || !ask.name_words.empty()))
    a.warnings.push_back(c.label("warn.hardware_assumed", {{"hardware", kb::upper_ascii(gpu->key)}}));
  return ask;
}

// --- candidates ------------------------------------------------------------------------

std::vector<Candidate> candidates(Context& c, const Ask& ask, Answer& a) {
  Kb& kb = c.kb;
  const RecipeKind kind = ask.benchmark ? RecipeKind::Benchmark : RecipeKind::Library;
  const auto& all = kb.recipes(kind);
  // Recipes whose layout the code leaves unknown (one that raises by
  // design, say) are never offered.
  std::vector<const Recipe*> pool;
  for (const auto& r : all)
    if ((ask.mode.empty() || r.mode == ask.mode) && r.tp && r.pp && r.cp) pool.push_back(&r);
  if (!ask.unknown_model_words.empty()) {
    a.no_match = c.label("no_match.model", {{"model", kb::join(ask.unknown_model_words, " ")}});
    return {};
  }
  if (!ask.understood && ask.name_words.empty()) {
    a.no_match = c.label("no_match.not_understood");
    return {};
  }
  // Free words that recipe names carry ("vl", "thinking", "instruct").
  if (!ask.name_words.empty()) {
    std::vector<const Recipe*> kept;
    for (const auto* r : pool)
      if (std::all_of(ask.name_words.begin(), ask.name_words.end(), [&](const std::string& w) { return has_token(r->name, w); }))
        kept.push_back(r);
    if (kept.empty()) {
      a.no_match = c.label("no_match.model", {{"model", kb::join(ask.name_words, " ")}});
      return {};
    }
    pool = kept;
  }
  // (b) the model family and size asked.
  const std::vector<const Recipe*> all_of_mode = pool;
  if (!ask.model.empty()) {
    std::vector<const Recipe*> fam;
    for (const auto* r : pool)
      if (in_family(r->name, ask.model) || in_family(r->model_key, ask.model)) fam.push_back(r);
    if (fam.empty()) {
      // The family exists in another mode: say which modes it has.
      std::set<std::string> modes;
      for (const auto& r : all)
        if ((in_family(r.name, ask.model) || in_family(r.model_key, ask.model)) && !r.mode.empty()) modes.insert(c.label("mode." + r.mode));
      a.no_match = modes.empty() || ask.mode.empty()
                       ? c.label("no_match.family", {{"model", ask.model}})
                       : c.label("no_match.mode_has", {{"mode", c.label("mode." + ask.mode)},
                                                       {"model", ask.model},
                                                       {"modes", kb::join(std::vector<std::string>(modes.begin(), modes.end()), ", ")}});
      return {};
    }
    pool = fam;
  }
  bool substitute = false;
  if (!ask.size_token.empty()) {
    std::vector<const Recipe*> sized;
    for (const auto* r : pool)
      if (has_token(r->name, ask.size_token) || has_token(r->model_key, ask.size_token)) sized.push_back(r);
    if (sized.empty() && !pool.empty()) {
      // The same size in a sibling of the family (models.tsv family:
      // "llama3 405b" → Llama 3.1 405B), marked as a substitute.
      std::set<std::string> families;
      for (const auto* r : pool)
        if (const auto* m = kb.model_brief(r->model_key); m && !m->family.empty()) families.insert(m->family);
      for (const auto* r : all_of_mode)
        if (const auto* m = kb.model_brief(r->model_key);
            m && families.count(m->family) && (has_token(r->name, ask.size_token) || has_token(r->model_key, ask.size_token)))
          sized.push_back(r);
      if (!sized.empty()) {
        substitute = true;
        a.warnings.push_back(c.label("warn.substitute_sibling",
                                     {{"asked", ask.model + " " + ask.size_token},
                                      {"model", sized.front()->model.empty() ? sized.front()->model_key : sized.front()->model}}));
      }
    }
    if (sized.empty() && !pool.empty()) {
      // The nearest size of the family, marked as a substitute.
      std::map<std::string, double> params;
      for (const auto* r : pool)
        if (const auto* m = kb.model_brief(r->model_key); m && m->total_params_b > 0) params[r->model_key] = m->total_params_b * 1e9;
      std::string best;
      double best_d = 1e300;
      for (const auto& [key, p] : params) {
        const double d = ask.size_params > 0 ? std::abs(std::log(p / ask.size_params)) : 0;
        if (d < best_d) best_d = d, best = key;
      }
      for (const auto* r : pool)
        if (r->model_key == best) sized.push_back(r);
      substitute = true;
      if (!sized.empty())
        a.warnings.push_back(c.label("warn.substitute", {{"asked", ask.model + " " + ask.size_token},
                                                         {"model", sized.front()->model.empty() ? best : sized.front()->model}}));
    }
    pool = sized;
  }
  if (pool.empty()) {
    a.no_match = c.label("no_match.mode", {{"mode", ask.mode}, {"model", ask.model}});
    return {};
  }
  // (c) the modality: text unless the question asks for another; a model
  // that only has other modalities (flux, wan) keeps its own.
  {
    std::vector<const Recipe*> kept;
    for (const auto* r : pool)
      if (ask.modalities.empty() ? r->modality == "text" : ask.modalities.count(r->modality) > 0) kept.push_back(r);
    if (kept.empty() && ask.modalities.empty()) kept = pool;
    if (kept.empty()) {
      a.no_match = c.label("no_match.modality",
                           {{"modality", kb::join(std::vector<std::string>(ask.modalities.begin(), ask.modalities.end()), ", ")}});
      return {};
    }
    pool = kept;
  }
  // Benchmark names encode their GPU count, hardware and precision.
  if (kind == RecipeKind::Benchmark) {
    std::vector<const Recipe*> kept;
    for (const auto* r : pool)
      if ((ask.hardware_assumed || r->native_hardware == ask.hardware) && (ask.gpus == 0 || r->native_gpus == ask.gpus) &&
          (ask.precision.empty() || kb::starts_with(r->native_precision, ask.precision)))
        kept.push_back(r);
    if (kept.empty()) {
      std::set<std::string> have;
      for (const auto* r : pool)
        have.insert(std::to_string(r->native_gpus.value_or(0)) + " × " + r->native_hardware + " " + r->native_precision);
      a.no_match = c.label("no_match.benchmark", {{"available", kb::join(std::vector<std::string>(have.begin(), have.end()), ", ")}});
      return {};
    }
    pool = kept;
  }
  // One name per recipe function: the generic alias over the canonical name.
  std::map<std::string, const Recipe*> by_target;
  for (const auto* r : pool) {
    auto [it, fresh] = by_target.try_emplace(r->target, r);
    if (!fresh && (r->name.size() < it->second->name.size() || (r->name.size() == it->second->name.size() && r->name < it->second->name)))
      it->second = r;
  }
  std::vector<Candidate> out;
  for (const auto& [t, r] : by_target) out.push_back({r, substitute});
  std::sort(out.begin(), out.end(), [](const Candidate& x, const Candidate& y) { return x.recipe->name < y.recipe->name; });
  return out;
}

// --- planning one recipe -----------------------------------------------------------------

namespace {

// The preset for --dataset: the one asked (an old name renamed), else the
// documents' preset for the mode, among those the code's launcher offers for
// the recipe's launch mode.
std::string pick_dataset(Context& c, const Recipe& r, const std::string& launch_mode, const std::string& wanted,
                         std::vector<std::string>& notes) {
  Kb& kb = c.kb;
  const auto& code = kb.presets();
  auto allowed = [&](const std::string& preset) {
    auto it = code.find(preset);
    return it != code.end() && std::find(it->second.begin(), it->second.end(), launch_mode) != it->second.end();
  };
  std::vector<std::string> fits;
  for (const auto& [preset, modes] : kb.datasets())
    if (std::find(modes.begin(), modes.end(), r.mode) != modes.end() && (code.empty() || allowed(preset))) fits.push_back(preset);
  if (!wanted.empty()) {
    std::string current = wanted;
    for (const auto& [from, to] : kb.renames())
      if (from == wanted) current = to;
    if (code.empty() || allowed(current)) return current;
    notes.push_back(c.label("note.dataset_mode", {{"preset", current}, {"mode", launch_mode}, {"alternatives", kb::join(fits, " / ")}}));
  }
  return fits.empty() ? std::string() : fits.front();
}

struct Plan {
  SearchInput in;
  Sizing sizing;
  Gpu gpu;
  long long seq = 0;
  std::set<std::string> fixed_keys;
  long long fixed_gbs = 0;
  std::optional<bool> fixed_sp;
  KeyValues other;  // user overrides with no layout dimension: passed through as KEY=VALUE
};

Override make_override(Context& c, const std::string& key, const std::string& value, const std::string& recipe_value) {
  Override o;
  o.key = key;
  o.value = value;
  o.recipe_value = recipe_value;
  o.pinned_only = value == recipe_value;
  classify(c, o);
  return o;
}

std::string opt(const std::optional<long long>& v) { return v ? std::to_string(*v) : std::string(); }

// Every size the command pins, the changes, and the other overrides.
void overrides_of(Context& c, Result& res, const Recipe& r, const Plan& p, const std::string& launch_mode) {
  const Layout& L = res.layout;
  Kb& kb = c.kb;
  auto add = [&](const std::string& dim, long long value, const std::string& recipe_value) {
    const std::string key = key_for(kb, dim);
    if (!key.empty()) res.overrides.push_back(make_override(c, key, std::to_string(value), recipe_value));
  };
  if (r.kind == RecipeKind::Benchmark) return;  // a benchmark runs as exported
  add("tp", L.tp, opt(r.tp));
  add("pp", L.pp, opt(r.pp));
  add("cp", L.cp, opt(r.cp));
  if (r.moe) {
    add("ep", L.ep, opt(r.ep));
    add("etp", L.etp, r.etp ? opt(r.etp) : std::string("1"));
  }
  if (L.pp > 1 && L.vp > 0) add("vp", L.vp, opt(r.vp));
  if (L.tp > 1 || (r.sp && *r.sp != L.sp)) {
    const std::string key = key_for(kb, "sp");
    if (!key.empty())
      res.overrides.push_back(make_override(c, key, L.sp ? "true" : "false", r.sp ? (*r.sp ? "true" : "false") : std::string()));
  }
  if (r.seq_len && L.seq != *r.seq_len) add("seq", L.seq, opt(r.seq_len));
  if (res.batch.gbs != res.batch.recipe_gbs && res.batch.recipe_gbs > 0) add("gbs", res.batch.gbs, std::to_string(res.batch.recipe_gbs));
  if (res.batch.mbs != res.batch.recipe_mbs && res.batch.recipe_mbs > 0) add("mbs", res.batch.mbs, std::to_string(res.batch.recipe_mbs));
  if (launch_mode != r.launch_mode && !launch_mode.empty()) {
    Override o = make_override(c, "peft", launch_mode, r.launch_mode);
    res.overrides.push_back(o);
  }
  if (r.mode != "pretrain" && !r.mode.empty()) {
    const std::string key = key_for(kb, "pretrained");
    if (!key.empty()) {
      Override o = make_override(c, key, kb.planner("pretrained_checkpoint_path"), "");
      o.pinned_only = false;
      res.overrides.push_back(o);
    }
  }
  for (const auto& [key, value] : p.other) res.overrides.push_back(make_override(c, key, value, ""));
}

// A command kbq prints is the KB's command text with values quoted
// (shell_word): text of a crafted KB that would be shell syntax there (a
// ';', '$(', a backtick, a redirection, an unquoted placeholder) or an
// option name that is not one is an error naming the entity, never a
// command that runs something else.
void check_command(const std::string& cmd, const std::string& ref) {
  if (const auto problem = kb::shell_problem(cmd))
    throw kb::KbValueError("entity_texts", "parts", ref, "the launch command would hold shell syntax (" + *problem + ")");
}

// The launcher's option for a flag, checked: an option name, or an error.
std::string option_name(const Flag& f) {
  const std::string& name = !f.short_option.empty() ? f.short_option : f.long_option;
  if (!kb::is_shell_option(name)) throw kb::KbValueError("launcher", "value", f.item, "not an option name (-x or --name)");
  return name;
}

// The launch command, from the newest revision's entry-point command of the
// recipe's kind, with the launcher's own flags for each size and change.
void build_command(Context& c, Result& res, const std::string& launch_mode) {
  Kb& kb = c.kb;
  const Recipe& r = res.recipe;
  const bool bench = r.kind == RecipeKind::Benchmark;
  const std::string ref = kb.planner(bench ? "benchmark_command" : "library_command");
  const auto slash = ref.find('/');
  if (slash == std::string::npos) return;
  const auto& texts = kb.entity(ref.substr(0, slash), ref.substr(slash + 1));
  if (texts.empty()) return;
  const EntityText& t = texts.front();
  auto it = t.parts.find("command");
  std::string cmd = it == t.parts.end() ? t.text : it->second;
  res.sources.push_back({t.file, t.line, t.revision, "entry-point command"});
  const Layout& L = res.layout;
  if (bench) {
    set_flag(cmd, kb.planner("bench_nodes_flag"), std::to_string(L.nodes));
    set_flag(cmd, kb.planner("bench_gpus_per_node_flag"), std::to_string(L.nproc));
    set_flag(cmd, kb.planner("recipe_flag"), r.name);
    if (!r.launch_mode.empty()) set_flag(cmd, kb.planner("bench_mode_flag"), r.launch_mode);
    check_command(cmd, ref);
    res.command = cmd;
    return;
  }
  set_flag(cmd, kb.planner("nproc_flag"), std::to_string(L.nproc));
  set_flag(cmd, kb.planner("recipe_flag"), r.name);
  if (!res.dataset.empty()) set_flag(cmd, kb.planner("dataset_flag"), res.dataset);
  if (L.nodes > 1) {
    const std::string flag = kb.planner("nproc_flag");
    const auto at = cmd.find(flag);
    const std::string extra = fill(kb.planner("multi_node_flags"), {{"nodes", std::to_string(L.nodes)}});
    if (const auto problem = kb::shell_problem(extra))
      throw kb::KbValueError("planner", "value", "multi_node_flags", "the launch command would hold shell syntax (" + *problem + ")");
    if (at != std::string::npos && !extra.empty()) cmd.insert(at, extra + " ");
  }
  while (!cmd.empty() && (cmd.back() == '\n' || cmd.back() == ' ')) cmd.pop_back();
  // Flags of the launcher on one line, KEY=VALUE overrides one per line.
  std::vector<std::string> flags, kvs;
  if (launch_mode != r.launch_mode && !launch_mode.empty()) {
    if (auto f = kb.flag_named(kb.planner("launch_mode_flag")); f) {
      Flag g = *f;  // the long spelling first here
      if (!g.long_option.empty()) g.short_option.clear();
      flags.push_back(option_name(g) + " " + shell_word(launch_mode));
    }
  }
  for (const auto& o : res.overrides) {
    if (o.key == "peft") continue;  // --mode, above
    auto f = kb.flag_for(o.key);
    if (f) {
      flags.push_back(option_name(*f) + " " + shell_word(o.value));
    } else {
      kvs.push_back(quote(o.key + "=" + o.value));
    }
  }
  if (!flags.empty()) cmd += " \\\n    " + kb::join(flags, " ");
  for (const auto& kv : kvs) cmd += " \\\n    " + kv;
  check_command(cmd, ref);
  res.command = cmd;
}

}  // namespace

Result plan_recipe(Context& c, const Recipe& r, const Ask& ask, bool substitute) {
  Kb& kb = c.kb;
  Result res;
  res.recipe = r;
  res.substitute = substitute;
  Plan p;
  const std::string hw = ask.hardware_assumed && !r.native_hardware.empty() && r.kind == RecipeKind::Benchmark ? r.native_hardware
                         : !ask.hardware.empty()                                                               ? ask.hardware
                                                 : hardware_or_default(kb, {});
  p.gpu = kb.gpu(hw).value_or(Gpu{hw, hw, 0, 0, 0, false, ""});
  p.sizing = size_recipe(kb, r, c.params);
  // The recipe's own sizes, then the user's.
  Shape start{r.tp.value_or(1), r.pp.value_or(1),  r.vp.value_or(0), r.cp.value_or(1),
              r.ep.value_or(1), r.etp.value_or(1), r.mbs.value_or(1)};
  if (start.pp <= 1) start.vp = 0;
  SearchInput& in = p.in;
  for (const auto& [key, value] : ask.fixed) {
    auto ck = kb.config_key(key);
    const std::string dim = ck ? ck->dimension : std::string();
    const long long v = to_ll(value, 0);
    if (auto d = parse_dim(dim)) {
      switch (*d) {
        case Dim::TP:
          start.tp = v;
          break;
        case Dim::PP:
          start.pp = v;
          break;
        case Dim::CP:
          start.cp = v;
          break;
        case Dim::EP:
          start.ep = v;
          break;
        case Dim::ETP:
          start.etp = v;
          break;
        case Dim::VP:
          start.vp = v;
          break;
      }
      in.fixed.insert(*d);
    } else if (dim == "seq") {
      p.seq = v;
    } else if (dim == "gbs") {
      p.fixed_gbs = v;
    } else if (dim == "mbs") {
      start.mbs = v;
      in.mbs_fixed = true;
    } else if (dim == "sp") {
      p.fixed_sp = kb::fold(value) == "true";
    } else {
      p.other.emplace_back(key, value);
    }
  }
  // The sequence: a longer one than the recipe's needs more CP, so each
  // rank keeps at most the tokens the recipe was written for or the long-
  // context threshold, whichever is more (the memory model then decides
  // whether that many tokens per rank fit).
  const long long seq = p.seq > 0 ? p.seq : ask.seq > 0 ? ask.seq : r.seq_len.value_or(0);
  long long cp_min = 1;
  if (r.seq_len && seq > *r.seq_len) {
    const long long per_rank = std::max({1LL, *r.seq_len / std::max(1LL, r.cp.value_or(1)), c.threshold});
    cp_min = std::max(r.cp.value_or(1), next_pow2((seq + per_rank - 1) / per_rank));
  } else if (!r.seq_len && seq > c.threshold && c.threshold > 0) {
    cp_min = next_pow2((seq + c.threshold - 1) / c.threshold);
  }
  if (!in.fixed.count(Dim::CP)) start.cp = std::max(start.cp, cp_min);
  in.sizing = &p.sizing;
  in.start = start;
  in.gpu = &p.gpu;
  in.seq = seq;
  in.gbs = p.fixed_gbs > 0 ? p.fixed_gbs : r.gbs.value_or(0);
  in.threshold = c.threshold;
  in.cp_min = in.fixed.count(Dim::CP) ? 1 : cp_min;
  in.moe = r.moe;
  in.change_order = change_order(kb);
  in.params = c.params_ok ? &c.params : nullptr;
  if (r.native_gpus && (r.native_hardware.empty() || r.native_hardware == p.gpu.key) && in.fixed.empty() && seq == r.seq_len.value_or(0)) {
    in.own_world = *r.native_gpus;
    try {
      in.own_tolerance = std::stod(kb.planner("own_layout_tolerance"));
    } catch (...) {
      in.own_tolerance = 0;
    }
  }
  const long long max_world = std::max(1LL, to_ll(kb.planner("max_world"), 16384));

  // The world: the user's GPUs; without them the recipe's own count (or the
  // fewest GPUs above it where it fits); a benchmark runs on its own.
  long long world = ask.gpus;
  std::optional<Placement> placed;
  if (r.kind == RecipeKind::Benchmark) {
    world = r.native_gpus.value_or(r.min_gpus.value_or(1));
    Placement pl = evaluate(in, start, world);
    if (pl.fits) placed = pl;
  } else {
    if (world <= 0) {
      const long long own = ask.fewest ? 1 : std::max(r.native_gpus.value_or(0), r.min_gpus.value_or(1));
      world = min_world(in, own, max_world);
      if (world == 0) world = own;
      if (world != own && !ask.fewest)
        res.departures.push_back(c.label("note.own_count", {{"own", std::to_string(own)}, {"gpus", std::to_string(world)}}));
    }
    placed = place(in, world);
  }
  // A job that does not fit is shown with the layout it would run with on
  // these GPUs (the rules alone), to say how much memory it needs.
  // A benchmark recipe runs as its code sets it (the launcher takes no
  // sizes): shown as is, never as a layout it cannot be launched with.
  Placement shown = placed ? *placed : [&] {
    if (r.kind == RecipeKind::Benchmark) return evaluate(in, start, world);
    if (auto rules_only = place(in, world, false)) return *rules_only;
    Shape ones = start;
    ones.tp = ones.pp = ones.cp = ones.ep = ones.etp = 1;
    ones.vp = 0;
    return evaluate(in, in.fixed.empty() ? ones : start, world);
  }();
  res.runnable = placed.has_value();
  if (!res.runnable && r.kind != RecipeKind::Benchmark) res.min_gpus = min_world(in, world + 1, max_world);

  // The layout.
  Layout& L = res.layout;
  L.gpus = world;
  L.hardware = p.gpu.key;
  L.hardware_name = kb::upper_ascii(p.gpu.key);
  L.hardware_assumed = ask.hardware_assumed && !(r.kind == RecipeKind::Benchmark && !r.native_hardware.empty());
  L.per_node = p.gpu.per_node;
  if (L.per_node > 0 && world > L.per_node) {
    L.nodes = (world + L.per_node - 1) / L.per_node;
    L.nproc = L.per_node;
  } else {
    L.nodes = 1;
    L.nproc = world;
  }
  const Shape& s = shown.shape;
  L.tp = s.tp;
  L.pp = s.pp;
  L.vp = s.pp > 1 ? s.vp : 0;
  L.cp = s.cp;
  L.ep = r.moe ? s.ep : 1;
  L.etp = r.moe ? s.etp : 1;
  // Sequence parallelism needs TP > 1 (the model config turns it off at TP 1).
  L.sp = s.tp > 1 && p.fixed_sp.value_or(true);
  L.seq = seq;
  // On the recipe's own GPUs, a layout other than the code's is kbq's plan
  // to make it fit: said, with the code's own sizes, never silent.
  if (res.departures.empty() && r.native_gpus && world == *r.native_gpus && ask.fixed.empty()) {
    std::vector<std::string> own;
    const auto differs = [&](const char* dim, const std::optional<long long>& code, long long shown_v) {
      if (code && *code != shown_v) own.push_back(std::string(dim) + " " + std::to_string(*code) + " → " + std::to_string(shown_v));
    };
    differs("TP", r.tp, L.tp);
    differs("PP", r.pp, L.pp);
    differs("CP", r.cp, L.cp);
    if (r.moe) differs("EP", r.ep, L.ep);
    if (!own.empty())
      res.departures.push_back(c.label("note.own_layout", {{"gpus", std::to_string(world)}, {"changes", kb::join(own, ", ")}}));
  }
  if (s.tp * s.pp * s.cp > 0 && world % (s.tp * s.pp * s.cp) == 0) L.dp = world / (s.tp * s.pp * s.cp);
  if (r.moe && s.pp * s.ep * s.etp > 0 && world % (s.pp * s.ep * s.etp) == 0) L.edp = world / (s.pp * s.ep * s.etp);

  // Memory per GPU.
  Memory& M = res.memory;
  M.capacity_gib = p.gpu.memory_gib;
  M.assumptions = p.sizing.assumptions;
  if (shown.sized) {
    const auto& e = shown.estimate;
    M.known = true;
    M.per_gpu_gib = gib(e.total);
    M.weights = gib(e.weights);
    M.grads = gib(e.grads);
    M.optimizer = gib(e.optimizer);
    M.activations = gib(e.activations);
    M.overhead = gib(e.overhead);
    M.fits = p.gpu.memory_gib > 0 && (M.per_gpu_gib <= p.gpu.memory_gib || (placed && placed->sized && placed->shape == shown.shape));
  } else {
    M.unknown_reason = !p.sizing.sized         ? p.sizing.why_not
                       : p.gpu.memory_gib <= 0 ? c.label("memory.no_capacity", {{"hardware", p.gpu.display}})
                                               : c.label("memory.no_layout");
  }

  // The batch: GBS = MBS × DP × accumulation; the recipe's GBS when it
  // divides, else the nearest that does (a convergence change).
  Batch& B = res.batch;
  B.recipe_gbs = r.gbs.value_or(0);
  B.recipe_mbs = r.mbs.value_or(1);
  B.mbs = s.mbs;
  B.dp = std::max(1LL, L.dp);
  B.gbs = p.fixed_gbs > 0 ? p.fixed_gbs : B.recipe_gbs;
  if (B.gbs > 0) {
    // A benchmark runs as its code sets it: its GBS is never moved.
    const long long unit = B.mbs * B.dp;
    if (B.gbs % unit != 0 && p.fixed_gbs == 0 && r.kind != RecipeKind::Benchmark) {
      const long long lo = std::max(unit, B.gbs / unit * unit), hi = lo + unit;
      B.gbs = (B.gbs - lo < hi - B.gbs) ? lo : hi;
    }
    B.grad_accum = B.gbs % unit == 0 ? B.gbs / unit : 0;
  }

  // Dataset, overrides, command.
  const std::string launch_mode = !ask.launch_mode.empty() && kb.task_of(ask.launch_mode) == r.mode ? ask.launch_mode : r.launch_mode;
  if (r.kind != RecipeKind::Benchmark) res.dataset = pick_dataset(c, r, launch_mode, ask.dataset, res.departures);
  overrides_of(c, res, r, p, launch_mode);
  build_command(c, res, launch_mode);

  // Where the numbers come from: the code lines.
  for (const char* f : {"tp", "pp", "cp", "ep", "sp", "seq_length", "global_batch_size", "micro_batch_size"})
    if (auto at = kb.cite(r.target, f); !at.empty()) res.sources.push_back({at, 0, 0, std::string("code: ") + f});
  if (auto m = kb.model(r.model_key))
    res.sources.push_back({"data/models.tsv", 0, 0, "model " + m->key + " (" + kb::split(m->source, ';').front() + ")"});
  if (!p.gpu.source.empty()) res.sources.push_back({"data/gpus.tsv", 0, 0, "GPU " + p.gpu.key});
  return res;
}

// --- check's overrides ------------------------------------------------------------------------

std::variant<KeyValues, Error> resolve_overrides(Context& c, const KeyValues& overrides, std::vector<std::string>& notes) {
  Kb& kb = c.kb;
  KeyValues out;
  // Every key the code's ConfigContainer has, for the nearest-key hint.
  std::vector<std::string> code_keys;
  {
    kb::Stmt st(kb.db(), "SELECT key FROM code_config_keys WHERE kind <> 'section' ORDER BY key");
    while (st.step()) code_keys.push_back(st.text(0));
  }
  auto exists_in_code = [&](const std::string& key) {
    kb::Stmt st(kb.db(), "SELECT count(*) FROM code_config_keys WHERE key = ? OR (kind = 'section' AND type = 'open' AND key = ?)");
    st.bind(1, key).bind(2, key.substr(0, key.find('.')));
    return st.step() && st.integer(0) > 0;
  };
  for (const auto& [k, v] : overrides) {
    std::string key = k;
    if (auto ck = kb.config_key(k); ck && ck->key != k) {
      notes.push_back(c.label("note.key_rewritten", {{"from", k}, {"to", ck->key}}));
      key = ck->key;
    }
    auto ck = kb.config_key(key);
    if (!ck && !exists_in_code(key)) {
      // The nearest real keys by edit distance (bounded: a long key costs
      // no more than a short one).
      const std::vector<std::string> top = kb::nearest(key, code_keys, 3);
      return Error{"unknown override key '" + k + "': the code's ConfigContainer has no such field",
                   "did you mean " + kb::join(top, ", ") + "?"};
    }
    if (ck && parse_dim(ck->dimension)) {
      const long long n = to_ll(v, 0);
      if (n < 1 || n > kbq::dsl::kMaxCount)
        return Error{"override '" + k + "=" + v + "': " + ck->key + " must be a positive whole number", "e.g. " + ck->key + "=2"};
    }
    if (ck && ck->dimension == "sp" && kb::fold(v) != "true" && kb::fold(v) != "false")
      return Error{"override '" + k + "=" + v + "': " + ck->key + " is true or false", "e.g. " + ck->key + "=true"};
    if (ck && (ck->dimension == "seq" || ck->dimension == "gbs" || ck->dimension == "mbs")) {
      const long long n = to_ll(v, 0);
      if (n < 1 || n > kb::limits::kMaxSeqLen)
        return Error{"override '" + k + "=" + v + "': " + ck->key + " must be a positive whole number up to " +
                         std::to_string(kb::limits::kMaxSeqLen),
                     "e.g. " + ck->key + "=4096"};
    }
    // A value the field's annotated type cannot hold fails at start-up:
    // caught here (int, float and bool fields; None where the type allows it).
    {
      kb::Stmt st(kb.db(), "SELECT type FROM code_config_keys WHERE key = ? AND kind <> 'section'");
      st.bind(1, key);
      if (st.step()) {
        const std::string type = st.text(0);
        const std::string base = [&] {
          std::string t = type;
          for (const char* wrap : {"Optional[", " | None"}) {
            if (auto at = t.find(wrap); at != std::string::npos)
              t = at == 0 ? t.substr(std::strlen(wrap), t.size() - std::strlen(wrap) - 1) : t.substr(0, at);
          }
          return t;
        }();
        const bool none_ok = base != type && (v == "None" || v == "null");
        const std::string& val = v;  // a structured binding cannot be captured before C++20
        auto whole = [&val] {
          char* end = nullptr;
          errno = 0;
          (void)std::strtoll(val.c_str(), &end, 10);
          return !val.empty() && errno == 0 && *end == '\0';
        };
        auto real = [&val] {
          char* end = nullptr;
          const double d = std::strtod(val.c_str(), &end);
          return !val.empty() && *end == '\0' && std::isfinite(d);
        };
        const std::string lv = kb::fold(v);
        const bool ok = none_ok || (base == "int"     ? whole()
                                    : base == "float" ? real()
                                    : base == "bool"  ? (lv == "true" || lv == "false")
                                                      : true);
        if (!ok)
          return Error{"override '" + k + "=" + v + "': " + key + " is a " + type + " in the code", "e.g. " + key + "=" +
                                                                                                        (base == "bool"  ? "true"
                                                                                                         : base == "int" ? "2"
                                                                                                                         : "0.5")};
      }
    }
    out.emplace_back(key, v);
  }
  return out;
}

// --- alternatives ---------------------------------------------------------------------------

std::vector<Alternative> alternatives(Context& c, const Ask& ask, const Recipe& best) {
  std::vector<Alternative> out;
  Kb& kb = c.kb;
  // One name per recipe function: the generic alias over the canonical name.
  // The alternatives below are library recipes or of best's kind, and no
  // function is exported under both kinds (their modules differ), so the
  // other kind's list is not read.
  std::map<std::string, std::string> name_of;  // target → preferred name
  std::vector<RecipeKind> kinds{RecipeKind::Library};
  if (best.kind != RecipeKind::Library) kinds.push_back(best.kind);
  for (RecipeKind kind : kinds)
    for (const auto& r : kb.recipes(kind)) {
      auto [it, fresh] = name_of.try_emplace(r.target, r.name);
      if (!fresh && (r.name.size() < it->second.size() || (r.name.size() == it->second.size() && r.name < it->second))) it->second = r.name;
    }
  const auto preferred = [&](const Recipe& r) { return name_of[r.target] == r.name; };
  const long long gpus = ask.gpus;
  auto runs = [&](const Recipe& r, const std::string& hw) {
    Ask a = ask;
    a.hardware = hw;
    a.hardware_assumed = false;
    a.launch_mode.clear();
    return plan_recipe(c, r, a, false);
  };
  // The same recipe on the fewest GPUs of this type where it fits.
  {
    Ask a = ask;
    Result here = plan_recipe(c, best, a, false);
    if (!here.runnable && here.min_gpus > 0) {
      a.gpus = here.min_gpus;
      Result more = plan_recipe(c, best, a, false);
      if (more.runnable)
        out.push_back(
            {"more_gpus", best.name, more.layout.gpus, more.layout.hardware,
             c.label("alt.more_gpus",
                     {{"recipe", best.name}, {"gpus", std::to_string(more.layout.gpus)}, {"hardware", more.layout.hardware_name}}),
             more.command});
    }
  }
  // LoRA instead of full training, on the same GPUs.
  if (best.mode != "peft" && best.kind == RecipeKind::Library)
    for (const auto& r : kb.recipes(RecipeKind::Library))
      if (r.mode == "peft" && r.model_key == best.model_key && !r.model_key.empty() && preferred(r)) {
        Result res = runs(r, ask.hardware);
        if (res.runnable && res.memory.known && r.tp && r.pp) {
          out.push_back(
              {"lora", r.name, res.layout.gpus, res.layout.hardware,
               c.label("alt.lora", {{"recipe", r.name}, {"gpus", std::to_string(res.layout.gpus)}, {"hardware", res.layout.hardware_name}}),
               res.command});
          break;
        }
      }
  // A GPU with more memory, on the same count.
  const auto here = kb.gpu(ask.hardware);
  std::vector<Gpu> bigger;
  for (const auto& g : kb.gpus())
    if (here && g.memory_gib > here->memory_gib) bigger.push_back(g);
  std::sort(bigger.begin(), bigger.end(), [](const Gpu& a, const Gpu& b) { return a.memory_gib < b.memory_gib; });
  for (const auto& g : bigger) {
    Result res = runs(best, g.key);
    if (res.runnable && res.memory.known && (gpus == 0 || res.layout.gpus == gpus)) {
      out.push_back({"hardware", best.name, res.layout.gpus, g.key,
                     c.label("alt.hardware",
                             {{"recipe", best.name}, {"gpus", std::to_string(res.layout.gpus)}, {"hardware", kb::upper_ascii(g.key)}}),
                     res.command});
      break;
    }
  }
  // A smaller model of the family, same mode, on the same GPUs.
  const auto* model = kb.model_brief(best.model_key);
  if (model && model->total_params_b > 0 && !model->family.empty()) {
    std::vector<std::pair<double, const Recipe*>> smaller;
    for (const auto& r : kb.recipes(best.kind))
      if (r.mode == best.mode && r.modality == best.modality && r.model_key != best.model_key && r.tp && r.pp && r.cp && preferred(r))
        if (const auto* m = kb.model_brief(r.model_key);
            m && m->family == model->family && m->total_params_b > 0 && m->total_params_b < model->total_params_b)
          smaller.emplace_back(m->total_params_b, &r);
    std::sort(smaller.begin(), smaller.end(),
              [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second->name < b.second->name); });
    for (const auto& [params, r] : smaller) {
      Result res = runs(*r, ask.hardware);
      if (res.runnable && res.memory.known && (gpus == 0 || res.layout.gpus == gpus)) {
        out.push_back({"smaller_model", r->name, res.layout.gpus, res.layout.hardware,
                       c.label("alt.smaller",
                               {{"recipe", r->name}, {"gpus", std::to_string(res.layout.gpus)}, {"hardware", res.layout.hardware_name}}),
                       res.command});
        break;
      }
    }
  }
  return out;
}

}  // namespace kbq
