// Plan stage (see plan.hpp): candidates, layout fitting, dataset, overrides,
// notes and the launch command, the one builder of it that kbq and the
// generated site pages share.
#include "query/plan/plan.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_map>

#include "base/checked.hpp"
#include "base/limits.hpp"
#include "base/text.hpp"

namespace kbq {

namespace {

// The smallest power of two ≥ v: kb::next_pow2, which cannot overflow
// (a sequence length of 9e18 once made this loop forever, issue 12).
long long next_pow2(long long v) { return kb::next_pow2(v).value_or(kb::limits::kMaxParallel); }

long long to_ll(const std::string& s, long long fallback = 0) {
  try {
    size_t used = 0;
    const long long v = std::stoll(s, &used);
    return used == s.size() ? v : fallback;
  } catch (...) {
    return fallback;
  }
}

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
      cmd.replace(vstart, vend - vstart, value);
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

Impact impact_of(Context& c, const std::string& key, Override& o) {
  auto k = c.kb.config_key(key);
  if (!k) return Impact::Unknown;
  o.sentence = k->sentence;
  o.source = {k->file, k->line, 0, "config layer of " + k->key};
  // In the answer's language: the aligned paragraph's opening sentence.
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
  return k->layer;
}

void add_override(Context& c, Result& r, const std::string& key, const std::string& value) {
  for (auto& o : r.overrides)
    if (o.key == key) {
      o.value = value;
      return;
    }
  Override o;
  o.key = key;
  o.value = value;
  o.impact = impact_of(c, key, o);
  r.overrides.push_back(std::move(o));
}

// The config key that sets a layout dimension (first by name).
std::string key_for(Kb& kb, const std::string& dimension) {
  auto keys = kb.config_keys_for(dimension);
  return keys.empty() ? std::string{} : keys.front().key;
}
std::string key_for(Kb& kb, Dim d) { return key_for(kb, std::string(to_string(d))); }

std::string hardware_or_default(Kb& kb, const std::string& hw) { return hw.empty() ? kb.planner("default_gpu") : hw; }

// What the user fixed with overrides: the planner never changes these.
struct Fixed {
  std::set<Dim> dims;
  bool seq = false, sp = false;
};

// The user's own overrides come first and are never second-guessed.
Fixed apply_user_overrides(Context& c, Result& r, const KeyValues& user) {
  Fixed fixed;
  Layout& L = r.layout;
  for (const auto& [key, value] : user) {
    add_override(c, r, key, value);
    auto ck = c.kb.config_key(key);
    const std::string d = ck ? ck->dimension : std::string{};
    if (auto dim = parse_dim(d)) {
      L.at(*dim) = Range::of(to_ll(value, 1));
      fixed.dims.insert(*dim);
    } else if (d == "seq") {
      L.seq = to_ll(value);
      fixed.seq = true;
    } else if (d == "sp") {
      L.sp = kb::fold(value) == "true" || value == "1";
      fixed.sp = true;
    }
  }
  return fixed;
}

// Sequence length: a new length is a convergence change; beyond the
// long-context threshold it needs CP so each rank keeps the recipe's own length.
void fit_sequence(Context& c, Result& r, long long seq, const Fixed& fixed) {
  const Recipe& rc = r.recipe;
  Layout& L = r.layout;
  if (seq > 0 && !fixed.seq && seq != rc.seq_len) {
    L.seq = seq;
    add_override(c, r, key_for(c.kb, "seq"), std::to_string(seq));
  }
  if (L.seq <= c.threshold || fixed.dims.count(Dim::CP) || !L.cp.exact()) return;
  // Tokens per CP rank the recipe was written for (its length over its CP).
  const long long base = rc.seq_len > 0 && rc.cp.exact() ? std::max<long long>(rc.seq_len / rc.cp.value(), 1) : c.threshold;
  const long long need = next_pow2((L.seq + base - 1) / std::max<long long>(base, 1));
  if (rc.seq_len > 0 && rc.seq_len >= L.seq) return;  // the recipe already handles this length
  if (need > L.cp.value()) {
    L.cp = Range::of(need);
    add_override(c, r, key_for(c.kb, Dim::CP), std::to_string(need));
  }
}

// World size: the user's GPUs, else the recipe's minimum, else the product
// of its parallel sizes. Too few GPUs for the recipe's layout: for MoE
// shrink EP first (it only shards experts), then TP.
void fit_world(Context& c, Result& r, const std::optional<Model>& model, long long gpus, const Fixed& fixed) {
  const Recipe& rc = r.recipe;
  Layout& L = r.layout;
  const bool moe = c.kb.is_moe(rc);
  auto dense = [&] { return L.tp.value() * L.pp.value() * L.cp.value(); };
  auto expert = [&] { return L.pp.value() * L.ep.value() * L.etp.value(); };
  auto minimum = [&] { return moe ? L.pp.value() * std::max(L.tp.value() * L.cp.value(), L.ep.value() * L.etp.value()) : dense(); };
  if (gpus <= 0) gpus = std::max<long long>(rc.gpus.is_value() ? rc.gpus.lo : 0, minimum());
  L.gpus = gpus;
  if (moe && !fixed.dims.count(Dim::EP) && L.ep.exact() && minimum() > gpus) {
    long long ep = L.ep.value();
    while (ep > 1 && (L.pp.value() * ep * L.etp.value() > gpus || (model && model->experts % ep != 0))) ep /= 2;
    if (ep != L.ep.value()) {
      L.ep = Range::of(ep);
      add_override(c, r, key_for(c.kb, Dim::EP), std::to_string(ep));
    }
  }
  if (!fixed.dims.count(Dim::TP) && L.tp.exact() && L.pp.exact() && L.cp.exact() && dense() > gpus) {
    long long tp = L.tp.value();
    while (tp > 1 && tp * L.pp.value() * L.cp.value() > gpus) tp /= 2;
    if (tp != L.tp.value()) {
      L.tp = Range::of(tp);
      add_override(c, r, key_for(c.kb, Dim::TP), std::to_string(tp));
    }
  }
  // Sequence parallelism follows TP.
  if (!fixed.sp) {
    const bool want = L.tp.exact() && L.tp.value() > 1;
    L.sp = rc.sp.value_or(want);
    if (want && !L.sp) {
      L.sp = true;
      add_override(c, r, key_for(c.kb, "sp"), "True");
    }
  }
  if (L.per_node > 0 && gpus > L.per_node) {
    L.nodes = (gpus + L.per_node - 1) / L.per_node;
    L.nproc = L.per_node;
  } else {
    L.nodes = 1;
    L.nproc = gpus;
  }
  if (L.tp.exact() && L.pp.exact() && L.cp.exact() && dense() > 0 && gpus % dense() == 0) L.dp = gpus / dense();
  if (moe && L.ep.exact() && L.pp.exact() && expert() > 0 && gpus % expert() == 0) L.edp = gpus / expert();
}

// Fits the recipe to `gpus` GPUs (0 = its own minimum) and `seq` tokens
// (0 = its default), applying `user` overrides (dimension → value) first.
void fit(Context& c, Result& r, const std::optional<Model>& model, long long gpus, long long seq, const std::string& hardware, bool assumed,
         const KeyValues& user) {
  const Recipe& rc = r.recipe;
  Layout& L = r.layout;
  L.tp = rc.tp;
  L.pp = rc.pp;
  L.cp = rc.cp;
  L.ep = rc.ep;
  L.vp = rc.vp;
  L.etp.state = kb::RangeState::None;
  L.seq = rc.seq_len;
  L.hardware = hardware;
  L.hardware_assumed = assumed;
  const auto gpu = c.kb.gpu(hardware);
  L.per_node = gpu ? gpu->per_node : 0;
  const Fixed fixed = apply_user_overrides(c, r, user);
  fit_sequence(c, r, seq, fixed);
  fit_world(c, r, model, gpus, fixed);
}

std::string pick_dataset(Kb& kb, const std::string& mode, const std::string& wanted, Answer* answer, const std::string& lang) {
  const auto presets = kb.datasets();
  std::vector<std::string> fits;
  for (const auto& [preset, modes] : presets)
    if (std::find(modes.begin(), modes.end(), mode) != modes.end()) fits.push_back(preset);
  if (!wanted.empty()) {
    std::string current = wanted;
    for (const auto& [from, to] : kb.renames())
      if (from == wanted) current = to;  // an old preset name: use its new name
    const bool ok = std::find(fits.begin(), fits.end(), current) != fits.end();
    if (ok || mode.empty()) return current;
    if (answer) {
      std::string msg =
          fill(kb.label(lang, "pretrain_only"), {{"preset", current}, {"mode", mode}, {"alternatives", kb::join(fits, " / ")}});
      if (std::find(answer->warnings.begin(), answer->warnings.end(), msg) == answer->warnings.end()) answer->warnings.push_back(msg);
    }
  }
  return fits.empty() ? std::string{} : fits.front();
}

// The launch command: the newest revision's entry-point command of the
// recipe's kind, its flags set to the layout, the overrides appended.
void build_command(Context& c, Result& r) {
  Kb& kb = c.kb;
  const bool bench = r.recipe.kind == RecipeKind::Benchmark;
  const std::string ref = kb.planner(bench ? "benchmark_command" : "library_command");
  const auto slash = ref.find('/');
  if (slash == std::string::npos) return;
  const auto& texts = kb.entity(ref.substr(0, slash), ref.substr(slash + 1));
  if (texts.empty()) return;
  const EntityText& t = texts.front();
  auto it = t.parts.find("command");
  std::string cmd = it == t.parts.end() ? t.text : it->second;
  r.sources.push_back({t.file, t.line, t.revision, "entry-point command"});
  for (auto& n : superseded_notes(kb, ref.substr(0, slash), ref.substr(slash + 1), c.lang)) r.notes.push_back(std::move(n));
  const Layout& L = r.layout;
  if (bench) {
    set_flag(cmd, kb.planner("bench_nodes_flag"), std::to_string(L.nodes));
    set_flag(cmd, kb.planner("bench_gpus_per_node_flag"), std::to_string(L.nproc));
    set_flag(
        cmd, kb.planner("recipe_flag"),
        fill(kb.label(c.lang, "benchmark_name"), {{"model", r.recipe.model}, {"gpus", std::to_string(L.gpus)}, {"hardware", L.hardware}}));
    if (!r.recipe.mode.empty()) set_flag(cmd, kb.planner("bench_mode_flag"), r.recipe.mode);
  } else {
    set_flag(cmd, kb.planner("nproc_flag"), std::to_string(L.nproc));
    set_flag(cmd, kb.planner("recipe_flag"), r.recipe.name);
    if (!r.dataset.empty()) set_flag(cmd, kb.planner("dataset_flag"), r.dataset);
    if (L.nodes > 1) {
      const std::string flag = kb.planner("nproc_flag");
      const auto at = cmd.find(flag);
      const std::string extra = fill(kb.planner("multi_node_flags"), {{"nodes", std::to_string(L.nodes)}});
      if (at != std::string::npos && !extra.empty()) cmd.insert(at, extra + " ");
      r.notes.push_back(fill(kb.label(c.lang, "rendezvous"), {{"nodes", std::to_string(L.nodes)}}));
    }
  }
  for (const auto& o : r.overrides) {
    while (!cmd.empty() && (cmd.back() == '\n' || cmd.back() == ' ')) cmd.pop_back();
    // Single-quoted for the shell, a quote inside written as '\''.
    std::string quoted = "'";
    for (char ch : o.key + "=" + o.value) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    cmd += " \\\n    " + quoted + "'";
  }
  r.command = cmd;
}

void add_recipe_notes(Context& c, Result& r) {
  const Recipe& rc = r.recipe;
  if (rc.pattern) r.notes.push_back(c.kb.label(c.lang, "pattern_row"));
  if (!rc.mentioned_in.empty())
    r.notes.push_back(fill(c.kb.label(c.lang, "mentioned"), {{"where", rc.mentioned_in}, {"pattern", rc.expanded_from}}));
  else if (!rc.expanded_from.empty())
    r.notes.push_back(fill(c.kb.label(c.lang, "expanded"), {{"pattern", rc.expanded_from}}));
  for (const auto& [name, range] : {std::pair<const char*, const Range&>{"TP", rc.tp}, {"PP", rc.pp}, {"EP", rc.ep}}) {
    if (range.is_value() && !range.exact() && rc.kind == RecipeKind::Library)
      r.notes.push_back(
          fill(c.kb.label(c.lang, "range_only"),
               {{"dim", name}, {"range", kb::format_range(range)}, {"pattern", rc.expanded_from.empty() ? rc.name : rc.expanded_from}}));
  }
  if (rc.kind == RecipeKind::Benchmark) r.notes.push_back(c.kb.label(c.lang, "benchmark_warning"));
  r.sources.push_back({rc.file, rc.line, rc.revision, "recipe row"});
}

// Everything the plan stage states about one recipe on a layout.
void plan_one(Context& c, Result& r, const std::optional<Model>& model, long long gpus, long long seq, const std::string& hardware,
              bool assumed, const KeyValues& user, const std::string& wanted_dataset, Answer* a) {
  fit(c, r, model, gpus, seq, hardware, assumed, user);
  if (r.recipe.kind != RecipeKind::Benchmark) r.dataset = pick_dataset(c.kb, r.recipe.mode, wanted_dataset, a, c.lang);
}

void finish_plan(Context& c, Result& r) {
  add_recipe_notes(c, r);
  build_command(c, r);
}

// Candidate selection: the best `limit` recipes of a kind in answer order
// (score, then non-pattern rows first, then name and mode), scored with
// every part, without scoring every recipe in full. Recipes of one shape
// (compiler/derive) get the same score from every term that does not read
// names, so the ranker scores one row per shape first. When a term reads
// names (model, size, family filter), each candidate of the name prefix
// adds its name parts to its shape's score. Otherwise the members of the
// best shapes are read by name, shape after shape, until the next shape
// cannot beat the answers found; quick-reference picks and free-text hits,
// which add to their shape's score, are scored one by one first.
struct Ranked {
  int score = 0;
  bool pattern = false;
  std::string name, mode;
  long long id = 0;
  bool operator<(const Ranked& o) const {
    if (score != o.score) return score > o.score;
    if (pattern != o.pattern) return !pattern;
    if (name != o.name) return name < o.name;
    return mode < o.mode;
  }
};

std::vector<Result> select_recipes(Kb& kb, Ranker& ranker, RecipeKind kind, const std::string& prefix, long long gpus,
                                   const std::string& hardware, size_t limit) {
  if (limit == 0) return {};
  using Parts = Ranker::Parts;
  struct ShapeScore {
    int score = 0;
    Recipe row;
  };
  std::unordered_map<long long, ShapeScore> shapes;  // shape id → its score; ruled-out shapes are left out
  std::vector<const ShapeScore*> order;
  for (auto& row : kb.shapes(kind)) {
    Result r;
    r.recipe = std::move(row);
    if (!ranker.score(r, gpus, hardware, Parts::Shape)) continue;
    const long long id = r.recipe.shape;
    order.push_back(&(shapes[id] = ShapeScore{r.score, std::move(r.recipe)}));
  }
  std::stable_sort(order.begin(), order.end(), [](const ShapeScore* x, const ShapeScore* y) {
    return x->score != y->score ? x->score > y->score : (!x->row.pattern && y->row.pattern);
  });

  std::vector<Ranked> ranked;
  // Keeps the best `limit` (the rest can no longer be answers: a positive
  // score always ranks above the scores that positives push out).
  // After a trim the first `limit` are in order, so ranked[limit - 1] is a
  // bar every answer must clear (later additions only raise it).
  bool bar = false;
  const auto trim = [&] {
    if (ranked.size() < limit) return;
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<long>(limit), ranked.end());
    ranked.resize(limit);
    bar = true;
  };
  // A candidate's name parts on top of its shape's score.
  Result scratch;
  const auto score_one = [&](const CandidateView& c) {
    auto it = shapes.find(c.shape);
    if (it == shapes.end()) return;
    const Recipe& row = it->second.row;
    Recipe& r = scratch.recipe;
    r.id = c.id;
    r.name.assign(c.name);
    r.model_key.assign(c.model_key);
    r.pattern = row.pattern;
    r.sizes = row.sizes;
    scratch.score = 0;
    scratch.parts.clear();
    if (!ranker.score(scratch, gpus, hardware, Parts::Names)) return;
    Ranked rk{it->second.score + scratch.score, row.pattern, r.name, std::string(c.mode), c.id};
    // Worse than the last of the best `limit` kept so far: never an answer.
    if (bar && ranked[limit - 1] < rk) return;
    ranked.push_back(std::move(rk));
    if (ranked.size() >= 4 * limit + 64 || (!bar && ranked.size() >= limit)) trim();
  };
  const auto view = [](const Candidate& c) { return CandidateView{c.id, c.shape, c.name, c.model_key, c.mode, c.kind}; };

  if (ranker.names_matter()) {
    kb.candidates(kind, prefix, score_one);
  } else {
    std::set<long long> one_by_one;
    for (const auto& name : ranker.named())
      for (const auto& c : kb.candidates_named(kind, name))
        if (one_by_one.insert(c.id).second) score_one(view(c));
    for (long long id : ranker.text_hits())
      if (auto c = kb.candidate(id); c && c->kind == kind && one_by_one.insert(c->id).second) score_one(view(*c));
    trim();
    for (const ShapeScore* sh : order) {
      // Nothing from here on scores above zero, and something did: stop.
      if (sh->score <= 0 && std::any_of(ranked.begin(), ranked.end(), [](const Ranked& r) { return r.score > 0; })) break;
      // Enough answers, and none of this shape's members can beat them: stop.
      if (bar) {
        const Ranked& last = ranked[limit - 1];
        if (last.score > sh->score || (last.score == sh->score && !last.pattern && sh->row.pattern)) break;
      }
      for (const auto& c : kb.shape_members(sh->row.shape, static_cast<long long>(limit + one_by_one.size())))
        if (!one_by_one.count(c.id)) ranked.push_back({sh->score, sh->row.pattern, c.name, c.mode, c.id});
      trim();
    }
  }
  // Recipes that nothing in the query speaks for are not answers, when
  // some recipe does score.
  const bool any_positive = std::any_of(ranked.begin(), ranked.end(), [](const Ranked& r) { return r.score > 0; });
  if (any_positive) ranked.erase(std::remove_if(ranked.begin(), ranked.end(), [](const Ranked& r) { return r.score <= 0; }), ranked.end());
  std::sort(ranked.begin(), ranked.end());
  if (ranked.size() > limit) ranked.resize(limit);

  std::vector<Result> out;
  for (const auto& rk : ranked) {
    auto recipe = kb.recipe_by_id(rk.id);
    if (!recipe) continue;  // cannot happen: the id was just read from the same KB
    Result r;
    r.recipe = std::move(*recipe);
    ranker.score(r, gpus, hardware);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

Context make_context(Kb& kb, const std::string& lang) { return Context{kb, lang, to_ll(kb.planner("long_context_threshold"))}; }

std::variant<std::vector<Result>, Error> plan_question(Context& c, const kbq::dsl::Query& q, Ranker& ranker, size_t limit, Answer& a) {
  Kb& kb = c.kb;
  const auto filter = [&](const std::string& f) {
    auto it = q.filters.find(f);
    return it == q.filters.end() ? std::string{} : it->second;
  };
  const bool bench = q.intents.count(kb.planner("benchmark_intent")) || filter("kind") == to_string(RecipeKind::Benchmark);
  const std::string hardware = hardware_or_default(kb, q.hardware);
  const long long gpus = q.gpus ? *q.gpus : q.nodes ? *q.nodes * std::max(1, kb.gpu(hardware) ? kb.gpu(hardware)->per_node : 1) : 0;
  const long long seq = q.seq_len.value_or(0);
  const std::string prefix = !q.model.empty() ? q.model : filter("family");

  // User parallelism filters become overrides on every candidate.
  KeyValues user;
  for (const auto& [d, name] : kDimNames)
    if (auto v = filter(std::string(name)); !v.empty()) user.emplace_back(key_for(kb, d), v);

  std::vector<Result> scored =
      select_recipes(kb, ranker, bench ? RecipeKind::Benchmark : RecipeKind::Library, prefix, gpus, hardware, limit);
  // A query of free words only (unknown words, stopwords), none of them in
  // any recipe's text, speaks for no recipe: nothing matched (the warnings
  // still suggest the words it may have meant).
  kbq::dsl::Constraints known = q.constraints();
  known.free_text.clear();
  if (known == kbq::dsl::Constraints{} && std::none_of(scored.begin(), scored.end(), [](const Result& r) { return r.score > 0; }))
    scored.clear();

  for (auto& r : scored) {
    const auto model = kb.model(r.recipe.model_key);
    // A TP that cannot divide the model's kv heads contradicts the query.
    if (auto tp = filter("tp"); !tp.empty() && model && model->kv_heads && to_ll(tp) > 0 && *model->kv_heads % to_ll(tp) != 0) {
      for (const auto& t : q.terms)
        if (t.kind == kbq::dsl::TermKind::Filter && t.field == "tp")
          return Error{"tp:" + tp + " does not divide the " + std::to_string(*model->kv_heads) + " kv heads of " + model->display,
                       "TP must divide num_key_value_heads (rule 1)", t.span.col, t.span.len};
    }
    const long long want_gpus = gpus > 0 ? gpus : ranker.suggested_gpus(r);
    plan_one(c, r, model, want_gpus, seq, hardware, q.hardware.empty(), user, filter("dataset"), &a);
    for (const auto& s : ranker.notes_for(r, c.lang)) r.notes.push_back(s);
    finish_plan(c, r);
  }
  return scored;
}

Result plan_recipe(Context& c, const Recipe& recipe, long long gpus, const std::string& hardware, const KeyValues& overrides) {
  Result r;
  r.recipe = recipe;
  const auto model = c.kb.model(recipe.model_key);
  plan_one(c, r, model, gpus, 0, hardware_or_default(c.kb, hardware), hardware.empty(), overrides, {}, nullptr);
  finish_plan(c, r);
  return r;
}

std::optional<Error> check_overrides(Kb& kb, const KeyValues& overrides) {
  for (const auto& [k, v] : overrides) {
    auto ck = kb.config_key(k);
    if (!ck) return Error{"unknown override key '" + k + "'", "keys are listed in kb-sources/data/config-keys.tsv"};
    // A parallel size must be a positive whole number.
    if (parse_dim(ck->dimension)) {
      const long long n = to_ll(v, 0);
      if (n < 1 || n > 1000000)
        return Error{"override '" + k + "=" + v + "': " + ck->key + " must be a positive whole number", "e.g. " + ck->key + "=2"};
    }
    // A sequence length too, no longer than the query language allows
    // (a larger one overflowed the CP arithmetic, issue 12).
    if (ck->dimension == "seq") {
      const long long n = to_ll(v, 0);
      if (n < 1 || n > kb::limits::kMaxSeqLen)
        return Error{"override '" + k + "=" + v + "': " + ck->key + " must be a whole number of tokens from 1 to " +
                         std::to_string(kb::limits::kMaxSeqLen),
                     "e.g. " + ck->key + "=8192"};
    }
  }
  return std::nullopt;
}

}  // namespace kbq
