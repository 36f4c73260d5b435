// The layout planner (see layout.hpp).
#include "query/plan/layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <tuple>

#include "base/limits.hpp"
#include "base/text.hpp"
#include "query/rules/rules.hpp"

namespace kbq {

namespace {

template <typename T>
bool take(const std::variant<memory::Mapped<T>, memory::InputError>& v, T& into, Sizing& s) {
  if (const auto* err = std::get_if<memory::InputError>(&v)) {
    s.why_not = err->message;
    return false;
  }
  const auto& m = std::get<memory::Mapped<T>>(v);
  into = m.value;
  s.assumptions.insert(s.assumptions.end(), m.assumptions.begin(), m.assumptions.end());
  return true;
}

// Powers of two up to `limit`, with `also` added.
std::vector<long long> powers(long long limit, long long also) {
  std::vector<long long> out;
  for (long long v = 1; v <= limit && v <= 1024; v *= 2) out.push_back(v);
  if (also >= 1 && also <= limit && std::find(out.begin(), out.end(), also) == out.end()) out.push_back(also);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Sizing size_recipe(const RecipeData& d) {
  const Recipe& r = d.recipe;
  Sizing s;
  const memory::RecipeFacts& facts = d.facts;
  const Model* model = d.model;
  const memory::ModelRow* row = model ? &model->row : nullptr;
  static const memory::ArchFacts kNoArch;
  const memory::ArchFacts& arch = model ? model->arch : kNoArch;
  const bool ok = take(memory::architecture_from_facts(row, arch, facts), s.arch, s) &&
                  take(memory::training_from_facts(facts), s.training, s) &&
                  take(memory::layout_from_facts(facts, std::max(1LL, r.min_gpus.value_or(1)), false), s.base, s);
  RuleModel& m = s.rules;
  m.layers = s.arch.layers > 0 ? s.arch.layers : model ? model->layers : 0;
  m.heads = s.arch.heads > 0 ? s.arch.heads : model ? model->heads : 0;
  m.kv_heads = s.arch.mla ? 0 : s.arch.kv_heads > 0 ? s.arch.kv_heads : model ? model->kv_heads : 0;
  m.experts = s.arch.experts > 0 ? s.arch.experts : model ? model->experts : 0;
  const auto& f = d.facts;
  // The recipe's PP and VP carry a layout: it sets one, or names a builder
  // kbq cannot read (whose map is then unknown).
  auto lay = f.find("pipeline_layout");
  bool own_layout = lay != f.end() && ((lay->second.state == kb::FactState::Value && lay->second.type != "none") ||
                                       lay->second.state == kb::FactState::Alternatives);
  // The pairs the recipe's layout builder knows ("4x1 8x2", data/code-fields.tsv layout_pairs).
  if (auto b = f.find("layout_pairs"); b != f.end() && b->second.state == kb::FactState::Value && b->second.type == "str") {
    for (const auto& word : kb::split(b->second.value, ' ')) {
      const auto x = word.find('x');
      const long long p = x == std::string::npos ? 0 : std::atoll(word.substr(0, x).c_str());
      const long long v = x == std::string::npos ? 0 : std::atoll(word.substr(x + 1).c_str());
      if (p >= 1 && v >= 1) m.layout_pairs.emplace_back(p, v);
    }
    std::sort(m.layout_pairs.begin(), m.layout_pairs.end());
  } else if (b != f.end() && b->second.state != kb::FactState::Default) {
    own_layout = true;
  }
  m.stage_layout = s.base.first_stage_layers > 0 || s.base.last_stage_layers > 0 || own_layout || !m.layout_pairs.empty();
  if (own_layout) {
    m.layout_pp = std::max<long long>(1, s.base.pp);
    m.layout_vp = s.base.vp > 1 ? s.base.vp : 0;
  }
  // A benchmark runs as exported, with no PP or VP override (changes.cpp):
  // the launcher never calls its builder, so its own layout stands.
  if (!m.layout_pairs.empty() && m.layout_pp > 0 && r.kind == RecipeKind::Benchmark) {
    const std::pair<long long, long long> own{m.layout_pp, std::max(1LL, m.layout_vp)};
    if (!std::binary_search(m.layout_pairs.begin(), m.layout_pairs.end(), own))
      m.layout_pairs.insert(std::lower_bound(m.layout_pairs.begin(), m.layout_pairs.end(), own), own);
  }
  // Pinned only without a builder map: a builder rebuilds the layout for
  // another pair, so the planner may change PP and VP within its map.
  s.pipeline_layout = own_layout && m.layout_pairs.empty();
  for (const char* field : {"embedding_in_pp_split", "loss_in_pp_split"})
    if (auto it = f.find(field); it != f.end() && it->second.value == "true") ++m.split_extra;
  s.sized = ok;
  if (ok && s.arch.layers <= 0) {
    s.sized = false;
    s.why_not = "the model's size is not known";
  }
  return s;
}

namespace {

// A recipe's key in Sizings: its name, function, model, GPU floor and kind,
// a line each (none of them holds a line break).
std::string own_key(const Recipe& r) {
  std::string key = r.name;
  for (const std::string& part : {r.target, r.model_key, std::to_string(r.min_gpus.value_or(0)), std::string(to_string(r.kind))})
    key.append(1, '\n').append(part);
  return key;
}

}  // namespace

Sizings::Entry& Sizings::entry(std::string key, const RecipeData& d) {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) it = by_key_.emplace(std::move(key), Entry{size_recipe(d), KeptPlacements{{}, this}}).first;
  return it->second;
}

Sizings::Entry& Sizings::of(const RecipeData& d) { return entry(own_key(d.recipe), d); }

Sizings::Entry* Sizings::of(const RecipeData& as_run, const std::vector<std::pair<std::string, std::string>>& replaced) {
  // After the recipe's own key, a line holding each replaced field and
  // value, each with its length first (an override's value may hold any
  // byte): no two lists give the same key, and no own key has that line.
  std::string key = own_key(as_run.recipe);
  key.append(1, '\n');
  for (const auto& [field, value] : replaced)
    for (const std::string* part : {&field, &value}) key.append(std::to_string(part->size())).append(1, ':').append(*part);
  if (by_key_.find(key) == by_key_.end()) {
    if (kept_overridden_ >= kb::limits::kMaxKeptSizings) return nullptr;
    ++kept_overridden_;
  }
  return &entry(std::move(key), as_run);
}

void Sizings::keep(KeptPlacements& in, std::string key, const std::optional<Placement>& found) {
  if (kept_ >= kb::limits::kMaxKeptPlacements) {
    for (auto& [k, e] : by_key_) e.placed.by_input.clear();
    kept_ = 0;
  }
  in.by_input.emplace(std::move(key), found);
  ++kept_;
}

Placement evaluate(const SearchInput& in, const Shape& sh, long long world) {
  Placement p;
  p.shape = sh;
  p.world = world;
  const Sizing& sz = *in.sizing;
  RuleInput ri = rule_input(sz.rules, in.gpu ? in.gpu->nvlink : 0, in.moe, in.threshold);
  ri.world = world;
  ri.tp = sh.tp;
  ri.pp = sh.pp;
  ri.vp = sh.vp;
  ri.cp = sh.cp;
  ri.ep = sh.ep;
  ri.etp = sh.etp;
  ri.sp = sh.tp > 1;
  ri.seq = in.seq;
  const bool rules_ok = rules_pass(ri);
  bool memory_ok = true;
  auto changed = [](long long a, long long b) { return a != b ? 1 : 0; };
  p.changes = changed(sh.tp, in.start.tp) + changed(sh.pp, in.start.pp) + changed(sh.cp, in.start.cp) + changed(sh.ep, in.start.ep) +
              changed(sh.mbs, in.start.mbs);
  p.rules_ok = rules_ok;
  if (!rules_ok) return p;  // a layout that breaks a rule is not sized
  if (sz.sized && in.gpu && in.gpu->memory_gib > 0 && in.params) {
    memory::Layout l = sz.base;
    if (l.pp != sh.pp) l.first_stage_layers = l.last_stage_layers = 0;  // the runner rebuilds the stages for a new PP
    l.tp = sh.tp;
    l.pp = sh.pp;
    l.vp = std::max(1LL, sh.vp);
    l.cp = sh.cp;
    l.ep = sh.ep;
    l.etp = sh.etp;
    l.sp = sh.tp > 1;
    l.world = world;
    l.any_layout_fp8_gemm = in.gpu->fp8_any_layout;
    memory::Training t = sz.training;
    if (in.seq > 0) t.seq_length = in.seq;
    t.micro_batch = sh.mbs;
    if (in.gbs > 0) t.global_batch = in.gbs;
    const auto est = memory::estimate(sz.arch, l, t, *in.params);
    const bool own = sh == in.start && world == in.own_world;
    if (const auto* e = std::get_if<memory::Estimate>(&est)) {
      p.sized = true;
      p.estimate = *e;
      memory_ok = e->total <= in.gpu->memory_gib * memory::kBytesPerGiB * (own ? 1.0 + in.own_tolerance : 1.0);
    } else {
      // The memory model sizes the recipe but not this shape (a stage
      // without a transformer layer, say): the planner cannot vouch for it,
      // so it offers another; the recipe's own shape is judged as it is.
      memory_ok = own;
    }
  }
  p.fits = memory_ok;
  return p;
}

namespace {

// The virtual pipeline size that goes with a pipeline size: the recipe's
// own when it still divides the layers; for a PP the planner raised from 1,
// 2 where the layers allow (the skill: "Use VP to mitigate bubble
// overhead"); none on one stage.
// With a layout builder, a VP its map has for `pp`: `vp` itself when the
// pair is there, else VP 1 (none), else the smallest it has; false when the
// map has no pair for `pp`. Without a builder: true, `vp` as it is.
bool builder_vp(const RuleModel& m, long long pp, long long& vp) {
  const auto& pairs = m.layout_pairs;
  if (pairs.empty()) return true;
  auto has = [&](long long v) { return std::binary_search(pairs.begin(), pairs.end(), std::make_pair(pp, v)); };
  if (has(std::max(1LL, vp))) return true;
  for (const auto& [p, v] : pairs)
    if (p == pp) {
      vp = v > 1 ? v : 0;
      return true;
    }
  return false;
}

long long vp_for(const SearchInput& in, long long pp) {
  const long long layers = in.sizing->rules.layers + in.sizing->rules.split_extra;
  if (pp <= 1) return 0;
  auto ok = [&](long long v) { return layers <= 0 || in.sizing->rules.stage_layout || (layers % (pp * v) == 0 && layers / (pp * v) >= 1); };
  if (in.start.vp > 0) {
    for (long long v = in.start.vp; v >= 2; --v)
      if (ok(v)) return v;
    return 0;
  }
  if (in.start.pp <= 1 && ok(2)) return 2;
  return 0;
}

std::vector<long long> values_of(const SearchInput& in, Dim d, long long world) {
  const RuleModel& sz = in.sizing->rules;
  const Shape& s = in.start;
  std::vector<long long> out;
  switch (d) {
    case Dim::TP: {
      const long long limit = std::min(world, in.gpu && in.gpu->nvlink > 0 ? in.gpu->nvlink : world);
      for (long long v : powers(limit, s.tp))
        if ((sz.kv_heads <= 0 || sz.kv_heads % v == 0) && (sz.heads <= 0 || sz.heads % v == 0)) out.push_back(v);
      break;
    }
    case Dim::PP:
      if (!sz.layout_pairs.empty()) {  // a layout builder: the PPs of its map (rebuilt by the launcher)
        for (const auto& pair : sz.layout_pairs)
          if (pair.first <= world && (out.empty() || out.back() != pair.first)) out.push_back(pair.first);
      } else if (sz.layers > 0) {  // what layers_divisible_by_pp accepts: the split counts the embedding and loss
        const long long split = sz.layers + sz.split_extra;
        for (long long v = 1; v <= std::min(world, split); ++v)
          if (split % v == 0 || v == s.pp) out.push_back(v);
      } else {
        out = powers(world, s.pp);
      }
      break;
    case Dim::CP:
      out = powers(world, s.cp);
      break;
    case Dim::EP:
      if (!in.moe) return {1};
      for (long long v : powers(world, s.ep))
        if (sz.experts <= 0 || sz.experts % v == 0) out.push_back(v);
      break;
    case Dim::ETP:
    case Dim::VP:
      break;
  }
  return out;
}

// Which of two feasible placements of the same level is better: the micro
// batch kept, then the earliest sizes of change_order, then the smallest
// steps, then the lowest memory per GPU.
struct Better {
  const SearchInput& in;
  std::tuple<int, std::vector<int>, double, double> key(const Placement& p) const {
    std::vector<int> order;
    double steps = 0;
    for (size_t i = 0; i < in.change_order.size(); ++i) {
      Shape a = p.shape, b = in.start;
      const long long x = a.at(in.change_order[i]), y = b.at(in.change_order[i]);
      if (x != y) {
        order.push_back(static_cast<int>(i));
        steps += std::abs(std::log2(static_cast<double>(x)) - std::log2(static_cast<double>(y)));
      }
    }
    return {p.shape.mbs != in.start.mbs ? 1 : 0, order, steps, p.sized ? p.estimate.total : 0.0};
  }
  bool operator()(const Placement& a, const Placement& b) const { return key(a) < key(b); }
};

}  // namespace

namespace {

// Within the headroom: the recipe's own layout on its own GPUs (the code
// wins for what runs), a layout not sized, or one sized under
// memory_headroom of the GPU's memory.
bool within_headroom(const SearchInput& in, const Placement& p) {
  const double room = in.gpu ? in.headroom * in.gpu->memory_gib * memory::kBytesPerGiB : 0;
  return room <= 0 || !p.sized || (p.shape == in.start && p.world == in.own_world) || p.estimate.total <= room;
}

// The search on one world size with a CP floor (see place); with a CP
// ceiling (> 0) no layout above it, and with `roomy` only layouts within
// the memory headroom. `tried_from` (> 1): the layouts with a CP of at
// least it were all tried, by the same search with that floor, and none
// passed; they are not tried again.
std::optional<Placement> search(const SearchInput& in, long long world, bool memory, long long cp_floor, long long cp_ceiling = 0,
                                bool roomy = false, long long tried_from = 0) {
  std::vector<Dim> dims;
  for (Dim d : in.change_order)
    if (!in.fixed.count(d) && (d != Dim::EP || in.moe) && d != Dim::ETP && d != Dim::VP && (d != Dim::PP || !in.sizing->pipeline_layout))
      dims.push_back(d);
  std::vector<long long> mbs{in.start.mbs};
  if (!in.mbs_fixed && in.start.mbs > 1) mbs.push_back(1);
  // A size that does not divide the world fails the world-size rule in any
  // layout (rules.hpp, world_divisible): neither tried nor sized.
  std::vector<std::vector<long long>> alternatives;
  for (Dim d : dims) {
    std::vector<long long> alt;
    for (long long v : values_of(in, d, world))
      if (v != in.start.at(d) && size_divides_world(world, v)) alt.push_back(v);
    alternatives.push_back(alt);
  }
  const auto one = [](long long v) { return std::max(1LL, v); };
  const Better better{in};
  // Level k changes k parallel sizes; the micro batch is tried at each level first.
  for (size_t k = 0; k <= dims.size(); ++k) {
    std::optional<Placement> best;
    std::vector<size_t> pick(k);
    // Every set of k dims (indices ascending), then every choice of their values.
    std::function<void(size_t, size_t)> choose = [&](size_t from, size_t depth) {
      if (depth == k) {
        std::vector<size_t> idx(k, 0);
        while (true) {
          Shape s = in.start;
          bool empty = false;
          for (size_t j = 0; j < k; ++j) {
            const auto& alt = alternatives[pick[j]];
            if (alt.empty()) {
              empty = true;
              break;
            }
            s.at(dims[pick[j]]) = alt[idx[j]];
          }
          if (empty) return;
          s.vp = s.pp == in.start.pp && in.start.vp > 0 ? in.start.vp : vp_for(in, s.pp);
          if (!builder_vp(in.sizing->rules, s.pp, s.vp)) goto next;
          if (s.cp < cp_floor || (cp_ceiling > 0 && s.cp > cp_ceiling) || (tried_from > 1 && s.cp >= tried_from)) goto next;
          if (!world_divisible(world, one(s.tp) * one(s.pp) * one(s.cp), one(s.pp) * one(s.ep) * one(s.etp), in.moe)) goto next;
          for (long long m : mbs) {
            s.mbs = m;
            Placement p = evaluate(in, s, world);
            const bool ok = memory ? p.fits && (!roomy || within_headroom(in, p)) : p.rules_ok;
            if (ok && (!best || better(p, *best))) best = p;
            if (ok) break;  // the kept micro batch is better than a smaller one
          }
        next:
          size_t j = 0;
          while (j < k && ++idx[j] >= alternatives[pick[j]].size()) idx[j++] = 0;
          if (j == k) return;
        }
      }
      for (size_t i = from; i < dims.size(); ++i) {
        pick[depth] = i;
        choose(i + 1, depth + 1);
      }
    };
    choose(0, 0);
    if (best) return best;
  }
  return std::nullopt;
}

}  // namespace

namespace {

// Whether no layout of `world` GPUs can fit the memory, by the state floor
// of the sizing searched (memory::state_floor: no estimate on that world is
// below it): evaluate() then fits none, unless on the recipe's own count,
// whose own shape it accepts within a tolerance, or unsized.
bool floor_rules_out(const SearchInput& in, long long world) {
  const Sizing& sz = *in.sizing;
  if (!sz.sized || !in.gpu || !(in.gpu->memory_gib > 0) || !in.params || world == in.own_world) return false;
  const double floor = memory::total_floor(memory::state_floor(sz.arch, sz.training, *in.params), world, *in.params);
  return floor > in.gpu->memory_gib * memory::kBytesPerGiB;
}

std::optional<Placement> search_world(const SearchInput& in, long long world, bool memory) {
  // Every layout searched, to learn that none fits: a model too large for
  // these GPUs, or the fewest-GPU search's counts below its answer.
  if (memory && floor_rules_out(in, world)) return std::nullopt;
  const long long floor = in.fixed.count(Dim::CP) ? 1 : in.cp_min;
  // The floor is a preference, not a rule: TP with SP splits a rank's
  // tokens as CP does (the code's own 128K-token recipes run TP 4 · CP 8,
  // not CP 16), so when no layout keeps it on this
  // world, any layout the rules and the memory model pass is the answer,
  // as `kbq check` judges it: one verdict everywhere.
  const bool relax = floor > 1;
  auto best = search(in, world, memory, floor);
  const bool relaxed = !best && relax;
  if (relaxed) best = search(in, world, memory, 1, 0, false, floor);
  if (!best || !memory || within_headroom(in, *best)) return best;
  // The fewest-change fit is at the edge of the GPU's memory: a layout
  // within the headroom is preferred, with more changes, or with less CP
  // than the floor asks (the floor does not outweigh an OOM), but never
  // with more CP than the fit has: CP the sequence does not need is no
  // way to buy memory (each rank's share of the sequence shrinks).
  if (!relaxed)
    if (auto room = search(in, world, true, floor, best->shape.cp, true)) return room;
  if (relax)
    if (auto room = search(in, world, true, 1, best->shape.cp, true)) return room;
  return best;
}

// Everything of the search input but the sizing (the memo is the sizing's)
// and the world, as bytes: equal keys, equal searches.
std::string place_key(const SearchInput& in, long long world, bool memory) {
  std::string key;
  auto put = [&](auto v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  for (long long v : {world, in.start.tp, in.start.pp, in.start.vp, in.start.cp, in.start.ep, in.start.etp, in.start.mbs, in.seq, in.gbs,
                      in.threshold, in.cp_min, in.own_world})
    put(v);
  for (double v : {in.own_tolerance, in.headroom}) put(v);
  put(memory);
  put(in.mbs_fixed);
  put(in.moe);
  put(static_cast<const void*>(in.params));
  key.push_back(static_cast<char>(in.fixed.size()));
  for (Dim d : in.fixed) put(d);
  key.push_back(static_cast<char>(in.change_order.size()));
  for (Dim d : in.change_order) put(d);
  put(in.gpu != nullptr);
  if (const Gpu* g = in.gpu) {
    put(g->memory_gib);
    put(g->nvlink);
    put(g->per_node);
    put(g->fp8_any_layout);
    key += g->key;
  }
  return key;
}

}  // namespace

std::optional<Placement> place(const SearchInput& in, long long world, bool memory) {
  if (world < 1) return std::nullopt;
  if (!in.placed) return search_world(in, world, memory);
  KeptPlacements& kept = *in.placed;
  std::string key = place_key(in, world, memory);
  if (auto it = kept.by_input.find(key); it != kept.by_input.end()) return it->second;
  auto found = search_world(in, world, memory);
  kept.sizings->keep(kept, std::move(key), found);
  return found;
}

std::optional<LaunchShape> launch_shape(long long world, long long per_node) {
  if (world <= 0) return std::nullopt;
  if (per_node <= 0 || world <= per_node) return LaunchShape{1, world};
  const long long nodes = (world + per_node - 1) / per_node;
  if (world % nodes != 0) return std::nullopt;
  return LaunchShape{nodes, world / nodes};
}

long long launched_world(long long world, long long per_node) {
  if (world <= 0 || launch_shape(world, per_node)) return world;
  long long w = world - 1;
  while (w > 1 && !launch_shape(w, per_node)) --w;
  return w;
}

long long min_world(const SearchInput& in, long long from, long long limit) {
  const long long node = in.gpu && in.gpu->per_node > 0 ? in.gpu->per_node : 8;
  // World sizes a cluster has: powers of two, whole nodes up to 32 nodes;
  // only those torchrun can launch evenly on nodes of this GPU.
  for (long long w = std::max(1LL, from); w <= limit; ++w) {
    const bool power = (w & (w - 1)) == 0;
    if (w != from && !power && (w % node != 0 || w > 32 * node)) continue;
    if (!launch_shape(w, in.gpu ? in.gpu->per_node : 0)) continue;
    if (place(in, w)) return w;
  }
  return 0;
}

}  // namespace kbq
