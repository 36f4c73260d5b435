// Plan stage: what a question asks (see plan.hpp), resolved against the
// KB's values: its mode and launcher mode, model and size, modality, kind,
// GPUs and hardware, sequence, precision, dataset and size filters, then the
// free words the recipe names explain and those that name a model no recipe
// has.
#include <algorithm>

#include "query/plan/plan_int.hpp"

namespace kbq {

using plan_int::asked_precision_name;
using plan_int::precisions_asked;
using plan_int::to_ll;

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
std::vector<std::string> unknown_model_words(const std::set<std::string, std::less<>>& name_tokens, const kbq::dsl::Query& q) {
  using kbq::dsl::TermKind;
  const auto& t = q.terms;
  const size_t n = t.size();
  auto free = [&](size_t i) { return i < n && (t[i].kind == TermKind::FreeText || t[i].kind == TermKind::Unknown); };
  auto all_of = [](const std::string& w, auto pred) {
    return !w.empty() && std::all_of(w.begin(), w.end(), [&](unsigned char ch) { return pred(ch); });
  };
  auto any_of = [](const std::string& w, auto pred) { return std::any_of(w.begin(), w.end(), [&](unsigned char ch) { return pred(ch); }); };
  auto name_like = [&](const std::string& w) {
    return all_of(w, [](unsigned char ch) { return std::isalnum(ch) || ch == '.' || ch == '-' || ch == ' '; });
  };
  // (A space is inside a name only as one lexicon phrase: "llama 3.3", "command r".)
  auto letters = [&](const std::string& w) { return all_of(w, [](unsigned char ch) { return std::isalpha(ch) || ch == ' '; }); };
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

std::variant<Ask, Error> resolve_terms(const Context& c, const kbq::dsl::Query& q) {
  const Snapshot& kb = c.kb;
  const Settings& s = c.settings();
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
  if (ask.size_token.empty()) ask.flagship = q.flagship;
  ask.size_params = q.size_params;
  ask.intents = q.intents;
  ask.scale = q.scale;
  for (const auto& [intent, modality] : s.intent_modality)
    if (q.intents.count(intent)) ask.modalities.insert(modality);
  ask.benchmark = q.intents.count(s.benchmark_intent) > 0 || filter("kind") == to_string(RecipeKind::Benchmark);
  ask.hardware = !q.hardware.empty() ? q.hardware : filter("hardware");
  if (ask.hardware.empty()) {
    ask.hardware = s.default_gpu;
    ask.hardware_assumed = true;
  }
  const Gpu* gpu = kb.gpu(ask.hardware);
  if (!gpu)
    return Error{"unknown GPU type '" + ask.hardware + "'",
                 "known GPU types: " + kb::join(kb.models.empty() ? std::vector<std::string>{} : plan_int::gpu_keys(kb), ", ")};
  if (q.gpus)
    ask.gpus = *q.gpus;
  else if (q.nodes)
    ask.gpus = static_cast<long long>(*q.nodes) * (q.gpus_per_node ? *q.gpus_per_node : gpu->per_node);
  else
    for (const auto& [intent, n] : s.intent_gpus)  // "single GPU"
      if (q.intents.count(intent)) ask.gpus = n;
  ask.seq = q.seq_len.value_or(0);
  ask.precision = q.precision;
  // A precision asked that the assumed GPU does not run (NVFP4 on the
  // H100): the first GPU of planner.tsv precision_gpus that runs it is
  // assumed instead, said (resolve_words).
  if (ask.hardware_assumed && !ask.precision.empty()) {
    const auto runs_asked = [&](const Gpu& g) {
      return std::any_of(kb.precisions.begin(), kb.precisions.end(),
                         [&](const PrecisionInfo& p) { return kb::starts_with(p.key, ask.precision) && kb.runs(p.key, g).value_or(true); });
    };
    if (!runs_asked(*gpu))
      for (const auto& key : s.precision_gpus)
        if (const Gpu* g = kb.gpu(key); g && runs_asked(*g)) {
          ask.hardware = key;
          ask.hardware_for_precision = true;
          gpu = g;
          break;
        }
  }
  ask.memory_gib = q.memory_gb;  // read as GiB, as data/gpus.tsv memory_gb is (docs/memory.md)
  // GPUs per node as the question gives them: "two 8-GPU nodes", a system
  // ("2 DGX H100"), or a GPU count with a node count. The count is per
  // node when it follows the node count and a node of this GPU holds that
  // many ("2 nodes of 4 A100": 8 GPUs), else the total ("16 H100 on 2
  // nodes": 8 per node); the reading is said.
  if (q.gpus_per_node) {
    ask.per_node = *q.gpus_per_node;
  } else if (q.gpus && q.nodes && *q.nodes > 0 && q.system.empty()) {
    size_t nodes_at = std::string::npos, gpus_at = std::string::npos;
    for (const auto& t : q.terms) {
      if (t.kind == kbq::dsl::TermKind::Nodes && nodes_at == std::string::npos) nodes_at = static_cast<size_t>(t.span.col);
      if (t.kind == kbq::dsl::TermKind::Gpus && gpus_at == std::string::npos) gpus_at = static_cast<size_t>(t.span.col);
    }
    const bool per_node = nodes_at<gpus_at&& * q.gpus <= gpu->per_node&& * q.nodes> 1;
    if (per_node) {
      ask.per_node = *q.gpus;
      ask.gpus = static_cast<long long>(*q.gpus) * *q.nodes;
    } else if (*q.gpus % *q.nodes == 0) {
      ask.per_node = *q.gpus / *q.nodes;
    }
    if (ask.per_node > 0)
      ask.nodes_read =
          c.label("warn.nodes_read",
                  {{"nodes", std::to_string(*q.nodes)}, {"per_node", std::to_string(ask.per_node)}, {"gpus", std::to_string(ask.gpus)}});
  } else if (q.gpus && q.nodes && *q.nodes > 0 && *q.gpus % *q.nodes == 0) {
    ask.per_node = *q.gpus / *q.nodes;
  }
  ask.dataset = filter("dataset");
  for (const auto& [d, name] : kDimNames)
    if (auto v = filter(std::string(name)); !v.empty()) ask.fixed.emplace_back(kb.key_for(name), v);
  // sp: is not planned with (it used to be read and silently ignored): the
  // planner sets sequence parallelism by the sizing rule (on when TP > 1),
  // and a layout with it off is one for `kbq check` to judge.
  if (!filter("sp").empty())
    return Error{"filter 'sp' is not used to plan: kbq turns sequence parallelism on whenever TP > 1 (sizing rule 5)",
                 "to judge your own setting: kbq check RECIPE --gpus N " + kb.key_for("sp") + "=false"};
  return ask;
}

namespace {

void add_name_tokens(std::string_view name, NameTokens& tokens) {
  for (size_t start = 0, end = 0; end != std::string_view::npos; start = end + 1) {
    end = name.find('_', start);
    const std::string_view tok = name.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (tokens.find(tok) == tokens.end()) tokens.emplace(tok);
  }
}

}  // namespace

NameTokens name_tokens(const Catalog& recipes) {
  NameTokens tokens;
  for (const auto& r : recipes.recipes) add_name_tokens(r.name, tokens);
  return tokens;
}

NameTokens name_tokens(const std::vector<std::string>& names) {
  NameTokens tokens;
  for (const auto& n : names) add_name_tokens(n, tokens);
  return tokens;
}

void resolve_words(const Context& c, const kbq::dsl::Query& q, const std::function<const NameTokens&()>& tokens, Ask& ask, Answer& a) {
  using kbq::dsl::TermKind;
  // Only free and unknown words are looked up among the names' words.
  const bool free_words = std::any_of(q.terms.begin(), q.terms.end(),
                                      [](const auto& t) { return t.kind == TermKind::FreeText || t.kind == TermKind::Unknown; });
  static const NameTokens kNone;
  resolve_words(c, q, free_words ? tokens() : kNone, ask, a);
}

void resolve_words(const Context& c, const kbq::dsl::Query& q, const NameTokens& tokens, Ask& ask, Answer& a) {
  using kbq::dsl::TermKind;
  ask.unknown_model_words = unknown_model_words(tokens, q);
  ask.other_mode = q.other_mode;
  std::vector<std::string> ignored;
  for (const auto& t : q.terms) {
    if (t.kind == TermKind::FreeText && !ask.other_mode.empty() && kb::fold(t.value) == kb::fold(ask.other_mode)) continue;
    // A word recipe names carry is a name even when it is near a lexicon
    // word ("pro" of deepseek_v4_pro_*, one edit from "ppo").
    const bool name_word = (t.kind == TermKind::FreeText || t.kind == TermKind::Unknown) && tokens.count(kb::fold(t.text));
    if (name_word) ask.name_words.push_back(kb::fold(t.text));
    if (t.kind != TermKind::FreeText && t.kind != TermKind::Stopword && t.kind != TermKind::Unknown) ask.understood = true;
    if (t.kind == TermKind::FreeText && !name_word &&
        std::find(ask.unknown_model_words.begin(), ask.unknown_model_words.end(), t.text) == ask.unknown_model_words.end())
      ignored.push_back(t.text);
  }
  // Words not understood never vanish silently.
  if (!ignored.empty() && ask.unknown_model_words.empty() && ask.understood)
    a.warnings.push_back(c.label("warn.ignored", {{"words", kb::join(ignored, " ")}}));
  // A GPU the question names but kbq has no data for (its own warning says
  // so): the assumed one stands in its place, not "no GPU type".
  const bool unknown_gpu = std::any_of(q.warnings.begin(), q.warnings.end(),
                                       [](const kbq::dsl::Warning& w) { return w.kind == kbq::dsl::WarningKind::UnknownGpu; });
  if (ask.hardware_assumed && (ask.understood || !ask.name_words.empty()))
    a.warnings.push_back(c.label(unknown_gpu                  ? "warn.hardware_assumed_unknown"
                                 : ask.hardware_for_precision ? "warn.hardware_assumed_precision"
                                                              : "warn.hardware_assumed",
                                 {{"hardware", c.kb.gpu_name(ask.hardware)},
                                  {"precision", asked_precision_name(precisions_asked(c.kb, ask.precision), ask.precision)},
                                  {"default", c.kb.gpu_name(c.settings().default_gpu)}}));
  if (!ask.nodes_read.empty()) a.warnings.push_back(ask.nodes_read);
  // A memory size the user states replaces the GPU type's: said, with both
  // (not when it is the GPU type's own, to a tenth of a GiB as printed).
  if (const Gpu* g = c.kb.gpu(ask.hardware); g && ask.memory_gib > 0 && kb::one_decimal(ask.memory_gib) != kb::one_decimal(g->memory_gib))
    a.warnings.push_back(c.label(
        "warn.memory_stated",
        {{"memory", kb::one_decimal(ask.memory_gib)}, {"hardware", c.kb.gpu_name(g->key)}, {"own", kb::one_decimal(g->memory_gib)}}));
}

}  // namespace kbq
